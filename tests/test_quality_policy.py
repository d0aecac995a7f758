"""Quality rules that fit a study: accounts from the configuration are trusted (the rate and speed rules report their
votes instead of excluding them), open sign-up keeps the public-arena rules, and the annotator is warned in time."""

import random

import pytest

from arena import session as sessions
from core.settings import Settings
from datamodel.annotators import sync_accounts
from datamodel.quality import QualityRules
from datamodel.reviews import flagged_votes
from datamodel.votes import record_vote
from sampling.draws import serve_battle

pytestmark = pytest.mark.both_engines

FAST = dict(fast_streak=3, fast_seconds=60)


def _vote_quickly(db, session, rules, n=4, start=1_000_000.0, every=2.0):
    """``n`` votes ``every`` seconds apart, each on a freshly drawn battle."""
    for i in range(n):
        session = sessions.next_battle(db, random.Random(i), session, now=start + i * every)
        session = sessions.vote(db, session, "tie", rules=rules, now=start + i * every + 1.0)
    return session


def _flags(db, annotator_id):
    return db.execute("SELECT excluded, excluded_reason FROM votes WHERE annotator_id = ? ORDER BY id",
                      [annotator_id]).fetchall()


def test_fast_votes_of_a_configured_account_are_reported_not_excluded(small_arena):
    db = small_arena.db
    sync_accounts(db, {"expert": "expert-token-1"})
    s = sessions.start(db, "expert", "expert-token-1", open_signup=False)
    s = _vote_quickly(db, s, QualityRules(**FAST))
    flags = _flags(db, s.annotator.id)
    assert [excluded for excluded, _ in flags] == [0, 0, 0, 0]
    reported = "reported, not excluded (trusted account): 3+ consecutive votes"
    assert all(reason.startswith(reported) for _, reason in flags)
    assert set(flagged_votes(db)["vote_id"]) == set(range(1, 5))  # the admin's table lists them


def test_the_rate_rule_reports_a_configured_account_beyond_the_hourly_cap(small_arena):
    """An expert labelling the taxonomy benchmark's 3,370 battles votes far beyond 30 an hour."""
    db = small_arena.db
    sync_accounts(db, {"expert": "expert-token-1"})
    annotator = sessions.start(db, "expert", "expert-token-1", open_signup=False).annotator
    rules = QualityRules(max_per_hour=3)
    for i in range(5):
        battle = serve_battle(db, random.Random(i), session_id="s", annotator_id=annotator.id, now=1000.0 + i * 60)
        record_vote(db, battle.id, "tie", session_id="s", now=1000.0 + i * 60 + 30, rules=rules)
    flags = _flags(db, annotator.id)
    assert [excluded for excluded, _ in flags] == [0] * 5
    assert [bool(reason) for _, reason in flags] == [False, False, False, True, True]
    assert "more than 3 votes in an hour" in flags[3][1]


def test_signed_up_accounts_keep_the_public_arena_rules(small_arena):
    db = small_arena.db
    s = sessions.start(db, "stranger", "stranger-token", open_signup=True)
    s = _vote_quickly(db, s, QualityRules(**FAST))
    flags = _flags(db, s.annotator.id)
    assert [excluded for excluded, _ in flags] == [1, 1, 1, 1]
    assert all(reason == "3+ consecutive votes less than 60 s apart" for _, reason in flags)


def test_trust_is_a_setting(small_arena):
    assert Settings().quality_rules.trusted_sources == ("config",)
    rules = Settings(quality_trust_configured=False).quality_rules
    assert rules.trusted_sources == ()
    db = small_arena.db
    sync_accounts(db, {"expert": "expert-token-1"})
    s = _vote_quickly(db, sessions.start(db, "expert", "expert-token-1", open_signup=False),
                      QualityRules(**FAST, trusted_sources=rules.trusted_sources))
    assert [excluded for excluded, _ in _flags(db, s.annotator.id)] == [1, 1, 1, 1]


def test_the_bias_rule_still_excludes_a_trusted_account(small_arena):
    db = small_arena.db
    sync_accounts(db, {"expert": "expert-token-1"})
    annotator = sessions.start(db, "expert", "expert-token-1", open_signup=False).annotator
    rules = QualityRules(bias_min_votes=4)
    for i in range(4):
        battle = serve_battle(db, random.Random(i), session_id="s", annotator_id=annotator.id, now=1000.0 + i * 600)
        record_vote(db, battle.id, "A", session_id="s", now=1000.0 + i * 600 + 30, rules=rules)
    assert [excluded for excluded, _ in _flags(db, annotator.id)] == [1, 1, 1, 1]


# --- the live warning -------------------------------------------------------------------------------------------------

def test_the_session_counts_the_run_of_fast_votes(small_arena):
    db = small_arena.db
    rules = QualityRules(fast_streak=10, fast_seconds=5)
    s = sessions.start(db, "quick", "quick-token", open_signup=True)
    s = _vote_quickly(db, s, rules, n=3, every=2.0)
    assert s.fast_run == 3
    s = _vote_quickly(db, s, rules, n=1, start=2_000_000.0)  # a pause: the run starts again
    assert s.fast_run == 1


@pytest.mark.parametrize("run, trusted, expected", [
    (1, False, None),
    (2, False, "You are voting very fast: votes less than 5 s apart may not count (from 10 in a row they are set "
               "aside). 2 in a row so far"),
    (10, False, "set aside"),
    (3, True, "noted for the admin"),
])
def test_the_warning_text(run, trusted, expected):
    from arena.web.render import speed_notice

    rules = QualityRules(fast_streak=10, fast_seconds=5)
    text = speed_notice(run, rules, source="config" if trusted else "signup")
    if expected is None:
        assert text == ""
    else:
        assert expected in text


def test_the_page_warns_after_a_fast_vote(small_arena):
    from gradio_client import Client
    from support.webapp import running_app

    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        client.predict("quick-voter", "quick-token", api_name="/sign_in")
        first = client.predict(api_name="/vote_a")[0]
        second = client.predict(api_name="/vote_b")[0]  # well under 5 s after the first
    assert "voting very fast" not in first
    assert "You are voting very fast: votes less than 5 s apart may not count" in second
