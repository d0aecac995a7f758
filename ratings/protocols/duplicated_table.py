"""The procedure FastChat 2023 and the taxonomy paper share: scikit-learn's logistic regression on the duplicated
battle table, bootstrapped by pandas row resampling from numpy's legacy generator.

For the whole log and for each bootstrap round: the models that appear (the others get no column, so NaN in that
round), the win matrix of the duplicated table (:func:`ratings.protocols.logistic.duplicated_wins`), w from
:func:`ratings.protocols.logistic.sklearn_logistic_bt`, R = 400·w + 1000, then the anchor if any. A round is the rows
of ``battles.sample(frac=1.0, replace=True)`` after ``np.random.seed(seed)`` (:func:`ratings.protocols.base.
legacy_bootstrap_rows`), so the intervals depend on the order of the log. A self-battle enters as the sources' design
matrix leaves it (:mod:`ratings.protocols.logistic`); another flagged vote counts like any vote, as in the sources.
Without a penalty (``C`` infinite) the fit also says which ratings and bounds have no finite estimate
(:mod:`ratings.divergence`, on the duplicated table's win matrix: a tie is a win each way).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ratings.divergence import bounds_from_rounds, finite_estimate, runaway_models
from ratings.protocols.base import ProtocolFit, RatingProtocol, apply_anchor, fit_votes_of, legacy_bootstrap_rows
from ratings.protocols.logistic import duplicated_wins, one_blas_thread, self_battle_rows, sklearn_logistic_bt
from ratings.votes import EncodedVotes

SCALE, INIT_RATING = 400.0, 1000.0


@dataclass(frozen=True)
class DuplicatedTableProtocol(RatingProtocol):
    """Settings: ``C`` (inverse L2 strength; ``math.inf`` = no penalty), ``tol`` and ``max_iter`` (the lbfgs stop),
    ``rounds`` and ``seed`` (the bootstrap), ``anchor`` = (model, rating) or None, ``anchor_required``."""

    C: float = 1.0
    tol: float = 1e-4
    max_iter: int = 100
    rounds: int = 100
    seed: int = 42
    anchor: tuple[str, float] | None = None
    anchor_required: bool = False

    def quantiles(self, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The 2.5% and 97.5% points of the rounds (linear interpolation), NaN rounds skipped (pandas' quantile)."""
        if samples.shape[0] == 0:
            return np.full(samples.shape[1], np.nan), np.full(samples.shape[1], np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a model absent from every round
            lower, upper = np.nanquantile(samples, [0.025, 0.975], axis=0)
        return lower, upper

    def _ratings(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """R of one count tensor (n×n×4), NaN for the models without a vote in it; and per model whether its rating
        runs off (no finite estimate: only without a penalty)."""
        n = counts.shape[0]
        present = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
        index = np.flatnonzero(present)
        sub = counts[np.ix_(index, index)]
        a, b, o = np.nonzero(sub)
        wins = duplicated_wins(a, b, o, len(index), weights=sub[a, b, o])
        ratings = np.full(n, np.nan)
        ratings[index] = SCALE * sklearn_logistic_bt(wins, C=self.C, tol=self.tol, max_iter=self.max_iter,
                                                     against_zero=self_battle_rows(sub)) + INIT_RATING
        runaway = np.zeros(n, dtype=bool)
        if math.isinf(self.C) and not finite_estimate(wins):
            runaway[index] = runaway_models(wins)
        return ratings, runaway

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        if self.rounds < 0:
            raise ValueError(f"rounds must be >= 0 bootstrap rounds, got {self.rounds}.")
        if not (self.C > 0):
            raise ValueError(f"C must be > 0 (math.inf: no penalty), got {self.C}.")
        n, cells = votes.n_models, 4
        size = n * n * cells
        key = ((votes.model_a.astype(np.int64) * n + votes.model_b) * cells + votes.outcome).astype(
            np.int16 if size < 2**15 else np.int32 if size < 2**31 else np.int64)  # small: a faster gather
        samples = np.full((self.rounds, n), np.nan)
        diverged = np.zeros(self.rounds, dtype=bool)  # rounds whose resample has no finite estimate
        with one_blas_thread():
            rating, runaway = self._ratings(np.bincount(key, minlength=size).reshape(n, n, cells))
            for r, rows in enumerate(legacy_bootstrap_rows(len(votes), self.rounds, self.seed)):
                samples[r], off = self._ratings(np.bincount(key[rows], minlength=size).reshape(n, n, cells))
                diverged[r] = off.any()
        rating = apply_anchor(rating, ~np.isnan(rating), votes.models, self.anchor, self.anchor_required)
        samples = apply_anchor(samples, ~np.isnan(samples), votes.models, self.anchor, self.anchor_required)
        lower, upper = self.quantiles(samples)
        if not math.isinf(self.C):
            return ProtocolFit(rating, lower, upper, fit_votes_of(votes))
        return ProtocolFit(rating, lower, upper, fit_votes_of(votes), runaway, *bounds_from_rounds(samples, diverged))


NO_PENALTY = math.inf
