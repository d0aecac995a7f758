import random

import pytest

from arena import session as sessions
from arena.ratelimit import RateLimited, RateLimiter
from datamodel.quality import QualityRules, VoteFact, apply_rules, flag_reasons, review_vote
from datamodel.reviews import flagged_votes

pytestmark = pytest.mark.both_engines


def _votes(times, outcomes=None, winners=None):
    outcomes = outcomes or ["tie"] * len(times)
    winners = winners or [None] * len(times)
    return [VoteFact(i + 1, t, o, w) for i, (t, o, w) in enumerate(zip(times, outcomes, winners))]


PUBLIC_ARENA = QualityRules(max_per_hour=30, max_per_3_hours=100)  # the first defaults: the rule's mechanics


def test_the_31st_vote_within_an_hour_is_flagged():
    votes = _votes([i * 60.0 for i in range(31)])  # one a minute: 31 within 30 minutes
    flags = flag_reasons(votes, PUBLIC_ARENA)
    assert sorted(flags) == [31]
    assert flags[31] == "more than 30 votes in an hour"
    assert flag_reasons(_votes([i * 121.0 for i in range(40)]), PUBLIC_ARENA) == {}  # 30 per hour at most


def test_the_101st_vote_within_three_hours_is_flagged():
    times = [i * 107.0 for i in range(101)]  # ~33 per hour but the hour rule is set high here
    flags = flag_reasons(_votes(times), QualityRules(max_per_hour=1000, max_per_3_hours=100))
    assert sorted(flags) == [101] and "100 votes in 3 hours" in flags[101]


def test_ten_fast_votes_in_a_row_are_flagged_nine_are_not():
    nine = [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert flag_reasons(_votes([t * 4.0 for t in nine])) == {}
    ten = [t * 4.0 for t in range(10)] + [100.0, 200.0]
    assert sorted(flag_reasons(_votes(ten))) == list(range(1, 11))


@pytest.mark.parametrize("outcome, winner, reason", [("A", None, "for side A"), (None, "m1", "for model m1")])
def test_side_or_model_bias_flags_all_votes_from_twenty_on(outcome, winner, reason):
    spaced = [i * 600.0 for i in range(20)]
    if outcome:
        outcomes = ["A"] * 16 + ["B"] * 4
        winners = [f"m{i % 4}" for i in range(20)]
    else:
        outcomes = ["A", "B"] * 10
        winners = ["m1"] * 16 + ["m2"] * 4
    flags = flag_reasons(_votes(spaced, outcomes, winners))
    assert sorted(flags) == list(range(1, 21)) and all(reason in r for r in flags.values())
    assert flag_reasons(_votes(spaced[:19], outcomes[:19], winners[:19])) == {}  # fewer than 20: no verdict
    balanced = ["A"] * 15 + ["B"] * 5  # 75%
    assert flag_reasons(_votes(spaced, balanced, [f"m{i % 4}" for i in range(20)])) == {}


def test_flags_are_stored_kept_and_reversible_by_an_admin(small_arena):
    db = small_arena.db
    rules = QualityRules(fast_streak=3, fast_seconds=60)
    s = sessions.start(db, "speedy", "token-001", open_signup=True)
    for i in range(4):
        s = sessions.vote(db, sessions.next_battle(db, random.Random(i), s), "tie", rules=rules)
    rows = db.execute("SELECT id, excluded, excluded_reason FROM votes ORDER BY id").fetchall()
    assert [r[1] for r in rows] == [1, 1, 1, 1] and "consecutive votes" in rows[0][2]
    review_vote(db, rows[0][0], exclude=False)
    apply_rules(db, s.annotator.id, rules)  # the rules leave a reviewed vote alone
    assert db.execute("SELECT excluded, reviewed FROM votes WHERE id = ?", [rows[0][0]]).fetchone() == (0, 1)
    assert db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 4  # nothing deleted
    assert set(flagged_votes(db)["vote_id"]) == {r[0] for r in rows}
    with pytest.raises(LookupError, match="No vote with id 999"):
        review_vote(db, 999, exclude=True)


def test_excluded_votes_leave_the_vote_table_only_when_asked(small_arena):
    from datamodel.vote_table import votes_frame

    db = small_arena.db
    rules = QualityRules(fast_streak=2, fast_seconds=60)
    s = sessions.start(db, "fast", "token-001", open_signup=True)
    for i in range(2):
        s = sessions.vote(db, sessions.next_battle(db, random.Random(i), s), "A", rules=rules)
    assert len(votes_frame(db)) == 2 and len(votes_frame(db, include_excluded=False)) == 0


def test_rate_limiter_refuses_with_the_wait_time():
    now = [0.0]
    limiter = RateLimiter(3, "per annotator", clock=lambda: now[0])
    for _ in range(3):
        limiter.check("alice")
    with pytest.raises(RateLimited, match=r"at most 3 votes per minute per annotator.*again in 60 s"):
        limiter.check("alice")
    limiter.check("bob")  # keys are independent
    now[0] = 60.5
    limiter.check("alice")
    RateLimiter(0, "off").check("anyone")


@pytest.mark.parametrize("seed, shuffled", [(0, False), (1, False), (2, False), (3, True), (4, True)])
def test_windowed_rules_after_each_vote_equal_a_full_recheck(small_arena, seed, shuffled):
    """apply_rules after each vote re-examines only the newest votes (the last 3 hours when a vote arrives out of
    time order); after every vote the flags must be those of all the annotator's votes checked from scratch."""
    from datamodel.quality import annotator_votes
    from datamodel.votes import record_vote
    from sampling.draws import serve_battle

    db, rng = small_arena.db, random.Random(seed)
    rules = QualityRules(max_per_hour=6, max_per_3_hours=12, fast_streak=4, fast_seconds=5, bias_min_votes=8)
    annotator = sessions.start(db, f"a{seed}", "token-001", open_signup=True).annotator
    now = 1_000_000.0
    for i in range(120):
        now += rng.choice([1.0, 2.0, 3.0, 60.0, 300.0, 900.0, 2000.0])
        at = now - rng.choice([0.0, 0.0, 0.0, 2.5, 700.0]) if shuffled else now  # some votes arrive late
        battle = serve_battle(db, rng, session_id="s", annotator_id=annotator.id, now=at)
        outcome = "A" if (i // 20) % 2 == 0 else rng.choice(["A", "B", "tie", "both_bad"])
        receipt = record_vote(db, battle.id, outcome, session_id="s", now=at, rules=rules)
        expected = flag_reasons(annotator_votes(db, annotator.id), rules)
        stored = dict(db.execute("SELECT id, excluded_reason FROM votes WHERE annotator_id = ? AND excluded = 1",
                                 [annotator.id]).fetchall())
        assert stored == expected, f"after vote {i + 1}"
        # the receipt tells the vote's own flag as stored (PostgreSQL takes it from the rules' changes, unread)
        own = db.execute("SELECT excluded, excluded_reason FROM votes WHERE id = ?", [receipt.vote_id]).fetchone()
        assert (int(receipt.excluded), receipt.reason) == tuple(own), f"receipt of vote {i + 1}"
    flagged = db.execute("SELECT COUNT(*) FROM votes WHERE excluded = 1").fetchone()[0]
    assert 0 < flagged < 120
    assert apply_rules(db, annotator.id, rules, full=True) == 0


def test_a_limiter_on_the_database_holds_across_replicas(small_arena):
    """Two app replicas (two stores on one database), requests of one key from many threads of both at once: exactly
    the limit passes, as from one process; another key has its own count; in memory each replica counts alone."""
    import threading

    from arena.ratelimit import RateLimited
    from datamodel.connection import Store

    replicas = [RateLimiter(10, "per annotator", store=Store(small_arena.settings.database)) for _ in range(2)]
    passed, refused = [], []

    def client(k: int) -> None:
        for _ in range(5):
            try:
                replicas[k % 2].check("alice")
                passed.append(k)
            except RateLimited as error:
                refused.append(str(error))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(passed) == 10 and len(refused) == 30
    assert "at most 10 votes per minute per annotator" in refused[0] and " s." in refused[0]
    replicas[1].check("bob")
    alone = [RateLimiter(10, "per annotator") for _ in range(2)]  # each replica in its own memory: 20 pass
    assert sum(1 for k in range(40) if not _refused(lambda k=k: alone[k % 2].check("alice"))) == 20


def _refused(call) -> bool:
    from arena.ratelimit import RateLimited

    try:
        call()
    except RateLimited:
        return True
    return False
