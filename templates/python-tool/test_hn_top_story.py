"""Native unit tests of the tool's logic and the input rules, with a fake
public web: `python3 -m unittest` in this directory (no component needed)."""

import json
import unittest

import harmonia_tool as ht
import hn_top_story as tool

HITS = json.dumps(
    {
        "hits": [
            {"title": "Small", "url": "https://a.example", "points": 5},
            {"title": "Big", "url": "https://b.example", "points": 500},
        ]
    }
).encode()


def answering(status, body):
    requested = []

    def get(url):
        requested.append(url)
        return status, body

    get.requested = requested
    return get


def failing(kind):
    def get(url):
        raise ht.FetchFailed(kind)

    return get


class Logic(unittest.TestCase):
    def test_finds_the_first_story_over_the_threshold(self):
        get = answering(200, HITS)
        output = tool.run(get, '{"min_points": 100}')
        self.assertEqual(output.data, {"found": True, "title": "Big", "url": "https://b.example", "points": 500})
        self.assertEqual(output.evidence[1], ht.Evidence("hacker_news_story", "https://b.example"))
        self.assertEqual(get.requested, [tool.FRONT_PAGE])

    def test_nothing_over_the_threshold_is_found_false_with_dataset_evidence(self):
        output = tool.run(answering(200, HITS), '{"min_points": 100000}')
        self.assertEqual(output.data, {"found": False})
        self.assertEqual(output.evidence, [ht.Evidence("hacker_news_algolia")])

    def test_skips_hits_without_a_string_title_and_url(self):
        body = json.dumps({"hits": [3, {"title": 1, "url": "u"}, {"title": "t", "url": "https://c.example"}]})
        output = tool.run(answering(200, body.encode()), "{}")
        self.assertEqual(output.data["url"], "https://c.example")
        self.assertIsNone(output.data["points"])

    def test_maps_failures(self):
        for get in [answering(503, b"{}"), answering(200, b"<html>"), answering(200, b"{}"), answering(200, b"\xff")]:
            with self.assertRaises(ht.ToolError) as raised:
                tool.run(get, "{}")
            self.assertEqual(raised.exception, ht.dependency_unavailable())
        for kind in ["denied", "invalid-url", "too-large", "unavailable"]:
            with self.assertRaises(ht.ToolError) as raised:
                tool.run(failing(kind), "{}")
            self.assertEqual(raised.exception.code, "dependency_unavailable")
        with self.assertRaises(ht.ToolError) as raised:
            tool.run(failing("timed-out"), "{}")
        self.assertEqual(raised.exception, ht.tool_timeout())

    def test_a_deep_body_is_refused_before_parsing(self):
        deep = ("[" * 10_000 + "]" * 10_000).encode()
        with self.assertRaises(ht.ToolError) as raised:
            tool.run(answering(200, deep), "{}")
        self.assertEqual(raised.exception.code, "dependency_unavailable")


class InputRules(unittest.TestCase):
    def read(self, text):
        return ht.clamped_integer(ht.parse_input(text, ["limit"]), "limit", 6, 1, 10)

    def test_refuses_non_objects_and_unknown_fields(self):
        for text in ["", "[]", "3", '"x"', "null", "{", '{"other":1}', "\0", '{"limit": NaN}', '{"limit": Infinity}']:
            with self.assertRaises(ht.ToolError, msg=text) as raised:
                self.read(text)
            self.assertEqual(raised.exception, ht.invalid_input())

    def test_clamps_integers_and_reads_null_as_absent(self):
        self.assertEqual(self.read("{}"), 6)
        self.assertEqual(self.read('{"limit":null}'), 6)
        self.assertEqual(self.read('{"limit":0}'), 1)
        self.assertEqual(self.read('{"limit":-9}'), 1)
        self.assertEqual(self.read('{"limit":99}'), 10)
        self.assertEqual(self.read('{"limit":18446744073709551615}'), 10)
        self.assertEqual(self.read('{"limit":-9223372036854775808}'), 1)
        self.assertEqual(self.read('{"limit":4}'), 4)

    def test_only_integer_literals_within_64_bits_are_integers(self):
        for literal in ["4.0", "4e0", "-0", '"4"', "true", "[4]", "18446744073709551616", "-9223372036854775809", "1" * 5000]:
            with self.assertRaises(ht.ToolError, msg=literal):
                self.read('{"limit": %s}' % literal)

    def test_nesting_past_the_limit_is_refused_and_at_the_limit_parsed(self):
        at_limit = "[" * ht.MAX_DEPTH + "]" * ht.MAX_DEPTH
        self.assertEqual(ht.loads_strict(at_limit), json.loads(at_limit))
        past = "[" * (ht.MAX_DEPTH + 1) + "]" * (ht.MAX_DEPTH + 1)
        with self.assertRaises(ValueError):
            ht.loads_strict(past)
        # Brackets inside strings do not count, escaped quotes included.
        self.assertFalse(ht.too_deep('["' + "[" * 500 + '\\"' + "{" * 500 + '"]'))
        with self.assertRaises(ht.ToolError):
            self.read('{"limit": %s}' % past)

    def test_an_open_string_of_escaped_quotes_is_scanned_once(self):
        # Retrying the string pattern at every escaped quote would take hours
        # on this; one linear pass takes milliseconds.
        hostile = '{"limit": "' + '\\"' * 500_000
        self.assertFalse(ht.too_deep(hostile))
        with self.assertRaises(ht.ToolError):
            self.read(hostile)

    def test_lone_surrogates_are_refused(self):
        for text in ['{"limit": "\\ud800"}', '{"\\udc00": 1}']:
            with self.assertRaises(ht.ToolError, msg=text):
                self.read(text)
        self.assertEqual(ht.loads_strict('"\\ud83d\\ude80"'), "\U0001f680")

    def test_strings_are_required_and_bounded(self):
        def read(text):
            return ht.required_string(ht.parse_input(text, ["q"]), "q", 3)

        self.assertEqual(read('{"q":"abc"}'), "abc")
        self.assertEqual(read('{"q":"  "}'), "  ")
        for text in ['{"q":"abcd"}', "{}", '{"q":1}', '{"q":null}']:
            with self.assertRaises(ht.ToolError, msg=text):
                read(text)


class Descriptor(unittest.TestCase):
    def test_declares_the_runtime_codes_after_its_own(self):
        codes = [spec.code for spec in tool.DESCRIPTOR.errors]
        self.assertEqual(
            codes,
            ["invalid_input", "dependency_unavailable", "provider_request_rejected", "tool_execution_failed", "tool_timeout"],
        )


if __name__ == "__main__":
    unittest.main()
