"""Datasette on the arena database (issue 19): the ``vote_details`` and ``model_summary`` views, full-text search on
prompts kept up to date by triggers, and ``datasette-metadata.json`` serving the views over HTTP while refusing the
secret tables (annotators' token hashes, battles' media tokens, judge requests), arbitrary SQL and the file itself."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import sqlite_utils

from datamodel.connection import connect
from datamodel.vote_table import votes_frame
from tools.load import free_port
from tools.scale_fixture import ScaleSpec, build_scale_database

ROOT = Path(__file__).resolve().parents[1]
METADATA = ROOT / "datasette-metadata.json"
SECRET = ("annotators", "annotator_sessions", "battles", "judge_requests", "leaderboard_snapshots",
          "votes",  # each names its annotator (vote_details numbers them)
          "admin_actions", "leaderboard_history")


@pytest.fixture(scope="module")
def arena_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasette")
    build_scale_database(ScaleSpec(votes=600, annotators=12, models=4, prompts=20), root / "arena.db",
                         root / "media", progress=lambda *_: None)
    db = connect(root / "arena.db")
    with db.conn:
        db.execute("UPDATE prompts SET text = 'a purple giraffe reading a newspaper' WHERE id = 3")
        db.execute("UPDATE annotators SET token_hash = 'SECRET-HASH-1' WHERE id = 1")
    yield db, root / "arena.db"
    db.close()


def test_vote_details_names_the_winner_and_loser_of_every_vote(arena_db):
    db, _ = arena_db
    frame = votes_frame(db).set_index("vote_id")
    rows = {row["vote_id"]: row for row in db.query("SELECT * FROM vote_details")}
    assert len(rows) == len(frame)
    for vote_id, vote in frame.iterrows():
        row = rows[vote_id]
        expected = {"A": (vote["model_a"], vote["model_b"]), "B": (vote["model_b"], vote["model_a"])}.get(
            vote["outcome"], (None, None))
        assert (row["winner"], row["loser"]) == expected
        assert (row["suite"], row["subset"], row["voter_kind"], row["prompt"]) == (
            vote["suite"], vote["subset"], vote["voter_kind"], vote["prompt"])
        assert row["served_at"] == vote["served_at"] and row["voted_at"] == vote["voted_at"]


def test_model_summary_counts_the_counted_votes_of_each_model(arena_db):
    db, _ = arena_db
    frame = votes_frame(db, include_excluded=False)
    summary = {row["model"]: row for row in db.query("SELECT * FROM model_summary")}
    for model, row in summary.items():
        a, b = frame[frame["model_a"] == model], frame[frame["model_b"] == model]
        wins = int((a["outcome"] == "A").sum() + (b["outcome"] == "B").sum())
        losses = int((a["outcome"] == "B").sum() + (b["outcome"] == "A").sum())
        ties = int((a["outcome"] == "tie").sum() + (b["outcome"] == "tie").sum())
        both_bad = int((a["outcome"] == "both_bad").sum() + (b["outcome"] == "both_bad").sum())
        assert (row["votes"], row["wins"], row["losses"], row["ties"], row["both_bad"]) == (
            len(a) + len(b), wins, losses, ties, both_bad)
        assert row["win_rate"] == pytest.approx((wins + 0.5 * (ties + both_bad)) / (len(a) + len(b)), abs=1e-4)
        assert row["human_votes"] + row["judge_votes"] == row["votes"]


def test_prompt_search_follows_inserts_updates_and_deletes(tmp_path):
    db = connect(tmp_path / "fts.db")
    table = sqlite_utils.Database(db.conn)["prompts"]  # the peer library, over the arena's own connection
    assert table.detect_fts() == "prompts_fts"  # sqlite-utils (and Datasette) recognise the index
    with db.conn:
        db.execute("INSERT INTO prompts (id, suite, item_key, text) VALUES (1, 's', 'k1', 'a red fox in snow')")
        db.execute("INSERT INTO prompts (id, suite, item_key, text) VALUES (2, 's', 'k2', 'a blue whale')")
    assert [row["id"] for row in table.search("fox")] == [1]
    with db.conn:
        db.execute("UPDATE prompts SET text = 'a grey wolf in snow' WHERE id = 1")
    assert list(table.search("fox")) == [] and [row["id"] for row in table.search("wolf")] == [1]
    with db.conn:
        db.execute("DELETE FROM prompts WHERE id = 2")
    assert list(table.search("whale")) == []
    assert db.execute("INSERT INTO prompts_fts(prompts_fts) VALUES ('integrity-check')") is not None


@pytest.mark.slow
def test_datasette_serves_the_views_and_search_and_hides_the_secret_tables(arena_db):
    pytest.importorskip("datasette")
    db, path = arena_db
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "datasette", "serve", str(path), "--metadata", str(METADATA),
                               "--host", "127.0.0.1", "--port", str(port), "--setting", "allow_download", "off"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/-/versions.json", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "Datasette did not start in 60 s"
            time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=20) as client:
            details = client.get("/arena/vote_details.json", params={"_shape": "array", "_size": "max"})
            assert details.status_code == 200
            assert len(details.json()) == db.execute("SELECT count(*) FROM votes").fetchone()[0]
            assert {"winner", "loser", "suite", "subset", "voter_kind", "voted_at"} <= set(details.json()[0])
            summary = client.get("/arena/model_summary.json", params={"_shape": "array"}).json()
            assert {row["model"] for row in summary} == {name for name, in db.execute("SELECT name FROM models")}
            found = client.get("/arena/prompts.json", params={"_search": "giraffe", "_shape": "array"}).json()
            assert [row["id"] for row in found] == [3]
            listed = {table["name"] for table in client.get("/arena.json").json()["tables"]}
            assert {"prompts", "models"} <= listed
            names = [name for name, in db.execute("SELECT name FROM annotators")]
            assert not [name for name in names if name in details.text]  # annotators are numbered, not named
            page = client.get("/arena").text
            for table in SECRET:
                assert client.get(f"/arena/{table}.json").status_code == 403, table
                assert client.get(f"/arena/{table}").status_code == 403, table
                assert table not in listed and f"/arena/{table}" not in page
            refused = client.get("/arena.json", params={"sql": "SELECT token_hash FROM annotators"})
            assert refused.status_code in (400, 403) and "SECRET-HASH-1" not in refused.text
            assert client.get("/arena.db").status_code in (403, 404)
            assert "SECRET-HASH-1" not in client.get("/arena/votes.json", params={"_shape": "array"}).text
    finally:
        server.terminate()
        server.wait(timeout=10)
