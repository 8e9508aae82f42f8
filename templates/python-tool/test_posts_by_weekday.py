"""Native unit tests of the workspace example, with a fake workspace:
`PYTHONPATH=src python3 -m unittest` in the template directory."""

import json
import unittest

import harmonia_tool as ht
import posts_by_weekday as tool


class FakeWorkspace:
    def __init__(self, engagement=None, failure=None):
        self._engagement = engagement
        self._failure = failure

    def engagement(self):
        if self._failure:
            raise ht.ReadFailed(self._failure)
        return self._engagement


POSTS = json.dumps(
    {
        "posts": [
            {"postId": "p1", "text": "a", "likes": 10, "publishedAt": "2026-11-02T14:05:00Z"},  # Monday
            {"postId": "p2", "text": "b", "likes": 50, "publishedAt": "2026-11-03T00:30:00+01:00"},  # Mon UTC
            {"postId": "p3", "text": "c", "likes": 5, "publishedAt": "2026-11-08T09:00:00Z"},  # Sunday
            {"postId": "p4", "text": "d", "likes": 99, "publishedAt": None},
            {"postId": "p5", "text": "e", "likes": 7, "publishedAt": "yesterday"},
        ],
        "takeaways": None,
    }
)


def counts(output):
    return {entry["weekday"]: entry["posts"] for entry in output.data["byWeekday"] if entry["posts"]}


class PostsByWeekday(unittest.TestCase):
    def test_counts_by_utc_weekday(self):
        output = tool.run(FakeWorkspace(POSTS), "{}")
        self.assertEqual(counts(output), {"Monday": 2, "Sunday": 1})
        self.assertEqual(output.data["counted"], 3)
        self.assertEqual(output.evidence, [ht.Evidence("harmonia_engagement")])

    def test_min_likes_filters_and_clamps(self):
        self.assertEqual(counts(tool.run(FakeWorkspace(POSTS), '{"min_likes": 10}')), {"Monday": 2})
        self.assertEqual(tool.run(FakeWorkspace(POSTS), '{"min_likes": -3}').data["minLikes"], 0)
        with self.assertRaises(ht.ToolError) as refused:
            tool.run(FakeWorkspace(POSTS), '{"min_likes": 1.5}')
        self.assertEqual(refused.exception.code, "invalid_input")

    def test_bytes_and_text_bodies_parse_alike(self):
        self.assertEqual(ht.parse_body(POSTS), ht.parse_body(POSTS.encode()))

    def test_read_failures_map_as_the_rust_sdk(self):
        expected = {
            "unauthorized": "authorization_failed",
            "rejected": "provider_request_rejected",
            "timed-out": "tool_timeout",
            "unavailable": "dependency_unavailable",
            "not-found": "dependency_unavailable",
        }
        for kind, code in expected.items():
            with self.assertRaises(ht.ToolError) as refused:
                tool.run(FakeWorkspace(failure=kind), "{}")
            self.assertEqual(refused.exception.code, code, kind)
        self.assertEqual(ht.from_read("not-found", ht.JOB_NOT_FOUND).code, "job_not_found")

    def test_a_document_that_is_not_the_expected_json_is_unavailable(self):
        for body in ["", "<html>", "[]", '{"posts": 3}']:
            with self.assertRaises(ht.ToolError) as refused:
                tool.run(FakeWorkspace(body), "{}")
            self.assertEqual(refused.exception.code, "dependency_unavailable", body)

    def test_an_escaped_exception_names_itself_and_its_line(self):
        try:
            open("/etc/hostname-that-a-tool-cannot-read")
        except OSError as error:
            failure = ht.execution_failed(error)
        self.assertEqual(failure.code, "tool_execution_failed")
        self.assertIn("FileNotFoundError", failure.message)
        self.assertIn("test_posts_by_weekday.py:", failure.message)
        self.assertIn("no filesystem", failure.message)


if __name__ == "__main__":
    unittest.main()
