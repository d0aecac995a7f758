"""``online-elo``: Elo's sequential update over the votes in the order they were cast (FastChat's ``compute_elo``;
``../shared/reference/protocols.md``, "Online Elo"; Elo 1978)::

    E_A = 1 / (1 + 10^((R_B − R_A) / 400)),   R_A ← R_A + K (S_A − E_A),   R_B ← R_B − K (S_A − E_A)

- Ties: a tie and a both-bad score S_A = ½; a win 1, a loss 0.
- Penalty: none; the update size K = 4 plays its part (small K: slow, smooth ratings).
- Scale: base 10, 400 points, every model starts at 1000 (the mean stays 1000).
- Anchor: none.
- Bootstrap: 100 rounds of pandas ``sample(frac=1.0, replace=True)`` after ``np.random.seed(42)`` (FastChat 2023's
  ``get_bootstrap_result(battles, compute_elo)``), each replayed in its drawn order; bounds = 2.5% and 97.5%
  quantiles (NaN rounds skipped). The rating is the single pass over all votes in time order, not the median.
- Rounding: none (printed in whole points). Unlike Bradley–Terry the result depends on the order of the votes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.elo import elo_sequence
from ratings.protocols.base import ProtocolFit, RatingProtocol, fit_votes_of, legacy_bootstrap_rows
from ratings.votes import EncodedVotes

_SCORE = np.array([1.0, 0.0, 0.5, 0.5])  # S_A of A, B, tie, both bad


def replay_rounds(model_a: np.ndarray, model_b: np.ndarray, score: np.ndarray, rows: np.ndarray, n_models: int, *,
                  k: float, initial: float, scale: float) -> np.ndarray:
    """Online Elo of several resamples at once: ``rows[r]`` lists the votes of round r in order (rounds × N); the
    update is applied to every round per step, so the Python loop runs N times whatever the number of rounds.
    Models that a round never draws are NaN in it."""
    rounds, steps = rows.shape
    ratings = np.full((rounds, n_models), float(initial))
    seen = np.zeros((rounds, n_models), dtype=bool)
    every = np.arange(rounds)
    for step in range(steps):
        drawn = rows[:, step]
        a, b, s = model_a[drawn], model_b[drawn], score[drawn]
        expected = 1.0 / (1.0 + np.power(10.0, (ratings[every, b] - ratings[every, a]) / scale))
        delta = k * (s - expected)
        ratings[every, a] += delta
        ratings[every, b] -= delta
        seen[every, a] = True
        seen[every, b] = True
    return np.where(seen, ratings, np.nan)


@dataclass(frozen=True)
class OnlineElo(RatingProtocol):
    name: ClassVar[str] = "online-elo"
    title: ClassVar[str] = "Online Elo (K = 4), in time order"
    source: ClassVar[str] = "FastChat elo_analysis.py compute_elo; Elo (1978)"
    ties: ClassVar[str] = "a tie or both-bad scores ½ for each side"
    penalty: ClassVar[str] = "none (update size K = 4)"
    scale: ClassVar[str] = "base 10, 400 points, every model starts at 1000"
    anchor_rule: ClassVar[str] = "none"
    bootstrap: ClassVar[str] = ("100 rounds of pandas sample(frac=1, replace=True) after np.random.seed(42), each "
                                "replayed in drawn order; 2.5% and 97.5% quantiles")
    rounding: ClassVar[str] = "none (printed in whole points)"
    when: ClassVar[str] = ("following ratings as votes arrive, or comparing with an online-Elo board; it depends "
                           "on vote order and K, so prefer a Bradley–Terry protocol for a final ranking")
    flagged_rule: ClassVar[str] = ("a self-battle updates one model by K (S − ½) and back by K (½ − S), no change (as "
                                   "compute_elo); any other flagged record counted like any vote")

    k: float = 4.0
    initial: float = 1000.0
    scale_points: float = 400.0
    rounds: int = 100
    seed: int = 42

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        if self.k <= 0:
            raise ValueError(f"k must be a positive update size (FastChat uses 4), got {self.k}.")
        if self.rounds < 0:
            raise ValueError(f"rounds must be >= 0 bootstrap rounds, got {self.rounds}.")
        score = _SCORE[votes.outcome]
        seen = fit_votes_of(votes) > 0
        rating = elo_sequence(votes.model_a, votes.model_b, score, votes.n_models, k=self.k, start=self.initial,
                              scale=self.scale_points)
        rating = np.where(seen, rating, np.nan)
        lower = upper = np.full(votes.n_models, np.nan)
        if self.rounds and len(votes):
            rows = np.array(list(legacy_bootstrap_rows(len(votes), self.rounds, self.seed)))
            samples = replay_rounds(votes.model_a, votes.model_b, score, rows, votes.n_models, k=self.k,
                                    initial=self.initial, scale=self.scale_points)
            with np.errstate(all="ignore"):
                lower, upper = np.nanquantile(samples, [0.025, 0.975], axis=0)
        return ProtocolFit(rating, lower, upper, fit_votes_of(votes))
