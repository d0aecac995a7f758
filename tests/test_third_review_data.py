"""The third security review (issue 23), findings outside the web page: backups, the leaderboard worker, Datasette,
prompt files, exports and imports. Each test reproduced its finding before the fix (the failure is quoted in the
docstring where it says more than the assertion)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.arena import build_small_arena
from support.processes import running

from arena.commands import main
from datamodel.backup import backup_database

ROOT = Path(__file__).resolve().parents[1]


# --- finding 12: the backup's SQLite URI ------------------------------------------------------------------------------


@pytest.mark.parametrize("folder", ["with#hash", "with%41percent", "with?query", "with space"])
def test_a_backup_copies_the_database_its_path_names_whatever_the_characters(tmp_path, folder):
    """Before: with '#' in the path, "0 votes, integrity ok" and an empty copy; with '%41' the file named with 'A'
    (another database) was backed up silently."""
    source_dir = tmp_path / folder
    source_dir.mkdir()
    arena = build_small_arena(source_dir)
    with arena.db.conn:
        arena.db.execute("CREATE TABLE marker (what TEXT)")
        arena.db.execute("INSERT INTO marker VALUES ('the real one')")
    arena.db.close()
    if "%41" in folder:  # the database a decoded URI would name instead
        decoy = tmp_path / folder.replace("%41", "A")
        decoy.mkdir()
        with sqlite3.connect(decoy / "arena.db") as conn:
            conn.execute("CREATE TABLE marker (what TEXT)")
            conn.execute("INSERT INTO marker VALUES ('the decoy')")
    copy = backup_database(source_dir / "arena.db", tmp_path / "copy.db")
    with sqlite3.connect(copy.path) as conn:
        assert conn.execute("SELECT what FROM marker").fetchall() == [("the real one",)]
    assert copy.integrity == "ok"


# --- low: a killed backup ---------------------------------------------------------------------------------------------


def test_a_killed_backup_leaves_no_readable_copy_and_the_next_one_removes_it(tmp_path):
    """Before: a backup killed before its rename left ``.copy.db.partial-<pid>`` readable by everyone (mode 0644),
    and nothing removed it."""
    arena = build_small_arena(tmp_path)
    arena.db.close()
    dest = tmp_path / "backups" / "copy.db"
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(ROOT)!r})
        os.umask(0o022)
        import datamodel.backup as backup
        backup.os.replace = lambda *args: os._exit(9)  # killed between the copy and its rename
        backup.backup_database({str(arena.settings.db_path)!r}, {str(dest)!r})
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 9, done.stderr
    left = list(dest.parent.glob(".copy.db.partial-*"))
    assert left, "the killed backup left nothing to check"
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in left), [oct(p.stat().st_mode) for p in left]
    copy = backup_database(arena.settings.db_path, dest)
    assert not list(dest.parent.glob(".copy.db.partial-*"))
    assert stat.S_IMODE(copy.path.stat().st_mode) & 0o077 == 0


# --- finding 10: the leaderboard worker -------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_leaderboard_worker_dies_with_the_server(tmp_path, sig):
    """Before: the worker outlived the server at every stop (4 of 4 SIGTERM, 5 of 5 kill -9)."""
    from tools.load import free_port, start_server, stop_server

    arena = build_small_arena(tmp_path)
    arena.db.close()
    env = {"ARENA_DB": str(arena.settings.db_path), "ARENA_MEDIA_DIR": str(arena.settings.media_dir),
           "ARENA_CACHE_DIR": str(arena.settings.cache_dir), "ARENA_DEMO": "false"}
    server = start_server(env, free_port(), tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 60
        while not (workers := _children(server.pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert workers, "the server started no leaderboard worker"
        os.kill(server.pid, sig)  # the server alone, not its process group: as a supervisor or the OOM killer does
        server.wait(timeout=30)
        deadline = time.monotonic() + 15
        while any(running(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        alive = [pid for pid in workers if running(pid)]
    finally:
        stop_server(server)
        for pid in _children(1) & workers:
            os.kill(pid, signal.SIGKILL)
    assert alive == [], f"{len(alive)} worker process(es) outlived the server ({signal.Signals(sig).name})"


# --- finding 9: Datasette ---------------------------------------------------------------------------------------------


def test_the_datasette_metadata_refuses_every_table_that_names_annotators_or_holds_their_sessions():
    """Before: ``annotator_sessions`` (token hashes, session times) was listed and readable, ``leaderboard_snapshots``
    (an annotator's private view) only hidden, and ``votes`` names every annotator."""
    metadata = json.loads((ROOT / "datasette-metadata.json").read_text())
    tables = metadata["databases"]["arena"]["tables"]
    for table in ("annotators", "annotator_sessions", "battles", "judge_requests", "leaderboard_snapshots", "votes"):
        assert tables.get(table, {}).get("allow") is False, table
    assert metadata["allow_sql"] is False


def test_every_table_holding_an_annotator_column_is_refused_to_datasette(tmp_path):
    """Every table of today's schema with a column naming or pointing at an annotator (``annotator_id``, ``rater``,
    ``voter``, ``session_id``, ``token_hash``) is refused: a table added later that forgets it fails here (the
    ``ratings`` table of issue 27 did). Views are the public face: they number annotators instead."""
    metadata = json.loads((ROOT / "datasette-metadata.json").read_text())
    tables = metadata["databases"]["arena"]["tables"]
    db = build_small_arena(tmp_path).db
    personal = {"annotator_id", "rater", "voter", "session_id", "token_hash", "annotator"}
    exposed = []
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                               "AND name NOT LIKE 'prompts_fts%'"):
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if columns & personal and tables.get(table, {}).get("allow") is not False:
            exposed.append(f"{table} ({', '.join(sorted(columns & personal))})")
    assert exposed == [], ("add {\"hidden\": true, \"allow\": false} to datasette-metadata.json for: "
                           + "; ".join(exposed))


def test_rating_details_numbers_raters_instead_of_naming_them(tmp_path):
    import random

    from support.ratings import build_rating_arena

    from arena import rating_session as raters
    from datamodel.human_ratings import set_assignment

    arena = build_rating_arena(tmp_path)
    set_assignment(arena.db, "saneval_adherence")
    session = raters.start(arena.db, "Alice Secretname", "token-for-alice", open_signup=True)
    session = raters.next_question(arena.db, random.Random(1), session, pool=raters.RatingPool())
    raters.answer(arena.db, session, {"likert": 3}, pool=raters.RatingPool(), rng=random.Random(2), rules=None)
    rows = list(arena.db.query("SELECT * FROM rating_details"))
    assert len(rows) == 1 and "Secretname" not in json.dumps(rows)
    assert rows[0]["rater"] == f"annotator {session.annotator.id}"


def test_vote_details_numbers_annotators_instead_of_naming_them(tmp_path):
    import random

    from arena import session as sessions

    arena = build_small_arena(tmp_path)
    s = sessions.start(arena.db, "Alice Secretname", "token-for-alice", open_signup=True)
    sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(1), s), "A")
    rows = list(arena.db.query("SELECT * FROM vote_details"))
    assert len(rows) == 1 and "Secretname" not in json.dumps(rows)
    assert rows[0]["voter"] == f"annotator {s.annotator.id}" and rows[0]["voter_kind"] == "human"


# --- low: prompt files ------------------------------------------------------------------------------------------------


def _load(path: Path):
    from suites.generic import load_prompt_list

    return load_prompt_list(path, suite="imported")


def test_a_csv_with_a_byte_order_mark_is_read(tmp_path):
    """Before: "missing column 'text' (the header has \\ufeffkey, text)"."""
    path = tmp_path / "prompts.csv"
    path.write_bytes("key,text\ncat,A cat\n".encode("utf-8-sig"))
    assert [(spec.item_key, spec.text) for spec in _load(path)] == [("cat", "A cat")]


def test_a_long_field_is_read_and_not_called_malformed_quoting(tmp_path):
    """Before: a field over 131,072 characters was "malformed quoting (field larger than field limit)"."""
    path = tmp_path / "prompts.csv"
    path.write_text(f'key,text\ncat,"{"a" * 200_000}"\n')
    assert len(_load(path)[0].text) == 200_000


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    from suites.common import SuiteError

    for name, body in (("prompts.csv", "key,text\ndog,Un chien \xe9l\xe9gant\n".encode("latin-1")),
                       ("prompts.jsonl", '{"key": "cat", "text": "A cat"}\n{"key": "dog", "text": "\xe9"}\n'
                        .encode("latin-1"))):
        path = tmp_path / name
        path.write_bytes(body)
        with pytest.raises(SuiteError, match=rf"{name}:2: not UTF-8 text .*Save the file as UTF-8"):
            _load(path)


def test_deeply_nested_json_is_refused_with_the_file_and_line(tmp_path):
    """Before: RecursionError."""
    from suites.common import SuiteError

    path = tmp_path / "prompts.jsonl"
    path.write_text('{"key": "cat", "text": "A cat"}\n{"key": "dog", "text": "A dog", "metadata": '
                    + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(SuiteError, match=r"prompts\.jsonl:2: nested too deeply"):
        _load(path)


# --- low: a failed Hugging Face export --------------------------------------------------------------------------------


def test_a_failed_hf_export_leaves_no_truncated_parquet(tmp_path, monkeypatch):
    import random

    from arena import session as sessions
    from datamodel import hf_export
    from datamodel.media import MediaStore

    arena = build_small_arena(tmp_path)
    s = sessions.start(arena.db, "voter", "token-for-voter", open_signup=True)
    for i in range(5):
        s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), s), "A")
    real, calls = hf_export._batch, []

    def failing(rows, media):
        calls.append(len(rows))
        if len(calls) == 2:
            raise OSError("No space left on device")
        return real(rows, media)

    monkeypatch.setattr(hf_export, "_batch", failing)
    with pytest.raises(OSError):
        hf_export.write_hf_dataset(arena.db, MediaStore(arena.settings.media_dir), tmp_path / "out", chunk_rows=2)
    assert not list((tmp_path / "out").rglob("*.parquet")), "a truncated parquet file was left behind"


# --- low: imports held in memory --------------------------------------------------------------------------------------

# The peak memory of the process, read from /proc (VmHWM starts afresh at exec; ru_maxrss keeps the high-water mark
# of the forked test runner, which may be larger than anything the import does).
PEAK = textwrap.dedent("""
    def peak_mb():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) // 1024 for line in status if line.startswith("VmHWM:"))
""")


def test_a_huge_junk_file_is_refused_before_it_is_read(tmp_path):
    """Before: the importer read every file whole before checking it (2.27 GB for a 2 GB junk file)."""
    (tmp_path / "prompts.csv").write_text("key,text\ncat,A cat\n")
    folder = tmp_path / "imgs" / "model"
    folder.mkdir(parents=True)
    with open(folder / "cat.png", "wb") as handle:  # sparse: costs no disk
        handle.truncate(1536 * 1024 * 1024)
    script = PEAK + textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from arena.importer import ImageImportError, import_images
        from datamodel.connection import connect
        from datamodel.media import MediaStore
        try:
            import_images(connect({str(tmp_path / 'a.db')!r}), MediaStore({str(tmp_path / 'media')!r}),
                          {str(tmp_path / 'imgs')!r}, {str(tmp_path / 'prompts.csv')!r})
        except ImageImportError as error:
            print("refused:", error)
        print("peak MB", peak_mb())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peak = int(done.stdout.rpartition("peak MB")[2])
    print(done.stdout)
    assert "refused:" in done.stdout and "cat.png" in done.stdout
    assert peak < 600, f"the import peaked at {peak} MB for a 1,536 MB junk file"


@pytest.mark.slow
def test_an_import_holds_one_image_at_a_time(tmp_path):
    """Before: every image of the folder was read and kept in memory until the end of the check (36 images of about
    3 MB added about 100 MB to the importer's peak)."""
    import numpy as np
    from PIL import Image

    (tmp_path / "prompts.csv").write_text("key,text\n" + "".join(f"k{i},Prompt {i}\n" for i in range(12)))
    rng = np.random.default_rng(0)
    for model in ("m1", "m2", "m3"):
        (tmp_path / "imgs" / model).mkdir(parents=True)
        for i in range(12):  # noise: about 3 MB as PNG at any compression level; level 0 writes it in half the CPU
            Image.fromarray(rng.integers(0, 256, (1000, 1000, 3), dtype=np.uint8)).save(
                tmp_path / "imgs" / model / f"k{i}.png", compress_level=0)
    total = sum(p.stat().st_size for p in (tmp_path / "imgs").rglob("*.png")) // 2**20
    script = PEAK + textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        from arena.importer import import_images
        from datamodel.connection import connect
        from datamodel.media import MediaStore
        db, media = connect({str(tmp_path / 'a.db')!r}), MediaStore({str(tmp_path / 'media')!r})
        import PIL.PngImagePlugin, PIL.JpegImagePlugin, PIL.WebPImagePlugin  # loaded before the baseline
        base = peak_mb()
        result = import_images(db, media, {str(tmp_path / 'imgs')!r}, {str(tmp_path / 'prompts.csv')!r})
        peak = peak_mb()
        print("images", result.images, "grew MB", peak - base)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    grew = int(done.stdout.rpartition("grew MB")[2])
    print(f"import of {total} MB of images: peak grew {grew} MB")
    assert "images 36" in done.stdout and grew < total / 3, done.stdout


# --- finding 3: published images --------------------------------------------------------------------------------------


def _voted_arena(tmp_path, votes: int = 6):
    import random

    from arena import session as sessions

    arena = build_small_arena(tmp_path)
    s = sessions.start(arena.db, "publisher", "token-for-publisher", open_signup=True)
    started = time.time() - 3600
    for i in range(votes):  # a vote a minute, sides mixed: none set aside by the quality rules
        s = sessions.next_battle(arena.db, random.Random(i), s, now=started + 60 * i)
        s = sessions.vote(arena.db, s, "AB"[i % 2], now=started + 60 * i + 20)
    assert arena.db.execute("SELECT COUNT(*) FROM votes WHERE NOT excluded").fetchone()[0] == votes
    return arena


def _named_from_the_export(arena, folder: Path, battles: int = 40) -> tuple[int, int]:
    """The attack: render every image of the published export as the arena does and hash it, then draw fresh battles
    for a new voter and look up the served images' hashes. (images named, images looked at)."""
    import hashlib
    import random

    import httpx
    import pyarrow.parquet as pq
    from support.webapp import running_app

    from arena import session as sessions
    from datamodel.renditions import RenditionSpec, render

    table = pq.read_table(folder / "data" / "train-00000-of-00001.parquet").to_pylist()
    spec = RenditionSpec.from_settings(arena.settings)
    known = {}
    for row in table:
        for side in ("a", "b"):
            known[hashlib.sha256(render(row[f"image_{side}"]["bytes"], spec)).hexdigest()] = row[f"model_{side}"]
    print(f"export: {len(table)} rows, {len(known)} distinct renditions")
    s = sessions.start(arena.db, "attacker", "token-for-attacker", open_signup=True)
    named = seen = 0
    with running_app(arena.settings) as url, httpx.Client(timeout=30) as http:
        for i in range(battles):
            try:
                s = sessions.next_battle(arena.db, random.Random(1000 + i), s)
            except LookupError:
                break
            assert s.battle is not None  # next_battle served one
            for side in "ab":
                answer = http.get(f"{url}battle-media/{s.battle.media_token}/{side}")
                assert answer.status_code == 200, answer.text
                body = answer.content
                seen += 1
                named += hashlib.sha256(body).hexdigest() in known
    return named, seen


def test_images_published_with_their_model_names_are_withheld_from_battles(tmp_path):
    """Before: after a Hugging Face export of 19 votes, hashing the renditions of its images named 10 of 40 images in
    fresh battles before the vote (all correctly); here, after 6 published votes, 43 of 80."""

    arena = _voted_arena(tmp_path)
    env = {"ARENA_DB": str(arena.settings.db_path), "ARENA_MEDIA_DIR": str(arena.settings.media_dir),
           "ARENA_DEMO": "false", "ARENA_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("")
    old = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        assert main(["export", str(tmp_path / "hf"), "--format", "hf"]) == 0
    finally:
        for name, value in old.items():
            os.environ.pop(name) if value is None else os.environ.__setitem__(name, value)
    named, seen = _named_from_the_export(arena, tmp_path / "hf")
    published = arena.db.execute("SELECT COUNT(*) FROM images WHERE published_at IS NOT NULL").fetchone()[0]
    print(f"named {named} of {seen} images from the export; {published} images published")
    assert published > 0 and seen > 0 and named == 0


def test_the_admin_may_keep_published_images_in_battles(tmp_path):
    from datamodel.hf_export import write_hf_dataset
    from datamodel.media import MediaStore

    arena = _voted_arena(tmp_path)
    write_hf_dataset(arena.db, MediaStore(arena.settings.media_dir), tmp_path / "hf", keep_in_battles=True)
    withheld = arena.db.execute("SELECT COUNT(*) FROM images WHERE withheld IS NOT NULL").fetchone()[0]
    published = arena.db.execute("SELECT COUNT(*) FROM images WHERE published_at IS NOT NULL").fetchone()[0]
    assert withheld == 0 and published > 0
    named, seen = _named_from_the_export(arena, tmp_path / "hf", battles=10)
    assert named > 0  # the admin's choice: the attack works again, as the docs say


def test_withheld_images_are_released_by_the_admin(tmp_path, capsys):
    from datamodel.hf_export import write_hf_dataset
    from datamodel.media import MediaStore
    from datamodel.sampling_reads import eligible_prompts

    arena = _voted_arena(tmp_path)
    before = eligible_prompts(arena.db)
    write_hf_dataset(arena.db, MediaStore(arena.settings.media_dir), tmp_path / "hf")
    assert eligible_prompts(arena.db) != before
    os.environ["ARENA_DB"] = str(arena.settings.db_path)
    try:
        assert main(["withheld"]) == 0
        assert "published" in capsys.readouterr().out
        assert main(["withheld", "--release"]) == 0
    finally:
        del os.environ["ARENA_DB"]
    assert "released" in capsys.readouterr().out
    assert eligible_prompts(arena.db) == before
