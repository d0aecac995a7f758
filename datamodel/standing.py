"""An annotator's standing: the votes they cast, those that count, why the others do not, and how near they are to
a quality rule's cap (:mod:`datamodel.quality`).

The arena page shows it after every vote so that nothing a voter does is discarded silently: "40 votes cast, 30
count", why the 10 others are set aside, and a warning before the next vote would be (:mod:`arena.web.render`). Two
small queries on the annotator's own votes (index ``votes_annotator``), whatever the size of the arena.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from datamodel.database import Database
from datamodel.quality import BIAS, RATE, RULE_WORDS, SPEED, QualityRules

ADMIN = "admin"  # excluded by an admin's review rather than by a rule


def reason_matches(rule: str) -> tuple[str, list[str]]:
    """SQL condition (on ``excluded_reason``) and its parameters: a vote's reason names ``rule`` (its fixed words,
    :data:`datamodel.quality.RULE_WORDS`); an admin's note keeps the rule's words after "was:"."""
    words = RULE_WORDS[rule]
    return "(" + " OR ".join("excluded_reason LIKE ?" for _ in words) + ")", [f"%{word}%" for word in words]


@dataclass(frozen=True)
class Standing:
    """One annotator's votes as the page tells them (:func:`standing`)."""

    cast: int = 0  # every vote they cast
    counted: int = 0  # those not excluded: the ones the leaderboard counts
    set_aside: dict[str, int] = field(default_factory=dict)  # excluded votes per rule (or ADMIN), most first
    last_hour: int = 0  # votes within the hour before ``now``: the next vote is number last_hour + 1 in its hour
    last_3_hours: int = 0
    hour_frees_at: float | None = None  # at the hourly cap: when the next vote will count again (unix time)
    three_hours_free_at: float | None = None
    side: tuple[str, int] = ("", 0)  # the screen side they pick most often and how many times
    model: tuple[str, int] = ("", 0)  # the model they pick most often and how many times
    now: float = 0.0

    @property
    def excluded(self) -> int:
        return self.cast - self.counted


def standing(db: Database, annotator_id: int, rules: QualityRules = QualityRules(), *,
             now: float | None = None) -> Standing:
    """The standing of ``annotator_id`` at ``now`` (default: the clock) under ``rules``."""
    now = time.time() if now is None else now
    hour, three = now - 3600, now - 3 * 3600
    rule_sums, rule_words = _set_aside_sums()
    row = db.execute(
        "SELECT COUNT(*), COUNT(*) FILTER (WHERE excluded = 0), COUNT(*) FILTER (WHERE voted_at >= ?), "  # both engines
        "COUNT(*) FILTER (WHERE voted_at >= ?), COUNT(*) FILTER (WHERE outcome = 'A'), "
        f"COUNT(*) FILTER (WHERE outcome = 'B'), {rule_sums} FROM votes WHERE annotator_id = ?",
        [hour, three, *rule_words, annotator_id]).fetchone()
    cast, counted, last_hour, last_3_hours, side_a, side_b, *by_rule = row
    if cast == 0:
        return Standing(now=now)
    top = db.execute(
        "SELECT m.name, COUNT(*) FROM votes v JOIN models m ON m.id = CASE v.outcome WHEN 'A' THEN v.left_model_id "
        "ELSE v.right_model_id END WHERE v.annotator_id = ? AND v.outcome IN ('A', 'B') GROUP BY m.id "
        "ORDER BY COUNT(*) DESC, m.name LIMIT 1", [annotator_id]).fetchone()
    return Standing(
        cast=cast, counted=counted, set_aside=_set_aside(by_rule), last_hour=last_hour, last_3_hours=last_3_hours,
        hour_frees_at=_frees_at(db, annotator_id, hour, last_hour, rules.max_per_hour, 3600),
        three_hours_free_at=_frees_at(db, annotator_id, three, last_3_hours, rules.max_per_3_hours, 3 * 3600),
        side=("A", side_a) if side_a >= side_b else ("B", side_b), model=tuple(top) if top else ("", 0), now=now)


def four_image_standing(db: Database, annotator_id: int) -> Standing:
    """The four-image votes of ``annotator_id`` (``kwise_votes``) as :class:`Standing` tells them: cast, those that
    count, and those set aside per rule (:func:`datamodel.quality.update_four_image_flags` flags them) or by an admin
    (:func:`datamodel.reviews.review_votes`), as :func:`standing` counts pairwise votes; the four-image page's status
    line. The caps' counts and the side and model picked most are left at 0: the page does not warn about them."""
    rule_sums, rule_words = _set_aside_sums()
    cast, counted, *by_rule = db.execute(
        f"SELECT COUNT(*), COUNT(*) FILTER (WHERE excluded = 0), {rule_sums} FROM kwise_votes WHERE annotator_id = ?",
        [*rule_words, annotator_id]).fetchone()
    return Standing(cast=cast, counted=counted, set_aside=_set_aside(by_rule))


_RULES = (RATE, SPEED, BIAS)


def _set_aside_sums() -> tuple[str, list]:
    """The SELECT columns that count a vote table's excluded votes per rule of :data:`_RULES` (the reason's words,
    votes no admin reviewed), then those an admin excluded; and their parameters."""
    sums, words = [], []
    for rule in _RULES:
        condition, matched = reason_matches(rule)
        sums.append(f"COUNT(*) FILTER (WHERE excluded = 1 AND reviewed = 0 AND {condition})")
        words += matched
    return ", ".join([*sums, "COUNT(*) FILTER (WHERE excluded = 1 AND reviewed = 1)"]), words


def _set_aside(counts) -> dict[str, int]:
    """{rule or ADMIN: excluded votes}, most first, of the counts :func:`_set_aside_sums` selected (none at 0)."""
    set_aside = {name: n for name, n in zip((*_RULES, ADMIN), counts) if n}
    return dict(sorted(set_aside.items(), key=lambda item: -item[1]))


def _frees_at(db, annotator_id: int, since: float, votes: int, cap: int, span: float) -> float | None:
    """When a vote will count again under a cap of ``cap`` votes per ``span`` seconds, for an annotator with
    ``votes`` votes since ``since``: once the oldest of them that keeps the window full is ``span`` old. None while
    the next vote still counts."""
    if votes < cap:
        return None
    row = db.execute("SELECT voted_at FROM votes WHERE annotator_id = ? AND voted_at >= ? ORDER BY voted_at "
                     "LIMIT 1 OFFSET ?", [annotator_id, since, votes - cap]).fetchone()
    return row[0] + span if row else None


def cap_margin(cap: int) -> int:
    """How many votes before a cap the page starts to warn: a tenth of it, at least 3."""
    return max(3, -(-cap // 10))
