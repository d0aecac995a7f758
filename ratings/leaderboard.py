"""The leaderboard table: a vote table in, one row per model out (Bradley–Terry Elo, bootstrap CIs, CI rank), and
the prior that keeps a sweep finite (:func:`prior_ridge`). How the table reads (rounding, shown ranks) is
:mod:`arena.leaderboard.labels`."""

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


def prior_ridge(prior_sd: float, scale: float = 400.0) -> float:
    """The ``ridge`` of :func:`fit_leaderboard` (precision of the normal prior on the natural-log strengths) for a
    prior spread of ``prior_sd`` Elo points: (scale / ln 10 / prior_sd)². A spread of 400 points keeps a model that
    swept a handful of votes within a few hundred points of the mean (the pure fit puts it thousands away) and moves
    a rating backed by hundreds of votes by a few points; ``prior_sd`` 0 gives the default 1e-6 (no prior to speak
    of)."""
    if prior_sd < 0:
        raise ValueError(f"prior_sd={prior_sd}: pass 0 (no prior) or a spread in Elo points.")
    return 1e-6 if prior_sd == 0 else float((scale / np.log(10) / prior_sd) ** 2)
