// The official TypeScript SDK's v2 client (@modelcontextprotocol/client),
// pinned to the stateless revision (2026-07-28), on a skill route as the
// SDK is: it never sends the guarded session's handle back.
//
//   node ts_stateless.mjs stock URL TOKEN OUTCOME...
//
// Calls get_job_status on job-7 once per OUTCOME, each time the same call
// (a retry), and checks each answer's envelope: `success`, or its error
// code. Every call goes on with the credential's one guarded session on
// the skill, so the guard judges them all; the trace, read without a
// handle (the current session's), holds the activation and every call.
// Prints the revision negotiated and "scenario stock passed", or exits
// non-zero with the reason.

import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [scenario, url, token, ...expected] = process.argv.slice(2);
assert.equal(scenario, 'stock', `unknown scenario ${scenario}`);

const client = new Client(
  { name: 'harmonia-ts2-test', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
const headers = { Authorization: `Bearer ${token}` };
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
console.log(`protocol ${client.getNegotiatedProtocolVersion()}`);

const { tools } = await client.listTools();
assert.deepEqual(tools.map((tool) => tool.name), ['get_job_status']);
assert.equal(tools[0].inputSchema.properties.harmonia_session?.type, 'string', JSON.stringify(tools[0]));

const outcomes = [];
for (let call = 0; call < expected.length; call += 1) {
  const result = await client.callTool({ name: 'get_job_status', arguments: { job_id: 'job-7' } });
  const envelope = result.structuredContent;
  assert.deepEqual(JSON.parse(result.content[0].text), envelope, JSON.stringify(result));
  outcomes.push(envelope.status === 'success' ? 'success' : envelope.error.code);
}
assert.deepEqual(outcomes, expected);

const read = await client.readResource({ uri: 'harmonia://session/trace' });
const trace = JSON.parse(read.contents[0].text);
assert.equal(trace.seal.algorithm, 'ed25519', 'the trace is signed');
assert.equal(trace.entries.length, expected.length + 1, JSON.stringify(trace.entries.map((entry) => entry.kind)));
await client.close();
console.log(`outcomes ${outcomes.join(' ')}`);
console.log(`scenario ${scenario} passed`);
