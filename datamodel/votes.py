"""The vote rules, enforced on the server.

A battle takes exactly one vote, only from the session it was served to, and only one of the four outcomes
(``A``, ``B``, ``tie``, ``both_bad``, relative to the displayed positions). Anything else is refused with a
:class:`VoteRejected` whose message tells the voter what to do, and writes nothing. The check and the insert run in
one write transaction (SQLite's ``BEGIN IMMEDIATE``; on PostgreSQL the unique vote per battle is also a constraint), so
two concurrent votes on one battle cannot both pass, from one server or several; once :func:`record_vote` returns, the
vote is committed (durable as the database's ``synchronous`` setting allows).
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass

from datamodel.connection import database_errors, is_unique_violation
from datamodel.database import Database
from datamodel.dialect import is_postgres
from datamodel.quality import QualityRules, update_flags_with_reasons
from datamodel.schema import OUTCOMES

OUTCOME_LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both are bad"}


class VoteRejected(ValueError):
    """The vote was refused and nothing was written."""


@dataclass(frozen=True)
class VoteReceipt:
    vote_id: int
    battle_id: str
    outcome: str
    model_a: str  # shown on the left
    model_b: str  # shown on the right
    seconds_to_vote: float
    flag_changes: tuple[tuple[int, int], ...] = ()  # (vote id, excluded now) of the votes whose flag the rules flipped
    data_version: int | None = None  # SQLite: the ``votes`` counter of ``data_versions`` with this vote counted
    # (PostgreSQL raises it at the commit: None)
    excluded: bool = False  # the quality rules set this vote aside (it does not count)
    reason: str = ""  # why it is excluded, or noted for the admin (a trusted account's vote that still counts)


def record_vote(
    db: Database, battle_id: str, outcome: str, *, session_id: str, now: float | None = None,
    shown_at: float | None = None, rules: QualityRules | None = QualityRules(), expected_shown: bool | None = None,
) -> VoteReceipt:
    """Store the vote on ``battle_id`` from ``session_id`` and reveal the two models.

    A human vote is checked against the quality ``rules`` (:mod:`datamodel.quality`) in the same transaction: a vote
    that breaks one is stored, flagged ``excluded`` with the reason, which the receipt carries (the page says why the
    vote does not count). ``rules=None`` skips the check. The receipt lists the votes (this one included) whose
    ``excluded`` flag the rules flipped (a server's sampler counts them: :meth:`sampling.sampler.SamplingStats.
    note_vote`). On PostgreSQL, a concurrent vote on the battle that committed first is refused here too, by the
    unique constraint.
    ``seconds_to_vote`` counts from ``shown_at`` (when the page showed the battle), else from when it was served.
    ``expected_shown`` (whether the page showed the prompt's expected outcome; None: unknown, a judge) is stored.
    """
    if outcome not in OUTCOMES:
        raise VoteRejected(f"Unknown outcome {outcome!r}: vote with one of {', '.join(OUTCOMES)}.")
    if not isinstance(battle_id, str) or not battle_id:
        raise VoteRejected("No battle to vote on: load a new battle first.")
    now = time.time() if now is None else now
    with db.conn:
        row = db.execute(
            """
            SELECT b.session_id, b.served_to_kind, b.annotator_id, b.judge, b.served_at, a.name,
                   ml.name, mr.name, (SELECT COUNT(*) FROM votes v WHERE v.battle_id = b.id)
            FROM battles b
            JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id
            JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id
            LEFT JOIN annotators a ON a.id = b.annotator_id
            WHERE b.id = ?
            """,
            [battle_id],
        ).fetchone()
        # An unknown id and someone else's battle get the same answer, so ids cannot be probed.
        if row is None or not hmac.compare_digest(row[0], session_id or ""):
            raise VoteRejected("This battle was not shown to you. Load a new battle and vote on it.")
        served_session, kind, annotator_id, judge, served_at, annotator_name, model_a, model_b, votes = row
        if votes:
            raise VoteRejected("This battle already has your vote. Load the next battle.")
        seconds = max(0.0, now - (served_at if shown_at is None else shown_at))
        try:
            vote_id = _insert_vote(db, battle_id, annotator_name if kind == "human" else judge, kind, annotator_id,
                                   outcome, seconds, now, expected_shown)
        except database_errors() as error:  # PostgreSQL: a vote on it committed meanwhile (its check saw none)
            if is_unique_violation(error, "votes"):  # the unique battle_id; not NOT NULL, CHECK, a foreign key
                raise VoteRejected("This battle already has your vote. Load the next battle.") from None
            raise  # refused for another reason: the caller reports the database error, not "already voted"
        changes = update_flags_with_reasons(db, annotator_id, rules) if kind == "human" and rules is not None else {}
        if is_postgres(db):  # the counter rises at the commit; the vote's flag is the insert's unless the rules
            version = None  # changed it, and then they said to what: no read
            excluded, reason = changes[vote_id][1:] if vote_id in changes else (0, "")
        else:  # the vote's flag as the rules left it, and the votes counter with it counted, in one read
            excluded, reason, version = db.execute(
                "SELECT excluded, excluded_reason, (SELECT version FROM data_versions WHERE name = 'votes') FROM "
                "votes WHERE id = ?", [vote_id]).fetchone()
    flips = tuple((vote_id, now_excluded) for vote_id, (was, now_excluded, _) in sorted(changes.items())
                  if was != now_excluded)
    return VoteReceipt(vote_id, battle_id, outcome, model_a, model_b, seconds, flips, version, bool(excluded),
                       reason)


def _insert_vote(db, battle_id: str, voter: str, kind: str, annotator_id: int | None, outcome: str, seconds: float,
                 now: float, expected_shown: bool | None) -> int:
    """Insert the vote with what its battle showed; return its id."""
    return db.execute(
        "INSERT INTO votes (battle_id, voter, voter_kind, annotator_id, outcome, seconds_to_vote, voted_at, prompt_id, "
        "left_image_id, right_image_id, left_model_id, right_model_id, strategy, served_at, expected_shown) "
        "SELECT ?, ?, ?, ?, ?, ?, ?, b.prompt_id, b.left_image_id, b.right_image_id, l.model_id, r.model_id, "
        "b.strategy, b.served_at, ? FROM battles b JOIN images l ON l.id = b.left_image_id "
        "JOIN images r ON r.id = b.right_image_id WHERE b.id = ? RETURNING id",
        [battle_id, voter, kind, annotator_id, outcome, seconds, now,
         None if expected_shown is None else int(bool(expected_shown)), battle_id],
    ).fetchone()[0]


def judge_voter_names(db: Database) -> list[str]:
    """Every judge voter of the arena's votes, most votes first (ties by name)."""
    return [row[0] for row in db.execute(
        "SELECT voter FROM votes WHERE voter_kind = 'judge' GROUP BY voter ORDER BY COUNT(*) DESC, voter")]


def vote_count(db: Database) -> int:
    """Every vote stored (excluded ones included)."""
    return db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]


def annotator_nearest(db: Database, prompts: int) -> tuple[int, int] | None:
    """(annotator id, prompts they voted on) of the annotator whose number of distinct prompts voted on is closest to
    ``prompts`` (ties: the lowest id), or None without annotator votes."""
    row = db.execute(
        "SELECT annotator_id, COUNT(DISTINCT prompt_id) FROM votes WHERE annotator_id IS NOT NULL "
        "GROUP BY annotator_id ORDER BY abs(COUNT(DISTINCT prompt_id) - ?), annotator_id LIMIT 1", [prompts]).fetchone()
    return (int(row[0]), int(row[1])) if row else None


def voters_by_vote(db: Database) -> dict[int, str]:
    """{vote id: voter} of every vote stored (excluded ones included)."""
    return dict(db.execute("SELECT id, voter FROM votes").fetchall())


def battles_with_several_votes(db: Database) -> int:
    """How many battles have more than one vote (0, by the rules: a check for load tests and audits)."""
    return db.execute("SELECT count(*) FROM (SELECT battle_id FROM votes GROUP BY battle_id HAVING count(*) > 1) "
                      "doubled").fetchone()[0]
