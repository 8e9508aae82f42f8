"""The component side shared by both worlds: the descriptor and the answer
as WIT types (`wit_world`, which componentize-py generates from
`wit/tools.wit` at build time). The app modules (`public_app.py`,
`workspace_app.py`) add the capability of their world.
"""

import json
import sys
import traceback

import harmonia_tool as ht
from componentize_py_types import Err
from wit_world.imports import types

_CATEGORIES = {
    ht.VALIDATION: types.ErrorCategory.VALIDATION,
    ht.AUTHORIZATION: types.ErrorCategory.AUTHORIZATION,
    ht.NOT_FOUND: types.ErrorCategory.NOT_FOUND,
    ht.DEPENDENCY: types.ErrorCategory.DEPENDENCY,
    ht.PROVIDER_PERMANENT: types.ErrorCategory.PROVIDER_PERMANENT,
}


def describe(d):
    """The descriptor `d` (an `ht.Descriptor`) as the WIT record."""
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


def invoke(run):
    """Run `run()` (the logic, bound to its capability and input) and answer
    as the WIT result: an `Output`, or a raised `Err(ToolError)`.

    An exception other than `ht.ToolError` is a bug in the tool: its
    traceback goes to stderr (the host's debug log, `HARMONIA_LOG=debug`)
    and the call answers `tool_execution_failed`, whose message names the
    exception and its line (the host logs that text and puts the contract's
    fixed message in the envelope)."""
    try:
        output = run()
        if not isinstance(output, ht.Output):
            # Printing the answer instead of returning it ends here.
            raise TypeError(
                f"run returned {type(output).__name__}, not ht.Output: a tool answers by returning "
                "ht.Output(data, evidence); what it prints goes to the debug log, never the envelope"
            )
    except ht.ToolError as error:
        raise Err(types.ToolError(error.code, _CATEGORIES[error.category], error.message, error.retryable)) from None
    except Exception as error:  # noqa: BLE001 - every bug becomes one typed answer
        traceback.print_exc(file=sys.stderr)
        failure = ht.execution_failed(error)
        raise Err(types.ToolError(failure.code, _CATEGORIES[failure.category], failure.message, False)) from None
    # `data` must be a dict (a JSON object): anything else is refused by the
    # host, which names what it got in its debug log.
    return types.Output(
        data=json.dumps(output.data, allow_nan=False),
        evidence=[types.EvidenceItem(item.source, item.reference) for item in output.evidence],
    )
