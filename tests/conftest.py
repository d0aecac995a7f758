"""Shared fixtures: a small arena database with prompts of two suites, four models and their images."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts  # noqa: E402
from datamodel.media import MediaStore  # noqa: E402
from datamodel.renditions import Renditions  # noqa: E402
from datamodel.settings import Settings  # noqa: E402
from datamodel.connection import connect  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
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
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache",
                        demo=False, **settings_overrides)
    db = connect(settings.db_path)
    media = MediaStore(settings.media_dir)
    prompt_ids = add_prompts(db, small_prompts()).ids
    model_ids = {name: add_model(db, name) for name in MODELS}
    for m, model_id in enumerate(model_ids.values()):
        for p, prompt_id in enumerate(prompt_ids):
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(m, p)))
    render_all(db, media, settings)
    return SmallArena(settings, db, media, prompt_ids, model_ids)


def render_all(db, media: MediaStore, settings: Settings | None = None) -> None:
    """Make the display renditions of every image (as ``settings`` say; default: the defaults), as the paths that
    add images do: battles draw only rendered images (datamodel.renditions)."""
    Renditions.from_settings(media, settings or Settings()).render_missing(db)


@pytest.fixture
def db():
    """A fresh in-memory arena database."""
    database = connect(":memory:")
    yield database
    database.close()


def prompt_count(db) -> int:
    return db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0]


def command_line_env(arena: SmallArena, monkeypatch, workdir: Path) -> SmallArena:
    """Point the command line at ``arena``: run from ``workdir`` with ARENA_DB and ARENA_MEDIA_DIR set to it and no
    other ARENA_* variable."""
    monkeypatch.chdir(workdir)
    for name in list(os.environ):
        if name.startswith("ARENA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_DB", str(arena.settings.db_path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(arena.settings.media_dir))
    return arena


@pytest.fixture
def small_arena(tmp_path) -> SmallArena:
    arena = build_small_arena(tmp_path)
    yield arena
    arena.db.close()


@pytest.fixture(scope="session")
def random_inception_weights(tmp_path_factory):
    """torch-fidelity's InceptionV3 with random weights saved as a weights file (about 100 MB; nothing downloaded)."""
    pytest.importorskip("torch_fidelity")
    import torch
    import torch_fidelity.feature_extractor_inceptionv3 as inception

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inception, "load_state_dict_from_url", lambda *args, **kwargs: {})
        patch.setattr(inception.FeatureExtractorInceptionV3, "load_state_dict", lambda self, *args, **kwargs: None)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            network = inception.FeatureExtractorInceptionV3("inception-v3-compat", ["2048"])
    path = tmp_path_factory.mktemp("inception") / "weights-inception-2015-12-05-6726825d.pth"
    torch.save(network.state_dict(), path)
    return path
