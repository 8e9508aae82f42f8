"""The export of a `public-tool` component: `describe` answers with the
tool's descriptor, `invoke` runs its logic against the host's `public-web`.

`build.sh --world public` builds this module. It is the only one that
touches the world's capability; the tool itself is `hn_top_story.py`.
"""

import component
import harmonia_tool as ht
import hn_top_story as tool
from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import public_web, types

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
        return component.describe(tool.DESCRIPTOR)

    def invoke(self, input: str) -> types.Output:
        return component.invoke(lambda: tool.run(_host_get, input))
