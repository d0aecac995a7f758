"""Reading judge replies (pure functions; no I/O).

Every parser returns the parsed value or raises :class:`ParseError` with a message that says what was expected; the
judges store that message as the reason of a failed judgment. :func:`refusal_reason` tells a refusal from a reply
that merely does not parse.

- T1 pairwise: the final ``[[A]]``, ``[[B]]``, ``[[C]]`` (tie) or ``[[D]]`` (both bad); the text before it is the
  explanation.
- T2 fit: the number 1 or 0.
- T3 SemVarBench: two ``[[n]]`` scores 0-50 (Relevance, Object Accuracy); S(T, I) = (relevance + accuracy) / 100.
- T4 SANEval: JSON objects, validated against the pydantic models below; the published protocol's Appendix C
  replies (a JSON array of objects, ``{obj1, relationship, obj2}`` or ``{}``, ``{object: [attributes]}``,
  ``{"objects": {...}, "numbers_found": [...]}``, synonym groups, and a bare number for the rating) by the
  ``parse_paper_*`` functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VERDICT_OUTCOMES = {"A": "A", "B": "B", "C": "tie", "D": "both_bad"}
SWAPPED = {"A": "B", "B": "A", "C": "C", "D": "D"}

_VERDICT = re.compile(r"\[\[\s*([ABCD])\s*\]\]", re.IGNORECASE)
_BRACKETED_NUMBER = re.compile(r"\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]")
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry,|i can(?:no|')t (?:help|assist|evaluate|provide|comply)|i cannot|"
    r"i'?m (?:not able|unable)|i am (?:not able|unable)|i won'?t)", re.IGNORECASE
)


class ParseError(ValueError):
    """A reply does not have the expected form; the message says what was expected."""


def _excerpt(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def refusal_reason(text: str, refusal: str = "", finish_reason: str = "") -> str | None:
    """Why a reply is a refusal (the API's refusal field, a content filter, or an apology instead of an answer)."""
    if refusal:
        return f"refusal: {refusal.strip()}"
    if finish_reason == "content_filter":
        return "refusal: the reply was stopped by the content filter"
    if _REFUSAL.match(text or ""):
        return f"refusal: {_excerpt(text)}"
    return None


T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A parsed reply (``value``), or ``value`` None and the ``reason`` it failed."""

    value: T | None
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.reason == ""


def read_reply(reply: Any, parser: Callable[[str], T]) -> Parsed[T]:
    """Parse an engine reply (:class:`judges.client.Reply`): an API error, a refusal (the API's refusal field, a
    content filter, or an apology without the expected answer) or a reply that does not parse gives the reason."""
    if reply.status != "ok":
        return Parsed(None, reply.reason or reply.status)
    if reply.refusal or reply.finish_reason == "content_filter":
        return Parsed(None, refusal_reason(reply.text, reply.refusal, reply.finish_reason) or "refusal")
    try:
        return Parsed(parser(reply.text))
    except ParseError as error:
        return Parsed(None, refusal_reason(reply.text) or f"unparseable reply: {error}")


@dataclass(frozen=True)
class PairwiseVerdict:
    label: str  # A, B, C (tie) or D (both bad), relative to the order the images were shown in
    explanation: str

    @property
    def outcome(self) -> str:
        return VERDICT_OUTCOMES[self.label]


def parse_pairwise(text: str) -> PairwiseVerdict:
    """The final ``[[A]]``/``[[B]]``/``[[C]]``/``[[D]]`` of a T1 reply, and the explanation before it."""
    matches = list(_VERDICT.finditer(text or ""))
    if not matches:
        raise ParseError(f"no final verdict [[A]], [[B]], [[C]] or [[D]] in the reply {_excerpt(text or '')}")
    last = matches[-1]
    return PairwiseVerdict(last.group(1).upper(), text[: last.start()].strip())


def parse_fit(text: str) -> int:
    """The 1 or 0 of a T2 fit reply ("Give me number 1 or 0 only")."""
    found = set(re.findall(r"(?<![\d.])([01])(?!\d|\.\d)", text or ""))
    if len(found) != 1:
        what = "both 1 and 0" if len(found) == 2 else "no 1 or 0"
        raise ParseError(f"expected the number 1 or 0, found {what} in the reply {_excerpt(text or '')}")
    return int(found.pop())


@dataclass(frozen=True)
class SemVarScore:
    relevance: float
    object_accuracy: float

    @property
    def score(self) -> float:
        """S(T, I) = (Relevance + Object Accuracy) / 100, in [0, 1]."""
        return (self.relevance + self.object_accuracy) / 100


def parse_semvar(text: str) -> SemVarScore:
    """Relevance and Object Accuracy (each 0-50) from the ``[[n]]`` of a T3 reply.

    The labelled forms ("Relevance ...: [[35]]", "Object Accuracy ...: [[30]]") win; otherwise the last two
    bracketed numbers, in that order.
    """
    text = text or ""
    labelled = {}
    for name, pattern in (("relevance", r"relevance"), ("object_accuracy", r"object\s+accuracy")):
        hits = re.findall(pattern + r"[^\[\n]{0,40}\[\[\s*(-?\d+(?:\.\d+)?)\s*\]\]", text, re.IGNORECASE)
        if hits:
            labelled[name] = float(hits[-1])
    if len(labelled) == 2:
        values = [labelled["relevance"], labelled["object_accuracy"]]
    else:
        numbers = [float(n) for n in _BRACKETED_NUMBER.findall(text)]
        if len(numbers) < 2:
            raise ParseError(f"expected two ratings [[n]] (Relevance, Object Accuracy), found {len(numbers)} "
                             f"in the reply {_excerpt(text)}")
        values = numbers[-2:]
    for value in values:
        if not 0 <= value <= 50:
            raise ParseError(f"rating {value:g} is outside 0-50 in the reply {_excerpt(text)}")
    return SemVarScore(*values)


def _first_json(text: str, opener: str, kind: type) -> Any:
    """The first JSON value of ``kind`` starting at an ``opener`` character in ``text``, or None. A candidate the
    decoder cannot read (malformed, nested too deeply, an integer of more than 4300 digits) is skipped."""
    start = text.find(opener)
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text, start)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as is the int-digits limit
            value = None
        if isinstance(value, kind):
            return value
        start = text.find(opener, start + 1)
    return None


def parse_json_object(text: str) -> dict:
    """The first JSON object in a reply (code fences and text around it are ignored); unreadable candidates are
    skipped like any non-JSON."""
    value = _first_json(text or "", "{", dict)
    if value is None:
        raise ParseError(f"expected a JSON object in the reply {_excerpt(text or '')}")
    return value


# --- T4 SANEval JSON replies -------------------------------------------------------------------------------------

class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ObjectsReply(_Reply):
    objects: list[str]


class AttributesReply(_Reply):
    attributes: dict[str, str]


Relation = Literal["left of", "right of", "above", "below", "next to", "on top of", "in front of", "behind"]


class SpatialReply(_Reply):
    subject: str | None = None
    relation: Relation | None = None
    object: str | None = None


class CountsReply(_Reply):
    counts: dict[str, int] = Field(default_factory=dict)


class SynonymsReply(_Reply):
    synonyms: dict[str, list[str]]


class RatingReply(_Reply):
    score: float = Field(ge=0.0, le=1.0)
    detected: str = ""


ReplyModel = TypeVar("ReplyModel", bound=BaseModel)


def parse_json_reply(text: str, schema: type[ReplyModel]) -> ReplyModel:
    """The first JSON object of ``text``, validated against ``schema``."""
    value = parse_json_object(text)
    try:
        return schema.model_validate(value)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors())
        raise ParseError(f"the JSON reply does not match {schema.__name__} ({problems}): {_excerpt(text)}") from None


# --- T4 SANEval, published protocol: the replies Appendix C's prompts ask for -------------------------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def parse_json_array(text: str) -> list:
    """The first JSON array in a reply (text and code fences around it are ignored)."""
    value = _first_json(text or "", "[", list)
    if value is None:
        raise ParseError(f"expected a JSON array in the reply {_excerpt(text or '')}")
    return value


def _name(value: Any, what: str, text: str) -> str:
    if not isinstance(value, str):
        raise ParseError(f"{what} must be a string, got {json.dumps(value)[:40]} in the reply {_excerpt(text)}")
    return " ".join(value.lower().split())


def parse_paper_objects(text: str) -> list[str]:
    """Prompt 1: a JSON array of object names (lowercase, singular), duplicates dropped in order."""
    return list(dict.fromkeys(name for name in (_name(v, "an object", text) for v in parse_json_array(text)) if name))


def parse_paper_spatial(text: str) -> tuple[str, str, str] | None:
    """Prompt 2: (obj1, relationship, obj2), or None for the empty object ``{}`` (no relation found)."""
    value = parse_json_object(text)
    if not value:
        return None
    missing = [key for key in ("obj1", "relationship", "obj2") if not value.get(key)]
    if missing:
        raise ParseError(f"the JSON reply lacks {', '.join(missing)}: {_excerpt(text)}")
    return (_name(value["obj1"], "obj1", text), _name(value["relationship"], "relationship", text),
            _name(value["obj2"], "obj2", text))


def parse_paper_attributes(text: str) -> dict[str, list[str]]:
    """Prompt 3: {object: [attributes]} (a single string counts as a one-item list; objects without any are left
    out, as the prompt says)."""
    result = {}
    for obj, attributes in parse_json_object(text).items():
        values = [attributes] if isinstance(attributes, str) else attributes
        if not isinstance(values, list):
            raise ParseError(f"the attributes of {obj!r} must be a list of strings: {_excerpt(text)}")
        names = [name for name in (_name(v, f"an attribute of {obj!r}", text) for v in values) if name]
        if names and _name(obj, "an object", text):
            result[_name(obj, "an object", text)] = names
    return result


def parse_paper_counts(text: str) -> dict[str, int]:
    """Prompt 4: the ``objects`` mapping {object: count} (positive whole numbers); ``numbers_found`` is not used."""
    value = parse_json_object(text)
    objects = value.get("objects", {})
    if not isinstance(objects, dict):
        raise ParseError(f"'objects' must be a JSON object of counts: {_excerpt(text)}")
    counts = {}
    for obj, count in objects.items():
        if isinstance(count, bool) or not isinstance(count, (int, float)) or count != int(count) or count < 1:
            raise ParseError(f"the count of {obj!r} must be a whole number of 1 or more, got {count!r}: "
                             f"{_excerpt(text)}")
        counts[_name(obj, "an object", text)] = int(count)
    return counts


def parse_paper_groups(text: str) -> dict[str, list[str]]:
    """Prompts 5 and 6: {standard term: [synonymous terms]}."""
    groups = {}
    for key, names in parse_json_object(text).items():
        if not isinstance(names, list):
            raise ParseError(f"the group {key!r} must be a list of names: {_excerpt(text)}")
        groups[_name(key, "a group name", text)] = [_name(n, f"a name in {key!r}", text) for n in names]
    return groups


def parse_paper_rating(text: str) -> float:
    """Prompt 8: "only a number between 0.0 and 1.0": the first number of the reply, clamped to [0, 1] as the
    authors' code does."""
    match = _NUMBER.search(text or "")
    if match is None:
        raise ParseError(f"expected a number between 0.0 and 1.0 in the reply {_excerpt(text)}")
    return min(1.0, max(0.0, float(match.group())))
