"""Property tests of the judge-verdict parsers: on any text each returns a well-formed result or raises its
ParseError (which the judges store as a failed judgment) and never anything else, which would end a judge run."""

from __future__ import annotations

import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from judges.parsing import (
    AttributesReply,
    CountsReply,
    ObjectsReply,
    ParseError,
    RatingReply,
    SemVarScore,
    SpatialReply,
    SynonymsReply,
    parse_fit,
    parse_json_object,
    parse_json_reply,
    parse_pairwise,
    parse_semvar,
)

SCHEMAS = (ObjectsReply, AttributesReply, SpatialReply, CountsReply, SynonymsReply, RatingReply)

# Pieces of real replies, so that the generated texts reach every branch (verdicts, ratings, JSON) and not only
# the "nothing found" one; plus pathological ones (deep nesting, huge numbers).
FRAGMENTS = st.sampled_from([
    "[[", "]]", "[[A]]", "[[ b ]]", "[[C]]", "[[D]]", "[[E]]", "[[35]]", "[[-3]]", "[[50.5]]", "[[7.25]]",
    "Relevance (0-50 points): ", "Object Accuracy (0-50 points): ", "relevance", "object  accuracy", "\n",
    "0", "1", "10", "0.5", "1.", "01", " ", "I'm sorry, ", "{", "}", "[", "]", ":", ",", '"', "null", "true",
    '"objects"', '"attributes"', '"counts"', '"synonyms"', '"score"', '"relation"', '"left of"', '"detected"',
    '{"objects": ["cup", "dog"]}', '{"counts": {"cup": 2}}', '{"score": 0.5, "detected": "red"}',
    '{"subject": "dog", "relation": "above", "object": "cat"}', '{"synonyms": {"car": ["auto"]}}',
    '{"attributes": {"hat": "red"}}', "```json\n", "\n```", "NaN", "Infinity", "-1e400", "1e400",
    '{"a": ' + "[" * 5000, '{"score": ' + "9" * 5000 + "}", "[[" + "9" * 400 + "]]",
])
TEXTS = st.one_of(
    st.text(),
    st.lists(st.one_of(FRAGMENTS, st.text(max_size=4)), max_size=25).map("".join),
)


def _parse_or_parse_error(parser, text):
    try:
        return parser(text)
    except ParseError as error:
        assert str(error), "a ParseError says what was expected"
        return None
    except Exception as error:  # noqa: BLE001 - the property under test
        pytest.fail(f"{parser.__name__} raised {type(error).__name__}: {error} on {text[:200]!r}")


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("[[A]] [[B]]")
@example("")
def test_parse_pairwise_gives_a_verdict_or_a_parse_error(text):
    verdict = _parse_or_parse_error(parse_pairwise, text)
    if verdict is not None:
        assert verdict.label in "ABCD" and verdict.outcome in ("A", "B", "tie", "both_bad")
        assert text.strip().startswith(verdict.explanation)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("1 or 0")
def test_parse_fit_gives_one_or_zero_or_a_parse_error(text):
    value = _parse_or_parse_error(parse_fit, text)
    assert value in (None, 0, 1)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
@example("[[" + "9" * 400 + "]] [[1]]")
def test_parse_semvar_gives_two_ratings_in_range_or_a_parse_error(text):
    value = _parse_or_parse_error(parse_semvar, text)
    if value is not None:
        assert isinstance(value, SemVarScore)
        assert 0 <= value.relevance <= 50 and 0 <= value.object_accuracy <= 50 and 0 <= value.score <= 1


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.sampled_from(SCHEMAS))
@example('{"a": ' + "[" * 5000, ObjectsReply)          # nested too deeply for the JSON decoder
@example('{"score": ' + "9" * 5000 + "}", RatingReply)  # an integer past Python's 4300-digit limit
@example('{"score": NaN}', RatingReply)
def test_parse_json_reply_gives_the_schema_or_a_parse_error(text, schema):
    value = _parse_or_parse_error(lambda t: parse_json_reply(t, schema), text)
    assert value is None or isinstance(value, schema)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=string.ascii_letters + string.digits + " .,\n", max_size=60), st.sampled_from("ABCDabcd"))
def test_a_final_verdict_after_any_explanation_is_read(explanation, label):
    verdict = parse_pairwise(f"{explanation}\n[[{label}]]")
    assert verdict.label == label.upper() and verdict.explanation == explanation.strip()


def test_an_unreadable_candidate_is_skipped_for_a_later_json_object():
    assert parse_json_object('{"a": ' + "[" * 5000 + ' and then {"objects": ["cup"]}') == {"objects": ["cup"]}
