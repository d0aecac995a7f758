"""Closed-form 95% intervals for a Bradley–Terry fit: the sandwich (CLT) covariance of the M-estimator.

A fit on cells (:class:`ratings.votes.FitCells`: ``count[k]`` votes between models ``i[k]`` and ``j[k]`` in which
``i[k]`` scored ``score[k]``), each vote of cell k weighted by ``weight[k]`` (1 for the plain fit; the inverse pair
frequency for ``lmarena-2025``), maximises

    ℓ(θ) = Σ_k c_k w_k [s_k log p_k + (1 − s_k) log(1 − p_k)] − (ridge / 2) ‖θ‖²,   p_k = σ(θ_{i_k} − θ_{j_k}).

One vote of cell k has the score ∇ℓ_v = w_k (s_k − p_k) x_k with x_k = e_{i_k} − e_{j_k}, so with the bread and the
meat (Huber 1967; White 1980, the heteroskedasticity-consistent "HC0" form)

    H = Σ_k c_k w_k p_k (1 − p_k) x_k x_kᵀ + ridge·I           (the observed information: −∂²ℓ)
    M = Σ_k c_k w_k² (s_k − p_k)² x_k x_kᵀ                     (Σ over votes of ∇ℓ_v ∇ℓ_vᵀ)
    Cov(θ̂) ≈ H⁻¹ M H⁻¹,

and the 95% interval of a rating is R̂ ± z_{0.975} · (scale / ln 10) · √Cov_ii. For an unweighted, unpenalised and
correctly specified fit M → H and this is the inverse Fisher information; with weights, with ties scored ½ or with a
prior the sandwich stays valid where the inverse information is not. This is what LMArena publishes since July 2025
(lmarena's ``arena-rank``, ``BradleyTerry.compute_ratings_and_cis(ci_method="sandwich")``), there with
``H + 1e-5·I`` to invert; here the likelihood's flat direction (all ratings shifted together, H·1 = ridge·1) is
removed exactly: H and M are Laplacians of the comparison graph, M·1 = 0, so Cov·1 = 0 and the covariance is that
of the ratings centred on their mean, which is how the leaderboard reports them. With an anchor (one model pinned),
the variance of R_k is that of R_k − R_anchor: s² (Cov_kk + Cov_aa − 2 Cov_ka).

Cost: two n×n Laplacians from K cells and one n×n solve, against a few hundred to a thousand refits for a bootstrap.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit
from scipy.stats import norm

from ratings.votes import FitCells

LN10 = math.log(10.0)
INTERVAL_METHODS = ("bootstrap", "sandwich")  # how a protocol that offers both makes its 95% intervals


def check_intervals(method: str) -> str:
    """``method`` if it is one of :data:`INTERVAL_METHODS`, else a ValueError naming them."""
    if method not in INTERVAL_METHODS:
        raise ValueError(f"Unknown interval method {method!r}: choose bootstrap (refits of redrawn votes) or "
                         "sandwich (closed form).")
    return method


def laplacian(i: np.ndarray, j: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """Σ_k values_k (e_{i_k} − e_{j_k})(e_{i_k} − e_{j_k})ᵀ as an n×n matrix."""
    values = np.asarray(values, dtype=np.float64)
    flat = np.bincount(i * n + j, values, minlength=n * n) + np.bincount(j * n + i, values, minlength=n * n)
    matrix = -flat.reshape(n, n)
    matrix[np.diag_indices(n)] = np.bincount(i, values, minlength=n) + np.bincount(j, values, minlength=n)
    return matrix


def bread_and_meat(cells: FitCells, theta: np.ndarray, weight: np.ndarray | None = None,
                   ridge: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """H and M of the module docstring for the fit ``theta`` (natural-log strengths of the cells' models)."""
    n = len(theta)
    w = np.ones(len(cells.i)) if weight is None else np.asarray(weight, dtype=np.float64)
    p = expit(theta[cells.i] - theta[cells.j])
    count = cells.count.astype(np.float64)
    bread = laplacian(cells.i, cells.j, count * w * p * (1.0 - p), n) + ridge * np.eye(n)
    meat = laplacian(cells.i, cells.j, count * w * w * (cells.score - p) ** 2, n)
    return bread, meat


def solve_bread(bread: np.ndarray, right: np.ndarray) -> np.ndarray:
    """H⁻¹·right for a bread that may be singular along the all-ones vector (no ridge): solved with H + c·11ᵀ,
    which leaves the answer for a right side orthogonal to 11ᵀ unchanged (as :func:`ratings.newton_bt` does)."""
    n = len(bread)
    shift = max(float(np.trace(bread)) / n / n, 1e-300)
    return np.linalg.solve(bread + shift, right)


def sandwich_covariance(cells: FitCells, theta: np.ndarray, weight: np.ndarray | None = None,
                        ridge: float = 0.0) -> np.ndarray:
    """Cov(θ̂) ≈ H⁻¹ M H⁻¹ (module docstring), the covariance of the mean-centred natural-log strengths."""
    n = len(theta)
    if n == 0:
        return np.zeros((0, 0))
    bread, meat = bread_and_meat(cells, theta, weight, ridge)
    half = solve_bread(bread, meat)
    covariance = solve_bread(bread, half.T)
    centre = np.eye(n) - 1.0 / n
    covariance = centre @ ((covariance + covariance.T) / 2.0) @ centre
    return covariance


def rating_standard_errors(covariance: np.ndarray, *, scale: float = 400.0,
                           anchor_index: int | None = None) -> np.ndarray:
    """Standard errors on the Elo scale (``scale`` points per factor 10 of odds) of the mean-centred ratings, or of
    each rating minus the anchor's (the anchor's own is 0)."""
    variance = np.diag(covariance).copy()
    if anchor_index is not None:
        variance = variance + covariance[anchor_index, anchor_index] - 2.0 * covariance[:, anchor_index]
    return scale / LN10 * np.sqrt(np.maximum(variance, 0.0))


def normal_interval(ratings: np.ndarray, standard_errors: np.ndarray,
                    level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """R ± z·se with z the standard normal's (1 + level)/2 quantile (1.96 for 95%)."""
    z = float(norm.ppf(0.5 + level / 2.0))
    return ratings - z * standard_errors, ratings + z * standard_errors
