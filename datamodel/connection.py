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

from datamodel.schema import migrate


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


def check_writable(db: sqlite_utils.Database, path: str | Path) -> None:
    """Raise ValueError naming ``path`` and the fix unless the database can be written (a read-only file or folder, a
    full disk): the server finds out at start, not at the first vote."""
    try:
        with db.conn:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            db.execute(f"PRAGMA user_version = {int(version)}")  # a write of the header page: same value
    except sqlite3.Error as error:
        raise ValueError(f"The database {path} cannot be written ({error}). Check the permissions of the file and of "
                         "its folder and the free disk space, or point ARENA_DB at a writable file.") from None


BACKGROUND_CHECKPOINT_PAGES = 20_000  # with background checkpoints, a commit checkpoints only past this WAL size


class Store:
    """The database of a running app: one connection per thread, schema migrated once on creation.

    :meth:`checkpoint_in_background` moves WAL checkpoints off the commits. By default SQLite's commit that takes
    the write-ahead log past 1,000 pages copies them into the database and syncs it, while every other writer of the
    server waits on the write lock: at a million votes, where each vote touches pages all over the battle and vote
    indexes, that was one commit in about a hundred taking tens of milliseconds. A thread checkpoints instead
    (``PASSIVE``: it never blocks a writer), and a commit checkpoints only if the log still reaches
    :data:`BACKGROUND_CHECKPOINT_PAGES`.
    """

    def __init__(self, path: str | Path, *, synchronous: str = "FULL"):
        self.path = Path(path)
        self.synchronous = synchronous
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._autocheckpoint: int | None = None  # pages; None: SQLite's default
        self._stop = threading.Event()
        connect(self.path, synchronous=synchronous).close()

    def db(self) -> sqlite_utils.Database:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = connect(self.path, synchronous=self.synchronous, migrate_schema=False)
            db.conn.write_lock = self._write_lock
            if self._autocheckpoint is not None:
                db.execute(f"PRAGMA wal_autocheckpoint = {self._autocheckpoint}")
        return db

    def checkpoint_in_background(self, every_s: float = 1.0) -> None:
        """Checkpoint the write-ahead log every ``every_s`` seconds on a daemon thread until :meth:`close`.

        Call it before the first :meth:`db` of the threads that write."""
        self._autocheckpoint = BACKGROUND_CHECKPOINT_PAGES

        def run() -> None:
            db = connect(self.path, synchronous=self.synchronous, migrate_schema=False)
            try:
                while not self._stop.wait(every_s):
                    try:
                        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    except sqlite3.Error:  # busy now: the next one catches up
                        pass
            finally:
                db.close()

        threading.Thread(target=run, name="wal-checkpoint", daemon=True).start()

    def close(self) -> None:
        """Stop the background checkpoints (the threads' connections close with their threads)."""
        self._stop.set()
