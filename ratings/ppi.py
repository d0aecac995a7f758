"""Human and judge votes in one Bradley–Terry board, with prediction-powered inference (PPI++).

A judge's votes are cheap and many but biased; people's are few and are the truth the board reports. Prediction-
powered inference (Angelopoulos et al. 2023, Science 382:669; Angelopoulos, Duchi & Zrnic 2023, "PPI++", arXiv
2311.01453, §3 for M-estimators; for rankings of language models, Chatzi et al. 2024, arXiv 2402.17826) uses the
judge's votes where there are no human ones, and corrects their bias with the battles both voted on.

The votes, oriented to the model whose name sorts first (x = e_lo − e_hi): a vote has a score t and a mass m under
the tie policy (a win t = m = 1; a loss t = 0, m = 1; a tie or both-bad t = ½, m = 1, or t = m = 0 where the policy
drops it), and ψ(θ) = (t − m σ(θ_lo − θ_hi)) x is its Bradley–Terry score (the gradient of its log-likelihood).

- H: every human vote, with the judge's vote on the same battle where there is one (the *paired* votes, n of them;
  the judge's latest vote on the battle; ψ_f = 0 where there is none);
- U: the judge's votes on battles no person voted on (N of them).

The estimate solves, with λ ∈ [0, 1] and the protocol's prior (ridge),

    G_λ(θ) = Σ_{h ∈ H} [ψ_Y(h) − λ ψ_f(h)] + λ (n / N) Σ_{u ∈ U} ψ_f(u) − ridge·θ = 0.

E[ψ_f] over the paired battles equals E[ψ_f] over the judge-only ones when both are drawn alike (the arena draws its
battles the same way whoever votes), so the two judge terms cancel in expectation whatever the judge's bias and the
estimate targets the human Bradley–Terry ratings; λ = 0 is the human-only fit. G_λ is linear in (t, m), so it is a
Bradley–Terry likelihood equation on a "corrected win matrix" W_lo,hi = T, W_hi,lo = M − T (T, M summed over the
votes with coefficients 1, −λ and λn/N) and is solved by :func:`ratings.newton_bt`.

The covariance is the sandwich of G_λ (votes independent):

    Var(G_λ) = n_H · Cov_H(ψ_Y − λψ_f) + λ² (n/N)² · N · Cov_U(ψ_f),     H_λ = −∂G_λ/∂θ,
    Cov(θ̂) = H_λ⁻¹ Var(G_λ) H_λ⁻¹.

λ is tuned as PPI++ does (its power tuning, clipped to [0, 1]): λ̂ = tr(A(C + Cᵀ)) / (2 tr(A (V_fH + (n/N) V_fU))),
A = H_Y⁻² (the human information's inverse, squared), C = Cov_H(ψ_Y, ψ_f), V_fH = Cov_H(ψ_f), V_fU = Cov_U(ψ_f), all at
the λ = 1 fit; it minimises tr Cov(θ̂), so the intervals are no wider than the human-only ones (up to estimation
noise) and a useless judge gets λ̂ ≈ 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ratings.bradley_terry import ConvergenceError, elo_scale, newton_bt
from ratings.robustness import UNIT_SCORES
from ratings.sandwich import laplacian, normal_interval, rating_standard_errors, solve_bread
from ratings.votes import check_tie_policy

NO_VOTE = 4  # a human vote's judge outcome where the judge did not vote on the battle


@dataclass(frozen=True)
class PPIFit:
    """θ̂ (natural-log strengths, mean 0; NaN for models with no vote), its covariance, the λ used and the vote
    counts: ``human`` votes, ``paired`` of them with a judge vote, ``judge_only`` judge votes on battles no person
    voted on."""

    theta: np.ndarray
    covariance: np.ndarray
    lam: float
    human: int
    paired: int
    judge_only: int


def _terms(tie_policy: str) -> tuple[np.ndarray, np.ndarray]:
    """Score t and mass m of an oriented outcome code (0 = the first model won, 1 = lost, 2 = tie, 3 = both bad,
    4 = no vote) under ``tie_policy``."""
    score = np.array([*UNIT_SCORES[check_tie_policy(tie_policy)], np.nan])
    return np.nan_to_num(score), np.isfinite(score).astype(np.float64)


def ppi_fit(n_models: int, human_lo: np.ndarray, human_hi: np.ndarray, human_outcome: np.ndarray,
            judge_outcome: np.ndarray, judge_lo: np.ndarray, judge_hi: np.ndarray, judge_only_outcome: np.ndarray,
            *, tie_policy: str = "drop", ridge: float = 1e-6, lam: float | None = None) -> PPIFit:
    """The PPI++ Bradley–Terry fit (module docstring). Human votes: ``human_lo`` < ``human_hi`` (model indices),
    ``human_outcome`` oriented to ``human_lo`` (0..3), ``judge_outcome`` the judge's on the same battle (0..3, or
    :data:`NO_VOTE`); judge-only votes: ``judge_lo``, ``judge_hi``, ``judge_only_outcome``. ``lam``: a fixed λ
    (None: tuned)."""
    t, m = _terms(tie_policy)
    n = n_models
    human_key = ((np.asarray(human_lo) * n + human_hi) * 4 + human_outcome) * 5 + judge_outcome
    human_cells = np.bincount(human_key, minlength=n * n * 20)
    judge_key = (np.asarray(judge_lo) * n + judge_hi) * 4 + judge_only_outcome
    judge_cells = np.bincount(judge_key, minlength=n * n * 4)
    hk = np.flatnonzero(human_cells)
    jk = np.flatnonzero(judge_cells)
    h_count, j_count = human_cells[hk].astype(np.float64), judge_cells[jk].astype(np.float64)
    h_lo, h_hi, h_y, h_f = hk // 20 // n, hk // 20 % n, hk // 5 % 4, hk % 5
    j_lo, j_hi, j_f = jk // 4 // n, jk // 4 % n, jk % 4
    paired = int(h_count[h_f != NO_VOTE].sum())
    judge_only = int(j_count.sum())
    share = paired / judge_only if judge_only else 0.0  # n / N
    seen = np.zeros(n, dtype=bool)
    seen[np.concatenate([h_lo, h_hi, j_lo, j_hi])] = True
    index = np.flatnonzero(seen)
    local = np.full(n, -1)
    local[index] = np.arange(len(index))
    h_lo, h_hi, j_lo, j_hi = local[h_lo], local[h_hi], local[j_lo], local[j_hi]
    k = len(index)

    def solve(lam_: float, theta0=None) -> np.ndarray:
        tt = np.concatenate([h_count * (t[h_y] - lam_ * t[h_f]), j_count * lam_ * share * t[j_f]])
        mm = np.concatenate([h_count * (m[h_y] - lam_ * m[h_f]), j_count * lam_ * share * m[j_f]])
        lo, hi = np.concatenate([h_lo, j_lo]), np.concatenate([h_hi, j_hi])
        wins = np.zeros((k, k))
        np.add.at(wins, (lo, hi), tt)
        np.add.at(wins, (hi, lo), mm - tt)
        theta, ok = newton_bt(wins, ridge=ridge, theta0=theta0)
        if not ok:
            raise ConvergenceError("The human + judge (PPI) fit did not converge: too few paired votes for the judge's "
                                   "correction. Collect more human votes on battles the judge voted on, or pass a "
                                   "larger prior (ARENA_RATING_PRIOR_SD).")
        return theta

    def psi(theta, lo, hi, outcome):  # the per-vote coefficient of x
        return t[outcome] - m[outcome] * expit(theta[lo] - theta[hi])

    def second_moment(lo, hi, count, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Σ count·a·b x xᵀ and Σ count·a x (the second moment's sum and the first moment's sum, vector)."""
        first = np.bincount(lo, count * a, minlength=k) - np.bincount(hi, count * a, minlength=k)
        return laplacian(lo, hi, count * a * b, k), first

    def information(theta, lam_: float) -> np.ndarray:
        p = expit(theta[h_lo] - theta[h_hi])
        q = expit(theta[j_lo] - theta[j_hi])
        values = np.concatenate([h_count * (m[h_y] - lam_ * m[h_f]) * p * (1 - p),
                                 j_count * lam_ * share * m[j_f] * q * (1 - q)])
        return laplacian(np.concatenate([h_lo, j_lo]), np.concatenate([h_hi, j_hi]), values, k) + ridge * np.eye(k)

    n_h = float(h_count.sum())
    centre = np.eye(k) - 1.0 / k

    def tuned_lambda(theta) -> float:
        """PPI++'s power tuning (module docstring) at the λ = 1 fit ``theta``, clipped to [0, 1]."""
        y = psi(theta, h_lo, h_hi, h_y)
        f = np.where(h_f == NO_VOTE, 0.0, psi(theta, h_lo, h_hi, h_f))
        g = psi(theta, j_lo, j_hi, j_f)
        s_yf, sum_y = second_moment(h_lo, h_hi, h_count, y, f)
        s_ff, sum_f = second_moment(h_lo, h_hi, h_count, f, f)
        s_gg, sum_g = second_moment(j_lo, j_hi, j_count, g, g)
        cross = s_yf / n_h - np.outer(sum_y, sum_f) / n_h ** 2
        judge_paired = s_ff / n_h - np.outer(sum_f, sum_f) / n_h ** 2
        judge_alone = s_gg / judge_only - np.outer(sum_g, sum_g) / judge_only ** 2
        inverse = centre @ solve_bread(information(theta, 0.0), centre) @ centre
        weight = inverse @ inverse
        above = np.trace(weight @ (cross + cross.T))
        below = 2.0 * np.trace(weight @ (judge_paired + paired ** 2 / (judge_only * n_h) * judge_alone))
        return float(np.clip(above / below, 0.0, 1.0)) if below > 0 else 0.0

    def covariance_of(lam_: float, theta) -> np.ndarray:
        d = psi(theta, h_lo, h_hi, h_y) - lam_ * np.where(h_f == NO_VOTE, 0.0, psi(theta, h_lo, h_hi, h_f))
        s_h, mean_h = second_moment(h_lo, h_hi, h_count, d, d)
        variance = s_h - np.outer(mean_h, mean_h) / n_h
        if judge_only and lam_:
            g = psi(theta, j_lo, j_hi, j_f)
            s_u, mean_u = second_moment(j_lo, j_hi, j_count, g, g)
            variance = variance + (lam_ * share) ** 2 * (s_u - np.outer(mean_u, mean_u) / judge_only)
        bread = information(theta, lam_)
        half = solve_bread(bread, variance)
        covariance = solve_bread(bread, half.T)
        return centre @ ((covariance + covariance.T) / 2) @ centre

    if lam is None:
        lam = tuned_lambda(solve(1.0)) if paired and judge_only else 0.0
    theta = solve(lam)
    covariance = covariance_of(lam, theta)
    full_theta = np.full(n, np.nan)
    full_theta[index] = theta
    full_cov = np.full((n, n), np.nan)
    full_cov[np.ix_(index, index)] = covariance
    return PPIFit(full_theta, full_cov, lam, int(n_h), paired, judge_only)

def ppi_ratings(fit: PPIFit, *, scale: float = 400.0, base: float = 1000.0, anchor_index: int | None = None,
                level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ratings on the Elo scale (mean ``base`` over the rated models) and their ``level`` intervals, R ± z·se of the
    PPI covariance (with ``anchor_index``, the se of each rating less the anchor's, for a board that pins that model
    and shifts the ratings); NaN for models with no vote."""
    rated = np.flatnonzero(np.isfinite(fit.theta))
    n = len(fit.theta)
    rating, lower, upper = (np.full(n, np.nan) for _ in range(3))
    if not len(rated):
        return rating, lower, upper
    local = None if anchor_index is None else int(np.searchsorted(rated, anchor_index))
    rating[rated] = elo_scale(fit.theta[rated], scale=scale, base=base)
    se = rating_standard_errors(fit.covariance[np.ix_(rated, rated)], scale=scale, anchor_index=local)
    lower[rated], upper[rated] = normal_interval(rating[rated], se, level)
    return rating, lower, upper
