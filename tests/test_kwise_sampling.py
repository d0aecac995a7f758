"""The four-image mode's draws (sampling.kwise): K-Sort Arena's UCB rule, and uniform."""

import random

import numpy as np
import pytest

from sampling.kwise import K, KwiseState, choose_models, kwise_state, ucb_four, ucb_scores


def _state(strength, pairs, appearances, total):
    n = len(strength)
    return KwiseState(tuple(range(n)), np.asarray(strength, float), np.asarray(appearances),
                      np.asarray(pairs, float), total)


def test_ucb_score_is_minus_the_strength_gap_plus_the_exploration_bonus():
    pairs = np.array([[0, 4, 1, 9], [4, 0, 2, 2], [1, 2, 0, 3], [9, 2, 3, 0]])
    state = _state([0.0, 0.5, -1.0, 0.1], pairs, [14, 8, 6, 14], total=20)
    scores = ucb_scores(0, state)
    expected = [-np.inf, -0.5 + np.sqrt(np.log(20) / 4), -1.0 + np.sqrt(np.log(20) / 1), -0.1 + np.sqrt(np.log(20) / 9)]
    np.testing.assert_allclose(scores, expected)


def test_a_pair_never_compared_is_explored_first():
    n = 6
    pairs = np.full((n, n), 50.0)
    np.fill_diagonal(pairs, 0)
    pairs[0, 5] = pairs[5, 0] = 0  # the pivot (0: fewest votes) never met model 5, which is far weaker
    state = _state([0, 0.01, 0.02, 0.03, 0.04, -3.0], pairs, [10, 60, 60, 60, 60, 60], total=100)
    picked = ucb_four(state, list(range(n)), random.Random(0))
    assert picked[0] == 0 and 5 in picked


def test_with_equal_counts_the_closest_models_are_picked():
    n = 7
    pairs = np.full((n, n), 30.0)
    np.fill_diagonal(pairs, 0)
    strength = [0.0, 2.0, 0.1, -0.15, 3.0, 0.2, -2.5]
    state = _state(strength, pairs, [10, 20, 20, 20, 20, 20, 20], total=100)
    assert sorted(ucb_four(state, list(range(n)), random.Random(1))) == [0, 2, 3, 5]


def test_the_pivot_is_the_least_compared_model():
    pairs = np.ones((5, 5))
    np.fill_diagonal(pairs, 0)
    state = _state([0] * 5, pairs, [9, 9, 3, 9, 9], total=10)
    for seed in range(5):
        assert ucb_four(state, [0, 1, 2, 3, 4], random.Random(seed))[0] == 2


def test_the_state_counts_pairs_and_fits_strengths_from_the_votes():
    votes = [((11, 12, 13, 14), 1, 4), ((11, 12, 13, 15), 1, None), ((12, 13, 14, 15), 2, None)]
    state = kwise_state((11, 12, 13, 14, 15), votes)
    assert state.total == 3
    assert state.pair_counts[0, 1] == 2 and state.pair_counts[3, 4] == 1 and state.pair_counts[0, 0] == 0
    assert list(state.appearances) == [2, 3, 3, 2, 2]
    assert state.strength[0] == max(state.strength)  # model 11 won both its votes


@pytest.mark.parametrize("strategy", ["uniform", "ksort-ucb"])
def test_four_different_models_every_draw(strategy):
    state = kwise_state((1, 2, 3, 4, 5, 6), [])
    rng = random.Random(2)
    for _ in range(50):
        chosen = choose_models(strategy, state, [1, 2, 3, 4, 5, 6], rng)
        assert len(set(chosen)) == K and set(chosen) <= {1, 2, 3, 4, 5, 6}


def test_uniform_draws_every_set_of_four_alike():
    rng = random.Random(5)
    seen = {}
    for _ in range(3000):
        key = tuple(sorted(choose_models("uniform", None, [1, 2, 3, 4, 5], rng)))
        seen[key] = seen.get(key, 0) + 1
    assert len(seen) == 5 and min(seen.values()) > 500  # 5 sets of four, 600 each expected


def test_too_few_models_or_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="needs images from 4 models"):
        choose_models("uniform", None, [1, 2, 3], random.Random(0))
    with pytest.raises(ValueError, match="Unknown four-image strategy"):
        choose_models("best-first", None, [1, 2, 3, 4], random.Random(0))
