// The export of a `workspace-tool` component: `describe` answers with the
// tool's descriptor, `invoke` runs its logic against the host's
// `workspace`. `build.sh --world workspace` builds this module; it is the
// only one that touches the world's capability. The tool itself is
// `posts_by_weekday.js`.

import { engagement, feed, job } from 'harmonia:tools/workspace@0.1.0';
import * as component from './component.js';
import * as ht from './harmonia_tool.js';
import * as logic from './posts_by_weekday.js';

const READ_ERRORS = ['unauthorized', 'not-found', 'rejected', 'unavailable', 'timed-out'];

/** One host read; a failure is thrown as `ht.ReadFailed`. */
function hostRead(reader) {
  try {
    return reader();
  } catch (error) {
    const tag = error?.payload?.tag ?? error?.tag;
    throw new ht.ReadFailed(READ_ERRORS.includes(tag) ? tag : 'unavailable');
  }
}

/**
 * The host's `workspace` as the logic sees it: `engagement()` and
 * `job(id)` return text, `feed()` returns `{document, updatedAt, readAt}`;
 * each throws `ht.ReadFailed`.
 */
const hostWorkspace = {
  engagement: () => hostRead(engagement),
  feed: () => hostRead(feed),
  job: (id) => hostRead(() => job(id)),
};

export const tool = {
  describe: () => component.describe(logic.DESCRIPTOR),
  invoke: (input) => component.invoke(() => logic.run(hostWorkspace, input)),
};
