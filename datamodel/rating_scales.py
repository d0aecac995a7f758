"""Answer scales of the human rating tasks: what one answer may be, and its value on [0, 1].

A rating task (:mod:`judges.rating_tasks`) asks one question about one image; its scale says which answers are
allowed and how an answer becomes a number the statistics use:

- :class:`ChoiceScale`: one of a few points, each with a value, a label and a key (Commonsense-T2I's fit 1 / 0, a
  Likert scale). ``value = (v − min) / (max − min)``: fit 1 → 1.0, 0 → 0.0; Likert 1..5 → 0, 0.25, …, 1.
- :class:`ScoresScale`: several whole-number scores on one range, answered together (SemVarBench's Object Accuracy
  and Relevance, 0–50 each). ``value = Σ scores / (number of scores · high)``: the SemVarBench alignment score
  S(T, I) = (Relevance + Object Accuracy) / 100 for two scores of 0–50.

An answer is a mapping {name: whole number} (the web page sends it as JSON text). Anything else, a missing or extra
name, a fraction, a value off the scale, is refused with :class:`RatingRejected`, whose message says what is allowed;
nothing is stored (:func:`datamodel.human_ratings.record_rating` checks before it writes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import Any


class RatingRejected(ValueError):
    """The answer was refused and nothing was written; the message tells the rater what to do."""


@dataclass(frozen=True)
class Point:
    """One answer of a :class:`ChoiceScale`: its stored ``value``, the ``label`` shown and the ``key`` that picks it."""

    value: int
    label: str
    key: str


@dataclass(frozen=True)
class ChoiceScale:
    """One answer out of ``points``, stored under ``name``; ``level`` is its level of measurement for Krippendorff's
    α (``nominal`` for fit, ``ordinal`` for a Likert scale)."""

    name: str
    points: tuple[Point, ...]
    level: str = "nominal"
    kind = "choice"

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(point.value for point in self.points)

    def parse(self, answer: Any) -> dict[str, int]:
        """The answer as {name: value}, or :class:`RatingRejected`."""
        given = _mapping(answer, (self.name,))
        value = given[self.name]
        if not _whole(value) or int(value) not in self.values:
            allowed = ", ".join(p.label if p.label.startswith(str(p.value)) else f"{p.label} ({p.value})"
                                for p in self.points)
            raise RatingRejected(f"{_shown(value)} is not on this question's scale: answer one of {allowed}.")
        return {self.name: int(value)}

    def value(self, parsed: Mapping[str, int]) -> float:
        """The answer on [0, 1] (module docstring)."""
        low, high = min(self.values), max(self.values)
        return (parsed[self.name] - low) / (high - low)

    def label(self, parsed: Mapping[str, int]) -> str:
        """How the answer reads: the point's label."""
        return next(p.label for p in self.points if p.value == parsed[self.name])


@dataclass(frozen=True)
class Score:
    """One score of a :class:`ScoresScale`: stored ``name``, the ``label`` shown and what it rates (``help``)."""

    name: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class ScoresScale:
    """Several whole-number scores from ``low`` to ``high``, answered together. ``anchors`` are the values the page
    offers with their meaning (value, label); every whole number in the range is accepted."""

    scores: tuple[Score, ...]
    low: int = 0
    high: int = 50
    anchors: Mapping[str, tuple[tuple[int, str], ...]] | None = None  # per score name
    level = "interval"
    kind = "scores"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(score.name for score in self.scores)

    def parse(self, answer: Any) -> dict[str, int]:
        given = _mapping(answer, self.names, {score.name: score.label for score in self.scores})
        parsed = {}
        for score in self.scores:
            value = given[score.name]
            if not _whole(value) or not self.low <= int(value) <= self.high:
                raise RatingRejected(f"{score.label} {_shown(value)} is off the scale: give a whole number from "
                                     f"{self.low} to {self.high}.")
            parsed[score.name] = int(value)
        return parsed

    def value(self, parsed: Mapping[str, int]) -> float:
        return sum(parsed[name] for name in self.names) / (len(self.names) * self.high)

    def label(self, parsed: Mapping[str, int]) -> str:
        return ", ".join(f"{score.label} {parsed[score.name]}" for score in self.scores)


Scale = ChoiceScale | ScoresScale


MAX_DIGITS = 20  # digits of an answer given as text: every scale's points have one or two


def _whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, Integral):
        return True
    if isinstance(value, float) and value.is_integer():
        return True
    text = value.strip() if isinstance(value, str) else ""
    return 0 < len(text) <= MAX_DIGITS and text.lstrip("-").isdigit()  # a 5,000-digit text could not become an int


def _shown(value: Any) -> str:
    try:
        return repr(value)[:40]
    except ValueError:  # an integer longer than Python will write out
        return "a number too long to be an answer"


def _mapping(answer: Any, names: tuple[str, ...], labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``answer`` (a mapping or its JSON text) with exactly ``names`` (shown as ``labels`` in messages); a bare value
    answers a one-name scale."""
    labels = labels or {}
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except ValueError:
            raise RatingRejected(f"The answer {_shown(answer)} could not be read: answer with the buttons on the "
                                 "page.") from None
    if not isinstance(answer, Mapping):
        if len(names) == 1:
            answer = {names[0]: answer}
        else:
            raise RatingRejected(f"Answer every score: {', '.join(labels.get(n, n) for n in names)}.")
    missing = [name for name in names if answer.get(name) in (None, "")]
    extra = sorted(str(name) for name in answer if name not in names)
    if missing:
        raise RatingRejected(f"Give {' and '.join(labels.get(n, n) for n in missing)} before sending the answer.")
    if extra:
        raise RatingRejected(f"This question has no {', '.join(extra)}: answer "
                             f"{', '.join(labels.get(n, n) for n in names)} only.")
    return dict(answer)
