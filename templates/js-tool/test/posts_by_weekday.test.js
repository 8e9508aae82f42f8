// Native unit tests of the workspace example, with a fake workspace:
// `npm test` in the template directory; no component needed.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as ht from '../src/harmonia_tool.js';
import * as tool from '../src/posts_by_weekday.js';

const POSTS = JSON.stringify({
  posts: [
    { postId: 'p1', text: 'a', likes: 10, publishedAt: '2026-11-02T14:05:00Z' }, // Monday
    { postId: 'p2', text: 'b', likes: 50, publishedAt: '2026-11-03T00:30:00+01:00' }, // Monday in UTC
    { postId: 'p3', text: 'c', likes: 5, publishedAt: '2026-11-08T09:00:00Z' }, // Sunday
    { postId: 'p4', text: 'd', likes: 99, publishedAt: null },
    { postId: 'p5', text: 'e', likes: 7, publishedAt: 'yesterday' },
  ],
  takeaways: null,
});

const fake = (engagement, failure) => ({
  engagement() {
    if (failure) throw new ht.ReadFailed(failure);
    return engagement;
  },
});

const counts = (output) =>
  Object.fromEntries(output.data.byWeekday.filter((entry) => entry.posts > 0).map((entry) => [entry.weekday, entry.posts]));

const refusedAs = (code) => (error) => error instanceof ht.ToolError && error.code === code;

describe('posts_by_weekday', () => {
  it('counts by UTC weekday', () => {
    const output = tool.run(fake(POSTS), '{}');
    assert.deepEqual(counts(output), { Monday: 2, Sunday: 1 });
    assert.equal(output.data.counted, 3);
    assert.deepEqual(output.evidence, [ht.evidence('harmonia_engagement')]);
  });

  it('filters by min_likes and clamps it', () => {
    assert.deepEqual(counts(tool.run(fake(POSTS), '{"min_likes": 10}')), { Monday: 2 });
    assert.equal(tool.run(fake(POSTS), '{"min_likes": -3}').data.minLikes, 0);
    assert.throws(() => tool.run(fake(POSTS), '{"min_likes": 1.5}'), refusedAs('invalid_input'));
  });

  it('parses text and bytes alike', () => {
    assert.deepEqual(ht.parseBody(POSTS), ht.parseBody(new TextEncoder().encode(POSTS)));
  });

  it('maps read failures as the Rust SDK does', () => {
    const expected = {
      unauthorized: 'authorization_failed',
      rejected: 'provider_request_rejected',
      'timed-out': 'tool_timeout',
      unavailable: 'dependency_unavailable',
      'not-found': 'dependency_unavailable',
    };
    for (const [kind, code] of Object.entries(expected)) {
      assert.throws(() => tool.run(fake(null, kind), '{}'), refusedAs(code), kind);
    }
    assert.equal(ht.fromRead('not-found', ht.JOB_NOT_FOUND).code, 'job_not_found');
  });

  it('answers dependency_unavailable for a document that is not the JSON expected', () => {
    for (const body of ['', '<html>', '[]', '{"posts": 3}']) {
      assert.throws(() => tool.run(fake(body), '{}'), refusedAs('dependency_unavailable'), body);
    }
  });

  it('names an escaped exception and where it was thrown', () => {
    let failure;
    try {
      null.posts; // eslint-disable-line no-unused-expressions
    } catch (error) {
      failure = ht.executionFailed(error);
    }
    assert.equal(failure.code, 'tool_execution_failed');
    assert.match(failure.message, /^TypeError: .* at posts_by_weekday\.test\.js:\d+:\d+$/);
    assert.equal(ht.executionFailed('plain').message, 'string: plain');
  });
});
