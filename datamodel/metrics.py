"""The ``metrics`` table: its one writer, readers, the directions of stored metrics, and the model × metric table.

A metric row is identified by (model, image or none, suite, subset, variant, name, scorer) (the ``metrics_key`` unique
index; ``variant`` is empty for a row over every variant):
writing the same key again replaces the value, so every scorer can be rerun safely. ``scorer`` names the model that
scored (e.g. ``open_clip:ViT-B-32:openai``), ``scorer_version`` the library version and weights, so rows made with
tiny random stand-ins never mix with real ones. Every writer (the automatic metrics, the judges) goes through
:func:`write_metrics`.

``metric_directions`` records, per stored metric name, whether a ``higher`` or ``lower`` value is better (or
``none``); whoever computes a metric records it (:func:`record_directions`), and the model × metric table reads it
to list its lower-is-better columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from datamodel.database import Database
from datamodel.dialect import now_text, pick
from datamodel.models import sorted_model_names

DIRECTIONS = ("higher", "lower", "none")  # the metric_directions CHECK constraint lists the same


@dataclass(frozen=True)
class MetricRow:
    model_id: int
    name: str
    value: float | None
    scorer: str
    image_id: int | None = None  # None: a model-level metric
    suite: str = ""
    subset: str = ""
    scorer_version: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    variant: str = ""  # the prompt variant the row covers ('' : every variant, or not a variant-level row)


def write_metrics(db: Database, rows: Iterable[MetricRow]) -> int:
    """Insert or replace metric rows in one transaction; return how many were written. The one writer of the
    ``metrics`` table."""
    count = 0
    # the conflict target is the metrics_key index's expression, as each engine's schema writes it
    key_image = pick(db, sqlite="ifnull(image_id, 0)", postgresql="coalesce(image_id, 0)")
    with db.conn:
        for row in rows:
            value = None if row.value is None else float(row.value)
            db.execute(
                "INSERT INTO metrics (model_id, image_id, suite, subset, variant, name, value, scorer, scorer_version, "
                "details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (model_id, {key_image}, suite, subset, variant, name, scorer) DO UPDATE SET "
                "value = excluded.value, scorer_version = excluded.scorer_version, details = excluded.details, "
                f"created_at = {now_text(db)}",
                [row.model_id, row.image_id, row.suite, row.subset, row.variant, row.name, value, row.scorer,
                 row.scorer_version,
                 json.dumps(row.details, ensure_ascii=False, sort_keys=True)],
            )
            count += 1
    return count


def record_directions(db: Database, directions: Mapping[str, str]) -> None:
    """Record which direction is better ({stored metric name: ``higher`` | ``lower`` | ``none``}), as the metric
    computing those names declares it; a name recorded before takes the new direction."""
    wrong = {name: d for name, d in directions.items() if d not in DIRECTIONS}
    if wrong:
        raise ValueError(f"metric directions {wrong}: use one of {', '.join(DIRECTIONS)}.")
    with db.conn:
        db.conn.executemany(
            "INSERT INTO metric_directions (name, direction) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET "
            "direction = excluded.direction WHERE metric_directions.direction != excluded.direction",
            list(directions.items()))


def metric_directions(db: Database) -> dict[str, str]:
    """{stored metric name: direction} as recorded; a name not recorded counts as higher-is-better."""
    return dict(db.execute("SELECT name, direction FROM metric_directions ORDER BY name").fetchall())


def scored_image_ids(db: Database, name: str, scorer: str) -> set[int]:
    """Images that already have metric ``name`` from ``scorer``."""
    rows = db.execute("SELECT image_id FROM metrics WHERE name = ? AND scorer = ? AND image_id IS NOT NULL",
                      [name, scorer])
    return {row[0] for row in rows}


def metric_scorers(db: Database, name: str, suite: str) -> list[str]:
    """The scorers (judge names) that wrote model-level metric ``name`` for ``suite``, in the order they first did."""
    return [row[0] for row in db.execute(
        "SELECT scorer FROM metrics WHERE name = ? AND suite = ? AND image_id IS NULL GROUP BY scorer ORDER BY MIN(id)",
        [name, suite]).fetchall()]


def model_metric_values(db: Database, name: str, *, scorer: str, suite: str) -> dict[tuple[str, str],
                                                                                                  float]:
    """{(model name, subset): value} of model-level metric ``name`` written by ``scorer`` for ``suite``."""
    return {(model, subset): value for model, subset, value in db.execute(
        "SELECT m.name, x.subset, x.value FROM metrics x JOIN models m ON m.id = x.model_id "
        "WHERE x.name = ? AND x.scorer = ? AND x.suite = ? AND x.image_id IS NULL", [name, scorer, suite])}


def image_metric_frame(db: Database, name: str, *, scorer: str | None = None, suite: str | None = None):
    """One row per scored image: image_id, model, prompt_id, idx, suite, subset, variant, item_key, role, category,
    scorer, value (pandas DataFrame)."""
    import pandas as pd

    sql = (
        "SELECT x.image_id, m.name AS model, i.prompt_id, i.idx, p.suite, p.subset, p.variant, p.item_key, p.role, "
        "json_extract(p.metadata, '$.category') AS category, x.scorer, x.value FROM metrics x "
        "JOIN images i ON i.id = x.image_id JOIN prompts p ON p.id = i.prompt_id JOIN models m ON m.id = x.model_id "
        "WHERE x.name = ?"
    )
    args: list[Any] = [name]
    if scorer is not None:
        sql += " AND x.scorer = ?"
        args.append(scorer)
    if suite is not None:
        sql += " AND p.suite = ?"
        args.append(suite)
    columns = ["image_id", "model", "prompt_id", "idx", "suite", "subset", "variant", "item_key", "role", "category",
               "scorer", "value"]
    return pd.DataFrame(db.execute(sql + " ORDER BY x.image_id", args).fetchall(), columns=columns)


def model_metric_table(db: Database, suite: str | None = None, subset: str | None = None,
                       variant: str | None = None):
    """Rows: every model (column ``model``); columns: metric names; values: model-level metrics as stored and the
    model mean of image-level metrics, over the slice the leaderboard shows.

    Image-level metrics are averaged over the images of the prompts of ``suite``, ``subset`` and ``variant`` (None:
    any). Model-level metrics are taken from the row of that slice: subset ``subset or ''`` and variant ``variant or
    ''`` (the pooled row when there is no filter, e.g. a FID per subset and variant when both are given); rows of
    other subsets (per-category accuracies, the ``reward_mann_whitney_p`` comparisons under ``vs <model>``) or
    variants are not columns. ``table.attrs["slice"]`` says which slice it is ("every prompt" without filters). A
    name computed by
    several scorers (a real CLIP and a tiny stand-in, say) gets one column per scorer, ``name [scorer]``; a
    model-level name present in several suites gets ``name (suite)`` unless ``suite`` selects one.
    ``table.attrs["lower_is_better"]`` lists the columns where smaller is better by ``metric_directions`` (FID,
    consistency spreads, ...), for rank correlations against ELO.
    """
    import pandas as pd

    models = sorted_model_names(db)
    where, args = "", []
    if suite is not None:
        where, args = " AND x.suite = ?", [suite]
    prompt_where, prompt_args = "", []
    for column, value in (("subset", subset), ("variant", variant)):
        if value is not None:
            prompt_where += f" AND p.{column} = ?"
            prompt_args.append(value)
    image_level = pd.DataFrame(
        db.execute(
            "SELECT m.name, x.name, x.scorer, '' AS suite, AVG(x.value) FROM metrics x "
            "JOIN models m ON m.id = x.model_id "
            + ("JOIN images i ON i.id = x.image_id JOIN prompts p ON p.id = i.prompt_id " if prompt_where else "")
            + f"WHERE x.image_id IS NOT NULL{where}{prompt_where} GROUP BY m.name, x.name, x.scorer",
            args + prompt_args,
        ).fetchall(),
        columns=["model", "metric", "scorer", "suite", "value"],
    )
    model_level = pd.DataFrame(
        db.execute(
            "SELECT m.name, x.name, x.scorer, x.suite, x.value FROM metrics x JOIN models m ON m.id = x.model_id "
            f"WHERE x.image_id IS NULL AND x.subset = ? AND x.variant = ?{where}", [subset or "", variant or ""] + args
        ).fetchall(),
        columns=["model", "metric", "scorer", "suite", "value"],
    )
    long = pd.concat([image_level, model_level], ignore_index=True)
    table = pd.DataFrame({"model": models})
    shown = ", ".join(f"{name} {value}" for name, value in (("subset", subset), ("variant", variant)) if value)
    table.attrs["slice"] = shown or "every prompt"
    if long.empty:
        table.attrs["lower_is_better"] = []
        return table
    scorers = long.groupby("metric")["scorer"].nunique()
    suites = long.groupby("metric")["suite"].nunique()

    def label(row) -> str:
        text = row["metric"]
        if suites[row["metric"]] > 1 and row["suite"]:
            text += f" ({row['suite']})"
        if scorers[row["metric"]] > 1:
            text += f" [{row['scorer']}]"
        return text

    long["column"] = long.apply(label, axis=1)
    wide = long.pivot_table(index="model", columns="column", values="value", aggfunc="mean")
    columns = sorted(wide.columns)
    table = table.join(wide[columns], on="model")
    lower = {name for name, direction in metric_directions(db).items() if direction == "lower"}
    lower_columns = set(long.loc[long["metric"].isin(lower), "column"])
    table.attrs["lower_is_better"] = [c for c in columns if c in lower_columns]
    table.attrs["slice"] = shown or "every prompt"
    return table


def model_level_rows(db: Database, names: Iterable[str], *, suite: str | None = None) -> list[dict]:
    """The model-level rows (no image) of the metrics ``names``: model, name, scorer, scorer_version, suite, subset,
    variant, value and details (decoded), ordered by model, name, scorer, subset and variant. What the benchmark
    reports read."""
    names = list(names)
    sql = (f"SELECT m.name AS model, x.name, x.scorer, x.scorer_version, x.suite, x.subset, x.variant, x.value, "
           f"x.details FROM metrics x JOIN models m ON m.id = x.model_id "
           f"WHERE x.image_id IS NULL AND x.name IN ({','.join('?' * len(names)) or 'NULL'})")
    args: list[Any] = list(names)
    if suite is not None:
        sql += " AND x.suite = ?"
        args.append(suite)
    rows = []
    for row in db.query(sql + " ORDER BY m.name, x.name, x.scorer, x.subset, x.variant", args):
        rows.append({**row, "details": json.loads(row["details"] or "{}")})
    return rows


def image_metric_means(db: Database, suite: str, names: Iterable[str]):
    """Per-image metrics ``names`` of ``suite`` averaged per model, scorer, prompt subset and prompt variant, with
    the count of images: columns model, name, scorer, subset, variant, value, n (a report's per-subset cells)."""
    import pandas as pd

    names = list(names)
    marks = ",".join("?" * len(names)) or "NULL"
    rows = db.execute(
        "SELECT m.name, x.name, x.scorer, p.subset, p.variant, AVG(x.value), COUNT(x.value) FROM metrics x "
        "JOIN models m ON m.id = x.model_id JOIN images i ON i.id = x.image_id JOIN prompts p ON p.id = i.prompt_id "
        f"WHERE p.suite = ? AND x.name IN ({marks}) GROUP BY m.name, x.name, x.scorer, p.subset, p.variant",
        [suite, *names]).fetchall()
    return pd.DataFrame(rows, columns=["model", "name", "scorer", "subset", "variant", "value", "n"])



def scorer_versions(db: Database, suite: str, names: Iterable[str]) -> dict[tuple[str, str], str]:
    """{(metric name, scorer): scorer version} of ``suite``'s rows (the latest version where a scorer has several)."""
    names = list(names)
    marks = ",".join("?" * len(names)) or "NULL"
    return {(name, scorer): version for name, scorer, version in db.execute(
        f"SELECT name, scorer, scorer_version FROM metrics WHERE suite = ? AND name IN ({marks}) ORDER BY created_at",
        [suite, *names]).fetchall()}


def model_level_values(db: Database, name: str, suite: str, scorer: str | None = None) -> list[tuple]:
    """(model name, value, scorer, details decoded) of the model-level rows of metric ``name`` in ``suite`` (of one
    ``scorer``, or all)."""
    sql = ("SELECT m.name, x.value, x.scorer, x.details FROM metrics x JOIN models m ON m.id = x.model_id "
           "WHERE x.name = ? AND x.suite = ? AND x.image_id IS NULL")
    args = [name, suite]
    if scorer is not None:
        sql += " AND x.scorer = ?"
        args.append(scorer)
    return [(model, value, row_scorer, json.loads(details)) for model, value, row_scorer, details in
            db.execute(sql, args).fetchall()]


def metric_names_of_source(db: Database, source: str) -> set[tuple[str, str, str]]:
    """Distinct (model name, suite, metric name) of the metrics of the models of ``source``."""
    return set(db.execute("SELECT DISTINCT m.name, mt.suite, mt.name FROM metrics mt JOIN models m ON m.id = "
                          "mt.model_id WHERE m.source = ?", [source]).fetchall())


def metric_rows_of_source(db: Database, source: str) -> list[tuple]:
    """(model name, image id or None, suite, subset, variant, name, value, scorer, scorer version, details text) of
    every metric of the models of ``source``, in the order of the ``metrics_key`` index under each model."""
    return db.execute(
        "SELECT m.name, mt.image_id, mt.suite, mt.subset, mt.variant, mt.name, mt.value, mt.scorer, "
        "mt.scorer_version, mt.details FROM metrics mt JOIN models m ON m.id = mt.model_id WHERE m.source = ? "
        "ORDER BY m.id, coalesce(mt.image_id, 0), mt.suite, mt.subset, mt.variant, mt.name, mt.scorer",
        [source]).fetchall()
