"""One annotator's sitting at the arena page, as plain functions over a small state object.

The web page keeps an :class:`ArenaSession` per browser tab (Gradio's ``gr.State``, held on the server) and calls
these functions; tests call them directly. The state never leaves the server, so the battle id, and with it
anything that could identify the models, is not sent to the browser before the vote.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field, replace

import sqlite_utils

from arena.annotators import Annotator, sign_in
from arena.battles import Battle, serve_battle
from arena.quality import QualityRules
from arena.votes import VoteReceipt, VoteRejected, record_vote


@dataclass(frozen=True)
class ArenaSession:
    annotator: Annotator | None = None
    session_id: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    battle: Battle | None = None
    receipt: VoteReceipt | None = None  # the vote on ``battle``, once cast
    votes: int = 0

    @property
    def signed_in(self) -> bool:
        return self.annotator is not None


def start(db: sqlite_utils.Database, name: str, token: str, *, open_signup: bool) -> ArenaSession:
    """Sign in and open a new session (a fresh session id: battles of older sessions cannot be voted on)."""
    annotator = sign_in(db, name, token, open_signup=open_signup)
    count = db.execute("SELECT COUNT(*) FROM votes WHERE annotator_id = ?", [annotator.id]).fetchone()[0]
    return ArenaSession(annotator=annotator, votes=count)


def next_battle(
    db: sqlite_utils.Database, rng: random.Random, session: ArenaSession, *, suite: str | None = None,
    strategy: str = "uniform",
) -> ArenaSession:
    if not session.signed_in:
        raise VoteRejected("Sign in with your name and token first.")
    battle = serve_battle(
        db, rng, session_id=session.session_id, annotator_id=session.annotator.id, suite=suite or None,
        strategy=strategy,
    )
    return replace(session, battle=battle, receipt=None)


def vote(db: sqlite_utils.Database, session: ArenaSession, outcome: str, *, rules=QualityRules()) -> ArenaSession:
    """Record ``outcome`` on the session's current battle; the returned session holds the receipt (the reveal)."""
    if not session.signed_in:
        raise VoteRejected("Sign in with your name and token first.")
    if session.battle is None:
        raise VoteRejected("No battle to vote on: load a new battle first.")
    if session.receipt is not None:
        raise VoteRejected("This battle already has your vote. Load the next battle.")
    receipt = record_vote(db, session.battle.id, outcome, session_id=session.session_id, rules=rules)
    return replace(session, receipt=receipt, votes=session.votes + 1)
