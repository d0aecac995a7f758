"""The fixtures every test module may ask for, and the test tiers.

Support code lives in ``tests/support/`` (see its README.md: how to write a browser test, an app test or a tiny-model
test); this file holds only the fixtures and the tier markers. No test module imports another test module
(tests/test_architecture.py checks it): what two modules share goes into ``support``.

Fixtures:

- ``db``: a fresh in-memory arena database.
- ``small_arena``: :func:`support.arena.build_small_arena` in the test's ``tmp_path`` (prompts of two suites, four
  models, an image of each for each prompt); ``arena_env``: the same, with ``ARENA_*`` pointing at it and the working
  directory in ``tmp_path``, for the command-line entry points.
- ``browser``: the session's one chromium (playwright), lent to the test and started at its first use; each
  ``browser.new_page(...)`` opens a fresh context, closed after the test. Once the test has used it, ``asyncio.run``
  cannot be called in that test (playwright's loop runs). A test that asks for it is marked ``browser``.
- ``artefact_cache``: a ``cache_dir`` for the tiny pipelines (``generators.tiny.ensure_tiny``) and the demo CLIP,
  built there once per hash of the code that builds them and reused by every later run, in any clone
  (``support/cache.py``).
- ``suites_cli``: runs ``python -m arena suites ...`` in-process on a fresh database; returns (code, out, err).
- ``plain_app``: (arena, url) of one app with the default settings served for a module's tests that sign in under
  their own names and record no vote (a module's worth of app builds saved, ~0.7 s of CPU each).

Tiers (markers registered in pytest.ini): ``browser`` (drives chromium), ``install`` (builds a virtualenv or pip
installs), ``slow`` (trains, runs every pipeline, drives subprocess servers under load, or takes 4 s or more alone),
and ``postgresql`` (needs the PostgreSQL server, as a both_engines test's second run does; marked here). ``make
check`` runs the rest, on SQLite and without a PostgreSQL server (``-m "not browser and not install and not slow and
not postgresql"``), ``make check-postgresql`` the quick tests that need the server, ``make test`` everything.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")


def _share_the_cores_among_workers() -> None:
    """Under pytest-xdist, each worker process gets its share of the cores for torch's and the BLAS libraries' thread
    pools (set before anything imports them; subprocesses inherit it). Without it every worker's torch starts a pool
    as wide as the machine and they spin against each other: on this 2-core machine with three workers the published
    presets' fake runs took 270 s instead of 37 s and the FID/IS test 244 s instead of 77 s."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers > 1:
        threads = str(max(1, (os.cpu_count() or 1) // workers))
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(name, threads)


_share_the_cores_among_workers()


def _cache_bytecode() -> None:
    """Let this process, the xdist workers and every subprocess a test starts (servers, tools, accelerate, the
    leaderboard worker) write and reuse compiled modules (``__pycache__``, git-ignored), also where
    ``PYTHONDONTWRITEBYTECODE`` is set, as it is on the machine this suite is timed on: there each process compiled
    the project and rewrote the test modules anew, 11 s instead of 6.5 s of CPU to collect the suite, per worker."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


_cache_bytecode()


def _cheap_token_hashes() -> None:
    """The tests' throwaway accounts hash their tokens at scrypt N = 16 instead of 16,384 (a hash says its cost, so
    servers the tests start as subprocesses check them alike). Sign-ins cost 40 ms of CPU each at the real cost: the
    quick tier made about 600 of them. tests/test_annotators.py checks and times the real cost."""
    import datamodel.annotators as annotators

    annotators.TOKEN_HASH_COST = annotators.ScryptCost(n=16)


_cheap_token_hashes()

from support.arena import (  # noqa: E402,F401
    MODELS,
    SmallArena,
    build_small_arena,
    command_line_env,
    make_image,
    prompt_count,
    render_all,
    small_prompts,
)
from support.browser import BrowserSession  # noqa: E402
from support.cache import MODEL_SOURCES, build_once, forget_cut_short_training  # noqa: E402
from support.databases import pool_for  # noqa: E402
from support.shared import SHARED  # noqa: E402,F401  (older tests import these names from conftest)

from core.settings import Settings  # noqa: E402
from datamodel.connection import connect  # noqa: E402


def _on_postgresql(item) -> bool:
    """Whether the test needs the PostgreSQL server: a both_engines test's second run (or another fixture
    parametrized by the engine's name), or a test asking for the server itself."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return "postgresql" in params.values() or "postgres_server" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    """A test that drives the browser is a browser test, whatever its module says. Under pytest-xdist the long tiers
    run first (slow and install, then browser, each in file order), so the minute-long tests start while the short
    ones fill the other workers, instead of ending the run on one worker while the others idle."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
        if _on_postgresql(item):
            item.add_marker(pytest.mark.postgresql)
    if getattr(config.option, "numprocesses", None):
        def tier(item) -> int:
            if item.get_closest_marker("slow") or item.get_closest_marker("install"):
                return 0
            return 1 if item.get_closest_marker("browser") else 2
        items.sort(key=tier)  # stable: the same order on every worker, as xdist requires


# --- both engines -----------------------------------------------------------------------------------------------
# A test module marked ``pytestmark = pytest.mark.both_engines`` runs each test that uses ``db``, ``small_arena`` or
# ``database_url`` twice: on SQLite and on a real PostgreSQL (Debian's server, started once per test session on a
# free port in a temporary folder by tools.postgres_server and stopped at the end; each test gets a fresh database
# copied from a migrated template: a database an earlier test of the process used, reset to the template's
# rows by support/databases.py, or a new copy). Every other test uses SQLite only.


def pytest_configure(config):
    config.addinivalue_line("markers", "both_engines: run the module's database tests on SQLite and PostgreSQL")
    config.addinivalue_line("markers", "own_worker: the test's leaderboard services spawn their own worker process "
                                       "(tests/test_snapshots.py; the others share the session's)")


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
    pool = pool_for(request.getfixturevalue("postgres_server").url())
    name = pool.take("arena_template")  # a used database reset, or a new one (support/databases.py)
    yield pool.url(name)
    pool.give_back(name)


@pytest.fixture
def db(engine, request):
    """A fresh arena database: in memory on SQLite, or a new PostgreSQL database in a both_engines module."""
    database = connect(":memory:" if engine == "sqlite" else request.getfixturevalue("database_url"))
    yield database
    database.close()


def engine_settings(engine: str, request) -> dict:
    """The settings that put a test's arena on its engine: none for SQLite (``db_path``), a fresh PostgreSQL
    database's URL (``database_url``) otherwise."""
    return {} if engine == "sqlite" else {"database_url": request.getfixturevalue("database_url")}


@pytest.fixture
def small_arena(tmp_path, engine, request) -> Iterator[SmallArena]:
    arena = build_small_arena(tmp_path, **engine_settings(engine, request))
    yield arena
    arena.db.close()


@pytest.fixture
def arena_env(small_arena, monkeypatch, tmp_path):
    """The small arena, closed, with ARENA_DB / ARENA_MEDIA_DIR pointing at it, no other ARENA_* variable or
    OPENAI_API_KEY, short judge retries, and ``tmp_path`` as the working directory: for the command lines."""
    small_arena.db.close()
    return command_line_env(small_arena, monkeypatch, tmp_path)


@pytest.fixture
def suites_cli(tmp_path, capsys):
    """``run(*argv)``: ``python -m arena suites <argv>`` on a fresh database in ``tmp_path``; (code, out, err)."""
    from arena.suite_commands import main

    settings = Settings(db_path=tmp_path / "arena.db", cache_dir=tmp_path / "cache", demo=False)

    def run(*argv) -> tuple[int, str, str]:
        code = main(["suites", *map(str, argv)], lambda: settings)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def browser_session():
    session = BrowserSession()
    yield session
    session.close()


@pytest.fixture
def browser(browser_session):
    """Chromium for this test: open pages with ``browser.new_page(viewport=...)`` (each in a fresh context)."""
    with browser_session.lend() as lent:
        yield lent


@pytest.fixture(scope="session")
def artefact_cache() -> Path:
    """A cache folder for the tiny pipelines and the demo CLIP, keyed by a hash of the code that builds them."""
    folder = build_once("models", MODEL_SOURCES, lambda folder: None)  # filled as the code under test asks
    forget_cut_short_training(folder)
    return folder


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


@pytest.fixture(scope="module")
def plain_app(tmp_path_factory):
    """(arena, url): one app with the default settings, served to a module's tests that need nothing else."""
    from support.webapp import running_app

    arena = build_small_arena(tmp_path_factory.mktemp("plain"))
    with running_app(arena.settings) as url:
        yield arena, url
    arena.db.close()
