"""Writing many rows at once, ids included: the synthetic studies of :mod:`tools.scale_fixture` and the copy of
``python -m arena migrate-db`` (:mod:`datamodel.migrate_db`).

:func:`insert_rows` takes a table, its columns and an iterable of rows (consumed as it goes, so a million votes are
never held at once) and writes them in the caller's transaction: SQLite's ``executemany`` of one prepared INSERT,
PostgreSQL's ``COPY ... FROM STDIN`` (a few times faster than INSERTs on both the client and the server).
:func:`bulk_loading` (or :func:`start_bulk_load` and :func:`finish_bulk_load`) sets a fresh SQLite file up for such
a load (an in-memory journal and a 256 MB page cache, then WAL again) and refreshes the query planner's statistics
after it, on either engine.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterable, Iterator, Sequence

from datamodel.database import Database
from datamodel.dialect import is_postgres

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def _names(table: str, columns: Sequence[str]) -> None:
    for name in (table, *columns):
        if not _NAME.match(name):
            raise ValueError(f"{name!r} is not a table or column name of the arena schema.")


def insert_rows(db: Database, table: str, columns: Sequence[str], rows: Iterable[Sequence]) -> int:
    """Insert ``rows`` (values in the order of ``columns``) into ``table``; return how many. Run it inside a
    transaction (``with db.conn:``) for one commit."""
    _names(table, columns)
    if is_postgres(db):
        count = 0
        cursor = db.conn.raw.cursor()
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
                count += 1
        return count
    counted = _Counted(rows)
    db.conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        counted)
    return counted.count


class _Counted:
    def __init__(self, rows: Iterable):
        self.rows, self.count = rows, 0

    def __iter__(self) -> Iterator:
        for row in self.rows:
            self.count += 1
            yield row


def start_bulk_load(db: Database) -> None:
    """Set a new SQLite database up for a bulk load: an in-memory journal, a 256 MB page cache (nothing on
    PostgreSQL)."""
    if not is_postgres(db):
        db.execute("PRAGMA journal_mode = MEMORY")
        db.execute("PRAGMA cache_size = -262144")


def finish_bulk_load(db: Database) -> None:
    """Back to serving after a bulk load (SQLite's write-ahead log again), with fresh planner statistics."""
    if not is_postgres(db):
        db.execute("PRAGMA journal_mode = WAL")
    db.execute("ANALYZE")


@contextlib.contextmanager
def bulk_loading(db: Database) -> Iterator[None]:
    """:func:`start_bulk_load` before the block, :func:`finish_bulk_load` after it."""
    start_bulk_load(db)
    yield
    finish_bulk_load(db)
