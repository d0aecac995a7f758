"""Human + judge votes with prediction-powered inference (ratings.ppi): the estimate against an independent per-vote
solution of its estimating equation, λ = 0 against the arena protocol's own fit and sandwich, and in simulation a
biased judge whose bias the correction removes (the naive pool keeps it) with narrower intervals than people alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import root
from scipy.special import expit

from core.protocols import get_protocol
from ratings.ppi import NO_VOTE, ppi_fit, ppi_ratings
from ratings.votes import EncodedVotes
from tools.coverage import truth
from tools.judge_study import human_and_judge

SCORE = np.array([1.0, 0.0, 0.0, 0.0])  # tie policy "drop": the first model's score of outcomes 0..3 ...
MASS = np.array([1.0, 1.0, 0.0, 0.0])  # ... and whether the vote enters the fit


def study(seed: int, human: int = 1500, judge: int = 12000, bias: float = 150.0):
    rng = np.random.default_rng(seed)
    first, second, people, votes = human_and_judge(rng, truth(), human, judge, bias, 0.7, 5)
    return first[:human], second[:human], people, votes[:human], first[human:], second[human:], votes[human:]


def by_hand(n: int, lo, hi, y, f, j_lo, j_hi, g, lam: float, ridge: float):
    """The PPI estimating equation solved vote by vote with SciPy, and its sandwich covariance from explicit
    per-vote score vectors (numpy.cov), θ with mean 0."""
    paired = f != NO_VOTE
    share = paired.sum() / len(g)
    x_h = np.zeros((len(y), n))
    x_h[np.arange(len(y)), lo], x_h[np.arange(len(y)), hi] = 1.0, -1.0
    x_j = np.zeros((len(g), n))
    x_j[np.arange(len(g)), j_lo], x_j[np.arange(len(g)), j_hi] = 1.0, -1.0
    f_score = np.where(paired, SCORE[np.minimum(f, 3)], 0.0)
    f_mass = np.where(paired, MASS[np.minimum(f, 3)], 0.0)

    def human_terms(theta):
        p = expit(x_h @ theta)
        return x_h * ((SCORE[y] - MASS[y] * p) - lam * (f_score - f_mass * p))[:, None]

    def judge_terms(theta):
        return x_j * (SCORE[g] - MASS[g] * expit(x_j @ theta))[:, None]

    def equation(theta):
        return human_terms(theta).sum(0) + lam * share * judge_terms(theta).sum(0) - ridge * theta

    theta = root(lambda t: np.append(equation(t[:-1]) + t[-1], t[:-1].sum()), np.zeros(n + 1), tol=1e-13).x[:-1]
    variance = (len(y) - 1) * np.cov(human_terms(theta).T) + (lam * share) ** 2 * (len(g) - 1) * np.cov(
        judge_terms(theta).T)
    step = 1e-6
    jacobian = np.array([(equation(theta + step * e) - equation(theta - step * e)) / (2 * step) for e in np.eye(n)]).T
    inverse = np.linalg.pinv(-jacobian)
    centre = np.eye(n) - 1.0 / n
    return theta, centre @ inverse @ variance @ inverse.T @ centre


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_the_ppi_estimate_and_covariance_match_a_per_vote_computation(lam):
    n = len(truth())
    data = study(0, human=600, judge=3000)
    fit = ppi_fit(n, *data, ridge=0.05, lam=lam)
    theta, covariance = by_hand(n, *data, lam=lam, ridge=0.05)
    assert np.abs(fit.theta - theta).max() < 1e-7
    assert np.abs(np.sqrt(np.diag(fit.covariance)) / np.sqrt(np.diag(covariance)) - 1).max() < 1e-4
    assert (fit.human, fit.paired, fit.judge_only, fit.lam) == (600, 600, 3000, lam)


def test_lambda_zero_is_the_arena_protocols_own_fit_and_sandwich():
    first, second, people, *_ = study(1)
    n = len(truth())
    votes = EncodedVotes(tuple(f"m{k}" for k in range(n)), first[:len(people)], second[:len(people)], people)
    arena = get_protocol("arena", intervals="sandwich", ridge=0.19).fit(votes)
    none = np.zeros(0, dtype=np.int64)
    fit = ppi_fit(n, first[:len(people)], second[:len(people)], people, np.full(len(people), NO_VOTE), none, none,
                  none, ridge=0.19)
    rating, lower, upper = ppi_ratings(fit)
    assert fit.lam == 0.0
    np.testing.assert_allclose(rating, arena.rating, atol=1e-6)
    np.testing.assert_allclose(upper - lower, arena.upper - arena.lower, rtol=1e-6)


def test_the_correction_removes_a_biased_judges_bias_and_narrows_the_intervals():
    n, true = len(truth()), truth()
    corrected, human_only, pooled, widths, lams = [], [], [], [], []
    none = np.zeros(0, dtype=np.int64)
    for seed in range(30):
        lo, hi, y, f, j_lo, j_hi, g = study(seed)
        ppi = ppi_ratings(ppi_fit(n, lo, hi, y, f, j_lo, j_hi, g, ridge=0.19))
        alone = ppi_ratings(ppi_fit(n, lo, hi, y, np.full(len(y), NO_VOTE), none, none, none, ridge=0.19))
        pool = ppi_ratings(ppi_fit(n, np.concatenate([lo, j_lo]), np.concatenate([hi, j_hi]), np.concatenate([y, g]),
                                   np.full(len(y) + len(g), NO_VOTE), none, none, none, ridge=0.19))
        corrected.append(ppi[0] - true)
        human_only.append(np.mean((alone[1] <= true) & (true <= alone[2])))
        pooled.append(pool[0][5] - true[5])
        widths.append((np.mean(ppi[2] - ppi[1]), np.mean(alone[2] - alone[1])))
        lams.append(np.mean((ppi[1] <= true) & (true <= ppi[2])))
    assert abs(np.mean(corrected, axis=0)[5]) < 10  # the favoured model: unbiased after the correction ...
    assert np.mean(pooled) > 60  # ... while pooling the judge's votes with people's carries the judge's bias
    assert np.mean(lams) >= 0.9 and np.mean(human_only) >= 0.9  # coverage (the 200-repetition figure: tools.coverage)
    ppi_width, human_width = np.mean(widths, axis=0)
    assert ppi_width < 0.9 * human_width


def test_a_useless_judge_gets_lambda_near_zero():
    n = len(truth())
    rng = np.random.default_rng(5)
    lo, hi, y, f, j_lo, j_hi, g = study(5)
    noise = rng.integers(0, 2, len(f))  # a coin instead of a judge
    fit = ppi_fit(n, lo, hi, y, noise, j_lo, j_hi, rng.integers(0, 2, len(g)), ridge=0.19)
    assert fit.lam < 0.15
    assert math.isfinite(fit.theta.sum())
