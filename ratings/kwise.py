"""Four-image votes as rating data: the K-wise log and its rank-breaking into pairwise outcomes.

A four-image vote shows K = 4 images of one prompt from four models and records the best (and optionally the worst).
Under the Plackett–Luce model (Luce 1959; Plackett 1975) with strengths γ_i = e^θ_i, the best of a shown set S is
model i with probability

    P(best = i | S) = γ_i / Σ_{j∈S} γ_j,

and, given the best, the worst of the remaining set R = S \\ {best} is model w with the reversed choice probability
(1/γ_w) / Σ_{j∈R} (1/γ_j) in the best–worst extension (Marley & Louviere 2005). We do not maximise that likelihood;
we **rank-break** each vote into the pairwise outcomes it implies (Azari Soufiani, Parkes & Xia, "Computing parametric
ranking models via rank-breaking", ICML 2014; Khetan & Oh, "Data-driven rank breaking for efficient rank
aggregation", JMLR 17, 2016):

- the best beats each of the other K − 1 (the best is a *separator*: it is known to be above every other shown model);
- when a worst is given, each of the K − 2 models that are neither best nor worst beats the worst (a second
  separator).

Nothing is said between the middle models, so no pair is made of them. Breaking at separators only keeps the
pairwise Bradley–Terry fit of the broken pairs a consistent estimator of the Plackett–Luce strengths (Khetan & Oh's
breaking at separators; Azari Soufiani et al. show that a "full breaking", which also orders pairs the vote leaves
unordered, is not),
and the broken pairs sit on the same scale as the pairwise votes, so both kinds of vote enter one Bradley–Terry
likelihood (:func:`kwise_win_matrix`). The pairs of one vote are dependent: the bootstrap
(:mod:`ratings.protocols.kwise_rank_breaking`) redraws whole four-image votes, never single broken pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KwiseVotes:
    """Four-image votes as integer arrays: ``shown[k]`` the model indices (into ``models``) of vote k's slots 1-4,
    ``best[k]`` its best slot (0-based), ``worst[k]`` its worst slot (0-based; -1: none given)."""

    models: tuple[str, ...]
    shown: np.ndarray  # (votes, K) int
    best: np.ndarray  # (votes,) int
    worst: np.ndarray  # (votes,) int, -1 where no worst was given

    def __len__(self) -> int:
        return len(self.best)

    @classmethod
    def from_rows(cls, rows, models: tuple[str, ...] | None = None) -> KwiseVotes:
        """From dicts with ``model_1`` .. ``model_4``, ``best`` and ``worst`` (slots 1-4; worst None), as
        :func:`datamodel.kwise.kwise_vote_rows` gives them; ``models`` fixes the model order (default: sorted)."""
        rows = list(rows)
        names = [[row[f"model_{s}"] for s in range(1, 5)] for row in rows]
        models = tuple(models) if models is not None else tuple(sorted({n for four in names for n in four}))
        index = {name: i for i, name in enumerate(models)}
        shown = np.array([[index[n] for n in four] for four in names], dtype=np.int64).reshape(len(rows), 4)
        best = np.array([row["best"] - 1 for row in rows], dtype=np.int64)
        worst = np.array([-1 if row["worst"] is None else row["worst"] - 1 for row in rows], dtype=np.int64)
        return cls(models, shown, best, worst)

    def remapped(self, models: tuple[str, ...]) -> KwiseVotes:
        """The same votes over another model tuple that contains every model of these."""
        index = np.array([models.index(name) for name in self.models], dtype=np.int64)
        return KwiseVotes(tuple(models), index[self.shown] if len(self) else self.shown, self.best, self.worst)


def broken_pairs(votes: KwiseVotes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rank-breaking of ``votes`` (module docstring): (vote index, winner model, loser model), one entry per
    broken pair; K − 1 pairs per vote, plus K − 2 where a worst is given."""
    n, k = votes.shown.shape if len(votes) else (0, 4)
    rows = np.arange(n)
    winners, losers, origin = [], [], []
    best_model = votes.shown[rows, votes.best] if n else np.zeros(0, dtype=np.int64)
    for slot in range(k):
        others = votes.best != slot
        winners.append(best_model[others])
        losers.append(votes.shown[others, slot])
        origin.append(rows[others])
        middle = (votes.worst >= 0) & others & (votes.worst != slot)
        winners.append(votes.shown[middle, slot])
        losers.append(votes.shown[middle, votes.worst[middle]])
        origin.append(rows[middle])
    return (np.concatenate(origin).astype(np.int64), np.concatenate(winners).astype(np.int64),
            np.concatenate(losers).astype(np.int64))


def kwise_win_matrix(votes: KwiseVotes, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """W[i, j] = broken pairs won by i over j (each vote's pairs counted ``weights[vote]`` times; default once)."""
    origin, winner, loser = broken_pairs(votes)
    w = np.ones(len(origin)) if weights is None else np.asarray(weights, dtype=np.float64)[origin]
    wins = np.zeros((n, n))
    np.add.at(wins, (winner, loser), w)
    return wins


def plackett_luce_best(theta: np.ndarray, shown: np.ndarray) -> np.ndarray:
    """P(best = slot) for each row of ``shown`` (votes × K model indices) under Plackett–Luce strengths e^θ."""
    logits = np.asarray(theta)[shown]
    logits = logits - logits.max(axis=1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=1, keepdims=True)
