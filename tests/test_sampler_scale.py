"""The sampler at scale: counts kept vote by vote equal a full read, battles in flight expire, replica draws are
uniform over their candidates, and a draw reads no votes."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arena import session as sessions
from datamodel.annotators import sign_in
from datamodel.battles import Pairing
from datamodel.connection import Store
from datamodel.quality import QualityRules, review_vote
from datamodel.votes import record_vote
from sampling import sampler as sampling
from sampling.counts import BattleCounts
from sampling.draws import Replica, UniformDraw, draw_pairing, draw_replica, serve_battle
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from tools.scale_fixture import ScaleSpec, build_scale_database

pytestmark = pytest.mark.both_engines


def assert_same_counts(stats: SamplingStats, db) -> None:
    """The stats' counts equal a full read of ``db``, exactly (battle counts and candidates included)."""
    assert stats.wait(30)
    fresh, kept = sampling.read_count_tables(db), stats.tables
    assert kept is not None  # the stats have loaded (waited for above)
    for name in ("counts", "pair_counts", "prompt_pair_counts", "prompt_counts"):
        assert np.array_equal(getattr(kept, name), getattr(fresh, name)), name
    assert kept.battles.as_dict() == fresh.battles.as_dict()
    annotators = [row[0] for row in db.execute("SELECT id FROM annotators")] + [None]
    for code in [None, *range(len(fresh.suite_names))]:
        for annotator in annotators:
            assert kept.battles.available(code, annotator) == fresh.battles.available(code, annotator)


def _annotator(db, name):
    return sign_in(db, name, f"token-for-{name}", open_signup=True).id


@pytest.mark.parametrize("strategy", ["balanced", "active"])
def test_counts_kept_vote_by_vote_equal_a_full_read(small_arena, monkeypatch, strategy):
    """Votes from several threads, flags flipped by the quality rules, admin reviews with background re-reads that
    overlap the votes, then votes alone: the counts end up equal to a full read of the database."""
    read, facts = sampling.read_count_tables, sampling.vote_facts

    def slow_read(db, **kwargs):  # votes commit before and after the snapshot while a re-read runs
        time.sleep(0.01)
        tables = read(db, **kwargs)
        time.sleep(0.02)
        return tables

    def slow_facts(db, vote_ids):  # a re-read may take its snapshot between a vote's commit and its note
        time.sleep(0.002)
        return facts(db, vote_ids)

    monkeypatch.setattr(sampling, "read_count_tables", slow_read)
    monkeypatch.setattr(sampling, "vote_facts", slow_facts)
    store = Store(small_arena.settings.database)
    stats = SamplingStats(refit_votes=5)
    sampler = sessions.Sampler(strategy, stats, PromptPool(), replication_share=0.3)
    rules = QualityRules(max_per_hour=8, max_per_3_hours=16, fast_streak=3, fast_seconds=5.0, bias_min_votes=10)
    flips, reviews, errors = [], [], []
    voters, per_voter = 4, 50

    def voter(index: int) -> None:
        try:
            db, rng = store.db(), random.Random(index)
            session = sessions.start(db, f"voter-{index}", "token-001", open_signup=True)
            now = 1_000_000.0 + 10_000 * index
            for _ in range(per_voter):
                now += rng.choice([1.0, 2.0, 30.0, 300.0, 900.0, 3000.0])
                if session.battle is None or session.receipt is not None:
                    session = sessions.next_battle(db, rng, session, sampler=sampler, now=now)
                outcome = "A" if rng.random() < 0.4 else rng.choice(["B", "tie", "both_bad"])
                session = sessions.vote(db, session, outcome, rules=rules, rng=rng, sampler=sampler, now=now)
                assert session.receipt is not None  # a vote was just recorded
                flips.append(len(session.receipt.flag_changes))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    def admin() -> None:  # reviews while the first half of the votes come in, then leaves the rest to them
        try:
            db, rng = store.db(), random.Random(99)
            while len(flips) < voters * per_voter // 2:
                time.sleep(0.02)
                stored = [row[0] for row in db.execute("SELECT id FROM votes ORDER BY id")]  # committed ones: on
                if stored:  # PostgreSQL a lower id may still be in another annotator's open transaction
                    review_vote(db, rng.choice(stored), exclude=rng.random() < 0.5)
                    stats.reload(db)
                    reviews.append(len(flips))
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    stats.start(store.db())
    threads = [threading.Thread(target=voter, args=(i,)) for i in range(voters)] + [threading.Thread(target=admin)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sum(flips[len(flips) // 2 + 20:]) > 0  # the rules flipped earlier votes, also long after the last review
    assert len(reviews) > 3
    assert stats.wait(30)
    counted = small_arena.db.execute("SELECT COUNT(*) FROM votes WHERE excluded = 0").fetchone()[0]
    assert stats.tables.votes == counted and 0.3 * voters * per_voter < counted < 0.95 * voters * per_voter
    assert_same_counts(stats, small_arena.db)
    assert stats.in_flight <= voters  # only the battles still on screen (each voter's last upcoming one)


def test_battles_in_flight_count_until_their_vote_or_expiry(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    now = [0.0]
    stats = SamplingStats(in_flight_seconds=60.0, clock=lambda: now[0]).refresh(db)
    ids, prompt = small_arena.model_ids, small_arena.prompt_ids[0]
    alpha, bravo = ids["alpha-model"], ids["bravo-model"]
    k = stats.tables.pair(alpha, bravo)
    stats.note_served(prompt, alpha, bravo)
    now[0] = 10.0
    stats.note_served(prompt, bravo, alpha)  # the same prompt and pair, drawn again
    assert stats.in_flight == 2 and stats.pair_counts(stats.tables)[k] == 2 and stats.tables.votes == 0
    rows = np.array([stats.tables.prompt_index[prompt]])
    assert stats.prompt_counts(stats.tables, rows, k)[0].tolist() == [2.0]
    now[0] = 20.0  # a vote on that prompt and pair arrives: one battle leaves the flight and becomes a vote
    image = dict(db.execute("SELECT model_id, id FROM images WHERE prompt_id = ?", [prompt]))
    battle = serve_battle(db, random.Random(0), session_id="s", annotator_id=alice,
                          pairing=Pairing(prompt, image[alpha], image[bravo]))
    stats.note_vote(db, record_vote(db, battle.id, "A", session_id="s", rules=None))
    assert stats.in_flight == 1 and stats.pair_counts(stats.tables)[k] == 2 and stats.tables.votes == 1
    now[0] = 61.0  # the first entry expires: it stood for the battle voted on, the other one still flies
    assert stats.in_flight == 1 and stats.pair_counts(stats.tables)[k] == 2
    now[0] = 71.0  # the second expires unvoted: no trace left, nothing below zero
    assert stats.in_flight == 0 and stats.pair_counts(stats.tables)[k] == 1
    assert stats.prompt_counts(stats.tables, rows, k)[0].tolist() == [1.0]
    stats.note_served(prompt, alpha, bravo)
    stats.refresh(db, force=True)  # a full read keeps what is in flight
    assert stats.in_flight == 1 and stats.pair_counts(stats.tables)[k] == 2


def test_draws_wait_for_the_first_read_then_draw_uniformly_and_say_so(small_arena, monkeypatch):
    read, gate = sampling.read_count_tables, threading.Event()

    def gated_read(db, **kwargs):
        gate.wait(10)
        return read(db, **kwargs)

    monkeypatch.setattr(sampling, "read_count_tables", gated_read)
    db = small_arena.db
    stats = SamplingStats(startup_wait_seconds=0.05)
    sampler = sessions.Sampler("balanced", stats, PromptPool(), replication_share=0.5)
    session = sessions.start(db, "early", "token-001", open_signup=True)
    started = time.perf_counter()
    session = sessions.next_battle(db, random.Random(0), session, sampler=sampler)
    assert time.perf_counter() - started < 2.0 and not stats.ready
    assert isinstance(draw_pairing(db, random.Random(1), "balanced", stats=stats), UniformDraw)
    assert db.execute("SELECT strategy FROM battles").fetchall() == [("uniform",)]  # what really drew it
    gate.set()
    assert stats.wait(10) and stats.ready
    session = sessions.vote(db, session, "A", rules=None, rng=random.Random(2), sampler=sampler)
    assert [row[0] for row in db.execute("SELECT strategy FROM battles ORDER BY served_at")] == ["uniform", "balanced"]
    assert stats.tables.votes == 1  # counted by the first read (the vote came after its snapshot, or is in it)


def test_a_catalog_change_is_read_again_in_the_background(small_arena):
    from support.arena import make_image, render_all

    from datamodel.catalog import add_image, add_model

    db = small_arena.db
    stats = SamplingStats(refresh_seconds=0.0).refresh(db)
    new = add_model(db, "echo-model")
    for p, prompt_id in enumerate(small_arena.prompt_ids):
        add_image(db, prompt_id=prompt_id, model_id=new, stored=small_arena.media.put_image(make_image(7, p)))
    render_all(db, small_arena.media)
    stats.refresh(db)
    assert stats.wait(10) and new in stats.tables.model_ids
    seen = Counter(frozenset(_models(db, draw_pairing(db, random.Random(s), "balanced", stats=stats)))
                   for s in range(40))
    assert any(new in pair for pair in seen)


def _models(db, pairing):
    rows = dict(db.execute("SELECT id, model_id FROM images WHERE id IN (?, ?)",
                           [pairing.left_image_id, pairing.right_image_id]).fetchall())
    return rows[pairing.left_image_id], rows[pairing.right_image_id]


def _candidates(db, annotator_id, suite=None):
    """The battles a replica draw may return, by the definition (one SQL scan, as the sampler once did): one
    non-excluded human vote, not by ``annotator_id``, and of a prompt ``annotator_id`` never voted on."""
    where, params = ("AND p.suite = ?", [suite]) if suite else ("", [])
    where += " AND v.prompt_id NOT IN (SELECT prompt_id FROM votes WHERE annotator_id = ?)"
    params.append(annotator_id)
    rows = db.execute(
        f"""
        SELECT v.prompt_id, min(v.left_image_id), min(v.right_image_id), min(v.annotator_id) FROM votes v
        JOIN prompts p ON p.id = v.prompt_id WHERE v.voter_kind = 'human' AND v.excluded = 0 {where}
        GROUP BY v.prompt_id,
                 CASE WHEN v.left_image_id < v.right_image_id THEN v.left_image_id ELSE v.right_image_id END,
                 CASE WHEN v.left_image_id < v.right_image_id THEN v.right_image_id ELSE v.left_image_id END
        HAVING COUNT(*) = 1
        """, params).fetchall()
    return {Replica(*row[:3]) for row in rows if row[3] != annotator_id}


@pytest.mark.parametrize("batch, rounds", [(BattleCounts.BATCH, BattleCounts.ROUNDS), (1, 1)])
def test_replicas_are_valid_and_uniform_over_the_candidates(small_arena, monkeypatch, batch, rounds):
    """Rejection sampling (the default) and the exact pass (forced by a batch of one) both draw every candidate
    about equally often, and nothing else."""
    monkeypatch.setattr(BattleCounts, "BATCH", batch)
    monkeypatch.setattr(BattleCounts, "ROUNDS", rounds)
    db = small_arena.db
    people = [_annotator(db, name) for name in ("alice", "bob", "carol")]
    images = {}
    for prompt_id, image_id in db.execute("SELECT prompt_id, id FROM images"):
        images.setdefault(prompt_id, []).append(image_id)
    battles = [Pairing(p, a, b) for p, ids in sorted(images.items()) for a, b in zip(ids, ids[1:])]
    rng = random.Random(5)
    stats = SamplingStats().refresh(db)
    receipts = []
    for n, pairing in enumerate(battles):
        for voter in rng.sample(people, 1 if n % 3 else 2):  # every third battle has two votes: no candidate
            battle = serve_battle(db, rng, session_id="s", annotator_id=voter, pairing=pairing)
            receipt = record_vote(db, battle.id, "A", session_id="s", rules=None)
            stats.note_vote(db, receipt)
            receipts.append(receipt)
    review_vote(db, receipts[1].vote_id, exclude=True)  # an excluded single vote: no longer a candidate
    stats.reload(db)
    assert stats.wait(10)
    bob, dave = people[1], _annotator(db, "dave")  # dave has no votes: every candidate is his to see
    for suite in (None, "taxonomy"):
        expected = _candidates(db, dave, suite)
        assert len(expected) >= 3
        drawn = Counter(draw_replica(db, rng, suite=suite, annotator_id=dave, stats=stats)
                        for _ in range(300 * len(expected)))
        assert set(drawn) == expected
        assert min(drawn.values()) > 0.75 * 300 and max(drawn.values()) < 1.25 * 300  # about 300 each (sd 17)
        # bob voted on (nearly) every prompt: only the candidates of the prompts he did not see, or none
        drawn = {draw_replica(db, rng, suite=suite, annotator_id=bob, stats=stats) for _ in range(200)}
        assert drawn == (_candidates(db, bob, suite) or {None})
    assert draw_replica(db, rng, suite="no-such-suite", annotator_id=bob, stats=stats) is None


def test_a_replica_draw_for_the_only_voter_finds_none(small_arena):
    db = small_arena.db
    alice = _annotator(db, "alice")
    stats = SamplingStats().refresh(db)
    image = dict(db.execute("SELECT model_id, id FROM images WHERE prompt_id = ?", [small_arena.prompt_ids[0]]))
    first, second = sorted(image.values())[:2]
    battle = serve_battle(db, random.Random(0), session_id="s", annotator_id=alice,
                          pairing=Pairing(small_arena.prompt_ids[0], first, second))
    stats.note_vote(db, record_vote(db, battle.id, "A", session_id="s", rules=None))
    assert draw_replica(db, random.Random(0), annotator_id=alice, stats=stats) is None
    assert draw_replica(db, random.Random(0), annotator_id=None, stats=stats) == Replica(
        small_arena.prompt_ids[0], first, second)


@pytest.fixture(scope="module")
def many_votes(tmp_path_factory):
    """A database with 20,000 votes (6 models, 2,000 prompts: many battles with one vote), from the scale fixture."""
    folder = tmp_path_factory.mktemp("many")
    build_scale_database(ScaleSpec(votes=20_000, annotators=200, models=6, prompts=2_000), folder / "arena.db",
                         folder / "media", progress=lambda *_: None)
    return folder / "arena.db"


def test_a_draw_reads_no_votes(many_votes, tmp_path):
    """Every statement a warm draw runs (adaptive, replica, and the vote's bookkeeping) finds its rows by key:
    none scans the votes or battles."""
    import shutil

    from datamodel.connection import connect

    path = tmp_path / "arena.db"
    shutil.copy(many_votes, path)
    db = connect(path)
    stats = SamplingStats(refresh_seconds=0.0).refresh(db)
    assert stats.tables.votes > 15_000 and stats.tables.battles.candidates > 0
    rng = random.Random(0)
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        for strategy in ("balanced", "active"):
            for _ in range(5):
                pairing = draw_pairing(db, rng, strategy, stats=stats, annotator_id=1, replication_share=0.5)
                battle = serve_battle(db, rng, session_id="s", annotator_id=1, pairing=pairing, strategy=strategy)
                receipt = record_vote(db, battle.id, "A", session_id="s", rules=None)
                stats.note_vote(db, receipt)
    finally:
        db.conn.set_trace_callback(None)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert any("FROM votes WHERE id" in s for s in reads)  # the replica draws and the vote's bookkeeping ran
    for statement in reads:
        plan = " | ".join(row[3] for row in db.execute("EXPLAIN QUERY PLAN " + statement))
        assert "SCAN votes" not in plan and "SCAN v" not in plan and "SCAN battles" not in plan, (statement, plan)
    assert len(reads) <= 10 * 8  # a handful of key lookups per draw and vote
    db.close()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60), st.data())
def test_the_exact_water_level_of_one_row_matches_the_bisection_of_a_batch(weights, data):
    """A server's draw (one row) takes the exact level; the simulation's batches bisect: the same shares."""
    from sampling.strategies import bounded_shares

    weights = np.array(weights)
    available = np.array(data.draw(st.lists(st.booleans(), min_size=len(weights), max_size=len(weights))))
    assume(available.any())
    share = 1.0 / available.sum()
    cap = data.draw(st.sampled_from([1.0, 1.5, 4.0, 8.0, np.inf]))
    low = data.draw(st.sampled_from([0.0, share / (cap if np.isfinite(cap) else 4.0)]))
    one = bounded_shares(weights, available, low, cap * share)
    batched = bounded_shares(weights[None, :], available[None, :], low, cap * share)[0]
    np.testing.assert_allclose(one, batched, atol=1e-12)
    assert one.sum() == pytest.approx(1.0) and (one[~available] == 0).all()


@pytest.mark.parametrize("weights", [[5e-324], [5e-324, 1e-320, 0.0], [1e-300, 1e6, 0.0]])
def test_subnormal_and_tiny_weights_give_finite_shares_in_one_row_and_in_a_batch(weights):
    """Hypothesis found a single weight of 5e-324 gave NaN shares in the one-row (exact level) path: λ = 1/w
    overflowed."""
    from sampling.strategies import bounded_shares

    weights = np.array(weights)
    available = np.ones(len(weights), dtype=bool)
    one = bounded_shares(weights, available, 0.0, 1.0)
    batched = bounded_shares(weights[None, :], available[None, :], 0.0, 1.0)[0]
    assert np.isfinite(one).all() and one.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(one, batched, atol=1e-12)
