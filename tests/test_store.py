import sqlite3

import pytest
from support.arena import make_image

from datamodel.catalog import CatalogError, PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import Store, connect
from datamodel.media import MediaError, MediaStore
from datamodel.schema import MIGRATIONS, SCHEMA_VERSION, SchemaError, migrate, schema_version

pytestmark = pytest.mark.both_engines


def test_new_database_has_schema_wal_and_foreign_keys(tmp_path):
    db = connect(tmp_path / "a.db")
    assert schema_version(db) == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"models", "prompts", "images", "battles", "votes", "annotators", "metrics"} <= tables
    assert migrate(db) == SCHEMA_VERSION  # re-opening applies nothing twice


def test_database_from_newer_code_is_refused_naming_the_file(tmp_path):
    db = connect(tmp_path / "a.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaError, match="newer than this code") as refused:
        connect(tmp_path / "a.db")
    assert str(tmp_path / "a.db") in str(refused.value) and "Connection object" not in str(refused.value)


def test_a_migration_that_fails_names_the_file_and_the_migration_and_leaves_the_version(tmp_path, capsys,
                                                                                        monkeypatch):
    """A database made by another version or branch of the arena (here: a table a later migration creates is there
    already) stops with a message saying which file, which migration and what to do, not a raw sqlite3 traceback; the
    failed migration rolls back."""
    from arena.commands import main

    path = tmp_path / "a.db"
    db = connect(path)
    number = next(i for i, migration in enumerate(MIGRATIONS) if migration.__name__ == "_snapshot_claims")
    db.execute(f"PRAGMA user_version = {number}")  # as if the later migrations had not run ...
    db.execute("CREATE TABLE unrelated (x)")  # ... but this one's table came from elsewhere
    db.close()
    with pytest.raises(SchemaError) as refused:
        connect(path)
    message = str(refused.value)
    assert str(path) in message and f"migration {number + 1} of {SCHEMA_VERSION} (_snapshot_claims)" in message
    assert "snapshot_claims already exists" in message and "backup" in message
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == number
    monkeypatch.setenv("ARENA_DB", str(path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(tmp_path / "media"))
    assert main(["withheld"]) == 2  # the command line says it in one line
    assert capsys.readouterr().err.startswith(f"error: {path}")


def test_with_block_is_one_transaction_that_nests(tmp_path):
    db = connect(tmp_path / "a.db")
    with pytest.raises(ZeroDivisionError):
        with db.conn:
            db.execute("INSERT INTO models (name) VALUES ('kept-out')")
            with db.conn:
                add_model(db, "also-kept-out")
            raise ZeroDivisionError
    assert db.execute("SELECT COUNT(*) FROM models").fetchone()[0] == 0
    with db.conn:
        add_model(db, "in")
    other = sqlite3.connect(tmp_path / "a.db")
    assert other.execute("SELECT name FROM models").fetchall() == [("in",)]


def test_foreign_keys_are_enforced(tmp_path):
    db = connect(tmp_path / "a.db")
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO images (prompt_id, model_id, media_hash, media_ext, width, height) "
                   "VALUES (99, 99, 'x', 'png', 1, 1)")


def test_store_gives_each_thread_its_own_connection(tmp_path):
    import threading

    store = Store(tmp_path / "a.db")
    seen = []
    thread = threading.Thread(target=lambda: seen.append(store.db()))
    thread.start()
    thread.join()
    assert seen[0] is not store.db()
    assert store.db() is store.db()


def test_prompts_are_idempotent_and_refuse_changed_text(tmp_path):
    db = connect(tmp_path / "a.db")
    spec = PromptSpec("taxonomy", "coin.n.01", "An image of coin", subset="Easy", metadata={"lemma": "coin"})
    first = add_prompts(db, [spec])
    assert (first.inserted, first.unchanged) == (1, 0)
    again = add_prompts(db, [spec])
    assert (again.inserted, again.unchanged, again.ids) == (0, 1, first.ids)
    richer = PromptSpec("taxonomy", "coin.n.01", "An image of coin", subset="Easy", metadata={"lemma": "coin", "x": 1})
    assert add_prompts(db, [richer]).updated == 1
    changed = PromptSpec("taxonomy", "coin.n.01", "An image of a coin", subset="Easy")
    with pytest.raises(CatalogError, match="already exists with the text"):
        add_prompts(db, [changed])


def test_duplicate_prompt_keys_in_one_batch_write_nothing(tmp_path):
    db = connect(tmp_path / "a.db")
    specs = [PromptSpec("s", "k", "one", source="f.csv:2"), PromptSpec("s", "other", "two"),
             PromptSpec("s", "k", "three", source="f.csv:4")]
    with pytest.raises(CatalogError, match="f.csv:4: duplicate prompt key"):
        add_prompts(db, specs)
    assert db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 0


def test_media_is_content_addressed_and_idempotent(tmp_path):
    media = MediaStore(tmp_path / "media")
    stored = media.put_image(make_image(1, 2))
    assert media.put_image(make_image(1, 2)) == stored
    path = media.path(stored.media_hash, stored.media_ext)
    assert path.exists() and path.name == f"{stored.media_hash}.png"
    assert (stored.width, stored.height) == (32, 32)
    with pytest.raises(MediaError, match="broken.png: not a readable image"):
        media.put(b"not an image", "broken.png")
    with pytest.raises(MediaError):
        media.path("../../etc/passwd", "png")


def test_images_are_unique_per_prompt_model_and_index(small_arena):
    db, media = small_arena.db, small_arena.media
    prompt_id, model_id = small_arena.prompt_ids[0], small_arena.model_ids["alpha-model"]
    first = db.execute("SELECT id FROM images WHERE prompt_id = ? AND model_id = ?",
                       [prompt_id, model_id]).fetchone()[0]
    again = add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(3, 3)))
    assert again == first
    second = add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(3, 3)), idx=1)
    assert second != first
