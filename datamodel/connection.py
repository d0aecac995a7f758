"""Opening the arena database: a SQLite file, or a PostgreSQL database named by a ``postgresql://`` URL.

Every query function in the project takes a database as its first argument, a :class:`datamodel.database.Database`:
SQLite's :class:`datamodel.sqlite.SqliteDatabase` over the connection made here, or a
:class:`datamodel.postgres.PgDatabase` that answers the same calls (``execute``, ``query``, ``with db.conn:``); this
module makes both (:func:`connect` takes either target, the ``database`` of :mod:`core.settings`). SQLite
connections use WAL, foreign keys and a busy timeout, and their ``with db.conn:`` block is one ``BEGIN IMMEDIATE``
... ``COMMIT`` transaction that nests (an inner block joins the outer one), so several writes compose into one
atomic write.

A web server shares one :class:`Store` among its threads; each thread gets its own connection, and the threads take
turns at writing through one lock (see :class:`ArenaConnection`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from datamodel.database import Database
from datamodel.dialect import is_postgres
from datamodel.schema import database_file, migrate
from datamodel.sqlite import SqliteDatabase

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
log = logging.getLogger(__name__)


def is_postgres_url(target: object) -> bool:
    """Whether ``target`` (a setting's value) names a PostgreSQL database rather than a SQLite file."""
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


def describe(target: str | Path) -> str:
    """``target`` as a message may show it: a file path, or a URL with its password hidden."""
    if is_postgres_url(target):
        from datamodel.postgres import redacted

        return redacted(str(target))
    return str(target)


def database_errors() -> tuple[type[BaseException], ...]:
    """The exception classes a database call may raise on either engine (sqlite3's; psycopg's when installed)."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)


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


def connect(path: str | Path, *, synchronous: str = "FULL", migrate_schema: bool = True) -> Database:
    """Open (creating if needed) the database at ``path`` (``":memory:"`` for a throwaway one), or the PostgreSQL
    database of a ``postgresql://`` URL (its schema created or migrated unless ``migrate_schema`` is false)."""
    if is_postgres_url(path):
        from datamodel.postgres import PgDatabase

        database = PgDatabase(str(path))
        if migrate_schema:
            migrate(database)
        return database
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
    db = SqliteDatabase(conn)
    if migrate_schema:
        migrate(db)
    return db


@contextlib.contextmanager
def read_snapshot(db) -> Iterator[None]:
    """A read transaction for the block: every query in it sees the database as of one moment (SQLite's deferred
    ``BEGIN``, PostgreSQL's ``REPEATABLE READ READ ONLY``); inside an open transaction, that one."""
    if db.conn.in_transaction:
        yield
        return
    db.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if is_postgres(db) else "BEGIN")
    try:
        yield
    finally:
        db.execute("COMMIT")


def reader_target(db) -> str | None:
    """What :func:`open_reader` opens to read ``db``'s database from another thread: its file or URL, or None for an
    in-memory SQLite database, which no other connection can see."""
    if is_postgres(db):
        return db.url
    return database_file(db)


def open_reader(target: str) -> Database:
    """A new read-only connection to the database at ``target`` (:func:`reader_target`)."""
    if is_postgres_url(target):
        from datamodel.postgres import PgDatabase

        reader = PgDatabase(target, application_name="t2i-arena reader")
        reader.execute("SET default_transaction_read_only = on")
        return reader
    conn = sqlite3.connect(target, timeout=60.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only = ON")
    return SqliteDatabase(conn)


UNIQUE_VIOLATIONS = frozenset({"SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"})


def is_unique_violation(error: BaseException, table: str) -> bool:
    """Whether ``error`` is a write refused for breaking a unique key (or the primary key) of ``table``, on either
    engine. SQLite raises the same ``IntegrityError`` for a NOT NULL, CHECK, FOREIGN KEY or trigger refusal: its
    extended code (``sqlite_errorname``) tells a unique key apart, and its message names the key's columns
    ("UNIQUE constraint failed: votes.battle_id"); PostgreSQL raises ``UniqueViolation`` naming the table."""
    if isinstance(error, sqlite3.IntegrityError):
        if getattr(error, "sqlite_errorname", "") not in UNIQUE_VIOLATIONS:
            return False
        columns = str(error).partition("constraint failed: ")[2].split(", ")
        return all(column.startswith(f"{table}.") for column in columns)
    try:
        from psycopg.errors import UniqueViolation
    except ImportError:
        return False
    return isinstance(error, UniqueViolation) and error.diag.table_name == table


def integrity_check(db) -> str:
    """SQLite's ``PRAGMA integrity_check`` ("ok" when the file is sound). On PostgreSQL, whose pages carry their own
    checks, "ok" when every index of the votes and battles is consistent with its table (``amcheck``'s
    ``bt_index_check``, where the extension can be created), else "not checked"."""
    if not is_postgres(db):
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    try:
        with db.conn:
            db.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
    except database_errors():
        return "not checked (the amcheck extension is not available to this user)"
    for name, in db.execute("SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid IN "
                            "('votes'::regclass, 'battles'::regclass)").fetchall():
        db.execute("SELECT bt_index_check(?::regclass)", [name])
    return "ok"


def checkpoint(db) -> None:
    """Move SQLite's write-ahead log into the database file and empty it (nothing on PostgreSQL)."""
    if not is_postgres(db):
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def open_database(settings, *, migrate_schema: bool = True) -> Database:
    """The database ``settings`` name (:attr:`core.settings.Settings.database`), opened as :func:`connect`
    opens it."""
    return connect(settings.database, synchronous=settings.sqlite_synchronous, migrate_schema=migrate_schema)


def check_writable(db: Database, path: str | Path) -> None:
    """Raise ValueError naming ``path`` and the fix unless the database can be written (a read-only file or folder, a
    full disk; on PostgreSQL a standby server or a user who may not add votes): the server finds out at start, not at
    the first vote."""
    if is_postgres(db):
        writable = db.execute("SELECT NOT pg_is_in_recovery() AND has_table_privilege('votes', 'INSERT')").fetchone()[0]
        if not writable:
            raise ValueError(f"The database {describe(path)} cannot be written (a standby server, or a user without "
                             "INSERT on votes). Point ARENA_DATABASE_URL at the primary server, or grant the user "
                             "the arena's tables.")
        return
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
        self.postgres = is_postgres_url(path)
        self.path = str(path) if self.postgres else Path(path)  # the target: a file, or a PostgreSQL URL
        self.synchronous = synchronous
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._autocheckpoint: int | None = None  # pages; None: SQLite's default
        self._stop = threading.Event()
        self._opened: list = []  # every thread's connection, closed by close() (PostgreSQL's are server processes)
        connect(self.path, synchronous=synchronous).close()

    @property
    def engine(self) -> str:
        return "postgresql" if self.postgres else "sqlite"

    def db(self) -> Database:
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = connect(self.path, synchronous=self.synchronous, migrate_schema=False)
            if self.postgres:  # the advisory lock serialises writers (datamodel.postgres)
                with self._write_lock:
                    self._opened.append(db)
                return db
            # connect() opens every SQLite connection as an ArenaConnection (its factory)
            cast(ArenaConnection, db.conn).write_lock = self._write_lock
            if self._autocheckpoint is not None:
                db.execute(f"PRAGMA wal_autocheckpoint = {self._autocheckpoint}")
        return db

    def checkpoint_in_background(self, every_s: float = 1.0) -> None:
        """Checkpoint the write-ahead log every ``every_s`` seconds on a daemon thread until :meth:`close`.

        Call it before the first :meth:`db` of the threads that write. (PostgreSQL checkpoints by itself: nothing
        to do.)"""
        if self.postgres:
            return
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

    def prune_change_logs_in_background(self, keep_s: float, every_s: float | None = None) -> None:
        """Prune the change logs (:func:`datamodel.change_logs.prune_change_logs`: the rows older than ``keep_s``
        seconds) now and every ``every_s`` seconds (default :data:`datamodel.change_logs.PRUNE_EVERY_S`) on a daemon
        thread with its own connection, until :meth:`close`: off the vote path. A pruning that fails (the database
        busy or unreachable) is logged and tried again at the next turn."""
        from datamodel.change_logs import PRUNE_EVERY_S, prune_change_logs

        every_s = PRUNE_EVERY_S if every_s is None else every_s

        def run() -> None:
            db = None
            while True:
                try:
                    if db is None:
                        db = connect(self.path, synchronous=self.synchronous, migrate_schema=False)
                        if not self.postgres:  # this process's writers take turns (Store.db)
                            cast(ArenaConnection, db.conn).write_lock = self._write_lock
                    prune_change_logs(db, keep_s=keep_s)
                except Exception:  # the next turn tries again, on a new connection
                    log.exception("Pruning the change logs failed; trying again in %.0f s", every_s)
                    if db is not None:
                        with contextlib.suppress(Exception):
                            db.close()
                    db = None
                if self._stop.wait(every_s):
                    break
            if db is not None:
                db.close()

        threading.Thread(target=run, name="change-log-prune", daemon=True).start()

    def close(self) -> None:
        """Stop the background checkpoints (SQLite connections close with their threads) and close the PostgreSQL
        connections the threads opened."""
        self._stop.set()
        with self._write_lock:
            opened, self._opened = self._opened, []
        for db in opened:
            try:
                db.close()
            except Exception:  # closing a connection that another thread still uses: it ends with the process
                pass
