"""The rules every Harmonia tool follows, for tools written in Python.

The Python counterpart of the Rust guest SDK (`guest/sdk`), with no
component bindings so it runs natively in tests:

- the contract's error codes with their fixed category and retryability,
  and the four runtime codes every descriptor declares;
- strict input parsing: the input is the text of one JSON object whose
  keys the tool names; `null` reads as absent; integers are JSON integer
  literals from -2^63 to 2^64-1 (`5.0`, `5e0`, `-0`, `"5"` and `true` are
  not, exactly as the Rust SDK reads them); nesting deeper than
  `MAX_DEPTH` is refused before parsing, because CPython's recursive JSON
  parser would overflow the sandbox's wasm stack before it could raise
  `RecursionError`;
- the mapping of a capability failure to an error code: a `public-web`
  failure (`fetch`) and a `workspace` read failure (`read`, as the Rust
  SDK's `ToolError::from_read`);
- response bodies parsed from text or bytes (`parse_body`);
- an exception that escapes the tool turned into `tool_execution_failed`
  with a message naming it and where it was raised (`execution_failed`).

Every refusal is a raised `ToolError`; the app module (`public_app.py` or
`workspace_app.py`) turns it into the WIT `tool-error`.
"""

import json
import re
import traceback
from dataclasses import dataclass, field

VALIDATION = "validation"
AUTHORIZATION = "authorization"
NOT_FOUND = "not_found"
DEPENDENCY = "dependency"
PROVIDER_PERMANENT = "provider_permanent"


@dataclass(frozen=True)
class ErrorSpec:
    """A declared error: code, category and retryability."""

    code: str
    category: str
    retryable: bool
    message: str


# The contract's stable codes (docs/plugin-authors.md has the table). For
# these the host writes the fixed message itself, whatever the tool sends.
INVALID_INPUT = ErrorSpec("invalid_input", VALIDATION, False, "The input is not a JSON object of this tool's schema.")
INVALID_QUERY = ErrorSpec("invalid_query", VALIDATION, False, "The search query is empty.")
INVALID_JOB_ID = ErrorSpec("invalid_job_id", VALIDATION, False, "The job id is empty.")
JOB_NOT_FOUND = ErrorSpec("job_not_found", NOT_FOUND, False, "No job with that id exists in this workspace.")
INSUFFICIENT_MEASURED_HISTORY = ErrorSpec(
    "insufficient_measured_history", NOT_FOUND, False, "Fewer than three timestamped posts have measured engagement."
)
AUTHORIZATION_FAILED = ErrorSpec("authorization_failed", AUTHORIZATION, False, "The workspace source refused this caller.")
PROVIDER_REQUEST_REJECTED = ErrorSpec(
    "provider_request_rejected", PROVIDER_PERMANENT, False, "The data source rejected the request."
)
DEPENDENCY_UNAVAILABLE = ErrorSpec("dependency_unavailable", DEPENDENCY, True, "The data source is unavailable right now.")
TOOL_TIMEOUT = ErrorSpec("tool_timeout", DEPENDENCY, True, "The tool call passed its deadline.")
TOOL_EXECUTION_FAILED = ErrorSpec(
    "tool_execution_failed", DEPENDENCY, False, "The tool failed to produce a valid result."
)

# The runtime codes every tool declares: the host may return them for any tool.
RUNTIME_ERRORS = [DEPENDENCY_UNAVAILABLE, PROVIDER_REQUEST_REJECTED, TOOL_EXECUTION_FAILED, TOOL_TIMEOUT]


def errors_with_runtime(own):
    """The tool's own codes followed by the runtime codes."""
    return list(own) + [spec for spec in RUNTIME_ERRORS if spec not in own]


class ToolError(Exception):
    """A typed tool error; raise it from `run`."""

    def __init__(self, spec, message=None):
        super().__init__(spec.code)
        self.code = spec.code
        self.category = spec.category
        self.retryable = spec.retryable
        # Fixed, safe text: never a provider body, a credential or a prompt.
        self.message = message or spec.message

    def __eq__(self, other):
        return isinstance(other, ToolError) and (self.code, self.category, self.retryable, self.message) == (
            other.code,
            other.category,
            other.retryable,
            other.message,
        )

    __hash__ = Exception.__hash__


def invalid_input():
    return ToolError(INVALID_INPUT)


def execution_failed(error):
    """`tool_execution_failed` for an exception that escaped the tool: the
    message names the exception and where it was raised. The host keeps
    that text for its debug log and the conformance report and puts the
    contract's fixed message in the envelope."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    text = f"{type(error).__name__}: {error}{where}"
    if isinstance(error, OSError):
        # A tool has no files and no network: wasi:filesystem is linked with
        # no preopened directory and every socket is refused, so CPython
        # reports errno 44 (ENOENT) or 76 (ENOTCAPABLE) for any path.
        text += "; a tool has no filesystem or network: read through its capability"
    # A lone surrogate cannot cross the component boundary as a string.
    return ToolError(TOOL_EXECUTION_FAILED, text.encode("utf-8", "replace").decode("utf-8")[:500])


def dependency_unavailable():
    return ToolError(DEPENDENCY_UNAVAILABLE)


def tool_timeout():
    return ToolError(TOOL_TIMEOUT)


@dataclass
class Descriptor:
    """A tool's contract, read once by the host at load."""

    name: str  # ^[a-z]+(_[a-z]+)+$
    version: str  # 1 to 64 characters
    purpose: str  # 20 to 300 characters
    input_schema: dict  # a JSON Schema object
    errors: list  # every ErrorSpec the tool may return, the runtime codes included
    scope: str  # "public" or "workspace", matching the imported capability
    deadline_ms: int  # 1,000 to 120,000
    skills: list = field(default_factory=list)  # at least one; lowercase words joined by '-'


@dataclass
class Evidence:
    """One evidence item; the host adds provenance and the evidence id."""

    source: str  # 1 to 120 characters
    reference: str | None = None  # the record's id (URL, post id); None for the whole dataset


@dataclass
class Output:
    """A successful answer: a JSON object and up to 100 evidence items."""

    data: dict
    evidence: list


# Deepest nesting of arrays and objects the input may have: the Rust SDK's
# parser (serde_json) accepts 127 levels and refuses 128, so every language
# draws the line at the same place.
MAX_DEPTH = 127

# A JSON string (skipped whole, so brackets inside it do not count) or a
# bracket. A string left open runs to the end of the text: matching it once
# keeps the scan linear (retrying at every escaped quote would be quadratic),
# and the parser refuses such text anyway.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def too_deep(text, limit=MAX_DEPTH):
    """True when `text` nests arrays and objects more than `limit` deep.
    Linear, no recursion; on text that is not JSON the answer only has to be
    safe, since the parser refuses such text anyway."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


def _refuse_constant(name):
    # Python's parser accepts NaN and Infinity; JSON does not.
    raise ValueError(f"{name} is not JSON")


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def _integer(literal):
    # Read integer literals as the Rust SDK's parser (serde_json) does: one
    # outside -2^63..2^64-1, or `-0`, is a float there, so it is one here too
    # (and `clamped_integer` refuses it like `5.0`).
    if literal == "-0" or len(literal) > 20:
        return float(literal)
    value = int(literal)
    return value if _I64_MIN <= value <= _U64_MAX else float(literal)


def loads_strict(text):
    """Parse JSON text as strictly as the Rust SDK does: depth first, no
    NaN or Infinity, no lone surrogates in strings, integers as above.
    Raises ValueError."""
    if too_deep(text):
        raise ValueError("nested too deep")
    value = json.loads(text, parse_constant=_refuse_constant, parse_int=_integer)
    # A lone surrogate escape (\ud800) parses, but cannot cross the component
    # boundary as a string; encoding the whole value finds one anywhere.
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return value


def parse_input(text, allowed):
    """The input object, refused with `invalid_input` unless it is a JSON
    object whose keys are all in `allowed`."""
    try:
        value = loads_strict(text)
    except (ValueError, RecursionError, UnicodeError):
        raise invalid_input() from None
    if not isinstance(value, dict) or any(key not in allowed for key in value):
        raise invalid_input()
    return value


def _present(fields, name):
    """The field's value; `null` reads as absent (None)."""
    return fields.get(name)


def clamped_integer(fields, name, default, low, high):
    """An optional integer field, `default` when absent, clamped to `low..=high`.
    `5.0`, `-0`, `"5"`, `true` and integers beyond 64 bits are `invalid_input`."""
    value = _present(fields, name)
    if value is None:
        return default
    if type(value) is not int:
        raise invalid_input()
    return min(max(value, low), high)


def required_string(fields, name, max_chars):
    """A required string field of at most `max_chars` characters, untrimmed."""
    value = _present(fields, name)
    if not isinstance(value, str) or len(value) > max_chars:
        raise invalid_input()
    return value


class FetchFailed(Exception):
    """A `public-web` failure: `denied`, `invalid-url`, `timed-out`,
    `too-large` or `unavailable`."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


def fetch(get, url):
    """GET `url`; a failure becomes the contract's code: a passed deadline
    is `tool_timeout`, anything else `dependency_unavailable`."""
    try:
        return get(url)
    except FetchFailed as failure:
        raise (tool_timeout() if failure.kind == "timed-out" else dependency_unavailable()) from None


class ReadFailed(Exception):
    """A `workspace` read failure: `unauthorized`, `not-found`, `rejected`,
    `unavailable` or `timed-out`."""

    def __init__(self, kind):
        super().__init__(kind)
        self.kind = kind


def from_read(kind, not_found=DEPENDENCY_UNAVAILABLE):
    """The contract's error for a workspace read failure (docs/contract.md
    §3.4, the Rust SDK's `ToolError::from_read`): `unauthorized` is
    `authorization_failed`, `rejected` (the host's answer for a 404 on
    `engagement` or `feed`, and other 4xx) is `provider_request_rejected`,
    `timed-out` is `tool_timeout`, `unavailable` is `dependency_unavailable`.
    `not-found` comes only from `job(id)`: pass `not_found=JOB_NOT_FOUND`
    there; elsewhere it means the source lacks data it should have."""
    spec = {
        "unauthorized": AUTHORIZATION_FAILED,
        "rejected": PROVIDER_REQUEST_REJECTED,
        "timed-out": TOOL_TIMEOUT,
        "not-found": not_found,
    }.get(kind, DEPENDENCY_UNAVAILABLE)
    return ToolError(spec)


def read(reader, *args, not_found=DEPENDENCY_UNAVAILABLE):
    """`reader(*args)` (a workspace read: `engagement`, `feed`, `job`); a
    raised `ReadFailed` becomes the contract's code (`from_read`)."""
    try:
        return reader(*args)
    except ReadFailed as failure:
        raise from_read(failure.kind, not_found) from None


def parse_body(body):
    """A response body or a workspace document, as text or bytes, parsed as
    JSON, or `dependency_unavailable`.

    Lighter than the input's rules, because a body is only read, never
    echoed whole: nesting past `MAX_DEPTH` is refused (a body with fewer
    brackets than that skips the scan), NaN and Infinity are refused, and
    strings are checked only where they reach the output
    (`output_string`)."""
    try:
        text = body if isinstance(body, str) else bytes(body).decode("utf-8")
        if text.count("[") + text.count("{") > MAX_DEPTH and too_deep(text):
            raise ValueError("nested too deep")
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError, UnicodeError):
        raise dependency_unavailable() from None


def output_string(value):
    """`value` if it is a string that can cross the component boundary (no
    lone surrogate), else None."""
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def unsigned_or_zero(value):
    """A JSON integer from 0 to 2^64-1, else 0."""
    return value if type(value) is int and 0 <= value <= _U64_MAX else 0
