"""Study-scale databases for tests (:mod:`tools.scale_fixture`): one built into a test's folder, or the small run's
database of the benchmarks taken from the test artefact cache."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.cache import ROOT, build_once, link_or_copy

from datamodel.connection import connect
from tools.scale_fixture import ScaleSpec, build_scale_database, cached_scale_database

BENCH_SPEC = ScaleSpec(votes=4000, annotators=80, models=5, prompts=60)  # the benchmarks' small runs' database
# what cached_scale_database builds it from: the fixture's code and the data model that writes it
FIXTURE_SOURCES = tuple(sorted(str(path.relative_to(ROOT)) for path in (ROOT / "datamodel").rglob("*.py"))) + (
    "tools/scale_fixture.py",)


def study_database(folder: Path, spec: ScaleSpec):
    """A study database of ``spec`` built in ``folder`` (``arena.db``, ``media/``), connected."""
    build_scale_database(spec, folder / "arena.db", folder / "media", progress=lambda *_: None)
    return connect(folder / "arena.db")


def bench_cache_dir(tmp_path: Path) -> Path:
    """A ``--cache-dir`` already holding :data:`BENCH_SPEC`'s database (``scale/<key>/``), taken from the test artefact
    cache, where it is built once per hash of :data:`FIXTURE_SOURCES` instead of once per run. A run only reads it
    (it works on copies): the database is copied, the media linked."""
    built = build_once("scale-fixture", FIXTURE_SOURCES,
                       lambda folder: cached_scale_database(BENCH_SPEC, folder, progress=lambda line: None))
    source, target = built / "scale" / BENCH_SPEC.key(), tmp_path / "cache" / "scale" / BENCH_SPEC.key()
    shutil.copytree(source, target, copy_function=link_or_copy, ignore=shutil.ignore_patterns("arena.db*"))
    shutil.copy2(source / "arena.db", target / "arena.db")
    return tmp_path / "cache"
