"""An admin's review of the human votes, per annotator and per rule: the flags each annotator's votes carry, and
one action that excludes or includes all of an annotator's votes, all the votes a quality rule flagged, or one vote,
with a reason, logged.

Restoring the ten votes a rule set aside took ten rounds of typing ids, and a spammer's 500 votes 500
(:func:`datamodel.quality.review_vote`); here each is one UPDATE in one transaction (a 500-vote spammer: a few
milliseconds on the demo database, ``python -m tools.admin_bench``). Votes are never deleted: an action sets
``excluded`` and marks the votes ``reviewed`` (the quality rules leave them alone from then on), keeping the rule's
reason after the admin's ("spam (was: more than 900 votes in an hour)"), and writes one row of ``admin_actions``
(:func:`datamodel.schema._admin_actions`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd

from datamodel.database import Database
from datamodel.dialect import pick

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


ANNOTATOR_FLAG_COLUMNS = ("annotator", "account", "votes", "counted", "median_seconds", "rate_rule", "speed_rule",
                          "bias_rule", "excluded_by_admin", "included_by_admin", "noted_trusted", "last_vote")
ADMIN_ACTION_COLUMNS = ("acted_at", "action", "annotator", "rule", "vote_id", "reason", "votes", "changed")


def annotator_flags(db: Database) -> pd.DataFrame:
    """One row per annotator (:data:`ANNOTATOR_FLAG_COLUMNS`), most votes first: their votes cast and counted, the
    median seconds to vote, those each quality rule set aside (unreviewed), those an admin excluded or included, those
    noted for a trusted account and the last vote: what the admin decides on. One grouped query over the votes."""
    sums, params = [], []
    for rule in RULES:
        condition, words = reason_matches(rule)
        sums.append("COUNT(v.id) FILTER (WHERE v.excluded = 1 AND v.reviewed = 0 AND "
                    f"{condition.replace('excluded_reason', 'v.excluded_reason')})")
        params += words
    rows = db.execute(
        "SELECT a.name, a.source, COUNT(v.id), COUNT(v.id) FILTER (WHERE v.excluded = 0), " + ", ".join(sums) +
        ", COUNT(v.id) FILTER (WHERE v.excluded = 1 AND v.reviewed = 1), "  # COUNT ... FILTER: both engines
        "COUNT(v.id) FILTER (WHERE v.excluded = 0 AND v.reviewed = 1), "
        "COUNT(v.id) FILTER (WHERE v.excluded = 0 AND v.reviewed = 0 AND v.excluded_reason LIKE ?), MAX(v.created_at) "
        "FROM annotators a LEFT JOIN votes v ON v.annotator_id = a.id AND v.voter_kind = 'human' "
        "GROUP BY a.id ORDER BY COUNT(v.id) DESC, a.name", [*params, REPORTED + "%"]).fetchall()
    frame = pd.DataFrame(rows, columns=[name for name in ANNOTATOR_FLAG_COLUMNS if name != "median_seconds"])
    seconds = pd.DataFrame(db.execute("SELECT a.name, v.seconds_to_vote FROM votes v JOIN annotators a ON "
                                      "a.id = v.annotator_id WHERE v.voter_kind = 'human'").fetchall(),
                           columns=["annotator", "seconds"])
    medians = seconds.groupby("annotator")["seconds"].median()
    frame.insert(ANNOTATOR_FLAG_COLUMNS.index("median_seconds"), "median_seconds",
                 frame["annotator"].map(medians).round(1))
    return frame


def _scope(db, *, annotator: str | None, rule: str | None, vote_id: int | None) -> tuple[str, list, str]:
    """(SQL condition on votes, its parameters, the words for the page) of an action's votes."""
    if vote_id is not None:
        if annotator or rule:
            raise ReviewError("Review one vote by its id, or votes by annotator and rule, not both: clear the vote id "
                              "or the annotator and rule.")
        return "id = ?", [vote_id], f"vote {vote_id}"
    if not annotator and not rule:
        raise ReviewError("Choose an annotator or a rule (or both) whose votes to review, or give a vote id.")
    clauses, params, words = ["voter_kind = 'human'"], [], []
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
    return " AND ".join(clauses), params, what


def review_votes(db: Database, *, exclude: bool, reason: str, annotator: str | None = None,
                 rule: str | None = None, vote_id: int | None = None, now: float | None = None) -> ReviewResult:
    """Exclude (``exclude``) or include every vote of ``annotator``, every vote the quality ``rule`` flagged (of
    that annotator, if given), or the one vote ``vote_id``, with the admin's ``reason``: one transaction, one
    ``admin_actions`` row. The votes become ``reviewed`` (final: the rules leave them alone); each keeps the rule's
    reason after the admin's. Raises :class:`ReviewError` (nothing written) for an empty reason, an unknown
    annotator, rule or vote, or an action that covers no vote.

    A server's sampler counts only non-excluded votes: the admin tab has it read them again afterwards
    (:meth:`sampling.sampler.SamplingStats.reload`)."""
    reason = " ".join(str(reason or "").split())[:MAX_REASON]
    if not reason:
        raise ReviewError("Give a reason for the action (it is kept with every vote it changes and in the log of "
                          "actions).")
    now = time.time() if now is None else now
    with db.conn:
        condition, params, what = _scope(db, annotator=annotator, rule=rule, vote_id=vote_id)
        matched, changed = db.execute(f"SELECT COUNT(*), COUNT(*) FILTER (WHERE excluded != ?) FROM votes WHERE {condition}",
                                      [int(exclude), *params]).fetchone()
        if not matched:
            if vote_id is not None:
                raise ReviewError(f"No vote with id {vote_id}. Copy the id from the flagged votes table.")
            raise ReviewError(f"No votes to review: {what} are none. Pick another annotator or rule.")
        db.execute(f"UPDATE votes SET excluded = ?, reviewed = 1, excluded_reason = ? || CASE WHEN excluded_reason = "
                   f"'' THEN '' ELSE ' (was: ' || excluded_reason || ')' END WHERE {condition}",
                   [int(exclude), f"{'excluded' if exclude else 'included'} by an admin: {reason}", *params])
        db.execute("INSERT INTO admin_actions (acted_at, action, annotator, rule, vote_id, reason, votes, changed) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [now, "exclude" if exclude else "include", annotator or "", rule or "", vote_id, reason, matched,
                    changed])
    verb = "Excluded" if exclude else "Included"
    unchanged = matched - changed
    already = f" ({unchanged} already {'excluded' if exclude else 'counted'})" if unchanged else ""
    return ReviewResult(matched, changed, f"{verb} {matched:,} vote{'s' if matched != 1 else ''}: {what}{already}. "
                                          f"Reason: {reason}.")


def admin_actions(db: Database, limit: int = 50) -> pd.DataFrame:
    """The latest admin actions (:data:`ADMIN_ACTION_COLUMNS`), newest first: when (UTC, as text), what, whose votes,
    which rule, the reason, votes covered and changed."""
    when = pick(db, sqlite="strftime('%Y-%m-%d %H:%M:%S', acted_at, 'unixepoch')",
                postgresql="to_char(to_timestamp(acted_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')")
    rows = db.execute(f"SELECT {when}, action, annotator, rule, "
                      "vote_id, reason, votes, changed FROM admin_actions ORDER BY id DESC LIMIT ?", [limit]).fetchall()
    return pd.DataFrame(rows, columns=list(ADMIN_ACTION_COLUMNS))
