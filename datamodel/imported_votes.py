"""Imported votes as stored: staging a file's votes, writing them in one short transaction, and what was imported.

An import (:func:`arena.vote_import.import_votes`) reads a file record by record and hands the votes here a chunk at
a time. They go into a TEMP table of the importing connection first (:class:`Staging`): SQLite keeps a connection's
temporary tables in their own file, so staging a million votes takes no lock on the arena database and a live
server's votes never wait for the reading. A malformed record stops the import before anything is written; the
staged rows vanish with the TEMP table. Then :func:`finish_import` writes the new models, the ``vote_imports`` row
and every staged vote whose (source, original id) is not stored yet in one ``INSERT ... SELECT`` (one transaction: all
or nothing), and raises the ``votes`` data version once. Tables: :func:`datamodel.schema._imported_votes`.

A record's original id is the id its file gives it (FastChat's ``question_id``, the taxonomy file's ``id`` and the
labelled column, a CSV ``id``), else its record number; a second record with the same id in one file gets ``#2``,
``#3``, ... in file order (:meth:`Staging.number_repeats`, run only when the importer's 64-bit hashes of the ids
repeat: numbering every id in SQL took 14 s of a million-vote import). So importing the same file again, or a later
log that extends it, adds only new votes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from datamodel.bulk import insert_rows
from datamodel.catalog import add_model
from datamodel.database import Database
from datamodel.dialect import is_postgres

# one staged vote: (record_id, battle_key, battle_hash, model_a, model_b, outcome, voter, voter_kind, voted_at,
# anonymous, suite, subset, variant, item_key, prompt, record JSON, flag, image_a, image_b); model_a / model_b index
# Staging.names; flag: why the record is anomalous ('' : it is not); image_a / image_b: the keys of the images the
# file carried for it ('' : none), which finish_import's ``images`` writes and turns into image ids
STAGED_COLUMNS = ("record_id", "battle_key", "battle_hash", "model_a", "model_b", "outcome", "voter", "voter_kind",
                  "voted_at", "anonymous", "suite", "subset", "variant", "item_key", "prompt", "record", "flag",
                  "image_a", "image_b")
STAGING_TABLE = "temp.vote_import_staging"  # SQLite's names; PostgreSQL finds a session's temporary tables by name
STAGED_MODELS = "temp.vote_import_models"
STAGED_IMAGES = "temp.vote_import_images"


def _temp(db, table: str) -> str:
    """A TEMP table's name as ``db``'s engine writes it."""
    return table.split(".")[1] if is_postgres(db) else table


class Staging:
    """A TEMP table of the votes read so far (module docstring); use as a context manager, which drops it.

    Votes are staged in file order (their rowid); model names as small integers (:meth:`model_index`), so each row
    stays short."""

    def __init__(self, db: Database):
        if getattr(db.conn, "transaction_depth", 0):
            raise RuntimeError("Stage an import outside any open transaction.")
        self.db = db
        self.names: dict[str, int] = {}
        self.table = _temp(db, STAGING_TABLE)
        for table in (STAGING_TABLE, STAGED_MODELS, STAGED_IMAGES):
            db.execute(f"DROP TABLE IF EXISTS {_temp(db, table)}")
        columns = ("record_id TEXT NOT NULL, battle_key TEXT NOT NULL, battle_hash BIGINT NOT NULL, "
                   "model_a INTEGER NOT NULL, model_b INTEGER NOT NULL, outcome TEXT NOT NULL, voter TEXT NOT NULL, "
                   "voter_kind TEXT NOT NULL, voted_at DOUBLE PRECISION, anonymous INTEGER, suite TEXT NOT NULL, "
                   "subset TEXT NOT NULL, variant TEXT NOT NULL, item_key TEXT NOT NULL, prompt TEXT NOT NULL, "
                   "record TEXT NOT NULL, flag TEXT NOT NULL, image_a TEXT NOT NULL, image_b TEXT NOT NULL")
        if is_postgres(db):  # its rowid: the file order, as SQLite's implicit one
            db.execute(f"CREATE TEMP TABLE {self.table} ({columns}, rowid BIGINT GENERATED ALWAYS AS IDENTITY)")
        else:
            db.execute(f"CREATE TABLE {self.table} ({columns})")
        self.rows = 0

    def model_index(self, name: str) -> int:
        index = self.names.get(name)
        if index is None:
            index = self.names[name] = len(self.names)
        return index

    def add(self, rows: list[tuple]) -> None:
        """Stage a chunk of votes (tuples of :data:`STAGED_COLUMNS`), in one deferred transaction on the TEMP file."""
        if not rows:
            return
        if is_postgres(self.db):  # a session's own table: no lock on the arena's, as with SQLite's TEMP file
            insert_rows(self.db, self.table, STAGED_COLUMNS, rows)
            self.rows += len(rows)
            return
        marks = ", ".join("?" * len(STAGED_COLUMNS))
        self.db.conn.execute("BEGIN")
        try:
            self.db.conn.executemany(f"INSERT INTO {STAGING_TABLE} VALUES ({marks})", rows)
        except BaseException:
            self.db.conn.execute("ROLLBACK")
            raise
        self.db.conn.execute("COMMIT")
        self.rows += len(rows)

    def number_repeats(self) -> int:
        """Give the 2nd, 3rd, ... record with one id ``#2``, ``#3``, ... (file order); return how many changed. Call
        it only when ids may repeat (a sort of every staged id otherwise)."""
        table = self.table
        sql = (f"UPDATE {table} SET record_id = record_id || '#' || d.occurrence FROM (SELECT rowid AS r, "
               f"row_number() OVER (PARTITION BY record_id ORDER BY rowid) AS occurrence FROM {table} WHERE "
               f"record_id IN (SELECT record_id FROM {table} GROUP BY record_id HAVING count(*) > 1)) d "
               f"WHERE {table.rpartition('.')[2]}.rowid = d.r AND d.occurrence > 1")
        if is_postgres(self.db):
            return self.db.execute(sql).rowcount
        self.db.conn.execute("BEGIN")
        cursor = self.db.conn.execute(sql)
        self.db.conn.execute("COMMIT")
        return cursor.rowcount

    def model_names(self) -> list[str]:
        return sorted(self.names)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        for table in (STAGING_TABLE, STAGED_MODELS, STAGED_IMAGES):
            self.db.execute(f"DROP TABLE IF EXISTS {_temp(self.db, table)}")


@dataclass(frozen=True)
class ImportRecord:
    """A row of ``vote_imports``."""

    id: int
    source: str
    format: str
    file: str
    sha256: str
    records: int
    added: int
    imported_at: float


def battle_hash(source: str, battle_key: str) -> int:
    """The ``battle_hash`` of a battle key: the first 8 bytes of BLAKE2b of source and key, as a signed integer (two
    battles of a million-vote log share one with a chance of about 3e-8)."""
    digest = hashlib.blake2b(f"{source}\0{battle_key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def earlier_import(db: Database, source: str, sha256: str) -> ImportRecord | None:
    """The first import of the file with this content into ``source``, if any."""
    row = db.execute("SELECT id, source, format, file, sha256, records, added, imported_at FROM vote_imports "
                     "WHERE source = ? AND sha256 = ? ORDER BY id LIMIT 1", [source, sha256]).fetchone()
    return None if row is None else ImportRecord(*row)


def _insert_sql(db) -> str:
    """The staged votes not stored yet (by source and original id), in file order, into ``imported_votes``."""
    staged, models, images = _temp(db, STAGING_TABLE), _temp(db, STAGED_MODELS), _temp(db, STAGED_IMAGES)
    return f"""
INSERT {"" if is_postgres(db) else "OR IGNORE "}INTO imported_votes (import_id, source, original_id, battle_key,
    battle_hash, left_model_id, right_model_id, outcome, voter, voter_kind, voted_at, anonymous, prompt_id, suite,
    subset, variant, prompt, record, flag, left_image_id, right_image_id)
SELECT ?, ?, s.record_id, s.battle_key, s.battle_hash, ma.id, mb.id, s.outcome, s.voter, s.voter_kind, s.voted_at,
    s.anonymous,
    CASE WHEN s.item_key != '' THEN (SELECT min(p.id) FROM prompts p WHERE p.suite = s.suite AND p.subset = s.subset
                                     AND p.item_key = s.item_key AND p.variant = s.variant) END,
    s.suite, s.subset, s.variant, s.prompt, s.record, s.flag, ia.id, ib.id
FROM {staged} s JOIN {models} ma ON ma.idx = s.model_a JOIN {models} mb ON mb.idx = s.model_b
LEFT JOIN {images} ia ON ia.key = s.image_a LEFT JOIN {images} ib ON ib.key = s.image_b
ORDER BY s.rowid{" ON CONFLICT (source, original_id) DO NOTHING" if is_postgres(db) else ""}
"""


def finish_import(db: Database, staging: Staging, *, source: str, fmt: str, file: str, sha256: str,
                  records: int, aliases: dict[str, str],
                  images: Callable[[Database, dict[str, int]], dict[str, int]] | None = None,
                  ) -> tuple[ImportRecord, list[str]]:
    """Write the staged votes (module docstring) in one transaction; return the import's row and the models it
    created (names no arena model had). ``images(db, {model name: id})``, when the file carried images, writes
    them in the same transaction and returns {staged image key: image id}, which the votes then point at."""
    with db.conn:
        known = {name for name, in db.execute("SELECT name FROM models")}
        created = [name for name in staging.model_names() if name not in known]
        for name in created:
            add_model(db, name, source="imported", description=f"from imported votes ({source})")
        models = _temp(db, STAGED_MODELS)
        db.execute(f"CREATE {'TEMP ' if is_postgres(db) else ''}TABLE {models} (idx INTEGER PRIMARY KEY, "
                   "id BIGINT NOT NULL)")
        db.conn.executemany(f"INSERT INTO {models} (idx, id) SELECT ?, id FROM models WHERE name = ?",
                            [(index, name) for name, index in staging.names.items()])
        image_table = _temp(db, STAGED_IMAGES)
        db.execute(f"CREATE {'TEMP ' if is_postgres(db) else ''}TABLE {image_table} (key TEXT PRIMARY KEY, "
                   "id BIGINT NOT NULL)")
        if images is not None:
            ids = dict(db.execute("SELECT name, id FROM models").fetchall())
            written = images(db, {name: ids[name] for name in staging.names})
            db.conn.executemany(f"INSERT INTO {image_table} (key, id) VALUES (?, ?)", list(written.items()))
        now = time.time()
        import_id = db.execute(
            "INSERT INTO vote_imports (source, format, file, sha256, records, added, aliases, imported_at) "
            "VALUES (?, ?, ?, ?, ?, 0, ?, ?) RETURNING id",
            [source, fmt, file, sha256, records, json.dumps(aliases, sort_keys=True, ensure_ascii=False), now],
        ).fetchone()[0]
        added = db.execute(_insert_sql(db), [import_id, source]).rowcount
        db.execute("UPDATE vote_imports SET added = ? WHERE id = ?", [added, import_id])
        if added:
            db.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'votes'")
    return ImportRecord(import_id, source, fmt, file, sha256, records, added, now), created


def import_sources(db: Database) -> list[str]:
    """The sources of the imported votes, by name (the leaderboard's source filter offers them beside ``arena``)."""
    return [name for name, in db.execute("SELECT DISTINCT source FROM vote_imports ORDER BY source")]


def imported_vote_count(db: Database, source: str | None = None) -> int:
    where, params = ("WHERE source = ?", [source]) if source else ("", [])
    return db.execute(f"SELECT count(*) FROM imported_votes {where}", params).fetchone()[0]


def imported_slices(db: Database, suite: str, source: str | None = None) -> set[tuple[str, str]]:
    """The (subset, variant) pairs of the imported votes of ``suite`` (of one ``source``, or every one)."""
    where, params = ("AND source = ?", [suite, source]) if source else ("", [suite])
    return {(subset, variant) for subset, variant in db.execute(
        f"SELECT DISTINCT subset, variant FROM imported_votes WHERE suite = ? {where}", params)}
# every column that names a model: a model an import created goes with the import only when none of them names it
MODEL_COLUMNS = (("images", "model_id"), ("metrics", "model_id"), ("judgments", "model_id"),
                 ("votes", "left_model_id"), ("votes", "right_model_id"), ("imported_votes", "left_model_id"),
                 ("imported_votes", "right_model_id"), ("ratings", "model_id"), ("generations", "model_id"),
                 ("vote_changes", "left_model_id"), ("vote_changes", "right_model_id"))
# every column that names an image: an image an import's votes showed goes with the import only when none names it
IMAGE_COLUMNS = (("battles", "left_image_id"), ("battles", "right_image_id"), ("votes", "left_image_id"),
                 ("votes", "right_image_id"), ("metrics", "image_id"), ("judgments", "image_id"),
                 ("vote_changes", "left_image_id"), ("vote_changes", "right_image_id"), ("rating_servings", "image_id"),
                 ("ratings", "image_id"), ("generations", "image_id"), ("imported_votes", "left_image_id"),
                 ("imported_votes", "right_image_id"),
                 *(("kwise_battles", f"slot_{slot}_image_id") for slot in range(1, 5)),
                 ("kwise_votes", "best_image_id"), ("kwise_votes", "worst_image_id"))


@dataclass(frozen=True)
class RemovedImport:
    """What :func:`remove_import` took out."""

    record: ImportRecord  # the import's row
    votes: int  # its votes
    images: int  # images only its votes named (their media files stay: content-addressed, another may share one)
    models: list[str]  # models imports created that nothing names any more


def _unused(alias: str, columns: tuple[tuple[str, str], ...]) -> str:
    return " AND ".join(f"NOT EXISTS (SELECT 1 FROM {table} t WHERE t.{column} = {alias}.id)"
                        for table, column in columns)


def remove_import(db: Database, import_id: int) -> RemovedImport:
    """Undo import ``import_id``, in one transaction: its votes, its ``vote_imports`` row, the images its votes showed
    (GenAI-Bench, Pick-a-Pic) that nothing else names, and the models imports created (source ``imported``) that
    nothing names any more; the ``votes`` data version is raised (the catalog's rises by its trigger). LookupError
    when there is no such import."""
    row = db.execute("SELECT id, source, format, file, sha256, records, added, imported_at FROM vote_imports "
                     "WHERE id = ?", [import_id]).fetchone()
    if row is None:
        known = ", ".join(f"#{i}" for i, in db.execute("SELECT id FROM vote_imports ORDER BY id")) or "none"
        raise LookupError(f"No import #{import_id}: the imports are {known} (python -m arena leaderboard --source "
                          "lists the sources; the vote_imports table has each import's file and time).")
    with db.conn:
        shown = {image for pair in db.execute("SELECT left_image_id, right_image_id FROM imported_votes WHERE "
                                              "import_id = ? AND left_image_id IS NOT NULL", [import_id])
                 for image in pair}
        removed = db.execute("DELETE FROM imported_votes WHERE import_id = ?", [import_id]).rowcount
        db.execute("DELETE FROM vote_imports WHERE id = ?", [import_id])
        images = 0
        for chunk in (sorted(shown)[start:start + 500] for start in range(0, len(shown), 500)):
            marks = ", ".join("?" * len(chunk))
            images += db.execute(f"DELETE FROM images WHERE id IN (SELECT i.id FROM images i WHERE i.id IN ({marks}) "
                                 f"AND {_unused('i', IMAGE_COLUMNS)})", chunk).rowcount
        unused = _unused("m", MODEL_COLUMNS)
        gone = [name for name, in db.execute(
            f"SELECT m.name FROM models m WHERE m.source = 'imported' AND {unused} ORDER BY m.name")]
        db.execute(f"DELETE FROM models WHERE source = 'imported' AND id IN (SELECT m.id FROM models m WHERE {unused})")
        db.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'votes'")
    return RemovedImport(ImportRecord(*row), removed, images, gone)
