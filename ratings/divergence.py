"""Which ratings of an unpenalised Bradley–Terry fit have no finite estimate, and which bootstrap bounds come from
rounds without one.

Existence (Ford 1957, Amer. Math. Monthly 64:28; Hunter 2004, Ann. Statist. 32:384, Assumption 1): the maximum
likelihood estimate is finite iff the directed graph with an edge i → j when i beat j at least once is strongly
connected. When it is not, the graph's strongly connected components form a chain of groups; a group that no model
outside it ever beat (a source) or that never beat a model outside it (a sink) has its ratings pushed to +∞ or −∞ as
the likelihood keeps rising, and an optimiser stops wherever its iteration limit leaves it (9155 and −4930 on a fake
run of the taxonomy preset). :func:`runaway_models` names the models of such groups.

A percentile bootstrap interval (``np.percentile``, linear interpolation) takes each bound from two order statistics of
the rounds; :func:`bounds_from_rounds` says whether one of them is a round whose resample had no finite estimate,
where the value is where the optimiser stopped rather than an estimate.
"""

from __future__ import annotations

import math

import numpy as np

from ratings.bradley_terry import components


def finite_estimate(wins: np.ndarray) -> bool:
    """Whether the fit on this win matrix (``wins[i, j] > 0``: i beat j) has a finite estimate: its models, those
    with a comparison, form one strongly connected group."""
    present = (np.asarray(wins) + np.asarray(wins).T).sum(axis=1) > 0
    if present.sum() < 2:
        return True
    return components(np.asarray(wins)[np.ix_(present, present)], strong=True)[0] == 1


def runaway_models(wins: np.ndarray) -> np.ndarray:
    """Per model, whether its rating runs off: it belongs to a group of the strongly connected split that never lost
    to a model outside the group, or never beat one, other than the split's one largest group, against which the
    others run off (all False when the estimate is finite, and for models without a comparison). Every rating of
    such a fit is off, the others by the shift that keeps the mean at the base."""
    wins = np.asarray(wins, dtype=np.float64)
    n = len(wins)
    flags = np.zeros(n, dtype=bool)
    present = (wins + wins.T).sum(axis=1) > 0
    index = np.flatnonzero(present)
    if len(index) < 2:
        return flags
    sub = wins[np.ix_(index, index)] > 0
    count, label = components(sub, strong=True)
    if count == 1:
        return flags
    sizes = np.bincount(label, minlength=count)
    largest = int(np.argmax(sizes)) if (sizes == sizes.max()).sum() == 1 else -1
    for group in range(count):
        inside = label == group
        beaten_by_outside = sub[np.ix_(~inside, inside)].any()
        beats_outside = sub[np.ix_(inside, ~inside)].any()
        if group != largest and (not beaten_by_outside or not beats_outside):
            flags[index[inside]] = True
    return flags


def bounds_from_rounds(samples: np.ndarray, flagged: np.ndarray,
                       quantiles: tuple[float, float] = (2.5, 97.5)) -> tuple[np.ndarray, np.ndarray]:
    """Per model, whether its lower and upper percentile bounds over ``samples`` (rounds × models) use a round of
    ``flagged`` (rounds): ``np.percentile``'s linear interpolation reads the order statistics at ⌊q(n−1)⌋ and
    ⌈q(n−1)⌉ of the n rounds (the first round in a tie, as a stable sort puts it). A model missing from some round
    has no bound (NaN), so no flag."""
    samples = np.asarray(samples, dtype=np.float64)
    flagged = np.asarray(flagged, dtype=bool)
    rounds, n = samples.shape if samples.ndim == 2 else (0, 0)
    out = [np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)]
    if rounds == 0 or not flagged.any():
        return out[0], out[1]
    for model in range(n):
        column = samples[:, model]
        if np.isnan(column).any():
            continue
        order = np.argsort(column, kind="stable")
        for k, q in enumerate(quantiles):
            position = q / 100 * (rounds - 1)
            used = order[[math.floor(position), math.ceil(position)]]
            out[k][model] = bool(flagged[used].any())
    return out[0], out[1]
