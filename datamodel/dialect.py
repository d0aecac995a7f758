"""Which engine a database is, and the few SQL texts that differ between SQLite and PostgreSQL.

Most of the data model's SQL is written once, in what both engines speak (``coalesce``, ``CASE``, ``ON CONFLICT``,
``RETURNING``, ``json_extract(text, '$.key')``, which the PostgreSQL schema defines:
:mod:`datamodel.schema_postgresql`). Where the engines differ, a function holds one text per engine and picks it
with :func:`pick`; the fragments used in several places are here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:  # psycopg is an optional install: the type only
    from datamodel.postgres import PgDatabase

SQLITE, POSTGRESQL = "sqlite", "postgresql"
ENGINES = (SQLITE, POSTGRESQL)

# the current time as text, as the schema's created_at defaults write it (ISO 8601 UTC with milliseconds)
NOW_TEXT = {SQLITE: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            POSTGRESQL: "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"}


def engine(db) -> str:
    """``"sqlite"`` or ``"postgresql"``: the engine of ``db`` (a :class:`datamodel.database.Database`:
    SQLite's :class:`datamodel.sqlite.SqliteDatabase` or a :class:`datamodel.postgres.PgDatabase`)."""
    return getattr(db, "engine", SQLITE)


def is_postgres(db: object) -> TypeGuard[PgDatabase]:
    """Whether ``db`` is a PostgreSQL database (then its engine-only attributes, ``url`` and ``conn.scoped``, may be
    used)."""
    return engine(db) == POSTGRESQL


def pick(db, **texts: str) -> str:
    """The text for ``db``'s engine among ``sqlite=...`` and ``postgresql=...``."""
    return texts[engine(db)]


def is_not(db) -> str:
    """The comparison true when two values differ, NULL counting as a value: SQLite's ``IS NOT``, PostgreSQL's ``IS
    DISTINCT FROM``."""
    return pick(db, sqlite="IS NOT", postgresql="IS DISTINCT FROM")


def now_text(db) -> str:
    """SQL for the current time as the ``created_at`` columns hold it."""
    return NOW_TEXT[engine(db)]


def unixepoch_text(db, column: str) -> str:
    """SQL for the unix time in ``column`` as ISO 8601 UTC text with milliseconds (``2024-05-01T12:00:00.000Z``)."""
    if is_postgres(db):
        return (f"to_char(to_timestamp({column}) AT TIME ZONE 'UTC', "
                "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')")
    return f"strftime('%Y-%m-%dT%H:%M:%fZ', {column}, 'unixepoch')"


def json_text_items(db, document: str, key: str, alias: str) -> tuple[str, str]:
    """(a FROM item, its value column) listing the text items of the JSON array at ``$.key`` of ``document``
    (SQLite's ``json_each``, PostgreSQL's ``jsonb_array_elements``), for ``SELECT ... FROM prompts p, <item>``."""
    if is_postgres(db):
        return (f"jsonb_array_elements(CASE WHEN jsonb_typeof(({document})::jsonb -> '{key}') = 'array' THEN "
                f"({document})::jsonb -> '{key}' ELSE '[]'::jsonb END) {alias}(item)",
                f"CASE WHEN jsonb_typeof({alias}.item) = 'string' THEN {alias}.item #>> '{{}}' END")
    return f"json_each({document}, '$.{key}') {alias}", f"CASE WHEN {alias}.type = 'text' THEN {alias}.value END"
