"""What a viewer sees of a leaderboard, as plain JSON: its summary, tables, figures and text.

A leaderboard is computed once per set of filters and shown many times (:mod:`arena.leaderboard.service`), so
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

from arena.leaderboard.compute import PROVISIONAL_BATTLES, Leaderboard, LeaderboardOptions
from arena.leaderboard.fits import MODE_TITLES, robustness_text
from arena.leaderboard.labels import (
    DIRECTION_NOTE,
    RANK_RULE,
    bias_frame,
    consistency_parts,
    correlations_frame,
    correlations_note,
    interval_text,
    metric_label,
    pairs_frame,
    plural,
    public_ranks,
    rank_range_text,
    ranked_rows,
    round_rating,
)
from arena.leaderboard.text import leaderboard_text, summary_text
from ratings.protocols import DEFAULT_PROTOCOL
from ratings.ranks import rank_ranges

# The main table's columns, and what each means (each header's tooltip, and the line under the table).
MAIN_COLUMNS = {
    "Rank": RANK_RULE,
    "Rank range": "the best and the worst rank this model's 95% interval allows among the ranked models",
    "Model": "the model's name",
    "Rating": "Bradley–Terry Elo (400 points per 10× odds, mean 1000 over the rated models), rounded to what its "
              "interval supports",
    "95% interval": "the 2.5% and 97.5% bootstrap percentiles of the rating",
    "Votes": "every vote the model took part in",
    "Both bad": "share of its votes where both images were judged bad",
}

# What the other tables' headers mean (arena.leaderboard.labels names them): each header's tooltip on the page.
CORRELATION_COLUMNS = {
    "Compared with people's ratings": "the ranking compared with the people's ranking: the judge's ratings or an "
                                      "automatic metric (sign-flipped where lower is better)",
    "Spearman ρ": "Spearman's rank correlation with the people's ratings (−1 to 1; higher: the same order as "
                  "people's)",
    "Spearman p": "p-value of the Spearman correlation (lower: less likely to be chance; with few models only a "
                  "rough guide)",
    "Kendall τ": "Kendall's τ rank correlation with the people's ratings (−1 to 1; higher: the same order as "
                 "people's)",
    "Kendall p": "p-value of Kendall's τ (lower: less likely to be chance; with few models only a rough guide)",
    "Models": "models rated both by people and by this ranking",
}
BIAS_COLUMNS = {
    "Voters": "who voted: people (annotators) or an automatic judge",
    "Subset": "the prompts' subset",
    "Votes": "votes in this group",
    "A won": "share of votes won by the image in first position (A)",
    "B won": "share of votes won by the image in second position (B)",
    "Tie": "share of votes that were ties",
    "Both bad": "share of votes where both images were judged bad",
    "A's share of wins": "share of the decisive votes (A or B) won by the image in first position; 50%: no position "
                         "bias",
    "p-value": "p-value of a two-sided binomial test of first-position wins against 50% of decisive votes (lower: "
               "stronger evidence of a position bias)",
}
PAIR_COLUMNS = {
    "Annotator": "the first annotator of the pair (numbered: annotators' names are private)",
    "Other annotator": "the second annotator of the pair",
    "Shared battles": "battles both annotators voted on",
    "Agreement": "share of those battles where both gave the same outcome (higher: more agreement)",
    "Cohen's κ": "Cohen's κ: agreement corrected for chance (1: always agree; 0: as by chance; higher is better)",
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
FIGURES = ("chart", "confusion", "outcomes", "wins", "counts", "history")


def frame_json(frame: pd.DataFrame | None) -> dict:
    """``{"headers": [...], "data": [[...], ...], "metadata": None}`` of a DataFrame, missing values as null: what
    Gradio's Dataframe component sends to the page, so the tab can send it as it is."""
    if frame is None:
        return {"headers": [], "data": [], "metadata": None}
    split = json.loads(frame.to_json(orient="split", index=False, double_precision=15))
    return {"headers": [str(c) for c in split["columns"]], "data": split["data"], "metadata": None}


PAIR_VOTERS = ("Annotator", "Other annotator")  # the inter-annotator table's columns that name annotators


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


GREY = "color: var(--body-text-color-subdued); font-style: italic"  # a provisional or unranked row


def fit_status(fit: pd.DataFrame) -> np.ndarray:
    """Per row of a fit table: "ranked", "provisional" (ranked, below the provisional threshold), "unranked" (rated,
    below the minimum of votes) or "unrated" (no rating: no vote, or none that entered the fit). A board kept before
    the two thresholds has no ``ranked`` column: its ranked rows count as ranked, the rest as unranked."""
    ranked = ranked_rows(fit)
    rated = fit["rating"].notna().to_numpy()
    provisional = fit["provisional"].fillna(True).astype(bool).to_numpy() if "ranked" in fit else np.zeros(len(fit),
                                                                                                          bool)
    return np.where(~rated, "unrated", np.where(~ranked, "unranked", np.where(provisional, "provisional", "ranked")))


def _rated_columns(fit: pd.DataFrame, models: list[str], prefix: str = "", published: bool = False) -> pd.DataFrame:
    """Rank, rank range, rating, interval and votes of ``models`` from one fit table, rounded to what the votes
    support (``published``: in whole points, as a published protocol prints them, e.g. the taxonomy paper's
    truncated scores), and each row's status (:func:`fit_status`, "unrated" for a model not in the table). An
    unranked model keeps its rating and interval but takes no rank."""
    status = dict(zip(fit["model"], fit_status(fit)))
    lower, upper = fit["lower"].to_numpy(dtype=float), fit["upper"].to_numpy(dtype=float)
    best, worst = rank_ranges(lower, upper, ranked_rows(fit))
    ranges = dict(zip(fit["model"], (rank_range_text(b, w) for b, w in zip(best, worst))))
    part = fit.assign(shown_rank=public_ranks(fit)).set_index("model").reindex(models)
    votes = part["votes"].fillna(0).astype(int).to_numpy()
    rating: list[float | None] = []
    interval: list[str] = []
    for (_, row), n in zip(part.iterrows(), votes):
        if pd.isna(row["rating"]):
            rating.append(None)
            interval.append("no votes in the fit" if n else "no votes")
        elif published:
            rating.append(float(np.round(row["rating"])))
            interval.append(f"[{row['lower']:.0f}, {row['upper']:.0f}]" if pd.notna(row["lower"]) else "")
        else:
            rating.append(round_rating(row["rating"], row["lower"], row["upper"]))
            interval.append(interval_text(row["lower"], row["upper"]))
    return pd.DataFrame({
        f"{prefix}Rank": part["shown_rank"].astype("Int64").to_numpy(),
        f"{prefix}Rank range": [ranges.get(model, "") for model in models],
        f"{prefix}Rating": pd.array(rating, dtype="Float64").round(0).astype("Int64"),
        f"{prefix}95% interval": interval,
        f"{prefix}Votes": votes,
        f"{prefix}status": [status.get(model, "unrated") for model in models],
    })


def board_rows(fit: pd.DataFrame, models: list[str]) -> list[str]:
    """``models`` in the board's order: those of the fit table as it orders them (the ranked ones by the board's
    order, then the unranked, then the unrated), then the others by name."""
    position = {model: index for index, model in enumerate(fit["model"])}
    return sorted(models, key=lambda m: (m not in position, position.get(m, 0), m))


def main_table(board: Leaderboard) -> tuple[pd.DataFrame, list[str]]:
    """The compact leaderboard, and each row's status (:func:`fit_status`): rank, rank range, model, rating, 95%
    interval as [low, high], votes and both-bad rate of the human column, then the judge's rank, range, rating,
    interval and votes only when the view has judge votes. Every model in the database has a row: the ranked ones
    in the board's order, then the unranked (greyed, with their ratings), then those without votes."""
    human = board.fits["human"]
    models = board_rows(human, list(board.table["model"]))
    published = board.protocol != DEFAULT_PROTOCOL
    shown = _rated_columns(human, models, published=published)
    part = human.set_index("model").reindex(models)
    table = pd.DataFrame({"Rank": shown["Rank"], "Rank range": shown["Rank range"], "Model": models,
                          "Rating": shown["Rating"], "95% interval": shown["95% interval"], "Votes": shown["Votes"],
                          "Both bad": [f"{v:.0%}" if pd.notna(v) else "" for v in part["both_bad_rate"]]})
    if board.votes.get("judge", 0):
        judge = _rated_columns(board.fits["judge"], models, prefix="Judge ", published=published)
        table = pd.concat([table, judge.drop(columns=["Judge status"])], axis=1)
    return mark_warming(table, board.warming), list(shown["status"])


def shown_cell(cell) -> str:
    """A table cell as the page shows it: a whole number without ".0" (as the page writes the JSON number 1.0),
    nothing for a missing value."""
    if cell is None:
        return ""
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell)


def styled_json(frame: pd.DataFrame, statuses: list[str]) -> dict:
    """:func:`frame_json` of the main table with its provisional, unranked and unrated rows greyed (Gradio's table
    metadata: each cell's shown text and style)."""
    value = frame_json(frame)
    style = [GREY if status != "ranked" else "" for status in statuses]
    value["metadata"] = {
        "display_value": [[shown_cell(cell) for cell in row] for row in value["data"]],
        "styling": [[row_style] * len(value["headers"]) for row_style in style],
    }
    return value


def mark_warming(table: pd.DataFrame, warming: dict[str, int]) -> pd.DataFrame:
    """The intervals of the models still warming up (:mod:`sampling.warmup`) marked so until they have
    :data:`arena.leaderboard.compute.PROVISIONAL_BATTLES` battles."""
    marked = [f"{text} warming up: {warming[model]}/{PROVISIONAL_BATTLES} battles"
              if model in warming and text and not text.startswith(("provisional", "no votes")) else text
              for model, text in zip(table["Model"], table["95% interval"])]
    return table.assign(**{"95% interval": marked})


def metrics_table(board: Leaderboard) -> tuple[pd.DataFrame | None, str]:
    """The automatic metrics per model, each header a short label with the direction that is better (↑ higher, ↓
    lower; :func:`arena.leaderboard.labels.metric_label`), three significant digits, and the note under the table
    (Markdown); None and a sentence saying why when no metric was computed."""
    columns = [c for c in board.table.columns if c == "model" or not (
        c.startswith("Human ") or c.startswith("Judge "))]
    metrics = board.table[columns]
    names = [c for c in columns if c != "model"]
    if not names or metrics[names].isna().all().all():
        return None, ("*No automatic metric has been computed for these models yet: run `python -m judges metrics` "
                      "(docs/methods/metrics.md) and they show here.*")
    short = {name: metric_label(name, board.directions.get(name)) for name in names}
    shown = metrics.rename(columns={"model": "Model", **short})
    for name in short.values():
        shown[name] = [None if pd.isna(v) else float(f"{v:.3g}") for v in shown[name]]
    return shown, (f"Model means of each metric over {board.metric_slice}, to three significant digits. "
                   f"{DIRECTION_NOTE} Hover a header for the metric's full name.")


def metric_tip(name: str, direction: str | None = None, title: str | None = None) -> str:
    """The tooltip of stored metric ``name``'s column: its full name, the stored name, and which way is better
    (``direction``: higher, lower or none; unsaid when unknown). ``title``: a description for a name
    :data:`METRIC_NAMES` lacks (the registered metric's title)."""
    full = METRIC_NAMES.get(name)
    if full is None and (parts := consistency_parts(name)) is not None:
        stat, part = parts
        full = (f"consistency: {CONSISTENCY_STATS[stat]} of a per-image score within paraphrase groups, "
                f"{CONSISTENCY_PARTS[part]}")
    full = full or title or name.replace("_", " ")
    direction_words = DIRECTION_WORDS.get(direction or "")
    return f"{full} ({name}{'; ' + direction_words if direction_words else ''})"


def header_tips(metrics: dict[str, tuple[str, str]]) -> dict[str, dict[str, str]]:
    """{table element id: {short header: its tooltip}} of every leaderboard table; ``metrics``: {stored metric name:
    (direction, title)} of the metrics the tooltips can name (a column ``label [scorer]`` or ``label (suite)`` takes
    the tooltip of its label)."""
    main = {**MAIN_COLUMNS, **{f"Judge {name}": f"the judge's {name.lower()}: {text}"
                               for name, text in MAIN_COLUMNS.items() if name not in ("Model", "Both bad")}}
    shown = {"Model": MAIN_COLUMNS["Model"]}
    for name, (direction, title) in metrics.items():  # the header without its arrow too (a direction not stored)
        tip = metric_tip(name, direction, title)
        shown.setdefault(metric_label(name), tip)
        shown[metric_label(name, direction)] = tip
    return {"lb-table": main, "lb-metrics": shown, "lb-correlations": CORRELATION_COLUMNS, "lb-bias": BIAS_COLUMNS,
            "lb-annotator-pairs": PAIR_COLUMNS}


def chosen_filters(options: LeaderboardOptions) -> str:
    """The filters a view was asked for, as the page names them ("Suite Commonsense-T2I + Subset Easy"; "" for
    none): the suites by their titles."""
    from suites.registry import suite_title

    return " + ".join(f"{label} {value}" for label, value in (
        ("Suite", suite_title(options.suite) if options.suite else None), ("Subset", options.subset),
        ("Variant", options.variant), ("Category", options.category), ("Voter", options.voter),
        ("Source", options.source)) if value)


def no_votes_text(options: LeaderboardOptions) -> str:
    """Why a view has no votes, truly: no vote at all yet, or none matching the filters chosen."""
    chosen = chosen_filters(options)
    if chosen or options.anonymous_only:
        return f"No votes match these filters ({chosen or 'anonymous votes only'})"
    return "No votes yet: vote on the Arena tab"


def table_note(board: Leaderboard, options: LeaderboardOptions) -> str:
    """The lines under the main table: how fragile the top is, what the grey rows are, how ranks are assigned, what
    each column means, and why the table is empty."""
    lines = []
    robustness = robustness_text(board.audit)
    if robustness:
        lines.append(robustness)
    if not sum(board.votes.values()):
        chosen = chosen_filters(options)
        if chosen or options.anonymous_only:
            lines.append(f"**No votes match these filters ({chosen or 'anonymous votes only'})**: every model is "
                         "listed without a rating. Pick other filters (the menus offer only values of the chosen "
                         "suite).")
        else:
            lines.append("**No votes yet**: every model is listed without a rating. Votes cast on the Arena tab (or "
                         "imported with `python -m arena import-votes`) make the ratings here.")
    columns = dict(MAIN_COLUMNS)
    if board.protocol != DEFAULT_PROTOCOL:
        lines.append(f"Ratings by the {board.protocol} protocol, in whole points as it prints them; its ties, "
                     "penalty, scale, anchor, intervals and rounding are in the statistics above.")
        columns["Rating"] = f"the {board.protocol} protocol's rating, in whole points"
        columns["95% interval"] = f"the {board.protocol} protocol's 95% interval"
    elif board.mode == "ppi" or options.intervals == "sandwich":
        columns["95% interval"] = "the rating ± 1.96 standard errors of the fit's sandwich (CLT) covariance"
    provisional = max(options.min_votes, options.provisional_votes)
    order = "the lower bound of its 95% interval" if options.order == "lower" else "rating"
    lines.append(f"Ranked models are ordered by {order}. Grey rows: provisional (fewer than {provisional} votes in "
                 f"the fit: the rank may still move) or, without a rank, unranked (fewer than {options.min_votes}: "
                 "listed with their ratings, which are too uncertain to rank, and left off the chart). " + RANK_RULE)
    if board.warming:
        lines.append(f"A model added to a running arena gets its first {PROVISIONAL_BATTLES} battles first; until "
                     f"then its interval is marked warming up ({', '.join(sorted(board.warming))}).")
    lines = [line if line.startswith("**No") else f"*{line}*" for line in lines]
    lines.append("Columns: " + " · ".join(f"**{name}** {text}" for name, text in columns.items()
                                          if name != "Rank") + ".")
    return "\n\n".join(lines)


def headline(board: Leaderboard, options: LeaderboardOptions) -> str:
    """The one plain line over the leaderboard: the votes, how many models are rated, and anything that makes the
    view unusual (another protocol, one vote source, anonymous votes only, excluded votes counted); the statistics are
    folded below it."""
    human, judge = board.votes.get("human", 0), board.votes.get("judge", 0)
    fit = board.fits["human"]
    rated = int(ranked_rows(fit).sum()) if len(fit) else 0
    parts = [plural(human, "human vote"), plural(judge, "judge vote")]
    if board.mode == "ppi":
        ppi = board.ppi
        parts = [f"{plural(human, 'human vote')} + {plural(ppi.get('judge_only', 0), 'judge vote')} on battles no "
                 f"person voted on, the judge's bias corrected by PPI on {ppi.get('paired', 0):,} paired votes "
                 f"(λ = {ppi.get('lambda', 0.0):.2f})"]
    if rated:
        parts.append(f"{rated} of {plural(len(board.table), 'model')} ranked (at least {options.min_votes} votes each)")
    elif human:
        parts.append(f"no model has {options.min_votes} votes yet, so none is ranked: their ratings show greyed")
    if board.protocol != DEFAULT_PROTOCOL:
        parts.append(f"the {board.protocol} protocol")
    if options.source:
        parts.append(f"source {options.source} only")
    if options.anonymous_only:
        parts.append("anonymous votes only")
    if options.include_excluded:
        parts.append("excluded votes included")
    return " · ".join(parts) + "."


# a fit table's columns the JSON keeps, under their names in the table
JSON_COLUMNS = ("model", "rating", "lower", "upper", "rank", "rank_worst", "votes", "wins", "losses", "ties",
                "both_bad", "fit_votes", "ranked", "provisional", "printed")


def fit_records(fit: pd.DataFrame) -> list[dict]:
    """A fit's rows as JSON objects (:data:`JSON_COLUMNS`; NaN as null), best first."""
    part = fit[[c for c in JSON_COLUMNS if c in fit.columns]]
    return json.loads(part.to_json(orient="records", double_precision=15))


def leaderboard_json(board: Leaderboard, options: LeaderboardOptions) -> dict:
    """``python -m arena leaderboard --json``: ``{"protocol", "models": [...], ...}`` with the human votes' table in
    ``models`` and the judge's in ``judge_models``, the filters and the vote counts, for scripts and for comparing
    with a published board."""
    from arena.leaderboard.compute import rating_protocol

    protocol = rating_protocol(options)
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant", "category", "voter", "source")
               if getattr(options, key) is not None}
    return {
        "protocol": board.protocol, "choices": protocol.choices(),
        "protocol_settings": {k: ("inf" if isinstance(v, float) and math.isinf(v) else v)
                              for k, v in protocol.settings().items()},
        "filters": {**filters, "anonymous_only": options.anonymous_only, "include_excluded": options.include_excluded},
        "votes": board.votes, "sources": board.sources, "judge": board.judge,
        "flagged": board.flagged, "flagged_rule": protocol.flagged_rule,
        "mode": board.mode, "mode_title": MODE_TITLES[board.mode], "ppi": board.ppi or None,
        "ranking": {"min_votes": options.min_votes, "provisional_votes": max(options.min_votes,
                                                                             options.provisional_votes),
                    "order": options.order},
        "robustness": board.audit, "robustness_text": robustness_text(board.audit),
        "models": fit_records(board.fits["human"]), "judge_models": fit_records(board.fits["judge"]),
        "plan": board.plan, "warming_up": board.warming,
    }


def board_fit(records: list[dict]) -> pd.DataFrame:
    """A kept board's model records (:func:`fit_records`) as the fit table they came from."""
    fit = pd.DataFrame(records or [])
    for column in ("model", "rating", "lower", "upper", "votes", "provisional"):
        if column not in fit:
            fit[column] = pd.Series(dtype=object)
    fit["provisional"] = fit["provisional"].fillna(True).astype(bool)
    if "ranked" in fit:
        fit["ranked"] = fit["ranked"].fillna(False).astype(bool)
    for column in ("rating", "lower", "upper"):
        fit[column] = pd.to_numeric(fit[column], errors="coerce")
    fit["votes"] = pd.to_numeric(fit["votes"], errors="coerce").fillna(0).astype(int)
    return fit


def kept_table(board: dict) -> dict:
    """The main table (rank, model, rating, interval, votes) of a board kept for a day
    (:mod:`datamodel.rating_history`): rated models best first, then the provisional ones by votes."""
    fit = board_fit(board.get("models", []))
    order = list(fit["model"])  # kept in the board's order
    shown = _rated_columns(fit, order, published=board.get("protocol", DEFAULT_PROTOCOL) != DEFAULT_PROTOCOL)
    return styled_json(pd.DataFrame({"Rank": shown["Rank"], "Rank range": shown["Rank range"], "Model": order,
                                     "Rating": shown["Rating"], "95% interval": shown["95% interval"],
                                     "Votes": shown["Votes"]}), list(shown["status"]))


def history_points(kept: list, now_board: dict | None = None, now: float | None = None) -> pd.DataFrame:
    """(day, model, rating, lower, upper) of every rated model on every kept day, today's from ``now_board`` (the
    board being computed, which will be kept as today's)."""
    from datamodel.rating_history import day_of

    boards = {item.day: item.board for item in kept}
    if now_board is not None and now is not None:
        boards[day_of(now)] = now_board
    rows = []
    for day, board in sorted(boards.items()):
        fit = board_fit(board.get("models", []))
        for row in fit[ranked_rows(fit)].itertuples():
            rows.append((day, row.model, row.rating, row.lower, row.upper))
    return pd.DataFrame(rows, columns=["day", "model", "rating", "lower", "upper"])


def render_view(board: Leaderboard, options: LeaderboardOptions, *, history: list | None = None,
                now: float | None = None, figures: bool = True) -> dict:
    """The leaderboard as every viewer sees it: ``summary`` (Markdown), ``tables``, ``figures`` and ``text``;
    ``history``, the boards kept for the same filters on earlier days (:func:`datamodel.rating_history.history`),
    makes the rating-history chart, with today's point from ``board`` (computed at ``now``). ``figures=False`` (the
    command line, which prints text) leaves the figures out, and plotly unimported. A board whose inter-annotator
    statistics are still being computed (``inter_annotator`` None) says so, and ``pending`` names them."""
    pairs = None if board.inter_annotator is None else board.inter_annotator.get("pairs")
    metrics, metrics_note = metrics_table(board)
    table, statuses = main_table(board)
    tables = {
        "table": table,
        "metrics": metrics,
        "correlations": correlations_frame(board.correlations, board.directions),
        "bias": bias_frame(board.position_bias),
        "pairs": pairs_frame(pairs),
    }
    board_json = leaderboard_json(board, options)
    return {
        "headline": headline(board, options),
        "plan": board.plan,
        "summary": summary_text(board, options),
        "notes": {"table": table_note(board, options), "metrics": metrics_note,
                  "correlations": correlations_note(board.correlations)},
        "tables": {name: styled_json(frame, statuses) if name == "table" else frame_json(frame)
                   for name, frame in tables.items()},
        "text": leaderboard_text(board, options),
        "json": board_json,
    } | ({"pending": ["inter_annotator"]} if board.inter_annotator is None else {}) \
        | ({"figures": draw_figures(board, options, board_json, history, now)} if figures else {})


def draw_figures(board: Leaderboard, options: LeaderboardOptions, board_json: dict, history: list | None,
                 now: float | None) -> dict[str, str]:
    """The page's figures of ``board`` as plotly JSON (:mod:`arena.leaderboard.plots`), each fitted to a narrow
    screen: the ratings chart, the human–judge confusion, the outcomes, wins and votes per pair, the rating history
    (``history`` with today's ``board_json`` at ``now``)."""
    from arena.leaderboard import plots
    from ratings.matrices import battle_counts_from_tensor, win_fractions_from_tensor

    order = [model for model in board.table["model"] if model in board.models]
    no_votes = no_votes_text(options)
    outcomes = board.outcomes.assign(voter_kind=board.outcomes["voter_kind"].map(
        {"human": "people", "judge": "judge"})) if len(board.outcomes) else board.outcomes
    fits = board.fits if board.votes.get("judge", 0) else {"human": board.fits["human"]}
    figures = {
        "chart": plots.ratings_chart(fits, "Ratings of the ranked models, 95% intervals (open: provisional)",
                                     provisional="hide"),
        "confusion": plots.confusion_heatmap(board.agreement["confusion"]) if board.agreement["n"] else
        plots.empty_figure("No battle has both a human and a judge vote in this view" if board.votes.get("judge")
                           else "No judge votes in this view: run python -m judges pairwise",
                           "Human vs judge outcome (same battle)"),
        "outcomes": plots.outcome_distribution(outcomes).update_layout(title="Outcomes by voter and subset")
        if len(board.outcomes) else plots.empty_figure(no_votes, "Outcomes"),
        "wins": plots.win_fraction_heatmap(win_fractions_from_tensor(board.models, board.counts, order))
        if len(board.models) else plots.empty_figure(no_votes, "Wins"),
        "counts": plots.battle_count_heatmap(battle_counts_from_tensor(board.models, board.counts, order))
        if len(board.models) else plots.empty_figure(no_votes, "Votes per pair"),
        "history": plots.rating_history_chart(history_points(history or [], board_json, now)),
    }
    return {name: plots.fit_narrow(figure).to_json() for name, figure in figures.items()}


def history_text(kept: list) -> str:
    """The leaderboard over time as text (the command line): one row per model, one column per kept day, the rating
    ("" where the model was provisional or had no votes that day)."""
    if not kept:
        return ("No board kept for these filters yet: one is kept each day the leaderboard is computed (the server, or "
                "python -m arena leaderboard --fresh); --rebuild-history DAYS makes past days' from the votes.")
    columns = {}
    for item in kept:
        fit = board_fit(item.board.get("models", []))
        rated = fit[ranked_rows(fit)]
        columns[item.day] = dict(zip(rated["model"], rated["rating"].round(0).astype(int)))
    models = sorted({model for ratings in columns.values() for model in ratings},
                    key=lambda m: -list(columns.values())[-1].get(m, -1e9))
    frame = pd.DataFrame({day: [ratings.get(m) for m in models] for day, ratings in columns.items()}, index=models)
    return "Rating by day (UTC), unranked models left blank:\n" + frame.astype("Int64").to_string(na_rep="")


def history_json(db, key: str) -> dict:
    """Every board kept for the filters ``key``, oldest first: {"days": [{"day", "computed_at", "votes", "protocol",
    "models"}]} (the ``leaderboard_history`` API and ``leaderboard --history --json``)."""
    from datamodel.rating_history import history

    return {"days": [{"day": item.day, "computed_at": item.computed_at, "votes": item.board.get("votes", {}),
                      "protocol": item.board.get("protocol"), "models": item.board.get("models", [])}
                     for item in history(db, key)]}
