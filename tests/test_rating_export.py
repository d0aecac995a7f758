"""The human ratings out of the arena (issue 27): CSV, JSONL, Parquet and a Hugging Face dataset with the images,
the ``rating_details`` view for Datasette, and ``python -m arena ratings status|assign|stats|export``."""

import csv
import json
import random

import pandas as pd
import pyarrow.parquet as pq
import pytest
from support.ratings import build_rating_arena

from arena import rating_session as raters
from arena.commands import main
from datamodel.human_ratings import set_assignment
from datamodel.rating_table import COLUMNS, export_ratings
from datamodel.vote_table import csv_cell_text


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    """Two raters through every open task (a prompt text with a formula-like start included)."""
    root = tmp_path_factory.mktemp("rated")
    arena = build_rating_arena(root)
    db = arena.db
    db.execute("UPDATE prompts SET text = '=HYPERLINK(1)' WHERE suite = 'saneval' AND item_key = 'color-1'")
    pool = raters.RatingPool()
    answers = {"commonsense_fit": {"fit": 1}, "semvar_alignment": {"object_accuracy": 30, "relevance": 20},
               "saneval_adherence": {"likert": 2}}
    for task in answers:
        set_assignment(db, task, raters_per_item=2)
    for name in ("ann", "ben"):
        session = raters.next_question(db, random.Random(name), raters.start(db, name, "token-0001", open_signup=True),
                                       pool=pool)
        for k in range(40):
            if session.current is None:
                break
            session = raters.answer(db, session, answers[session.current.task], pool=pool,
                                    rng=random.Random(k), rules=None, now=1000.0 + 60 * k)
    db.execute("UPDATE ratings SET excluded = 1, excluded_reason = 'a test' WHERE id = 3")
    yield arena
    db.close()


def count(db, where="1") -> int:
    return db.execute(f"SELECT COUNT(*) FROM ratings WHERE {where}").fetchone()[0]


def test_csv_jsonl_and_parquet_hold_every_rating_column_for_column(rated, tmp_path):
    db = rated.db
    total = count(db)
    assert total == 80
    for fmt in ("csv", "jsonl", "parquet"):
        assert export_ratings(db, tmp_path / f"r.{fmt}") == total
    parquet = pq.read_table(tmp_path / "r.parquet").to_pandas()
    assert list(parquet.columns) == COLUMNS and len(parquet) == total
    assert parquet["excluded"].sum() == 1
    assert parquet.loc[parquet["rating_id"] == 3, "excluded_reason"].item() == "a test"
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [line["rating_id"] for line in lines] == parquet["rating_id"].tolist()
    assert isinstance(lines[0]["answer"], dict) and lines[0]["excluded"] in (True, False)
    stored = dict(db.execute("SELECT id, answer FROM ratings").fetchall())
    assert all(json.loads(stored[line["rating_id"]]) == line["answer"] for line in lines)
    with open(tmp_path / "r.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == COLUMNS and len(rows) == total
    formula = [row for row in rows if csv_cell_text(row["prompt"]) == "=HYPERLINK(1)"]
    assert formula and all(row["prompt"] == "'=HYPERLINK(1)" for row in formula)  # escaped for spreadsheets
    check = pd.read_csv(tmp_path / "r.csv")
    assert check["value"].tolist() == pytest.approx(parquet["value"].tolist())
    with pytest.raises(ValueError, match="FastChat's battle format holds no ratings"):
        export_ratings(db, tmp_path / "r.json", "fastchat")


def test_the_hf_folder_loads_with_datasets_and_leaves_out_excluded_ratings(rated, tmp_path):
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "hf"
    rows = export_ratings(rated.db, folder, "hf", media=rated.media)
    assert rows == count(rated.db, "NOT excluded") == 79
    assert "| `answer` | string |" in (folder / "README.md").read_text()
    loaded = datasets.load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == 79 and isinstance(loaded.features["image"], datasets.Image)
    first = loaded[0]
    image_id = rated.db.execute("SELECT image_id FROM ratings WHERE id = ?", [first["rating_id"]]).fetchone()[0]
    media_hash, ext = rated.db.execute("SELECT media_hash, media_ext FROM images WHERE id = ?", [image_id]).fetchone()
    raw = loaded.cast_column("image", datasets.Image(decode=False))[0]["image"]
    assert raw["bytes"] == rated.media.path(media_hash, ext).read_bytes()  # the original, never re-encoded
    with pytest.raises(ValueError, match="holds the images"):
        export_ratings(rated.db, tmp_path / "hf2", "hf")
    names = dict(rated.db.execute("SELECT id, name FROM annotators"))
    assert set(loaded["rater"]) == {f"annotator {i}" for i in names} and not set(loaded["rater"]) & set(names.values())


def test_the_hf_folder_withholds_the_rated_images_from_battles_and_questions(tmp_path):
    """The hf folder holds each rated image with its model's name, as the votes' does: anyone holding it could render
    an image as the arena does and name its model in a battle or a rating question before the answer (the third
    security review's finding 3). Its images are recorded as published and withheld, unless kept on purpose."""
    arena = build_rating_arena(tmp_path)
    db = arena.db
    set_assignment(db, "saneval_adherence")
    session = raters.next_question(db, random.Random(1), raters.start(db, "ann", "token-0001", open_signup=True),
                                   pool=raters.RatingPool())
    raters.answer(db, session, {"likert": 3}, pool=raters.RatingPool(), rng=random.Random(2), rules=None)
    (image_id,) = db.execute("SELECT image_id FROM ratings").fetchone()
    export_ratings(db, tmp_path / "kept", "hf", media=arena.media, keep_in_battles=True)
    assert db.execute("SELECT published_at IS NOT NULL, withheld FROM images WHERE id = ?", [image_id]).fetchone() \
        == (1, None)
    export_ratings(db, tmp_path / "hf", "hf", media=arena.media)
    assert db.execute("SELECT withheld FROM images WHERE id = ?", [image_id]).fetchone()[0] == "published"
    assert db.execute("SELECT COUNT(*) FROM images WHERE withheld IS NOT NULL").fetchone()[0] == 1
    assert image_id not in {row[0] for row in db.execute("SELECT id FROM battle_images")}
    with pytest.raises(ValueError, match="only with the hf format"):
        export_ratings(db, tmp_path / "r.csv", keep_in_battles=True)


def test_the_rating_details_view_names_rater_task_and_model(rated):
    rows = list(rated.db.query("SELECT * FROM rating_details ORDER BY rating_id"))
    assert len(rows) == count(rated.db)
    names = dict(rated.db.execute("SELECT r.id, m.name FROM ratings r JOIN models m ON m.id = r.model_id"))
    assert all(row["model"] == names[row["rating_id"]] for row in rows)
    numbers = dict(rated.db.execute("SELECT name, id FROM annotators"))
    assert {row["rater"] for row in rows} == {f"annotator {numbers['ann']}", f"annotator {numbers['ben']}"}
    assert {row["task"] for row in rows} == {"commonsense_fit", "semvar_alignment", "saneval_adherence"}


def test_the_ratings_commands(rated, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARENA_DB", str(rated.settings.db_path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(rated.settings.media_dir))
    assert main(["ratings", "status"]) == 0
    status = capsys.readouterr().out
    assert "commonsense_fit" in status and "semvar_alignment" in status and "saneval_adherence" in status
    assert main(["ratings", "assign", "semvar_alignment", "--model", "alpha-model"]) == 0
    assert "3 rater(s) per item (the paper: 3), images of alpha-model" in capsys.readouterr().out
    assert main(["ratings", "assign", "semvar_alignment", "--close"]) == 0
    assert "closed" in capsys.readouterr().out
    assert main(["ratings", "assign", "nonsense"]) == 2
    assert "unknown rating task 'nonsense'; choices: commonsense_fit" in capsys.readouterr().err
    assert main(["ratings", "assign", "commonsense_fit", "--raters", "0"]) == 2
    assert "from 1 to 10" in capsys.readouterr().err
    assert main(["ratings", "stats"]) == 0
    stats = capsys.readouterr().out
    assert "Krippendorff's alpha (nominal)" in stats and "Table 2, Human column" in stats
    assert "Table 11" in stats and "Table 4" in stats
    assert main(["ratings", "export", str(tmp_path / "out.parquet")]) == 0
    assert f"Wrote {count(rated.db)} ratings" in capsys.readouterr().out
    assert main(["ratings", "export", str(tmp_path / "out.txt")]) == 2
    assert "choose a .csv, .jsonl or .parquet file" in capsys.readouterr().err
