"""Opening the arena database.

Every query function in the project takes a :class:`sqlite_utils.Database` as its first argument; this module makes
those databases. Connections use WAL, foreign keys and a busy timeout, and their ``with db.conn:`` block is one
``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction that nests (an inner block joins the outer one), so sqlite-utils'
own write helpers and hand-written SQL compose into one atomic write.

A web server shares one :class:`Store` among its threads; each thread gets its own connection, and the threads take
turns at writing through one lock (see :class:`ArenaConnection`).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import sqlite_utils

from arena.schema import migrate


class ArenaConnection(sqlite3.Connection):
    """A connection whose ``with`` block is a nestable ``BEGIN IMMEDIATE`` transaction.

    ``write_lock``, when set (a :class:`Store` sets one lock on all its connections), is held from ``BEGIN`` to
    ``COMMIT``: the threads of one server queue on it and wake the moment the writer before them commits, instead of
    polling in SQLite's busy handler, which sleeps up to 100 ms between tries. Other processes still meet
    the busy timeout.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.transaction_depth = 0
        self.write_lock: threading.Lock | None = None

    def __enter__(self):
        if self.transaction_depth == 0:
            if self.write_lock is not None:
                self.write_lock.acquire()
            try:
                self.execute("BEGIN IMMEDIATE")
            except BaseException:
                if self.write_lock is not None:
                    self.write_lock.release()
                raise
        self.transaction_depth += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self.transaction_depth -= 1
        if self.transaction_depth == 0:
            try:
                self.execute("COMMIT" if exc_type is None else "ROLLBACK")
            finally:
                if self.write_lock is not None:
                    self.write_lock.release()
        return False


def connect(path: str | Path, *, synchronous: str = "FULL", migrate_schema: bool = True) -> sqlite_utils.Database:
    """Open (creating if needed) the database at ``path`` (``":memory:"`` for a throwaway one)."""
    memory = str(path) == ":memory:"
    if not memory:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        str(path), factory=ArenaConnection, isolation_level=None, check_same_thread=False, timeout=30.0
    )
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 30000")
    if not memory:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    db = sqlite_utils.Database(conn)
    if migrate_schema:
        migrate(db)
    return db


class Store:
    """The database of a running app: one connection per thread, schema migrated once on creation."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL"):
        self.path = Path(path)
        self.synchronous = synchronous
        self._local = threading.local()
        self._write_lock = threading.Lock()
        connect(self.path, synchronous=synchronous).close()

    def db(self) -> sqlite_utils.Database:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = connect(self.path, synchronous=self.synchronous, migrate_schema=False)
            db.conn.write_lock = self._write_lock
        return db
