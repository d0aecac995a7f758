"""A large board is shown before its inter-annotator statistics (the worker's first snapshot of a set of filters is
staged: :mod:`arena.leaderboard.service`), says that they are being computed, and the service completes it by itself;
every figure of both snapshots is the one the full computation gives."""

from __future__ import annotations

import concurrent.futures
import json
import time

import pytest
from support.study import study_database

import arena.leaderboard.compute as leaderboard_compute
from arena.leaderboard.compute import BoardCache, LeaderboardOptions, compute_leaderboard
from arena.leaderboard.service import SnapshotService, compute_snapshot, incomplete
from arena.leaderboard.text import PENDING_INTER
from arena.leaderboard.view import render_view
from arena.web.leaderboard_tab import age_text
from datamodel.connection import Store
from tools.scale_fixture import ScaleSpec

SPEC = ScaleSpec(votes=3_000, annotators=40, models=5, prompts=40, seed=11)
OPTIONS = LeaderboardOptions(rounds=50, min_votes=5, provisional_votes=20, pair_min_shared=3, max_pairs=10)
BOARD = ("headline", "plan", "notes", "json", "figures")  # everything but the inter-annotator parts
PARTS = ("summary", "text", "tables")  # where the inter-annotator statistics show


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("study")


@pytest.fixture(scope="module")
def study(folder):
    """One study database for the module (``folder``/arena.db): the tests add leaderboard snapshots to it, never
    votes."""
    db = study_database(folder, SPEC)
    yield db
    db.close()


@pytest.fixture
def large_from(monkeypatch):
    """This study's 2,700 human votes count as a large slice."""
    monkeypatch.setattr(leaderboard_compute, "STAGED_FROM", 1_000)


def rendered(db, options: LeaderboardOptions, cache: BoardCache | None = None, staged: bool = False) -> dict:
    view = render_view(compute_leaderboard(db, options, cache, staged=staged), options, history=[], now=2e9)
    return json.loads(json.dumps(view, sort_keys=True, default=str))


def test_a_staged_board_is_the_full_board_without_the_inter_annotator_statistics(study, large_from):
    full = rendered(study, OPTIONS)
    cache = BoardCache()
    staged = rendered(study, OPTIONS, cache, staged=True)
    assert staged["pending"] == ["inter_annotator"] and "pending" not in full
    assert {part: staged[part] for part in BOARD} == {part: full[part] for part in BOARD}
    assert PENDING_INTER in staged["summary"] and PENDING_INTER in staged["text"]
    assert "Inter-annotator:" in full["summary"] and "Inter-annotator:" not in staged["summary"]
    assert staged["tables"]["pairs"]["data"] == [] and full["tables"]["pairs"]["data"]
    assert {name: table for name, table in staged["tables"].items() if name != "pairs"} == \
        {name: table for name, table in full["tables"].items() if name != "pairs"}
    # the completion from the worker's cache (the vote arrays and the staged board it kept) is the full board, to
    # the last figure
    assert OPTIONS in cache.staged
    assert rendered(study, OPTIONS, cache) == full
    assert OPTIONS not in cache.staged
    # once the slice's annotators' fits are kept, a staged computation has nothing to leave out
    assert rendered(study, OPTIONS, cache, staged=True) == full


def test_a_small_slice_is_never_staged(study):
    assert rendered(study, OPTIONS, BoardCache(), staged=True) == rendered(study, OPTIONS)


def test_the_service_shows_the_board_first_and_completes_it_by_itself(study, folder, large_from, monkeypatch):
    """The worker runs in a thread here (the large-slice threshold is patched in this process); the process pool's
    own tests are in test_snapshots."""
    submitted = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

    def in_thread(service):
        class Recording:
            def submit(self, function, *args):
                submitted.append(args[3:])  # the staged flag, when given
                return pool.submit(function, *args)

            def shutdown(self, **kwargs):
                pool.shutdown(wait=True)
        return Recording()

    monkeypatch.setattr(SnapshotService, "_pool", in_thread)
    service = SnapshotService(Store(folder / "arena.db"), refresh_s=3600.0, keep=3)
    try:
        first, status = service.view(study, OPTIONS, wait_s=60)
        assert incomplete(first) and PENDING_INTER in first.view["summary"]
        assert status == "updating" and "agreement between annotators is being computed" in age_text(first, status)
        deadline = time.monotonic() + 60
        while incomplete(shown := service.view(study, OPTIONS)[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not incomplete(shown) and shown.data_version == first.data_version
        assert submitted == [(True,), ()]  # the staged board, then its completion, asked by no viewer
        full = compute_snapshot(study, OPTIONS)
        for part in PARTS + ("json",):
            assert shown.view[part] == full.view[part], part
        assert service.view(study, OPTIONS) == (shown, "")  # complete and fresh: nothing more to compute
        assert len(submitted) == 2
        # a viewer that read the staged board just before its completion was stored (once seen in CI under load: a
        # third computation) starts nothing: the completion of this very data is in memory by the time it asks
        latest = service.latest
        stale = iter([first])
        monkeypatch.setattr(service, "latest", lambda db, key: next(stale, None) or latest(db, key))
        again, status = service.view(study, OPTIONS)
        assert len(submitted) == 2, submitted
        assert not incomplete(again) and status == ""
    finally:
        service.close()
