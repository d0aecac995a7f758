"""The rating table: one row per human rating, exported like the votes (``python -m arena ratings export``).

:data:`COLUMNS` are the rating's own fields with what was shown (the task, the question's subject and unit, the
image, its model and prompt, the words asked about) and the rater, the answer (JSON on the task's scale, as stored)
and its value on [0, 1], the times and the quality flags. The formats are the vote table's, FastChat's aside (its
battle records have no place for an absolute rating):

- ``csv`` and ``parquet``: written by pyarrow, a chunk at a time, schema :data:`EXPORT_SCHEMA`; CSV cells that a
  spreadsheet would run as a formula start with a single quote (:func:`datamodel.vote_table.escape_formulas`);
- ``jsonl``: one JSON object per rating, written by the database, with ``answer`` as an object;
- ``hf``: a Hugging Face dataset folder with each rated image (:func:`write_hf_ratings`); excluded ratings are left
  out, as the votes' ``hf`` export leaves out excluded votes, and raters are numbered, not named. Its images are
  withheld from battles and questions from then on (they carry their model's name). The other formats keep excluded
  ratings, flagged, and the raters' names (they are the admin's).

Ratings stream ``chunk_rows`` at a time, so memory does not grow with them.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from datamodel.catalog import publish_rated_images
from datamodel.database import Database
from datamodel.hf_export import DEFAULT_LICENSE, IMAGE, _image, arrow_schema, dataset_card, write_published_folder
from datamodel.media import MediaStore
from datamodel.dialect import is_postgres, unixepoch_text
from datamodel.vote_table import PUBLISHING_FORMATS, arrow_writer, json_object, jsonl_writer

EXPORT_CHUNK_ROWS = 50_000
HF_CHUNK_ROWS = 256

# name: (SQL expression over ratings r, prompts p (the image's), prompts t (asked about), images i, models m; type);
# served_at's expression is the engine's (_fields)
_FIELDS = {
    "rating_id": ("r.id", pa.int64()),
    "serving_id": ("r.serving_id", pa.string()),
    "answered_at": ("r.created_at", pa.string()),
    "served_at": ("r.served_at", pa.string()),
    "rater": ("r.rater", pa.string()),
    "task": ("r.task", pa.string()),
    "suite": ("p.suite", pa.string()),
    "subset": ("p.subset", pa.string()),
    "variant": ("p.variant", pa.string()),
    "item_key": ("p.item_key", pa.string()),
    "unit": ("r.unit", pa.string()),
    "subject": ("r.subject", pa.string()),
    "model": ("m.name", pa.string()),
    "image_id": ("r.image_id", pa.int64()),
    "idx": ("i.idx", pa.int64()),
    "prompt_id": ("r.prompt_id", pa.int64()),
    "prompt": ("p.text", pa.string()),
    "role": ("p.role", pa.string()),
    "text_prompt_id": ("r.text_prompt_id", pa.int64()),
    "text_role": ("t.role", pa.string()),
    "shown_text": ("r.shown_text", pa.string()),
    "answer": ("r.answer", pa.string()),
    "value": ("r.value", pa.float64()),
    "seconds_to_answer": ("r.seconds_to_answer", pa.float64()),
    "excluded": ("r.excluded", pa.bool_()),
    "excluded_reason": ("r.excluded_reason", pa.string()),
    "reviewed": ("r.reviewed", pa.int64()),
}
COLUMNS = list(_FIELDS)
EXPORT_SCHEMA = pa.schema([(name, kind) for name, (_, kind) in _FIELDS.items()])
_FROM = ("FROM ratings r JOIN prompts p ON p.id = r.prompt_id JOIN prompts t ON t.id = r.text_prompt_id "
         "JOIN images i ON i.id = r.image_id JOIN models m ON m.id = r.model_id")


def _fields(db) -> dict[str, str]:
    """{column: SQL expression} for ``db``'s engine."""
    return {name: unixepoch_text(db, sql) if name == "served_at" else sql for name, (sql, _) in _FIELDS.items()}


def _rows_sql(db) -> str:
    return f"SELECT {', '.join(_fields(db).values())} {_FROM} ORDER BY r.id"


def _json_sql(db) -> str:
    postgres = is_postgres(db)
    fields = {name: ("r.answer::json" if postgres else "json(r.answer)") if name == "answer" else
              ("r.excluded != 0" if postgres else "json(CASE WHEN r.excluded THEN 'true' ELSE 'false' END)")
              if name == "excluded" else sql for name, sql in _fields(db).items()}
    return f"SELECT {json_object(db, fields)} {_FROM} ORDER BY r.id"


def rating_batches(db: Database, chunk_rows: int = EXPORT_CHUNK_ROWS):
    """Every rating, oldest first, as Arrow record batches of :data:`EXPORT_SCHEMA`."""
    cursor = db.execute(_rows_sql(db))
    while rows := cursor.fetchmany(chunk_rows):
        columns = list(zip(*rows))
        arrays = []
        for (name, (_, kind)), values in zip(_FIELDS.items(), columns):
            arrays.append(pa.array([bool(v) for v in values] if name == "excluded" else values, kind))
        yield pa.RecordBatch.from_arrays(arrays, schema=EXPORT_SCHEMA)


# --- Hugging Face dataset ---------------------------------------------------------------------------------------

HF_FIELDS = {name: (arrow, {"dtype": dtype}, meaning) for name, (arrow, dtype, meaning) in {
    "rating_id": (pa.int64(), "int64", "the rating's id in the arena database"),
    "task": (pa.string(), "string", "the rating task (commonsense_fit, semvar_alignment, saneval_adherence, ...)"),
    "image": (IMAGE, "image", "the rated image (original bytes)"),
    "model": (pa.string(), "string", "the image's model"),
    "prompt": (pa.string(), "string", "the image's prompt"),
    "shown_text": (pa.string(), "string", "the words the question asked about (a description, a text)"),
    "subject": (pa.string(), "string", "the question, as the judges name theirs"),
    "unit": (pa.string(), "string", "the questions one rater answers together"),
    "rater": (pa.string(), "string", "the rater, numbered (annotator and a number; names stay in the arena)"),
    "answer": (pa.string(), "string", "the answer, JSON on the task's scale"),
    "value": (pa.float64(), "float64", "the answer on [0, 1]"),
    "suite": (pa.string(), "string", "the prompt suite"),
    "subset": (pa.string(), "string", "the suite's subset"),
    "item_key": (pa.string(), "string", "the prompt's key within its suite"),
    "seconds_to_answer": (pa.float64(), "float64", "seconds from the question being shown to the answer"),
    "tstamp": (pa.float64(), "float64", "when the answer was given, unix seconds"),
}.items()}
HF_SCHEMA = arrow_schema(HF_FIELDS)
HF_SUMMARY = ("Human ratings of single images against one question each (`python -m arena ratings export DIR "
              "--format hf`):\n{rows} ratings, one row per rating, oldest first. Ratings an administrator or the "
              "quality rules\nexcluded are left out.")
_HF_SQL = (f"SELECT r.id, r.task, i.media_hash, i.media_ext, m.name, p.text, r.shown_text, r.subject, r.unit, "
           f"'annotator ' || r.annotator_id, r.answer, r.value, p.suite, p.subset, p.item_key, r.seconds_to_answer, "
           f"r.answered_at {_FROM} WHERE r.excluded = 0 ORDER BY r.id")


def _hf_batch(chunk: list[tuple], media: MediaStore) -> pa.RecordBatch:
    columns = list(zip(*chunk))
    values = {"rating_id": columns[0], "task": columns[1],
              "image": [_image(media, h, e) for h, e in zip(columns[2], columns[3])]}
    for name, column in zip(list(HF_FIELDS)[3:], columns[4:]):
        values[name] = column
    return pa.RecordBatch.from_arrays([pa.array(values[name], HF_FIELDS[name][0]) for name in HF_FIELDS],
                                      schema=HF_SCHEMA)


def write_hf_ratings(db: Database, media: MediaStore, folder: str | Path, *,
                     chunk_rows: int = HF_CHUNK_ROWS, license_id: str = DEFAULT_LICENSE,
                     keep_in_battles: bool = False) -> int:
    """Write the counted ratings with their images as a Hugging Face dataset folder; return the rows.

    Raters are numbered, not named. The images written are recorded as published and, unless ``keep_in_battles``,
    withheld from battles and rating questions from now on (:func:`datamodel.catalog.publish_rated_images`), as the
    votes' export does: anyone holding the folder could render an image as the arena does and name its model."""
    return write_published_folder(
        folder, HF_SCHEMA, db.execute(_HF_SQL), chunk_rows, lambda chunk: _hf_batch(chunk, media),
        lambda rows: dataset_card(rows, license_id=license_id, pretty_name="Text-to-image arena human ratings",
                                  fields=HF_FIELDS, summary=HF_SUMMARY, tags=("human-evaluation", "rating"),
                                  what="ratings"),
        lambda last_rating: publish_rated_images(db, last_rating, withhold=not keep_in_battles))


def _write_hf(db: Database, path: Path, chunk_rows: int, media: object = None, *,
              keep_in_battles: bool = False) -> int:
    if media is None:
        raise ValueError("The hf format holds the images: pass the media store (python -m arena ratings export "
                         "does).")
    return write_hf_ratings(db, media, path, keep_in_battles=keep_in_battles)


# Each format one declaration: name: writer(db, path, chunk_rows, media) -> rows. The suffix picks one of the first
# three; hf (a folder) is asked for by name.
EXPORTERS = {"csv": arrow_writer("csv", EXPORT_SCHEMA, rating_batches), "jsonl": jsonl_writer(_json_sql),
             "parquet": arrow_writer("parquet", EXPORT_SCHEMA, rating_batches), "hf": _write_hf}
EXPORT_FORMATS = ("csv", "jsonl", "parquet")  # the rating table itself, column for column (the admin tab offers these)


def export_ratings(db: Database, path: str | Path, fmt: str | None = None, *,
                   chunk_rows: int = EXPORT_CHUNK_ROWS, media: object = None, keep_in_battles: bool = False) -> int:
    """Write the rating table to ``path`` as CSV, JSONL or Parquet (from ``fmt`` or the suffix), or a Hugging Face
    dataset folder (``fmt="hf"``, whose images are withheld from battles unless ``keep_in_battles``); return the rows
    (module docstring)."""
    path = Path(path)
    fmt = (fmt or path.suffix.lstrip(".")).lower()
    if fmt not in EXPORTERS:
        raise ValueError(f"Cannot export ratings to {path.name!r}: choose a .csv, .jsonl or .parquet file, or "
                         f"--format {' | '.join(EXPORTERS)} (FastChat's battle format holds no ratings).")
    if chunk_rows < 1:
        raise ValueError(f"chunk_rows must be at least 1, not {chunk_rows}.")
    if keep_in_battles and fmt not in PUBLISHING_FORMATS:
        raise ValueError("--keep-in-battles goes only with the hf format (the one that publishes images).")
    path.parent.mkdir(parents=True, exist_ok=True)
    options = {"keep_in_battles": keep_in_battles} if fmt in PUBLISHING_FORMATS else {}
    return EXPORTERS[fmt](db, path, chunk_rows, media, **options)
