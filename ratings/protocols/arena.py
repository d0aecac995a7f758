"""``arena``: the project's own Bradley–Terry fit, the leaderboard's default (:func:`ratings.bradley_terry.
fit_bradley_terry`; numbers unchanged from before protocols existed).

- Ties: the ``tie_policy`` setting (default ``"drop"``: ties and both-bad leave the fit; ``"half"``: half a win each
  way; ``"half_ties_drop_both_bad"``; see :mod:`ratings.votes`).
- Penalty: a Gaussian prior θ_i ~ N(0, 1/ridge) on the natural-log strengths, ``ridge`` 1e-6 by default (far below
  0.001 Elo on ordinary data, but finite ratings for a model that won every vote; the ``rating_prior_sd`` setting
  gives a stronger one: :func:`ratings.leaderboard.prior_ridge`). Newton's method to 1e-10.
- Scale: 400 points per factor 10 of odds, mean 1000 over the rated models, or ``anchor`` = (model, rating).
- Intervals: ``intervals="bootstrap"`` (the default): ``rounds`` (1000) multinomial redraws of the fitted cells'
  counts from ``np.random.default_rng(seed)``, 2.5% and 97.5% percentiles; ``intervals="sandwich"``: R ± 1.96
  standard errors of the sandwich covariance of the (penalised) fit, in closed form (:mod:`ratings.sandwich`).
- Rounding: none in the table; the page rounds each rating to what its interval supports
  (:func:`arena.leaderboard.labels.round_rating`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.bradley_terry import ConvergenceError, fit_bradley_terry, newton_bt
from ratings.protocols.base import ProtocolFit, RatingProtocol
from ratings.robustness import PointModel, unit_scores
from ratings.sandwich import check_intervals, normal_interval, rating_standard_errors, sandwich_covariance
from ratings.votes import EncodedVotes, FitCells, check_tie_policy, count_tensor, fit_cells


@dataclass(frozen=True)
class Arena(RatingProtocol):
    name: ClassVar[str] = "arena"
    title: ClassVar[str] = "This arena's Bradley–Terry fit (the default)"
    source: ClassVar[str] = "ratings.bradley_terry (Newton's method, multinomial bootstrap)"
    ties: ClassVar[str] = "the tie policy (default: ties and both-bad left out of the fit)"
    penalty: ClassVar[str] = "a weak normal prior on each strength (ridge 1e-6 by default), converged"
    scale: ClassVar[str] = "400 points per factor 10 of odds, mean 1000 over the rated models"
    anchor_rule: ClassVar[str] = "none unless one is given"
    bootstrap: ClassVar[str] = "1000 multinomial redraws of the votes, np.random.default_rng(0); 2.5% and 97.5%"
    rounding: ClassVar[str] = "none; the page rounds each rating to what its interval supports"
    when: ClassVar[str] = "this arena's own leaderboard: converged, finite for every model, stable intervals"
    flagged_rule: ClassVar[str] = ("left out of the fit: a self-battle says nothing about ratings, and a record its "
                                   "import flagged is not a clean vote")
    counts_flagged: ClassVar[bool] = False

    tie_policy: str = "drop"
    rounds: int = 1000
    seed: int = 0
    ridge: float = 1e-6
    anchor: tuple[str, float] | None = None
    intervals: str = "bootstrap"

    def interval_rule(self) -> str:
        if self.intervals == "sandwich":
            return "none: R ± 1.96 standard errors of the sandwich (CLT) covariance of the fit, in closed form"
        return f"{self.rounds} multinomial redraws of the votes, np.random.default_rng({self.seed}); 2.5% and 97.5%"

    def point_model(self, counts: np.ndarray) -> PointModel:
        """The fit without intervals, for the robustness audit (:mod:`ratings.robustness`), which refits it many
        times: Newton's method on the fitted models' win matrix, as :func:`ratings.fit_bradley_terry` fits it, without
        that function's checks and messages (a fit that does not converge raises ConvergenceError)."""
        n = counts.shape[0]
        cells = fit_cells(counts, self.tie_policy)
        in_fit = np.bincount(cells.i, cells.count, minlength=n) + np.bincount(cells.j, cells.count, minlength=n)
        index = np.flatnonzero(in_fit > 0)
        remap = np.full(n, -1)
        remap[index] = np.arange(len(index))
        local = FitCells(remap[cells.i], remap[cells.j], cells.score, cells.count)
        theta, ok = newton_bt(local.win_matrix(len(index)), ridge=self.ridge)
        if not ok:
            raise ConvergenceError("The Bradley–Terry fit did not converge in 100 Newton steps.")
        full = np.full(n, np.nan)
        full[index] = theta
        return PointModel(unit_scores(n, self.tie_policy), np.ones((n, n, 4)), self.ridge, full)

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        check_tie_policy(self.tie_policy)
        check_intervals(self.intervals)
        clean = ~votes.flagged_mask()  # flagged votes and self-battles leave the fit (flagged_rule)
        counts = count_tensor(votes.model_a[clean], votes.model_b[clean], votes.outcome[clean], votes.n_models)
        anchor = None
        if self.anchor is not None:
            name, value = self.anchor
            if name not in votes.models:
                raise ValueError(f"Cannot anchor on {name!r}: no vote mentions it. Pick one of: "
                                 f"{', '.join(votes.models)}.")
            anchor = (votes.models.index(name), float(value))
        # only the models with a vote, as the leaderboard has always fitted (the bootstrap draws the same cells)
        seen = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
        index = np.flatnonzero(seen)
        if not len(index):  # every vote flagged: nothing to fit
            nothing = np.full(votes.n_models, np.nan)
            return ProtocolFit(nothing, nothing, nothing, np.zeros(votes.n_models, dtype=np.int64))
        if anchor is not None:
            anchor = (int(np.searchsorted(index, anchor[0])), anchor[1])
        sandwich = self.intervals == "sandwich"
        fit = fit_bradley_terry(counts[np.ix_(index, index)], models=[votes.models[i] for i in index],
                                tie_policy=self.tie_policy, rounds=0 if sandwich else self.rounds, seed=self.seed,
                                ridge=self.ridge, anchor=anchor)
        lower, upper = sandwich_bounds(counts[np.ix_(index, index)], fit, self.tie_policy,
                                       None if anchor is None else anchor[0]) if sandwich else fit.interval(0.95)
        full = [np.full(votes.n_models, np.nan) for _ in range(3)]
        for target, values in zip(full, (fit.ratings, lower, upper)):
            target[index] = values
        fit_votes = np.zeros(votes.n_models, dtype=np.int64)
        fit_votes[index] = fit.fit_votes
        return ProtocolFit(full[0], full[1], full[2], fit_votes)


def sandwich_bounds(counts: np.ndarray, fit, tie_policy: str, anchor_index: int | None) -> tuple[np.ndarray,
                                                                                                np.ndarray]:
    """The 95% sandwich interval of each model of ``fit`` (a :class:`ratings.bradley_terry.BTFit` of ``counts``
    under ``tie_policy``; NaN for a model without votes in the fit)."""
    n = counts.shape[0]
    fitted = np.flatnonzero(fit.fitted)
    remap = np.full(n, -1)
    remap[fitted] = np.arange(len(fitted))
    cells = fit_cells(counts, tie_policy)
    local = FitCells(remap[cells.i], remap[cells.j], cells.score, cells.count)
    covariance = sandwich_covariance(local, fit.theta[fitted], ridge=fit.ridge)
    anchor = None if anchor_index is None else int(remap[anchor_index])
    lower, upper = np.full(n, np.nan), np.full(n, np.nan)
    se = rating_standard_errors(covariance, anchor_index=anchor)
    lower[fitted], upper[fitted] = normal_interval(fit.ratings[fitted], se)
    return lower, upper
