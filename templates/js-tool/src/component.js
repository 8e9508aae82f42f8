// The component side shared by both worlds: the descriptor and the answer
// as componentize-js maps the WIT to JavaScript. The app modules
// (`public_app.js`, `workspace_app.js`) add the capability of their world.
//
// componentize-js maps the WIT thus: record fields in camelCase
// (`inputSchema`, `deadlineMs`); enums as their WIT names (`not-found`);
// `option` as the value or `undefined`; a `result` export returns its ok
// value and *throws* its error value; an imported function that fails
// throws an `Error` whose `payload` is the variant (`{tag: 'timed-out'}`).

import * as ht from './harmonia_tool.js';

const CATEGORIES = {
  [ht.VALIDATION]: 'validation',
  [ht.AUTHORIZATION]: 'authorization',
  [ht.NOT_FOUND]: 'not-found',
  [ht.DEPENDENCY]: 'dependency',
  [ht.PROVIDER_PERMANENT]: 'provider-permanent',
};

/** The descriptor `d` as the WIT record. */
export function describe(d) {
  return {
    name: d.name,
    version: d.version,
    purpose: d.purpose,
    inputSchema: JSON.stringify(d.inputSchema),
    errors: d.errors.map((spec) => ({ code: spec.code, category: CATEGORIES[spec.category], retryable: spec.retryable })),
    scope: d.scope,
    deadlineMs: d.deadlineMs,
    skills: [...d.skills],
  };
}

/** The answer `{data, evidence}` as the WIT `output`; a TypeError names what does not fit. */
function toOutput(output) {
  if (output === null || typeof output !== 'object' || !Array.isArray(output.evidence)) {
    // Printing the answer instead of returning it ends here.
    throw new TypeError(`run returned ${output === null ? 'null' : typeof output}, not {data, evidence}: a tool answers `
      + 'by returning it; console output never reaches the envelope');
  }
  // `data` must be an object (a JSON object): anything else is refused by
  // the host, which names what it got in its debug log.
  const data = JSON.stringify(output.data);
  if (typeof data !== 'string') throw new TypeError(`output.data cannot be JSON (${typeof output.data})`);
  const evidence = output.evidence.map((item, index) => {
    if (typeof item.source !== 'string') throw new TypeError(`output.evidence[${index}].source is not a string`);
    const reference = item.reference ?? undefined;
    if (reference !== undefined && typeof reference !== 'string') {
      throw new TypeError(`output.evidence[${index}].reference is not a string`);
    }
    return { source: item.source, reference };
  });
  return { data, evidence };
}

/**
 * Run `run()` (the logic, bound to its capability and input) and answer as
 * the WIT result: the `output`, or a thrown `tool-error`.
 *
 * Anything thrown other than `ht.ToolError` is a bug in the tool: the call
 * answers `tool_execution_failed`, whose message names the exception and
 * where it was thrown (the host logs that text, `HARMONIA_LOG=debug`, and
 * puts the contract's fixed message in the envelope). Without this, the
 * runtime would take the thrown value itself as the `tool-error` and fail
 * in its bindings, hiding the exception.
 */
export function invoke(run) {
  try {
    return toOutput(run());
  } catch (error) {
    const failure = error instanceof ht.ToolError ? error : ht.executionFailed(error);
    if (failure !== error) console.error(failure.message); // reaches the debug log when built with stdio
    throw { code: failure.code, category: CATEGORIES[failure.category], message: failure.message, retryable: failure.retryable };
  }
}
