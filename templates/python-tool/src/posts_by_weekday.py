"""`posts_by_weekday`: how many measured posts were published on each UTC
weekday, counting only posts with at least `min_likes` likes.

The workspace example: its contract (`DESCRIPTOR`) and logic (`run`) as
plain Python, with no component bindings. `run` takes the workspace as an
object with `engagement()`, `feed()` and `job(id)`, so the same code runs
in the sandbox (`workspace_app.py` passes the host's `workspace`) and
natively in the unit tests (`test_posts_by_weekday.py` passes a fake).

`engagement()` returns the text of `{"posts": [...], "takeaways": ...}`:
every measured post as `{"postId", "text", "likes", "publishedAt"}`
(docs/plugin-authors.md, section 7.7, lists every field of every read).
"""

import re
from datetime import datetime, timezone

import harmonia_tool as ht

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# The tool's contract: what the host checks at load and shows in `harmonia tools`.
DESCRIPTOR = ht.Descriptor(
    name="posts_by_weekday",
    version="0.1.0",
    purpose="Count the workspace's measured posts by the UTC weekday they were published on.",
    input_schema={
        "type": "object",
        "properties": {
            "min_likes": {
                "type": ["integer", "null"],
                "default": 0,
                "description": "Fewest likes a post needs to count; clamped to 0-1000000000.",
            }
        },
        "additionalProperties": False,
    },
    # Your own codes first; the runtime codes are added for you. A workspace
    # tool declares `authorization_failed`: the workspace refuses a caller
    # with no workspace bound, or another tenant's.
    errors=ht.errors_with_runtime([ht.INVALID_INPUT, ht.AUTHORIZATION_FAILED]),
    scope="workspace",
    deadline_ms=10_000,
    skills=["posting-schedule"],
)

# RFC 3339 with a zone (`Z` or an offset), as the workspace stores it.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def utc_weekday(text):
    """The UTC weekday (0 is Monday) of an RFC 3339 time, or None."""
    if not isinstance(text, str) or not _RFC3339.fullmatch(text):
        return None
    try:
        return datetime.fromisoformat(text.upper().replace("Z", "+00:00")).astimezone(timezone.utc).weekday()
    except ValueError:
        return None


def run(workspace, input_text):
    """Run once. `workspace.engagement()` returns text or raises
    `ht.ReadFailed`; the answer is an `ht.Output` or a raised `ht.ToolError`."""
    fields = ht.parse_input(input_text, ["min_likes"])
    min_likes = ht.clamped_integer(fields, "min_likes", 0, 0, 1_000_000_000)
    document = ht.parse_body(ht.read(workspace.engagement))
    posts = document.get("posts") if isinstance(document, dict) else None
    if not isinstance(posts, list):
        raise ht.dependency_unavailable()
    counts = [0] * 7
    for post in posts:
        if not isinstance(post, dict) or ht.unsigned_or_zero(post.get("likes")) < min_likes:
            continue
        weekday = utc_weekday(post.get("publishedAt"))
        if weekday is not None:
            counts[weekday] += 1
    data = {
        "minLikes": min_likes,
        "counted": sum(counts),
        "byWeekday": [{"weekday": name, "posts": count} for name, count in zip(WEEKDAYS, counts)],
    }
    return ht.Output(data, [ht.Evidence("harmonia_engagement")])
