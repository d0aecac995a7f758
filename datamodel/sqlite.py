"""SQLite's arena database object: the :class:`datamodel.database.Database` protocol over one ``sqlite3`` connection.

:func:`datamodel.connection.connect` and :func:`~datamodel.connection.open_reader` open the connection (autocommit:
``isolation_level=None``; ``with db.conn:`` is :class:`~datamodel.connection.ArenaConnection`'s nestable
transaction) and wrap it here. ``PRAGMA recursive_triggers`` is on, so an ``INSERT OR REPLACE`` fires the delete
triggers that keep the prompts' full-text index in step (SQLite's documented rule for REPLACE). The standard
library's ``sqlite3`` is all it needs: the project writes its SQL by hand (``datamodel/``), so a table API is not
used; :class:`datamodel.postgres.PgDatabase` is the same object for PostgreSQL.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from datamodel.dialect import SQLITE


class SqliteDatabase:
    """An SQLite database as the data model uses one: ``execute``, ``query``, ``conn``, ``close``."""

    engine = SQLITE

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        conn.execute("PRAGMA recursive_triggers = ON")

    def execute(self, sql: str, params: Sequence[Any] | None = None, /) -> sqlite3.Cursor:
        """Run one statement (``?`` parameters); a write outside ``with db.conn:`` commits at once."""
        return self.conn.execute(sql) if params is None else self.conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] | None = None, /) -> Iterator[dict[str, Any]]:
        """The rows of ``sql`` as dicts by column name; the statement runs now, the rows are read as iterated."""
        cursor = self.execute(sql, params)
        names = [column[0] for column in cursor.description or ()]
        return (dict(zip(names, row)) for row in cursor)

    def close(self) -> None:
        self.conn.close()

    def __repr__(self) -> str:
        return f"<SqliteDatabase {self.conn!r}>"
