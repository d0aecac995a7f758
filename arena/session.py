"""One annotator's sitting at the arena page, as plain functions over a small state object.

The web page keeps an :class:`ArenaSession` per browser tab (Gradio's ``gr.State``, held on the server) and calls
these functions; tests call them directly. The state never leaves the server, so the battle id, and with it
anything that could identify the models, is not sent to the browser before the vote.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Protocol

from datamodel.annotator_sessions import (
    live_session,
    open_battle,
    session_vote,
    sign_out_everywhere,
    signed_out_at,
    store_session,
    suite_progress,
    vote_count,
)
from datamodel.annotators import MIN_TOKEN_LENGTH, Annotator, sign_in
from datamodel.battles import Battle, Pairing, load_battle
from datamodel.database import Database
from datamodel.quality import QualityRules
from datamodel.transactions import annotator_transaction, annotator_writes
from datamodel.votes import VoteReceipt, VoteRejected, record_vote
from sampling.draws import NoBattleAvailable, UniformDraw, draw_pairing, serve_battle
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from sampling.strategies import UNIFORM, Strategy, get_strategy


@dataclass(frozen=True)
class ArenaSession:
    annotator: Annotator | None = None
    session_id: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    battle: Battle | None = None
    shown_at: float = 0.0  # when ``battle`` was put on screen: seconds_to_vote counts from here
    receipt: VoteReceipt | None = None  # the vote on ``battle``, once cast
    upcoming: Battle | None = None  # drawn with the vote, shown by the next call of next_battle
    upcoming_suite: str | None = None
    revealed: Battle | None = None  # the battle voted on before ``battle``: the page may still show it, named
    votes: int = 0
    voted_at: float | None = None  # when the last vote of this session was cast
    # The votes in a row, the last one included, each less than the speed rule's seconds after the one before (1: the
    # last vote was not fast; 0: no vote yet): the page warns from 2 on, before the rule sets votes aside.
    fast_run: int = 0
    resume_token: str | None = None  # kept in the browser to stay signed in across reloads (:func:`issue_resume`)
    signed_in_at: float = field(default_factory=time.time)  # a sign-out or token change after this ends the session

    @property
    def signed_in(self) -> bool:
        return self.annotator is not None


class PageSession(Protocol):
    """What signing out and its checks read of a page's session: the battle page's :class:`ArenaSession` or the
    rating page's :class:`arena.rating_session.RatingSession`."""

    @property
    def annotator(self) -> Annotator | None: ...

    @property
    def signed_in_at(self) -> float: ...


def signed_in_annotator(session: PageSession) -> Annotator:
    """The annotator ``session`` is signed in as; a session that is not signed in is refused."""
    if session.annotator is None:
        raise VoteRejected("Sign in with your name and token first.")
    return session.annotator


def start(db: Database, name: str, token: str, *, open_signup: bool,
          min_token_length: int = MIN_TOKEN_LENGTH) -> ArenaSession:
    """Sign in and open a new session (a fresh session id: battles of older sessions cannot be voted on)."""
    annotator = sign_in(db, name, token, open_signup=open_signup, min_token_length=min_token_length)
    return ArenaSession(annotator=annotator, votes=vote_count(db, annotator.id))


@dataclass(frozen=True)
class Sampler:
    """How a server draws battles: the strategy, its shared statistics, the prompt pool, the replication share.

    ``strategy`` names a registered :class:`sampling.strategies.Strategy` (checked here: an unknown name is a
    ValueError listing the known ones, so a server with a wrong ``ARENA_SAMPLING`` stops at start-up). ``stats``
    (:class:`sampling.sampler.SamplingStats`) is shared by the server's threads; :func:`vote` tells it about every
    vote it records."""

    strategy: str = UNIFORM.name
    stats: SamplingStats | None = None
    pool: PromptPool | None = None
    replication_share: float = 0.0

    def __post_init__(self):
        get_strategy(self.strategy)

    @property
    def declaration(self) -> Strategy:
        """The registered declaration of :attr:`strategy` (what it needs: counts, a fit, the prompt-first draw)."""
        return get_strategy(self.strategy)

    @property
    def reads_stats(self) -> bool:
        """Whether the draws read ``stats`` (a pair-first strategy, replication, or the warm-up of new models), so the
        server keeps them."""
        warmup = self.stats is not None and self.stats.params.warmup_battles > 0
        return self.declaration.reads_stats or self.replication_share > 0 or warmup


def _draw(db, rng, session: ArenaSession, suite: str | None, sampler: Sampler) -> Pairing:
    """The next battle's prompt and images (reads only; raises NoBattleAvailable)."""
    return draw_pairing(db, rng, sampler.strategy, suite=suite or None, stats=sampler.stats,
                        annotator_id=signed_in_annotator(session).id, replication_share=sampler.replication_share,
                        pool=sampler.pool)


def _record(db, rng, session: ArenaSession, sampler: Sampler, pairing: Pairing) -> Battle:
    """Record ``pairing`` as the session's battle, under the strategy that really drew it."""
    strategy = pairing.strategy if isinstance(pairing, UniformDraw) else sampler.strategy
    return serve_battle(db, rng, session_id=session.session_id, annotator_id=signed_in_annotator(session).id,
                        strategy=strategy, pairing=pairing)


def _serve(db, rng, session: ArenaSession, suite: str | None, sampler: Sampler) -> Battle:
    return _record(db, rng, session, sampler, _draw(db, rng, session, suite, sampler))


def next_battle(
    db: Database, rng: random.Random, session: ArenaSession, *, suite: str | None = None,
    sampler: Sampler = Sampler(), now: float | None = None,
) -> ArenaSession:
    """Show the next battle: the one drawn together with the last vote if it fits ``suite``, else a new one.

    Leaving a battle without a vote skips it: it stays a served battle, never a vote. A battle drawn for the session
    is never of a prompt its annotator has voted on (in any session) while ``suite`` has one they have not; then of
    the least seen (:mod:`sampling.prompt_pool`; the server's ``sampler.pool`` keeps what each annotator saw).
    """
    if not session.signed_in:
        raise VoteRejected("Sign in with your name and token first.")
    check_signed_in(db, session)
    battle = session.upcoming
    if battle is None or session.upcoming_suite != (suite or None):
        # PostgreSQL: the annotator's lock, not the database's
        with annotator_writes(db, signed_in_annotator(session).id):
            battle = _serve(db, rng, session, suite, sampler)
    return _showing(session, battle, now)


def show_upcoming(session: ArenaSession, *, now: float | None = None) -> ArenaSession:
    """Make the battle drawn with the vote just cast (:func:`vote`, in the same request) the session's current one:
    :func:`next_battle` without a second look at whether the annotator is still signed in, which the vote checked
    a moment before."""
    if session.upcoming is None or session.receipt is None:
        raise ValueError("show_upcoming follows a vote that drew the next battle.")
    return _showing(session, session.upcoming, now)


def show_battle(session: ArenaSession, battle: Battle, *, now: float | None = None) -> ArenaSession:
    """Make ``battle``, recorded for this session elsewhere (an open prompt's, :mod:`arena.open_prompts`), the
    session's current one; the battle drawn with the last vote is dropped (a skip)."""
    return _showing(session, battle, now)


def _showing(session: ArenaSession, battle: Battle, now: float | None) -> ArenaSession:
    return replace(session, battle=battle, shown_at=time.time() if now is None else now, receipt=None,
                   upcoming=None, upcoming_suite=None,
                   revealed=session.battle if session.receipt is not None else None)


def vote(
    db: Database, session: ArenaSession, outcome: str, *, rules=QualityRules(),
    rng: random.Random | None = None, suite: str | None = None, sampler: Sampler = Sampler(),
    on_screen: str | None = None, seconds_on_screen: float | None = None, now: float | None = None,
    expected_shown: bool | None = None,
) -> ArenaSession:
    """Record ``outcome`` on the session's current battle; the returned session holds the receipt (the reveal).

    With ``rng`` the next battle is drawn in the same transaction as the vote (one commit, one disk flush, where
    two would be paid otherwise) and waits in ``upcoming`` until :func:`next_battle` shows it. If no battle is left
    to draw, the vote still counts. Drawing inside the transaction also keeps the server's draws one at a time: drawn
    before it, in parallel, they held up the vote in the transaction more (Python's global lock) than they took
    (p95 174 against 83 ms with the active strategy at a million votes). That draw still sees the voted battle as in
    flight, not yet as a vote; after the commit the sampler's counts take the vote (and any flags the quality rules
    flipped with it). It does see the vote's prompt as seen by the annotator (read in the same transaction), so the
    next battle is not of the prompt just revealed.

    ``on_screen``, the media token of the battle the voter sees, must be the current battle's (the page sends it,
    so a vote cannot land on a battle drawn but not yet shown). ``seconds_on_screen``, how long the page has shown
    it, makes ``seconds_to_vote`` count from then when the page showed the battle later than the server handed it
    out; it can only shorten the time the server measured. ``expected_shown``, whether the page showed the expected
    outcome, is stored with the vote.
    """
    if not session.signed_in:
        raise VoteRejected("Sign in with your name and token first.")
    check_signed_in(db, session)
    if session.battle is None:
        raise VoteRejected("No battle to vote on: load a new battle first.")
    if on_screen is not None and on_screen != session.battle.media_token:
        if session.revealed is not None and on_screen == session.revealed.media_token:
            raise VoteRejected("This battle already has your vote. Press Next battle.")
        raise VoteRejected("This battle is no longer on your screen. Load the next battle and vote on it.")
    if session.receipt is not None:
        raise VoteRejected("This battle already has your vote. Load the next battle.")
    now = time.time() if now is None else now
    shown_at = shown_since(session.shown_at, seconds_on_screen, now)
    pairing = None
    spec = sampler.declaration
    if rng is not None and sampler.stats is not None and sampler.reads_stats:
        sampler.stats.refresh(db, fit=spec.needs_fit)  # outside the write transaction
    with annotator_transaction(db, signed_in_annotator(session).id):  # PostgreSQL: other annotators' votes go on
        receipt = record_vote(db, session.battle.id, outcome, session_id=session.session_id, now=now,
                              shown_at=shown_at, rules=rules, expected_shown=expected_shown)
        if rng is not None:
            try:
                pairing = _draw(db, rng, session, suite, sampler)
            except NoBattleAvailable:
                pairing = None
        upcoming = _record(db, rng, session, sampler, pairing) if pairing is not None else None
    if sampler.stats is not None:  # committed: count it (and the flags the rules flipped with it)
        sampler.stats.note_vote(db, receipt)
    fast = rules is not None and session.voted_at is not None and 0 <= now - session.voted_at < rules.fast_seconds
    return replace(session, receipt=receipt, votes=session.votes + 1, upcoming=upcoming,
                   upcoming_suite=(suite or None) if upcoming else None, voted_at=now,
                   fast_run=max(session.fast_run, 1) + 1 if fast else 1)


def shown_since(shown_at: float, seconds_on_screen: float | None, now: float) -> float | None:
    """When the voter's page began showing what is voted on: the server's ``shown_at`` (0: unknown), made later by the
    page's own ``seconds_on_screen`` where the page showed it later than the server handed it out (never earlier)."""
    shown = shown_at or None
    if shown is not None and seconds_on_screen is not None and 0 <= seconds_on_screen < float("inf"):
        shown = max(shown, now - seconds_on_screen)
    return shown


SIGNED_OUT = ("You were signed out (here or in another tab or browser, or your token was changed). Sign in again "
              "to go on.")


def check_signed_in(db: Database, session: PageSession) -> None:
    """Refuse a session that began before its annotator signed out anywhere (:func:`sign_out`) or had their token
    changed (:func:`datamodel.annotators.sync_accounts`): a tab left open, or opened with a stolen resume token, stops
    with the sign-out."""
    known, signed_out = signed_out_at(db, signed_in_annotator(session).id)
    if not known or (signed_out is not None and signed_out >= session.signed_in_at):
        raise VoteRejected(SIGNED_OUT)


def sign_out(db: Database, session: PageSession, *, now: float | None = None) -> None:
    """Sign the annotator of ``session`` out everywhere: every resume token of theirs is revoked and every session
    of theirs that began before now ends at its next request (:func:`check_signed_in`)."""
    now = time.time() if now is None else now
    sign_out_everywhere(db, signed_in_annotator(session).id, now)


def progress(db: Database, annotator_id: int, suite: str | None) -> tuple[int, int]:
    """(prompts of ``suite`` the annotator has voted on, prompts in ``suite``): "12 of 76 prompts in this suite";
    ``suite`` None: over every suite ("All suites" on the page, which then no longer jumps from suite to suite)."""
    return suite_progress(db, annotator_id, suite)


def issue_resume(db: Database, session: ArenaSession, *, days: float,
                 now: float | None = None) -> ArenaSession:
    """Give ``session`` a token that signs its annotator in again after a reload (the page keeps it in the
    browser's local storage) for ``days``; the database keeps only its hash. ``days`` 0: none is given."""
    if days <= 0 or not session.signed_in:
        return session
    token, now = secrets.token_urlsafe(32), time.time() if now is None else now
    store_session(db, token, annotator_id=signed_in_annotator(session).id, session_id=session.session_id,
                  created_at=now, expires_at=now + days * 86400)
    return replace(session, resume_token=token)


def revealed_vote(db: Database, session: ArenaSession,
                  media_token: str | None) -> tuple[Battle, VoteReceipt] | None:
    """The battle that ``session``'s page showed with ``media_token`` and the receipt of the vote cast on it in this
    session, or None: a page reloaded on a reveal comes back to it (the next battle, drawn with the vote, stays the
    session's current one, for Next battle)."""
    if not session.signed_in or not isinstance(media_token, str) or not 10 <= len(media_token) <= 100:
        return None
    receipt = session_vote(db, session.session_id, media_token)
    return None if receipt is None else (load_battle(db, receipt.battle_id), receipt)


def resume(db: Database, token: str, *, open_signup: bool,
           now: float | None = None) -> ArenaSession | None:
    """The session a reloaded page gets back from its ``token`` (:func:`issue_resume`), on the battle it showed
    (its session's newest battle, unless voted on); None when the token is unknown, expired or revoked, was issued
    before its annotator signed out or had their token changed, or its account may no longer sign in (an arena that
    now admits only configured accounts)."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        return None
    now = time.time() if now is None else now
    row = live_session(db, token, now)
    if row is None or (not open_signup and row[3] != "config"):
        return None
    annotator_id, session_id, name, source = row
    votes = vote_count(db, annotator_id)
    newest = open_battle(db, session_id)
    battle = load_battle(db, newest) if newest else None
    return ArenaSession(annotator=Annotator(id=annotator_id, name=name, source=source), session_id=session_id,
                        battle=battle, shown_at=now, votes=votes, resume_token=token)
