"""One annotator's sitting at the four-image page, as plain functions over a small state object (the four-image
mode: :mod:`datamodel.kwise`, :mod:`sampling.kwise`).

The annotator is the one signed in on the arena page (:class:`arena.session.ArenaSession`): the four-image battles
are served to that session, and a vote must come from it. The battle id never leaves the server (the state is held
there, as the arena's); the page gets the battle's media token only, and the models' names only with the receipt of
the vote.

As the arena's next battle (:func:`arena.session.vote`), the next set is drawn with the vote, in its transaction, and
waits in the sitting (``upcoming``) until :func:`show_upcoming` makes it the one on screen: the page has it with the
vote's answer, its images preloaded, and shows it on Next without a request.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

from arena.session import ArenaSession, check_signed_in, shown_since, signed_in_annotator
from core.settings import QualityRules
from datamodel.database import Database
from datamodel.kwise import KwiseBattle, KwiseReceipt, KwiseRejected, record_kwise_battle, record_kwise_vote
from datamodel.transactions import annotator_transaction
from sampling.kwise import NoFourImageBattle, draw_four
from sampling.kwise_stats import KwiseStats


@dataclass(frozen=True)
class FourImageSitting:
    battle: KwiseBattle | None = None
    shown_at: float = 0.0  # when ``battle`` was handed to the page: seconds_to_vote counts from here
    receipt: KwiseReceipt | None = None  # the vote on ``battle``, once cast
    upcoming: KwiseBattle | None = None  # drawn with the vote on ``battle``, shown next (:func:`show_upcoming`)
    revealed: KwiseBattle | None = None  # the set voted on before ``battle``: the page may still show it, named


def _signed_in(db: Database, session: ArenaSession | None) -> ArenaSession:
    if session is None or not session.signed_in:
        raise KwiseRejected("Sign in on the Arena tab first, then come back here.")
    from datamodel.votes import VoteRejected

    try:
        check_signed_in(db, session)
    except VoteRejected as error:
        raise KwiseRejected(str(error)) from None
    return session


def next_four(db: Database, rng: random.Random, session: ArenaSession | None,
              sitting: FourImageSitting | None, *, suites, strategy: str, now: float | None = None,
              stats: KwiseStats | None = None) -> FourImageSitting:
    """Show the next four-image set for ``session``: the one drawn with the last vote, else a new one drawn and
    recorded (raises :class:`sampling.kwise.NoFourImageBattle` when none can be drawn), by the counts of ``stats``
    (the server's, refreshed first) if given. Leaving a set without a vote skips it."""
    session = _signed_in(db, session)
    if sitting is not None and sitting.upcoming is not None:
        return _showing(sitting, sitting.upcoming, now)
    _refresh(db, stats, strategy)
    battle = _draw(db, rng, session, suites, strategy, now, stats)
    return _showing(sitting or FourImageSitting(), battle, now)


def show_upcoming(sitting: FourImageSitting, *, now: float | None = None) -> FourImageSitting:
    """Make the set drawn with the vote just cast (:func:`vote_four`, in the same request) the one on screen: the
    page has it from now on, and shows it on Next (the page's own seconds on screen make ``seconds_to_vote`` count
    from then)."""
    if sitting.upcoming is None or sitting.receipt is None:
        raise ValueError("show_upcoming follows a vote that drew the next set.")
    return _showing(sitting, sitting.upcoming, now)


def _refresh(db: Database, stats: KwiseStats | None, strategy: str) -> None:
    """Bring the server's four-image counts up to date for a draw that reads them (``ksort-ucb``)."""
    if stats is not None and strategy == "ksort-ucb":
        stats.refresh(db)


def _draw(db: Database, rng: random.Random, session: ArenaSession, suites, strategy: str,
          now: float | None, stats: KwiseStats | None) -> KwiseBattle:
    annotator_id = signed_in_annotator(session).id
    prompt_id, image_ids = draw_four(db, rng, suites, annotator_id, strategy, stats)
    return record_kwise_battle(db, prompt_id, image_ids, session_id=session.session_id, annotator_id=annotator_id,
                               strategy=strategy, now=now)


def _showing(sitting: FourImageSitting, battle: KwiseBattle, now: float | None) -> FourImageSitting:
    return FourImageSitting(battle=battle, shown_at=time.time() if now is None else now,
                            revealed=sitting.battle if sitting.receipt is not None else None)


def vote_four(db: Database, session: ArenaSession | None, sitting: FourImageSitting | None, *,
              best: int, worst: int | None = None, on_screen: str | None = None,
              seconds_on_screen: float | None = None, now: float | None = None,
              rules: QualityRules | None = QualityRules(), rng: random.Random | None = None, suites=(),
              strategy: str = "uniform", stats: KwiseStats | None = None) -> FourImageSitting:
    """Record the pick on the set on screen (``on_screen``: its media token, which must be the sitting's), checked
    against the quality ``rules`` (:func:`datamodel.kwise.record_kwise_vote`); the returned sitting holds the receipt
    (the names, and whether the vote counts). With ``rng`` the next set (of ``suites``, by ``strategy``) is drawn
    in the vote's transaction, after the vote (so not of the prompt just voted on while another is less voted), and
    waits in ``upcoming``; when none can be drawn the vote still counts.

    With ``stats`` (the server's :class:`sampling.kwise_stats.KwiseStats`) the counts are brought up to date before
    the transaction, and the draw in it reads them from memory, not the four-image votes: the write lock is held
    for the vote and a draw whose cost does not grow with the votes. That draw does not count the vote just cast
    (the next refresh does), as the pairwise draw made with a vote sees it in flight, not as a vote."""
    session = _signed_in(db, session)
    if sitting is None or sitting.battle is None:
        raise KwiseRejected("No images to vote on: press Next for a new set.")
    if on_screen is not None and on_screen != sitting.battle.media_token:
        if sitting.revealed is not None and on_screen == sitting.revealed.media_token:
            raise KwiseRejected("These images already have your vote. Press Next.")
        raise KwiseRejected("These images are no longer on your screen. Press Next and vote on the new set.")
    if sitting.receipt is not None:
        raise KwiseRejected("These images already have your vote. Press Next.")
    now = time.time() if now is None else now
    shown_at = shown_since(sitting.shown_at, seconds_on_screen, now)
    annotator_id, upcoming = signed_in_annotator(session).id, None
    if rng is not None:
        _refresh(db, stats, strategy)  # outside the write transaction
    with annotator_transaction(db, annotator_id):  # one commit for the vote and the next set
        receipt = record_kwise_vote(db, sitting.battle, session_id=session.session_id, annotator_id=annotator_id,
                                    best=best, worst=worst, shown_at=shown_at, now=now, rules=rules)
        if rng is not None:
            try:
                upcoming = _draw(db, rng, session, suites, strategy, now, stats)
            except NoFourImageBattle:
                upcoming = None
    return replace(sitting, receipt=receipt, upcoming=upcoming)
