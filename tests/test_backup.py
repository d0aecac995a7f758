"""``python -m arena backup DEST`` (issue 19): a consistent online copy taken while the app serves votes under the load
harness; the copy passes ``integrity_check`` and holds every vote acknowledged before the backup started."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from support.arena import build_small_arena
from support.load_progress import receipts_so_far, wait_for_votes

from arena.commands import main
from datamodel.backup import BackupError, backup_database
from tools.load import free_port, integrity, run_load, start_server, stop_server


def _server_env(arena):
    return {"ARENA_DB": str(arena.settings.db_path), "ARENA_MEDIA_DIR": str(arena.settings.media_dir),
            "ARENA_CACHE_DIR": str(arena.settings.cache_dir), "ARENA_DEMO": "false", "ARENA_RATE_LIMIT_CLIENT": "0",
            "ARENA_RATE_LIMIT_ANNOTATOR": "0", "ARENA_LEADERBOARD_REFRESH_S": "0"}


async def _load_with_backup(url, dest, votes_first):
    """Run the load; once ``votes_first`` votes are acknowledged, run the CLI backup in a thread while the annotators
    keep voting. Returns the report, the receipts acknowledged before the backup started and when it ended, and the
    command's exit code.

    The load stops after ``votes_first + 160`` votes (12 s at most): the copy of a small arena takes a fraction of a
    second, so about a hundred votes still come after it, which is all the test looks at; an unbounded run went on
    voting for the whole 12 s (about 1,100 votes on this machine) after the checks had what they need."""
    load = asyncio.create_task(run_load(url, annotators=6, duration=12.0, max_votes=votes_first + 160,
                                        think=(0.0, 0.05), seed=3))
    before = await wait_for_votes(load, votes_first)
    code = await asyncio.get_running_loop().run_in_executor(None, main, ["backup", str(dest)])
    during = list(receipts_so_far(load))
    return await load, before, during, code


@pytest.mark.slow
def test_a_backup_under_load_is_consistent_and_holds_every_acknowledged_vote(tmp_path, monkeypatch, capsys):
    arena = build_small_arena(tmp_path)
    arena.db.close()
    env, port = _server_env(arena), free_port()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    server = start_server(env, port, tmp_path / "server.log")
    dest = tmp_path / "backups" / "copy.db"
    try:
        report, before, during, code = asyncio.run(_load_with_backup(f"http://127.0.0.1:{port}/", dest, 40))
    finally:
        stop_server(server)
    assert code == 0 and "Backed up" in capsys.readouterr().out
    assert len(before) >= 40, report.summary()
    assert len(report.vote_ids) > len(during), "votes should keep coming while and after the copy is taken"
    assert integrity(dest) == "ok"
    with sqlite3.connect(dest) as conn:
        copied = {vote_id for vote_id, in conn.execute("SELECT id FROM votes")}
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert [vote_id for vote_id in before if vote_id not in copied] == []
    with sqlite3.connect(arena.settings.db_path) as conn:
        assert len(copied) < conn.execute("SELECT count(*) FROM votes").fetchone()[0]  # a snapshot, not the end


def test_a_backup_refuses_to_overwrite_unless_asked_and_never_leaves_a_partial_file(tmp_path):
    arena = build_small_arena(tmp_path)
    source = arena.settings.db_path
    dest = tmp_path / "copy.db"
    assert backup_database(source, dest).integrity == "ok"
    with pytest.raises(BackupError, match="Use --overwrite"):
        backup_database(source, dest)
    conn = sqlite3.connect(dest)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one self-contained file
    conn.execute("CREATE TABLE stale (x)")
    conn.close()
    copied = backup_database(source, dest, overwrite=True)
    conn = sqlite3.connect(dest)
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'stale'").fetchone()[0] == 0
    conn.close()
    assert copied.votes == arena.db.execute("SELECT count(*) FROM votes").fetchone()[0]
    with pytest.raises(BackupError, match="is the database itself"):
        backup_database(source, source, overwrite=True)
    with pytest.raises(BackupError, match="No database at"):
        backup_database(tmp_path / "missing.db", tmp_path / "other.db")
    assert sorted(p.name for p in tmp_path.glob(".copy.db.partial*")) == []
    arena.db.close()
