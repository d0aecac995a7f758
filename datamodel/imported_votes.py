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
from dataclasses import dataclass

import sqlite_utils

from datamodel.catalog import add_model

# one staged vote: (record_id, battle_key, battle_hash, model_a, model_b, outcome, voter, voter_kind, voted_at,
# anonymous, suite, subset, variant, item_key, prompt, record JSON); model_a / model_b index Staging.names
STAGED_COLUMNS = ("record_id", "battle_key", "battle_hash", "model_a", "model_b", "outcome", "voter", "voter_kind",
                  "voted_at", "anonymous", "suite", "subset", "variant", "item_key", "prompt", "record")
STAGING_TABLE = "temp.vote_import_staging"
STAGED_MODELS = "temp.vote_import_models"


class Staging:
    """A TEMP table of the votes read so far (module docstring); use as a context manager, which drops it.

    Votes are staged in file order (their rowid); model names as small integers (:meth:`model_index`), so each row
    stays short."""

    def __init__(self, db: sqlite_utils.Database):
        if getattr(db.conn, "transaction_depth", 0):
            raise RuntimeError("Stage an import outside any open transaction.")
        self.db = db
        self.names: dict[str, int] = {}
        for table in (STAGING_TABLE, STAGED_MODELS):
            db.execute(f"DROP TABLE IF EXISTS {table}")
        db.execute(f"CREATE TABLE {STAGING_TABLE} (record_id TEXT NOT NULL, battle_key TEXT NOT NULL, "
                   "battle_hash INTEGER NOT NULL, model_a INTEGER NOT NULL, model_b INTEGER NOT NULL, "
                   "outcome TEXT NOT NULL, voter TEXT NOT NULL, voter_kind TEXT NOT NULL, voted_at REAL, "
                   "anonymous INTEGER, suite TEXT NOT NULL, subset TEXT NOT NULL, variant TEXT NOT NULL, "
                   "item_key TEXT NOT NULL, prompt TEXT NOT NULL, record TEXT NOT NULL)")
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
        self.db.conn.execute("BEGIN")
        cursor = self.db.conn.execute(
            f"UPDATE {STAGING_TABLE} SET record_id = record_id || '#' || d.occurrence FROM (SELECT rowid AS r, "
            f"row_number() OVER (PARTITION BY record_id ORDER BY rowid) AS occurrence FROM {STAGING_TABLE} WHERE "
            f"record_id IN (SELECT record_id FROM {STAGING_TABLE} GROUP BY record_id HAVING count(*) > 1)) d "
            f"WHERE {STAGING_TABLE.split('.')[1]}.rowid = d.r AND d.occurrence > 1")
        self.db.conn.execute("COMMIT")
        return cursor.rowcount

    def model_names(self) -> list[str]:
        return sorted(self.names)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        for table in (STAGING_TABLE, STAGED_MODELS):
            self.db.execute(f"DROP TABLE IF EXISTS {table}")


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


def earlier_import(db: sqlite_utils.Database, source: str, sha256: str) -> ImportRecord | None:
    """The first import of the file with this content into ``source``, if any."""
    row = db.execute("SELECT id, source, format, file, sha256, records, added, imported_at FROM vote_imports "
                     "WHERE source = ? AND sha256 = ? ORDER BY id LIMIT 1", [source, sha256]).fetchone()
    return None if row is None else ImportRecord(*row)


_INSERT = f"""
INSERT OR IGNORE INTO imported_votes (import_id, source, original_id, battle_key, battle_hash, left_model_id,
    right_model_id, outcome, voter, voter_kind, voted_at, anonymous, prompt_id, suite, subset, variant, prompt, record)
SELECT ?, ?, s.record_id, s.battle_key, s.battle_hash, ma.id, mb.id, s.outcome, s.voter, s.voter_kind, s.voted_at,
    s.anonymous,
    CASE WHEN s.item_key != '' THEN (SELECT min(p.id) FROM prompts p WHERE p.suite = s.suite AND p.subset = s.subset
                                     AND p.item_key = s.item_key AND p.variant = s.variant) END,
    s.suite, s.subset, s.variant, s.prompt, s.record
FROM {STAGING_TABLE} s JOIN {STAGED_MODELS} ma ON ma.idx = s.model_a JOIN {STAGED_MODELS} mb ON mb.idx = s.model_b
ORDER BY s.rowid
"""


def finish_import(db: sqlite_utils.Database, staging: Staging, *, source: str, fmt: str, file: str, sha256: str,
                  records: int, aliases: dict[str, str]) -> tuple[ImportRecord, list[str]]:
    """Write the staged votes (module docstring) in one transaction; return the import's row and the models it
    created (names no arena model had)."""
    with db.conn:
        known = {name for name, in db.execute("SELECT name FROM models")}
        created = [name for name in staging.model_names() if name not in known]
        for name in created:
            add_model(db, name, source="imported", description=f"from imported votes ({source})")
        db.execute(f"CREATE TABLE {STAGED_MODELS} (idx INTEGER PRIMARY KEY, id INTEGER NOT NULL)")
        db.conn.executemany(f"INSERT INTO {STAGED_MODELS} (idx, id) SELECT ?, id FROM models WHERE name = ?",
                            [(index, name) for name, index in staging.names.items()])
        now = time.time()
        import_id = db.execute(
            "INSERT INTO vote_imports (source, format, file, sha256, records, added, aliases, imported_at) "
            "VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
            [source, fmt, file, sha256, records, json.dumps(aliases, sort_keys=True, ensure_ascii=False), now],
        ).lastrowid
        added = db.execute(_INSERT, [import_id, source]).rowcount
        db.execute("UPDATE vote_imports SET added = ? WHERE id = ?", [added, import_id])
        if added:
            db.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'votes'")
    return ImportRecord(import_id, source, fmt, file, sha256, records, added, now), created


def import_sources(db: sqlite_utils.Database) -> list[str]:
    """The sources of the imported votes, by name (the leaderboard's source filter offers them beside ``arena``)."""
    return [name for name, in db.execute("SELECT DISTINCT source FROM vote_imports ORDER BY source")]


def imported_vote_count(db: sqlite_utils.Database, source: str | None = None) -> int:
    where, params = ("WHERE source = ?", [source]) if source else ("", [])
    return db.execute(f"SELECT count(*) FROM imported_votes {where}", params).fetchone()[0]
