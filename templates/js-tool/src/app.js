// The component's export: `describe` answers with the tool's descriptor,
// `invoke` runs its logic against the host's `public-web`.
//
// This file is the only one that touches the component bindings; the tool
// itself is `hn_top_story.js`. componentize-js maps the WIT to JavaScript:
// the `tool` export is an object with `describe` and `invoke`; enums are
// their WIT names as strings (`not-found`); a `result` is the returned
// value when ok, and the thrown value when it is an error, both ways: an
// imported function throws its error with the variant as `payload`.

import { get } from 'harmonia:tools/public-web@0.1.0';
import * as ht from './harmonia_tool.js';
import * as hn from './hn_top_story.js';

const CATEGORIES = {
  [ht.VALIDATION]: 'validation',
  [ht.AUTHORIZATION]: 'authorization',
  [ht.NOT_FOUND]: 'not-found',
  [ht.DEPENDENCY]: 'dependency',
  [ht.PROVIDER_PERMANENT]: 'provider-permanent',
};

const FETCH_ERRORS = ['denied', 'invalid-url', 'timed-out', 'too-large', 'unavailable'];

/** The host's `public-web` as the logic sees it: `{status, body}`. */
function hostGet(url) {
  try {
    const response = get(url);
    return { status: response.status, body: response.body };
  } catch (error) {
    const tag = error?.payload?.tag ?? error?.tag;
    throw new ht.FetchFailed(FETCH_ERRORS.includes(tag) ? tag : 'unavailable');
  }
}

export const tool = {
  describe() {
    const d = hn.DESCRIPTOR;
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
  },

  invoke(input) {
    let output;
    try {
      output = hn.run(hostGet, input);
    } catch (error) {
      if (error instanceof ht.ToolError) {
        throw { code: error.code, category: CATEGORIES[error.category], message: error.message, retryable: error.retryable };
      }
      // Anything else is a bug in the tool: the component traps and the
      // host answers `tool_execution_failed`.
      throw error;
    }
    return {
      data: JSON.stringify(output.data),
      evidence: output.evidence.map((item) => ({ source: item.source, reference: item.reference ?? undefined })),
    };
  },
};
