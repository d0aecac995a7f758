"""The simulated four-image votes (sampling.kwise_simulation) and their rows in python -m tools.simulate."""

import random

import numpy as np

from ratings.kwise import plackett_luce_best
from sampling import kwise_simulation as sim
from sampling.kwise import KwiseState, ucb_four
from tools import simulate


def test_the_simulated_best_follows_plackett_luce():
    rng = np.random.default_rng(0)
    theta = np.array([0.9, 0.2, -0.1, -0.6, 0.4])
    chosen = np.tile([3, 0, 4, 1], (40000, 1))
    best, worst = sim._vote(rng, theta, chosen, worst_share=1.0)
    shares = np.bincount(best, minlength=4) / len(best)
    np.testing.assert_allclose(shares, plackett_luce_best(theta, chosen[:1])[0], atol=0.01)
    assert np.all(worst != best) and np.all(worst >= 0)
    # the worst of the other three by e^-θ: slot 0 (θ = -0.6) is the likeliest worst
    assert np.bincount(worst, minlength=4).argmax() == 0


def test_the_vectorised_ucb_draw_is_the_servers_rule():
    rng = np.random.default_rng(1)
    n = 7
    strength = rng.normal(size=n)
    pairs = rng.integers(1, 30, size=(n, n)).astype(float)
    pairs = pairs + pairs.T
    np.fill_diagonal(pairs, 0)
    shown = np.array([20, 9, 31, 40, 22, 35, 27], dtype=float)  # model 1 is the least shown: the pivot
    drawn = sim._draw_ucb(rng, np.ones(n, bool), strength[None], shown[None], pairs[None], votes=100)[0]
    state = KwiseState(tuple(range(n)), strength, shown.astype(int), pairs, 100)
    assert drawn[0] == 1 and sorted(drawn) == sorted(ucb_four(state, list(range(n)), random.Random(0)))


def test_main_prints_four_image_rows_and_their_hours(capsys):
    code = simulate.main(["--repetitions", "2", "--max-votes", "600", "--step", "100", "--bootstrap-rounds", "10",
                          "--coverage-at", "0", "--strategies", "uniform"])
    assert code == 0
    out = capsys.readouterr().out
    for name in ("four-uniform", "four-ksort-ucb"):
        assert any(line.startswith(name) and "four-image" in line and f"{simulate.TimeModel().four_image_seconds:6.2f}"
                   in line for line in out.splitlines()), out
    assert "breaks even with uniform pairwise on Spearman at" in out
    assert simulate.main(["--four-image", "thurstone"]) == 2
