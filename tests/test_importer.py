import json

import pytest
from support.arena import make_image

from arena.importer import ImageImportError, import_images
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.vote_table import export_votes, votes_frame


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
    s = sessions.start(db, "alice", "token-001", open_signup=True)
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


# --- anonymity: metadata that names the model never reaches the media folder ----------------------------------------


def _png_with_parameters(path, model_name):
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", f"a cat on a sofa\nSteps: 20, Sampler: Euler a, Model: {model_name}")
    info.add_itxt("Software", model_name)
    make_image(1, 1).save(path, pnginfo=info)


def _jpeg_with_exif_software(path, model_name):
    from PIL import Image

    exif = Image.Exif()
    exif[0x0131] = model_name  # Software
    make_image(2, 2).save(path, quality=95, exif=exif.tobytes(), comment=model_name.encode())


def _media_bytes(media_root):
    return b"".join(path.read_bytes() for path in sorted(media_root.rglob("*.*")))


def test_imported_images_lose_the_metadata_that_names_the_model(tmp_path):
    from PIL import Image

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat"}, {"key": "dog", "text": "A dog"}],
                              [("plain", "cat", "png")])
    (folder / "secret").mkdir()
    _png_with_parameters(folder / "secret" / "cat.png", "SecretDiffusion-XL-v2")
    _jpeg_with_exif_software(folder / "secret" / "dog.jpg", "HiddenModel-Turbo")
    assert b"SecretDiffusion" in (folder / "secret" / "cat.png").read_bytes()  # the files do name the models
    assert b"HiddenModel" in (folder / "secret" / "dog.jpg").read_bytes()
    assert import_images(db, media, folder, prompts).images == 3
    stored = _media_bytes(tmp_path / "media")
    assert b"SecretDiffusion" not in stored and b"HiddenModel" not in stored and b"parameters" not in stored
    rows = {row[0]: row[1:] for row in db.execute(
        "SELECT m.name || '/' || p.item_key, i.media_hash, i.media_ext FROM images i "
        "JOIN models m ON m.id = i.model_id JOIN prompts p ON p.id = i.prompt_id")}
    png = Image.open(media.path(*rows["secret/cat"]))
    assert png.format == "PNG" and not png.text and "exif" not in png.info
    assert png.tobytes() == make_image(1, 1).tobytes()  # lossless: the same pixels
    jpeg = Image.open(media.path(*rows["secret/dog"]))
    assert jpeg.format == "JPEG" and not jpeg.getexif() and "comment" not in jpeg.info
    # An image without metadata is stored byte for byte.
    assert media.path(*rows["plain/cat"]).read_bytes() == (folder / "plain" / "cat.png").read_bytes()


# --- two images for one slot; nothing written when refused ---------------------------------------------------------


def test_two_images_of_one_model_for_one_key_are_refused_naming_both(tmp_path):
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat"}],
                              [("m", "cat", "png"), ("m", "cat", "jpg"), ("other", "cat", "png")])
    with pytest.raises(ImageImportError) as refused:
        import_images(db, media, folder, prompts)
    message = str(refused.value)
    assert str(folder / "m" / "cat.jpg") in message and str(folder / "m" / "cat.png") in message
    assert "two images of model 'm' for prompt key 'cat'" in message and "Keep one of them" in message
    assert _counts(db) == {"prompts": 0, "models": 0, "images": 0}
    assert not (tmp_path / "media").exists()


@pytest.mark.parametrize("break_it", ["unreadable last image", "prompt text changed"])
def test_a_refused_import_writes_no_media_file(tmp_path, break_it):
    from datamodel.catalog import PromptSpec, add_prompts

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    folder, prompts = _layout(tmp_path, [{"key": "cat", "text": "A cat"}, {"key": "dog", "text": "A dog"}],
                              [("a", "cat", "png"), ("a", "dog", "png"), ("b", "cat", "png")])
    if break_it == "unreadable last image":  # found only after the other images were read and checked
        (folder / "zz").mkdir()
        (folder / "zz" / "dog.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
        message = "zz/dog.png: not a readable image"
    else:  # refused by the database itself, inside the transaction
        add_prompts(db, [PromptSpec("imported", "cat", "A different cat")])
        message = "already exists with the text 'A different cat'"
    before = _counts(db)
    with pytest.raises(ImageImportError, match=message):
        import_images(db, media, folder, prompts)
    assert _counts(db) == before
    assert [path for path in (tmp_path / "media").rglob("*") if path.is_file()] == []


# --- the demo: an interrupted first start is finished on the next start ---------------------------------------------


@pytest.mark.slow  # 5.8 s on the quiet machine (make check, 2026-11-26)
def test_an_interrupted_demo_is_finished_on_the_next_start_without_duplicates(tmp_path):
    from arena.demo.seeding import demo_incomplete, demo_prompt_specs, ensure_demo, missing_demo_metrics
    from core.settings import Settings
    from datamodel.catalog import PromptSpec, add_prompts
    from generators.demo import DEMO_MODELS

    settings = Settings(db_path=tmp_path / "a.db", media_dir=tmp_path / "media", cache_dir=tmp_path / "cache",
                        demo=True)
    db, media = connect(settings.db_path), MediaStore(settings.media_dir)
    counts = lambda: {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: E731
                      for t in ("prompts", "models", "images", "metrics")}
    specs = demo_prompt_specs()
    add_prompts(db, specs)  # the first start stopped right after its first commit
    assert demo_incomplete(db)
    built = ensure_demo(db, media, settings, progress=False)
    assert built["new_prompts"] == 0 and built["new_images"] == len(specs) * len(DEMO_MODELS)
    assert not demo_incomplete(db) and missing_demo_metrics(db) == []
    complete = counts()
    assert complete["prompts"] == len(specs) and complete["images"] == len(specs) * len(DEMO_MODELS)
    assert ensure_demo(db, media, settings, progress=False) is None  # a finished demo is left alone

    db.execute("DELETE FROM metrics WHERE name = 'reward'")  # stopped during the metrics
    assert missing_demo_metrics(db) and demo_incomplete(db)
    assert ensure_demo(db, media, settings, progress=False)["new_images"] == 0
    assert counts() == complete

    lost = db.execute("SELECT i.id FROM images i JOIN models m ON m.id = i.model_id WHERE m.name = 'demo-painter' "
                      "ORDER BY i.id LIMIT 1").fetchone()[0]  # stopped while making the images
    db.execute("DELETE FROM metrics WHERE image_id = ?", [lost])
    db.execute("DELETE FROM images WHERE id = ?", [lost])
    assert demo_incomplete(db)
    assert ensure_demo(db, media, settings, progress=False)["new_images"] == 1
    assert counts() == complete and not demo_incomplete(db)
    assert db.execute("SELECT COUNT(*) FROM (SELECT 1 FROM images GROUP BY prompt_id, model_id, idx "
                      "HAVING COUNT(*) > 1)").fetchone()[0] == 0

    other = connect(tmp_path / "other.db")  # your own prompts and no demo ones: not touched
    add_prompts(other, [PromptSpec("mine", "k", "my prompt")])
    assert not demo_incomplete(other)
    assert ensure_demo(other, MediaStore(tmp_path / "m2"), settings, progress=False) is None
    assert other.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 1
