"""Reading judge replies (pure functions; no I/O).

Every parser returns the parsed value or raises :class:`ParseError` with a message that says what was expected; the
judges store that message as the reason of a failed judgment. :func:`refusal_reason` tells a refusal from a reply
that merely does not parse.

- T1 pairwise: the final ``[[A]]``, ``[[B]]``, ``[[C]]`` (tie) or ``[[D]]`` (both bad); the text before it is the
  explanation.
- T2 fit: the number 1 or 0.
- T3 SemVarBench: two ``[[n]]`` scores 0-50 (Relevance, Object Accuracy); S(T, I) = (relevance + accuracy) / 100.
- T4 SANEval: JSON objects, validated against the pydantic models below.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Generic, Literal, TypeVar

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


def parse_json_object(text: str) -> dict:
    """The first JSON object in a reply (code fences and text around it are ignored). A candidate the decoder
    cannot read (malformed, nested too deeply, an integer of more than 4300 digits) is skipped like any non-JSON."""
    text = text or ""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(text, start)
        except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as is the int-digits limit
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ParseError(f"expected a JSON object in the reply {_excerpt(text)}")


# --- T4 SANEval JSON replies -------------------------------------------------------------------------------------

class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ObjectsReply(_Reply):
    objects: list[str]


class AttributesReply(_Reply):
    attributes: dict[str, str]


Relation = Literal["left of", "right of", "above", "below"]


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
