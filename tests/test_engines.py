"""SQLite and PostgreSQL hold the same arena: the same schema after the migrations, the same rows after
``python -m arena migrate-db``, and the state app replicas share lives in the database."""

from __future__ import annotations

import random

import pytest
from conftest import build_small_arena

from arena.commands import main
from datamodel.annotators import sign_in
from datamodel.connection import connect
from datamodel.migrate_db import MigrationError, migrate_database, table_checksum
from datamodel.schema import SCHEMA_VERSION, schema_version
from datamodel.votes import record_vote
from sampling.draws import serve_battle


def _sqlite_schema(db) -> dict[str, list[str]]:
    tables = [name for name, in db.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE 'prompts_fts%' ORDER BY name")]
    return {name: [row[1] for row in db.execute(f"PRAGMA table_info({name})")] for name in tables}


def _postgres_schema(db) -> dict[str, list[str]]:
    tables = [name for name, in db.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
        "AND table_name != 'arena_schema' ORDER BY table_name")]
    return {name: [column for column, in db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? "
        "AND column_name != 'rowid' ORDER BY ordinal_position", [name])] for name in tables}


def test_both_engines_have_the_same_tables_columns_and_views(postgres_server):
    """The PostgreSQL baseline plus the later migrations build what SQLite's migrations build (PostgreSQL's extra
    ``rowid`` of battles and rating_servings is SQLite's implicit one; the full-text index is SQLite's)."""
    sqlite, postgres = connect(":memory:"), connect(postgres_server.create_database("schema_check"))
    try:
        assert schema_version(sqlite) == schema_version(postgres) == SCHEMA_VERSION
        assert _postgres_schema(postgres) == _sqlite_schema(sqlite)
    finally:
        sqlite.close(), postgres.close()
        postgres_server.drop_database("schema_check")


def _voted_arena(root, votes: int = 30):
    arena = build_small_arena(root)
    db, rng = arena.db, random.Random(3)
    people = [sign_in(db, name, "token-0001", open_signup=True).id for name in ("ann", "ben", "cat")]
    for k in range(votes):
        battle = serve_battle(db, rng, session_id=f"s{k % 3}", annotator_id=people[k % 3])
        record_vote(db, battle.id, rng.choice(["A", "B", "tie", "both_bad"]), session_id=f"s{k % 3}",
                    now=1_700_000_000.0 + 7.25 * k)
    return arena


def test_migrate_db_copies_every_row_verifies_and_continues_the_ids(tmp_path, postgres_server):
    arena = _voted_arena(tmp_path)
    url = postgres_server.create_database("migrated")
    try:
        done = migrate_database(arena.settings.db_path, url)
        source, target = arena.db, connect(url)
        for table, rows in done.tables.items():
            assert source.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == rows
            assert target.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == rows
        assert done.tables["votes"] == 30 and done.tables["battles"] == 30 and done.tables["vote_changes"] == 30
        columns = [row[1] for row in source.execute("PRAGMA table_info(votes)")]
        assert table_checksum(target, "votes", columns) == table_checksum(source, "votes", columns) \
            == done.checksums["votes"]
        assert target.execute("SELECT name, version FROM data_versions ORDER BY name").fetchall() == \
            source.execute("SELECT name, version FROM data_versions ORDER BY name").fetchall()
        # the copy serves on: a new vote gets the next id, its battle the next rowid, and counts as one change
        ann = sign_in(target, "ann", "token-0001", open_signup=True)
        battle = serve_battle(target, random.Random(9), session_id="s0", annotator_id=ann.id)
        receipt = record_vote(target, battle.id, "A", session_id="s0")
        assert receipt.vote_id == 31
        assert target.execute("SELECT max(seq) FROM vote_changes").fetchone()[0] == 31
        target.close()
    finally:
        postgres_server.drop_database("migrated")


def test_migrate_db_refuses_a_target_with_an_arena_unless_told_and_rolls_back_a_failed_copy(tmp_path, postgres_server):
    first = _voted_arena(tmp_path / "first", votes=5)
    url = postgres_server.create_database("held")
    try:
        migrate_database(first.settings.db_path, url)
        second = _voted_arena(tmp_path / "second", votes=8)
        with pytest.raises(MigrationError, match="already holds an arena .*--replace"):
            migrate_database(second.settings.db_path, url)
        target = connect(url)
        assert target.execute("SELECT count(*) FROM votes").fetchone()[0] == 5  # untouched
        done = migrate_database(second.settings.db_path, url, replace=True)
        assert done.replaced and target.execute("SELECT count(*) FROM votes").fetchone()[0] == 8
        # a row the target's types refuse stops the copy, naming the table; the target keeps what it had
        with second.db.conn:
            second.db.execute("UPDATE votes SET seconds_to_vote = 'not a number' WHERE id = 4")
        with pytest.raises(MigrationError, match="Copying votes failed"):
            migrate_database(second.settings.db_path, url, replace=True)
        assert target.execute("SELECT count(*) FROM votes").fetchone()[0] == 8
        assert target.execute("SELECT count(*) FROM battles").fetchone()[0] == 8
        target.close()
    finally:
        postgres_server.drop_database("held")


def test_the_migrate_db_command_prints_the_verification(tmp_path, postgres_server, monkeypatch, capsys):
    arena = _voted_arena(tmp_path, votes=4)
    url = postgres_server.create_database("command")
    try:
        monkeypatch.setenv("ARENA_DB", str(arena.settings.db_path))
        assert main(["migrate-db", "--to", url]) == 0
        out = capsys.readouterr().out
        assert "votes: 4 rows" in out and "Verified: every table's row count equals the source's" in out
        assert "votes SHA-256" in out and f"ARENA_DATABASE_URL={url}" in out
        assert main(["migrate-db", "--to", url]) == 2
        assert "already holds an arena" in capsys.readouterr().err
        assert main(["migrate-db", "--to", str(tmp_path / "other.db")]) == 2
        assert "must be a PostgreSQL URL" in capsys.readouterr().err
    finally:
        postgres_server.drop_database("command")
