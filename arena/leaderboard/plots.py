"""Plotly figures for the leaderboard: ratings with CI bars, win-fraction and battle-count heatmaps, a confusion
matrix and the outcome distribution. Each function takes the same tables the rest of :mod:`ratings` returns and
gives back a ``plotly.graph_objects.Figure``; none of them writes files.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ratings.bias import outcome_counts
from ratings.matrices import battle_count_matrix, win_fraction_matrix
from ratings.votes import OUTCOMES

OUTCOME_LABELS = {"A": "first (A) wins", "B": "second (B) wins", "tie": "tie", "both_bad": "both bad"}
LINE_CHARS = 30  # a title or message is wrapped at this many characters: Plotly never wraps, and a phone's chart
# (about 320 px wide) shows about 32 characters of a title


def wrap(text: str | None, width: int = LINE_CHARS) -> str | None:
    """``text`` broken into lines of at most ``width`` characters with Plotly's ``<br>`` (unchanged if it has some)."""
    if not text or "<br>" in text:
        return text
    return "<br>".join(textwrap.wrap(text, width)) or text


def fit_narrow(figure: go.Figure) -> go.Figure:
    """``figure`` made to fit a narrow screen as well as a wide one: its title and messages wrapped (:func:`wrap`),
    small margins that grow only as far as its tick labels, axis titles, colour bar and title need, and the legend
    as a row above the plot rather than a column beside it. Returns the same figure."""
    layout = figure.layout
    # the title just above the plot (the margin grows to hold it), the legend's row(s) at the bottom of the figure,
    # under the axis labels
    figure.update_layout(margin={"l": 8, "r": 8, "t": 16, "b": 8, "autoexpand": True},
                         legend={"orientation": "h", "x": 0, "xanchor": "left", "yref": "container", "y": 0,
                                 "yanchor": "bottom"})
    if layout.title.text:
        figure.update_layout(title={"text": wrap(layout.title.text), "automargin": True, "yref": "paper", "y": 1,
                                    "yanchor": "bottom", "pad": {"b": 12}})
    figure.update_xaxes(automargin=True)
    figure.update_yaxes(automargin=True)
    for annotation in layout.annotations:
        annotation.text = wrap(annotation.text, 36)
    return figure


def _model_order(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    order: list[str] = []
    for table in tables.values():
        if len(table):
            ranked = table.sort_values("rating", ascending=False, na_position="last", kind="stable")
            order += [m for m in ranked["model"] if m not in order]
    return order


def ratings_chart(tables: Mapping[str, pd.DataFrame], title: str | None = None,
                  provisional: str = "open") -> go.Figure:
    """Ratings with 95% CI bars, one trace per table (e.g. ``{"human": t1, "judge": t2}``) side by side per model.

    Each table is a :func:`ratings.fit_leaderboard` result; models follow the first table's order, best first.
    Models without a rating are left out of that trace. ``provisional="open"`` draws provisional ratings with open
    markers; ``"hide"`` leaves out the models that are not ranked (a table with a ``ranked`` column: those below the
    minimum of votes, drawing the ranked but provisional ones open; without it, every provisional model) and bounds
    the rating axis to the intervals of those shown (so a model with a handful of votes cannot stretch it to
    thousands of points); with no model to show the figure says so.
    """
    if provisional not in ("open", "hide"):
        raise ValueError(f"provisional={provisional!r}: pass 'open' or 'hide'.")
    for label, table in tables.items():
        missing = {"model", "rating", "lower", "upper"} - set(table.columns)
        if missing:
            raise ValueError(f"Table {label!r} lacks {', '.join(sorted(missing))}: pass fit_leaderboard() results.")
    if provisional == "hide":
        tables = {label: table[table["ranked"].astype(bool)] if "ranked" in table else
                  table[~table["provisional"].astype(bool)] if "provisional" in table else table
                  for label, table in tables.items()}
    figure = go.Figure()
    order = _model_order(tables)
    for label, table in tables.items():
        rated = table[table["rating"].notna()].set_index("model").reindex(
            [m for m in order if m in set(table["model"])])
        rated = rated[rated["rating"].notna()]
        marked = rated["provisional"].astype(bool) if "provisional" in rated else pd.Series(False, rated.index)
        figure.add_trace(go.Scatter(
            x=list(rated.index), y=rated["rating"], name=str(label), mode="markers",
            marker={"size": 9, "symbol": ["circle-open" if p else "circle" for p in marked]},
            error_y={"type": "data", "symmetric": False, "array": rated["upper"] - rated["rating"],
                     "arrayminus": rated["rating"] - rated["lower"]},
            customdata=np.stack([rated["lower"], rated["upper"]], axis=-1) if len(rated) else None,
            hovertemplate="%{x}<br>rating %{y:.0f}<br>95% CI %{customdata[0]:.0f} – %{customdata[1]:.0f}"
                          f"<extra>{label}</extra>",
            offsetgroup=str(label),
        ))
    figure.update_layout(
        title=title or "Bradley–Terry Elo with 95% bootstrap CIs", scattermode="group", xaxis_title="Model",
        yaxis_title="Rating", xaxis={"categoryorder": "array", "categoryarray": order}, legend_title_text="Voters",
    )
    if provisional == "hide":
        bounds = [value for table in tables.values() for column in ("lower", "upper", "rating")
                  for value in table[column].dropna()]
        if bounds:
            low, high = min(bounds), max(bounds)
            pad = max(10.0, 0.05 * (high - low))
            figure.update_yaxes(range=[low - pad, high + pad])
        else:
            figure.add_annotation(text="No model has enough votes to be ranked yet", showarrow=False,
                                  xref="paper", yref="paper", x=0.5, y=0.5)
            figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=260)
    return figure


def empty_figure(message: str, title: str = "") -> go.Figure:
    """A figure with no data that says why (an empty panel explains itself rather than showing a grid of zeros)."""
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5,
                          font={"size": 14})
    figure.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False}, height=260)
    return figure


def _heatmap(frame: pd.DataFrame, title: str, text_format: str, **heatmap: object) -> go.Figure:
    values = frame.to_numpy(dtype=float)
    text = [["" if np.isnan(v) else format(v, text_format) for v in row] for row in values]
    figure = go.Figure(go.Heatmap(
        z=values, x=[str(c) for c in frame.columns], y=[str(i) for i in frame.index], text=text,
        texttemplate="%{text}", hovertemplate="%{y} vs %{x}: %{z}<extra></extra>", **heatmap,
    ))
    # the columns named under the matrix: above it, they would share the top margin with the title
    figure.update_layout(title=title, xaxis={"side": "bottom"}, yaxis={"autorange": "reversed"})
    return figure


def win_fraction_heatmap(votes: pd.DataFrame, order: Sequence[str] | None = None) -> go.Figure:
    """Heatmap of the share of votes the row model won against the column model: of a vote table
    (:func:`win_fraction_matrix`), or of such a matrix already computed (a square frame, model × opponent)."""
    frame = votes if _is_matrix(votes) else win_fraction_matrix(votes, order)
    figure = _heatmap(frame, "Fraction of votes the row model won against the column model", ".2f",
                      colorscale="RdBu", zmin=0.0, zmax=1.0, zmid=0.5)
    figure.update_layout(xaxis_title="Opponent", yaxis_title="Model")
    return figure


def battle_count_heatmap(votes: pd.DataFrame, order: Sequence[str] | None = None) -> go.Figure:
    """Heatmap of the number of votes between each pair of models, in either position: of a vote table, or of the
    matrix already computed (:func:`battle_count_matrix`)."""
    frame = votes if _is_matrix(votes) else battle_count_matrix(votes, order)
    figure = _heatmap(frame, "Votes per pair of models", ".0f", colorscale="Blues")
    figure.update_layout(xaxis_title="Opponent", yaxis_title="Model")
    return figure


def _is_matrix(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a model × opponent matrix (:mod:`ratings.matrices`) rather than a vote table."""
    return frame.index.name == "model" and frame.columns.name == "opponent"


def confusion_heatmap(confusion: pd.DataFrame, title: str = "Human vs judge outcome (same battle)") -> go.Figure:
    """Heatmap of a confusion matrix such as ``human_judge_agreement(votes)["confusion"]`` (rows vs columns)."""
    figure = _heatmap(confusion.astype(float), title, ".0f", colorscale="Greens")
    figure.update_layout(yaxis_title=confusion.index.name or "rows", xaxis_title=confusion.columns.name or "columns")
    return figure


def outcome_distribution(votes: pd.DataFrame, by: Sequence[str] = ("voter_kind", "subset")) -> go.Figure:
    """Stacked bars of the outcome shares per group (by default per voter kind and subset), one trace per outcome:
    of a vote table, or of its counts per group already computed (:func:`ratings.bias.outcome_counts`)."""
    counts = votes if set(OUTCOMES) <= set(votes.columns) else outcome_counts(votes, by)
    by = [c for c in counts.columns if c not in OUTCOMES]
    keys = counts[by].astype(str).fillna("—")  # no columns when ``by`` is empty
    counts = counts[list(OUTCOMES)]
    shares = counts.div(counts.sum(axis=1).where(lambda s: s > 0), axis=0)
    if by and len(by) > 1:
        x = [keys[column].tolist() for column in by]
    else:
        x = keys[by[0]].tolist() if by else [str(v) for v in shares.index]
    figure = go.Figure()
    for outcome in OUTCOMES:
        figure.add_trace(go.Bar(x=x, y=shares[outcome].to_numpy(), name=OUTCOME_LABELS[outcome],
                                customdata=counts[outcome].to_numpy(),
                                hovertemplate="%{y:.1%} (%{customdata} votes)<extra>" + OUTCOME_LABELS[outcome]
                                + "</extra>"))
    figure.update_layout(barmode="stack", title="Outcomes per " + (" and ".join(by) if by else "vote table"),
                         yaxis_title="Share of votes", yaxis_tickformat=".0%")
    return figure


def rating_history_chart(points: pd.DataFrame, title: str = "Ratings over time, 95% intervals") -> go.Figure:
    """Each model's rating by day, one line per model with its 95% interval as a band: ``points`` has the columns
    ``day`` (YYYY-MM-DD), ``model``, ``rating``, ``lower``, ``upper`` (rows without a rating are left out). With
    fewer than two days the figure says that the history starts with the first kept day."""
    missing = {"day", "model", "rating", "lower", "upper"} - set(points.columns)
    if missing:
        raise ValueError(f"The rating history lacks {', '.join(sorted(missing))}: pass day, model, rating, lower, "
                         "upper per row.")
    rated = points[points["rating"].notna()].sort_values(["model", "day"])
    days = sorted(set(rated["day"]))
    figure = go.Figure()
    for model, rows in rated.groupby("model", sort=True):
        figure.add_trace(go.Scatter(
            x=rows["day"], y=rows["rating"], name=str(model), mode="lines+markers",
            error_y={"type": "data", "symmetric": False, "array": (rows["upper"] - rows["rating"]).fillna(0),
                     "arrayminus": (rows["rating"] - rows["lower"]).fillna(0), "thickness": 1},
            hovertemplate="%{x}<br>rating %{y:.0f}<extra>" + str(model) + "</extra>"))
    figure.update_layout(title=title, xaxis_title="Day (UTC)", yaxis_title="Rating", legend_title_text="Model",
                         xaxis={"type": "category", "categoryorder": "array", "categoryarray": days})
    if len(days) < 2:  # said over the plot's top when there is a first day to show, in its middle otherwise
        figure.add_annotation(text="The history starts with the first day kept: come back tomorrow, or rebuild past "
                                   "days from the votes (python -m arena leaderboard --rebuild-history DAYS)",
                              showarrow=False, xref="paper", yref="paper", x=0.5, y=0.98 if days else 0.5,
                              yanchor="top" if days else "middle", bgcolor="rgba(255, 255, 255, 0.85)")
        if not days:
            figure.update_layout(xaxis={"visible": False}, yaxis={"visible": False}, height=260)
    return figure
