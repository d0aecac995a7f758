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

import pandas as pd

from arena.leaderboard import Leaderboard, LeaderboardOptions, leaderboard_text, summary_text

TABLES = ("table", "correlations", "bias", "pairs")
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


def render_view(board: Leaderboard, options: LeaderboardOptions) -> dict:
    """The leaderboard as every viewer sees it: ``summary`` (Markdown), ``tables``, ``figures`` and ``text``."""
    from ratings import plots
    from ratings.matrices import battle_counts_from_tensor, win_fractions_from_tensor

    order = [model for model in board.table["model"] if model in board.models]
    pairs = board.inter_annotator.get("pairs")
    tables = {
        "table": board.table,
        "correlations": board.correlations.round(3),
        "bias": board.position_bias.round(3),
        "pairs": pairs.round(3) if isinstance(pairs, pd.DataFrame) else None,
    }
    figures = {
        "chart": plots.ratings_chart(board.fits),
        "confusion": plots.confusion_heatmap(board.agreement["confusion"]),
        "outcomes": plots.outcome_distribution(board.outcomes),
        "wins": plots.win_fraction_heatmap(win_fractions_from_tensor(board.models, board.counts, order)),
        "counts": plots.battle_count_heatmap(battle_counts_from_tensor(board.models, board.counts, order)),
    }
    return {
        "summary": summary_text(board, options),
        "tables": {name: frame_json(frame) for name, frame in tables.items()},
        "figures": {name: figure.to_json() for name, figure in figures.items()},
        "text": leaderboard_text(board, options),
    }
