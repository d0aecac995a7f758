"""``lmarena-2025``: the Bradley–Terry fit LMArena publishes since July 2025 (lmarena's ``arena-rank``:
``PairDataset.from_pandas(reweighted=True)`` with ``BradleyTerry.compute_ratings_and_cis(ci_method="sandwich")``;
``../shared/reference/protocols.md`` says what a published board of that kind holds).

- Ties: a tie and a both-bad vote score ½ to each side (arena-rank's default outcome map), so every vote enters the
  fit; the votes are grouped into (pair, outcome) cells.
- Penalty and weights: each vote is weighted by the inverse of how often its pair of models met, w = 1 / max(N_pair,
  ``min_pair_count``) with N_pair every vote between the two models (``min_pair_count`` 50, as arena-rank), so a pair
  drawn often counts no more in total than a pair drawn 50 times: new models and retired ones are represented
  fairly. No penalty in the likelihood (``ridge`` 1e-6 per vote's mean weight only keeps a model that won or lost
  every vote finite, far below 0.01 Elo otherwise); Newton's method to 1e-10 nats, where arena-rank's L-BFGS stops
  at gtol 1e-9.
- Scale: R = 400·θ / ln 10 + 1000 (400 points per factor 10 of odds), mean 1000; no anchor.
- Intervals: ``intervals="sandwich"`` (the default): R ± 1.96 · se from the sandwich covariance H⁻¹ M H⁻¹ of the
  weighted M-estimator (:mod:`ratings.sandwich`), one linear solve; ``intervals="bootstrap"``: ``rounds`` (100)
  multinomial redraws of the cells' counts with the weights held at the full log's (as arena-rank's
  ``ci_method="bootstrap"``), from ``np.random.default_rng(seed)`` (arena-rank draws with JAX's generator, so its
  rounds are not these), 2.5% and 97.5% quantiles.
- Rounding: none in the table (printed in whole points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.bradley_terry import ConvergenceError, batched_win_matrices, bootstrap_counts, elo_scale, newton_bt
from ratings.protocols.base import ProtocolFit, RatingProtocol, fit_votes_of
from ratings.robustness import PointModel, unit_scores
from ratings.sandwich import check_intervals, normal_interval, rating_standard_errors, sandwich_covariance
from ratings.votes import EncodedVotes, FitCells, count_tensor, fit_cells


def pair_weights(counts: np.ndarray, min_pair_count: int) -> np.ndarray:
    """``W[a, b]``: the weight of each vote between models a and b, 1 / max(N_ab, min_pair_count), with N_ab every
    vote between the two in any position and with any outcome (n×n, symmetric)."""
    pair = counts.sum(axis=2)
    return 1.0 / np.maximum(pair + pair.T, float(min_pair_count))


@dataclass(frozen=True)
class WeightedFit:
    """The weighted fit over the models with votes (``index`` into the log's models): its cells and their votes'
    weights, the ridge it used and θ."""

    index: np.ndarray
    cells: FitCells
    weight: np.ndarray
    ridge: float
    theta: np.ndarray


@dataclass(frozen=True)
class LMArena2025(RatingProtocol):
    name: ClassVar[str] = "lmarena-2025"
    title: ClassVar[str] = "LMArena since July 2025: pair-reweighted Bradley–Terry, sandwich intervals"
    source: ClassVar[str] = ("lmarena arena-rank: PairDataset(reweighted=True), "
                             "BradleyTerry.compute_ratings_and_cis(ci_method='sandwich')")
    ties: ClassVar[str] = "a tie or both-bad counts ½ to each side"
    penalty: ClassVar[str] = ("none; each vote weighted 1 / max(votes of its pair, 50), so every pair counts "
                              "alike; converged")
    scale: ClassVar[str] = "400 points per factor 10 of odds, mean 1000"
    anchor_rule: ClassVar[str] = "none"
    bootstrap: ClassVar[str] = ("none: R ± 1.96 standard errors of the sandwich (CLT) covariance of the weighted "
                                "fit, in closed form")
    rounding: ClassVar[str] = "none (printed in whole points)"
    flagged_rule: ClassVar[str] = ("a self-battle's logit θa − θb is 0 whatever the ratings, so it moves none and is "
                                   "left out of the fit; other flagged records are counted like any vote")
    when: ClassVar[str] = ("a board as LMArena publishes one today: pairs drawn often do not dominate, intervals in "
                           "closed form (a fraction of a bootstrap's time)")

    intervals: str = "sandwich"
    min_pair_count: int = 50
    reweighted: bool = True
    rounds: int = 100  # bootstrap rounds (intervals="bootstrap" only)
    seed: int = 42
    ridge: float = 1e-6

    def interval_rule(self) -> str:
        if self.intervals == "bootstrap":
            return (f"{self.rounds} multinomial redraws of the votes, weights held, np.random.default_rng"
                    f"({self.seed}); 2.5% and 97.5% quantiles")
        return self.bootstrap

    def vote_weights(self, counts: np.ndarray) -> np.ndarray:
        """The n×n weight of each vote by pair (all 1 when not ``reweighted``)."""
        if not self.reweighted:
            return np.ones(counts.shape[:2])
        return pair_weights(counts, self.min_pair_count)

    def weighted_fit(self, counts: np.ndarray) -> WeightedFit:
        """The converged weighted fit of a count tensor (ties and both-bad ½); a self-battle (the diagonal) is left
        out: its logit θa − θb is 0 whatever the ratings, so it moves none (:attr:`flagged_rule`)."""
        n = counts.shape[0]
        counts = counts.copy()
        counts[np.arange(n), np.arange(n)] = 0
        index = np.flatnonzero((counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0)
        remap = np.full(n, -1)
        remap[index] = np.arange(len(index))
        cells = fit_cells(counts, "half")
        weight = self.vote_weights(counts)[cells.i, cells.j]
        local = FitCells(remap[cells.i], remap[cells.j], cells.score, cells.count)
        # the ridge per unit of weight, so that it stays far below the data whatever the weights' scale
        ridge = self.ridge * float(np.average(weight, weights=local.count)) if len(weight) else self.ridge
        theta, ok = newton_bt(local.win_matrix(len(index), local.count * weight), ridge=ridge)
        if not ok:
            raise ConvergenceError("The lmarena-2025 fit did not converge in 100 Newton steps: some model won or "
                                   "lost almost every vote. Pass a larger ridge (e.g. ridge=1e-3).")
        return WeightedFit(index, local, weight, ridge, theta)

    def point_model(self, counts: np.ndarray) -> PointModel:
        """The fit without intervals, for the robustness audit (:mod:`ratings.robustness`)."""
        n = counts.shape[0]
        fit = self.weighted_fit(counts)
        theta = np.full(n, np.nan)
        theta[fit.index] = fit.theta
        weight = np.repeat(self.vote_weights(counts)[:, :, None], 4, axis=2)
        return PointModel(unit_scores(n, "half"), weight, fit.ridge, theta)

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        check_intervals(self.intervals)
        if self.rounds < 0:
            raise ValueError(f"rounds must be >= 0 bootstrap rounds, got {self.rounds}.")
        n = votes.n_models
        fit = self.weighted_fit(count_tensor(votes.model_a, votes.model_b, votes.outcome, n))
        index, local, weight, ridge, theta, m = fit.index, fit.cells, fit.weight, fit.ridge, fit.theta, len(fit.index)
        rating = np.full(n, np.nan)
        lower, upper = np.full(n, np.nan), np.full(n, np.nan)
        rating[index] = elo_scale(theta)
        if self.intervals == "sandwich":
            se = rating_standard_errors(sandwich_covariance(local, theta, weight, ridge))
            lower[index], upper[index] = normal_interval(rating[index], se)
        elif self.rounds and m:
            redrawn = bootstrap_counts(local.count, self.rounds, np.random.default_rng(self.seed))
            weighted = FitCells(local.i, local.j, local.score, np.ones(len(local.i)))
            boot, _ = newton_bt(batched_win_matrices(weighted, m, redrawn * weight), ridge=ridge, theta0=theta)
            lower[index], upper[index] = np.quantile(elo_scale(boot), [0.025, 0.975], axis=0)
        return ProtocolFit(rating, lower, upper, fit_votes_of(votes))
