"""Shared fixtures: a small arena database with prompts of two suites, four models and their images."""

from __future__ import annotations

import itertools
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
    db = connect(settings.database)
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


# --- both engines -----------------------------------------------------------------------------------------------
# A test module marked ``pytestmark = pytest.mark.both_engines`` runs each test that uses ``db``, ``small_arena`` or
# ``database_url`` twice: on SQLite and on a real PostgreSQL (Debian's server, started once per test session on a
# free port in a temporary folder by tools.postgres_server and stopped at the end; each test gets a fresh database
# copied from a migrated template). Every other test uses SQLite only.


def pytest_configure(config):
    config.addinivalue_line("markers", "both_engines: run the module's database tests on SQLite and PostgreSQL")


def pytest_generate_tests(metafunc):
    if "engine" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_engines"):
        metafunc.parametrize("engine", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture(scope="session")
def postgres_server():
    """The test session's PostgreSQL server (started at first use) with a migrated template database."""
    from tools.postgres_server import PostgresUnavailable, TemporaryPostgres

    try:
        server = TemporaryPostgres(durable=False).start()
    except PostgresUnavailable as error:
        pytest.fail(f"PostgreSQL is needed for the tests on both engines: {error}")
    try:
        connect(server.create_database("arena_template")).close()
        yield server
    finally:  # a migration that fails on PostgreSQL must not leave the server running
        server.stop()


@pytest.fixture
def engine(request) -> str:
    """The engine of this test's database: "sqlite", or "postgresql" in a both_engines module's second run."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def database_url(engine, request, tmp_path):
    """A fresh, migrated, empty arena database of this test's engine: a file path (SQLite) or a URL (PostgreSQL)."""
    if engine == "sqlite":
        yield tmp_path / "arena.db"
        return
    server = request.getfixturevalue("postgres_server")
    name = f"t_{os.getpid()}_{next(_DATABASE_NUMBERS)}"
    yield server.create_database(name, template="arena_template")
    server.drop_database(name)


_DATABASE_NUMBERS = itertools.count()


@pytest.fixture
def db(engine, request):
    """A fresh arena database: in memory on SQLite, or a new PostgreSQL database in a both_engines module."""
    database = connect(":memory:" if engine == "sqlite" else request.getfixturevalue("database_url"))
    yield database
    database.close()


def prompt_count(db) -> int:
    return db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0]


def engine_settings(engine: str, request) -> dict:
    """The settings that put a test's arena on its engine: none for SQLite (``db_path``), a fresh PostgreSQL
    database's URL (``database_url``) otherwise."""
    return {} if engine == "sqlite" else {"database_url": request.getfixturevalue("database_url")}


@pytest.fixture
def small_arena(tmp_path, engine, request) -> SmallArena:
    arena = build_small_arena(tmp_path, **engine_settings(engine, request))
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
