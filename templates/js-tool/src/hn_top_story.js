// `hn_top_story`: the highest-ranked Hacker News front-page story with at
// least `min_points` points.
//
// The tool's contract (`DESCRIPTOR`) and logic (`run`) as plain
// JavaScript, with no component bindings: `run` takes the public web as a
// function, so the same code runs in the sandbox (`public_app.js` passes the
// host's `public-web`) and natively under Node in the tests
// (`test/hn_top_story.test.js` passes a fake). The strict input rules every
// Harmonia tool follows live in `harmonia_tool.js`.

import * as ht from './harmonia_tool.js';

export const FRONT_PAGE = 'https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=20';

// The tool's contract: what the host checks at load and shows in `harmonia tools`.
export const DESCRIPTOR = {
  name: 'hn_top_story',
  version: '0.1.0',
  purpose: 'Find the highest-ranked Hacker News front-page story with at least a given number of points.',
  inputSchema: {
    type: 'object',
    properties: {
      min_points: { type: ['integer', 'null'], default: 0, description: 'Fewest points; clamped to 0-100000.' },
    },
    additionalProperties: false,
  },
  // Your own codes first; the runtime codes are added for you.
  errors: ht.errorsWithRuntime([ht.INVALID_INPUT]),
  scope: 'public',
  deadlineMs: 10_000,
  skills: ['hn-digest'],
};

/**
 * Run once. `get(url)` returns `{status, body}` (body a Uint8Array) or
 * throws `ht.FetchFailed`; the answer is `{data, evidence}` or a thrown
 * `ht.ToolError`.
 */
export function run(get, inputText) {
  const input = ht.parseInput(inputText, ['min_points']);
  const minPoints = ht.clampedInteger(input, 'min_points', 0, 0, 100_000);
  const response = ht.fetchWith(get, FRONT_PAGE);
  if (response.status !== 200) throw ht.dependencyUnavailable();
  const document = ht.parseBody(response.body);
  const hits = document !== null && typeof document === 'object' ? document.hits : undefined;
  if (!Array.isArray(hits)) throw ht.dependencyUnavailable();
  const top = hits.find((hit) => qualifies(hit, minPoints));
  const evidence = [ht.evidence('hacker_news_algolia')];
  if (top === undefined) return { data: { found: false }, evidence };
  evidence.push(ht.evidence('hacker_news_story', top.url));
  const data = { found: true, title: top.title, url: top.url, points: top.points === undefined ? null : top.points };
  return { data, evidence };
}

function qualifies(hit, minPoints) {
  if (hit === null || typeof hit !== 'object' || Array.isArray(hit)) return false;
  if (ht.outputString(hit.title) === null || ht.outputString(hit.url) === null) return false;
  // A story whose points are missing or not a whole number counts as 0.
  const points = Number.isSafeInteger(hit.points) && hit.points >= 0 ? hit.points : 0;
  return points >= minPoints;
}
