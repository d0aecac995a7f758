import json

import pytest

from arena.export import export_votes, votes_frame
from arena.importer import ImageImportError, import_images
from arena.media import MediaStore
from arena.store import connect
from conftest import make_image


def _layout(root, prompts_rows, images):
    (root / "prompts.jsonl").write_text("\n".join(json.dumps(r) for r in prompts_rows) + "\n")
    for model, key, fmt in images:
        (root / "imgs" / model).mkdir(parents=True, exist_ok=True)
        make_image(len(model) % 4, len(key) % 4).save(root / "imgs" / model / f"{key}.{fmt}")
    return root / "imgs", root / "prompts.jsonl"


def _counts(db):
    return {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("prompts", "models", "images")}


def test_import_images_and_reimport_changes_nothing(tmp_path):
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat", "subset": "animals"},
                                         {"key": "dog", "text": "A dog", "metadata": {"category": "pets"}}],
                              [("retrieval", "cat", "png"), ("retrieval", "dog", "jpg"), ("dalle3", "cat", "webp")])
    result = import_images(db, media, folder, prompts, suite="pets")
    assert (result.models, result.prompts, result.images, result.new_images) == (2, 2, 3, 3)
    assert _counts(db) == {"prompts": 2, "models": 2, "images": 3}
    again = import_images(db, media, folder, prompts, suite="pets")
    assert again.new_images == 0 and _counts(db) == {"prompts": 2, "models": 2, "images": 3}
    assert db.execute("SELECT media_ext FROM images ORDER BY media_ext").fetchall() == [("jpg",), ("png",), ("webp",)]


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda f: (f / "retrieval" / "horse.png").write_bytes(b"x"), "horse.png: no prompt with key 'horse'"),
        (lambda f: (f / "retrieval" / "notes.txt").write_text("hi"), "notes.txt: not an image file name"),
        (lambda f: (f / "retrieval" / "cat.png").write_bytes(b"garbage"), "cat.png: not a readable image"),
        (lambda f: (f / "stray.png").write_bytes(b"x"), "stray.png: expected only model folders"),
    ],
)
def test_bad_files_are_named_and_nothing_is_imported(tmp_path, setup, message):
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat"}, {"key": "dog", "text": "A dog"}],
                              [("retrieval", "dog", "png"), ("other", "cat", "png")])
    setup(folder)
    with pytest.raises(ImageImportError, match=message):
        import_images(db, media, folder, prompts)
    assert _counts(db) == {"prompts": 0, "models": 0, "images": 0}


def test_bad_prompts_file_names_the_line(tmp_path):
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat"}, {"key": "cat", "text": "again"}],
                              [("m", "cat", "png")])
    with pytest.raises(ImageImportError, match="prompts.jsonl:2: duplicate key 'cat'"):
        import_images(db, media, folder, prompts)
    (tmp_path / "p.csv").write_text("key,text\ncat,\n")
    with pytest.raises(ImageImportError, match="p.csv:2: empty or missing 'text'"):
        import_images(db, media, folder, tmp_path / "p.csv")


def test_export_formats_hold_one_row_per_vote(small_arena, tmp_path):
    import random

    import pandas as pd

    from arena import session as sessions

    db = small_arena.db
    s = sessions.start(db, "alice", "token-1", open_signup=True)
    for outcome in ("A", "B", "tie", "both_bad"):
        s = sessions.vote(db, sessions.next_battle(db, random.Random(len(outcome)), s), outcome)
    frame = votes_frame(db)
    assert list(frame["outcome"]) == ["A", "B", "tie", "both_bad"]
    for _, row in frame.iterrows():
        expected = {"A": row.model_a, "B": row.model_b}.get(row.outcome, row.outcome)
        assert row.winner == expected
    for fmt in ("csv", "jsonl", "parquet"):
        path = tmp_path / f"votes.{fmt}"
        assert export_votes(db, path) == 4
    assert len(pd.read_csv(tmp_path / "votes.csv")) == 4
    assert len(pd.read_parquet(tmp_path / "votes.parquet")) == 4
    lines = (tmp_path / "votes.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["model_a"] == frame.model_a[0] and len(lines) == 4
    with pytest.raises(ValueError, match="choose a .csv, .jsonl or .parquet"):
        export_votes(db, tmp_path / "votes.xlsx")
