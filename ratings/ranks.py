"""Ranks that respect the intervals: who is ranked, the rank range each interval allows, and the board's order.

Two vote thresholds (counted among the votes that entered the fit):

- below ``min_votes`` a model is *unranked*: listed with its rating and interval, but it takes no rank and pushes no
  one down (a handful of votes says little, and its interval is wide enough to span the board);
- from ``min_votes`` to ``provisional_votes`` it is ranked but *provisional*: its rank may still move by several
  places as votes come in.

Among the ranked models, with 95% intervals [L_i, U_i]:

    best rank  r⁻_i = 1 + #{j : L_j > U_i}          (the models certainly above i; LMArena's "rank (UB)")
    worst rank r⁺_i = N − #{j : U_j < L_i}          (N ranked models, less those certainly below i)

so the rank range [r⁻_i, r⁺_i] holds every rank consistent with the intervals, and models whose intervals overlap
share part of it. ``order="lower"`` sorts the board by the lower bound L_i (TTS Arena's order: a model rises only when
the votes are sure of it); ``order="rating"`` by the fit itself.
"""

from __future__ import annotations

import numpy as np

ORDERS = ("rating", "lower")


def check_order(order: str) -> str:
    if order not in ORDERS:
        raise ValueError(f"Unknown order {order!r}: order the board by rating (the fit) or lower (the interval's "
                         "lower bound).")
    return order


def vote_status(fit_votes: np.ndarray, rated: np.ndarray, min_votes: int,
                provisional_votes: int) -> tuple[np.ndarray, np.ndarray]:
    """(ranked, provisional) per model: ranked = rated with at least ``min_votes`` votes in the fit; provisional =
    fewer than max(``min_votes``, ``provisional_votes``) (so every unranked model is provisional too)."""
    fit_votes = np.asarray(fit_votes)
    ranked = np.asarray(rated, dtype=bool) & (fit_votes >= min_votes)
    provisional = fit_votes < max(min_votes, provisional_votes)
    return ranked, provisional


def rank_ranges(lower: np.ndarray, upper: np.ndarray, ranked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(best, worst) rank of each model among the ``ranked`` ones (module docstring); NaN for the others."""
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    ranked = np.asarray(ranked, dtype=bool) & np.isfinite(lower) & np.isfinite(upper)
    above = (lower[None, ranked] > upper[:, None]).sum(axis=1)
    below = (upper[None, ranked] < lower[:, None]).sum(axis=1)
    best = np.where(ranked, 1.0 + above, np.nan)
    worst = np.where(ranked, float(ranked.sum()) - below, np.nan)
    return best, worst


def board_order(rating: np.ndarray, lower: np.ndarray, ranked: np.ndarray, votes: np.ndarray, names: list[str],
                order: str = "rating") -> np.ndarray:
    """Row order of a board: the ranked models by ``order`` (rating or lower bound, best first), then the others
    that have a rating by rating, then those without one by votes; ties by name."""
    check_order(order)
    rating, lower = np.asarray(rating, dtype=np.float64), np.asarray(lower, dtype=np.float64)
    key = lower if order == "lower" else rating
    group = np.where(np.asarray(ranked, dtype=bool), 0, np.where(np.isfinite(rating), 1, 2))
    primary = np.where(group == 0, -np.nan_to_num(key, nan=-np.inf),
                       np.where(group == 1, -np.nan_to_num(rating, nan=-np.inf), -np.asarray(votes, float)))
    return np.array(sorted(range(len(names)), key=lambda k: (group[k], primary[k], names[k])), dtype=np.int64)
