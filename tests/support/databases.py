"""PostgreSQL test databases that are reused instead of created and dropped for each test.

On the test server, ``CREATE DATABASE ... TEMPLATE`` costs about 80 ms of the server's CPU and ``DROP DATABASE``
about 120 ms (it forces a checkpoint): 200 ms per test, 400 ms for a test on a copy of the small arena (its database
made, dropped and made again from the arena's template). Emptying a used database with one ``TRUNCATE`` of its
tables and copying a template's rows back in costs about 40 ms. So each test process keeps the databases its tests
used (:class:`DatabasePool`) and gives the next test one of them, reset to the template it asks for.

A reset database holds what a fresh copy of the template holds: every table's rows (``COPY``), every sequence at the
template's value; the test's other connections are ended first. A database whose schema the test changed (a table,
column, index, trigger or function more or less than its template's) is not reset but dropped, and the next test gets
a fresh copy. Nothing is dropped at the end: the session's server and its whole cluster are deleted then.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import psycopg

from datamodel.postgres import create_database, drop_database

# the public schema's shape: relations with their columns and types, triggers and functions; a test that changes any
# of it leaves a database that a reset of the rows would not make like its template again
SCHEMA_FINGERPRINT = """
select md5(concat_ws('|',
  (select string_agg(c.relname || ':' || c.relkind::text || ':' || coalesce(a.attname, '') || ':' ||
                     coalesce(a.atttypid::text, ''), ',' order by c.relname, a.attnum)
     from pg_class c left join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where c.relnamespace = 'public'::regnamespace),
  (select string_agg(t.tgname, ',' order by t.tgname) from pg_trigger t join pg_class c on c.oid = t.tgrelid
    where c.relnamespace = 'public'::regnamespace),
  (select string_agg(p.proname, ',' order by p.proname) from pg_proc p
    where p.pronamespace = 'public'::regnamespace)))
"""


def fingerprint(conn: psycopg.Connection) -> str:
    row = conn.execute(SCHEMA_FINGERPRINT).fetchone()
    assert row is not None  # one aggregate row, always
    return row[0]


@dataclass
class Snapshot:
    """What a fresh copy of a template database holds: its schema's fingerprint, every table's rows in ``COPY``'s
    text format, and every sequence's (last value, is_called)."""

    fingerprint: str
    tables: list[str]
    rows: dict[str, bytes] = field(default_factory=dict)
    sequences: dict[str, tuple[int, bool]] = field(default_factory=dict)

    @classmethod
    def of(cls, url: str) -> Snapshot:
        with psycopg.connect(url, autocommit=True) as conn:
            tables = [name for (name,) in conn.execute(
                "select tablename from pg_tables where schemaname = 'public' order by tablename")]
            snapshot = cls(fingerprint(conn), tables)
            for table in tables:
                data = bytearray()
                with conn.cursor().copy(f'COPY "{table}" TO STDOUT') as copy:
                    for chunk in copy:
                        data += chunk
                if data:
                    snapshot.rows[table] = bytes(data)
            for (name,) in conn.execute("select sequencename from pg_sequences where schemaname = 'public'"):
                row = conn.execute(f'select last_value, is_called from "{name}"').fetchone()
                assert row is not None  # a sequence's relation has exactly one row
                value, called = row
                snapshot.sequences[name] = (value, called)
        return snapshot

    def restore(self, conn: psycopg.Connection) -> None:
        """Make the database of ``conn`` (whose schema has this snapshot's fingerprint) hold what the template holds.
        Triggers and foreign keys are off while the rows go in (``session_replication_role``): the rows are the
        template's, already consistent, and copying them must not bump its data versions."""
        with conn.transaction():
            conn.execute("SET LOCAL lock_timeout = '10s'")  # a lock still held fails the reset, never hangs it
            conn.execute("SET LOCAL session_replication_role = replica")
            if self.tables:
                conn.execute("TRUNCATE " + ", ".join(f'"{table}"' for table in self.tables))
            for table, data in self.rows.items():
                with conn.cursor().copy(f'COPY "{table}" FROM STDIN') as copy:
                    copy.write(data)
            for name, (value, called) in self.sequences.items():
                conn.execute("select setval(%s, %s, %s)", (f'"{name}"', value, called))


class DatabasePool:
    """This process's databases on one server (``server_url``: its maintenance database), each handed to one test at
    a time as a copy of a template: a used one reset, else a new one made."""

    _numbers = itertools.count()

    def __init__(self, server_url: str):
        self.server_url = server_url
        self.free: list[str] = []
        self.snapshots: dict[str, Snapshot] = {}

    def url(self, name: str) -> str:
        return with_database(self.server_url, name)

    def snapshot(self, template: str) -> Snapshot:
        if template not in self.snapshots:
            self.snapshots[template] = Snapshot.of(self.url(template))
        return self.snapshots[template]

    def take(self, template: str) -> str:
        """The name of a database of this pool's own holding what ``template`` holds, no other connection open."""
        while self.free:
            name = self.free.pop()
            if self.reset(name, template):
                return name
        name = f"t_{os.getpid()}_{next(self._numbers)}"
        create_database(self.server_url, name, template=template)
        return name

    def reset(self, name: str, template: str) -> bool:
        """Make database ``name`` hold what ``template`` holds; False (and the database dropped) where its schema is
        no longer the template's."""
        snapshot = self.snapshot(template)
        with psycopg.connect(self.url(name), autocommit=True) as conn:
            conn.execute("select pg_terminate_backend(pid) from pg_stat_activity "
                         "where datname = current_database() and pid <> pg_backend_pid()")
            if fingerprint(conn) == snapshot.fingerprint:
                snapshot.restore(conn)
                return True
        drop_database(self.server_url, name)
        return False

    def refill(self, name: str, template: str) -> None:
        """Make database ``name`` (handed out by :meth:`take`) a copy of ``template``: reset, or dropped and made
        again where its schema changed."""
        if not self.reset(name, template):
            create_database(self.server_url, name, template=template)

    def give_back(self, name: str) -> None:
        """The test is done with database ``name``: the next :meth:`take` resets and hands it out again."""
        self.free.append(name)


def with_database(url: str, name: str) -> str:
    """``url`` with its database replaced by ``name``."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


_POOLS: dict[str, DatabasePool] = {}


def pool_for(server_url: str) -> DatabasePool:
    """This process's pool of databases on the server whose maintenance database is ``server_url``."""
    if server_url not in _POOLS:
        _POOLS[server_url] = DatabasePool(server_url)
    return _POOLS[server_url]
