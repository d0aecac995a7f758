"""Peers' published human preferences with their images: GenAI-Bench's image-generation votes and Pick-a-Pic v2,
each written here in its dataset's parquet schema (tiny images), imported through ``python -m arena import-votes``,
shown and judged like the arena's own battles, and ``judges compare`` scoring judges against those human votes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pyarrow as pa
import pytest
from support.arena import empty_arena_env
from support.openai_stub import engine_config, hash_models
from support.peer_files import GENAI_SCHEMA, PROMPTS, RANK, genai_bench_rows, png, write_parquet

from arena.commands import main as arena
from datamodel.connection import connect
from datamodel.media import MediaStore
from judges.compare import CompareOptions, compare_judges
from judges.pairwise import run_pairwise
from judges.selection import Selection
from tools.fake_openai import FakeServer, Scripted


@pytest.fixture
def env(tmp_path, monkeypatch):
    return empty_arena_env(monkeypatch, tmp_path)


def run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert arena(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def better_judge(db):
    """A judge that picks the better-ranked model's image, or says tie for two images of one model."""
    models = hash_models(db)

    def respond(received) -> Scripted:
        first, second = (RANK[models[h]] for h in received.image_hashes())
        label = "C" if first == second else "A" if first < second else "B"
        return Scripted(f"The verdict: [[{label}]]")

    return respond


def test_genai_bench_votes_and_images_import_and_judges_are_scored_against_them(env, capsys):
    path = write_parquet(env / "genai_bench.parquet", genai_bench_rows(), GENAI_SCHEMA)
    out = run(capsys, "import-votes", str(path), "--format", "genai-bench", "--quiet")
    assert "Imported 13 of 13 votes (13 records)" in out
    assert "Flagged: 1 record(s) self_battle (model_a and model_b are the same model): kept, flagged" in out
    assert "26 images imported with their prompts, rendered for battles" in out
    db = connect(env / "arena.db")
    assert db.execute("SELECT count(*) FROM prompts WHERE suite = 'genai-bench'").fetchone()[0] == len(PROMPTS)
    assert db.execute("SELECT count(*) FROM imported_votes WHERE left_image_id IS NULL OR right_image_id IS NULL "
                      "OR prompt_id IS NULL").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM battle_images").fetchone()[0] == 26  # rendered: battles may show them
    # two images of one model for one prompt: generation indices 0 and 1 beside the other battle's image
    assert sorted(i for i, in db.execute("SELECT i.idx FROM images i JOIN models m ON m.id = i.model_id "
                                         "JOIN prompts p ON p.id = i.prompt_id WHERE m.name = 'bravo-turbo' "
                                         "AND p.text = ?", [PROMPTS[0]])) == [0, 1, 2]
    assert import_again(env, capsys, path) == 0  # idempotent: nothing twice, no image twice
    assert db.execute("SELECT count(*) FROM images").fetchone()[0] == 26

    media = MediaStore(env / "media")
    with FakeServer(better_judge(db)) as server:
        summary = asyncio.run(run_pairwise(db, media, engine_config(server), Selection(), source="human",
                                           single_order=True, name="oracle", progress=False,
                                           handle_signals=False, env={}))
    assert (summary.units, summary.done, summary.failed) == (13, 13, 0)  # every imported battle was judged
    table = compare_judges(db, CompareOptions(min_shared=5, rounds=20, ensembles=False))
    row = table[(table["scope"] == "all") & table["judge"].str.startswith("oracle")].iloc[0]
    # 12 clean battles (the self-battle is flagged, left out): 9 decisive, all right; the two ties and the both-bad
    # are judged decisive, so GenAI-Bench's accuracy with ties counts those three wrong
    assert (row["shared_battles"], row["accuracy"], row["accuracy_ties"]) == (12, 1.0, 9 / 12)
    scoped = table[(table["scope"] == "genai-bench") & table["judge"].str.startswith("oracle")]
    assert len(scoped) == 1 and scoped.iloc[0]["shared_battles"] == 12


def import_again(env, capsys, path) -> int:
    out = run(capsys, "import-votes", str(path), "--format", "genai-bench", "--quiet")
    return int(out.split("Imported ")[1].split(" of")[0])


PICK_SCHEMA = pa.schema([("caption", pa.string()), ("jpg_0", pa.binary()), ("jpg_1", pa.binary()),
                         ("model_0", pa.string()), ("model_1", pa.string()), ("label_0", pa.float64()),
                         ("label_1", pa.float64()), ("user_id", pa.int64()), ("created_at", pa.timestamp("ns")),
                         ("ranking_id", pa.int64()), ("has_label", pa.bool_()), ("are_different", pa.bool_())])


def pick_rows() -> list[dict]:
    base = datetime(2023, 4, 1, tzinfo=UTC).replace(tzinfo=None)

    def row(k, caption, m0, m1, labels, has_label=True, different=True, v0=0, v1=0):
        return {"caption": caption, "jpg_0": png(m0, caption, v0), "jpg_1": png(m1, caption, v1), "model_0": m0,
                "model_1": m1, "label_0": labels[0], "label_1": labels[1], "user_id": 100 + k % 3,
                "created_at": base.replace(minute=k), "ranking_id": 5000 + k, "has_label": has_label,
                "are_different": different}

    return [row(0, PROMPTS[0], "alpha-xl", "delta-mini", (1.0, 0.0)),
            row(1, PROMPTS[1], "charlie-1.5", "bravo-turbo", (0.0, 1.0)),
            row(2, PROMPTS[2], "alpha-xl", "bravo-turbo", (0.5, 0.5)),
            row(3, PROMPTS[3], "delta-mini", "delta-mini", (1.0, 0.0), v1=1),  # two images of one model
            row(4, PROMPTS[4], "alpha-xl", "charlie-1.5", (1.0, 0.0), different=False),
            row(5, PROMPTS[5], "bravo-turbo", "delta-mini", (0.5, 0.5), has_label=False)]


def test_pick_a_pic_votes_flag_what_pickscore_keeps_and_stream_without_images(env, capsys):
    path = write_parquet(env / "pickapic.parquet", pick_rows(), PICK_SCHEMA)
    out = run(capsys, "import-votes", str(path), "--format", "pick-a-pic", "--no-images", "--quiet")
    assert "Imported 6 of 6 votes (6 records)" in out and "images imported" not in out
    for reason in ("self_battle", "identical_images", "no_label"):
        assert f"1 record(s) {reason} (" in out
    db = connect(env / "arena.db")
    assert db.execute("SELECT count(*) FROM images").fetchone()[0] == 0
    rows = db.execute("SELECT original_id, outcome, voter, voted_at, flag FROM imported_votes ORDER BY id").fetchall()
    assert [r[:2] for r in rows] == [("5000", "A"), ("5001", "B"), ("5002", "tie"), ("5003", "A"), ("5004", "A"),
                                     ("5005", "tie")]
    assert rows[0][2] == "pick-a-pic user 100" and rows[1][3] - rows[0][3] == pytest.approx(60)
    assert [r[4] for r in rows] == ["", "", "", "self_battle", "identical_images", "no_label"]
    # skipping the anomalies leaves the three clean votes, with their images
    out = run(capsys, "import-votes", str(path), "--format", "pick-a-pic", "--invalid", "skip", "--source", "clean",
              "--quiet")
    assert "Imported 3 of 3 votes (6 records)" in out and "6 images imported" in out


@pytest.mark.parametrize("change,message", [
    (lambda rows: [{k: v for k, v in r.items() if k != "vote_type"} for r in rows],
     "header: column(s) vote_type missing"),
    (lambda rows: rows[:3] + [{**rows[3], "vote_type": "leftvote!"}] + rows[4:], "record 4: column 'vote_type'"),
    (lambda rows: rows[:2] + [{**rows[2], "right_image": {"bytes": b"not an image", "path": None}}] + rows[3:],
     "record 3 (image B)"),
])
def test_a_bad_record_stops_the_import_naming_it_and_writes_nothing(env, capsys, change, message):
    rows = change(genai_bench_rows())
    schema = GENAI_SCHEMA if "vote_type" in rows[0] else None
    path = write_parquet(env / "bad.parquet", rows, schema)
    assert arena(["import-votes", str(path), "--format", "genai-bench", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert str(path) in error and message in error and "Nothing was imported" in error
    db = connect(env / "arena.db")
    for table in ("imported_votes", "images", "prompts", "models"):
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    assert not [p for p in (env / "media").rglob("*") if p.is_file()]  # no media file left behind


def test_removing_an_import_with_images_removes_its_images_and_models(env, capsys):
    """Before: ``import-votes --remove`` left the images an import brought, so the models it created stayed (their
    images still named them) and battles could still draw them."""
    path = write_parquet(env / "genai_bench.parquet", genai_bench_rows(), GENAI_SCHEMA)
    run(capsys, "import-votes", str(path), "--format", "genai-bench", "--quiet")
    db = connect(env / "arena.db")
    created = {name for name, in db.execute("SELECT name FROM models WHERE source = 'imported'")}
    import_id = db.execute("SELECT max(id) FROM vote_imports").fetchone()[0]
    assert created and db.execute("SELECT count(*) FROM images").fetchone()[0] == 26
    out = run(capsys, "import-votes", "--remove", str(import_id))
    assert "26 images" in out and all(name in out for name in created)
    assert db.execute("SELECT count(*) FROM images").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM battle_images").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM models WHERE source = 'imported'").fetchone()[0] == 0


def test_removing_an_import_keeps_an_image_something_else_names(env, capsys):
    """An imported image a battle of the arena showed stays (with its model) when the import goes."""
    path = write_parquet(env / "genai_bench.parquet", genai_bench_rows(), GENAI_SCHEMA)
    run(capsys, "import-votes", str(path), "--format", "genai-bench", "--quiet")
    db = connect(env / "arena.db")
    left, right = db.execute("SELECT left_image_id, right_image_id FROM imported_votes WHERE "
                             "left_image_id != right_image_id LIMIT 1").fetchone()
    prompt = db.execute("SELECT prompt_id FROM images WHERE id = ?", [left]).fetchone()[0]
    with db.conn:
        db.execute("INSERT INTO battles (id, prompt_id, left_image_id, right_image_id, served_to_kind, session_id, "
                   "media_token, served_at) VALUES ('b1', ?, ?, ?, 'human', 's1', 't1', 0)", [prompt, left, right])
    import_id = db.execute("SELECT max(id) FROM vote_imports").fetchone()[0]
    run(capsys, "import-votes", "--remove", str(import_id))
    kept = {image for image, in db.execute("SELECT id FROM images")}
    assert kept == {left, right}
    # their models stay (an image names them); every other model the import created went
    assert {name for name, in db.execute("SELECT name FROM models WHERE source = 'imported'")} == {
        name for name, in db.execute("SELECT m.name FROM models m JOIN images i ON i.model_id = m.id")}


def test_the_removal_knows_every_column_that_names_an_image_or_a_model(tmp_path):
    """A table added later with an image or model column must join the lists, or removing an import could delete
    an image or model it names."""
    from datamodel.imported_votes import IMAGE_COLUMNS, MODEL_COLUMNS

    db = connect(tmp_path / "arena.db")
    tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    columns = {(table, row[1]) for table in tables for row in db.execute(f'PRAGMA table_info("{table}")')}
    assert {c for c in columns if c[1].endswith("image_id")} == set(IMAGE_COLUMNS)
    named = {c for c in columns if c[1].endswith("model_id")}
    assert named == set(MODEL_COLUMNS), named ^ set(MODEL_COLUMNS)
