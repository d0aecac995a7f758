"""The vote table: one row per vote joined with its battle, prompt, images and models.

:func:`votes_frame` is what the ratings and the admin export read; its columns follow the vote format of
:mod:`ratings` (``model_a`` / ``model_b`` as displayed, ``outcome`` relative to them) plus everything an analyst
needs to slice or audit a vote. It also slices, in SQL, by the :data:`SLICES` (suite, subset, prompt variant,
category, voter kind, voter). A prompt is in a category when its metadata's ``category`` is that value or its
``categories`` list holds it (a SemVarBench item may be in several); :func:`category_choices` lists them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import sqlite_utils

EXPORT_FORMATS = ("csv", "jsonl", "parquet")
SLICES = ("suite", "subset", "variant", "category", "voter_kind", "voter")
_SLICE_COLUMNS = {"suite": "p.suite", "subset": "p.subset", "variant": "p.variant", "voter_kind": "v.voter_kind",
                  "voter": "v.voter"}

VOTES_SQL = """
SELECT v.id AS vote_id, v.battle_id, v.created_at AS voted_at,
       strftime('%Y-%m-%dT%H:%M:%fZ', b.served_at, 'unixepoch') AS served_at,
       v.voter, v.voter_kind, b.judge, v.outcome,
       ml.name AS model_a, mr.name AS model_b,
       CASE v.outcome WHEN 'A' THEN ml.name WHEN 'B' THEN mr.name ELSE v.outcome END AS winner,
       p.suite, p.subset, p.variant, p.item_key, p.role, p.text AS prompt, p.metadata AS prompt_metadata,
       json_extract(p.metadata, '$.category') AS category, json_extract(p.metadata, '$.categories') AS categories,
       b.prompt_id, b.left_image_id AS image_a_id, b.right_image_id AS image_b_id,
       b.prompt_id || ':' || min(b.left_image_id, b.right_image_id) || ':' || max(b.left_image_id, b.right_image_id)
           AS pair_key,
       v.seconds_to_vote, b.strategy, v.excluded, v.excluded_reason, v.reviewed
FROM votes v
JOIN battles b ON b.id = v.battle_id
JOIN prompts p ON p.id = b.prompt_id
JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id
JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id
"""

COLUMNS = [
    "vote_id", "battle_id", "voted_at", "served_at", "voter", "voter_kind", "judge", "outcome", "model_a", "model_b",
    "winner", "suite", "subset", "variant", "item_key", "role", "prompt", "prompt_metadata", "category", "categories",
    "prompt_id",
    "image_a_id", "image_b_id", "pair_key", "seconds_to_vote", "strategy", "excluded", "excluded_reason", "reviewed",
]


def _values(wanted: object) -> list:
    return list(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]


def slice_where(*, include_excluded: bool = True, **filters: object) -> tuple[str, list]:
    """The SQL ``WHERE`` clause (over votes ``v`` and prompts ``p``) and parameters of a slice.

    Each filter of :data:`SLICES` is one value or a list of accepted values; ``None`` means any. ``category`` keeps
    a prompt whose metadata ``category`` is one of the values or whose ``categories`` list holds one.
    """
    unknown = sorted(set(filters) - set(SLICES))
    if unknown:
        raise ValueError(f"Cannot slice votes by {', '.join(unknown)}: use {', '.join(SLICES)}.")
    clauses, params = [], []
    for name, wanted in filters.items():
        if wanted is None:
            continue
        values = _values(wanted)
        marks = ", ".join("?" * len(values)) or "NULL"
        if name == "category":
            clauses.append(f"(json_extract(p.metadata, '$.category') IN ({marks}) OR EXISTS (SELECT 1 FROM "
                           f"json_each(p.metadata, '$.categories') c WHERE c.type = 'text' AND c.value IN ({marks})))")
            params.extend([*values, *values])
        else:
            clauses.append(f"{_SLICE_COLUMNS[name]} IN ({marks})")
            params.extend(values)
    if not include_excluded:
        clauses.append("v.excluded = 0")
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def votes_frame(
    db: sqlite_utils.Database, *, include_excluded: bool = True, suite: object = None, subset: object = None,
    variant: object = None, category: object = None, voter_kind: object = None, voter: object = None,
) -> pd.DataFrame:
    """The votes of a slice (default: all) as a DataFrame (columns ``COLUMNS``), oldest first.

    Filters as in :func:`slice_where`; excluded votes are kept unless ``include_excluded`` is false.
    """
    where, params = slice_where(include_excluded=include_excluded, suite=suite, subset=subset, variant=variant,
                                category=category, voter_kind=voter_kind, voter=voter)
    cursor = db.execute(f"{VOTES_SQL} {where} ORDER BY v.id", params)
    frame = pd.DataFrame(cursor.fetchall(), columns=[c[0] for c in cursor.description])
    if frame.empty:
        frame = pd.DataFrame(columns=COLUMNS)
    frame["excluded"] = frame["excluded"].astype(bool)
    return frame


def category_choices(db: sqlite_utils.Database) -> list[str]:
    """Every category of a prompt, sorted: metadata ``category`` values and the items of ``categories`` lists."""
    rows = db.execute(
        "SELECT json_extract(p.metadata, '$.category') AS name FROM prompts p "
        "UNION SELECT c.value FROM prompts p, json_each(p.metadata, '$.categories') c WHERE c.type = 'text' "
        "ORDER BY 1"
    )
    return [str(name) for name, in rows if name not in (None, "")]


def export_votes(db: sqlite_utils.Database, path: str | Path, fmt: str | None = None) -> int:
    """Write the vote table to ``path`` as CSV, JSONL or Parquet (from ``fmt`` or the file suffix); return rows."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"Cannot export to {path.name!r}: choose a .csv, .jsonl or .parquet file (or --format).")
    frame = votes_frame(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        records = frame.assign(prompt_metadata=frame["prompt_metadata"].map(json.loads)).to_dict(orient="records")
        with open(path, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    else:
        frame.to_parquet(path, index=False)
    return len(frame)


def annotator_stats(db: sqlite_utils.Database) -> pd.DataFrame:
    """Votes, median seconds to vote, first and last vote per annotator."""
    cursor = db.execute(
        """
        SELECT a.name AS annotator, a.source, COUNT(v.id) AS votes,
               SUM(v.excluded) AS excluded, MIN(v.created_at) AS first_vote, MAX(v.created_at) AS last_vote
        FROM annotators a LEFT JOIN votes v ON v.annotator_id = a.id
        GROUP BY a.id ORDER BY votes DESC, a.name
        """
    )
    frame = pd.DataFrame(cursor.fetchall(), columns=[c[0] for c in cursor.description])
    times = pd.DataFrame(
        db.execute("SELECT annotator_id, seconds_to_vote FROM votes WHERE voter_kind = 'human'").fetchall(),
        columns=["annotator_id", "seconds"],
    )
    names = dict(db.execute("SELECT id, name FROM annotators").fetchall())
    medians = times.groupby("annotator_id")["seconds"].median().rename(index=names)
    frame["median_seconds_to_vote"] = frame["annotator"].map(medians).round(2)
    frame["excluded"] = frame["excluded"].fillna(0).astype(int)
    return frame
