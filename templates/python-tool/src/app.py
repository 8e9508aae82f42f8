"""The component's export: `describe` answers with the tool's descriptor,
`invoke` runs its logic against the host's `public-web`.

This file is the only one that touches the bindings (`wit_world`, which
componentize-py generates from `wit/tools.wit` at build time); the tool
itself is `hn_top_story.py`.
"""

import json

import harmonia_tool as ht
import hn_top_story as tool
from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import public_web, types

_CATEGORIES = {
    ht.VALIDATION: types.ErrorCategory.VALIDATION,
    ht.AUTHORIZATION: types.ErrorCategory.AUTHORIZATION,
    ht.NOT_FOUND: types.ErrorCategory.NOT_FOUND,
    ht.DEPENDENCY: types.ErrorCategory.DEPENDENCY,
    ht.PROVIDER_PERMANENT: types.ErrorCategory.PROVIDER_PERMANENT,
}

_FETCH_ERRORS = {
    public_web.FetchError_Denied: "denied",
    public_web.FetchError_InvalidUrl: "invalid-url",
    public_web.FetchError_TimedOut: "timed-out",
    public_web.FetchError_TooLarge: "too-large",
    public_web.FetchError_Unavailable: "unavailable",
}


def _host_get(url):
    """The host's `public-web` as the logic sees it: `(status, body)`."""
    try:
        response = public_web.get(url)
    except Err as error:
        raise ht.FetchFailed(_FETCH_ERRORS.get(type(error.value), "unavailable")) from None
    return response.status, bytes(response.body)


class Tool(exports.Tool):
    def describe(self) -> types.Descriptor:
        d = tool.DESCRIPTOR
        return types.Descriptor(
            name=d.name,
            version=d.version,
            purpose=d.purpose,
            input_schema=json.dumps(d.input_schema),
            errors=[types.ErrorSpec(s.code, _CATEGORIES[s.category], s.retryable) for s in d.errors],
            scope=types.Scope.PUBLIC if d.scope == "public" else types.Scope.WORKSPACE,
            deadline_ms=d.deadline_ms,
            skills=list(d.skills),
        )

    def invoke(self, input: str) -> types.Output:
        try:
            output = tool.run(_host_get, input)
        except ht.ToolError as error:
            raise Err(types.ToolError(error.code, _CATEGORIES[error.category], error.message, error.retryable))
        # Anything else raised here is a bug in the tool: the component traps
        # and the host answers `tool_execution_failed`.
        return types.Output(
            data=json.dumps(output.data, allow_nan=False),
            evidence=[types.EvidenceItem(item.source, item.reference) for item in output.evidence],
        )
