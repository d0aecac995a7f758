"""The test artefact cache: what is expensive to build (the tiny pipelines and the demo CLIP, the web-only
virtualenv, fschat) is built once per hash of the code or recipe that builds it, and reused by every later run.

The cache lives outside the checkout, so a fresh clone reuses what an earlier run on the machine built:
``$ARENA_TEST_CACHE``, else ``$XDG_CACHE_HOME/t2i-arena-tests``, else ``~/.cache/t2i-arena-tests``. Each artefact is
a folder ``<name>-<hash>``, the hash being SHA-256 over the named source files' bytes (and any extra text such as a
list of pins): a change to what builds it gives a new folder, so a stale artefact is never used and two checkouts of
different code never share one. :func:`build_once` builds under a file lock, so two test runs at once (two clones on
one machine) build it once between them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What the tiny pipelines and the demo CLIP are built from (the ``artefact_cache`` fixture's folder holds both).
MODEL_SOURCES = ("generators/tiny.py", "generators/smoke.py", "generators/procedural.py",
                 "arena/demo/clip.py", "judges/metrics/clip_scores.py", "suites/data/demo_glyphs.json")
DONE = ".built"  # written last: a folder without it is a build that did not finish, and is built again
KEEP_DAYS = 14  # artefacts of older code not used for this long are removed when a new one is built


def cache_root() -> Path:
    configured = os.environ.get("ARENA_TEST_CACHE")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "t2i-arena-tests"


def source_hash(sources: tuple[str, ...], extra: str = "") -> str:
    """SHA-256 (16 hex digits) over the files ``sources`` (paths relative to the checkout) and ``extra``."""
    digest = hashlib.sha256(extra.encode())
    for source in sources:
        digest.update(source.encode() + b"\0" + (ROOT / source).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def artefact_dir(name: str, *sources: str, extra: str = "") -> Path:
    """The folder of artefact ``name`` built from ``sources`` (it may not exist yet)."""
    return cache_root() / f"{name}-{source_hash(sources, extra)}"


@contextlib.contextmanager
def _locked(path: Path, *, wait: bool = True):
    """Hold the lock file ``path``; with ``wait=False`` raise BlockingIOError at once when another process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _prune(name: str, keep: Path) -> None:
    """Remove folders of ``name`` built from other code and unused for :data:`KEEP_DAYS` days."""
    cutoff = time.time() - KEEP_DAYS * 86400
    for other in cache_root().glob(f"{name}-*"):
        done = other / DONE
        if not re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", other.name):  # a lock file, or another name
            continue
        if other == keep or not other.is_dir():
            continue
        with contextlib.suppress(OSError):  # BlockingIOError: a build under way there; leave it
            with _locked(other.with_suffix(".lock"), wait=False):
                if not done.exists() or done.stat().st_mtime < cutoff:
                    shutil.rmtree(other, ignore_errors=True)


def build_once(name: str, sources: tuple[str, ...], build: Callable[[Path], object], *, extra: str = "") -> Path:
    """The folder of artefact ``name``, built by ``build(folder)`` unless a finished build is there already.

    ``build`` fills the empty folder in place (a virtualenv cannot move); it may raise (e.g. ``pytest.skip``), and
    the half-built folder is removed. A finished folder is touched at each use, so :func:`_prune` keeps it.
    """
    folder = artefact_dir(name, *sources, extra=extra)
    done = folder / DONE
    if not done.exists():
        with _locked(folder.with_suffix(".lock")):
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                try:
                    build(folder)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                done.write_text(f"{name} built from {', '.join(sources) or extra}\n")
        _prune(name, folder)  # outside this build's lock: two runs pruning each other never wait on each other
    done.touch()
    return folder


def forget_cut_short_training(cache_dir: Path) -> None:
    """Remove a demo CLIP whose training stopped at its time limit (a busy machine): the product keeps it (its
    recipe matches), but a shared cache would hand the undertrained model to every later run, so the next run trains
    it again instead."""
    folder = cache_dir / "tiny" / "demo-emoji-clip"
    with contextlib.suppress(OSError, ValueError, KeyError):
        record = json.loads((folder / "training.json").read_text(encoding="utf-8"))
        if record["steps"] < record["recipe"]["steps"]:
            shutil.rmtree(folder, ignore_errors=True)


def link_or_copy(source: str, target: str) -> None:
    """``shutil.copytree``'s ``copy_function`` for folders taken from the cache that the test only reads: a hard link
    (no bytes copied), or a copy where the cache and the test's folder are on different file systems."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
