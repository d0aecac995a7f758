"""Every judge against the human ratings on the same items: the rows the judge board shows beside the pairwise judge's.

For each declared rating task with a :class:`judges.human_stats.Comparison` and counted ratings, one row per judge
that judged the task's items, and a ``human ceiling`` row (rater against rater, where two raters share items):

- ``agreement`` tasks (Commonsense-T2I's fit; the fit judges and the CLIP evaluator): ``accuracy`` and Cohen's
  ``kappa`` of every rating against the judge on its question (``pairs`` ratings on ``items`` questions);
- ``correlation`` tasks (SemVarBench's SemVarEffect per item, Table 12's columns; SANEval's score per image):
  ``pearson``, ``spearman`` and, where the task defines classes, ``kappa``, of the judge against the raters' consensus
  on ``items`` shared items.

Formulas in :mod:`ratings.rater_agreement`; what each task compares in :mod:`judges.human_stats`. A row with fewer
than ``min_shared`` shared items says ``insufficient`` and shows no figure. Rows are per task, the ceiling first, then
best first (by κ for agreement tasks, by Spearman's ρ for correlation tasks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from datamodel.database import Database
from datamodel.human_ratings import ratings_frame
from judges.rating_tasks import RATING_TASKS
from ratings.rater_agreement import judge_agreement, judge_correlation, rater_ceiling

CEILING = "human ceiling"
COLUMNS = ("task", "judge", "compared", "items", "pairs", "accuracy", "kappa", "pearson", "spearman", "insufficient")


@dataclass(frozen=True)
class HumanCompareOptions:
    """``min_shared``: fewer shared items give "insufficient"; ``task``: only this rating task; ``suite``: only the
    tasks of this suite; ``model``: only the items of this model's images (SemVarBench's Table 12 is CogView3-Plus's)."""

    min_shared: int = 30
    task: str | None = None
    suite: str | None = None
    model: str | None = None


def _row(task: str, judge: str, what: str, figures: dict, min_shared: int) -> dict:
    row = {"task": task, "judge": judge, "compared": what, "items": int(figures.get("items", 0)),
           "pairs": int(figures.get("n", 0)), **{name: figures.get(name, np.nan) for name in
                                                 ("accuracy", "kappa", "pearson", "spearman")}}
    row["insufficient"] = row["items"] < min_shared
    return row


def compare_with_humans(db: Database, options: HumanCompareOptions = HumanCompareOptions()) -> pd.DataFrame:
    """The table of the module docstring (columns :data:`COLUMNS`); empty when no task has counted ratings."""
    tasks = dict(RATING_TASKS)
    if options.task is not None and options.task not in tasks:
        raise ValueError(f"No rating task {options.task!r}: use one of {', '.join(tasks)}.")
    rows = []
    for name, task in tasks.items():
        if task.compare is None or (options.task is not None and name != options.task) or (
                options.suite is not None and task.suite != options.suite):
            continue
        frame = ratings_frame(db, task=name)
        if options.model is not None:
            frame = frame[frame["model"] == options.model]
        if frame.empty:
            continue
        compare = task.compare
        raters = compare.raters(frame)
        rows.append(_row(name, CEILING, compare.what, rater_ceiling(raters, compare.kind, compare.classes),
                         options.min_shared))
        consensus = compare.consensus(frame) if compare.kind == "correlation" else None
        judged = []
        for judge, values in sorted(compare.machines(db).items()):
            figures = (judge_agreement(raters, values) if compare.kind == "agreement"
                       else judge_correlation(consensus, values, compare.classes))
            if figures["items"]:
                judged.append(_row(name, judge, compare.what, figures, options.min_shared))
        best = "kappa" if compare.kind == "agreement" else "spearman"
        judged.sort(key=lambda row: (row["insufficient"], -np.nan_to_num(row[best], nan=-np.inf), row["judge"]))
        rows += judged
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    for row in table.index[table["insufficient"]]:
        table.loc[row, ["accuracy", "kappa", "pearson", "spearman"]] = np.nan
    return table


def _number(value, digits: int = 3) -> str:
    return "" if value is None or value != value else f"{value:.{digits}f}"


def format_human_table(table: pd.DataFrame) -> str:
    """The comparison as text, one block per task."""
    lines = []
    shown = (("judge", 44), ("items", 6), ("pairs", 6), ("acc", 6), ("kappa", 6), ("pearson", 7), ("spearman", 8))
    for task, rows in table.groupby("task", sort=False):
        lines.append(f"== {task}: judges against the human ratings ({rows['compared'].iloc[0]})")
        lines.append(" ".join(name.ljust(width) for name, width in shown))
        for row in rows.itertuples():
            head = [row.judge[:44].ljust(44), str(row.items).ljust(6), str(row.pairs).ljust(6)]
            if row.insufficient:
                lines.append(" ".join(head) + " insufficient (fewer shared items than --min-shared)")
                continue
            values = [_number(row.accuracy), _number(row.kappa), _number(row.pearson), _number(row.spearman)]
            lines.append(" ".join(head + [v.ljust(w) for v, (_, w) in zip(values, shown[3:])]).rstrip())
    return "\n".join(lines)
