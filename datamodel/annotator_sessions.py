"""Annotators' stay-signed-in sessions (the ``annotator_sessions`` table) and what a page reads of a session: its
battle or question on screen, the annotator's vote count and progress.

A page keeps a random token in the browser; the table keeps only its SHA-256 (:func:`token_hash`), the annotator, the
page's session id, when it expires and when it was revoked (:mod:`arena.session` issues, resumes and revokes them).
"""

from __future__ import annotations

import hashlib

from datamodel.database import Database
from datamodel.open_prompts import OPEN_SUITE

from datamodel.transactions import annotator_transaction
from datamodel.votes import VoteReceipt


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def store_session(db: Database, token: str, *, annotator_id: int, session_id: str, created_at: float,
                  expires_at: float) -> None:
    """Keep ``token`` (hashed) as signing ``annotator_id``'s page session ``session_id`` in until ``expires_at``."""
    with annotator_transaction(db, annotator_id):
        db.execute("INSERT INTO annotator_sessions (token_hash, annotator_id, session_id, created_at, expires_at) "
                   "VALUES (?, ?, ?, ?, ?)", [token_hash(token), annotator_id, session_id, created_at, expires_at])


def live_session(db: Database, token: str, now: float) -> tuple[int, str, str, str] | None:
    """(annotator id, session id, annotator name, account source) of ``token``'s session if it is neither revoked
    nor expired at ``now``, and was issued after its annotator last signed out; else None."""
    row = db.execute(
        "SELECT s.annotator_id, s.session_id, a.name, a.source FROM annotator_sessions s "
        "JOIN annotators a ON a.id = s.annotator_id WHERE s.token_hash = ? AND s.revoked_at IS NULL "
        "AND s.expires_at > ? AND (a.signed_out_at IS NULL OR s.created_at > a.signed_out_at)",
        [token_hash(token), now]).fetchone()
    return tuple(row) if row is not None else None


def signed_out_at(db: Database, annotator_id: int) -> tuple[bool, float | None]:
    """(whether the annotator exists, when they last signed out or had their token changed, or None)."""
    row = db.execute("SELECT signed_out_at FROM annotators WHERE id = ?", [annotator_id]).fetchone()
    return (False, None) if row is None else (True, row[0])


def sign_out_everywhere(db: Database, annotator_id: int, now: float) -> None:
    """Record that the annotator signed out at ``now`` and revoke every stay-signed-in token of theirs."""
    with annotator_transaction(db, annotator_id):  # excludes the same annotator's new tokens (store_session)
        db.execute("UPDATE annotators SET signed_out_at = ? WHERE id = ?", [now, annotator_id])
        db.execute("UPDATE annotator_sessions SET revoked_at = ? WHERE annotator_id = ? AND revoked_at IS NULL",
                   [now, annotator_id])


def vote_count(db: Database, annotator_id: int) -> int:
    """How many votes the annotator has cast (excluded ones included)."""
    return db.execute("SELECT COUNT(*) FROM votes WHERE annotator_id = ?", [annotator_id]).fetchone()[0]


def suite_progress(db: Database, annotator_id: int, suite: str | None) -> tuple[int, int]:
    """(prompts of ``suite`` the annotator has voted on, prompts in ``suite``); ``suite`` None: over every suite but
    the open prompts (:mod:`datamodel.open_prompts`)."""
    if suite is None:  # one read each (the page asks after every vote); open prompts are no suite's to finish
        seen, total = db.execute("SELECT (SELECT COUNT(DISTINCT v.prompt_id) FROM votes v JOIN prompts p ON p.id = "
                                 "v.prompt_id WHERE v.annotator_id = ? AND p.suite != ?), (SELECT COUNT(*) FROM "
                                 "prompts WHERE suite != ?)", [annotator_id, OPEN_SUITE, OPEN_SUITE]).fetchone()
        return seen, total
    seen, total = db.execute("SELECT (SELECT COUNT(DISTINCT v.prompt_id) FROM votes v JOIN prompts p ON p.id = "
                             "v.prompt_id WHERE v.annotator_id = ? AND p.suite = ?), (SELECT COUNT(*) FROM prompts "
                             "WHERE suite = ?)", [annotator_id, suite, suite]).fetchone()
    return seen, total


def open_battle(db: Database, session_id: str) -> str | None:
    """The id of the session's newest battle (by when it was served, then as written), unless it has a vote."""
    row = db.execute("SELECT b.id FROM battles b WHERE b.session_id = ? AND NOT EXISTS (SELECT 1 FROM votes v "
                     "WHERE v.battle_id = b.id) AND b.served_at >= (SELECT COALESCE(MAX(b2.served_at), 0) FROM "
                     "battles b2 WHERE b2.session_id = ?) ORDER BY b.rowid DESC LIMIT 1",
                     [session_id, session_id]).fetchone()
    return row[0] if row else None


def session_vote(db: Database, session_id: str, media_token: str) -> VoteReceipt | None:
    """The receipt of the vote cast on the battle that page session ``session_id`` showed with ``media_token``; None
    when the session showed no such battle or it has no vote (a reloaded page comes back to the reveal of its last
    vote, never of another session's)."""
    row = db.execute(
        "SELECT v.id, b.id, v.outcome, ml.name, mr.name, v.seconds_to_vote, v.excluded, v.excluded_reason "
        "FROM battles b JOIN votes v ON v.battle_id = b.id "
        "JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id "
        "JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id "
        "WHERE b.session_id = ? AND b.media_token = ?", [session_id, media_token]).fetchone()
    if row is None:
        return None
    vote_id, battle_id, outcome, model_a, model_b, seconds, excluded, reason = row
    return VoteReceipt(vote_id, battle_id, outcome, model_a, model_b, seconds or 0.0, excluded=bool(excluded),
                       reason=reason or "")


def open_questions(db: Database, session_id: str) -> list[str]:
    """The ids of the rating questions the session had on screen and held back for after it (none, one or two):
    the unanswered, unskipped questions served (or put on screen: :func:`datamodel.human_ratings.show_serving`)
    last, in the order they were drawn. Before, the newest was taken, which is the one held back: each reload of the
    Ratings tab showed another question."""
    rows = db.execute("SELECT s.id, s.served_at FROM rating_servings s WHERE s.session_id = ? AND s.skipped_at IS NULL "
                      "AND NOT EXISTS (SELECT 1 FROM ratings r WHERE r.serving_id = s.id) "
                      "ORDER BY s.served_at DESC, s.rowid LIMIT 2", [session_id]).fetchall()
    return [serving for serving, at in rows if at == rows[0][1]]
