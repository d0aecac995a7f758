"""An admin's review of the human votes, per annotator and per rule: the flags each annotator's votes carry, and
one action that excludes or includes all of an annotator's votes, all the votes a quality rule flagged, or one vote,
with a reason, logged.

Restoring the ten votes a rule set aside took ten rounds of typing ids, and a spammer's 500 votes 500
(:func:`datamodel.quality.review_vote`); here each is one UPDATE in one transaction (a 500-vote spammer: a few
milliseconds on the demo database, ``python -m tools.admin_bench``). Votes are never deleted: an action sets
``excluded`` and marks the votes ``reviewed`` (the quality rules leave them alone from then on), keeping the rule's
reason after the admin's ("spam (was: more than 900 votes in an hour)"), and writes one row of ``admin_actions``
(:func:`datamodel.schema._admin_actions`).

Both kinds of human vote are reviewed here: pairwise votes (``votes``) and four-image votes (``kwise_votes``,
:mod:`datamodel.kwise`), whose ids are counted apart. An action on an annotator's or a rule's votes covers both kinds;
one vote is named by its kind and id (:func:`vote_reference`: ``pairwise 12``, or ``12``, is pairwise vote 12;
``four-image 12`` is four-image vote 12).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import pandas as pd

from datamodel.database import Database
from datamodel.dialect import pick, unixepoch_text
from datamodel.kwise import SLOTS, slot_models_sql
from datamodel.quality import BIAS, RATE, REPORTED, RULE_TITLES, SPEED
from datamodel.standing import reason_matches

RULES = (RATE, SPEED, BIAS)
MAX_REASON = 500  # characters of an admin's reason kept


class ReviewError(ValueError):
    """An action the admin cannot take as asked; the message says what to change. Nothing was written."""


@dataclass(frozen=True)
class ReviewResult:
    """What one action did: the votes it covered, those whose flag it changed, and the sentence the page shows."""

    matched: int
    changed: int
    message: str


PAIRWISE, FOUR_IMAGE = "pairwise", "four-image"  # the kinds of human vote an admin reviews
VOTE_TABLES = {PAIRWISE: ("votes", "voter_kind = 'human'"), FOUR_IMAGE: ("kwise_votes", "1 = 1")}  # (table, humans)

ANNOTATOR_FLAG_COLUMNS = ("annotator", "account", "votes", "counted", "median_seconds", "four_image",
                          "four_image_median_seconds", "rate_rule", "speed_rule", "bias_rule", "excluded_by_admin",
                          "included_by_admin", "noted_trusted", "last_vote")
ADMIN_ACTION_COLUMNS = ("acted_at", "action", "annotator", "rule", "vote_id", "vote_kind", "reason", "votes",
                        "changed")
FLAGGED_COLUMNS = ("vote_id", "kind", "voter", "outcome", "voted_at", "excluded", "reviewed", "reason", "models")


def _human_votes(db: Database) -> str:
    """SQL of every human vote of both kinds, one row each: id, kind, annotator_id, excluded, reviewed,
    excluded_reason, when (ISO text: a pairwise vote's ``created_at``, a four-image vote's ``voted_at``) and
    seconds_to_vote."""
    return (f"SELECT id, '{PAIRWISE}' AS kind, annotator_id, excluded, reviewed, excluded_reason, created_at AS at, "
            "seconds_to_vote FROM votes WHERE voter_kind = 'human' UNION ALL "
            f"SELECT id, '{FOUR_IMAGE}', annotator_id, excluded, reviewed, excluded_reason, "
            f"{unixepoch_text(db, 'voted_at')}, seconds_to_vote FROM kwise_votes")


def annotator_flags(db: Database) -> pd.DataFrame:
    """One row per annotator (:data:`ANNOTATOR_FLAG_COLUMNS`), most votes first: their votes cast and counted (both
    kinds), the median seconds per pairwise vote, their four-image votes among them and the median seconds per
    four-image vote (looking at four images takes longer), the votes each quality rule set aside (unreviewed), those
    an admin excluded or included, those noted for a trusted account and the last vote: what the admin decides on.
    One grouped query over the votes."""
    sums, params = [], []
    for rule in RULES:
        condition, words = reason_matches(rule)
        sums.append("COUNT(v.id) FILTER (WHERE v.excluded = 1 AND v.reviewed = 0 AND "
                    f"{condition.replace('excluded_reason', 'v.excluded_reason')})")
        params += words
    rows = db.execute(
        "SELECT a.name, a.source, COUNT(v.id), COUNT(v.id) FILTER (WHERE v.excluded = 0), "
        f"COUNT(v.id) FILTER (WHERE v.kind = '{FOUR_IMAGE}'), " + ", ".join(sums) +
        ", COUNT(v.id) FILTER (WHERE v.excluded = 1 AND v.reviewed = 1), "  # COUNT ... FILTER: both engines
        "COUNT(v.id) FILTER (WHERE v.excluded = 0 AND v.reviewed = 1), "
        "COUNT(v.id) FILTER (WHERE v.excluded = 0 AND v.reviewed = 0 AND v.excluded_reason LIKE ?), MAX(v.at) "
        f"FROM annotators a LEFT JOIN ({_human_votes(db)}) v ON v.annotator_id = a.id "
        "GROUP BY a.id ORDER BY COUNT(v.id) DESC, a.name", [*params, REPORTED + "%"]).fetchall()
    frame = pd.DataFrame(rows, columns=[name for name in ANNOTATOR_FLAG_COLUMNS
                                        if name not in ("median_seconds", "four_image_median_seconds")])
    seconds = pd.DataFrame(db.execute(f"SELECT a.name, v.kind, v.seconds_to_vote FROM ({_human_votes(db)}) v "
                                      "JOIN annotators a ON a.id = v.annotator_id").fetchall(),
                           columns=["annotator", "kind", "seconds"])
    for column, kind in (("median_seconds", PAIRWISE), ("four_image_median_seconds", FOUR_IMAGE)):
        medians = seconds[seconds["kind"] == kind].groupby("annotator")["seconds"].median()
        frame.insert(ANNOTATOR_FLAG_COLUMNS.index(column), column, frame["annotator"].map(medians).round(1))
    return frame


def flagged_votes(db: Database, limit: int = 500) -> pd.DataFrame:
    """The human votes of both kinds the rules flagged (excluded, or reported for a trusted account) or an admin
    reviewed, newest first, at most ``limit`` (:data:`FLAGGED_COLUMNS`): the vote's id and kind, the voter, the
    outcome (a pairwise vote's A | B | tie | both_bad; a four-image vote's best and worst slots with their models),
    when (ISO text, UTC), the flags, the reason and the models (A's vs B's; the four slots'). The models are shown
    because the vote was cast: the admin sees what was picked over what."""
    flagged = "(v.excluded = 1 OR v.reviewed = 1 OR v.excluded_reason != '')"
    pairwise = db.execute(
        f"SELECT v.id, v.voter, v.outcome, ml.name || ' vs ' || mr.name, v.created_at, v.excluded, v.reviewed, "
        f"v.excluded_reason FROM votes v LEFT JOIN models ml ON ml.id = v.left_model_id LEFT JOIN models mr ON "
        f"mr.id = v.right_model_id WHERE {flagged} ORDER BY v.created_at DESC, v.id DESC LIMIT ?", [limit]).fetchall()
    names, joins = slot_models_sql(names=True)
    four = db.execute(
        f"SELECT v.id, a.name, v.best, v.worst, {names}, {unixepoch_text(db, 'v.voted_at')}, v.excluded, "
        f"v.reviewed, v.excluded_reason FROM kwise_votes v JOIN kwise_battles b ON b.id = v.battle_id "
        f"JOIN annotators a ON a.id = v.annotator_id {joins} WHERE {flagged} "
        "ORDER BY v.voted_at DESC, v.id DESC LIMIT ?", [limit]).fetchall()
    rows = [(vote_id, PAIRWISE, voter, outcome, at, excluded, reviewed, reason, models)
            for vote_id, voter, outcome, models, at, excluded, reviewed, reason in pairwise]
    for vote_id, voter, best, worst, *models, at, excluded, reviewed, reason in four:
        outcome = f"best {best} ({models[best - 1]})" + ("" if worst is None else
                                                        f", worst {worst} ({models[worst - 1]})")
        shown = ", ".join(f"{slot} {name}" for slot, name in zip(SLOTS, models))
        rows.append((vote_id, FOUR_IMAGE, voter, outcome, at, excluded, reviewed, reason, shown))
    rows.sort(key=lambda row: (row[4] or "", row[0]), reverse=True)
    return pd.DataFrame(rows[:limit], columns=list(FLAGGED_COLUMNS))


def vote_reference(value) -> tuple[str, int]:
    """(kind, id) of one vote as the admin names it: its number (a pairwise vote: ``12``, or 12.0 from an API caller)
    or its kind and number (``pairwise 12``, ``four-image 12``), as the flagged votes' Vote column shows it.
    :class:`ReviewError` in words for anything else."""
    if value is None or not str(value).strip():
        raise ReviewError("Enter the id of a vote from the flagged votes table (or click its row).")
    kind, number = PAIRWISE, value
    if isinstance(value, str):
        named = re.fullmatch(rf"\s*(?:({PAIRWISE}|{FOUR_IMAGE})\s+)?(\S+)\s*", value, re.IGNORECASE)
        if named:
            kind, number = (named[1] or PAIRWISE).lower(), named[2]
    try:
        whole = float(number)
    except (TypeError, ValueError):
        whole = float("nan")
    if not whole.is_integer():
        raise ReviewError(f"{str(value)[:40]!r} is not a vote id: type what the Vote column shows (a pairwise vote's "
                          f"number, or {FOUR_IMAGE!r} and the number of a four-image vote).")
    return kind, int(whole)


def vote_label(kind: str, vote_id: int) -> str:
    """The reference of one vote as the tables show it and :func:`vote_reference` reads it: its kind and id
    (``pairwise 12``, ``four-image 12``)."""
    return f"{kind} {vote_id}"


def _scope(db, *, annotator: str | None, rule: str | None, vote_id: int | None,
           vote_kind: str) -> tuple[dict[str, tuple[str, list]], str]:
    """({kind: (SQL condition on its table, its parameters)}, the words for the page) of an action's votes."""
    if vote_id is not None:
        if annotator or rule:
            raise ReviewError("Review one vote by its id, or votes by annotator and rule, not both: clear the vote id "
                              "or the annotator and rule.")
        if vote_kind not in VOTE_TABLES:
            raise ReviewError(f"Unknown kind of vote {vote_kind!r}: {PAIRWISE} or {FOUR_IMAGE}.")
        return {vote_kind: ("id = ?", [vote_id])}, f"{'' if vote_kind == PAIRWISE else vote_kind + ' '}vote {vote_id}"
    if not annotator and not rule:
        raise ReviewError("Choose an annotator or a rule (or both) whose votes to review, or give a vote id.")
    clauses, params, words = [], [], []
    if rule:
        if rule not in RULES:
            raise ReviewError(f"Unknown rule {rule!r}: choose one of {', '.join(RULES)}.")
        condition, rule_params = reason_matches(rule)
        clauses.append(condition)
        params += rule_params
        words.append(f"the {rule} rule flagged ({RULE_TITLES[rule]})")
    if annotator:
        row = db.execute("SELECT id FROM annotators WHERE name = ?", [annotator]).fetchone()
        if row is None:
            raise ReviewError(f"No annotator named {annotator!r}: pick one from the annotators table.")
        clauses.append("annotator_id = ?")
        params.append(row[0])
    who = f" of {annotator}" if annotator else ""
    what = f"the votes{who} {words[0]}" if words else f"every vote{who}"
    return {kind: (" AND ".join([humans, *clauses]), params) for kind, (_, humans) in VOTE_TABLES.items()}, what


def review_votes(db: Database, *, exclude: bool, reason: str, annotator: str | None = None,
                 rule: str | None = None, vote_id: int | None = None, vote_kind: str = PAIRWISE,
                 now: float | None = None) -> ReviewResult:
    """Exclude (``exclude``) or include every vote of ``annotator``, every vote the quality ``rule`` flagged (of
    that annotator, if given), pairwise and four-image alike, or the one vote ``vote_id`` of ``vote_kind``
    (:data:`PAIRWISE` or :data:`FOUR_IMAGE`), with the admin's ``reason``: one transaction, one ``admin_actions``
    row. The votes become ``reviewed`` (final: the rules leave them alone); each keeps the rule's reason after the
    admin's. Raises :class:`ReviewError` (nothing written) for an empty reason, an unknown annotator, rule or vote,
    or an action that covers no vote.

    A server's sampler counts only non-excluded votes: the admin tab has it read them again afterwards
    (:meth:`sampling.sampler.SamplingStats.reload`; the four-image sampler follows the flags it changes through
    ``kwise_vote_changes``, :class:`sampling.kwise_stats.KwiseStats`)."""
    reason = " ".join(str(reason or "").split())[:MAX_REASON]
    if not reason:
        raise ReviewError("Give a reason for the action (it is kept with every vote it changes and in the log of "
                          "actions).")
    now = time.time() if now is None else now
    with db.conn:
        scopes, what = _scope(db, annotator=annotator, rule=rule, vote_id=vote_id, vote_kind=vote_kind)
        counts = {kind: db.execute(f"SELECT COUNT(*), COUNT(*) FILTER (WHERE excluded != ?) FROM "
                                   f"{VOTE_TABLES[kind][0]} WHERE {condition}", [int(exclude), *params]).fetchone()
                  for kind, (condition, params) in scopes.items()}
        matched, changed = (sum(count[i] for count in counts.values()) for i in (0, 1))
        if not matched:
            if vote_id is not None:
                raise ReviewError(f"No {'' if vote_kind == PAIRWISE else vote_kind + ' '}vote with id {vote_id}. "
                                  "Copy the id from the flagged votes table.")
            raise ReviewError(f"No votes to review: {what} are none. Pick another annotator or rule.")
        for kind, (condition, params) in scopes.items():
            db.execute(f"UPDATE {VOTE_TABLES[kind][0]} SET excluded = ?, reviewed = 1, excluded_reason = ? || CASE "
                       f"WHEN excluded_reason = '' THEN '' ELSE ' (was: ' || excluded_reason || ')' END WHERE "
                       f"{condition}", [int(exclude), f"{'excluded' if exclude else 'included'} by an admin: {reason}",
                                        *params])
        db.execute("INSERT INTO admin_actions (acted_at, action, annotator, rule, vote_id, vote_kind, reason, votes, "
                   "changed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [now, "exclude" if exclude else "include", annotator or "", rule or "", vote_id,
                    "" if vote_id is None else vote_kind, reason, matched, changed])
    verb = "Excluded" if exclude else "Included"
    unchanged = matched - changed
    already = f" ({unchanged} already {'excluded' if exclude else 'counted'})" if unchanged else ""
    return ReviewResult(matched, changed, f"{verb} {_counted(matched, counts, single=vote_id is not None)}: {what}"
                                          f"{already}. Reason: {reason}.")


def _counted(matched: int, counts: dict[str, tuple[int, int]], *, single: bool) -> str:
    """"24 votes", "10 four-image votes" (all of one action's votes four-image) or "13 votes (3 pairwise, 10
    four-image)"."""
    noun = f"vote{'s' if matched != 1 else ''}"
    four = counts.get(FOUR_IMAGE, (0, 0))[0]
    if single or not four:
        return f"{matched:,} {noun}"
    if four == matched:
        return f"{matched:,} {FOUR_IMAGE} {noun}"
    return f"{matched:,} {noun} ({matched - four:,} {PAIRWISE}, {four:,} {FOUR_IMAGE})"


def admin_actions(db: Database, limit: int = 50) -> pd.DataFrame:
    """The latest admin actions (:data:`ADMIN_ACTION_COLUMNS`), newest first: when (UTC, as text), what, whose votes,
    which rule, or which one vote and its kind, the reason, votes covered and changed."""
    when = pick(db, sqlite="strftime('%Y-%m-%d %H:%M:%S', acted_at, 'unixepoch')",
                postgresql="to_char(to_timestamp(acted_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')")
    rows = db.execute(f"SELECT {when}, action, annotator, rule, vote_id, vote_kind, reason, votes, changed "
                      "FROM admin_actions ORDER BY id DESC LIMIT ?", [limit]).fetchall()
    return pd.DataFrame(rows, columns=list(ADMIN_ACTION_COLUMNS))
