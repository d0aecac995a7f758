"""One annotator's sitting at the four-image page, as plain functions over a small state object (the four-image
mode: :mod:`datamodel.kwise`, :mod:`sampling.kwise`).

The annotator is the one signed in on the arena page (:class:`arena.session.ArenaSession`): the four-image battles
are served to that session, and a vote must come from it. The battle id never leaves the server (the state is held
there, as the arena's); the page gets the battle's media token only, and the models' names only with the receipt of
the vote.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, replace

from arena.session import ArenaSession, check_signed_in, shown_since, signed_in_annotator
from core.settings import QualityRules
from datamodel.database import Database
from datamodel.kwise import KwiseBattle, KwiseReceipt, KwiseRejected, record_kwise_battle, record_kwise_vote
from sampling.kwise import draw_four


@dataclass(frozen=True)
class FourImageSitting:
    battle: KwiseBattle | None = None
    shown_at: float = 0.0  # when ``battle`` was handed to the page: seconds_to_vote counts from here
    receipt: KwiseReceipt | None = None  # the vote on ``battle``, once cast
    votes: int = 0  # four-image votes of this sitting


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
              sitting: FourImageSitting | None, *, suites, strategy: str, now: float | None = None) -> FourImageSitting:
    """Draw and record the next four-image battle for ``session`` (raises :class:`sampling.kwise.NoFourImageBattle`
    when none can be drawn). Leaving a battle without a vote skips it."""
    session = _signed_in(db, session)
    prompt_id, image_ids = draw_four(db, rng, suites, signed_in_annotator(session).id, strategy)
    battle = record_kwise_battle(db, prompt_id, image_ids, session_id=session.session_id,
                                 annotator_id=signed_in_annotator(session).id, strategy=strategy, now=now)
    votes = sitting.votes if sitting is not None else 0
    return FourImageSitting(battle=battle, shown_at=time.time() if now is None else now, votes=votes)


def vote_four(db: Database, session: ArenaSession | None, sitting: FourImageSitting | None, *,
              best: int, worst: int | None = None, on_screen: str | None = None,
              seconds_on_screen: float | None = None, now: float | None = None,
              rules: QualityRules | None = QualityRules()) -> FourImageSitting:
    """Record the pick on the battle on screen (``on_screen``: its media token, which must be the sitting's), checked
    against the quality ``rules`` (:func:`datamodel.kwise.record_kwise_vote`); the returned sitting holds the receipt
    (the names, and whether the vote counts)."""
    session = _signed_in(db, session)
    if sitting is None or sitting.battle is None:
        raise KwiseRejected("No images to vote on: press Next for a new set.")
    if on_screen is not None and on_screen != sitting.battle.media_token:
        raise KwiseRejected("These images are no longer on your screen. Press Next and vote on the new set.")
    if sitting.receipt is not None:
        raise KwiseRejected("These images already have your vote. Press Next.")
    now = time.time() if now is None else now
    shown_at = shown_since(sitting.shown_at, seconds_on_screen, now)
    receipt = record_kwise_vote(db, sitting.battle, session_id=session.session_id,
                                annotator_id=signed_in_annotator(session).id, best=best, worst=worst,
                                shown_at=shown_at, now=now, rules=rules)
    return replace(sitting, receipt=receipt, votes=sitting.votes + 1)
