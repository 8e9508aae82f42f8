"""`hn_top_story`: the highest-ranked Hacker News front-page story with at
least `min_points` points.

The tool's contract (`DESCRIPTOR`) and logic (`run`) as plain Python, with
no component bindings: `run` takes the public web as a function, so the
same code runs in the sandbox (`public_app.py` passes the host's `public-web`)
and natively in the unit tests (`test_hn_top_story.py` passes a fake).
The strict input rules every Harmonia tool follows live in `harmonia_tool.py`.
"""

import harmonia_tool as ht

FRONT_PAGE = "https://hn.algolia.com/api/v1/search?tags=front_page&hitsPerPage=20"

# The tool's contract: what the host checks at load and shows in `harmonia tools`.
DESCRIPTOR = ht.Descriptor(
    name="hn_top_story",
    version="0.1.0",
    purpose="Find the highest-ranked Hacker News front-page story with at least a given number of points.",
    input_schema={
        "type": "object",
        "properties": {
            "min_points": {
                "type": ["integer", "null"],
                "default": 0,
                "description": "Fewest points; clamped to 0-100000.",
            }
        },
        "additionalProperties": False,
    },
    # Your own codes first; the runtime codes are added for you.
    errors=ht.errors_with_runtime([ht.INVALID_INPUT]),
    scope="public",
    deadline_ms=10_000,
    skills=["hn-digest"],
)


def run(get, input_text):
    """Run once. `get(url)` returns `(status, body_bytes)` or raises
    `ht.FetchFailed`; the answer is an `ht.Output` or a raised `ht.ToolError`."""
    fields = ht.parse_input(input_text, ["min_points"])
    min_points = ht.clamped_integer(fields, "min_points", 0, 0, 100_000)
    status, body = ht.fetch(get, FRONT_PAGE)
    if status != 200:
        raise ht.dependency_unavailable()
    document = ht.parse_body(body)
    hits = document.get("hits") if isinstance(document, dict) else None
    if not isinstance(hits, list):
        raise ht.dependency_unavailable()
    top = next((hit for hit in hits if _qualifies(hit, min_points)), None)
    evidence = [ht.Evidence("hacker_news_algolia")]
    if top is None:
        return ht.Output({"found": False}, evidence)
    evidence.append(ht.Evidence("hacker_news_story", top["url"]))
    data = {"found": True, "title": top["title"], "url": top["url"], "points": top.get("points")}
    return ht.Output(data, evidence)


def _qualifies(hit, min_points):
    if not isinstance(hit, dict):
        return False
    if ht.output_string(hit.get("title")) is None or ht.output_string(hit.get("url")) is None:
        return False
    # A story whose points are missing or not a whole number counts as 0.
    return ht.unsigned_or_zero(hit.get("points")) >= min_points
