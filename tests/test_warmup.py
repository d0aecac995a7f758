"""New models warm up fast: a model added to a running arena gets its first battles within a few votes, under every
strategy, in the simulation and in the server's draws, and no model warms up at the start of a study."""

from __future__ import annotations

import random

import numpy as np
import pytest
from support.arena import make_image, render_all

from datamodel.annotators import sign_in
from datamodel.catalog import add_image, add_model
from datamodel.votes import record_vote
from sampling.draws import draw_pairing, serve_battle
from sampling.sampler import SamplingStats
from sampling.strategies import STRATEGIES, SamplingParams, pair_index
from sampling.warmup import warming_models, warming_pairs, with_warmup
from tools import simulate

PARAMS = SamplingParams()  # W = 200 battles, at most half of the draws


def test_no_model_warms_up_at_the_start_or_once_it_has_its_battles():
    available = np.ones(6, bool)  # four models
    assert not warming_models(np.zeros(6), available, PARAMS).any()  # a fresh study: everyone equal
    assert not warming_models(np.full(6, 30.0), available, PARAMS).any()  # a young study, all level
    newcomer = np.array([300.0, 300.0, 0.0, 300.0, 0.0, 0.0])  # model 3 has no battle, the others 600 each
    assert warming_models(newcomer, available, PARAMS).tolist() == [False, False, False, True]
    close_behind = np.array([100.0, 100.0, 60.0, 100.0, 60.0, 60.0])  # 180 battles against 260: 80 behind
    assert not warming_models(close_behind, available, PARAMS).any()
    warmed = np.array([300.0, 300.0, 70.0, 300.0, 70.0, 70.0])  # 210 battles: warmed up, however far behind
    assert not warming_models(warmed, available, PARAMS).any()
    assert not warming_models(newcomer, available, SamplingParams(warmup_battles=0)).any()  # switched off
    unplaced = np.array([True, True, False, True, False, False])  # model 3 cannot be shown yet (no images)
    assert not warming_models(newcomer, unplaced, PARAMS).any()


def test_a_warming_model_gets_the_share_and_the_others_keep_the_rest():
    available = np.ones(6, bool)
    counts = np.array([300.0, 300.0, 0.0, 300.0, 0.0, 0.0])
    i, j = pair_index(4)
    touches = (i == 3) | (j == 3)
    assert warming_pairs(counts, available, PARAMS).tolist() == touches.tolist()
    uniform = np.full(6, 1 / 6)
    p = with_warmup(uniform, counts, available, PARAMS)
    assert p.sum() == pytest.approx(1.0)
    assert p[touches].sum() == pytest.approx(0.5 + 0.5 * 0.5)  # the share, plus its half of the rest
    assert p[~touches] == pytest.approx(0.5 * uniform[~touches])  # the cap: the others keep half of their draws
    focused = np.array([0.7, 0.1, 0.0, 0.1, 0.1, 0.0])  # a strategy that gives the newcomer's pairs 0.1 in all
    q = with_warmup(focused, counts, available, PARAMS)  # the warm-up's half follows the strategy among those pairs
    assert q[touches] == pytest.approx(0.5 * focused[touches] + 0.5 * focused[touches] / 0.1)
    # the strategy gives the newcomer nothing: uniform over its pairs
    nothing = np.array([0.5, 0.5, 0.0, 0.0, 0.0, 0.0])
    r = with_warmup(nothing, counts, available, PARAMS)
    assert r[touches] == pytest.approx([0.5 / 3] * 3)
    assert with_warmup(uniform, np.full(6, 50.0), available, PARAMS).tolist() == uniform.tolist()  # nobody warms


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_a_model_added_mid_run_gets_its_first_200_battles_within_a_tenth_of_the_votes_that_follow(strategy):
    """Eight models; the fifth best joins after 1,500 votes; 4,500 votes follow. Without the warm-up its 200 battles
    take about 800 votes under uniform (2 in 8 battles hold it); balanced and active favour a model with few votes
    by themselves."""
    truth = [1100, 1080, 1060, 1040, 1020, 1000, 980, 960]
    arrivals = [0, 0, 0, 0, 1500, 0, 0, 0]
    kwargs = dict(true_elo=truth, arrivals=arrivals, repetitions=4, max_votes=6000, step=50, growth=0.0,
                  bootstrap_rounds=10, coverage_at=None, seed=11)
    result = simulate.simulate_strategy(strategy, **kwargs)
    assert result.warmup_votes.max() <= 0.1 * 4500, result.warmup_votes
    assert result.warmup_share <= 0.1
    assert np.all(result.pair_counts.sum(axis=1) == 6000)
    if strategy == "uniform":  # the test can fail: the published draw alone is too slow
        without = simulate.simulate_strategy(strategy, params=SamplingParams(warmup_battles=0), **kwargs)
        assert without.warmup_votes.min() > 0.1 * 4500, without.warmup_votes


def _annotator(db, name):
    return sign_in(db, name, f"token-for-{name}", open_signup=True).id


def _new_model(arena, name, index):
    model_id = add_model(arena.db, name)
    for p, prompt_id in enumerate(arena.prompt_ids):
        add_image(arena.db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(index, p)))
    render_all(arena.db, arena.media, arena.settings)
    return model_id


@pytest.mark.parametrize("strategy", ["uniform", "active"])
def test_the_servers_draws_warm_up_a_model_added_mid_run(small_arena, strategy):
    """Four models with 120 votes; a fifth is added; with W = 20 battles and the default share ½ it gets them within
    30 votes (a fifth model alone would be in 2 of 5 battles: 20 battles in about 50 votes)."""
    db = small_arena.db
    alice = _annotator(db, "alice")
    params = SamplingParams(warmup_battles=20)
    stats = SamplingStats(params)
    rng = random.Random(5)

    def cast():
        pairing = draw_pairing(db, rng, strategy, stats=stats)
        battle = serve_battle(db, rng, session_id="s", annotator_id=alice, pairing=pairing)
        stats.note_vote(db, record_vote(db, battle.id, "A", session_id="s", rules=None))
        images = [pairing.left_image_id, pairing.right_image_id]
        return {row[0] for row in db.execute(f"SELECT model_id FROM images WHERE id IN ({images[0]}, {images[1]})")}

    for _ in range(120):
        cast()
    newcomer = _new_model(small_arena, "echo-model", 4)
    stats.refresh(db, force=True)
    seen = [newcomer in cast() for _ in range(30)]
    assert sum(seen) >= 20, sum(seen)
    later = [newcomer in cast() for _ in range(100)]  # warmed up: back to the strategy's own share
    assert sum(later) < 75
