// Module hooks for the Node clients of the tests, loaded with
// `node --import ./node_hooks.mjs`:
// - bare imports from these scripts resolve in the test dependencies'
//   node_modules (`HARMONIA_NODE_MODULES`, which
//   scripts/install-test-deps.sh fills), since the scripts live outside it;
// - the MCP conformance suite (both lines: 0.1.16, and the 0.2.0-alpha one
//   installed as `mcp-conformance-next`) imports `globSync` from `fs`, which Node 20
//   lacks (only its unused `tier-check` command calls it): its `fs` is
//   Node's own with `globSync` from the npm `glob` package.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

if (isMainThread) {
  register(import.meta.url);
}

const SHIM = 'data:text/javascript,' + encodeURIComponent(
  "export * from 'node:fs'; export { default } from 'node:fs'; export { globSync } from 'glob';",
);

export async function resolve(specifier, context, next) {
  const parent = context.parentURL ?? '';
  const conformance =
    parent.includes('/@modelcontextprotocol/conformance/') || parent.includes('/mcp-conformance-next/');
  if (specifier === 'fs' && conformance) {
    return { url: SHIM, shortCircuit: true };
  }
  try {
    return await next(specifier, context);
  } catch (error) {
    const modules = process.env.HARMONIA_NODE_MODULES;
    const missing = error?.code === 'ERR_MODULE_NOT_FOUND' || parent.startsWith('data:');
    if (!missing || !modules) throw error;
    const fromModules = pathToFileURL(`${modules}/../`).href;
    return next(specifier, { ...context, parentURL: fromModules });
  }
}
