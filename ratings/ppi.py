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


class _Estimate:
    """The votes of :func:`ppi_fit` grouped into cells, and the pieces of the module docstring over them: the
    estimating equation as a win matrix, the scores ψ, their moments, the information and the covariance. Human cells
    are (lo, hi, person's outcome, judge's outcome or NO_VOTE), judge-only cells (lo, hi, judge's outcome), over the
    ``k`` models with a vote (local indices)."""

    def __init__(self, n: int, human: tuple, judge: tuple, tie_policy: str, ridge: float):
        self.t, self.m = _terms(tie_policy)
        self.ridge = ridge
        lo, hi, outcome, judged = (np.asarray(a, dtype=np.int64) for a in human)
        cells = np.bincount(((lo * n + hi) * 4 + outcome) * 5 + judged, minlength=n * n * 20)
        key = np.flatnonzero(cells)
        self.h_count = cells[key].astype(np.float64)
        h_lo, h_hi, self.h_y, self.h_f = key // 20 // n, key // 20 % n, key // 5 % 4, key % 5
        lo, hi, outcome = (np.asarray(a, dtype=np.int64) for a in judge)
        cells = np.bincount((lo * n + hi) * 4 + outcome, minlength=n * n * 4)
        key = np.flatnonzero(cells)
        self.j_count = cells[key].astype(np.float64)
        j_lo, j_hi, self.j_f = key // 4 // n, key // 4 % n, key % 4
        self.human = float(self.h_count.sum())
        self.paired = int(self.h_count[self.h_f != NO_VOTE].sum())
        self.judge_only = int(self.j_count.sum())
        self.share = self.paired / self.judge_only if self.judge_only else 0.0  # n / N
        seen = np.zeros(n, dtype=bool)
        seen[np.concatenate([h_lo, h_hi, j_lo, j_hi])] = True
        self.index = np.flatnonzero(seen)
        local = np.full(n, -1)
        local[self.index] = np.arange(len(self.index))
        self.h_lo, self.h_hi, self.j_lo, self.j_hi = local[h_lo], local[h_hi], local[j_lo], local[j_hi]
        self.k = len(self.index)
        self.centre = np.eye(self.k) - 1.0 / self.k

    def solve(self, lam: float) -> np.ndarray:
        """θ̂ of G_λ(θ) = 0: the Bradley–Terry fit of the corrected win matrix (T, M − T)."""
        t, m, share = self.t, self.m, self.share
        wins = np.zeros((self.k, self.k))
        target = np.concatenate([self.h_count * (t[self.h_y] - lam * t[self.h_f]),
                                 self.j_count * lam * share * t[self.j_f]])
        mass = np.concatenate([self.h_count * (m[self.h_y] - lam * m[self.h_f]),
                               self.j_count * lam * share * m[self.j_f]])
        lo, hi = np.concatenate([self.h_lo, self.j_lo]), np.concatenate([self.h_hi, self.j_hi])
        np.add.at(wins, (lo, hi), target)
        np.add.at(wins, (hi, lo), mass - target)
        theta, ok = newton_bt(wins, ridge=self.ridge)
        if not ok:
            raise ConvergenceError("The human + judge (PPI) fit did not converge: too few paired votes for the judge's "
                                   "correction. Collect more human votes on battles the judge voted on, or pass a "
                                   "larger prior (ARENA_RATING_PRIOR_SD).")
        return theta

    def psi(self, theta: np.ndarray, judge_only: bool, outcome: np.ndarray) -> np.ndarray:
        """Each cell's ψ coefficient t − m σ(θ_lo − θ_hi) for ``outcome`` (0 for NO_VOTE)."""
        lo, hi = (self.j_lo, self.j_hi) if judge_only else (self.h_lo, self.h_hi)
        return self.t[outcome] - self.m[outcome] * expit(theta[lo] - theta[hi])

    def moments(self, judge_only: bool, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Σ c·a·b x xᵀ, Σ c·a x and Σ c·b x over the human (or judge-only) cells, x = e_lo − e_hi."""
        lo, hi, count = (self.j_lo, self.j_hi, self.j_count) if judge_only else (self.h_lo, self.h_hi, self.h_count)
        first = [np.bincount(lo, count * v, minlength=self.k) - np.bincount(hi, count * v, minlength=self.k)
                 for v in (a, b)]
        return laplacian(lo, hi, count * a * b, self.k), first[0], first[1]

    def covariance(self, judge_only: bool, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The sample (cross-)covariance Cov(ψ_a, ψ_b) per vote over the human (or judge-only) votes."""
        total = self.judge_only if judge_only else self.human
        second, first_a, first_b = self.moments(judge_only, a, b)
        return second / total - np.outer(first_a, first_b) / total ** 2

    def information(self, theta: np.ndarray, lam: float) -> np.ndarray:
        """H_λ = −∂G_λ/∂θ."""
        m, p, q = self.m, expit(theta[self.h_lo] - theta[self.h_hi]), expit(theta[self.j_lo] - theta[self.j_hi])
        values = np.concatenate([self.h_count * (m[self.h_y] - lam * m[self.h_f]) * p * (1 - p),
                                 self.j_count * lam * self.share * m[self.j_f] * q * (1 - q)])
        lo, hi = np.concatenate([self.h_lo, self.j_lo]), np.concatenate([self.h_hi, self.j_hi])
        return laplacian(lo, hi, values, self.k) + self.ridge * np.eye(self.k)

    def tuned_lambda(self) -> float:
        """PPI++'s power tuning (module docstring) at the λ = 1 fit, clipped to [0, 1]; 0 without paired or
        judge-only votes."""
        if not (self.paired and self.judge_only):
            return 0.0
        theta = self.solve(1.0)
        y, f = self.psi(theta, False, self.h_y), self.psi(theta, False, self.h_f)
        g = self.psi(theta, True, self.j_f)
        cross = self.covariance(False, y, f)
        judge = self.covariance(False, f, f) + self.paired ** 2 / (self.judge_only * self.human) * self.covariance(
            True, g, g)
        inverse = self.centre @ solve_bread(self.information(theta, 0.0), self.centre) @ self.centre
        weight = inverse @ inverse
        below = 2.0 * np.trace(weight @ judge)
        return float(np.clip(np.trace(weight @ (cross + cross.T)) / below, 0.0, 1.0)) if below > 0 else 0.0

    def theta_covariance(self, theta: np.ndarray, lam: float) -> np.ndarray:
        """H_λ⁻¹ Var(G_λ) H_λ⁻¹ with Var(G_λ) = n_H Cov_H(ψ_Y − λψ_f) + λ² (n/N)² N Cov_U(ψ_f), centred."""
        d = self.psi(theta, False, self.h_y) - lam * self.psi(theta, False, self.h_f)
        variance = self.human * self.covariance(False, d, d)
        if self.judge_only and lam:
            g = self.psi(theta, True, self.j_f)
            variance = variance + (lam * self.share) ** 2 * self.judge_only * self.covariance(True, g, g)
        bread = self.information(theta, lam)
        covariance = solve_bread(bread, solve_bread(bread, variance).T)
        return self.centre @ ((covariance + covariance.T) / 2) @ self.centre


def ppi_fit(n_models: int, human_lo: np.ndarray, human_hi: np.ndarray, human_outcome: np.ndarray,
            judge_outcome: np.ndarray, judge_lo: np.ndarray, judge_hi: np.ndarray, judge_only_outcome: np.ndarray,
            *, tie_policy: str = "drop", ridge: float = 1e-6, lam: float | None = None) -> PPIFit:
    """The PPI++ Bradley–Terry fit (module docstring). Human votes: ``human_lo`` < ``human_hi`` (model indices),
    ``human_outcome`` oriented to ``human_lo`` (0..3), ``judge_outcome`` the judge's on the same battle (0..3, or
    :data:`NO_VOTE`); judge-only votes: ``judge_lo``, ``judge_hi``, ``judge_only_outcome``. ``lam``: a fixed λ
    (None: tuned)."""
    estimate = _Estimate(n_models, (human_lo, human_hi, human_outcome, judge_outcome),
                         (judge_lo, judge_hi, judge_only_outcome), tie_policy, ridge)
    lam = estimate.tuned_lambda() if lam is None else lam
    theta = estimate.solve(lam)
    full_theta = np.full(n_models, np.nan)
    full_theta[estimate.index] = theta
    full_cov = np.full((n_models, n_models), np.nan)
    full_cov[np.ix_(estimate.index, estimate.index)] = estimate.theta_covariance(theta, lam)
    return PPIFit(full_theta, full_cov, lam, int(estimate.human), estimate.paired, estimate.judge_only)


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
