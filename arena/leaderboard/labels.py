"""The leaderboard's tables as a person reads them: plain headers, shares as percentages, metric names with the
direction that is better, the words for counts, ratings rounded to the digits their interval supports and the ranks
shown (:data:`RANK_RULE`).

The computations keep their own column names (``first_wins``, ``spearman_p``, ``voter_1``, ... as the command line
and the JSON print them); the page shows these frames (:func:`arena.leaderboard.view.render_view`), whose headers the
tooltips explain (:func:`arena.leaderboard.view.header_tips`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The stored metrics' short labels (a metric not named here is shown by its name with spaces).
METRIC_LABELS = {
    "clip_score": "CLIP score",
    "clip_lemma": "CLIP, concept name",
    "clip_hypernym": "CLIP, hypernyms",
    "clip_cohyponym": "CLIP, cohyponyms",
    "clip_specificity": "CLIP specificity",
    "commonsense_clip_fit": "Commonsense fit (CLIP)",
    "commonsense_clip_accuracy": "Commonsense accuracy (CLIP)",
    "fid": "FID",
    "inception_score": "Inception score",
    "reward": "Reward (ImageReward)",
}
CONSISTENCY_LABELS = {"std": "SD", "min": "minimum", "median": "median"}
CONSISTENCY_SUBSETS = {"": "", "_S_a": ", abstract", "_S_r": ", realistic", "_S_final": ", S_r − S_a"}
ARROWS = {"higher": "↑", "lower": "↓"}
DIRECTION_NOTE = "↑: higher is better; ↓: lower is better."

VOTER_KINDS = {"human": "People", "judge": "Judge"}
BIAS_HEADERS = {"voter_kind": "Voters", "subset": "Subset", "votes": "Votes", "first_wins": "A won",
                "second_wins": "B won", "ties": "Tie", "both_bad": "Both bad", "first_win_rate": "A's share of wins",
                "p_value": "p-value"}
SHARES = ("first_wins", "second_wins", "ties", "both_bad", "first_win_rate")
CORRELATION_HEADERS = {"against human ELO": "Compared with people's ratings", "spearman": "Spearman ρ",
                       "spearman_p": "Spearman p", "kendall": "Kendall τ", "kendall_p": "Kendall p", "n": "Models"}
PAIR_HEADERS = {"voter_1": "Annotator", "voter_2": "Other annotator", "n": "Shared battles",
                "agreement": "Agreement", "kappa": "Cohen's κ"}
FEW_MODELS = 10  # below this many models a rank correlation's p-value is only a rough guide


def plural(n: int, word: str, words: str | None = None) -> str:
    """"1 battle", "2 battles" (``words``: the plural when it is not ``word`` + s)."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def metric_base(column: str) -> str:
    """The stored metric name of a metric column: ``name [scorer]`` and ``name (suite)`` are ``name``'s."""
    return column.split(" [")[0].split(" (")[0]


def consistency_parts(name: str) -> tuple[str, str] | None:
    """(statistic, subset) of a paraphrase-consistency metric ``consistency_<statistic><subset>`` (a key of
    :data:`CONSISTENCY_LABELS` and one of :data:`CONSISTENCY_SUBSETS`); None for any other name."""
    for stat in CONSISTENCY_LABELS:
        for part in CONSISTENCY_SUBSETS:
            if name == f"consistency_{stat}{part}":
                return stat, part
    return None


def metric_label(name: str, direction: str | None = None) -> str:
    """The short header of stored metric ``name`` (a column ``name [scorer]`` or ``name (suite)`` keeps its
    bracket after the label), with an arrow for the better direction (↑ higher, ↓ lower; none when neither)."""
    base = metric_base(name)
    label = METRIC_LABELS.get(base)
    if label is None and (parts := consistency_parts(base)) is not None:
        label = f"Consistency {CONSISTENCY_LABELS[parts[0]]}{CONSISTENCY_SUBSETS[parts[1]]}"
    if label is None:
        words = base.replace("_", " ")
        label = words[:1].upper() + words[1:]
    arrow = ARROWS.get(direction or "", "")
    return f"{label}{' ' + arrow if arrow else ''}{name[len(base):]}"


def percent(value) -> str:
    """A share as a whole percentage ("54%"); "" when missing."""
    return "" if value is None or pd.isna(value) else f"{value:.0%}"


def bias_frame(bias: pd.DataFrame) -> pd.DataFrame:
    """Position bias per voter kind and subset (:func:`ratings.bias.position_bias_from_counts`), shares as
    percentages, the p-value to three decimals, plain headers."""
    shown = bias.copy()
    if "voter_kind" in shown:
        shown["voter_kind"] = shown["voter_kind"].map(lambda kind: VOTER_KINDS.get(kind, kind))
    for column in SHARES:
        if column in shown:
            shown[column] = shown[column].map(percent)
    if "p_value" in shown:
        shown["p_value"] = shown["p_value"].map(lambda p: "" if pd.isna(p) else f"{p:.3f}")
    return shown.rename(columns=BIAS_HEADERS)


def correlations_frame(correlations: pd.DataFrame, directions: dict[str, str]) -> pd.DataFrame:
    """Rank correlations with the human ratings: the judge's and each metric's, named as the other tables name
    them (``directions``: {metric column: higher | lower | none}), to three decimals, plain headers."""
    shown = correlations.copy()
    if "against human ELO" in shown:
        shown["against human ELO"] = [
            "Judge's rating" if value == "Judge ELO" else metric_label(value, directions.get(value))
            for value in shown["against human ELO"]]
    return shown.round(3).rename(columns=CORRELATION_HEADERS)


def correlations_note(correlations: pd.DataFrame) -> str:
    """What the correlations rest on: how many models, and a caveat when they are few."""
    models = [int(n) for n in correlations.get("n", []) if pd.notna(n)]
    if not models or max(models) == 0:
        return "No ranking to compare yet: it needs people's ratings and a judge's ratings or a metric."
    most = max(models)
    text = f"Each correlation is over the models both rankings rate (at most {plural(most, 'model')})."
    if most < FEW_MODELS:
        text += (f" With fewer than {FEW_MODELS} models a rank correlation rests on very few points: read its "
                 "p-value as a rough guide only.")
    return text


def pairs_frame(pairs: pd.DataFrame | None) -> pd.DataFrame | None:
    """Agreement between pairs of annotators, agreement as a percentage, κ to three decimals, plain headers."""
    if not isinstance(pairs, pd.DataFrame):
        return None
    shown = pairs.copy()
    if "agreement" in shown:
        shown["agreement"] = shown["agreement"].map(percent)
    return shown.round(3).rename(columns=PAIR_HEADERS)


# --- how a rating, its interval and its rank read ---------------------------------------------------------------------

RANK_RULE = ("Rank = 1 + the number of ranked models whose whole 95% interval lies above this model's, so models "
             "whose intervals overlap can share a rank; the rank range runs from there to the lowest rank the "
             "intervals allow. Unranked models (too few votes) get no rank.")


def format_ci(row: pd.Series) -> str:
    """"+up / -down" in whole Elo points around the rating; the bounds "lo – hi" when the percentile interval does not
    contain the rating (it can miss it, e.g. with a handful of votes), never "+-0"."""
    if pd.isna(row["rating"]) or pd.isna(row["lower"]) or pd.isna(row["upper"]):
        return ""
    up, down = round(row["upper"] - row["rating"]), round(row["rating"] - row["lower"])
    if up < 0 or down < 0:
        return f"{row['lower']:.0f} – {row['upper']:.0f}"
    return f"+{up} / -{down}"


def rank_range_text(best, worst) -> str:
    """"2–5" (the ranks a model's interval allows), "3" when it allows one, "" for an unranked model."""
    if pd.isna(best) or pd.isna(worst):
        return ""
    return f"{int(best)}" if int(best) == int(worst) else f"{int(best)}–{int(worst)}"


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
