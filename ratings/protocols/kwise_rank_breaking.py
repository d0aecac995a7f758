"""``kwise-rank-breaking``: the pairwise votes and the four-image votes in one Bradley–Terry fit, each four-image vote
rank-broken into the pairwise outcomes it implies (:mod:`ratings.kwise`: the best beats the other three; each of the
two middle models beats the worst when one is given; Azari Soufiani, Parkes & Xia 2014; Khetan & Oh 2016).

The log-likelihood maximised, over natural-log strengths θ, is

    ℓ(θ) = Σ_{pairwise decisive votes (w beat l)} log σ(θ_w − θ_l)
         + Σ_{four-image votes v} Σ_{broken pairs (w, l) of v} log σ(θ_w − θ_l)  −  ridge/2 · Σ θ_i²,

the composite (pairwise) likelihood of the Plackett–Luce choices (P(best = i | S) = e^θ_i / Σ_{j∈S} e^θ_j), whose
maximiser is consistent for the Plackett–Luce strengths when the breaking is at separators (Khetan & Oh 2016).

- Ties: a pairwise tie or both-bad leaves the fit (the arena's ``drop`` policy); a four-image vote has none.
- Penalty: a Gaussian prior, ridge 1e-6 by default; the leaderboard gives it the arena protocol's prior
  (``ARENA_RATING_PRIOR_SD``, :func:`ratings.leaderboard.prior_ridge`). Newton's method.
- Scale: 400 points per factor 10 of odds, mean 1000 over the rated models.
- Anchor: none.
- Intervals: ``rounds`` (1000) bootstrap rounds from ``np.random.default_rng(seed)``, each a multinomial redraw of the
  pairwise decisive votes and, independently, of the four-image votes **as whole votes** (a vote's broken pairs stay
  together, being dependent), refitted; 2.5% and 97.5% percentiles.
- Rounding: none in the table; votes, wins and losses in the table count the pairwise votes and the broken pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, cast

import numpy as np

from ratings.bradley_terry import newton_bt
from ratings.kwise import KwiseVotes, broken_pairs, kwise_win_matrix
from ratings.protocols.base import ProtocolFit, RatingProtocol, empty_result
from ratings.votes import EncodedVotes

ELO_PER_NAT = 400.0 / np.log(10.0)


@dataclass(frozen=True)
class KwiseRankBreaking(RatingProtocol):
    name: ClassVar[str] = "kwise-rank-breaking"
    title: ClassVar[str] = "Pairwise and four-image votes, rank-broken, one Bradley–Terry fit"
    source: ClassVar[str] = "ratings.kwise (rank-breaking at separators: Azari Soufiani et al. 2014, Khetan & Oh 2016)"
    ties: ClassVar[str] = "pairwise ties and both-bad left out; a four-image vote has none"
    penalty: ClassVar[str] = "a weak normal prior on each strength (ridge 1e-6), converged"
    scale: ClassVar[str] = "400 points per factor 10 of odds, mean 1000 over the rated models"
    anchor_rule: ClassVar[str] = "none"
    bootstrap: ClassVar[str] = ("1000 rounds, np.random.default_rng(0): the pairwise votes and the four-image votes "
                                "(whole votes) redrawn; 2.5% and 97.5%")
    rounding: ClassVar[str] = "none; the page rounds each rating to what its interval supports"
    when: ClassVar[str] = "an arena with a four-image suite: both kinds of vote on one board"
    flagged_rule: ClassVar[str] = "left out of the fit, as the arena protocol does"
    counts_flagged: ClassVar[bool] = False
    reads_four_image: ClassVar[bool] = True

    rounds: int = 1000
    seed: int = 0
    ridge: float = 1e-6

    def merged(self, votes: EncodedVotes) -> tuple[EncodedVotes, EncodedVotes]:
        """(the table's log, the fit's log) over one model tuple: the table's pairwise log gains each broken pair
        as a win of its winner (outcome A), so the table's counts see them; the fit's is the pairwise votes with the
        four-image ones beside them (``kwise``)."""
        kwise = votes.kwise if isinstance(votes.kwise, KwiseVotes) else KwiseVotes((), np.zeros((0, 4), np.int64),
                                                                                   np.zeros(0, np.int64),
                                                                                   np.zeros(0, np.int64))
        models = tuple(votes.models) + tuple(m for m in kwise.models if m not in votes.models)
        kwise = kwise.remapped(models)
        _, winner, loser = broken_pairs(kwise)
        flagged = votes.flagged_mask()
        wins = np.zeros(len(winner), dtype=np.asarray(votes.outcome).dtype)  # outcome 0 ("A"): the pair's winner won
        table = EncodedVotes(models, np.concatenate([votes.model_a, winner]), np.concatenate([votes.model_b, loser]),
                             np.concatenate([votes.outcome, wins]),
                             np.concatenate([flagged, np.zeros(len(winner), dtype=bool)]))
        pairwise = EncodedVotes(models, votes.model_a, votes.model_b, votes.outcome, flagged)
        return replace(table, kwise=None), replace(pairwise, kwise=kwise)

    def rate(self, votes: EncodedVotes, **options):
        table, pairwise = self.merged(votes)
        if len(table) == 0:
            return empty_result()
        return self.result_table(table, self.fit(pairwise), **options)

    def fit(self, votes: EncodedVotes) -> ProtocolFit:
        if isinstance(votes.kwise, KwiseVotes) and votes.kwise.models == votes.models:
            kwise = votes.kwise
        else:
            _, votes = self.merged(votes)
            kwise = cast(KwiseVotes, votes.kwise)  # merged() puts the four-image votes beside the pairwise ones
        n = votes.n_models
        clean = ~votes.flagged_mask() & np.isin(votes.outcome, (0, 1))
        winner = np.where(votes.outcome[clean] == 0, votes.model_a[clean], votes.model_b[clean])
        loser = np.where(votes.outcome[clean] == 0, votes.model_b[clean], votes.model_a[clean])
        pair_wins = np.zeros((n, n))
        np.add.at(pair_wins, (winner, loser), 1.0)
        wins = pair_wins + kwise_win_matrix(kwise, n)
        fit_votes = (np.bincount(winner, minlength=n) + np.bincount(loser, minlength=n)
                     + np.bincount(kwise.shown.ravel(), minlength=n)).astype(np.int64)
        index = np.flatnonzero(fit_votes > 0)
        rating, lower, upper = (np.full(n, np.nan) for _ in range(3))
        if not len(index):
            return ProtocolFit(rating, lower, upper, fit_votes)
        local = np.ix_(index, index)
        rating[index] = _elo(newton_bt(wins[local], ridge=self.ridge)[0])
        if self.rounds:
            rounds = self._bootstrap(winner, loser, kwise, n)[:, local[0], local[1]]
            fitted = _elo(newton_bt(rounds, ridge=self.ridge)[0])
            lower[index], upper[index] = np.percentile(fitted, [2.5, 97.5], axis=0)
        return ProtocolFit(rating, lower, upper, fit_votes)

    def _bootstrap(self, winner: np.ndarray, loser: np.ndarray, kwise: KwiseVotes, n: int) -> np.ndarray:
        """Win matrices of ``rounds`` redraws: the pairwise decisive votes and the four-image votes (whole votes),
        each a multinomial redraw of its own count."""
        rng = np.random.default_rng(self.seed)
        origin, k_winner, k_loser = broken_pairs(kwise)
        out = np.zeros((self.rounds, n, n))
        pair_weight: np.ndarray | list[int]
        vote_weight: np.ndarray | list[int]
        for r in range(self.rounds):
            pair_weight = rng.multinomial(len(winner), np.full(len(winner), 1 / len(winner))) if len(winner) else []
            vote_weight = rng.multinomial(len(kwise), np.full(len(kwise), 1 / len(kwise))) if len(kwise) else []
            np.add.at(out[r], (winner, loser), pair_weight)
            if len(kwise):
                np.add.at(out[r], (k_winner, k_loser), vote_weight[origin])
        return out


def _elo(theta: np.ndarray) -> np.ndarray:
    """Natural-log strengths (mean 0 per fit) as ratings with mean 1000."""
    theta = np.asarray(theta)
    return 1000.0 + ELO_PER_NAT * (theta - theta.mean(axis=-1, keepdims=True))
