"""The taxonomy paper's analyses beside its tables: Figures 4, 6, 8 and 9 (each as its data table and a plot) and the
rank correlations of §4.2 and §5, for ``python -m arena report taxonomy`` (:mod:`arena.reports.taxonomy`).

- **Figures 4 and 8**: the human and GPT-4 ELO with and without the definition, one fit over every subset with the
  preset's rating protocol (Table 2's ELO "Mean"), and Spearman's ρ between the two rankings (the paper: 0.92 in
  Figure 4's caption, 0.88 in §5, 0.73 without the definition).
- **Figure 9**: the GPT-4 fit without the definition with Qwen-Image among the systems (registry ``qwen-image``).
- **Figure 6** (Appendix C, "change in battle wins with added definition"): per system, the battles won (an A or B
  verdict for it; a tie or a both-bad is no win) by the humans' and by GPT-4's votes with the definition, without it,
  and the change.
- **Table R** (§4.2, §5): Spearman's ρ between each measure's ranking of the systems (the GPT-4 ELO, the mean reward,
  the four CLIP means, FID with its sign turned, IS) and the human or GPT-4 pooled ELO, each column one prompt
  variant: the pooled ELO of that variant against the measure on that variant's images (the paper names no variant
  for these; its values stand under the definition's columns: reward–human 0.79, reward–GPT 0.59, hypernym–human
  0.911, cohyponym–human 0.871).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from arena.reports import Cell, Column, Table

WITH, WITHOUT = "with_definition", "without_definition"
KINDS = (("human", "Human"), ("judge", "GPT-4"))
QWEN = "qwen-image"


def _ratings(fit: pd.DataFrame | None) -> dict[str, float]:
    """{model: rating} of a fit's rated models."""
    if fit is None or fit.empty:
        return {}
    return {model: float(r) for model, r in fit["rating"].items() if np.isfinite(r)}


def spearman(first: dict[str, float], second: dict[str, float]) -> tuple[float, float, int] | None:
    """(ρ, p, n) of scipy's ``spearmanr`` (average ranks for ties) over the models both give, or None with fewer than
    three or a constant side."""
    from scipy.stats import spearmanr

    shared = sorted(set(first) & set(second))
    if len(shared) < 3:
        return None
    a, b = [first[m] for m in shared], [second[m] for m in shared]
    if len(set(a)) < 2 or len(set(b)) < 2:
        return None
    rho, p = spearmanr(a, b)
    return float(rho), float(p), len(shared)


def _rating_plot(title: str, columns: list[tuple[str, str]], fits: dict[str, pd.DataFrame | None],
                 label: Callable[[str], str]) -> Callable[[], Any]:
    """A plot of the rated models with their 95% intervals, one panel per column side by side (the paper's
    dot-and-whisker charts), the models in the first panel's order."""

    def plot():
        from plotly.subplots import make_subplots

        shown = [(key, name, fits[key][np.isfinite(fits[key]["rating"])]) for key, name in columns
                 if fits.get(key) is not None and np.isfinite(fits[key]["rating"]).any()]
        if not shown:
            return None
        order = [label(m) for m in shown[0][2].sort_values("rating").index]
        order += sorted({label(m) for _, _, rated in shown for m in rated.index} - set(order))
        figure = make_subplots(rows=1, cols=len(shown), shared_yaxes=True, subplot_titles=[n for _, n, _ in shown])
        for k, (_, name, rated) in enumerate(shown, start=1):
            figure.add_scatter(
                x=rated["rating"], y=[label(m) for m in rated.index], mode="markers", name=name, row=1, col=k,
                error_x=dict(type="data", symmetric=False, array=(rated["upper"] - rated["rating"]).fillna(0),
                             arrayminus=(rated["rating"] - rated["lower"]).fillna(0)))
            figure.update_xaxes(title_text="ELO (95% interval)", row=1, col=k)
        figure.update_yaxes(categoryorder="array", categoryarray=order)
        figure.update_layout(title=title, showlegend=False)
        return figure

    return plot


def rating_cell(fit: pd.DataFrame | None, model: str, reason: str, flag: Callable[[pd.Series], str]) -> Cell:
    """A pooled fit's printed rating of ``model`` with its marks (``flag``), or "—" with ``reason`` (no fit) or why
    the model has no rating in it."""
    if fit is None:
        return Cell.absent(reason)
    if model not in fit.index:
        return Cell.absent("no votes of this system in the fit")
    if not fit.loc[model, "printed"]:
        return Cell.absent("not rated (missing from some bootstrap rounds)")
    return Cell(flag(fit.loc[model]), float(fit.loc[model, "rating"]))


def pooled_figure(number: str, title: str, variant: str, fits: dict, models: list[str], label: Callable[[str], str],
                  flag: Callable[[pd.Series], str], paper: str, protocol: str) -> Table:
    """Figure 4 or 8: the pooled human and GPT-4 fits of ``variant`` and their rank correlation."""
    table = Table(number, title, [Column("human", "Human"), Column("gpt", "GPT-4")])
    chosen = {key: fits.get((kind, variant, "Mean")) for key, kind in (("human", "human"), ("gpt", "judge"))}
    reasons = {key: fits.get(("reason", kind, variant, "Mean"), "no votes") for key, kind in
               (("human", "human"), ("gpt", "judge"))}
    for model in models:
        table.add_row(label(model), {key: rating_cell(chosen[key], model, reasons[key], flag) for key in chosen})
    found = spearman(_ratings(chosen["human"]), _ratings(chosen["gpt"]))
    table.notes.append(f"One fit over every subset {variant.replace('_', ' the ')} (Table 2's ELO Mean), rating "
                       f"protocol {protocol}.")
    table.notes.append((f"Spearman ρ of the human and GPT-4 rankings: {found[0]:.2f} (p = {found[1]:.2g}, {found[2]} "
                        "models)" if found else "Spearman ρ of the human and GPT-4 rankings: — (fewer than three "
                        "models rated by both)") + f"; the paper: {paper}.")
    table.plot = _rating_plot(title, [("human", "Human"), ("gpt", "GPT-4")], chosen, label)
    return table


def qwen_figure(fits: dict, models: list[str], label: Callable[[str], str], flag: Callable[[pd.Series], str],
                preset: str) -> Table:
    """Figure 9: the GPT-4 fit without the definition, Qwen-Image among the systems."""
    title = "Figure 9: ELO scores for GPT4 preferences with Qwen-Image model (prompt without the definition)"
    table = Table("F9", title, [Column("gpt", "GPT-4")])
    fit = fits.get(("judge", WITHOUT, "Mean"))
    reason = fits.get(("reason", "judge", WITHOUT, "Mean"), "no votes")
    shown = list(models) + ([QWEN] if QWEN not in models else [])
    for model in shown:
        if model == QWEN and (fit is None or QWEN not in fit.index):
            cell = Cell.absent(f"no GPT-4 votes of {QWEN} without the definition: generate its images (python -m "
                               f"generators run --models {QWEN} --suite taxonomy --preset {preset}, on a GPU) and "
                               f"judge them (python -m judges pairwise --suite taxonomy --preset {preset})")
        else:
            cell = rating_cell(fit, model, reason, flag)
        table.add_row(label(model), {"gpt": cell})
    table.notes.append("Figure 8's GPT-4 fit (one fit over every subset without the definition) with Qwen-Image's "
                       "battles in it.")
    table.plot = _rating_plot(title, [("gpt", "GPT-4")], {"gpt": fit}, label)
    return table


def wins_by_model(votes) -> dict[str, int]:
    """Battles won per model of a :class:`datamodel.vote_arrays.VoteArrays` (an A or B verdict; a self-battle is no
    win)."""
    a, b, outcome = votes.model_a, votes.model_b, votes.outcome
    other = a != b
    won = np.bincount(a[(outcome == 0) & other], minlength=len(votes.models)) + np.bincount(
        b[(outcome == 1) & other], minlength=len(votes.models))
    shown = np.union1d(a, b).astype(int)
    return {votes.models[i]: int(won[i]) for i in shown}


def definition_wins_figure(votes: dict[tuple[str, str], Any], models: list[str], label: Callable[[str], str],
                           reasons: dict[str, str]) -> Table:
    """Figure 6 from ``votes`` {(kind, variant): VoteArrays of that voter and variant}."""
    title = "Figure 6: Summary change in battle wins with added definition in prompt"
    columns = [Column(f"{key} {part}", heading, group) for key, group in (("human", "Human"), ("gpt", "GPT-4"))
               for part, heading in (("def", "w/ def"), ("nodef", "w/o def"), ("change", "change"))]
    table = Table("F6", title, columns)
    won = {(key, variant): wins_by_model(votes[(kind, variant)]) if len(votes[(kind, variant)]) else None
           for key, kind in (("human", "human"), ("gpt", "judge")) for variant in (WITH, WITHOUT)}
    changes: dict[str, dict[str, float]] = {"human": {}, "gpt": {}}
    for model in models:
        cells = {}
        for key, kind in (("human", "human"), ("gpt", "judge")):
            counts = [won[(key, variant)] for variant in (WITH, WITHOUT)]
            for part, found in zip(("def", "nodef"), counts):
                cells[f"{key} {part}"] = (Cell.absent(reasons[kind]) if found is None else
                                          Cell(str(found.get(model, 0)), found.get(model, 0)))
            with_def, without_def = counts
            if with_def is not None and without_def is not None and model in with_def and model in without_def:
                change = with_def[model] - without_def[model]
                changes[key][model] = change
                cells[f"{key} change"] = Cell(f"{change:+d}", change)
            else:
                cells[f"{key} change"] = Cell.absent(reasons[kind] if None in counts else
                                                     f"{label(model)} has no {key} votes in one of the variants")
        table.add_row(label(model), cells)
    sizes = {(kind, variant): len(votes[(kind, variant)]) for kind in ("human", "judge") for variant in (WITH, WITHOUT)}
    table.notes.append("Battles won: the votes naming the system better (A or B; a tie or a both-bad is no win), with "
                       "the definition and without it; change = with − without. Votes: human "
                       f"{sizes[('human', WITH)]} / {sizes[('human', WITHOUT)]}, GPT-4 {sizes[('judge', WITH)]} / "
                       f"{sizes[('judge', WITHOUT)]} (with / without): the change compares like with like when both "
                       "variants judged the same battles, as the paper's labels do.")
    rho = spearman(changes["human"], changes["gpt"])
    if rho:
        table.notes.append(f"Spearman ρ of the human and GPT-4 changes: {rho[0]:.2f} (p = {rho[1]:.2g}, "
                           f"{rho[2]} systems); the paper reads the two as aligned but prints no number.")

    def plot():
        if not any(changes.values()):
            return None
        import plotly.graph_objects as go

        figure = go.Figure()
        for key, name in (("human", "Human"), ("gpt", "GPT-4")):
            shown = [m for m in models if m in changes[key]]
            figure.add_trace(go.Bar(x=[label(m) for m in shown], y=[changes[key][m] for m in shown], name=name))
        figure.update_layout(title=title, barmode="group", yaxis_title="battles won with − without the definition",
                             legend=dict(orientation="h", y=-0.2))
        return figure

    table.plot = plot
    return table


MEASURES = ("GPT-4 ELO", "Reward", "Lemma CLIPScore", "Hypernym CLIPScore", "Cohyponym CLIPScore", "Specificity", "FID",
            "IS")


def correlation_table(fits: dict, measures: dict[tuple[str, str], dict[str, float]],
                      reasons: dict[tuple[str, str], str]) -> Table:
    """Table R: Spearman's ρ of each measure's per-system values ({(measure, variant): {model: value}}, a lower-is-
    better measure already turned) against the pooled human and GPT-4 ELO of the same variant."""
    columns = [Column(f"{who} {short}", name, "w/ def" if variant == WITH else "w/o def")
               for variant, short in ((WITH, "def"), (WITHOUT, "nodef")) for who, name in (("human", "Human ELO"),
                                                                                             ("gpt", "GPT-4 ELO"))]
    table = Table("R", "Rank correlations of the systems' measures with the human and GPT-4 ELO (§4.2, §5)", columns,
                  row_header="Measure")
    for measure in MEASURES:
        cells = {}
        for variant, short in ((WITH, "def"), (WITHOUT, "nodef")):
            values = measures.get((measure, variant), {})
            for who, kind in (("human", "human"), ("gpt", "judge")):
                key = f"{who} {short}"
                elo = _ratings(fits.get((kind, variant, "Mean")))
                if measure == "GPT-4 ELO" and who == "gpt":
                    cells[key] = Cell.absent("the GPT-4 ranking is not compared with itself")
                    continue
                if not elo:
                    cells[key] = Cell.absent(fits.get(("reason", kind, variant, "Mean"), "no pooled ELO"))
                    continue
                if not values:
                    cells[key] = Cell.absent(reasons.get((measure, variant), "no values"))
                    continue
                found = spearman(values, elo)
                cells[key] = (Cell(f"{found[0]:.2f} (p {found[1]:.2g}, {found[2]})", found[0]) if found else
                              Cell.absent("fewer than three systems have both, or one side is constant"))
        table.add_row(measure, cells)
    table.notes.append(
        "Each cell: Spearman's ρ (scipy, average ranks for ties), its p-value and the systems both rank. A column "
        "pairs the pooled ELO of one prompt variant (Figures 4 and 8) with the measure on that variant's images: the "
        "mean reward and CLIP scores per system, FID and IS on the deduplicated full set (FID's sign turned: lower is "
        "better). The paper names no variant for its §4.2 and §5 correlations; its values (GPT-4 0.92 and 0.73, "
        "reward 0.79 and 0.59, hypernym 0.911, cohyponym 0.871) stand under the columns they fit.")
    return table
