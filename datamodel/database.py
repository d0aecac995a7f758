"""The database every function of the project takes: what it calls on one, whichever engine is behind it.

:func:`datamodel.connection.connect` makes a :class:`datamodel.sqlite.SqliteDatabase` over an SQLite file or a
:class:`datamodel.postgres.PgDatabase` over a PostgreSQL database; both satisfy :class:`Database` (checked by the type
checker, structurally: neither names it). The protocol declares only the calls the project makes: ``execute`` and
``query`` with ``?`` placeholders, ``close``, and ``conn``, whose ``with`` block is one write transaction that nests
(:class:`datamodel.connection.ArenaConnection`, :class:`datamodel.postgres.PgConnection`). No table API
(sqlite-utils' ``db["votes"].insert(...)``) is part of it: the project writes its SQL by hand, in what both engines
speak (:mod:`datamodel.dialect`). Engine-only attributes (PostgreSQL's ``url`` and ``conn.scoped``, SQLite's
``conn.write_lock``) are reached after :func:`datamodel.dialect.is_postgres` says which engine it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, Literal, Protocol


class Cursor(Protocol):
    """The result of ``execute``: :class:`sqlite3.Cursor` or :class:`datamodel.postgres.PgCursor`."""

    @property
    def rowcount(self) -> int: ...

    @property
    def description(self) -> Any: ...

    @property
    def lastrowid(self) -> int | None: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int, /) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """A database's ``conn``: ``with db.conn:`` is one write transaction (an inner block joins the outer one)."""

    @property
    def in_transaction(self) -> bool: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None,
                 /) -> Literal[False] | None: ...

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...


class Database(Protocol):
    """An open arena database (module docstring): SQLite's or PostgreSQL's."""

    @property
    def conn(self) -> Connection: ...

    def execute(self, sql: str, params: Sequence[Any] | None = None, /) -> Cursor: ...

    def query(self, sql: str, params: Sequence[Any] | None = None, /) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...
