"""``python -m arena ratings stats``: per rating task, how much the raters agree and the paper's human tables.

For every declared task with counted ratings (:mod:`judges.rating_tasks`): the raters, ratings and questions, the
agreement between raters (:func:`judges.human_stats.rater_agreement`: Fleiss' κ, Krippendorff's α, Cohen's κ per
pair) and each table the task declares from the paper (Commonsense-T2I Table 2's Human column, SemVarBench Table 11,
SANEval Table 4), computed by :mod:`judges.human_stats` from the ratings alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from datamodel.database import Database
from datamodel.human_ratings import ratings_frame
from judges.human_stats import rater_agreement
from judges.rating_tasks import RATING_TASKS


@dataclass(frozen=True)
class TaskStatistics:
    task: str
    title: str
    source: str
    agreement: dict
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


def human_statistics(db: Database, *, task: str | None = None) -> list[TaskStatistics]:
    """The statistics of every task with counted ratings (or of ``task``, which must be declared)."""
    names = [RATING_TASKS[task].name] if task is not None else list(RATING_TASKS)
    result = []
    for name in names:
        declared = RATING_TASKS[name]
        frame = ratings_frame(db, task=name)
        if frame.empty:
            continue
        result.append(TaskStatistics(name, declared.title, declared.source, rater_agreement(frame, declared.scale),
                                     {title: make(frame) for title, make in declared.tables.items()}))
    return result


def _number(value, digits: int = 3) -> str:
    return "n/a" if value is None or value != value else f"{value:.{digits}f}"


def format_statistics(statistics: list[TaskStatistics]) -> str:
    """The statistics as text."""
    if not statistics:
        return "No counted ratings yet: open a task (python -m arena ratings assign TASK) and rate on the Ratings tab."
    lines = []
    for stats in statistics:
        a = stats.agreement
        lines += [f"== {stats.title} ({stats.task})", f"   {stats.source}",
                  f"   {a['raters']} raters, {a['ratings']} ratings on {a['questions']} questions, {a['shared']} rated "
                  f"by two or more", f"   Krippendorff's alpha ({a['level']}): {_number(a['alpha'])}"]
        if a["fleiss_kappa"] == a["fleiss_kappa"]:
            lines.append(f"   Fleiss' kappa: {_number(a['fleiss_kappa'])} (mean pairwise agreement "
                         f"{_number(a['fleiss_agreement'])})")
        for pair in a["pairs"][:10]:
            lines.append(f"   Cohen's kappa {pair['rater_1']} / {pair['rater_2']}: {_number(pair['kappa'])} on "
                         f"{pair['n']} questions (agreement {_number(pair['agreement'])})")
        for title, table in stats.tables.items():
            lines += [f"-- {title}", table.to_string(index=False, float_format=lambda v: f"{v:.4f}")
                      if len(table) else "   (no complete unit yet)"]
        lines.append("")
    return "\n".join(lines).rstrip()
