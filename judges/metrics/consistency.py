"""Consistency over paraphrases (protocols.md, T5), from any stored per-image score.

A group is one model's images of one item (``item_key``: the paraphrases of one object in the ``paraphrase``
suite; in other suites the prompts sharing an item key, e.g. a taxonomy concept with and without its definition).
With v_ij the score of image j of object i:

    s_i = sqrt( Σ_j (v_ij − mean_j v_ij)² / (m − 1) )   (pandas ``std``, ddof 1; or the min, or the median: ``stat``)
    S_a = mean s_i over abstract objects,  S_r = mean s_i over realistic objects,  S_final = S_r − S_a

(Hollinger, "Comparing Text-to-Image Consistency between Abstract and Realistic Objects", §2, eqs. 2–5; eq. 2 as
printed lacks the square, under which every s_i would be 0: the authors' ``run_benchmark.py`` takes pandas' sample
standard deviation, as here. Table 1 also uses the min and the median as s_i.) The paper's v_ij is the ALIGN score
of image j of object i with its own prompt wording (``--consistency-source align_score``, the metric ``align``);
the default source, ``clip_score``, is the project's CLIP variant.

(lower |S_final| is better). Written per model (model level, subset ''): ``consistency_<stat>`` (mean s_i over all
groups) and, when both categories are present, ``consistency_<stat>_S_a``, ``..._S_r``, ``..._S_final``. The scorer
of those rows is ``<source scorer>/<source metric>``, so consistencies of different scores never overwrite each other.
"""

from __future__ import annotations

import argparse
from typing import Sequence

from datamodel.database import Database
from datamodel.metrics import MetricRow, image_metric_frame, write_metrics
from datamodel.models import model_ids as models_by_name
from judges.metrics.registry import METRICS, Metric, MetricRun, Skip

STATS = ("std", "min", "median")
CATEGORIES = ("abstract", "realistic")


def group_statistic(values: Sequence[float], stat: str) -> float | None:
    """s_i of one group (pandas, as the authors' ``run_benchmark.py`` aggregates it): the sample standard deviation
    ``Series.std()`` (ddof 1, so None below 2 values), ``min`` or ``median``; missing values are left out."""
    import pandas as pd

    if stat not in STATS:
        raise ValueError(f"stat must be one of {', '.join(STATS)}, got {stat!r}.")
    series = pd.Series(values, dtype="float64").dropna()
    value = getattr(series, stat)() if stat != "std" else series.std(ddof=1)
    return None if pd.isna(value) else float(value)


def consistency_summary(frame, stat: str = "std"):
    """Per model from a frame with columns model, item_key, category, value: groups, mean, S_a, S_r, S_final.

    s_i is the pandas aggregate of each (model, item_key, category) group's values (:func:`group_statistic`); a
    group without an s_i (one value, for ``std``) is left out of the means."""
    import pandas as pd

    rows = []
    for model, model_frame in frame.groupby("model", sort=True):
        per_group = []
        for (item_key, category), group in model_frame.groupby(["item_key", "category"], dropna=False, sort=True):
            s = group_statistic(group["value"].tolist(), stat)
            if s is not None:
                per_group.append((category, s))
        mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
        s_a = mean([s for c, s in per_group if c == "abstract"])
        s_r = mean([s for c, s in per_group if c == "realistic"])
        rows.append({"model": model, "groups": len(per_group), "mean": mean([s for _, s in per_group]),
                     "S_a": s_a, "S_r": s_r, "S_final": s_r - s_a if s_a is not None and s_r is not None else None})
    return pd.DataFrame(rows, columns=["model", "groups", "mean", "S_a", "S_r", "S_final"])


def score_consistency(db: Database, suite: str, *, source: str = "clip_score", scorer: str | None = None,
                      stats: Sequence[str] = STATS, progress: bool = False) -> dict:
    """Compute and store the consistency metrics of ``suite`` from the per-image metric ``source``.

    ``scorer`` picks the source rows' scorer (default: the one with most rows). Returns {stat: summary frame}.
    A model without groups of one category gets no S_a/S_r/S_final row (not a NULL one).
    """
    import pandas as pd

    from judges.metrics.progress import progress_bar

    frame = image_metric_frame(db, source, scorer=scorer, suite=suite).dropna(subset=["value"])
    if frame.empty:
        raise LookupError(f"no {source!r} scores for suite {suite!r}: compute them first "
                          f"(python -m judges metrics --suite {suite} --metrics clip).")
    if scorer is None:
        scorer = frame["scorer"].value_counts().idxmax()
        frame = frame[frame["scorer"] == scorer]
    frame = frame.assign(category=frame["category"].fillna(frame["subset"]))
    model_ids = models_by_name(db)
    written_scorer = f"{scorer}/{source}"
    results, rows = {}, []
    with progress_bar(len(stats) * frame["model"].nunique(), f"consistency {suite}", unit="model",
                      progress=progress) as bar:
        for stat in stats:
            summary = consistency_summary(frame, stat)
            results[stat] = summary
            for record in summary.to_dict("records"):  # pandas stores a missing S_a/S_r as NaN, not None
                values = {f"consistency_{stat}": record["mean"]}
                if pd.notna(record["S_a"]) and pd.notna(record["S_r"]):
                    values.update({f"consistency_{stat}_S_a": record["S_a"], f"consistency_{stat}_S_r": record["S_r"],
                                   f"consistency_{stat}_S_final": record["S_final"]})
                for name, value in values.items():
                    if pd.notna(value):
                        rows.append(MetricRow(model_ids[record["model"]], name, value, written_scorer, suite=suite,
                                              details={"source": source, "source_scorer": scorer,
                                                       "groups": record["groups"]}))
                bar.update(1)
    write_metrics(db, rows)
    return results


# --- the declaration ------------------------------------------------------------------------------------------------


def consistency_options(parser: argparse.ArgumentParser) -> None:
    """Which stored per-image score the spreads are taken of."""
    parser.add_argument("--consistency-source", default="clip_score", help="per-image metric to take spreads of")
    parser.add_argument("--consistency-scorer", help="scorer of the source metric (default: the most used)")


def _score(run: MetricRun, scorer: None) -> dict:
    try:
        results = score_consistency(run.db, run.suite, source=run.options.consistency_source,
                                    scorer=run.options.consistency_scorer, progress=run.progress)
    except LookupError as error:  # nothing stored to take spreads of: the message says how to make it
        raise Skip(str(error)) from None
    return {"consistency": results["std"]}


PARTS = ("", "_S_a", "_S_r", "_S_final")  # consistency_<stat><part>: over all groups, abstract, realistic, S_r - S_a

# The spreads (std) are better small; S_final is signed (a small |S_final| is better) and min and median follow the
# source score: neither.
METRICS.register(Metric(
    name="consistency", title="spread of a stored per-image score (--consistency-source) within paraphrase groups "
    "(T5): consistency_<std|min|median>[_S_a|_S_r|_S_final]",
    direction="none", stored=tuple(f"consistency_{stat}{part}" for stat in STATS for part in PARTS),
    directions={f"consistency_std{part}": "lower" for part in PARTS if part != "_S_final"},
    options=(consistency_options,), score=_score, derived=True,
))
