// `harmonia serve` driven by the official MCP TypeScript SDK
// (@modelcontextprotocol/sdk), one scenario per run:
//
//   node ts_client.mjs oauth URL        the whole OAuth discovery flow: 401 →
//                                       protected-resource metadata →
//                                       authorization-server metadata →
//                                       registration → authorization (PKCE)
//                                       → token → tools/list and tools/call
//   node ts_client.mjs http URL TOKEN   a bearer token over streamable HTTP
//   node ts_client.mjs skill URL TOKEN  a skill route: its tools, the guard,
//                                       the signed trace
//   node ts_client.mjs stdio CMD ARG... a child process over stdio
//
// Prints "scenario NAME passed" and the negotiated protocol version, or
// exits non-zero with the reason.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [scenario, ...args] = process.argv.slice(2);
const JOB = { job_id: 'job-7' };

function envelope(result) {
  assert.equal(typeof result.structuredContent, 'object', JSON.stringify(result));
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

function client() {
  return new Client({ name: 'harmonia-ts-test', version: '1.0.0' });
}

/// The protocol version the handshake settled on.
let negotiated;

/// Connect `mcp` over `transport`, noting the version negotiated.
async function connect(mcp, transport) {
  const set = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    set?.(version);
  };
  await mcp.connect(transport);
}

/// An OAuth client kept in memory, as a command-line agent would: the
/// browser step is a GET of the authorization URL whose redirect carries
/// the code.
class MemoryProvider {
  constructor() {
    this.saved = {};
    this.code = undefined;
  }
  get redirectUrl() {
    return 'http://127.0.0.1:1/callback';
  }
  get clientMetadata() {
    return {
      client_name: 'harmonia-ts-test',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(client) {
    this.saved.client = client;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
  async redirectToAuthorization(url) {
    this.authorizationUrl = url;
    const answer = await fetch(url, { redirect: 'manual' });
    assert.equal(answer.status, 302, `the authorization endpoint redirects: ${answer.status}`);
    this.code = new URL(answer.headers.get('location')).searchParams.get('code');
  }
}

async function oauth(url) {
  const provider = new MemoryProvider();
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  // No token yet: the server's 401 starts the discovery, which ends at
  // the authorization endpoint.
  await assert.rejects(client().connect(first), UnauthorizedError);
  assert.ok(provider.code, 'the authorization server returned a code');
  const asked = provider.authorizationUrl.searchParams;
  assert.equal(asked.get('resource'), url, 'the resource indicator is the canonical URI (RFC 8707)');
  assert.equal(asked.get('code_challenge_method'), 'S256');
  assert.ok(asked.get('scope').split(' ').includes('harmonia:tools:get_job_status'), asked.get('scope'));
  await first.finishAuth(provider.code);
  assert.ok(provider.tokens().access_token, 'a token');
  const mcp = client();
  await connect(mcp, new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  const { tools } = await mcp.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), ['get_job_status', 'get_operator_feed']);
  const result = envelope(await mcp.callTool({ name: 'get_job_status', arguments: JOB }));
  assert.equal(result.status, 'success', JSON.stringify(result));
  await mcp.close();
  return;
}

async function http(url, token) {
  const mcp = client();
  const headers = { Authorization: `Bearer ${token}` };
  await connect(mcp, new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  const { tools } = await mcp.listTools();
  assert.ok(tools.some((tool) => tool.name === 'get_job_status'), JSON.stringify(tools));
  assert.equal(envelope(await mcp.callTool({ name: 'get_job_status', arguments: JOB })).status, 'success');
  // A tool the credential is not offered is an unknown tool: -32602.
  await assert.rejects(mcp.callTool({ name: 'no_such_tool', arguments: {} }), (error) => {
    assert.equal(error.code, -32602, String(error));
    assert.match(error.message, /Unknown tool: no_such_tool/);
    return true;
  });
  const { prompts } = await mcp.listPrompts();
  assert.ok(prompts.some((prompt) => prompt.name === 'job-status'), JSON.stringify(prompts));
  await mcp.close();
  return;
}

async function skill(url, token) {
  const mcp = client();
  const headers = { Authorization: `Bearer ${token}` };
  await connect(mcp, new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  const { tools } = await mcp.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), ['get_job_status']);
  assert.equal(envelope(await mcp.callTool({ name: 'get_job_status', arguments: JOB })).status, 'success');
  // The guard: one tool per session, and no second success-path call.
  const again = envelope(await mcp.callTool({ name: 'get_job_status', arguments: JOB }));
  assert.equal(again.error?.code, 'call_refused', JSON.stringify(again));
  const trace = await mcp.readResource({ uri: 'harmonia://session/trace' });
  const document = JSON.parse(trace.contents[0].text);
  assert.equal(document.seal.algorithm, 'ed25519', 'the trace is signed');
  await mcp.close();
  return;
}

async function stdio(command, ...rest) {
  const mcp = client();
  await connect(mcp, new StdioClientTransport({ command, args: rest, stderr: 'ignore' }));
  const { tools } = await mcp.listTools();
  assert.ok(tools.some((tool) => tool.name === 'get_job_status'), JSON.stringify(tools));
  assert.equal(envelope(await mcp.callTool({ name: 'get_job_status', arguments: JOB })).status, 'success');
  await mcp.close();
  return;
}

const scenarios = { oauth, http, skill, stdio };
try {
  await scenarios[scenario](...args);
  console.log(`protocol ${negotiated}`);
  console.log(`scenario ${scenario} passed`);
} catch (error) {
  console.error(error);
  process.exit(1);
}
