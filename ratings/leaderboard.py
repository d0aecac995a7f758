"""The leaderboard table: a vote table in, one row per model out (Bradley–Terry Elo, bootstrap CIs, CI rank)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ratings.bradley_terry import fit_bradley_terry, rank_by_ci
from ratings.votes import check_tie_policy, count_tensor, encode_votes, model_totals

LEADERBOARD_COLUMNS: tuple[str, ...] = (
    "model", "rating", "lower", "upper", "rank", "votes", "wins", "losses", "ties", "both_bad",
    "both_bad_rate", "provisional",
)


def empty_leaderboard() -> pd.DataFrame:
    """The leaderboard of no votes: no rows, the usual columns and dtypes."""
    return pd.DataFrame({
        "model": pd.Series([], dtype=object), "rating": pd.Series([], dtype=float),
        "lower": pd.Series([], dtype=float), "upper": pd.Series([], dtype=float),
        "rank": pd.Series([], dtype="Int64"), "votes": pd.Series([], dtype=np.int64),
        "wins": pd.Series([], dtype=np.int64), "losses": pd.Series([], dtype=np.int64),
        "ties": pd.Series([], dtype=np.int64), "both_bad": pd.Series([], dtype=np.int64),
        "both_bad_rate": pd.Series([], dtype=float), "provisional": pd.Series([], dtype=bool),
    })


def fit_leaderboard(
    votes: pd.DataFrame,
    *,
    tie_policy: str = "drop",
    rounds: int = 1000,
    seed: int | np.random.Generator = 0,
    scale: float = 400.0,
    base: float = 1000.0,
    anchor: tuple[str, float] | None = None,
    ridge: float = 1e-6,
    min_votes: int = 10,
) -> pd.DataFrame:
    """Bradley–Terry Elo of every model in ``votes`` with percentile 95% bootstrap CIs, best first.

    Columns: ``model, rating, lower, upper, rank, votes, wins, losses, ties, both_bad, both_bad_rate,
    provisional``.

    - ``rating`` is the fit on all votes (:func:`ratings.bradley_terry.fit_bradley_terry`), on the Elo scale
      R = base + scale·θ/ln 10 (``scale`` points per factor 10 of odds), with mean ``base`` over the rated models,
      or with ``anchor=(model, rating)`` pinning one model (whose CI then has zero width).
    - ``lower``/``upper``: 2.5% and 97.5% percentiles over ``rounds`` bootstrap fits of multinomially
      redrawn counts (the same as resampling the votes the tie policy keeps), seeded by ``seed``.
    - ``rank`` = 1 + the number of models whose ``lower`` is above this model's ``upper``.
    - ``votes``, ``wins``, ``losses``, ``ties``, ``both_bad`` count every vote of the model whatever the tie policy;
      ``both_bad_rate`` = both_bad / votes.
    - ``provisional``: fewer than ``min_votes`` of the model's votes entered the fit (so under ``"drop"`` ties and
      both-bad do not count towards the minimum).
    - ``tie_policy``: "drop", "half" or "half_ties_drop_both_bad" (see :mod:`ratings.votes`).
    - ``ridge``: Gaussian prior θ_i ~ N(0, 1/ridge) on the natural-log strengths. The default 1e-6 changes ordinary
      ratings by far less than 0.001 Elo but keeps a model that won every vote finite (it then sits a few thousand
      points up, with a narrow CI since every resample repeats the sweep: read it with its vote count). ``ridge=0``
      is the pure MLE of the peer libraries and raises a ValueError, saying why, when that MLE does not exist.

    Edge cases: no votes give an empty table with these columns; a model whose votes the tie policy all drops gets
    a row with NaN rating, CI and rank (and ``provisional``); if the comparison graph splits into groups that never
    met, each group is centred on ``base`` by the ridge and a warning says the groups are not comparable
    (with ``ridge=0`` this is a ValueError instead).
    """
    check_tie_policy(tie_policy)
    if len(votes) == 0:
        return empty_leaderboard()
    encoded = encode_votes(votes)
    counts = count_tensor(encoded.model_a, encoded.model_b, encoded.outcome, encoded.n_models)
    return leaderboard_from_counts(list(encoded.models), counts, tie_policy=tie_policy, rounds=rounds, seed=seed,
                                   scale=scale, base=base, anchor=anchor, ridge=ridge, min_votes=min_votes)


def leaderboard_from_counts(
    models: list[str],
    counts: np.ndarray,
    *,
    tie_policy: str = "drop",
    rounds: int = 1000,
    seed: int | np.random.Generator = 0,
    scale: float = 400.0,
    base: float = 1000.0,
    anchor: tuple[str, float] | None = None,
    ridge: float = 1e-6,
    min_votes: int = 10,
) -> pd.DataFrame:
    """:func:`fit_leaderboard` of a count tensor ``counts[i, j, o]`` over ``models`` (:mod:`ratings.votes`): the same
    table as for the votes it counts. Models without any vote in ``counts`` get no row, as in a vote table."""
    check_tie_policy(tie_policy)
    counts = np.asarray(counts)
    seen = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
    if not seen.any():
        return empty_leaderboard()
    models = [str(m) for m, keep in zip(models, seen) if keep]
    counts = counts[np.ix_(seen, seen)]
    anchor_index = None
    if anchor is not None:
        name, value = anchor
        if name not in models:
            raise ValueError(f"Cannot anchor on {name!r}: no vote mentions it. Pick one of: {', '.join(models)}.")
        anchor_index = (models.index(name), float(value))
    fit = fit_bradley_terry(
        counts, models=models, tie_policy=tie_policy, rounds=rounds, seed=seed, scale=scale, base=base,
        anchor=anchor_index, ridge=ridge,
    )
    lower, upper = fit.interval(0.95)
    totals = model_totals(counts)
    table = pd.DataFrame({
        "model": pd.Series(models, dtype=object),
        "rating": fit.ratings,
        "lower": lower,
        "upper": upper,
        "rank": pd.array(rank_by_ci(lower, upper), dtype="Float64").astype("Int64"),
    })
    for column in ("votes", "wins", "losses", "ties", "both_bad"):
        table[column] = totals[column].to_numpy(dtype=np.int64)
    table["both_bad_rate"] = table["both_bad"] / table["votes"].where(table["votes"] > 0)
    table["provisional"] = fit.fit_votes < min_votes
    table = table.sort_values(["rating", "model"], ascending=[False, True], na_position="last", kind="stable")
    return table.reset_index(drop=True)[list(LEADERBOARD_COLUMNS)]


RANK_RULE = ("Rank = 1 + the number of ranked models whose whole 95% interval lies above this model's, so models "
             "whose intervals overlap can share a rank; the rank range runs from there to the lowest rank the "
             "intervals allow. Unranked models (too few votes) get no rank.")


def prior_ridge(prior_sd: float, scale: float = 400.0) -> float:
    """The ``ridge`` of :func:`fit_leaderboard` (precision of the normal prior on the natural-log strengths) for a
    prior spread of ``prior_sd`` Elo points: (scale / ln 10 / prior_sd)². A spread of 400 points keeps a model that
    swept a handful of votes within a few hundred points of the mean (the pure fit puts it thousands away) and moves
    a rating backed by hundreds of votes by a few points; ``prior_sd`` 0 gives the default 1e-6 (no prior to speak
    of)."""
    if prior_sd < 0:
        raise ValueError(f"prior_sd={prior_sd}: pass 0 (no prior) or a spread in Elo points.")
    return 1e-6 if prior_sd == 0 else float((scale / np.log(10) / prior_sd) ** 2)


def rating_step(lower: float, upper: float) -> int:
    """The step a rating can be rounded to given its 95% interval ``[lower, upper]``: a power of ten no larger than a
    tenth of the interval's width (1 for intervals narrower than 20 points, 10 up to 200, 100 beyond), so the shown
    digits are the ones the votes support. NaN bounds give 1."""
    width = float(upper) - float(lower)
    if not np.isfinite(width) or width < 20:
        return 1
    return int(10 ** min(2, int(np.floor(np.log10(width / 10)))))


def round_rating(value: float, lower: float, upper: float) -> float:
    """``value`` rounded to :func:`rating_step` of its interval (NaN stays NaN)."""
    if value is None or not np.isfinite(value):
        return float("nan")
    step = rating_step(lower, upper)
    return float(round(float(value) / step) * step)


def interval_text(lower: float, upper: float) -> str:
    """A 95% interval as ``[low, high]``, each bound rounded to the interval's :func:`rating_step`; "" without one."""
    if lower is None or upper is None or not (np.isfinite(lower) and np.isfinite(upper)):
        return ""
    step = rating_step(lower, upper)
    return f"[{round(lower / step) * step:.0f}, {round(upper / step) * step:.0f}]"


def ranked_rows(table: pd.DataFrame) -> np.ndarray:
    """Which rows of a fit table hold a rank: its ``ranked`` column where it has one (a protocol's result,
    :mod:`ratings.ranks`), else the rated rows not marked ``provisional`` (a :func:`fit_leaderboard` table, or a
    board kept before the two thresholds, when provisional meant unranked)."""
    rated = table["rating"].notna().to_numpy()
    if "ranked" in table:
        return rated & table["ranked"].fillna(False).astype(bool).to_numpy()
    return rated & ~table["provisional"].fillna(True).astype(bool).to_numpy()


def public_ranks(table: pd.DataFrame) -> pd.Series:
    """The rank shown for each row of a fit table (:data:`RANK_RULE`): 1 + the number of ranked models whose
    ``lower`` is above this model's ``upper``; missing (NA) for unranked and unrated models
    (:func:`ranked_rows`), so a model with a handful of votes neither takes nor pushes anyone from a rank."""
    if len(table) == 0:
        return pd.Series([], dtype="Int64")
    rated = ranked_rows(table)
    lower = table["lower"].to_numpy(dtype=float)
    upper = table["upper"].to_numpy(dtype=float)
    above = (lower[None, rated] > upper[:, None]).sum(axis=1) + 1
    return pd.Series(np.where(rated, above, 0), index=table.index, dtype="Int64").where(rated)
