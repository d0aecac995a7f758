"""The four-image sampler's counts kept in memory (sampling.kwise_stats.KwiseStats): its ksort-ucb draws are the
uncached ones when nothing changed, and it sees new votes and flag changes after a refresh, on SQLite and
PostgreSQL."""

import random

import numpy as np
import pytest
from support.arena import seven_models

from arena import session as sessions
from arena.four_image_session import next_four, show_upcoming, vote_four
from datamodel.kwise import kwise_model_counts
from sampling.kwise import draw_four, kwise_state
from sampling.kwise_stats import KwiseStats

pytestmark = pytest.mark.both_engines

SUITES = ["taxonomy"]


def _cast(db, name, votes, seed, stats=None):
    """``votes`` ksort-ucb four-image votes by ``name``, the next set drawn with each vote (through ``stats`` if
    given); returns the annotator's id."""
    session = sessions.start(db, name, "a-long-token-1", open_signup=True)
    rng = random.Random(seed)
    sitting = next_four(db, rng, session, None, suites=SUITES, strategy="ksort-ucb", stats=stats)
    for n in range(votes):
        sitting = vote_four(db, session, sitting, best=1 + n % 4, worst=None if n % 2 else 1 + (n + 1) % 4,
                            on_screen=sitting.battle.media_token, rules=None, rng=rng, suites=SUITES,
                            strategy="ksort-ucb", stats=stats)
        sitting = show_upcoming(sitting)
    return session.annotator.id


def _assert_current(stats, db):
    """The state ``stats`` gives equals the one read from every counted vote, strengths included."""
    appearances, votes = kwise_model_counts(db)
    models = tuple(sorted(appearances))
    assert sorted(stats.known_models()) == list(models)
    cached, uncached = stats.state(models), kwise_state(models, votes)
    assert cached.total == uncached.total == len(votes)
    np.testing.assert_array_equal(cached.appearances, uncached.appearances)
    np.testing.assert_array_equal(cached.pair_counts, uncached.pair_counts)
    np.testing.assert_allclose(cached.strength, uncached.strength, atol=1e-8)


def test_the_cached_draw_is_the_uncached_one_when_nothing_changed(small_arena):
    db = seven_models(small_arena)
    kim = _cast(db, "kim", 14, seed=1)
    _cast(db, "lee", 9, seed=2)
    stats = KwiseStats().refresh(db)
    assert len(stats.known_models()) == 7  # the pairs never compared were explored first
    _assert_current(stats, db)
    for seed in range(20):
        cached = draw_four(db, random.Random(seed), SUITES, kim, "ksort-ucb", stats)
        assert cached == draw_four(db, random.Random(seed), SUITES, kim, "ksort-ucb")


def test_new_votes_and_flag_changes_are_seen_after_the_refresh(small_arena):
    db = seven_models(small_arena)
    _cast(db, "kim", 10, seed=3)
    stats = KwiseStats().refresh(db)
    fitted = stats.strength.copy()
    _cast(db, "lee", 4, seed=4)  # not through stats: another process's votes
    assert stats.state(tuple(stats.known_models())).total == 10  # not refreshed yet
    stats.refresh(db)
    assert stats.state(tuple(stats.known_models())).total == 14
    np.testing.assert_array_equal(stats.strength, fitted)  # 4 of 50 votes: the strengths wait for the next refit
    stats.maybe_refit(force=True)
    _assert_current(stats, db)

    first, second = [row[0] for row in db.execute("SELECT id FROM kwise_votes ORDER BY id LIMIT 2").fetchall()]
    with db.conn:  # an admin excludes two votes, as a review does
        db.execute("UPDATE kwise_votes SET excluded = 1, reviewed = 1 WHERE id IN (?, ?)", [first, second])
    stats.refresh(db)
    stats.maybe_refit(force=True)
    assert stats.total == 12
    _assert_current(stats, db)
    with db.conn:  # and includes one again
        db.execute("UPDATE kwise_votes SET excluded = 0 WHERE id = ?", [first])
    stats.refresh(db)
    stats.maybe_refit(force=True)
    assert stats.total == 13
    _assert_current(stats, db)
    _assert_current(KwiseStats().refresh(db), db)  # a full read agrees with the caught-up counts


def test_the_strengths_are_refitted_every_refit_votes(small_arena):
    db = seven_models(small_arena)
    _cast(db, "kim", 6, seed=5)
    stats = KwiseStats(refit_votes=3, refit_seconds=3600.0).refresh(db)
    fitted = stats.strength.copy()
    _cast(db, "lee", 2, seed=6)
    stats.refresh(db)
    np.testing.assert_array_equal(stats.strength, fitted)  # 2 votes: the strengths of 6 votes still
    _cast(db, "ann", 1, seed=7)
    stats.refresh(db)  # the third vote since the fit: refitted
    _assert_current(stats, db)


def test_votes_cast_through_the_stats_are_counted_and_the_draw_reads_no_vote(small_arena, monkeypatch):
    db = seven_models(small_arena)
    stats = KwiseStats()
    _cast(db, "kim", 8, seed=8, stats=stats)
    stats.refresh(db)
    stats.maybe_refit(force=True)
    _assert_current(stats, db)

    import datamodel.kwise

    def refused(*args, **kwargs):
        raise AssertionError("a draw through the stats read every four-image vote")

    monkeypatch.setattr(datamodel.kwise, "kwise_model_counts", refused)
    _cast(db, "lee", 3, seed=9, stats=stats)
    assert stats.refresh(db).total == 11


def test_a_server_with_the_four_image_mode_reads_the_counts_before_the_first_request(small_arena):
    """The first full read (0.75 s at 100,000 votes, ``python -m tools.kwise_bench``) runs on a background thread when
    the server starts, not on the first annotator's request."""
    from arena.web.app import make_context

    db = seven_models(small_arena)
    _cast(db, "kim", 12, seed=4)
    small_arena.db.close()
    ctx = make_context(small_arena.settings.replace(four_image_suites="taxonomy", four_image_strategy="ksort-ucb"))
    assert ctx.kwise_stats.wait(30) and ctx.kwise_stats.ready  # no request has asked for it
    _assert_current(ctx.kwise_stats, ctx.store.db())
    assert ctx.kwise_stats.total == 12


def test_no_background_read_without_the_four_image_mode_or_its_ucb_draws(small_arena):
    from arena.web.app import make_context

    small_arena.db.close()
    for settings in ({}, {"four_image_suites": "taxonomy", "four_image_strategy": "uniform"}):
        ctx = make_context(small_arena.settings.replace(**settings))
        assert ctx.kwise_stats.wait(1) and not ctx.kwise_stats.ready
