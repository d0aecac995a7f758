"""A small arena database: prompts of two suites (taxonomy, commonsense), four models and one image of each model
for each prompt. ``build_small_arena(root)`` writes it under ``root``; the ``small_arena`` fixture (conftest.py) gives
a fresh one per test."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PIL import Image, ImageDraw

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.renditions import Renditions
from datamodel.settings import Settings

MODELS = ("alpha-model", "bravo-model", "charlie-model", "delta-model")


@dataclass
class SmallArena:
    settings: Settings
    db: object
    media: MediaStore
    prompt_ids: list[int]
    model_ids: dict[str, int]


def small_prompts() -> list[PromptSpec]:
    return [
        PromptSpec("taxonomy", "coin.n.01", "An image of coin (a flat metal piece used as money)", subset="Easy",
                   variant="with_definition", metadata={"lemma": "coin", "definition": "a flat metal piece used as money"}),
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
    """Prompts of two suites, four models, an image of each for each prompt, rendered, in ``root`` (on the engine
    ``settings_overrides`` name). With no overrides (SQLite), a copy of this process's template
    (:func:`from_template`)."""
    if settings_overrides:
        return _build_small_arena(root, **settings_overrides)
    return from_template(("small arena",), _build_small_arena, root)


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


_TEMPLATES: dict[tuple, SmallArena] = {}


def from_template(key: tuple, build: Callable[[Path], SmallArena], root: Path) -> SmallArena:
    """``build(root)``'s arena as a copy of the one this process built first for ``key`` (a SQLite file and a media
    folder, closed, in a temporary folder removed at exit). The same content as a fresh build, in milliseconds instead
    of the half second to seconds that encoding, fsync-ing and rendering the images take (most of the quick tier's
    set-up time before this)."""
    template = _TEMPLATES.get(key)
    if template is None:
        folder = Path(tempfile.mkdtemp(prefix="arena-template-"))
        atexit.register(shutil.rmtree, folder, True)
        template = _TEMPLATES[key] = build(folder)
        template.db.close()
    return copy_small_arena(template, root)


def copy_small_arena(template: SmallArena, root: Path) -> SmallArena:
    """A fresh copy in ``root`` of the closed SQLite arena ``template``: its database file and media folder copied,
    then opened like a new one."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy2(template.settings.db_path, root / "arena.db")
    shutil.copytree(template.settings.media_dir, root / "media")
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=False)
    return SmallArena(settings, connect(settings.database), MediaStore(settings.media_dir),
                      list(template.prompt_ids), dict(template.model_ids))


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
