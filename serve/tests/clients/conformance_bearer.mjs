// Loaded with `node --import` (after node_hooks.mjs) before the MCP
// conformance suite runs against `harmonia serve`: every HTTP request the
// suite makes (the SDK's fetch and its own undici requests, which share
// Node's global dispatcher) carries `Authorization: Bearer
// $HARMONIA_BEARER`, since the suite has no option for a credential and
// the server serves nothing without one. undici is the suite's own
// dependency, so this is the dispatcher it uses.
import { Agent, setGlobalDispatcher } from 'undici';

const credential = `Bearer ${process.env.HARMONIA_BEARER}`;

function withCredential(headers) {
  if (Array.isArray(headers)) return [...headers, 'authorization', credential];
  return { ...(headers ?? {}), authorization: credential };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) =>
    dispatch({ ...options, headers: withCredential(options.headers) }, handler),
  ),
);
