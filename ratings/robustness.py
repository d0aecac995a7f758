"""How fragile the top of a board is: the fewest votes whose removal changes who holds each of the top k places.

Huang et al. (arXiv 2508.11847, ICLR 2026) showed that dropping 2 of Chatbot Arena's 57,477 votes can change its #1.
Finding the fewest votes exactly is a combinatorial search; their method, followed here, approximates the effect of
dropping votes with the influence function of the fit and then checks the answer by refitting without them.

The fit. A Bradley–Terry protocol's point fit maximises ℓ(θ) = Σ_u c_u w_u [s_u log p_u + (1 − s_u) log(1 − p_u)]
− (ridge/2)‖θ‖² over *units* u = (model shown left a, model shown right b, outcome o) of the count tensor, with c_u
votes of score s_u for a (1, 0 or ½; a unit the tie policy drops has none), weight w_u per vote and
p_u = σ(θ_a − θ_b) (:class:`PointModel`, which each protocol that supports the audit provides).

The influence. Dropping one vote of unit u moves the fit by about Δθ ≈ −H⁻¹ g_u, with the vote's score
g_u = w_u (s_u − p_u)(e_a − e_b) and H the information of :mod:`ratings.sandwich` (Koh & Liang 2017; Broderick et
al. 2020, "An automatic finite-sample robustness metric"). The gap between two models, d = θ_x − θ_y, then moves by
δ_u = −w_u (s_u − p_u)(v_a − v_b), v = H⁻¹(e_x − e_y), the same for every vote of the unit.

The search, for the model x holding place r of the ranked models (by point rating): for every other ranked model y,
take votes greedily from the units with the most negative δ (if x is above y; most positive otherwise) until the
predicted gap changes sign: m_y votes. The approximation is the smallest m_y. It is then *confirmed by refitting*
without those votes (the protocol's own point fit, its weights recomputed), and the count is tightened or grown along
the same greedy order until the refit's place r is held by another model: the reported count is the smallest number
of votes, in that order, whose removal a refit confirms. It is an upper bound on the true minimum (a cleverer choice
could need fewer), and the first approximation is reported beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from ratings.bradley_terry import ConvergenceError
from ratings.sandwich import laplacian, solve_bread
from ratings.votes import OUTCOMES

TOP_K = 3
# the score of the model shown left for one vote of each outcome (A, B, tie, both bad) under each tie policy; NaN: the
# vote leaves the fit (ratings.votes)
UNIT_SCORES = {"drop": (1.0, 0.0, np.nan, np.nan), "half": (1.0, 0.0, 0.5, 0.5),
               "half_ties_drop_both_bad": (1.0, 0.0, 0.5, np.nan)}


def unit_scores(n_models: int, tie_policy: str) -> np.ndarray:
    """The n×n×4 score tensor of :class:`PointModel` under ``tie_policy``."""
    return np.broadcast_to(np.array(UNIT_SCORES[tie_policy]), (n_models, n_models, 4)).copy()


@dataclass(frozen=True)
class PointModel:
    """A protocol's point fit as the audit sees it (module docstring): per unit (a, b, o) of the count tensor
    (n×n×4) the score of a (NaN: the unit leaves the fit) and each vote's weight, the ridge, and the fitted
    natural-log strengths ``theta`` (NaN for models without votes in the fit)."""

    score: np.ndarray
    weight: np.ndarray
    ridge: float
    theta: np.ndarray


@dataclass(frozen=True)
class PlaceAudit:
    """Place ``place`` (1 = the top) held by ``model``: ``votes`` (confirmed by a refit; None: no removal along the
    greedy order changes it) and ``approximate`` (the influence function's count); ``successor``: who holds the
    place after the removal; ``drops``: (model shown left, model shown right, outcome, votes) to remove."""

    place: int
    model: str
    votes: int | None
    approximate: int | None
    successor: str | None
    drops: list[tuple[str, str, str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Audit:
    places: list[PlaceAudit]
    total_votes: int
    method: str = "influence-function approximation, confirmed by refitting"

    def as_dict(self) -> dict:
        return {"total_votes": self.total_votes, "method": self.method,
                "places": [{"place": p.place, "model": p.model, "votes": p.votes, "approximate": p.approximate,
                            "successor": p.successor,
                            "drops": [{"model_a": a, "model_b": b, "outcome": o, "votes": n} for a, b, o, n in p.drops]}
                           for p in self.places]}


def unit_effects(point: PointModel, counts: np.ndarray, first: int, second: int) -> np.ndarray:
    """δ_u (module docstring) for every unit (n×n×4): the predicted change of θ_first − θ_second when one vote of
    unit u is dropped; 0 for units outside the fit."""
    theta = point.theta
    fitted = np.flatnonzero(np.isfinite(theta))
    n = len(theta)
    a, b, o = np.nonzero((counts > 0) & np.isfinite(point.score))
    p = expit(theta[a] - theta[b])
    local = np.full(n, -1)
    local[fitted] = np.arange(len(fitted))
    c = counts[a, b, o].astype(np.float64)
    w = point.weight[a, b, o]
    s = point.score[a, b, o]
    bread = laplacian(local[a], local[b], c * w * p * (1 - p), len(fitted)) + point.ridge * np.eye(len(fitted))
    contrast = np.zeros(len(fitted))
    contrast[local[first]], contrast[local[second]] = 1.0, -1.0
    v = solve_bread(bread, contrast)
    effects = np.zeros(counts.shape)
    effects[a, b, o] = -w * (s - p) * (v[local[a]] - v[local[b]])
    return effects


def greedy_drops(effects: np.ndarray, counts: np.ndarray, gap: float) -> tuple[np.ndarray, np.ndarray, int | None]:
    """The units in the order the search takes votes from them (most helpful first), how many votes each holds, and
    the number of votes after which the predicted gap changes sign (None: never)."""
    sign = 1.0 if gap > 0 else -1.0
    push = -sign * effects.ravel()  # positive: dropping the vote moves the gap towards the other side
    order = np.flatnonzero((push > 0) & (counts.ravel() > 0))
    order = order[np.argsort(-push[order], kind="stable")]
    available = counts.ravel()[order]
    reach = np.cumsum(push[order] * available)
    enough = np.flatnonzero(reach >= abs(gap))
    if not len(enough):
        return order, available, None
    k = int(enough[0])
    before = reach[k - 1] if k else 0.0
    needed = int(np.ceil((abs(gap) - before) / push[order[k]] - 1e-12))
    return order, available, int(available[:k].sum()) + max(needed, 1)


def take_votes(order: np.ndarray, available: np.ndarray, votes: int, shape: tuple) -> np.ndarray:
    """A count tensor of the first ``votes`` votes along the greedy order."""
    taken = np.minimum(available, np.maximum(votes - np.concatenate([[0], np.cumsum(available)[:-1]]), 0))
    drops = np.zeros(int(np.prod(shape)), dtype=np.int64)
    drops[order] = taken
    return drops.reshape(shape)


def holder(theta: np.ndarray, ranked: np.ndarray, place: int) -> int | None:
    """The model at ``place`` (1-based) among the ``ranked`` ones by ``theta``, best first (ties by index)."""
    index = np.flatnonzero(ranked & np.isfinite(theta))
    if place > len(index):
        return None
    return int(index[np.lexsort((index, -theta[index]))][place - 1])


def audit_top(counts: np.ndarray, models: tuple[str, ...], ranked: np.ndarray,
              point_model: Callable[[np.ndarray], PointModel | None], k: int = TOP_K,
              candidates: int = 2) -> Audit | None:
    """The robustness audit of places 1..``k`` (module docstring) of the board fitted by ``point_model`` (a count
    tensor → its :class:`PointModel`; called again on each reduced tensor to refit) on ``counts`` (n×n×4, over
    ``models``); ``ranked`` marks the models that hold places. The ``candidates`` rivals with the smallest
    approximate counts are each confirmed by refits. None when ``point_model`` gives none (a protocol the audit does
    not cover)."""
    counts = np.asarray(counts, dtype=np.int64)
    ranked = np.asarray(ranked, dtype=bool)
    point = point_model(counts)
    if point is None:
        return None
    total = int(counts.sum())
    places = []
    for place in range(1, k + 1):
        first = holder(point.theta, ranked, place)
        if first is None:
            break
        tries = []
        for rival in np.flatnonzero(ranked & np.isfinite(point.theta)):
            if rival == first:
                continue
            gap = float(point.theta[first] - point.theta[rival])
            order, available, needed = greedy_drops(unit_effects(point, counts, first, int(rival)), counts, gap)
            if needed is not None:
                tries.append((needed, int(rival), order, available))
        tries.sort(key=lambda item: item[:2])
        best: tuple | None = None
        for needed, _rival, order, available in tries[:candidates]:
            confirmed = _confirm(counts, ranked, point_model, place, first, order, available, needed)
            if confirmed is not None and (best is None or confirmed[0] < best[0]):
                best = (*confirmed, order, available)
        approximate = tries[0][0] if tries else None
        if best is None:
            places.append(PlaceAudit(place, models[first], None, approximate, None))
            continue
        votes, successor, order, available = best
        drops = take_votes(order, available, votes, counts.shape)
        listed = [(models[a], models[b], OUTCOMES[o], int(drops[a, b, o])) for a, b, o in zip(*np.nonzero(drops))]
        listed.sort(key=lambda item: -item[3])
        places.append(PlaceAudit(place, models[first], votes, approximate, models[successor], listed))
    return Audit(places, total)


def _confirm(counts, ranked, point_model, place, first, order, available, needed) -> tuple[int, int] | None:
    """The smallest count along ``order`` whose removal a refit confirms changes place ``place`` (and who then holds
    it), searched from the approximation ``needed``: grown by half until a refit confirms, then halved back."""

    def changed(votes: int) -> int | None:
        try:
            theta = point_model(counts - take_votes(order, available, votes, counts.shape)).theta
        except ConvergenceError:  # the removal left a model without a finite rating: not a confirmed change
            return None
        now = holder(theta, ranked, place)
        return now if now is not None and now != first else None

    limit = int(available.sum())
    high, low = min(needed, limit), 0
    while changed(high) is None:
        if high >= limit:
            return None
        low, high = high, min(limit, max(high + 1, int(high * 1.5)))
    while high - low > 1:
        middle = (low + high) // 2
        if changed(middle) is None:
            low = middle
        else:
            high = middle
    successor = changed(high)  # the holder the confirming refit found (high's refit confirmed above)
    return None if successor is None else (high, successor)
