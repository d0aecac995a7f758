"""The reused PostgreSQL test databases (support/databases.py): a database handed to the next test holds exactly what
a fresh copy of its template holds, and one whose schema a test changed is made anew."""

import psycopg
import pytest
from support.databases import DatabasePool, Snapshot, fingerprint

from datamodel.catalog import add_model
from datamodel.connection import connect


def _contents(url: str) -> tuple:
    """Every table's rows (sorted) and every sequence's state: what a test could tell apart."""
    with psycopg.connect(url) as conn:
        tables = [name for (name,) in conn.execute(
            "select tablename from pg_tables where schemaname = 'public' order by tablename")]
        rows = {table: sorted(map(repr, conn.execute(f'select * from "{table}"').fetchall())) for table in tables}
        sequences = {name: conn.execute(f'select last_value, is_called from "{name}"').fetchone()
                     for (name,) in conn.execute("select sequencename from pg_sequences where schemaname = 'public'")}
    return rows, sequences


def test_a_used_database_comes_back_as_a_fresh_copy_of_the_template(postgres_server):
    pool = DatabasePool(postgres_server.url())
    fresh = postgres_server.create_database("fresh_copy", template="arena_template")
    name = pool.take("arena_template")
    db = connect(pool.url(name))
    add_model(db, "alpha-model")  # rows, a sequence moved on and a data version bumped by a trigger
    left_open = psycopg.connect(pool.url(name))  # a connection the test forgot, in a transaction holding a lock
    left_open.execute("select count(*) from models")
    assert _contents(pool.url(name)) != _contents(fresh)
    pool.give_back(name)

    assert pool.take("arena_template") == name  # reused, not made anew
    assert _contents(pool.url(name)) == _contents(fresh)
    with pytest.raises(psycopg.OperationalError):  # ended by the reset, which did not wait for it
        left_open.execute("select 1")
    db.close()


def test_a_database_whose_schema_changed_is_made_anew(postgres_server):
    pool = DatabasePool(postgres_server.url())
    name = pool.take("arena_template")
    with psycopg.connect(pool.url(name), autocommit=True) as conn:
        conn.execute("ALTER TABLE models ADD COLUMN extra text")
        changed = fingerprint(conn)
    assert changed != Snapshot.of(postgres_server.url("arena_template")).fingerprint
    pool.give_back(name)

    again = pool.take("arena_template")
    with psycopg.connect(pool.url(again)) as conn:
        assert fingerprint(conn) == pool.snapshot("arena_template").fingerprint
