"""The vote table: one row per vote with what its battle showed, its prompt and its models.

:func:`votes_frame` is what the ratings and the admin export read; its columns follow the vote format of
:mod:`ratings` (``model_a`` / ``model_b`` as displayed, ``outcome`` relative to them) plus everything an analyst
needs to slice or audit a vote. It also slices, in SQL, by the :data:`SLICES` (suite, subset, prompt variant,
category, voter kind, voter). A prompt is in a category when its metadata's ``category`` is that value or its
``categories`` list holds it (a SemVarBench item may be in several); :func:`category_choices` lists them all.

A vote records what its battle showed (:func:`datamodel.schema._study_scale`), so the table is read from the votes
alone, a chunk at a time (:func:`vote_chunks`); the prompt and model columns come from small per-prompt and
per-model tables held once. :func:`export_votes` writes the chunks as they come, so its memory does not grow with
the votes: a million votes in a few seconds and a few hundred MB (the whole table in one DataFrame took half a
minute and 2.6 to 3.7 GB).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from datamodel.database import Database
from datamodel.dialect import is_postgres, json_text_items, unixepoch_text
from datamodel.kwise import write_kwise_jsonl
from datamodel.models import model_names as models_by_id

if TYPE_CHECKING:  # the media store is only passed through
    from datamodel.media import MediaStore

EXPORT_CHUNK_ROWS = 50_000  # votes read and written at a time
SLICES = ("suite", "subset", "variant", "category", "voter_kind", "voter")
_SLICE_COLUMNS = {"suite": "p.suite", "subset": "p.subset", "variant": "p.variant", "voter_kind": "v.voter_kind",
                  "voter": "v.voter"}



def votes_sql(db) -> str:
    """The vote's own columns; the prompt and model columns are added from per-prompt and per-model tables."""
    return f"""
SELECT v.id AS vote_id, v.battle_id, v.created_at AS voted_at, {unixepoch_text(db, "v.served_at")} AS served_at,
       v.voter, v.voter_kind, CASE v.voter_kind WHEN 'judge' THEN v.voter END AS judge, v.outcome,
       v.left_model_id, v.right_model_id, v.prompt_id, v.left_image_id AS image_a_id, v.right_image_id AS image_b_id,
       v.seconds_to_vote, v.strategy, v.excluded, v.excluded_reason, v.reviewed, v.expected_shown
FROM votes v JOIN prompts p ON p.id = v.prompt_id
"""


PROMPTS_SQL = """
SELECT p.id AS prompt_id, p.suite, p.subset, p.variant, p.item_key, p.role, p.text AS prompt,
       p.metadata AS prompt_metadata, json_extract(p.metadata, '$.category') AS category,
       json_extract(p.metadata, '$.categories') AS categories
FROM prompts p
"""

COLUMNS = [
    "vote_id", "battle_id", "voted_at", "served_at", "voter", "voter_kind", "judge", "outcome", "model_a", "model_b",
    "winner", "suite", "subset", "variant", "item_key", "role", "prompt", "prompt_metadata", "category", "categories",
    "prompt_id",
    "image_a_id", "image_b_id", "pair_key", "seconds_to_vote", "strategy", "excluded", "excluded_reason", "reviewed",
    "expected_shown",  # whether the page showed the expected outcome (empty: not recorded, or a judge)
]


def _values(wanted: object) -> list:
    return list(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]


def slice_where(db=None, *, include_excluded: bool = True, **filters: object) -> tuple[str, list]:
    """The SQL ``WHERE`` clause (over votes ``v`` and prompts ``p``) and parameters of a slice, for ``db``'s engine
    (None: SQLite).

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
            items, item = json_text_items(db, "p.metadata", "categories", "c")
            clauses.append(f"(json_extract(p.metadata, '$.category') IN ({marks}) OR EXISTS (SELECT 1 FROM "
                           f"{items} WHERE {item} IN ({marks})))")
            params.extend([*values, *values])
        else:
            clauses.append(f"{_SLICE_COLUMNS[name]} IN ({marks})")
            params.extend(values)
    if not include_excluded:
        clauses.append("v.excluded = 0")
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def vote_chunks(
    db: Database, *, include_excluded: bool = True, chunk_rows: int | None = EXPORT_CHUNK_ROWS,
    **filters: object,
) -> Iterator[pd.DataFrame]:
    """The votes of a slice (filters as in :func:`slice_where`), oldest first, as DataFrames of :data:`COLUMNS` with
    at most ``chunk_rows`` rows each (None: one frame). Every frame has the same columns and dtypes."""
    where, params = slice_where(db, include_excluded=include_excluded, **filters)
    cursor = db.execute(f"{votes_sql(db)} {where} ORDER BY v.id", params)
    names = [column[0] for column in cursor.description]
    prompts = pd.DataFrame(db.execute(PROMPTS_SQL).fetchall(), dtype=object, columns=[  # None stays None until a
        "prompt_id", "suite", "subset", "variant", "item_key", "role", "prompt", "prompt_metadata", "category",
        "categories"]).set_index("prompt_id")  # chunk's column is built, as when read with its votes
    model_rows = list(models_by_id(db).items())
    model_names = np.full(max((i for i, _ in model_rows), default=0) + 1, None, dtype=object)
    for model_id, name in model_rows:
        model_names[model_id] = name
    first = True
    while True:
        rows = cursor.fetchall() if chunk_rows is None else cursor.fetchmany(chunk_rows)
        if not rows and not first:
            return
        first = False
        yield _vote_frame(pd.DataFrame.from_records(rows, columns=names), prompts, model_names)
        if chunk_rows is None:
            return


def _vote_frame(votes: pd.DataFrame, prompts: pd.DataFrame, model_names: np.ndarray) -> pd.DataFrame:
    """The vote's own columns, completed with its models' names, the winner, its prompt's columns and pair key."""
    frame = votes.copy()
    frame["model_a"] = model_names[frame["left_model_id"].to_numpy(dtype=np.int64)] if len(frame) else []
    frame["model_b"] = model_names[frame["right_model_id"].to_numpy(dtype=np.int64)] if len(frame) else []
    frame["winner"] = np.where(frame["outcome"] == "A", frame["model_a"],
                               np.where(frame["outcome"] == "B", frame["model_b"], frame["outcome"]))
    of_prompt = prompts.reindex(frame["prompt_id"].to_numpy())
    for column in prompts.columns:
        frame[column] = of_prompt[column].to_numpy()
    low = np.minimum(frame["image_a_id"], frame["image_b_id"]).astype(str)
    high = np.maximum(frame["image_a_id"], frame["image_b_id"]).astype(str)
    frame["pair_key"] = frame["prompt_id"].astype(str) + ":" + low + ":" + high
    frame["excluded"] = frame["excluded"].astype(bool)
    for column in ("vote_id", "prompt_id", "image_a_id", "image_b_id", "reviewed"):
        frame[column] = frame[column].astype(np.int64)
    frame["seconds_to_vote"] = frame["seconds_to_vote"].astype(np.float64)
    return frame[COLUMNS]


def votes_frame(
    db: Database, *, include_excluded: bool = True, suite: object = None, subset: object = None,
    variant: object = None, category: object = None, voter_kind: object = None, voter: object = None,
) -> pd.DataFrame:
    """The votes of a slice (default: all) as one DataFrame (columns ``COLUMNS``), oldest first.

    Filters as in :func:`slice_where`; excluded votes are kept unless ``include_excluded`` is false.
    """
    return next(vote_chunks(db, include_excluded=include_excluded, chunk_rows=None, suite=suite, subset=subset,
                            variant=variant, category=category, voter_kind=voter_kind, voter=voter))


def category_choices(db: Database) -> list[str]:
    """Every category of a prompt, sorted: metadata ``category`` values and the items of ``categories`` lists."""
    items, item = json_text_items(db, "p.metadata", "categories", "c")
    rows = db.execute(f"SELECT json_extract(p.metadata, '$.category') AS name FROM prompts p "
                      f"UNION SELECT {item} FROM prompts p, {items} ORDER BY 1")
    return [str(name) for name, in rows if name not in (None, "")]


# --- the export: Arrow record batches (CSV, Parquet) and the database's JSON (JSONL), a chunk at a time -------------

_OWN_TYPES = {"vote_id": pa.int64(), "battle_id": pa.string(), "voted_at": pa.string(), "served_at": pa.string(),
              "voter": pa.string(), "voter_kind": pa.string(), "judge": pa.string(), "outcome": pa.string(),
              "left_model_id": pa.int64(), "right_model_id": pa.int64(), "prompt_id": pa.int64(),
              "image_a_id": pa.int64(), "image_b_id": pa.int64(), "seconds_to_vote": pa.float64(),
              "strategy": pa.string(), "excluded": pa.int64(), "excluded_reason": pa.string(), "reviewed": pa.int64(),
              "expected_shown": pa.int64()}
EXPORT_SCHEMA = pa.schema([(name, pa.bool_() if name == "excluded" else _OWN_TYPES.get(name, pa.string()))
                           for name in COLUMNS])  # the prompt and model columns are text


def _lookup(rows: list[tuple]) -> tuple[np.ndarray, list[tuple]]:
    """Rows keyed by an integer id in their first field as (position of each id, the rows' other fields)."""
    position = np.full(max((row[0] for row in rows), default=0) + 1, -1, dtype=np.int64)
    for index, row in enumerate(rows):
        position[row[0]] = index
    return position, [row[1:] for row in rows]


def vote_batches(db: Database, chunk_rows: int = EXPORT_CHUNK_ROWS) -> Iterator[pa.RecordBatch]:
    """Every vote, oldest first, as Arrow record batches of at most ``chunk_rows`` rows with :data:`EXPORT_SCHEMA`
    (the columns and values of :func:`votes_frame`). The prompt and model columns are taken from per-prompt and
    per-model arrays held once; nothing is held across batches."""
    import pyarrow.compute as pc

    cursor = db.execute(f"{votes_sql(db)} ORDER BY v.id")
    names = [column[0] for column in cursor.description]
    prompt_position, prompt_rows = _lookup(db.execute(PROMPTS_SQL).fetchall())
    prompt_columns = dict(zip(["suite", "subset", "variant", "item_key", "role", "prompt", "prompt_metadata",
                               "category", "categories"], (pa.array(values, pa.string())
                                                          for values in zip(*prompt_rows or [(None,) * 9]))))
    model_position, model_rows = _lookup(list(models_by_id(db).items()))
    model_names = pa.array([name for name, in model_rows] or [None], pa.string())
    while rows := cursor.fetchmany(chunk_rows):
        own = {name: pa.array(values, _OWN_TYPES[name]) for name, values in zip(names, zip(*rows))}
        where = pa.array(prompt_position[own["prompt_id"].to_numpy()])
        columns = {**own, **{name: values.take(where) for name, values in prompt_columns.items()}}
        columns["model_a"] = model_names.take(pa.array(model_position[own["left_model_id"].to_numpy()]))
        columns["model_b"] = model_names.take(pa.array(model_position[own["right_model_id"].to_numpy()]))
        outcome = own["outcome"]
        columns["winner"] = pc.if_else(pc.equal(outcome, "A"), columns["model_a"],
                                       pc.if_else(pc.equal(outcome, "B"), columns["model_b"], outcome))
        low = pc.min_element_wise(own["image_a_id"], own["image_b_id"])
        high = pc.max_element_wise(own["image_a_id"], own["image_b_id"])
        columns["pair_key"] = pc.binary_join_element_wise(*(pc.cast(a, pa.string()) for a in
                                                            (own["prompt_id"], low, high)), ":")
        columns["excluded"] = pc.not_equal(own["excluded"], 0)
        yield pa.RecordBatch.from_arrays([columns[name] for name in COLUMNS], schema=EXPORT_SCHEMA)


# CSV: a text cell a spreadsheet would run as a formula (OWASP "CSV Injection"; ASVS 5.0 requirement 1.2.10) gets a
# leading single quote. The rule is reversible (csv_cell_text): a cell that already starts with quotes before one of
# these characters gets one more.
FORMULA_STARTS = "=+-@\t\r\0"
_FORMULA_CELL = r"^'*[=+\-@\t\r\x00]"  # RE2: any leading quotes, then a character that starts a formula


def escape_formulas(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every text cell that starts with one of :data:`FORMULA_STARTS` (after any single quotes)
    prefixed with a single quote, as OWASP advises for CSV files; numbers, booleans and missing values unchanged."""
    import pyarrow.compute as pc

    columns = []
    for column in batch.columns:
        if pa.types.is_string(column.type):
            risky = pc.fill_null(pc.match_substring_regex(column, _FORMULA_CELL), False)
            column = pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)
        columns.append(column)
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)


def csv_cell_text(text: str) -> str:
    """The text of a CSV export's cell as it was before :func:`escape_formulas` (for a program reading the file)."""
    stripped = text.lstrip("'")
    return text[1:] if stripped != text and stripped[:1] and stripped[0] in FORMULA_STARTS else text


# JSONL: the database writes each vote's JSON object (C, one string per vote: SQLite's json_object, PostgreSQL's
# json_build_object); prompt_metadata is the object itself.
def _json_sql(db) -> str:
    postgres = is_postgres(db)
    fields = {
        "vote_id": "v.vote_id", "battle_id": "v.battle_id", "voted_at": "v.voted_at", "served_at": "v.served_at",
        "voter": "v.voter", "voter_kind": "v.voter_kind", "judge": "v.judge", "outcome": "v.outcome",
        "model_a": "ml.name", "model_b": "mr.name",
        "winner": "CASE v.outcome WHEN 'A' THEN ml.name WHEN 'B' THEN mr.name ELSE v.outcome END",
        "suite": "p.suite", "subset": "p.subset", "variant": "p.variant", "item_key": "p.item_key", "role": "p.role",
        "prompt": "p.prompt",
        "prompt_metadata": "p.prompt_metadata::json" if postgres else "json(p.prompt_metadata)",
        "category": "p.category", "categories": "p.categories", "prompt_id": "v.prompt_id",
        "image_a_id": "v.image_a_id", "image_b_id": "v.image_b_id",
        "pair_key": ("v.prompt_id || ':' || LEAST(v.image_a_id, v.image_b_id) || ':' || "
                     "GREATEST(v.image_a_id, v.image_b_id)") if postgres else
                    "v.prompt_id || ':' || min(v.image_a_id, v.image_b_id) || ':' || max(v.image_a_id, v.image_b_id)",
        "seconds_to_vote": "v.seconds_to_vote", "strategy": "v.strategy",
        "excluded": "v.excluded != 0" if postgres else "json(CASE WHEN v.excluded THEN 'true' ELSE 'false' END)",
        "excluded_reason": "v.excluded_reason", "reviewed": "v.reviewed", "expected_shown": "v.expected_shown"}
    return f"""
SELECT {json_object(db, fields)}
FROM ({votes_sql(db)}) v JOIN ({PROMPTS_SQL}) p ON p.prompt_id = v.prompt_id
JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id
ORDER BY v.vote_id
"""


def json_object(db, fields: dict[str, str]) -> str:
    """SQL building one JSON object per row from ``fields`` ({key: SQL expression}), as text."""
    pairs = ", ".join(f"'{name}', {value}" for name, value in fields.items())
    return f"json_build_object({pairs})::text" if is_postgres(db) else f"json_object({pairs})"


# FastChat: the battle records of FastChat's ``clean_battle_data.py`` (its ``elo_analysis.py`` reads them): a JSON
# array of objects with FastChat's fields and meanings. ``winner`` is model_a | model_b | tie | tie (bothbad),
# ``judge`` the voter, ``tstamp`` the vote's unix time in seconds, ``turn`` 1 (one prompt), ``anony`` true (the
# arena hides the names until the vote); our own fields follow FastChat's. Excluded votes are left out, as the
# leaderboard leaves them out.
FASTCHAT_WINNER = {"A": "model_a", "B": "model_b", "tie": "tie", "both_bad": "tie (bothbad)"}


def _fastchat_sql(db) -> str:
    winner = " ".join(f"WHEN '{ours}' THEN '{theirs}'" for ours, theirs in FASTCHAT_WINNER.items())
    fields = {
        "question_id": "v.battle_id", "model_a": "ml.name", "model_b": "mr.name",
        "winner": f"CASE v.outcome {winner} END",
        "judge": "v.voter", "turn": "1", "anony": "true" if is_postgres(db) else "json('true')",
        "language": "coalesce(json_extract(p.metadata, '$.language'), 'unknown')", "tstamp": "v.voted_at",
        "voter_kind": "v.voter_kind", "vote_id": "v.id", "prompt": "p.text", "suite": "p.suite",
        "subset": "p.subset", "variant": "p.variant", "item_key": "p.item_key", "image_a_id": "v.left_image_id",
        "image_b_id": "v.right_image_id"}
    return f"""
SELECT {json_object(db, fields)}
FROM votes v JOIN prompts p ON p.id = v.prompt_id
JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id
WHERE v.excluded = 0 ORDER BY v.id
"""


def _write_fastchat(db: Database, path: Path, chunk_rows: int, media: MediaStore | None = None) -> int:
    """FastChat's battle records (see :func:`_fastchat_sql`) as one JSON array, written a chunk at a time."""
    cursor = db.execute(_fastchat_sql(db))
    rows = 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        while lines := cursor.fetchmany(chunk_rows):
            handle.write(("," if rows else "") + ",".join("\n" + line for line, in lines))
            rows += len(lines)
        handle.write("\n]\n")
    return rows


def jsonl_writer(sql):
    """An exporter writing one line per row of ``sql(db)`` (whose one column is each row's JSON text)."""
    def write(db: Database, path: Path, chunk_rows: int, media: MediaStore | None = None) -> int:
        cursor = db.execute(sql(db))
        rows = 0
        with open(path, "w", encoding="utf-8") as handle:
            while lines := cursor.fetchmany(chunk_rows):
                handle.write("".join(line + "\n" for line, in lines))
                rows += len(lines)
        return rows
    return write


def arrow_writer(fmt: str, schema: pa.Schema, batches):
    """An exporter writing the record batches ``batches(db, chunk_rows)`` of ``schema`` as Parquet or CSV (text
    cells a spreadsheet would run as a formula escaped: :func:`escape_formulas`)."""
    def write(db: Database, path: Path, chunk_rows: int, media: MediaStore | None = None) -> int:
        import pyarrow.csv

        rows = 0
        with (pq.ParquetWriter(path, schema) if fmt == "parquet" else pyarrow.csv.CSVWriter(path, schema)) as writer:
            for batch in batches(db, chunk_rows):
                writer.write_batch(batch if fmt == "parquet" else escape_formulas(batch))
                rows += batch.num_rows
        return rows
    return write


_write_jsonl = jsonl_writer(_json_sql)


def _write_hf(db: Database, path: Path, chunk_rows: int, media: MediaStore | None = None, *,
              keep_in_battles: bool = False) -> int:
    from datamodel.hf_export import write_hf_dataset

    if media is None:
        raise ValueError("The hf format holds the images: pass the media store (python -m arena export does).")
    return write_hf_dataset(db, media, path, keep_in_battles=keep_in_battles)


# Each format: one declaration (name: writer(db, path, chunk_rows, media) -> rows). The file suffix picks one of the
# first three; fastchat (a .json file), hf (a folder) and four-image (the four-image votes, JSON Lines:
# datamodel.kwise) are asked for by name.
EXPORTERS = {"csv": arrow_writer("csv", EXPORT_SCHEMA, vote_batches), "jsonl": _write_jsonl,
             "parquet": arrow_writer("parquet", EXPORT_SCHEMA, vote_batches), "fastchat": _write_fastchat,
             "hf": _write_hf, "four-image": write_kwise_jsonl}
EXPORT_FORMATS = ("csv", "jsonl", "parquet")  # the vote table itself, column for column (the admin tab offers these)
PEER_FORMATS = ("fastchat", "hf", "four-image")  # what peers read: FastChat's battles, a Hugging Face dataset, the
# four-image votes
PUBLISHING_FORMATS = ("hf",)  # the formats that hold the images with their models' names


def export_votes(db: Database, path: str | Path, fmt: str | None = None, *,
                 chunk_rows: int = EXPORT_CHUNK_ROWS, media: MediaStore | None = None,
                 keep_in_battles: bool = False) -> int:
    """Write the vote table to ``path`` as CSV, JSONL or Parquet (from ``fmt`` or the file suffix); return the rows.

    The votes stream ``chunk_rows`` at a time, each chunk written before the next is read, so memory does not grow
    with the votes. CSV and Parquet are written by pyarrow from :func:`vote_batches` (one header; one row group per
    chunk, schema :data:`EXPORT_SCHEMA`; CSV quotes every text value, booleans are ``true``/``false``, a missing
    value is empty, and a text that a spreadsheet would run as a formula starts with a single quote:
    :func:`escape_formulas`, undone by :func:`csv_cell_text`; Parquet holds every value exactly). JSONL has one JSON
    object per vote, written by SQLite's ``json_object``, with ``prompt_metadata`` as an object and missing values as
    ``null``: every value exactly. ``fastchat`` writes FastChat's battle records (:data:`FASTCHAT_WINNER`), ``hf`` a
    Hugging Face dataset folder with the images from ``media`` (:mod:`datamodel.hf_export`: its images are withheld
    from battles from then on unless ``keep_in_battles``); both leave out excluded votes. The formats are the
    declarations of :data:`EXPORTERS`.
    """
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in EXPORTERS:
        raise ValueError(f"Cannot export to {path.name!r}: choose a .csv, .jsonl or .parquet file, or --format "
                         f"{' | '.join(EXPORTERS)}.")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, not {chunk_rows}.")
    path.parent.mkdir(parents=True, exist_ok=True)
    if keep_in_battles and fmt not in PUBLISHING_FORMATS:
        raise ValueError(f"--keep-in-battles is for the formats that publish images ({', '.join(PUBLISHING_FORMATS)}).")
    options = {"keep_in_battles": keep_in_battles} if fmt in PUBLISHING_FORMATS else {}
    return EXPORTERS[fmt](db, path, chunk_rows, media, **options)


def annotator_stats(db: Database) -> pd.DataFrame:
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


def recorded_vote_seconds(db: Database) -> dict[str, list[float]]:
    """The seconds the page recorded per counted human vote (``seconds_to_vote``, from the images on screen to the
    vote), by kind of vote: ``pairwise`` (``votes``) and ``four-image`` (``kwise_votes``); votes without a time left
    out. What ``python -m tools.simulate --timings-from`` turns into its time model."""
    pairwise = db.execute("SELECT seconds_to_vote FROM votes WHERE voter_kind = 'human' AND excluded = 0 AND "
                          "seconds_to_vote IS NOT NULL").fetchall()
    four = db.execute("SELECT seconds_to_vote FROM kwise_votes WHERE excluded = 0 AND seconds_to_vote IS NOT "
                      "NULL").fetchall()
    return {"pairwise": [float(row[0]) for row in pairwise], "four-image": [float(row[0]) for row in four]}
