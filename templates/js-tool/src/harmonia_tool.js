// The rules every Harmonia tool follows, for tools written in JavaScript.
//
// The JavaScript counterpart of the Rust guest SDK (`guest/sdk`), with no
// component bindings so it runs natively under Node for tests:
// - the contract's error codes with their fixed category and retryability,
//   and the four runtime codes every descriptor declares;
// - strict input parsing: the input is the text of one JSON object whose
//   keys the tool names; `null` reads as absent; integers are JSON integer
//   literals from -2^63 to 2^64-1 (`5.0`, `5e0`, `-0`, `"5"` and `true` are
//   not, exactly as the Rust SDK reads them: JSON.parse alone cannot tell
//   `5.0` from `5`, so the literal is read from the text); nesting deeper
//   than MAX_DEPTH is refused before parsing;
// - the mapping of a capability failure to an error code: a `public-web`
//   failure (`fetchWith`) and a `workspace` read failure (`read`, as the
//   Rust SDK's `ToolError::from_read`);
// - response bodies parsed from text or bytes (`parseBody`);
// - an exception that escapes the tool turned into `tool_execution_failed`
//   with a message naming it and where it was thrown (`executionFailed`).
//
// Every refusal is a thrown ToolError; `component.js` turns it into the WIT
// `tool-error`.

export const VALIDATION = 'validation';
export const AUTHORIZATION = 'authorization';
export const NOT_FOUND = 'not_found';
export const DEPENDENCY = 'dependency';
export const PROVIDER_PERMANENT = 'provider_permanent';

const spec = (code, category, retryable, message) => Object.freeze({ code, category, retryable, message });

// The contract's stable codes (docs/plugin-authors.md has the table). For
// these the host writes the fixed message itself, whatever the tool sends.
export const INVALID_INPUT = spec('invalid_input', VALIDATION, false, "The input is not a JSON object of this tool's schema.");
export const INVALID_QUERY = spec('invalid_query', VALIDATION, false, 'The search query is empty.');
export const INVALID_JOB_ID = spec('invalid_job_id', VALIDATION, false, 'The job id is empty.');
export const JOB_NOT_FOUND = spec('job_not_found', NOT_FOUND, false, 'No job with that id exists in this workspace.');
export const INSUFFICIENT_MEASURED_HISTORY = spec('insufficient_measured_history', NOT_FOUND, false,
  'Fewer than three timestamped posts have measured engagement.');
export const AUTHORIZATION_FAILED = spec('authorization_failed', AUTHORIZATION, false, 'The workspace source refused this caller.');
export const PROVIDER_REQUEST_REJECTED = spec('provider_request_rejected', PROVIDER_PERMANENT, false,
  'The data source rejected the request.');
export const DEPENDENCY_UNAVAILABLE = spec('dependency_unavailable', DEPENDENCY, true, 'The data source is unavailable right now.');
export const TOOL_TIMEOUT = spec('tool_timeout', DEPENDENCY, true, 'The tool call passed its deadline.');
export const TOOL_EXECUTION_FAILED = spec('tool_execution_failed', DEPENDENCY, false,
  'The tool failed to produce a valid result.');

// The runtime codes every tool declares: the host may return them for any tool.
export const RUNTIME_ERRORS = [DEPENDENCY_UNAVAILABLE, PROVIDER_REQUEST_REJECTED, TOOL_EXECUTION_FAILED, TOOL_TIMEOUT];

/** The tool's own codes followed by the runtime codes. */
export function errorsWithRuntime(own) {
  return [...own, ...RUNTIME_ERRORS.filter((runtime) => !own.includes(runtime))];
}

/** A typed tool error; throw it from `run`. */
export class ToolError extends Error {
  // `message`: fixed, safe text, never a provider body, a credential or a prompt.
  constructor(errorSpec, message = errorSpec.message) {
    super(message);
    this.code = errorSpec.code;
    this.category = errorSpec.category;
    this.retryable = errorSpec.retryable;
  }
}

export const invalidInput = () => new ToolError(INVALID_INPUT);

/** The first `file.js:line:column` of a stack (SpiderMonkey's or V8's). */
const FRAME = /([^\s/@(]+\.m?js):(\d+):(\d+)/;

/**
 * `tool_execution_failed` for an exception that escaped the tool: the
 * message names the exception and where it was thrown. The host keeps that
 * text for its debug log and the conformance report and puts the
 * contract's fixed message in the envelope.
 */
export function executionFailed(error) {
  const isError = error instanceof Error;
  const name = isError ? error.name : typeof error;
  const text = isError ? error.message : String(error);
  const frame = isError && typeof error.stack === 'string' ? FRAME.exec(error.stack) : null;
  const where = frame ? ` at ${frame[1]}:${frame[2]}:${frame[3]}` : '';
  return new ToolError(TOOL_EXECUTION_FAILED, `${name}: ${text}${where}`.slice(0, 500));
}
export const dependencyUnavailable = () => new ToolError(DEPENDENCY_UNAVAILABLE);
export const toolTimeout = () => new ToolError(TOOL_TIMEOUT);

/** One evidence item; the host adds provenance and the evidence id. */
export const evidence = (source, reference = null) => ({ source, reference });

// Deepest nesting of arrays and objects the input may have: the Rust SDK's
// parser (serde_json) accepts 127 levels and refuses 128, so every language
// draws the line at the same place.
export const MAX_DEPTH = 127;

// One JSON token: a whole string (so brackets inside it do not count), a
// number, a literal word or a punctuation mark; whitespace is skipped. A
// string left open runs to the end of the text: matching it once keeps the
// scan linear (retrying at every escaped quote would be quadratic), and
// JSON.parse refuses such text anyway.
const TOKEN = /"[^"\\]*(?:\\[\s\S][^"\\]*)*"?|-?[0-9][-+0-9.eE]*|[a-z]+|[[\]{}:,]/g;

/**
 * One pass over JSON text, no recursion: whether it nests deeper than
 * `limit`, and the number literal of every member of the top-level object
 * (the last one wins, as in JSON.parse). On text that is not JSON the
 * answer only has to be safe, since JSON.parse refuses such text anyway.
 */
export function scan(text, limit = MAX_DEPTH) {
  const literals = new Map();
  let depth = 0;
  let key = null;
  let expectKey = false;
  let afterColon = false;
  for (const [token] of text.matchAll(TOKEN)) {
    const first = token[0];
    if (first === '[' || first === '{') {
      depth += 1;
      if (depth > limit) return { tooDeep: true, literals };
      if (depth === 1) expectKey = first === '{';
    } else if (first === ']' || first === '}') {
      depth -= 1;
    }
    if (depth === 1 && first !== '{' && first !== '[') {
      if (expectKey && first === '"') {
        key = token;
        expectKey = false;
        continue;
      }
      if (first === ':') {
        afterColon = true;
        continue;
      }
      if (first === ',') {
        expectKey = true;
        continue;
      }
    }
    if (afterColon) {
      // The member's value starts here: a number literal, or anything else.
      const isNumber = first === '-' || (first >= '0' && first <= '9');
      if (key !== null) literals.set(JSON.parse(key), isNumber ? token : null);
      afterColon = false;
    }
  }
  return { tooDeep: false, literals };
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when `text` holds a lone surrogate. `isWellFormed` is native; the
 * regular expression is the fallback for engines without it (a regular
 * expression is compiled afresh in every call's new instance).
 */
function loneSurrogateIn(text) {
  return typeof text.isWellFormed === 'function' ? !text.isWellFormed() : LONE_SURROGATE.test(text);
}

/** True when a string anywhere in `value` (keys included) holds a lone surrogate. */
function hasLoneSurrogate(value) {
  const pending = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === 'string') {
      if (loneSurrogateIn(next)) return true;
    } else if (next !== null && typeof next === 'object') {
      for (const [member, inner] of Object.entries(next)) pending.push(member, inner);
    }
  }
  return false;
}

/**
 * Parse JSON text as strictly as the Rust SDK does: depth first, no lone
 * surrogates in strings (a `\ud800` escape parses, but cannot cross the
 * component boundary as a string). Throws SyntaxError.
 */
export function parseStrict(text) {
  // Text with few brackets and no digit cannot nest too deep or hold a
  // number literal: the scan (a regular expression, compiled afresh in
  // every call's new instance) is skipped.
  const scanned = bracketsExceed(text, MAX_DEPTH) || hasDigit(text) ? scan(text) : { tooDeep: false, literals: new Map() };
  if (scanned.tooDeep) throw new SyntaxError('nested too deep');
  const value = JSON.parse(text);
  if (hasLoneSurrogate(value)) throw new SyntaxError('lone surrogate');
  return { value, literals: scanned.literals };
}

/** Whether `text` holds a decimal digit (native searches). */
function hasDigit(text) {
  return [...'0123456789'].some((digit) => text.includes(digit));
}

/** The input's fields, or `invalid_input` unless the input is a JSON object whose keys are all in `allowed`. */
export function parseInput(text, allowed) {
  let parsed;
  try {
    parsed = parseStrict(text);
  } catch {
    throw invalidInput();
  }
  const { value, literals } = parsed;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidInput();
  if (Object.keys(value).some((key) => !allowed.includes(key))) throw invalidInput();
  return { fields: value, literals };
}

const INTEGER_LITERAL = /^-?(0|[1-9][0-9]*)$/;
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;

/**
 * An optional integer field, `fallback` when absent or `null`, clamped to
 * `low..=high` (exactly: the literal is read as a BigInt). `5.0`, `-0`,
 * `"5"`, `true` and integers beyond 64 bits are `invalid_input`.
 */
export function clampedInteger(input, name, fallback, low, high) {
  const value = input.fields[name];
  if (value === undefined || value === null) return fallback;
  const literal = input.literals.get(name);
  if (typeof value !== 'number' || typeof literal !== 'string' || !INTEGER_LITERAL.test(literal) || literal === '-0') {
    throw invalidInput();
  }
  // A 64-bit integer has at most 20 digits: longer literals are refused
  // before BigInt reads them (no engine promises a linear decimal parse).
  if (literal.length > (literal.startsWith('-') ? 21 : 20)) throw invalidInput();
  const integer = BigInt(literal);
  if (integer < I64_MIN || integer > U64_MAX) throw invalidInput();
  const clamped = integer < BigInt(low) ? BigInt(low) : integer > BigInt(high) ? BigInt(high) : integer;
  return Number(clamped);
}

/** A required string field of at most `maxChars` characters (code points), untrimmed. */
export function requiredString(input, name, maxChars) {
  const value = input.fields[name];
  if (typeof value !== 'string' || [...value].length > maxChars) throw invalidInput();
  return value;
}

/** A `public-web` failure: `denied`, `invalid-url`, `timed-out`, `too-large` or `unavailable`. */
export class FetchFailed extends Error {
  constructor(kind) {
    super(kind);
    this.kind = kind;
  }
}

/**
 * GET `url` with `get(url) -> {status, body}`; a failure becomes the
 * contract's code: a passed deadline is `tool_timeout`, anything else
 * `dependency_unavailable`.
 */
export function fetchWith(get, url) {
  try {
    return get(url);
  } catch (error) {
    if (error instanceof FetchFailed) throw error.kind === 'timed-out' ? toolTimeout() : dependencyUnavailable();
    throw error;
  }
}

/** A `workspace` read failure: `unauthorized`, `not-found`, `rejected`, `unavailable` or `timed-out`. */
export class ReadFailed extends Error {
  constructor(kind) {
    super(kind);
    this.kind = kind;
  }
}

/**
 * The contract's error for a workspace read failure (docs/contract.md
 * §3.4, the Rust SDK's `ToolError::from_read`): `unauthorized` is
 * `authorization_failed`, `rejected` (the host's answer for a 404 on
 * `engagement` or `feed`, and other 4xx) is `provider_request_rejected`,
 * `timed-out` is `tool_timeout`, `unavailable` is `dependency_unavailable`.
 * `not-found` comes only from `job(id)`: pass `JOB_NOT_FOUND` there;
 * elsewhere it means the source lacks data it should have.
 */
export function fromRead(kind, notFound = DEPENDENCY_UNAVAILABLE) {
  const specs = {
    unauthorized: AUTHORIZATION_FAILED,
    rejected: PROVIDER_REQUEST_REJECTED,
    'timed-out': TOOL_TIMEOUT,
    'not-found': notFound,
  };
  return new ToolError(specs[kind] ?? DEPENDENCY_UNAVAILABLE);
}

/**
 * `reader()` (a workspace read: `() => workspace.engagement()`, ...); a
 * thrown `ReadFailed` becomes the contract's code (`fromRead`).
 */
export function read(reader, notFound = DEPENDENCY_UNAVAILABLE) {
  try {
    return reader();
  } catch (error) {
    if (error instanceof ReadFailed) throw fromRead(error.kind, notFound);
    throw error;
  }
}

/**
 * A response body or a workspace document, as text or bytes, parsed as
 * JSON, or `dependency_unavailable`. Lighter than the input's rules,
 * because a body is only read, never echoed whole: nesting past
 * `MAX_DEPTH` is refused (a body with fewer brackets than that skips the
 * scan), and strings are checked only where they reach the output
 * (`outputString`).
 */
export function parseBody(body) {
  try {
    const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body);
    if (bracketsExceed(text, MAX_DEPTH) && scan(text).tooDeep) throw new SyntaxError('nested too deep');
    return JSON.parse(text);
  } catch {
    throw dependencyUnavailable();
  }
}

/** Whether `text` holds more than `limit` opening brackets (native searches, stopping early). */
function bracketsExceed(text, limit) {
  let count = 0;
  for (const bracket of ['[', '{']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      count += 1;
      if (count > limit) return true;
    }
  }
  return false;
}

/** `value` if it is a string that can cross the component boundary (no lone surrogate), else null. */
export function outputString(value) {
  return typeof value === 'string' && !loneSurrogateIn(value) ? value : null;
}
