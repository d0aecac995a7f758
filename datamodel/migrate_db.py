"""Copying an arena from SQLite to PostgreSQL, checked: ``python -m arena migrate-db --to postgresql://…``.

:func:`migrate_database` opens the SQLite arena (migrating it to this code's schema first, as every command does)
and the PostgreSQL database (creating or migrating its schema), then:

1. refuses a target that already holds arena data (any row beyond the counters and the metric directions its schema
   starts with) unless ``replace`` is given, in which case that data is deleted in the same transaction;
2. copies every table of the target's schema that the source has, parents before children (the foreign keys of the
   target's catalog give the order), every column, ids included (``battles`` and ``rating_servings`` take SQLite's
   rowid as their ``rowid``), with PostgreSQL's ``COPY`` (:func:`datamodel.bulk.insert_rows`), the target's own
   triggers switched off meanwhile so that ``data_versions`` and ``vote_changes`` arrive as the source has them;
3. moves each identity sequence past the largest id copied, so new rows continue the numbering;
4. verifies, before committing: every table's row count equals the source's, and the SHA-256 of the votes (and of
   the imported votes) in id order, every column, equals the source's. Any difference, or any error while copying
   (a value the target's types refuse, named with its table), rolls everything back: the target is as it was.

The media folder is not copied: point every replica's ``ARENA_MEDIA_DIR`` at the same folder
(docs/deploying-postgresql.md). Besides that schema migration, the source is only read.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from datamodel.bulk import insert_rows
from datamodel.connection import connect, database_errors, describe, is_postgres_url, read_snapshot

SEEDED = {"data_versions", "metric_directions"}  # tables a new schema already fills
CHECKSUMMED = ("votes", "imported_votes")
ROWID_TABLES = {"battles", "rating_servings"}  # PostgreSQL's rowid column is SQLite's implicit rowid
SKIPPED = {"arena_schema"}  # the target's own bookkeeping


class MigrationError(ValueError):
    """The copy was refused or did not verify; nothing was written. The message says what to do."""


@dataclass
class Migration:
    source: str
    target: str
    tables: dict[str, int] = field(default_factory=dict)  # rows copied per table
    checksums: dict[str, str] = field(default_factory=dict)  # SHA-256 per checksummed table (equal on both sides)
    replaced: bool = False
    seconds: float = 0.0


def _target_tables(db) -> list[str]:
    """The target's tables, parents before children (by its foreign keys; ties by name)."""
    tables = [name for name, in db.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")]
    edges = {table: set() for table in tables}
    for child, parent in db.execute(
            "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
            "WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace"):
        if child in edges and parent in edges and parent != child:
            edges[child].add(parent)
    ordered, done = [], set()
    while len(ordered) < len(tables):
        ready = sorted(t for t in tables if t not in done and edges[t] <= done)
        if not ready:  # a cycle of foreign keys: cannot happen in the arena schema
            raise MigrationError(f"the target's tables {sorted(set(tables) - done)} reference each other in a cycle.")
        ordered += ready
        done.update(ready)
    return [table for table in ordered if table not in SKIPPED]


def _columns(db, table: str) -> list[str]:
    return [name for name, in db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? "
        "ORDER BY ordinal_position", [table])]


def _source_tables(source) -> set[str]:
    return {name for name, in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _source_columns(source, table: str) -> set[str]:
    return {row[1] for row in source.execute(f"PRAGMA table_info({table})")}


def _has_data(target, tables: list[str]) -> list[str]:
    return [table for table in tables if table not in SEEDED
            and target.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None]


def table_checksum(db, table: str, columns: list[str]) -> str:
    """SHA-256 of ``table``'s rows in id order, every one of ``columns``, each value as Python's repr (integers,
    floats (both engines' doubles), text and None read back the same from either engine)."""
    digest = hashlib.sha256()
    cursor = db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY id")
    while rows := cursor.fetchmany(10_000):
        for row in rows:
            digest.update(repr(tuple(row)).encode())
            digest.update(b"\n")
    return digest.hexdigest()


def migrate_database(source_path: str | Path, target_url: str, *, replace: bool = False,
                     progress=lambda line: None) -> Migration:
    """Copy the SQLite arena at ``source_path`` into the PostgreSQL database at ``target_url`` and verify the copy
    (module docstring)."""
    if not is_postgres_url(target_url):
        raise MigrationError(f"--to must be a PostgreSQL URL (postgresql://user@host:port/database), not "
                             f"{describe(target_url)!r}.")
    if is_postgres_url(str(source_path)) or not Path(source_path).is_file():
        raise MigrationError(f"No SQLite arena at {describe(source_path)}: give the file to copy (--from, or ARENA_DB).")
    started = time.perf_counter()
    source = connect(source_path)
    target = connect(target_url)
    result = Migration(str(source_path), describe(target_url), replaced=replace)
    try:
        tables = _target_tables(target)
        present = _source_tables(source)
        filled = _has_data(target, tables)
        if filled and not replace:
            raise MigrationError(f"{describe(target_url)} already holds an arena ({', '.join(filled[:6])} have rows). "
                                 "Copy into an empty database, or pass --replace to delete what it holds first.")
        plan = []
        for table in tables:
            if table not in present:
                continue
            columns = _columns(target, table)
            have = _source_columns(source, table) | ({"rowid"} if table in ROWID_TABLES else set())
            missing = [c for c in columns if c not in have]
            if missing:
                raise MigrationError(f"The source's {table} lacks {', '.join(missing)}: its schema is not this code's. "
                                     "Open it once with this version (any python -m arena command) and copy again.")
            plan.append((table, columns))
        with read_snapshot(source), target.conn:
            for table in tables:  # first: a deleted row would leave the deferred triggers pending
                target.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            for table in reversed(tables):
                target.execute(f"DELETE FROM {table}")  # the seeded rows too: they come from the source
            for table, columns in plan:
                cursor = source.execute(f"SELECT {', '.join(columns)} FROM {table}")
                try:
                    copied = insert_rows(target, table, columns, _rows(cursor))
                except database_errors() as error:
                    raise MigrationError(f"Copying {table} failed: {str(error).strip()}. The target is unchanged; "
                                         f"fix that row in the source (sqlite3 {source_path}) and copy again.") from None
                result.tables[table] = copied
                progress(f"{table}: {copied} rows")
            for table in tables:
                target.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
            _move_sequences(target, [table for table, _ in plan])
            _verify(source, target, plan, result)
    finally:
        source.close()
        target.close()
    result.seconds = time.perf_counter() - started
    return result


def _rows(cursor):
    while rows := cursor.fetchmany(10_000):
        yield from rows


def _move_sequences(target, tables: list[str]) -> None:
    """Every identity column's sequence past the largest value copied."""
    for table, column in target.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND is_identity = 'YES'").fetchall():
        if table in tables:
            target.execute(f"SELECT setval(pg_get_serial_sequence(?, ?), coalesce(max({column}), 0) + 1, false) "
                           f"FROM {table}", [table, column])


def _verify(source, target, plan, result: Migration) -> None:
    for table, columns in plan:
        want = source.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        got = target.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        if want != got or result.tables.get(table) != want:
            raise MigrationError(f"{table}: the source has {want} rows, the copy {got}. Nothing was written; copy "
                                 "again, with no other process writing the source.")
        if table in CHECKSUMMED:
            expected, copied = table_checksum(source, table, columns), table_checksum(target, table, columns)
            if expected != copied:
                raise MigrationError(f"{table}: the copy's checksum {copied[:16]} differs from the source's "
                                     f"{expected[:16]}. Nothing was written; report this with both databases.")
            result.checksums[table] = expected
