"""What a leaderboard worker keeps between snapshots (:class:`arena.leaderboard.compute.BoardCache`) never changes a
figure:
after new votes, switched exclusions, a review, a deletion, a new model or a new judge, the board computed with it
is the board computed afresh, to the last bit; and it does read only the new votes and the switched ones."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from support.study import study_database

import datamodel.vote_arrays as vote_arrays
from arena.leaderboard.compute import BoardCache, LeaderboardOptions, compute_leaderboard
from arena.leaderboard.view import render_view
from datamodel.votes import record_vote
from ratings.agreement import consensus_spearman
from ratings.bradley_terry import newton_bt
from sampling.draws import serve_battle
from sampling.strategies import STRATEGIES
from tools.scale_fixture import ScaleSpec

SPEC = ScaleSpec(votes=3_000, annotators=40, models=5, prompts=40, seed=11)
OPTIONS = LeaderboardOptions(rounds=50, min_votes=5, provisional_votes=20, pair_min_shared=3, max_pairs=10,
                             prior_sd=400.0)


@pytest.fixture
def study(tmp_path):
    db = study_database(tmp_path, SPEC)
    yield db
    db.close()


def view(db, options: LeaderboardOptions, cache: BoardCache | None) -> str:
    return json.dumps(render_view(compute_leaderboard(db, options, cache), options, history=[], now=2e9),
                      sort_keys=True, default=str)


def vote(db, rng: random.Random, count: int, *, judge: str | None = None) -> None:
    """``count`` new votes through the arena's own path: served, then voted (people with the quality rules off, so
    that no earlier vote's flag moves)."""
    people = [a for a, in db.execute("SELECT id FROM annotators ORDER BY id")]
    for k in range(count):
        who = {"judge": judge} if judge else {"annotator_id": rng.choice(people)}
        battle = serve_battle(db, rng, session_id=f"s{k}", **who)
        record_vote(db, battle.id, rng.choice(["A", "B", "A", "B", "tie", "both_bad"]), session_id=f"s{k}",
                    rules=None)


def reads(monkeypatch) -> list:
    """The ``ids`` (with the ``also`` ids, if any) of every read_vote_arrays call the cache makes from now on."""
    calls = []
    real = vote_arrays.read_vote_arrays

    def spy(db, strategies=(), **kwargs):
        calls.append(kwargs.get("ids") if not kwargs.get("also") else (*kwargs["ids"], kwargs["also"]))
        return real(db, strategies, **kwargs)

    monkeypatch.setattr(vote_arrays, "read_vote_arrays", spy)
    return calls


def test_each_change_gives_the_fresh_board_and_new_votes_are_read_alone(study, monkeypatch):
    rng, cache = random.Random(4), BoardCache()
    calls = reads(monkeypatch)
    assert view(study, OPTIONS, cache) == view(study, OPTIONS, None)
    assert calls == [(None, 3_000)]
    assert view(study, OPTIONS, cache) == view(study, OPTIONS, None)  # nothing changed: nothing read
    assert calls == [(None, 3_000)]
    sandwich = LeaderboardOptions(**{**OPTIONS.__dict__, "intervals": "sandwich", "tie_policy": "half"})
    assert view(study, sandwich, cache) == view(study, sandwich, None)  # other settings, the same votes
    vote(study, rng, 25)
    vote(study, rng, 5, judge="gpt-judge:scale-judge-1")
    assert view(study, OPTIONS, cache) == view(study, OPTIONS, None)
    assert calls[-1] == (3_000, 3_030)  # only the 30 new votes were read
    excluded = [i for i, in study.execute("SELECT id FROM votes WHERE excluded = 1 ORDER BY id LIMIT 2")]
    study.execute("UPDATE votes SET excluded = 1 WHERE id IN (17, 18)")
    study.execute(f"UPDATE votes SET excluded = 0 WHERE id IN ({excluded[0]}, {excluded[1]})")
    study.conn.commit()
    vote(study, rng, 4)
    for options in (OPTIONS, LeaderboardOptions(**{**OPTIONS.__dict__, "include_excluded": True})):
        assert view(study, options, cache) == view(study, options, None)
    assert calls[-2] == (3_030, 3_034, tuple(sorted([17, 18, *excluded])))  # the new votes and the switched ones
    changes = {  # the change, and whether the slice must be read afresh
        "a review that left the flag": ("UPDATE votes SET reviewed = 1 WHERE id = 30", True),
        "a deletion": ("DELETE FROM votes WHERE id = 40", True),
        "the newest vote deleted, its id given again": ("DELETE FROM votes WHERE id = (SELECT max(id) FROM votes)",
                                                       False),
        "a new model": ("INSERT INTO models (name) VALUES ('aaa-newcomer')", True),
    }
    for change, (sql, afresh) in changes.items():
        study.execute(sql)
        study.conn.commit()
        vote(study, rng, 3)
        assert view(study, OPTIONS, cache) == view(study, OPTIONS, None), change
        assert (calls[-1][0] is None) == afresh, change
    vote(study, rng, 3, judge="gpt-judge:a-new-judge")  # sorts before the others: every judge's code moves
    assert view(study, OPTIONS, cache) == view(study, OPTIONS, None)
    assert calls[-1][0] is None


def test_alternating_slices_keep_their_own_arrays(study):
    rng, cache = random.Random(5), BoardCache()
    taxonomy = LeaderboardOptions(**{**OPTIONS.__dict__, "suite": "taxonomy"})
    for _ in range(3):
        for options in (OPTIONS, taxonomy):
            assert view(study, options, cache) == view(study, options, None)
        vote(study, rng, 10)
    assert len(cache.votes._held) == 2 and len(cache.own_fits) == 2


def test_a_vote_the_counters_do_not_account_for_reads_the_slice_afresh(study, monkeypatch):
    """The counters are read before the largest id: a vote in between leaves them one short, which reads as a change
    the cache was not told of (here simulated by lowering the counter)."""
    cache = vote_arrays.VoteArraysCache()
    first = cache.read(study, STRATEGIES)
    vote(study, random.Random(6), 2)
    study.execute("UPDATE data_versions SET version = version - 1 WHERE name = 'votes'")
    study.conn.commit()
    calls = reads(monkeypatch)
    again = cache.read(study, STRATEGIES)
    assert calls == [(None, 3_002)] and len(again) == len(first) + 2


def test_newton_fits_are_the_same_whatever_shares_their_batch():
    """With independent_rows, a fit computed in any sub-batch (alone included) equals its row of the whole batch
    (12 models: numpy sums 8 or more numbers in another order when they are contiguous)."""
    rng = np.random.default_rng(0)
    wins = rng.poisson(rng.uniform(0, 3, (1, 12, 12)), size=(60, 12, 12)).astype(float)
    wins[:, np.arange(12), np.arange(12)] = 0
    wins[::7, 0, :] = 0  # some fits with an infinite MLE, which take every step
    full, _ = newton_bt(wins, ridge=1e-6, max_iter=20, independent_rows=True)
    for size in (1, 2, 3, 7):
        for start in range(0, 60, size):
            part, _ = newton_bt(wins[start:start + size], ridge=1e-6, max_iter=20, independent_rows=True)
            assert np.array_equal(part, full[start:start + size]), (size, start)


def test_kept_own_fits_give_the_consensus_of_a_fresh_computation():
    rng = np.random.default_rng(1)
    votes = 4_000
    voters, a = rng.integers(0, 60, votes), rng.integers(0, 12, votes)
    b = (a + rng.integers(1, 12, votes)) % 12
    outcomes = rng.choice(4, votes, p=[0.45, 0.35, 0.1, 0.1])
    kept: dict = {}
    for end in (3_000, 3_000, 3_400, 4_000):
        fresh = consensus_spearman(voters[:end], a[:end], b[:end], outcomes[:end], 12)
        assert consensus_spearman(voters[:end], a[:end], b[:end], outcomes[:end], 12, own_fits=kept) == fresh
        assert 0 < len(kept) <= 60
