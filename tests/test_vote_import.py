"""Importing votes (arena.vote_import, datamodel.imported_votes): the FastChat round trip with our own export, the
taxonomy paper's labelled battles, the generic CSV, idempotency, refusals that write nothing, and the leaderboard's
protocol, source and anonymous filters and JSON over imported votes."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arena.commands import main
from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from arena.vote_import import VoteImportError, import_votes
from core.protocols import PROTOCOLS
from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.dialect import is_postgres
from datamodel.migrate_db import migrate_database
from datamodel.vote_arrays import read_vote_arrays
from datamodel.vote_table import export_votes, votes_frame
from tools.scale_fixture import ScaleSpec, build_scale_database

pytestmark = pytest.mark.both_engines


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def arena_db(request, tmp_path_factory):
    """A small arena with human and judge votes, every outcome, excluded votes, and increasing vote times: the scale
    fixture's SQLite file, or its copy in PostgreSQL (python -m arena migrate-db)."""
    root = tmp_path_factory.mktemp("votes")
    build_scale_database(ScaleSpec(votes=600, annotators=12, models=5, prompts=15), root / "arena.db",
                         root / "media", progress=lambda *_: None)
    with connect(root / "arena.db").conn as conn:
        conn.execute("UPDATE votes SET voted_at = 1790000000 + id * 1.5")
    target = root / "arena.db"
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        target = server.create_database(f"votes_{os.getpid()}")
        migrate_database(root / "arena.db", target)
    db = connect(target)
    yield db, root
    db.close()
    if request.param == "postgresql":
        server.drop_database(f"votes_{os.getpid()}")


def counts(db) -> tuple[int, int, int]:
    return tuple(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("imported_votes", "vote_imports",
                                                                                 "models"))


def fastchat_file(path: Path, records: list[dict], lines: bool = False) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) if lines else json.dumps(records, indent=1))
    return path


def battle(i: int, a="sdxl", b="flux", winner="model_a", **extra) -> dict:
    return {"question_id": f"q{i}", "model_a": a, "model_b": b, "winner": winner, "judge": f"arena_user_{i % 3}",
            "anony": True, "tstamp": 1700000000 + i, "language": "English", **extra}


# --- FastChat -------------------------------------------------------------------------------------------------------

def test_fastchat_round_trip_gives_the_same_votes_and_the_same_boards(arena_db, tmp_path, request):
    db, _ = arena_db
    exported = export_votes(db, tmp_path / "battles.json", "fastchat")
    fresh = connect(request.getfixturevalue("postgres_server").create_database(f"fresh_{os.getpid()}")
                    if is_postgres(db) else tmp_path / "fresh.db")
    result = import_votes(fresh, tmp_path / "battles.json", "fastchat")
    assert result.added == result.votes == exported
    own = read_vote_arrays(db)
    own = own.take(~own.excluded)
    back = read_vote_arrays(fresh, source=None)
    name = lambda arrays, side: [arrays.models[i] for i in getattr(arrays, side)]  # noqa: E731
    assert name(back, "model_a") == name(own, "model_a") and name(back, "model_b") == name(own, "model_b")
    assert back.outcome.tolist() == own.outcome.tolist()
    assert back.human.tolist() == own.human.tolist() and back.judges == own.judges
    assert np.allclose(back.time, own.time)
    original = votes_frame(db, include_excluded=False)
    stored = pd.DataFrame(fresh.execute("SELECT suite, subset, variant, prompt, voter FROM imported_votes ORDER BY id")
                          .fetchall(), columns=["suite", "subset", "variant", "prompt", "voter"])
    for column in ("suite", "subset", "variant", "prompt", "voter"):
        assert stored[column].tolist() == original[column].tolist(), column
    for protocol in PROTOCOLS:
        options = LeaderboardOptions(protocol=protocol, rounds=20, min_votes=0)
        before, after = compute_leaderboard(db, options), compute_leaderboard(fresh, options)
        for kind in ("human", "judge"):
            pd.testing.assert_frame_equal(before.fits[kind], after.fits[kind], check_exact=False, atol=1e-9)
    assert compute_leaderboard(fresh, LeaderboardOptions(rounds=5)).agreement["n"] == compute_leaderboard(
        db, LeaderboardOptions(rounds=5)).agreement["n"]  # a judge vote on a human battle shares its battle key
    fresh.close()
    if is_postgres(db):
        request.getfixturevalue("postgres_server").drop_database(f"fresh_{os.getpid()}")


def test_a_second_import_adds_nothing_and_says_so(tmp_path, database_url):
    db = connect(database_url)
    log = fastchat_file(tmp_path / "log.json", [battle(i, winner=w) for i, w in
                                                 enumerate(["model_a", "model_b", "tie", "tie (bothbad)"] * 5)])
    first = import_votes(db, log, "fastchat")
    assert (first.added, first.votes) == (20, 20) and "were new to the arena" in first.summary()
    again = import_votes(db, log, "fastchat")
    assert again.added == 0
    assert "20 were already imported (this file was imported before, as import #1" in again.summary()
    # a later log that extends the first adds only its new battles; a repeated question_id counts by occurrence
    longer = fastchat_file(tmp_path / "longer.json", [battle(i) for i in range(22)] + [battle(3)])
    assert import_votes(db, longer, "fastchat").added == 3
    assert db.execute("SELECT original_id FROM imported_votes ORDER BY id DESC LIMIT 1").fetchone()[0] == "q3#2"
    assert counts(db)[0] == 23


@pytest.mark.parametrize("records,where,what", [
    ([battle(1), battle(2), {"model_a": "x", "model_b": "y", "tstamp": 3}], "record 3", "field 'winner' is null"),
    ([battle(1), battle(2, winner="left")], "record 2", "field 'winner' is \"left\""),
    ([battle(1), battle(2, tstamp="yesterday")], "record 2", "field 'tstamp' is 'yesterday'"),
    ([battle(1), battle(2, anony="maybe")], "record 2", "field 'anony' is 'maybe'"),
    ([battle(1), battle(2, model_b="")], "record 2", "field 'model_b' is missing or empty"),
])
def test_a_malformed_record_stops_the_import_naming_file_record_and_field(tmp_path, records, where, what, database_url):
    db = connect(database_url)
    before = counts(db)
    log = fastchat_file(tmp_path / "log.json", records)
    with pytest.raises(VoteImportError) as error:
        import_votes(db, log, "fastchat")
    message = str(error.value)
    assert str(log) in message and where in message and what in message and "Nothing was imported" in message
    assert counts(db) == before  # no vote, no import row, no model


def test_a_self_battle_is_kept_flagged_skipped_or_refused_as_asked(tmp_path, database_url):
    db = connect(database_url)
    log = fastchat_file(tmp_path / "log.json", [battle(1), battle(2, a="flux", b="flux"), battle(3)])
    with pytest.raises(VoteImportError) as error:
        import_votes(db, log, "fastchat", invalid="refuse")
    assert all(part in str(error.value) for part in (str(log), "record 2", "the same model", "'flux'",
                                                     "--invalid keep", "Nothing was imported"))
    assert counts(db) == (0, 0, 0)
    skipped = import_votes(db, log, "fastchat", invalid="skip", source="skipped")
    assert (skipped.votes, skipped.flagged) == (2, (("self_battle", 1),)) and "skipped: not imported" in \
        skipped.summary()
    kept = import_votes(db, log, "fastchat")  # FastChat's own pipeline keeps the record: the format's default
    assert (kept.votes, kept.added, kept.invalid) == (3, 3, "keep")
    assert "Flagged: 1 record(s) self_battle (model_a and model_b are the same model): kept, flagged" in kept.summary()
    assert db.execute("SELECT original_id, flag FROM imported_votes WHERE source = 'fastchat' ORDER BY id").fetchall() \
        == [("q1", ""), ("q2", "self_battle"), ("q3", "")]


def test_a_file_with_its_images_stores_them_with_the_votes_in_one_transaction(tmp_path, database_url):
    """GenAI-Bench's parquet file with its images (tests/support/peer_files.py): the prompts, images and votes are
    written together; importing it again adds nothing, not even an image."""
    from support.peer_files import GENAI_SCHEMA, PROMPTS, genai_bench_rows, write_parquet

    from datamodel.media import MediaStore

    db = connect(database_url)
    media = MediaStore(tmp_path / "media")
    path = write_parquet(tmp_path / "genai.parquet", genai_bench_rows(), GENAI_SCHEMA)
    first = import_votes(db, path, "genai-bench", media=media)
    assert (first.added, first.images, first.flagged) == (13, 26, (("self_battle", 1),))
    rows = db.execute("SELECT count(*), count(DISTINCT left_image_id), count(prompt_id) FROM imported_votes").fetchone()
    assert tuple(rows) == (13, 13, 13)
    assert db.execute("SELECT count(*) FROM prompts WHERE suite = 'genai-bench'").fetchone()[0] == len(PROMPTS)
    again = import_votes(db, path, "genai-bench", media=media)
    assert (again.added, db.execute("SELECT count(*) FROM images").fetchone()[0]) == (0, 26)


def test_broken_json_is_refused_with_its_line(tmp_path, database_url):
    db = connect(database_url)
    text = json.dumps([battle(1), battle(2)], indent=1)
    (tmp_path / "cut.json").write_text(text[:-30])
    with pytest.raises(VoteImportError, match=r"cut.json: record 2 \(line \d+\): not valid JSON"):
        import_votes(db, tmp_path / "cut.json", "fastchat")
    (tmp_path / "open.json").write_text(text[:-1])
    with pytest.raises(VoteImportError, match="record 2.*the JSON array is not closed"):
        import_votes(db, tmp_path / "open.json", "fastchat")
    assert counts(db)[0] == 0


def test_json_lines_and_a_json_array_read_alike_across_read_pieces(tmp_path, monkeypatch):
    import arena.vote_import as vote_import

    monkeypatch.setattr(vote_import, "READ_CHARS", 7)  # records split across many pieces
    records = [battle(i, winner=["model_a", "model_b"][i % 2], note="é, ] } {") for i in range(30)]
    read = lambda path: [(r.record_id, r.outcome) for r in vote_import.read_fastchat(path)]  # noqa: E731
    array = read(fastchat_file(tmp_path / "a.json", records))
    assert array == read(fastchat_file(tmp_path / "b.jsonl", records, lines=True))
    assert array == [(f"q{i}", "AB"[i % 2]) for i in range(30)]


def test_aliases_map_names_onto_the_arenas_models(tmp_path, database_url):
    db = connect(database_url)
    (tmp_path / "aliases.csv").write_text("alias,model\nstable-diffusion-xl,sdxl\n")
    (tmp_path / "aliases.json").write_text(json.dumps({"FLUX.1-dev": "flux"}))
    log = fastchat_file(tmp_path / "log.json", [battle(1, a="stable-diffusion-xl", b="flux"),
                                                 battle(2, a="sdxl", b="FLUX.1-dev")])
    import_votes(db, log, "fastchat", aliases=tmp_path / "aliases.csv", source="one")
    import_votes(db, log, "fastchat", aliases=tmp_path / "aliases.json", source="two")
    names = {name for name, in db.execute("SELECT name FROM models")}
    assert names == {"sdxl", "flux", "FLUX.1-dev", "stable-diffusion-xl"}
    pairs = db.execute("SELECT iv.source, ma.name, mb.name FROM imported_votes iv JOIN models ma ON ma.id = "
                       "iv.left_model_id JOIN models mb ON mb.id = iv.right_model_id ORDER BY iv.id").fetchall()
    assert pairs == [("one", "sdxl", "flux"), ("one", "sdxl", "FLUX.1-dev"), ("two", "stable-diffusion-xl", "flux"),
                     ("two", "sdxl", "flux")]


# --- the taxonomy paper's labelled battles --------------------------------------------------------------------------

TAXONOMY_HEADER = ["id", "subset", "wordnet_id", "core_synset", "model_a", "model_b", "result_human_def",
                   "result_human_nodef", "result_gpt_def", "result_gpt_nodef"]


def taxonomy_file(path: Path, rows: list[list]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(TAXONOMY_HEADER)
        writer.writerows(rows)
    return path


def test_taxonomy_labels_become_one_vote_per_labelled_column_joined_to_the_suites_prompts(tmp_path, database_url):
    db = connect(database_url)
    add_prompts(db, [PromptSpec("taxonomy", "coin.n.01", "An image of coin (a flat metal piece)", subset="Easy",
                                variant="with_definition")])
    path = taxonomy_file(tmp_path / "labels.csv", [
        [0, "appendix", "coin.n.01", "coin.n.01", "SDXL", "FLUX", "0", "", "1.0", "3"],
        [1, "leafs_and_no_leafs", "husky.n.01", "working_dog.n.01", "FLUX", "SD3", "", "", "", ""],
        [2, "predict_hypernym_llama", "cappuccino.n.01", "coffee.n.01", "SD3", "SDXL", "2", "2.0", "", ""],
    ])
    result = import_votes(db, path, "taxonomy")
    assert result.votes == result.added == 5
    rows = db.execute("SELECT original_id, battle_key, outcome, voter, voter_kind, suite, subset, variant, prompt_id "
                      "FROM imported_votes ORDER BY id").fetchall()
    coin = db.execute("SELECT id FROM prompts WHERE item_key = 'coin.n.01'").fetchone()[0]
    assert rows == [
        ("0:result_human_def", "0:with_definition", "A", "taxonomy-paper:human", "human", "taxonomy", "Easy",
         "with_definition", coin),
        ("0:result_gpt_def", "0:with_definition", "B", "taxonomy-paper:gpt-4", "judge", "taxonomy", "Easy",
         "with_definition", coin),
        ("0:result_gpt_nodef", "0:without_definition", "both_bad", "taxonomy-paper:gpt-4", "judge", "taxonomy",
         "Easy", "without_definition", None),
        ("2:result_human_def", "2:with_definition", "tie", "taxonomy-paper:human", "human", "taxonomy", "P-Hyper",
         "with_definition", None),
        ("2:result_human_nodef", "2:without_definition", "tie", "taxonomy-paper:human", "human", "taxonomy",
         "P-Hyper", "without_definition", None),
    ]
    board = compute_leaderboard(db, LeaderboardOptions(protocol="taxonomy-paper", suite="taxonomy", min_votes=0,
                                                       variant="with_definition"))
    assert board.votes == {"human": 2, "judge": 1} and board.judge == "taxonomy-paper:gpt-4"
    assert board.agreement["n"] == 1  # the human and the GPT label of battle 0 (with definition) are paired
    assert import_votes(db, path, "taxonomy").added == 0


@pytest.mark.parametrize("row,what", [
    ([0, "appendix", "coin.n.01", "coin.n.01", "A", "B", "5", "", "", ""], "column 'result_human_def' is '5'"),
    ([0, "hyper", "coin.n.01", "coin.n.01", "A", "B", "0", "", "", ""], "column 'subset' is 'hyper'"),
    ([0, "appendix", "", "coin.n.01", "A", "B", "0", "", "", ""], "column 'wordnet_id' is empty"),
])
def test_taxonomy_refusals_name_the_row_and_column(tmp_path, row, what, database_url):
    db = connect(database_url)
    good = [1, "appendix", "dime.n.01", "dime.n.01", "A", "B", "1", "", "", ""]
    path = taxonomy_file(tmp_path / "labels.csv", [good, row])
    with pytest.raises(VoteImportError, match=rf"labels.csv: row 2: {what}"):
        import_votes(db, path, "taxonomy")
    assert counts(db)[:2] == (0, 0)


# --- the generic CSV ------------------------------------------------------------------------------------------------

def test_csv_import_with_iso_times_voter_kinds_and_the_leaderboard_filters(tmp_path, capsys, monkeypatch, database_url):
    monkeypatch.setenv("ARENA_DATABASE_URL", str(database_url))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(tmp_path / "media"))
    monkeypatch.setenv("ARENA_DEMO", "false")
    rng = np.random.default_rng(0)
    with open(tmp_path / "study.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "model_a", "model_b", "outcome", "voter", "time", "voter_kind", "anonymous", "extra"])
        for i in range(120):
            a, b = rng.choice(["m1", "m2", "m3"], 2, replace=False)
            writer.writerow([f"v{i}", a, b, rng.choice(["A", "B", "tie", "both_bad"]), f"rater{i % 4}",
                             f"2024-06-{1 + i // 24:02d}T{i % 24:02d}:00:00Z", "judge" if i % 10 == 1 else "human",
                             "true" if i % 2 else "false", "x"])
    assert main(["import-votes", str(tmp_path / "study.csv"), "--format", "csv", "--source", "study",
                 "--quiet"]) == 0
    assert "Imported 120 of 120 votes" in capsys.readouterr().out
    assert main(["leaderboard", "--protocol", "fastchat-2024", "--json", "--source", "study",
                 "--anonymous-only"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["protocol"] == "fastchat-2024" and board["filters"]["source"] == "study"
    assert board["filters"]["anonymous_only"] is True
    assert board["votes"] == {"human": 48, "judge": 12}  # the odd rows: 60 anonymous votes, 12 of them by judges
    assert {"model", "rating", "lower", "upper", "votes", "printed"} <= set(board["models"][0])
    assert sum(m["votes"] for m in board["models"]) == 2 * 48
    assert main(["leaderboard", "--source", "nowhere"]) == 2
    assert "No votes from source 'nowhere'. Sources: arena, study" in capsys.readouterr().err
    db = connect(database_url)
    assert read_vote_arrays(db).outcome.size == 0 and len(votes_frame(db)) == 0  # never among the arena's own votes
    stored = db.execute("SELECT voted_at, record FROM imported_votes WHERE original_id = 'v0'").fetchone()
    assert stored == (pd.Timestamp("2024-06-01T00:00:00Z").timestamp(), '{"extra": "x"}')


def test_csv_refusals(tmp_path, database_url):
    db = connect(database_url)
    (tmp_path / "no_time.csv").write_text("model_a,model_b,outcome,voter\nm1,m2,A,r\n")
    with pytest.raises(VoteImportError, match="no_time.csv: header: column\\(s\\) time missing"):
        import_votes(db, tmp_path / "no_time.csv", "csv")
    (tmp_path / "bad.csv").write_text("model_a,model_b,outcome,voter,time\nm1,m2,A,r,1\nm1,m2,left,r,2\n")
    with pytest.raises(VoteImportError, match="bad.csv: row 2: column 'outcome' is 'left'"):
        import_votes(db, tmp_path / "bad.csv", "csv")
    with pytest.raises(VoteImportError, match="'arena' is this arena's own votes"):
        import_votes(db, tmp_path / "bad.csv", "csv", source="arena")
    assert counts(db) == (0, 0, 0)


def test_leaderboard_anchor_option_reaches_the_protocol_and_bad_ones_say_the_form():
    from arena.leaderboard.compute import rating_protocol

    pinned = rating_protocol(LeaderboardOptions(protocol="fastchat-2024", anchor="sd3=1200"))
    assert (pinned.anchor, pinned.anchor_required) == (("sd3", 1200.0), True)
    assert rating_protocol(LeaderboardOptions(protocol="fastchat-2024", anchor="none")).anchor is None
    assert rating_protocol(LeaderboardOptions(protocol="fastchat-2024")).anchor == ("mixtral-8x7b-instruct-v0.1", 1114)
    assert rating_protocol(LeaderboardOptions(anchor="m=900", rounds=7)).settings() == {
        "tie_policy": "drop", "rounds": 7, "seed": 0, "ridge": 1e-6, "anchor": ("m", 900.0), "intervals": "bootstrap"}
    with pytest.raises(ValueError, match="write MODEL=RATING"):
        rating_protocol(LeaderboardOptions(protocol="fastchat-2024", anchor="sd3"))
    with pytest.raises(ValueError, match="The online-elo protocol has no anchor"):
        rating_protocol(LeaderboardOptions(protocol="online-elo", anchor="sd3=1000"))


def test_imported_votes_never_reach_a_page_that_shows_images(tmp_path):
    """Imported votes have no images (issue 28): they rate models on the leaderboard but never become a battle, a
    vote of the arena's own (the review, the exports, the annotators' standing) or a model a battle can draw."""
    import random

    from support.arena import build_small_arena

    from arena import session as sessions

    arena = build_small_arena(tmp_path)
    db = arena.db
    own = sorted(arena.model_ids)
    before = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
              for table in ("votes", "battles", "images")}
    log = [battle(i, a=own[i % 2], b="peer-only-model", winner=["model_a", "model_b"][i % 2]) for i in range(30)]
    import_votes(db, fastchat_file(tmp_path / "log.json", log), "fastchat", source="peer")
    assert {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("votes", "battles", "images")} == before
    board = compute_leaderboard(db, LeaderboardOptions(rounds=5, source="peer"))
    assert "peer-only-model" in set(board.table["model"])  # rated from the imported votes alone
    session = sessions.start(db, "ann", "token-0001", open_signup=True)
    shown = set()
    for k in range(20):
        session = sessions.next_battle(db, random.Random(k), session)
        shown |= {session.battle.left.image_id, session.battle.right.image_id}
        session = sessions.vote(db, session, "A")
    names = {row[0] for row in db.execute(
        f"SELECT m.name FROM images i JOIN models m ON m.id = i.model_id WHERE i.id IN ({','.join(map(str, shown))})")}
    assert "peer-only-model" not in names and names <= set(own)
    assert export_votes(db, tmp_path / "votes.csv") == 20  # the arena's own votes only
