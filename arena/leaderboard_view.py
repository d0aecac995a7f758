"""What a viewer sees of a leaderboard, as plain JSON: its summary, tables, figures and text.

A leaderboard is computed once per set of filters and shown many times (:mod:`arena.leaderboard_service`), so
everything a
viewer gets is made here, once, in the form Gradio's components send to the page: tables as ``{"headers", "data"}``
(NaN as null) and Plotly figures as their JSON (serialising a figure costs more than sending it), and the command
line's
text. The web tab sends them as they are.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from arena.leaderboard import Leaderboard, LeaderboardOptions, leaderboard_text, summary_text
from ratings.protocols import DEFAULT_PROTOCOL
from ratings.leaderboard import RANK_RULE, interval_text, public_ranks, round_rating

# The main table's columns, and what each means (each header's tooltip, and the line under the table).
MAIN_COLUMNS = {
    "Rank": RANK_RULE,
    "Model": "the model's name",
    "Rating": "Bradley–Terry Elo (400 points per 10× odds, mean 1000 over the rated models), rounded to what its "
              "interval supports",
    "95% interval": "the 2.5% and 97.5% bootstrap percentiles of the rating",
    "Votes": "every vote the model took part in",
    "Both bad": "share of its votes where both images were judged bad",
}

# What the other tables' short headers mean: each header's tooltip on the page (arena.web.leaderboard_tab).
CORRELATION_COLUMNS = {
    "against human ELO": "the ranking compared with the human ranking: the judge's ELO or an automatic metric "
                         "(sign-flipped where lower is better)",
    "spearman": "Spearman's rank correlation with the human ELO (−1 to 1; higher: the same order as people's)",
    "spearman_p": "p-value of the Spearman correlation (lower: less likely to be chance)",
    "kendall": "Kendall's τ rank correlation with the human ELO (−1 to 1; higher: the same order as people's)",
    "kendall_p": "p-value of Kendall's τ (lower: less likely to be chance)",
    "n": "models rated both by people and by this ranking",
}
BIAS_COLUMNS = {
    "voter_kind": "who voted: human annotators or an automatic judge",
    "subset": "the prompts' subset",
    "votes": "votes in this group",
    "first_wins": "share of votes won by the image in first position (A)",
    "second_wins": "share of votes won by the image in second position (B)",
    "ties": "share of votes that were ties",
    "both_bad": "share of votes where both images were judged bad",
    "first_win_rate": "share of the decisive votes (A or B) won by the image in first position; 0.5: no position bias",
    "p_value": "p-value of a two-sided binomial test of first-position wins against 50% of decisive votes (lower: "
               "stronger evidence of a position bias)",
}
PAIR_COLUMNS = {
    "voter_1": "the first annotator of the pair (numbered: annotators' names are private)",
    "voter_2": "the second annotator of the pair",
    "n": "battles both annotators voted on",
    "agreement": "share of those battles where both gave the same outcome (higher: more agreement)",
    "kappa": "Cohen's κ: agreement corrected for chance (1: always agree; 0: as by chance; higher is better)",
}
# Full names of the stored metrics (the table shows them with spaces for underscores); a metric not named here is
# described by its registered title (judges.metrics.registry).
METRIC_NAMES = {
    "clip_score": "CLIP score: similarity of the image and its prompt in CLIP's embedding space",
    "clip_lemma": "CLIP similarity of the image and the concept's name (taxonomy)",
    "clip_hypernym": "CLIP similarity of the image and the concept's hypernyms (its broader classes)",
    "clip_cohyponym": "CLIP similarity of the image and the concept's cohyponyms (its sibling concepts)",
    "clip_specificity": "CLIP specificity: similarity to the concept's name over similarity to its cohyponyms",
    "commonsense_clip_fit": "Commonsense-T2I CLIP fit: 1 when the image is closer to its own expected description "
                            "than to its partner's",
    "commonsense_clip_accuracy": "Commonsense-T2I accuracy: share of image pairs that fit their expected outcomes",
    "fid": "Fréchet Inception Distance of the model's images to the reference images",
    "inception_score": "Inception Score of the model's images",
    "reward": "reward-model score of the image for its prompt (ImageReward)",
}
CONSISTENCY_STATS = {"std": "standard deviation", "min": "minimum", "median": "median"}
CONSISTENCY_PARTS = {"": "over all paraphrase groups", "_S_a": "over abstract objects (S_a)",
                     "_S_r": "over realistic objects (S_r)", "_S_final": "S_r − S_a (smaller in size is better)"}
DIRECTION_WORDS = {"higher": "higher is better", "lower": "lower is better",
                   "none": "neither direction is better in itself"}

TABLES = ("table", "metrics", "correlations", "bias", "pairs")
FIGURES = ("chart", "confusion", "outcomes", "wins", "counts")


def frame_json(frame: pd.DataFrame | None) -> dict:
    """``{"headers": [...], "data": [[...], ...], "metadata": None}`` of a DataFrame, missing values as null: what
    Gradio's Dataframe component sends to the page, so the tab can send it as it is."""
    if frame is None:
        return {"headers": [], "data": [], "metadata": None}
    split = json.loads(frame.to_json(orient="split", index=False, double_precision=15))
    return {"headers": [str(c) for c in split["columns"]], "data": split["data"], "metadata": None}


PAIR_VOTERS = ("voter_1", "voter_2")  # the inter-annotator table's columns that name annotators


def hide_annotators(table: dict, keep: str | None = None) -> dict:
    """The inter-annotator table (:func:`frame_json` form) with each annotator but ``keep`` shown as ``Annotator #1``,
    ``Annotator #2``, ... in order of first appearance: what a viewer other than the admin sees, since annotators'
    names are private. No annotator is named so (a name cannot hold ``#``); the figures are unchanged."""
    columns = {index for index, name in enumerate(table["headers"]) if name in PAIR_VOTERS}
    labels: dict[str, str] = {}

    def label(name):
        if name is None or name == keep:
            return name
        return labels.setdefault(name, f"Annotator #{len(labels) + 1}")

    data = [[label(value) if index in columns else value for index, value in enumerate(row)] for row in table["data"]]
    return {**table, "data": data}


def json_frame(value: dict) -> pd.DataFrame:
    """The DataFrame of :func:`frame_json`'s output."""
    return pd.DataFrame(value["data"], columns=value["headers"])


def _rated_columns(fit: pd.DataFrame, models: list[str], prefix: str = "", published: bool = False) -> pd.DataFrame:
    """Rank, rating, interval and votes of ``models`` from one :func:`ratings.fit_leaderboard` table, rounded to what
    the votes support (``published``: in whole points, as a published protocol prints them, e.g. the taxonomy
    paper's truncated scores); a provisional model gets no rank or rating and says how many votes it has."""
    part = fit.assign(shown_rank=public_ranks(fit)).set_index("model").reindex(models)
    provisional = part["provisional"].fillna(True).astype(bool).to_numpy()
    votes = part["votes"].fillna(0).astype(int).to_numpy()
    rating, interval = [], []
    for (_, row), weak, n in zip(part.iterrows(), provisional, votes):
        if weak or pd.isna(row["rating"]):
            rating.append(None)
            interval.append(f"provisional ({n} vote{'s' if n != 1 else ''})" if n else "no votes")
        elif published:
            rating.append(float(np.round(row["rating"])))
            interval.append(f"[{row['ci_lower']:.0f}, {row['ci_upper']:.0f}]" if pd.notna(row["ci_lower"]) else "")
        else:
            rating.append(round_rating(row["rating"], row["ci_lower"], row["ci_upper"]))
            interval.append(interval_text(row["ci_lower"], row["ci_upper"]))
    return pd.DataFrame({
        f"{prefix}Rank": part["shown_rank"].astype("Int64").to_numpy(),
        f"{prefix}Rating": pd.array(rating, dtype="Float64").round(0).astype("Int64"),
        f"{prefix}95% interval": interval,
        f"{prefix}Votes": votes,
    })


def main_table(board: Leaderboard) -> pd.DataFrame:
    """The compact leaderboard: rank, model, rating, 95% interval as [low, high], votes and both-bad rate of the
    human votes, then the judge's rank, rating, interval and votes only when the view has judge votes. Every model
    in the database has a row: rated ones best first, then provisional ones by votes, then those without votes."""
    human = board.fits["human"]
    models = list(board.table["model"])
    rated = human[human["rating"].notna() & ~human["provisional"].astype(bool)]
    order = {model: i for i, model in enumerate(rated.sort_values("rating", ascending=False, kind="stable")["model"])}
    votes = dict(zip(human["model"], human["votes"]))
    models.sort(key=lambda m: (m not in order, order.get(m, 0), -int(votes.get(m, 0)), m))
    published = board.protocol != DEFAULT_PROTOCOL
    shown = _rated_columns(human, models, published=published)
    part = human.set_index("model").reindex(models)
    table = pd.DataFrame({"Rank": shown["Rank"], "Model": models, "Rating": shown["Rating"],
                          "95% interval": shown["95% interval"], "Votes": shown["Votes"],
                          "Both bad": [f"{v:.0%}" if pd.notna(v) else "" for v in part["both_bad_rate"]]})
    if board.votes.get("judge", 0):
        table = pd.concat([table, _rated_columns(board.fits["judge"], models, prefix="Judge ", published=published)],
                          axis=1)
    return table


def metrics_table(board: Leaderboard) -> tuple[pd.DataFrame | None, str]:
    """The automatic metrics per model with short headers, three significant digits, and their legend (Markdown);
    None and a sentence saying why when no metric was computed."""
    columns = [c for c in board.table.columns if c == "model" or not (
        c.startswith("Human ") or c.startswith("Judge "))]
    metrics = board.table[columns]
    names = [c for c in columns if c != "model"]
    if not names or metrics[names].isna().all().all():
        return None, ("*No automatic metric has been computed for these models yet: run `python -m judges metrics` "
                      "(docs/methods/metrics.md) and they show here.*")
    short = {name: name.replace("_", " ") for name in names}
    shown = metrics.rename(columns={"model": "Model", **short})
    for name in short.values():
        shown[name] = [None if pd.isna(v) else float(f"{v:.3g}") for v in shown[name]]
    legend = "; ".join(f"**{short[n]}**: `{n}`" for n in names if short[n] != n)
    legend = f" Full names: {legend}." if legend else ""
    return shown, f"*Model means of each metric, to three significant digits.{legend}*"


def metric_tip(name: str, direction: str | None = None, title: str | None = None) -> str:
    """The tooltip of stored metric ``name``'s column: its full name, the stored name, and which way is better
    (``direction``: higher, lower or none; unsaid when unknown). ``title``: a description for a name
    :data:`METRIC_NAMES` lacks (the registered metric's title)."""
    full = METRIC_NAMES.get(name)
    if full is None and name.startswith("consistency_"):
        for stat, stat_words in CONSISTENCY_STATS.items():
            for part, part_words in CONSISTENCY_PARTS.items():
                if name == f"consistency_{stat}{part}":
                    full = f"consistency: {stat_words} of a per-image score within paraphrase groups, {part_words}"
    full = full or title or name.replace("_", " ")
    direction_words = DIRECTION_WORDS.get(direction or "")
    return f"{full} ({name}{'; ' + direction_words if direction_words else ''})"


def header_tips(metrics: dict[str, tuple[str, str]]) -> dict[str, dict[str, str]]:
    """{table element id: {short header: its tooltip}} of every leaderboard table; ``metrics``: {stored metric name:
    (direction, title)} of the metrics the tooltips can name (a column ``name [scorer]`` or ``name (suite)`` takes
    the tooltip of ``name``)."""
    main = {**MAIN_COLUMNS, **{f"Judge {name}": f"the judge's {name.lower()}: {text}"
                               for name, text in MAIN_COLUMNS.items() if name not in ("Model", "Both bad")}}
    shown = {"Model": MAIN_COLUMNS["Model"], **{name.replace("_", " "): metric_tip(name, direction, title)
                                                for name, (direction, title) in metrics.items()}}
    return {"lb-table": main, "lb-metrics": shown, "lb-correlations": CORRELATION_COLUMNS, "lb-bias": BIAS_COLUMNS,
            "lb-annotator-pairs": PAIR_COLUMNS}


def table_note(board: Leaderboard, options: LeaderboardOptions) -> str:
    """The lines under the main table: how ranks are assigned, what each column means, and why the table is empty."""
    lines = []
    if not sum(board.votes.values()):
        chosen = " + ".join(f"{label} {value}" for label, value in (
            ("Suite", options.suite), ("Subset", options.subset), ("Variant", options.variant),
            ("Category", options.category), ("Voter", options.voter)) if value)
        lines.append(f"**No votes match these filters{f' ({chosen})' if chosen else ''}**: every model is listed "
                     "without a rating. Pick other filters (the menus offer only values of the chosen suite).")
    columns = dict(MAIN_COLUMNS)
    if board.protocol != DEFAULT_PROTOCOL:
        lines.append(f"Ratings by the {board.protocol} protocol, in whole points as it prints them; its ties, "
                     "penalty, scale, anchor, bootstrap and rounding are in the summary above.")
        columns["Rating"] = f"the {board.protocol} protocol's rating, in whole points"
        columns["95% interval"] = f"the {board.protocol} protocol's 95% bootstrap interval"
    lines.append(f"Models with fewer than {options.min_votes} votes in the fit are listed as provisional, without a "
                 "rank or rating and left off the chart. " + RANK_RULE)
    lines = [line if line.startswith("**No") else f"*{line}*" for line in lines]
    lines.append("Columns: " + " · ".join(f"**{name}** {text}" for name, text in columns.items()
                                          if name != "Rank") + ".")
    return "\n\n".join(lines)


JSON_COLUMNS = {"model": "model", "rating": "rating", "ci_lower": "lower", "ci_upper": "upper", "rank": "rank",
                "votes": "votes", "wins": "wins", "losses": "losses", "ties": "ties", "both_bad": "both_bad",
                "provisional": "provisional", "printed": "printed"}


def fit_records(fit: pd.DataFrame) -> list[dict]:
    """A fit's rows as JSON objects (:data:`JSON_COLUMNS`; NaN as null), best first."""
    part = fit[[c for c in JSON_COLUMNS if c in fit.columns]].rename(columns=JSON_COLUMNS)
    return json.loads(part.to_json(orient="records", double_precision=15))


def leaderboard_json(board: Leaderboard, options: LeaderboardOptions) -> dict:
    """``python -m arena leaderboard --json``: ``{"protocol", "models": [...], ...}`` with the human votes' table in
    ``models`` and the judge's in ``judge_models``, the filters and the vote counts, for scripts and for comparing
    with a published board."""
    from arena.leaderboard import rating_protocol

    protocol = rating_protocol(options)
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant", "category", "voter", "source")
               if getattr(options, key) is not None}
    return {
        "protocol": board.protocol, "choices": protocol.choices(),
        "protocol_settings": {k: ("inf" if isinstance(v, float) and math.isinf(v) else v)
                              for k, v in protocol.settings().items()},
        "filters": {**filters, "anonymous_only": options.anonymous_only, "include_excluded": options.include_excluded},
        "votes": board.votes, "sources": board.sources, "judge": board.judge,
        "models": fit_records(board.fits["human"]), "judge_models": fit_records(board.fits["judge"]),
    }


def render_view(board: Leaderboard, options: LeaderboardOptions) -> dict:
    """The leaderboard as every viewer sees it: ``summary`` (Markdown), ``tables``, ``figures`` and ``text``."""
    from ratings import plots
    from ratings.matrices import battle_counts_from_tensor, win_fractions_from_tensor

    order = [model for model in board.table["model"] if model in board.models]
    pairs = board.inter_annotator.get("pairs")
    metrics, metrics_note = metrics_table(board)
    tables = {
        "table": main_table(board),
        "metrics": metrics,
        "correlations": board.correlations.round(3),
        "bias": board.position_bias.round(3),
        "pairs": pairs.round(3) if isinstance(pairs, pd.DataFrame) else None,
    }
    no_votes = "No votes match these filters"
    fits = board.fits if board.votes.get("judge", 0) else {"human": board.fits["human"]}
    figures = {
        "chart": plots.ratings_chart(fits, "Ratings of the rated models, 95% intervals", provisional="hide"),
        "confusion": plots.confusion_heatmap(board.agreement["confusion"]) if board.agreement["n"] else
        plots.empty_figure("No battle has both a human and a judge vote in this view" if board.votes.get("judge")
                           else "No judge votes in this view: run python -m judges pairwise",
                           "Human vs judge outcome (same battle)"),
        "outcomes": plots.outcome_distribution(board.outcomes) if len(board.outcomes) else
        plots.empty_figure(no_votes, "Outcomes"),
        "wins": plots.win_fraction_heatmap(win_fractions_from_tensor(board.models, board.counts, order))
        if len(board.models) else plots.empty_figure(no_votes, "Wins"),
        "counts": plots.battle_count_heatmap(battle_counts_from_tensor(board.models, board.counts, order))
        if len(board.models) else plots.empty_figure(no_votes, "Votes per pair"),
    }
    return {
        "summary": summary_text(board, options),
        "notes": {"table": table_note(board, options), "metrics": metrics_note},
        "tables": {name: frame_json(frame) for name, frame in tables.items()},
        "figures": {name: plots.fit_narrow(figure).to_json() for name, figure in figures.items()},
        "text": leaderboard_text(board, options),
        "json": leaderboard_json(board, options),
    }
