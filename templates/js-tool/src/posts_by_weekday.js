// `posts_by_weekday`: how many measured posts were published on each UTC
// weekday, counting only posts with at least `min_likes` likes.
//
// The workspace example: its contract (`DESCRIPTOR`) and logic (`run`) as
// plain JavaScript, with no component bindings. `run` takes the workspace
// as an object with `engagement()`, `feed()` and `job(id)`, so the same
// code runs in the sandbox (`workspace_app.js` passes the host's
// `workspace`) and natively under Node in the tests
// (`test/posts_by_weekday.test.js` passes a fake).
//
// `engagement()` returns the text of `{"posts": [...], "takeaways": ...}`:
// every measured post as `{postId, text, likes, publishedAt}`
// (docs/plugin-authors.md, section 7.7, lists every field of every read).

import * as ht from './harmonia_tool.js';

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

// The tool's contract: what the host checks at load and shows in `harmonia tools`.
export const DESCRIPTOR = {
  name: 'posts_by_weekday',
  version: '0.1.0',
  purpose: "Count the workspace's measured posts by the UTC weekday they were published on.",
  inputSchema: {
    type: 'object',
    properties: {
      min_likes: {
        type: ['integer', 'null'],
        default: 0,
        description: 'Fewest likes a post needs to count; clamped to 0-1000000000.',
      },
    },
    additionalProperties: false,
  },
  // Your own codes first; the runtime codes are added for you. A workspace
  // tool declares `authorization_failed`: the workspace refuses a caller
  // with no workspace bound, or another tenant's.
  errors: ht.errorsWithRuntime([ht.INVALID_INPUT, ht.AUTHORIZATION_FAILED]),
  scope: 'workspace',
  deadlineMs: 10_000,
  skills: ['posting-schedule'],
};

// RFC 3339 with a zone (`Z` or an offset), as the workspace stores it.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The UTC weekday (0 is Monday) of an RFC 3339 time, or null. */
export function utcWeekday(text) {
  if (typeof text !== 'string' || !RFC3339.test(text)) return null;
  const time = Date.parse(text.toUpperCase());
  return Number.isNaN(time) ? null : (new Date(time).getUTCDay() + 6) % 7;
}

/**
 * Run once. `workspace.engagement()` returns text or throws
 * `ht.ReadFailed`; the answer is `{data, evidence}` or a thrown `ht.ToolError`.
 */
export function run(workspace, inputText) {
  const input = ht.parseInput(inputText, ['min_likes']);
  const minLikes = ht.clampedInteger(input, 'min_likes', 0, 0, 1_000_000_000);
  const document = ht.parseBody(ht.read(() => workspace.engagement()));
  const posts = document !== null && typeof document === 'object' ? document.posts : undefined;
  if (!Array.isArray(posts)) throw ht.dependencyUnavailable();
  const counts = [0, 0, 0, 0, 0, 0, 0];
  for (const post of posts) {
    if (post === null || typeof post !== 'object') continue;
    const likes = Number.isSafeInteger(post.likes) && post.likes >= 0 ? post.likes : 0;
    if (likes < minLikes) continue;
    const weekday = utcWeekday(post.publishedAt);
    if (weekday !== null) counts[weekday] += 1;
  }
  const data = {
    minLikes,
    counted: counts.reduce((sum, count) => sum + count, 0),
    byWeekday: WEEKDAYS.map((weekday, index) => ({ weekday, posts: counts[index] })),
  };
  return { data, evidence: [ht.evidence('harmonia_engagement')] };
}
