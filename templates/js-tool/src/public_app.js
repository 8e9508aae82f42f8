// The export of a `public-tool` component: `describe` answers with the
// tool's descriptor, `invoke` runs its logic against the host's
// `public-web`. `build.sh --world public` builds this module; it is the only
// one that touches the world's capability. The tool itself is
// `hn_top_story.js`.

import { get } from 'harmonia:tools/public-web@0.1.0';
import * as component from './component.js';
import * as ht from './harmonia_tool.js';
import * as logic from './hn_top_story.js';

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
  describe: () => component.describe(logic.DESCRIPTOR),
  invoke: (input) => component.invoke(() => logic.run(hostGet, input)),
};
