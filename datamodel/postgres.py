"""PostgreSQL as the arena's second engine: a connection that the data model's functions use as they use SQLite's.

Every query function of :mod:`datamodel` takes a database first and calls ``db.execute(sql, params)``,
``db.query(sql, params)`` (rows as dicts) and ``with db.conn:`` (one write transaction, nesting). A
:class:`PgDatabase` answers the same calls over one psycopg 3 connection, so a query written in the SQL both engines
speak runs unchanged; where they differ, the function holds one text per engine (:mod:`datamodel.dialect`).

The thin layer, rather than SQLAlchemy Core, because the project's SQL is hand-written and tuned per query (the
million-vote paths pack votes into integers in SQL, read one index or another); a second query language over it
would rewrite every query and add its compile step to the vote path. What this layer does:

- **Placeholders**: ``?`` becomes psycopg's ``%s`` (and a literal ``%`` becomes ``%%``) outside quoted text; the
  translation is cached per statement. psycopg prepares a statement on the server after its fifth use.
- **Write transactions are serialised**, as SQLite's ``BEGIN IMMEDIATE`` serialises them: ``with db.conn:`` is
  ``BEGIN`` and a transaction-level advisory lock (:data:`WRITE_LOCK`), released at ``COMMIT`` or ``ROLLBACK``, by
  every process on the database. The rules that read before they write (one account per name, raters per item,
  the prompts of a suite) therefore hold across app replicas as they hold between one server's threads; reads
  never wait (MVCC). A replica killed in a transaction loses its connection, and PostgreSQL rolls the transaction
  back and frees the lock.
- **One annotator's vote** (:func:`datamodel.transactions.annotator_transaction`: the vote, its quality flags, the
  next battle drawn; also their other own writes, such as the battle served at sign-in and their stay-signed-in
  tokens) holds that annotator's lock only (:data:`SCOPED_LOCK` and the scope's hash), so different
  annotators' votes proceed side by side: what a vote reads before it writes is that annotator's own (their
  battle, their recent votes, the prompts they saw), and the battle's unique vote is a constraint. What orders
  votes globally is taken at commit: the ``data_versions`` and ``vote_changes`` triggers are deferred to the commit
  (:mod:`datamodel.schema_postgresql`), where they lock the counters' row until the commit ends, so ``vote_changes``
  follows the commits and the locked stretch is the commit alone.
- **Types**: numpy integers and booleans are sent as integers; ``numeric`` results (PostgreSQL's ``SUM`` of
  ``bigint``, ``AVG`` of integers) come back as ``int`` when whole and ``float`` otherwise, as SQLite's do.
- **Errors** are psycopg's (:data:`psycopg.Error`); :func:`datamodel.connection.database_errors` lists both engines'.
"""

from __future__ import annotations

import contextlib
import functools
import re
import zlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg.adapt import Loader
from psycopg.pq import ExecStatus, TransactionStatus
from psycopg.types.numeric import Int8Dumper

ENGINE = "postgresql"
WRITE_LOCK = 7_303_030  # the advisory lock key every write transaction of the arena holds (pg_locks shows it)
SCOPED_LOCK = 7_303_031  # with a scope's hash: the two-key advisory locks of scoped transactions (one annotator's)
_ROW_STATUSES = (ExecStatus.TUPLES_OK, ExecStatus.SINGLE_TUPLE)  # a result that has rows to fetch (maybe none)


def redacted(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))


_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|%")


@functools.lru_cache(maxsize=4096)
def to_psycopg(sql: str) -> str:
    """``sql`` with ``?`` placeholders as ``%s`` and ``%`` as ``%%``, quoted strings and identifiers left alone."""
    return _TOKENS.sub(lambda m: "%s" if m.group() == "?" else "%%" if m.group() == "%" else m.group(), sql)


class _NumberLoader(Loader):
    """``numeric`` as ``int`` when whole, else ``float`` (SQLite's integer and real)."""

    def load(self, data) -> int | float:
        text = bytes(data).decode()
        try:
            return int(text)
        except ValueError:
            return float(text)


def _configure(conn: psycopg.Connection) -> None:
    for kind in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_):
        conn.adapters.register_dumper(kind, _NumpyIntDumper)
    conn.adapters.register_loader("numeric", _NumberLoader)


class _NumpyIntDumper(Int8Dumper):
    def dump(self, obj):
        return super().dump(int(obj))


class PgCursor:
    """A psycopg cursor as the data model reads it: ``fetchone``, ``fetchall``, ``fetchmany``, iteration,
    ``rowcount`` and ``description``.

    Whether the statement returned rows is read once from its result's status: psycopg's ``description`` builds a
    column object per column at every call, which the vote path paid for at every fetch (a fifth of its CPU in
    psycopg, :mod:`tools.vote_cost`)."""

    def __init__(self, cursor: psycopg.Cursor):
        self._cursor = cursor
        result = cursor.pgresult
        self._rows = result is not None and result.status in _ROW_STATUSES

    def fetchone(self):
        return self._cursor.fetchone() if self._rows else None

    def fetchall(self) -> list:
        return self._cursor.fetchall() if self._rows else []

    def fetchmany(self, size: int) -> list:
        return self._cursor.fetchmany(size) if self._rows else []

    def __iter__(self):
        return iter(self._cursor) if self._rows else iter(())

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def description(self):
        return self._cursor.description

    @property
    def lastrowid(self):
        raise AttributeError("PostgreSQL has no lastrowid: write the INSERT with RETURNING id.")


class PgConnection:
    """The ``conn`` of a :class:`PgDatabase`: a nestable write transaction (module docstring) as a context manager,
    and the few connection calls the data model makes (``execute``, ``executemany``, ``in_transaction``)."""

    def __init__(self, conn: psycopg.Connection):
        self.raw = conn
        self.transaction_depth = 0

    def __enter__(self):
        if self.transaction_depth == 0:
            self.raw.execute(f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})")
        self.transaction_depth += 1
        return self

    @contextlib.contextmanager
    def scoped(self, scope: str):
        """A write transaction holding ``scope``'s lock instead of :data:`WRITE_LOCK` (module docstring); nested in
        another transaction, it joins it."""
        if self.transaction_depth == 0:
            key = zlib.crc32(scope.encode()) - 2**31  # an int4
            self.raw.execute(f"BEGIN; SELECT pg_advisory_xact_lock({SCOPED_LOCK}, {key})")
        self.transaction_depth += 1
        try:
            yield self
        except BaseException:
            self.__exit__(True, None, None)
            raise
        self.__exit__(None, None, None)

    def __exit__(self, exc_type, exc, tb):
        self.transaction_depth -= 1
        if self.transaction_depth == 0:
            self.raw.execute("COMMIT" if exc_type is None else "ROLLBACK")
        return False

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, params=None) -> PgCursor:
        return _execute(self.raw, sql, params)

    def executemany(self, sql: str, rows) -> PgCursor:
        cursor = self.raw.cursor()
        cursor.executemany(to_psycopg(sql), [list(row) for row in rows])
        return PgCursor(cursor)

    def close(self) -> None:
        self.raw.close()


def _execute(conn: psycopg.Connection, sql: str, params) -> PgCursor:
    if params is None or len(params) == 0:
        return PgCursor(conn.execute(sql))
    if isinstance(params, dict):
        raise TypeError("Use ? placeholders with a list of parameters.")
    return PgCursor(conn.execute(to_psycopg(sql), list(params)))


class PgDatabase:
    """A PostgreSQL database as the data model uses one (module docstring): ``execute``, ``query``, ``conn``,
    ``close``; ``engine`` is ``"postgresql"``."""

    engine = ENGINE

    def __init__(self, url: str, *, application_name: str = "t2i-arena"):
        self.url = url
        try:
            raw = psycopg.connect(url, autocommit=True, application_name=application_name)
        except psycopg.OperationalError as error:
            raise ConnectionError(f"Cannot connect to {redacted(url)}: {str(error).strip()}. Check that PostgreSQL "
                                  "runs there and that ARENA_DATABASE_URL names its host, port, database and user "
                                  "(the password in PGPASSWORD or ~/.pgpass).") from None
        _configure(raw)
        self.conn = PgConnection(raw)

    def execute(self, sql: str, params=None) -> PgCursor:
        return _execute(self.conn.raw, sql, params)

    def query(self, sql: str, params=None) -> Iterator[dict[str, Any]]:
        cursor = self.execute(sql, params)
        names = [column.name for column in cursor.description or ()]
        for row in cursor:
            yield dict(zip(names, row))

    def close(self) -> None:
        self.conn.close()

    def __repr__(self) -> str:
        return f"<PgDatabase {redacted(self.url)}>"


def create_database(server_url: str, name: str, *, template: str | None = None) -> None:
    """Create database ``name`` on the server of ``server_url`` (a copy of ``template``, if given)."""
    copy = f" TEMPLATE {_identifier(template)}" if template else ""
    _admin(server_url, f"CREATE DATABASE {_identifier(name)}{copy}")


def drop_database(server_url: str, name: str) -> None:
    """Drop database ``name`` (if it exists), ending its connections."""
    _admin(server_url, f"DROP DATABASE IF EXISTS {_identifier(name)} WITH (FORCE)")


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_]{1,63}", name or ""):
        raise ValueError(f"{name!r} is not a database name: use letters, digits and _ (at most 63).")
    return f'"{name}"'


def _admin(server_url: str, sql: str) -> None:
    """Run ``sql`` outside any transaction (CREATE and DROP DATABASE)."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(sql)
