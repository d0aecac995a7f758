"""``arena``: the project's own Bradley–Terry fit, the leaderboard's default (:func:`ratings.bradley_terry.
fit_bradley_terry`; numbers unchanged from before protocols existed).

- Ties: the ``tie_policy`` setting (default ``"drop"``: ties and both-bad leave the fit; ``"half"``: half a win each
  way; ``"half_ties_drop_both_bad"``; see :mod:`ratings.votes`).
- Penalty: a Gaussian prior θ_i ~ N(0, 1/ridge) on the natural-log strengths, ``ridge`` 1e-6 by default (far below
  0.001 Elo on ordinary data, but finite ratings for a model that won every vote; the ``rating_prior_sd`` setting
  gives a stronger one: :func:`ratings.leaderboard.prior_ridge`). Newton's method to 1e-10.
- Scale: 400 points per factor 10 of odds, mean 1000 over the rated models, or ``anchor`` = (model, rating).
- Bootstrap: ``rounds`` (1000) multinomial redraws of the fitted cells' counts from ``np.random.default_rng(seed)``;
  2.5% and 97.5% percentiles.
- Rounding: none in the table; the page rounds each rating to what its interval supports
  (:func:`ratings.leaderboard.round_rating`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ratings.bradley_terry import fit_bradley_terry
from ratings.protocols.base import ProtocolFit, RatingProtocol
from ratings.votes import EncodedVotes, check_tie_policy, count_tensor


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

    tie_policy: str = "drop"
    rounds: int = 1000
    seed: int = 0
    ridge: float = 1e-6
    anchor: tuple[str, float] | None = None

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        check_tie_policy(self.tie_policy)
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
        fit = fit_bradley_terry(counts[np.ix_(index, index)], models=[votes.models[i] for i in index],
                                tie_policy=self.tie_policy, rounds=self.rounds, seed=self.seed, ridge=self.ridge,
                                anchor=anchor)
        lower, upper = fit.interval(0.95)
        full = [np.full(votes.n_models, np.nan) for _ in range(3)]
        for target, values in zip(full, (fit.ratings, lower, upper)):
            target[index] = values
        fit_votes = np.zeros(votes.n_models, dtype=np.int64)
        fit_votes[index] = fit.fit_votes
        return ProtocolFit(*full, fit_votes)
