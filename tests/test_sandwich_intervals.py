"""Closed-form (sandwich) intervals: the ``lmarena-2025`` protocol against an independent per-vote computation written
from arena-rank's description, the sandwich against the bootstrap on the same arenas, and the ``arena`` protocol's
sandwich variant."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from core.protocols import get_protocol
from ratings.sandwich import laplacian

SCORE = {"A": 1.0, "B": 0.0, "tie": 0.5, "both_bad": 0.5}
NAMES = ["alpha", "beta", "gamma", "delta", "epsilon"]
TRUE = np.array([1150.0, 1060.0, 1000.0, 960.0, 830.0])


def unbalanced_log(n_votes: int, seed: int) -> pd.DataFrame:
    """Votes of five models, pair (alpha, beta) drawn ten times as often as each other pair, with ties and both-bad
    votes (scored ½ by the protocol), in random sides."""
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    shares = np.array([10.0 if pair == (0, 1) else 1.0 for pair in pairs])
    drawn = rng.choice(len(pairs), size=n_votes, p=shares / shares.sum())
    i, j = np.array(pairs)[drawn].T
    swap = rng.random(n_votes) < 0.5
    a, b = np.where(swap, j, i), np.where(swap, i, j)
    p_a = 1 / (1 + 10 ** ((TRUE[b] - TRUE[a]) / 400))
    draw = rng.random(n_votes)
    outcome = np.where(draw < 0.1, "tie", np.where(draw < 0.15, "both_bad",
                                                  np.where(rng.random(n_votes) < p_a, "A", "B")))
    return pd.DataFrame({"model_a": np.array(NAMES)[a], "model_b": np.array(NAMES)[b], "outcome": outcome})


def arena_rank_by_hand(votes: pd.DataFrame, min_pair_count: int = 50, hessian_reg: float = 1e-5) -> pd.DataFrame:
    """arena-rank's reweighted Bradley–Terry with sandwich intervals, vote by vote as its README and code describe
    it: each vote weighted 1 / max(votes of its unordered pair, 50), the weighted mean logistic loss with soft labels
    minimised from 0 by SciPy (BFGS), the Hessian and the gradient covariance summed over the votes, H + 1e-5·I
    inverted, rating = 400/ln 10 · θ + 1000 ± 1.96 se."""
    names = sorted(set(votes["model_a"]) | set(votes["model_b"]))
    index = {name: k for k, name in enumerate(names)}
    a = votes["model_a"].map(index).to_numpy()
    b = votes["model_b"].map(index).to_numpy()
    y = votes["outcome"].map(SCORE).to_numpy()
    pair = pd.Series([tuple(sorted(p)) for p in zip(a, b)])
    pair_count = pair.map(pair.value_counts()).to_numpy(dtype=float)
    w = 1.0 / np.maximum(pair_count, min_pair_count)
    n, rows = len(names), len(votes)
    x = np.zeros((rows, n))
    x[np.arange(rows), a] = 1.0
    x[np.arange(rows), b] = -1.0

    def loss(theta):
        d = x @ theta
        return -np.sum(w * (y * d - np.logaddexp(0.0, d))) / w.sum()

    def gradient(theta):
        return -x.T @ (w * (y - expit(x @ theta))) / w.sum()

    theta = minimize(loss, np.zeros(n), jac=gradient, method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000}).x
    p = expit(x @ theta)
    hessian = x.T @ (x * (w * p * (1 - p))[:, None]) + hessian_reg * np.eye(n)
    scores = x * (w * (y - p))[:, None]
    inverse = np.linalg.inv(hessian)
    covariance = inverse @ (scores.T @ scores) @ inverse
    alpha = 400 / math.log(10)
    half = 1.959963984540054 * np.sqrt(np.diag(covariance))
    return pd.DataFrame({"rating": alpha * theta + 1000, "lower": alpha * (theta - half) + 1000,
                         "upper": alpha * (theta + half) + 1000}, index=names)


def test_laplacian_assembles_pair_contributions():
    matrix = laplacian(np.array([0, 1, 0]), np.array([1, 2, 1]), np.array([1.0, 2.0, 0.5]), 3)
    assert matrix.tolist() == [[1.5, -1.5, 0.0], [-1.5, 3.5, -2.0], [0.0, -2.0, 2.0]]


@pytest.mark.parametrize("seed", [0, 1])
def test_lmarena_2025_matches_an_independent_per_vote_computation(seed):
    votes = unbalanced_log(3000, seed)
    ours = get_protocol("lmarena-2025").rate_frame(votes).set_index("model")
    reference = arena_rank_by_hand(votes)
    for column in ("rating", "lower", "upper"):
        assert np.abs(ours[column] - reference.loc[ours.index, column]).max() < 0.01, column
    assert ours["rating"].mean() == pytest.approx(1000.0)


def test_the_pair_weights_change_the_fit_and_a_pair_below_the_floor_is_not_upweighted():
    votes = unbalanced_log(3000, 0)
    weighted = get_protocol("lmarena-2025").rate_frame(votes).set_index("model")["rating"]
    plain = get_protocol("lmarena-2025", reweighted=False).rate_frame(votes).set_index("model")["rating"]
    assert np.abs(weighted - plain).max() > 1.0  # the over-drawn pair weighs less: the fit moves
    floor = get_protocol("lmarena-2025", min_pair_count=10_000).rate_frame(votes).set_index("model")["rating"]
    assert np.abs(floor - plain).max() < 1e-6  # every pair below the floor: every vote weighs 1/10000 alike


def test_sandwich_and_bootstrap_intervals_agree_on_one_arena():
    votes = unbalanced_log(6000, 3)
    for name, settings in (("lmarena-2025", {}), ("arena", dict(tie_policy="half"))):
        sandwich = get_protocol(name, intervals="sandwich", **settings).rate_frame(votes).set_index("model")
        boot = get_protocol(name, intervals="bootstrap", rounds=2000, **settings).rate_frame(votes).set_index("model")
        assert np.abs(sandwich["rating"] - boot["rating"]).max() < 1e-9
        width_s, width_b = sandwich["upper"] - sandwich["lower"], boot["upper"] - boot["lower"]
        assert np.abs(width_s / width_b - 1).max() < 0.1, (name, width_s / width_b)


def test_arena_sandwich_pins_the_anchor_and_keeps_its_prior():
    votes = unbalanced_log(2000, 4)
    anchored = get_protocol("arena", intervals="sandwich", anchor=("gamma", 1000.0)).rate_frame(votes)
    row = anchored.set_index("model").loc["gamma"]
    assert row["rating"] == row["lower"] == row["upper"] == 1000.0
    loose = get_protocol("arena", intervals="sandwich").rate_frame(votes).set_index("model")
    strong = get_protocol("arena", intervals="sandwich", ridge=5.0).rate_frame(votes).set_index("model")
    assert ((strong["upper"] - strong["lower"]) < (loose["upper"] - loose["lower"])).all()  # the prior narrows


def test_protocol_settings_refuse_an_unknown_interval_method():
    with pytest.raises(ValueError, match="Unknown interval method 'clt': choose bootstrap"):
        get_protocol("lmarena-2025", intervals="clt").rate_frame(unbalanced_log(100, 0))
    choices = get_protocol("arena", intervals="sandwich").choices()
    assert "sandwich" in choices["bootstrap"]
    assert "redraws" in get_protocol("lmarena-2025", intervals="bootstrap").choices()["bootstrap"]
