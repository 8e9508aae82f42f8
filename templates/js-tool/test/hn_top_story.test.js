// Native unit tests of the tool's logic and the input rules, with a fake
// public web: `npm test` (or `node --test test/hn_top_story.test.js`) in
// the template directory; no component needed.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as ht from '../src/harmonia_tool.js';
import * as tool from '../src/hn_top_story.js';

const bytes = (text) => new TextEncoder().encode(text);
const HITS = bytes(JSON.stringify({
  hits: [
    { title: 'Small', url: 'https://a.example', points: 5 },
    { title: 'Big', url: 'https://b.example', points: 500 },
  ],
}));

function answering(status, body) {
  const get = (url) => {
    get.requested.push(url);
    return { status, body };
  };
  get.requested = [];
  return get;
}

const failing = (kind) => () => {
  throw new ht.FetchFailed(kind);
};

const refusedAs = (code) => (error) => error instanceof ht.ToolError && error.code === code;

describe('logic', () => {
  it('finds the first story over the threshold', () => {
    const get = answering(200, HITS);
    const output = tool.run(get, '{"min_points": 100}');
    assert.deepEqual(output.data, { found: true, title: 'Big', url: 'https://b.example', points: 500 });
    assert.deepEqual(output.evidence[1], ht.evidence('hacker_news_story', 'https://b.example'));
    assert.deepEqual(get.requested, [tool.FRONT_PAGE]);
  });

  it('answers found false with dataset evidence when nothing qualifies', () => {
    const output = tool.run(answering(200, HITS), '{"min_points": 100000}');
    assert.deepEqual(output.data, { found: false });
    assert.deepEqual(output.evidence, [ht.evidence('hacker_news_algolia')]);
  });

  it('skips hits without a string title and url', () => {
    const body = bytes(JSON.stringify({ hits: [3, { title: 1, url: 'u' }, { title: 't', url: 'https://c.example' }] }));
    const output = tool.run(answering(200, body), '{}');
    assert.equal(output.data.url, 'https://c.example');
    assert.equal(output.data.points, null);
  });

  it('maps failures', () => {
    for (const get of [answering(503, bytes('{}')), answering(200, bytes('<html>')), answering(200, bytes('{}')),
      answering(200, new Uint8Array([0xff]))]) {
      assert.throws(() => tool.run(get, '{}'), refusedAs('dependency_unavailable'));
    }
    for (const kind of ['denied', 'invalid-url', 'too-large', 'unavailable']) {
      assert.throws(() => tool.run(failing(kind), '{}'), refusedAs('dependency_unavailable'));
    }
    assert.throws(() => tool.run(failing('timed-out'), '{}'), refusedAs('tool_timeout'));
  });

  it('refuses a deep body before parsing it', () => {
    const deep = bytes('['.repeat(10_000) + ']'.repeat(10_000));
    assert.throws(() => tool.run(answering(200, deep), '{}'), refusedAs('dependency_unavailable'));
  });
});

describe('input rules', () => {
  const read = (text) => ht.clampedInteger(ht.parseInput(text, ['limit']), 'limit', 6, 1, 10);

  it('refuses non-objects and unknown fields', () => {
    for (const text of ['', '[]', '3', '"x"', 'null', '{', '{"other":1}', '\0', '{"limit": NaN}', '{"limit": Infinity}']) {
      assert.throws(() => read(text), refusedAs('invalid_input'), text);
    }
  });

  it('clamps integers and reads null as absent', () => {
    assert.equal(read('{}'), 6);
    assert.equal(read('{"limit":null}'), 6);
    assert.equal(read('{"limit":0}'), 1);
    assert.equal(read('{"limit":-9}'), 1);
    assert.equal(read('{"limit":99}'), 10);
    assert.equal(read('{"limit":18446744073709551615}'), 10);
    assert.equal(read('{"limit":-9223372036854775808}'), 1);
    assert.equal(read('{"limit":4}'), 4);
    assert.equal(read('{"limit": 7 }'), 7);
    assert.equal(read('{"limit":1,"limit":4}'), 4, 'the last duplicate wins, as in JSON.parse');
  });

  it('takes only integer literals within 64 bits as integers', () => {
    for (const literal of ['4.0', '4e0', '4E0', '-0', '"4"', 'true', '[4]', '{"a":4}', '18446744073709551616',
      '-9223372036854775809', '1'.repeat(5000)]) {
      assert.throws(() => read(`{"limit": ${literal}}`), refusedAs('invalid_input'), literal);
    }
    assert.throws(() => read('{"limit":4,"limit":4.0}'), refusedAs('invalid_input'), 'the last duplicate is read');
  });

  it('reads the literal of the top-level member only', () => {
    const input = ht.parseInput('{"a": {"limit": 4.0}, "limit": 3}', ['a', 'limit']);
    assert.equal(ht.clampedInteger(input, 'limit', 6, 1, 10), 3);
    const escaped = ht.parseInput('{"lim\\u0069t": 5, "a": "\\"limit\\": 9.5"}', ['a', 'limit']);
    assert.equal(ht.clampedInteger(escaped, 'limit', 6, 1, 10), 5);
  });

  it('refuses nesting past the limit and parses it at the limit', () => {
    const atLimit = '['.repeat(ht.MAX_DEPTH) + ']'.repeat(ht.MAX_DEPTH);
    assert.deepEqual(ht.parseStrict(atLimit).value, JSON.parse(atLimit));
    const past = '['.repeat(ht.MAX_DEPTH + 1) + ']'.repeat(ht.MAX_DEPTH + 1);
    assert.throws(() => ht.parseStrict(past), SyntaxError);
    // Brackets inside strings do not count, escaped quotes included.
    assert.equal(ht.scan(`["${'['.repeat(500)}\\"${'{'.repeat(500)}"]`).tooDeep, false);
    assert.throws(() => read(`{"limit": ${past}}`), refusedAs('invalid_input'));
  });

  it('scans an open string of escaped quotes once', () => {
    // Retrying the string pattern at every escaped quote would take hours
    // on this; one linear pass takes milliseconds.
    const hostile = `{"limit": "${'\\"'.repeat(500_000)}`;
    assert.equal(ht.scan(hostile).tooDeep, false);
    assert.throws(() => read(hostile), refusedAs('invalid_input'));
  });

  it('refuses lone surrogates', () => {
    for (const text of ['{"limit": "\\ud800"}', '{"\\udc00": 1}']) {
      assert.throws(() => read(text), refusedAs('invalid_input'), text);
    }
    assert.equal(ht.parseStrict('"\\ud83d\\ude80"').value, '\u{1f680}');
  });

  it('requires bounded strings', () => {
    const readString = (text) => ht.requiredString(ht.parseInput(text, ['q']), 'q', 3);
    assert.equal(readString('{"q":"abc"}'), 'abc');
    assert.equal(readString('{"q":"  "}'), '  ');
    assert.equal(readString('{"q":"🚀🚀🚀"}'), '🚀🚀🚀');
    for (const text of ['{"q":"abcd"}', '{}', '{"q":1}', '{"q":null}']) {
      assert.throws(() => readString(text), refusedAs('invalid_input'), text);
    }
  });
});

describe('descriptor', () => {
  it('declares the runtime codes after its own', () => {
    assert.deepEqual(tool.DESCRIPTOR.errors.map((spec) => spec.code),
      ['invalid_input', 'dependency_unavailable', 'provider_request_rejected', 'tool_execution_failed', 'tool_timeout']);
  });
});
