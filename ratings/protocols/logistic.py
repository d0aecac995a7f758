"""The two Bradley–Terry fits the published protocols ran, as their libraries ran them, early stops included.

Both fit P(i beats j) = σ(ln 10 · (w_i − w_j)), so that R = 400·w + 1000 is on the Elo scale, starting from w = 0 with
SciPy's L-BFGS-B. The optimiser's stopping rule is part of the result: scikit-learn's default ``tol=1e-4`` stops
several Elo points short of the optimum on real logs, and a protocol that reproduces a published board must stop
where its library stopped. Every gradient sums to zero over the models and the start is 0, so w keeps mean 0 and
the ratings mean 1000 with no recentring (unless a log holds self-battles, below).

Self-battles (a record whose two sides are one model, which a FastChat log can hold): FastChat's
``compute_elo_mle_with_tie`` fills a row's design with ``X[i, a] = +ln 10`` and then ``X[i, b] = −ln 10``; with
a = b the second write wins, so the row is x = −ln 10 at model a alone: P(y = 1) = σ(−ln 10 · w_a), a one-sided
game against a rating of 0. Its label follows the winner as for any row (an A win: y = 1 in both copies, a tie: y = 1
in the first). :func:`sklearn_logistic_bt` takes those rows as ``against_zero[i] = (rows with y = 0, rows with
y = 1)``: the first push w_i up, the second down.

:func:`sklearn_logistic_bt` — scikit-learn's ``LogisticRegression(fit_intercept=False, solver="lbfgs")`` on the
duplicated battle table (FastChat 2023, the taxonomy paper). Each of the S rows is one (winner, loser) pair; scikit-
learn minimises the weighted mean loss plus a penalty scaled by the weights' sum (``sklearn/linear_model/_logistic.py``,
``l2_reg_strength = 1 / (C · S)``)::

    F(w) = (1/S) Σ_ij W_ij log(1 + exp(−ln10 (w_i − w_j))) + ‖w‖² / (2 C S)

with ``W[i, j]`` the rows in which i won, plus, for self-battles, one-sided rows (below), and calls
``scipy.optimize.minimize(method="L-BFGS-B", jac=True)`` with ``maxiter=max_iter, maxls=50, gtol=tol, ftol=64·ε``.
Rows with equal (winner, loser) only add up in W, which leaves F and its gradient unchanged, so the row table is never
built.

:func:`scipy_bt` — FastChat's ``fit_bt`` (since September 2024): the unique (model A, model B, outcome) rows with
their counts as weights, outcome y ∈ {1, ½, 0} for A, tie, B, the weighted log-loss as a *sum*::

    L(w) = −Σ_k c_k [y_k log p_k + (1 − y_k) log(1 − p_k)],   p_k = σ(ln10 (w_{a_k} − w_{b_k}))

minimised by L-BFGS-B with ``maxiter=100, gtol=tol`` and SciPy's other defaults; its bootstrap passes counts
divided by the number of battles, which changes where the same ``gtol`` stops.

Threads: SciPy's L-BFGS-B works on matrices of a few dozen entries, for which a multi-threaded BLAS spends far more
time waking its threads than computing: on this project's 2-core machine one 20-model fit took 16–28 ms with
OpenBLAS's threads and 0.9 ms with one. :func:`one_blas_thread` (threadpoolctl) wraps a protocol's fits.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit
from threadpoolctl import threadpool_limits

LN10 = math.log(10.0)
SKLEARN_FTOL = 64 * np.finfo(float).eps  # scikit-learn's ftol for lbfgs
SKLEARN_MAXLS = 50  # scikit-learn's line-search limit for lbfgs (SciPy's default is 20)


def one_blas_thread():
    """A context in which BLAS runs on one thread (see the module docstring); the results are the same."""
    return threadpool_limits(limits=1, user_api="blas")


def sklearn_logistic_bt(wins: np.ndarray, *, C: float = 1.0, tol: float = 1e-4, max_iter: int = 100,
                        against_zero: np.ndarray | None = None) -> np.ndarray:
    """w of scikit-learn's ``LogisticRegression(fit_intercept=False, C=C, tol=tol, max_iter=max_iter)`` on the
    duplicated battle rows summarised by ``wins`` (n×n, ``wins[i, j]`` = rows won by i against j; the diagonal is
    ignored) and the self-battles' one-sided rows ``against_zero`` (n×2: rows with y = 0, which push w_i up, and
    with y = 1, which push it down); ``C=inf`` is ``penalty=None``. See the module docstring."""
    wins = np.array(wins, dtype=np.float64)
    n = wins.shape[0]
    np.fill_diagonal(wins, 0.0)
    up, down = ((np.zeros(n), np.zeros(n)) if against_zero is None else
                (np.asarray(against_zero, dtype=np.float64)[:, 0], np.asarray(against_zero, dtype=np.float64)[:, 1]))
    total = float(wins.sum() + up.sum() + down.sum())
    if n == 0 or total == 0:
        return np.zeros(n)
    l2 = 0.0 if math.isinf(C) else 1.0 / (C * total)
    rows, cols = np.nonzero(wins)
    weight = wins[rows, cols] / total
    lone = np.flatnonzero(up + down)  # models with one-sided rows
    up_weight, down_weight = up[lone] / total, down[lone] / total

    def loss_and_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = LN10 * (w[rows] - w[cols])  # the winner's raw score in each (winner, loser) cell
        loss = float(np.dot(weight, np.logaddexp(0.0, -margin))) + 0.5 * l2 * float(np.dot(w, w))
        pull = weight * LN10 * expit(-margin)  # −∂/∂w_winner of each cell's loss, +∂/∂w_loser
        gradient = np.bincount(cols, pull, minlength=n) - np.bincount(rows, pull, minlength=n) + l2 * w
        if len(lone):
            score = LN10 * w[lone]
            loss += float(np.dot(up_weight, np.logaddexp(0.0, -score)) + np.dot(down_weight, np.logaddexp(0.0, score)))
            gradient[lone] += LN10 * (down_weight * expit(score) - up_weight * expit(-score))
        return loss, gradient

    result = minimize(loss_and_gradient, np.zeros(n), method="L-BFGS-B", jac=True,
                      options={"maxiter": max_iter, "maxls": SKLEARN_MAXLS, "gtol": tol, "ftol": SKLEARN_FTOL})
    return result.x


def scipy_bt(model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, weights: np.ndarray, n_models: int, *,
             tol: float = 1e-6, max_iter: int = 100) -> np.ndarray:
    """w of FastChat's ``fit_bt`` on unique rows (``model_a[k]``, ``model_b[k]``, ``outcome[k]`` ∈ {1, ½, 0}) with
    ``weights[k]`` (module docstring); models without a row keep w = 0."""
    model_a, model_b = np.asarray(model_a), np.asarray(model_b)
    outcome, weights = np.asarray(outcome, dtype=np.float64), np.asarray(weights, dtype=np.float64)

    def loss_and_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        logit = LN10 * (w[model_a] - w[model_b])
        loss = -float(np.sum((log_expit(logit) * outcome + log_expit(-logit) * (1.0 - outcome)) * weights))
        push = -LN10 * (outcome - expit(logit)) * weights
        gradient = np.bincount(model_a, push, minlength=n_models) - np.bincount(model_b, push, minlength=n_models)
        return loss, gradient

    result = minimize(loss_and_gradient, np.zeros(n_models), method="L-BFGS-B", jac=True,
                      options={"maxiter": max_iter, "gtol": tol})
    return result.x


def duplicated_wins(model_a: np.ndarray, model_b: np.ndarray, outcome: np.ndarray, n_models: int,
                    weights: np.ndarray | None = None) -> np.ndarray:
    """The win matrix of the duplicated battle table (FastChat 2023, the taxonomy code): an A win is two rows won by
    A, a B win two rows won by B, a tie or a both-bad one row won by each (n×n; ``weights`` repeats votes). A
    self-battle lands on the diagonal, which :func:`sklearn_logistic_bt` ignores: see :func:`self_battle_rows`."""
    a, b, o = np.asarray(model_a, dtype=np.int64), np.asarray(model_b, dtype=np.int64), np.asarray(outcome)
    w = np.ones(len(o)) if weights is None else np.asarray(weights, dtype=np.float64)
    a_rows = np.where(o == 0, 2.0, np.where(o >= 2, 1.0, 0.0)) * w
    b_rows = np.where(o == 1, 2.0, np.where(o >= 2, 1.0, 0.0)) * w
    size = n_models * n_models
    wins = np.bincount(a * n_models + b, a_rows, minlength=size) + np.bincount(b * n_models + a, b_rows, minlength=size)
    return wins.reshape(n_models, n_models)


def self_battle_rows(counts: np.ndarray) -> np.ndarray:
    """The one-sided rows of the self-battles of a count tensor (n×n×4), as FastChat's design matrix leaves them
    (module docstring): per model, (rows with y = 0, rows with y = 1) of the duplicated table = (2·B + ties +
    both-bad, 2·A + ties + both-bad) of its self-battles."""
    own = np.asarray(counts, dtype=np.float64)[np.arange(counts.shape[0]), np.arange(counts.shape[0])]  # n×4
    shared = own[:, 2] + own[:, 3]
    return np.stack([2 * own[:, 1] + shared, 2 * own[:, 0] + shared], axis=1)
