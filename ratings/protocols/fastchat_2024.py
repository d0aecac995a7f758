"""``fastchat-2024``: the Bradley–Terry fit of FastChat's leaderboard since September 2024
(``fastchat/serve/monitor/rating_systems.py``, ``compute_bt`` and ``compute_bootstrap_bt``;
``../shared/reference/protocols.md``, "Peer rating protocols").

- Ties: the log is reduced to its unique (model A, model B, outcome) rows with their counts (models numbered by
  first appearance in the A column, then the B column; rows sorted as ``np.unique`` sorts them); a tie and a
  "tie (bothbad)" have outcome ½, so half a win each way.
- Penalty: none; SciPy L-BFGS-B on the weighted log-loss (a sum over the rows), ``gtol=1e-6``, 100 iterations
  (:func:`ratings.protocols.logistic.scipy_bt`).
- Scale: R = 400·w + 1000 with P(A wins) = σ(ln 10 (w_A − w_B)).
- Anchor: FastChat pins ``mixtral-8x7b-instruct-v0.1`` at 1114 when the log has it (in the fit and in every round),
  and nothing otherwise; pass ``anchor=None`` to leave it out or another (model, rating).
- Bootstrap: ``np.random.default_rng(seed=0).multinomial(N, counts / N, size=100)`` redraws the counts of the unique
  rows; each round is fitted on counts / N; bounds = 2.5% and 97.5% quantiles (linear).
- Rounding: none in the table (printed in whole points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.protocols.base import ProtocolFit, RatingProtocol, apply_anchor, first_appearance, fit_votes_of
from ratings.protocols.logistic import one_blas_thread, scipy_bt
from ratings.votes import EncodedVotes

SCALE, INIT_RATING = 400.0, 1000.0
_OUTCOME_ID = np.array([2, 0, 1, 1])  # A, B, tie, both bad -> FastChat's outcome ids (A win 2, tie 1, B win 0)


@dataclass(frozen=True)
class FastChat2024(RatingProtocol):
    name: ClassVar[str] = "fastchat-2024"
    title: ClassVar[str] = "FastChat / Chatbot Arena since September 2024"
    source: ClassVar[str] = "FastChat rating_systems.py compute_bt / compute_bootstrap_bt (SciPy Bradley–Terry)"
    ties: ClassVar[str] = "unique (A, B, outcome) rows with counts; a tie or both-bad counts ½ to each side"
    penalty: ClassVar[str] = "none; SciPy L-BFGS-B to gtol 1e-6 or 100 iterations"
    scale: ClassVar[str] = "400·w + 1000 (400 points per factor 10 of odds, mean 1000)"
    anchor_rule: ClassVar[str] = ("mixtral-8x7b-instruct-v0.1 at 1114 when the votes have it (as FastChat); "
                                  "optional, any model")
    bootstrap: ClassVar[str] = ("100 multinomial redraws of the unique rows' counts from "
                                "np.random.default_rng(seed=0); 2.5% and 97.5% quantiles")
    rounding: ClassVar[str] = "none (printed in whole points)"
    when: ClassVar[str] = ("checking a log against today's Chatbot Arena-style board; a converged fit without "
                           "penalty with deterministic intervals")
    flagged_rule: ClassVar[str] = ("a self-battle is a unique row whose two sides are one model: its gradient cancels "
                                   "and it adds a constant to the loss, and it counts in N for the bootstrap (as "
                                   "rating_systems.py); any other flagged record counted like any vote")

    tol: float = 1e-6
    max_iter: int = 100
    rounds: int = 100
    seed: int = 0
    anchor: tuple[str, float] | None = ("mixtral-8x7b-instruct-v0.1", 1114.0)
    anchor_required: bool = False

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        if self.rounds < 0:
            raise ValueError(f"rounds must be >= 0 bootstrap rounds, got {self.rounds}.")
        order = first_appearance(votes.model_a, votes.model_b)  # FastChat's model numbering
        local = np.full(votes.n_models, -1, dtype=np.int64)
        local[order] = np.arange(len(order))
        m = len(order)
        key = (local[votes.model_a] * m + local[votes.model_b]) * 3 + _OUTCOME_ID[votes.outcome]
        unique, counts = np.unique(key, return_counts=True)  # np.unique(schedule, axis=0)'s row order
        pair, outcome_id = unique // 3, unique % 3
        row_a, row_b, outcome = pair // m, pair % m, outcome_id / 2.0
        weights = counts.astype(np.float64)
        total = len(votes)
        redrawn = np.random.default_rng(seed=self.seed).multinomial(total, weights / weights.sum(), size=self.rounds)
        with one_blas_thread():
            w = scipy_bt(row_a, row_b, outcome, weights, m, tol=self.tol, max_iter=self.max_iter)
            boot = np.array([scipy_bt(row_a, row_b, outcome, drawn / total, m, tol=self.tol, max_iter=self.max_iter)
                             for drawn in redrawn.astype(np.float64)]).reshape(self.rounds, m)
        rating = np.full(votes.n_models, np.nan)
        samples = np.full((self.rounds, votes.n_models), np.nan)
        rating[order] = SCALE * w + INIT_RATING
        samples[:, order] = SCALE * boot + INIT_RATING
        present = np.zeros(votes.n_models, dtype=bool)
        present[order] = True
        rating = apply_anchor(rating, present, votes.models, self.anchor, self.anchor_required)
        samples = apply_anchor(samples, np.broadcast_to(present, samples.shape), votes.models, self.anchor,
                               self.anchor_required)
        if self.rounds:
            lower, upper = np.quantile(samples, [0.025, 0.975], axis=0)
        else:
            lower = upper = np.full(votes.n_models, np.nan)
        return ProtocolFit(rating, lower, upper, fit_votes_of(votes))
