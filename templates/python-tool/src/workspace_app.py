"""The export of a `workspace-tool` component: `describe` answers with the
tool's descriptor, `invoke` runs its logic against the host's `workspace`.

`build.sh --world workspace` builds this module. It is the only one that
touches the world's capability; the tool itself is `posts_by_weekday.py`.
"""

import component
import harmonia_tool as ht
import posts_by_weekday as tool
from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types, workspace

# componentize-py names each case of the WIT variant `read-error` as a class
# `ReadError_<Case>` (`componentize-py -d wit/tools.wit -w workspace-tool
# bindings DIR` writes the generated module for reading).
_READ_ERRORS = {
    workspace.ReadError_Unauthorized: "unauthorized",
    workspace.ReadError_NotFound: "not-found",
    workspace.ReadError_Rejected: "rejected",
    workspace.ReadError_Unavailable: "unavailable",
    workspace.ReadError_TimedOut: "timed-out",
}


class HostWorkspace:
    """The host's `workspace` as the logic sees it: each read returns text
    (a feed read: `(document, updated_at, read_at)`) or raises
    `ht.ReadFailed`."""

    @staticmethod
    def _read(reader, *args):
        try:
            return reader(*args)
        except Err as error:
            raise ht.ReadFailed(_READ_ERRORS.get(type(error.value), "unavailable")) from None

    def engagement(self):
        return self._read(workspace.engagement)

    def feed(self):
        read = self._read(workspace.feed)
        return read.document, read.updated_at, read.read_at

    def job(self, job_id):
        return self._read(workspace.job, job_id)


class Tool(exports.Tool):
    def describe(self) -> types.Descriptor:
        return component.describe(tool.DESCRIPTOR)

    def invoke(self, input: str) -> types.Output:
        return component.invoke(lambda: tool.run(HostWorkspace(), input))
