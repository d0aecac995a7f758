"""A small arena database: prompts of two suites (taxonomy, commonsense), four models and one image of each model
for each prompt. ``build_small_arena(root)`` writes it under ``root``; the ``small_arena`` fixture (conftest.py) gives
a fresh one per test."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from PIL import Image, ImageDraw
from support.databases import pool_for, with_database

from core.settings import Settings
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.postgres import create_database
from datamodel.renditions import Renditions

MODELS = ("alpha-model", "bravo-model", "charlie-model", "delta-model")


@dataclass
class SmallArena:
    settings: Settings
    db: Database
    media: MediaStore
    prompt_ids: list[int]
    model_ids: dict[str, int]


def small_prompts() -> list[PromptSpec]:
    return [
        PromptSpec("taxonomy", "coin.n.01", "An image of coin (a flat metal piece used as money)", subset="Easy",
                   variant="with_definition",
                   metadata={"lemma": "coin", "definition": "a flat metal piece used as money"}),
        PromptSpec("taxonomy", "coin.n.01", "An image of coin", subset="Easy", variant="without_definition",
                   metadata={"lemma": "coin"}),
        PromptSpec("taxonomy", "sofa.n.01", "An image of sofa", subset="Easy", variant="without_definition",
                   metadata={"lemma": "sofa"}),
        PromptSpec("commonsense", "0", "A lightbulb without electricity", subset="Physical Laws", role="p1",
                   metadata={"description": "The lightbulb is unlit", "category": "Physical Laws"}),
        PromptSpec("commonsense", "0", "A lightbulb with electricity", subset="Physical Laws", role="p2",
                   metadata={"description": "The lightbulb is lit", "category": "Physical Laws"}),
    ]


def make_image(model_index: int, prompt_index: int) -> Image.Image:
    image = Image.new("RGB", (32, 32), (60 * model_index % 256, 40 * prompt_index % 256, 128))
    ImageDraw.Draw(image).rectangle([model_index % 5 * 4, prompt_index % 5 * 4, 24, 24], fill=(255, 255, 255))
    return image


def build_small_arena(root: Path, **settings_overrides) -> SmallArena:
    """Prompts of two suites, four models, an image of each for each prompt, rendered, in ``root``, with
    ``settings_overrides`` (a PostgreSQL ``database_url`` among them puts it there): a copy of this process's template
    of the same renditions (:func:`from_template`)."""
    return from_template(("small arena",), _build_small_arena, root, **settings_overrides)


def _build_small_arena(root: Path, **settings_overrides) -> SmallArena:
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache",
                        demo=False, **settings_overrides)
    db = connect(settings.database)  # a SQLite file, or the PostgreSQL database of settings.database_url
    media = MediaStore(settings.media_dir)
    prompt_ids = add_prompts(db, small_prompts()).ids
    model_ids = {name: add_model(db, name) for name in MODELS}
    for m, model_id in enumerate(model_ids.values()):
        for p, prompt_id in enumerate(prompt_ids):
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(m, p)))
    render_all(db, media, settings)
    return SmallArena(settings, db, media, prompt_ids, model_ids)


def demo_arena(root: Path, **settings_overrides) -> SmallArena:
    """The shipped demo bundle loaded (``arena.demo.load_demo_bundle``: its prompts, models, images and their display
    renditions) into ``root``, with ``demo=True`` and ``settings_overrides``: a copy of this process's first load,
    which costs about 5 s of CPU (436 images rendered). Tests of the loading itself call ``load_demo_bundle``."""
    return from_template(("demo",), _load_demo, root, **settings_overrides)


def _load_demo(root: Path, **settings_overrides) -> SmallArena:
    from arena.demo.seeding import load_demo_bundle

    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=True,
                        **settings_overrides)
    db, media = connect(settings.database), MediaStore(settings.media_dir)
    load_demo_bundle(db, media, renditions=Renditions.from_settings(media, settings))
    prompt_ids = [prompt_id for (prompt_id,) in db.execute("SELECT id FROM prompts ORDER BY id").fetchall()]
    model_ids = dict(db.execute("SELECT name, id FROM models ORDER BY id").fetchall())
    return SmallArena(settings, db, media, prompt_ids, model_ids)


_TEMPLATES: dict[tuple, SmallArena] = {}
_TEMPLATE_NUMBERS = itertools.count()  # PostgreSQL template databases (a build may hold another's)


def from_template(key: tuple, build: Callable[..., SmallArena], root: Path, database_url: str = "",
                  **settings_overrides) -> SmallArena:
    """``build(root, **display)``'s arena as a copy of the one this process built first for ``key`` and the
    ``display_*`` overrides among ``settings_overrides`` (what the build's renditions depend on), closed, its media
    folder in a temporary folder removed at exit; the copy opens with all of ``settings_overrides``. The same content
    as a fresh build, in milliseconds instead of the half second to seconds that encoding, fsync-ing and rendering
    the images take (most of the quick tier's set-up time before this).

    On SQLite the database file is copied. With ``database_url`` (a fresh PostgreSQL database the test owns), the
    template is built once per server in a database of its own, ``build(folder, database_url=...)``, and the test's
    database is made again as its copy (``CREATE DATABASE ... TEMPLATE``; identity sequences included)."""
    display = {name: value for name, value in settings_overrides.items() if name.startswith("display_")}
    server = _server_of(database_url) if database_url else ""
    template_key = (*key, server, *sorted(display.items()))
    template = _TEMPLATES.get(template_key)
    if template is None:
        folder = Path(tempfile.mkdtemp(prefix="arena-template-"))
        atexit.register(shutil.rmtree, folder, True)
        if server:
            name = f"template_{os.getpid()}_{next(_TEMPLATE_NUMBERS)}"
            create_database(server, name, template=_database_of(database_url))  # migrated and empty, as the test's
            template = build(folder, database_url=with_database(database_url, name), **display)
        else:
            template = build(folder, **display)
        template.db.close()
        _TEMPLATES[template_key] = template
    return copy_small_arena(template, root, database_url, **settings_overrides)


def copy_small_arena(template: SmallArena, root: Path, database_url: str = "", **settings_overrides) -> SmallArena:
    """A fresh copy in ``root`` of the closed arena ``template`` with ``settings_overrides``: its media folder copied,
    and its SQLite file copied or its PostgreSQL database copied into ``database_url``'s (dropped and made again),
    then opened like a new one."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template.settings.media_dir, root / "media")
    on_server: dict[str, Any] = {"database_url": database_url} if database_url else {}  # else Settings' own default
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache",
                        demo=template.settings.demo, **on_server, **settings_overrides)
    if database_url:
        template_name = _database_of(template.settings.database_url)
        pool_for(_server_of(database_url)).refill(_database_of(database_url), template_name)
    else:
        shutil.copy2(template.settings.db_path, root / "arena.db")
    return SmallArena(settings, connect(settings.database), MediaStore(settings.media_dir),
                      list(template.prompt_ids), dict(template.model_ids))


def _database_of(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _server_of(url: str) -> str:
    """The URL of the server's maintenance database (where CREATE and DROP DATABASE run)."""
    return with_database(url, "postgres")


def render_all(db, media: MediaStore, settings: Settings | None = None) -> None:
    """Make the display renditions of every image (as ``settings`` say; default: the defaults), as the paths that
    add images do: battles draw only rendered images (datamodel.renditions)."""
    Renditions.from_settings(media, settings or Settings()).render_missing(db)


def prompt_count(db) -> int:
    return db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0]


def command_line_env(arena: SmallArena, monkeypatch, workdir: Path) -> SmallArena:
    """Point the command lines at ``arena``: ``workdir`` as the working directory, ARENA_DB and ARENA_MEDIA_DIR set
    to it, no other ARENA_* variable or OPENAI_API_KEY, short judge retries."""
    import os

    monkeypatch.chdir(workdir)
    for name in list(os.environ):
        if name.startswith("ARENA_") or name == "OPENAI_API_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_DB", str(arena.settings.db_path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(arena.settings.media_dir))
    monkeypatch.setenv("ARENA_JUDGE_RETRY_BASE_S", "0.01")
    return arena


def empty_arena_env(monkeypatch, root: Path) -> Path:
    """Point the command lines at an empty arena in ``root`` (``arena.db``, ``media/``, no demo); return ``root``."""
    monkeypatch.setenv("ARENA_DB", str(root / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(root / "media"))
    monkeypatch.setenv("ARENA_DEMO", "false")
    return root


def seven_models(arena: SmallArena) -> Database:
    """The small arena with three more models, each with an image of every prompt (seven to choose four from, for
    the four-image mode); its database."""
    db = arena.db
    for m, name in enumerate(("echo-model", "foxtrot-model", "golf-model"), start=4):
        model_id = add_model(db, name)
        for p, prompt_id in enumerate(arena.prompt_ids):
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(m, p)))
    render_all(db, arena.media, arena.settings)
    return db
