"""Agreement on absolute ratings: between raters, and between a judge and the raters, on the same questions.

Data format: a rating is (rater, item, value); ``values`` are numbers (a fit 1 / 0, a Likert point, a score); items
and raters are any hashable names. Functions take ``{rater: {item: value}}`` mappings (one value per rater and item).

Formulas
    Cohen's κ (Cohen 1960): κ = (p_o − p_e) / (1 − p_e) of the two-rater confusion matrix
    (:func:`ratings.agreement.cohen_kappa`); accuracy = p_o, the share of agreeing pairs.
    Fleiss' κ (Fleiss 1971) with a varying number of raters per item: :func:`ratings.agreement.fleiss_kappa`
    (formula there) over the items × categories counts.
    Krippendorff's α (Krippendorff 2004, *Content Analysis*, ch. 11): α = 1 − D_o / D_e, the observed disagreement
    of the pairable values within items over the disagreement expected from all pairable values, with the squared
    difference metric of the level of measurement (nominal: 0 / 1; ordinal: squared rank distance over the
    category frequencies; interval: (v − v')²). Computed by the ``krippendorff`` package (``alpha``, raters ×
    items, missing values NaN); items with fewer than two values are not pairable and do not count.
    Pearson's r and Spearman's ρ: ``scipy.stats.pearsonr`` / ``spearmanr`` (ρ is Pearson's r of the average ranks).

A judge against raters (:func:`judge_agreement`): every rating is paired with the judge's value on its item (a
question two raters answered counts twice), as :mod:`ratings.judge_agreement` pairs every human vote with the
judge's. A judge against the raters' consensus (:func:`judge_correlation`): the judge's value and the consensus
(the mean of the raters, or what the paper computes from it) per item, correlated over the shared items, and Cohen's
κ of the two after ``classes`` turns each into a class. The human ceiling (:func:`rater_ceiling`): the same figures
for raters against each other, every ordered pair of two different raters on an item, so each pair counts both ways
and the figures are symmetric.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from itertools import permutations
from typing import Any, Literal, cast

import numpy as np
import scipy.stats

from ratings.agreement import cohen_kappa, fleiss_kappa

Ratings = Mapping[Any, Mapping[Any, float]]  # {rater: {item: value}}, any hashable keys (Mapping is invariant in them)
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _confusion(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Counts of (first, second) value pairs over the values of both, sorted."""
    values = np.unique(np.concatenate([first, second]))
    index = {value: k for k, value in enumerate(values.tolist())}
    confusion = np.zeros((len(values), len(values)))
    np.add.at(confusion, ([index[v] for v in first.tolist()], [index[v] for v in second.tolist()]), 1)
    return confusion


def agreement_figures(first, second) -> dict:
    """``{"n", "accuracy", "kappa"}`` of paired categorical values (accuracy: share equal; Cohen's κ)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    if len(first) == 0:
        return {"n": 0, "accuracy": float("nan"), "kappa": float("nan")}
    return {"n": int(len(first)), "accuracy": float(np.mean(first == second)),
            "kappa": cohen_kappa(_confusion(first, second))}


def correlation_figures(first, second, classes: Callable[[np.ndarray], np.ndarray] | None = None) -> dict:
    """``{"n", "pearson", "spearman", "kappa"}`` of paired numbers: Pearson's r, Spearman's ρ, and Cohen's κ of
    ``classes`` of each (NaN without ``classes``, and where a side is constant or fewer than three pairs exist)."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    result = {"n": int(len(first)), "pearson": float("nan"), "spearman": float("nan"), "kappa": float("nan")}
    if len(first) < 3:
        return result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant side: scipy warns and returns NaN, reported as NaN
        if np.ptp(first) > 0 and np.ptp(second) > 0:
            result["pearson"] = float(scipy.stats.pearsonr(first, second).statistic)
            result["spearman"] = float(scipy.stats.spearmanr(first, second).statistic)
    if classes is not None:
        result["kappa"] = cohen_kappa(_confusion(classes(first), classes(second)))
    return result


def sign_classes(values: np.ndarray, tolerance: float = 1e-9) -> np.ndarray:
    """−1, 0 or 1: the sign of each value, |v| ≤ ``tolerance`` counting as 0."""
    values = np.asarray(values, dtype=float)
    return np.where(values > tolerance, 1.0, np.where(values < -tolerance, -1.0, 0.0))


def judge_agreement(raters: Ratings, judge: Mapping[Any, float]) -> dict:
    """:func:`agreement_figures` of every rating paired with ``judge``'s value on its item, plus ``items`` (how many
    items both have)."""
    first, second, items = [], [], set()
    for given in raters.values():
        for item, value in given.items():
            if item in judge:
                first.append(value)
                second.append(judge[item])
                items.add(item)
    return {**agreement_figures(first, second), "items": len(items)}


def judge_correlation(consensus: Mapping[Any, float], judge: Mapping[Any, float],
                      classes: Callable[[np.ndarray], np.ndarray] | None = None) -> dict:
    """:func:`correlation_figures` of ``judge`` against the raters' ``consensus`` over the items both have."""
    shared = [item for item in consensus if item in judge and consensus[item] == consensus[item]
              and judge[item] == judge[item]]
    figures = correlation_figures([consensus[i] for i in shared], [judge[i] for i in shared], classes)
    return {**figures, "items": len(shared)}


def rater_pairs(raters: Ratings) -> tuple[np.ndarray, np.ndarray, int]:
    """(first values, second values, items) over every ordered pair of two different raters on a shared item."""
    first, second, items = [], [], set()
    for a, b in permutations(raters, 2):
        for item, value in raters[a].items():
            if item in raters[b]:
                first.append(value)
                second.append(raters[b][item])
                items.add(item)
    return np.asarray(first, dtype=float), np.asarray(second, dtype=float), len(items)


def rater_ceiling(raters: Ratings, kind: str, classes: Callable[[np.ndarray], np.ndarray] | None = None) -> dict:
    """The human ceiling (module docstring): ``kind`` ``agreement`` (accuracy, κ) or ``correlation`` (r, ρ, κ of
    ``classes``), over every ordered pair of raters on a shared item; ``items``: items with two raters or more."""
    first, second, items = rater_pairs(raters)
    if kind == "agreement":
        return {**agreement_figures(first, second), "items": items}
    return {**correlation_figures(first, second, classes), "items": items}


def reliability_matrix(raters: Ratings) -> tuple[np.ndarray, list, list]:
    """(raters × items matrix with NaN where a rater did not rate, rater names, item names)."""
    names = list(raters)
    items = list(dict.fromkeys(item for given in raters.values() for item in given))
    column = {item: k for k, item in enumerate(items)}
    matrix = np.full((len(names), len(items)), np.nan)
    for row, name in enumerate(names):
        for item, value in raters[name].items():
            matrix[row, column[item]] = value
    return matrix, names, items


def krippendorff_alpha(raters: Ratings, level: str = "nominal", value_domain=None) -> float:
    """Krippendorff's α of the ratings at ``level`` (module docstring); NaN when fewer than two values share an item
    or every pairable value is the same. ``value_domain``: the scale's values in order (ordinal and nominal levels;
    default: those present)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}.")
    import krippendorff

    matrix, _, _ = reliability_matrix(raters)
    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2) if matrix.size else np.zeros(0, bool)
    matrix = matrix[:, pairable]
    if matrix.shape[1] == 0 or len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return float("nan")
    domain = None if level in ("interval", "ratio") else (
        sorted(value_domain) if value_domain is not None else np.unique(matrix[~np.isnan(matrix)]))
    checked = cast(Literal["nominal", "ordinal", "interval", "ratio"], level)  # one of LEVELS: checked above
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=checked, value_domain=domain))


def fleiss(raters: Ratings, categories=None) -> dict:
    """``{"items", "agreement", "kappa"}``: Fleiss' κ and the mean pairwise agreement P̄ over the items at least two
    raters rated; ``categories`` default to the values present."""
    matrix, _, _ = reliability_matrix(raters)
    values = sorted(categories) if categories is not None else sorted(np.unique(matrix[~np.isnan(matrix)]).tolist())
    counts = np.stack([np.sum(matrix == value, axis=0) for value in values], axis=1) if values else np.zeros((0, 0))
    shared = counts[counts.sum(axis=1) >= 2] if len(counts) else counts
    agreement, kappa = fleiss_kappa(shared) if len(shared) else (float("nan"), float("nan"))
    return {"items": int(len(shared)), "agreement": agreement, "kappa": kappa}


def pairwise_cohen(raters: Ratings, min_shared: int = 1) -> list[dict]:
    """Cohen's κ and the agreement of each pair of raters sharing at least ``min_shared`` items, most shared first:
    ``[{"rater_1", "rater_2", "n", "agreement", "kappa"}]`` (names in sorted order)."""
    names = sorted(raters, key=str)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            shared = [item for item in raters[a] if item in raters[b]]
            if len(shared) >= min_shared:
                figures = agreement_figures([raters[a][k] for k in shared], [raters[b][k] for k in shared])
                rows.append({"rater_1": a, "rater_2": b, "n": figures["n"], "agreement": figures["accuracy"],
                             "kappa": figures["kappa"]})
    return sorted(rows, key=lambda row: (-row["n"], str(row["rater_1"]), str(row["rater_2"])))
