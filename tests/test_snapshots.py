"""Leaderboards from snapshots: computed in a worker process, served at once, recomputed when the data changed."""

from __future__ import annotations

import concurrent.futures
import os
import random
import re
import threading
import time

import pytest
from support.webapp import shared_leaderboard_worker

from arena import session as sessions
from arena.commands import main
from arena.leaderboard.compute import LeaderboardOptions
from arena.leaderboard.service import SnapshotService, compute_snapshot, data_version, options_key, stored_snapshot
from datamodel.connection import Store
from datamodel.snapshots import claim_computation, release_computation

pytestmark = pytest.mark.both_engines

OPTIONS = LeaderboardOptions(rounds=20, min_votes=1)


def vote(arena, times: int, name: str = "snap-voter") -> None:
    session = sessions.start(arena.db, name, "token-001", open_signup=True)
    for i in range(times):
        session = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), session), "A", rules=None)


def human_votes(snapshot) -> int:
    found = re.match(r"([\d,]+) human votes?\b", snapshot.view["summary"])
    assert found is not None, snapshot.view["summary"]
    return int(found.group(1).replace(",", ""))


@pytest.fixture(autouse=True)
def one_worker_for_the_session(request):
    """The services of these tests share the session's leaderboard worker (support.webapp): a worker of their own
    is a spawned process importing the numeric libraries anew, two to three seconds of CPU each. The tests marked
    ``own_worker`` start one, as the app does."""
    if request.node.get_closest_marker("own_worker"):
        yield
        return
    with shared_leaderboard_worker():
        yield


@pytest.fixture
def service(small_arena):
    service = SnapshotService(Store(small_arena.settings.database), refresh_s=0.0, keep=3)
    yield service
    service.close()


def wait_for(condition, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.own_worker
def test_the_worker_runs_at_the_configured_lower_priority(small_arena):
    """ARENA_LEADERBOARD_WORKER_NICE: 19 (the default) lets the server's votes go first; 0 keeps the server's
    priority, for a machine shared with other busy programs, where a worker at 19 waited tens of seconds for the CPU
    (a CI run's browser test: the Leaderboard tab's first board took 10-21 s with two other busy processes, 0.6-1.4 s
    without). One test for both values: tests/test_tiers.py counts a test per function here."""
    server = os.nice(0)
    for niceness in (19, 0):
        service = SnapshotService(Store(small_arena.settings.database), refresh_s=0.0, keep=3, niceness=niceness)
        try:
            assert service._pool().submit(os.nice, 0).result(timeout=60) == min(server + niceness, 19), niceness
        finally:
            service.close()


@pytest.mark.own_worker
def test_the_first_viewer_waits_then_every_viewer_gets_the_snapshot_at_once(small_arena, service):
    vote(small_arena, 3)
    snapshot, status = service.view(small_arena.db, OPTIONS, wait_s=60)
    assert snapshot is not None and status == "" and human_votes(snapshot) == 3
    assert snapshot.data_version == data_version(small_arena.db)
    scheduled = []
    schedule = service._schedule
    service._schedule = lambda *args: scheduled.append(args) or schedule(*args)
    again, status = service.view(small_arena.db, OPTIONS, wait_s=60)
    assert again is snapshot and status == "" and scheduled == []  # at once: nothing to compute or wait for
    # stored in the database, where the command line and a restarted server find it
    stored = wait_for(lambda: stored_snapshot(small_arena.db, options_key(OPTIONS)))
    assert stored.view == snapshot.view


@pytest.mark.slow
def test_new_votes_give_the_old_snapshot_at_once_and_a_new_one_in_the_background(small_arena, service):
    vote(small_arena, 2)
    first, _ = service.view(small_arena.db, OPTIONS, wait_s=60)
    vote(small_arena, 3, name="second-voter")
    assert data_version(small_arena.db) != first.data_version
    shown, status = service.view(small_arena.db, OPTIONS, wait_s=60)
    assert shown is first and status == "updating"  # never waits when it has something to show
    newer = wait_for(lambda: (s := service.view(small_arena.db, OPTIONS)[0]) is not first and s)
    assert human_votes(newer) == 5


def test_new_votes_right_after_a_computation_ends_start_the_next_while_the_last_is_still_being_stored(
        small_arena, service, monkeypatch):
    """The first viewer is woken with the snapshot while the service still stores it (a slow write, as on a loaded
    machine): a viewer who comes after new votes in that moment starts their computation and is told "updating"."""
    import arena.leaderboard.service as leaderboard_service

    store = leaderboard_service.store_snapshot
    monkeypatch.setattr(leaderboard_service, "store_snapshot", lambda *args: (time.sleep(1.0), store(*args)))
    vote(small_arena, 2)
    first, _ = service.view(small_arena.db, OPTIONS, wait_s=60)
    vote(small_arena, 3, name="second-voter")
    shown, status = service.view(small_arena.db, OPTIONS)
    assert shown is first and status == "updating"
    newer = wait_for(lambda: (s := service.view(small_arena.db, OPTIONS)[0]) is not first and s)
    assert human_votes(newer) == 5


@pytest.mark.slow
def test_a_snapshot_younger_than_refresh_s_is_recomputed_only_on_request(small_arena):
    service = SnapshotService(Store(small_arena.settings.database), refresh_s=3600.0, keep=3)
    try:
        first, _ = service.view(small_arena.db, OPTIONS, wait_s=60)
        vote(small_arena, 1)
        assert service.view(small_arena.db, OPTIONS) == (first, "")
        assert service.view(small_arena.db, OPTIONS, refresh=True)[1] == "updating"
        newer = wait_for(lambda: (s := service.view(small_arena.db, OPTIONS)[0]) is not first and s)
        assert human_votes(newer) == 1
    finally:
        service.close()


def test_one_computation_per_set_of_filters_and_a_bounded_number_waiting(small_arena, service, monkeypatch):
    submitted = []
    release = threading.Event()
    original = concurrent.futures.ProcessPoolExecutor.submit

    def submit(pool, function, *args):
        submitted.append(args[1] if len(args) > 1 else None)
        if function.__name__ != "_compute_in_worker":
            return original(pool, function, *args)
        future = concurrent.futures.Future()  # held until released: the computations stay pending
        threading.Thread(target=lambda: (release.wait(30), future.set_exception(RuntimeError("held")))).start()
        return future

    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "submit", submit)
    viewers = [threading.Thread(target=service.view, args=(small_arena.db, OPTIONS)) for _ in range(8)]
    for viewer in viewers:
        viewer.start()
    for viewer in viewers:
        viewer.join()
    assert submitted == [OPTIONS]  # eight viewers of one set of filters, one computation
    for suite in ("taxonomy", "commonsense", "nope"):  # keep=3: the fourth set of filters is not started
        service.view(small_arena.db, LeaderboardOptions(rounds=20, suite=suite))
    assert len(submitted) == 3
    assert service.view(small_arena.db, LeaderboardOptions(rounds=20, suite="nope")) == (None, "")
    release.set()
    wait_for(lambda: "held" in service.view(small_arena.db, OPTIONS)[1])  # the failure is reported, not retried
    assert len(submitted) == 3


def test_the_command_line_prints_the_latest_snapshot_and_recomputes_on_request(small_arena, monkeypatch, capsys):
    settings = small_arena.settings
    for name, value in (("ARENA_DB", settings.db_path), ("ARENA_DATABASE_URL", settings.database_url),
                        ("ARENA_MEDIA_DIR", settings.media_dir), ("ARENA_DEMO", "false"),
                        ("ARENA_BOOTSTRAP_ROUNDS", "20")):
        monkeypatch.setenv(name, str(value))
    vote(small_arena, 2)
    assert main(["leaderboard"]) == 0
    assert "(computed now in" in capsys.readouterr().out
    assert main(["leaderboard"]) == 0
    assert "nothing changed since)\n2 human votes" in capsys.readouterr().out
    vote(small_arena, 1, name="late-voter")
    assert main(["leaderboard"]) == 0
    out = capsys.readouterr().out
    assert "the data changed since: pass --fresh to recompute)\n2 human votes" in out
    assert main(["leaderboard", "--fresh"]) == 0
    assert "3 human votes" in capsys.readouterr().out


@pytest.mark.own_worker
def test_the_page_never_gets_the_command_lines_board_without_figures(small_arena, service):
    """The command line stores the board it printed without figures (it draws none); the page, which shows them,
    computes its own rather than serve that one."""
    vote(small_arena, 2)
    key = options_key(OPTIONS)
    compute_snapshot(small_arena.db, OPTIONS, keep=3, figures=False)
    printed = stored_snapshot(small_arena.db, key)
    assert "figures" not in printed.view and printed.view["text"] and printed.view["json"]["models"]
    assert service.latest(small_arena.db, key) is None
    snapshot, status = service.view(small_arena.db, OPTIONS, wait_s=60)
    assert status == "" and set(snapshot.view["figures"]) == {"chart", "confusion", "outcomes", "wins", "counts",
                                                               "history"}
    assert {name: value for name, value in snapshot.view.items() if name != "figures"} == printed.view


def test_every_change_the_leaderboard_shows_moves_the_data_version(small_arena):
    from datamodel.catalog import add_model

    db = small_arena.db
    before = data_version(db)
    vote(small_arena, 1)
    after_vote = data_version(db)
    db.execute("UPDATE votes SET excluded = 1")  # an admin's or the quality rules' exclusion
    after_exclusion = data_version(db)
    add_model(db, "late-model")
    after_model = data_version(db)
    assert len({before, after_vote, after_exclusion, after_model}) == 4


@pytest.fixture
def computations(monkeypatch) -> list:
    """The options of each leaderboard computation sent to a worker process from now on, in order."""
    computed = []
    original = concurrent.futures.ProcessPoolExecutor.submit

    def submit(pool, function, *args):
        if function.__name__ == "_compute_in_worker":
            computed.append(args[1])
        return original(pool, function, *args)

    monkeypatch.setattr(concurrent.futures.ProcessPoolExecutor, "submit", submit)
    return computed


def test_a_replica_that_claims_after_another_stored_the_snapshot_does_not_compute_it_again(small_arena, computations):
    """The race a loaded run met (three computations for two changes of the data): replica B reads the data's version
    and an old snapshot, replica A stores the new snapshot and releases its claim, then B claims the computation. B
    must find A's snapshot under its claim and compute nothing."""
    first, second = (SnapshotService(Store(small_arena.settings.database), refresh_s=0.0, keep=3, shared=True)
                     for _ in range(2))
    try:
        vote(small_arena, 2)
        stored = wait_for(lambda: first.view(small_arena.db, OPTIONS, wait_s=60)[0])
        assert len(computations) == 1 and stored.data_version == data_version(small_arena.db)
        key = options_key(OPTIONS)  # A stores its snapshot, then releases its claim: wait until a probe can claim it
        wait_for(lambda: claim_computation(small_arena.db, key, "probe", now=time.time(), hold_s=60))
        release_computation(small_arena.db, key, "probe")
        assert second._schedule(options_key(OPTIONS), OPTIONS, data_version(small_arena.db)) is None
        assert len(computations) == 1
        assert second.view(small_arena.db, OPTIONS)[0].computed_at == stored.computed_at  # A's, from the table
    finally:
        first.close()
        second.close()


def test_replicas_compute_each_snapshot_once_and_all_show_the_newest(small_arena, computations):
    """Two app replicas on one database (two services, two stores), viewers on both at once: one computation per
    change of the data, stored for both; each shows the other's newer snapshot (PostgreSQL's shared mode, here on
    both engines)."""
    replicas = [SnapshotService(Store(small_arena.settings.database), refresh_s=0.0, keep=3, shared=True)
                for _ in range(2)]
    try:
        vote(small_arena, 2)
        viewers = [threading.Thread(target=replica.view, args=(small_arena.db, OPTIONS), kwargs={"wait_s": 60})
                   for replica in replicas for _ in range(4)]
        for viewer in viewers:
            viewer.start()
        for viewer in viewers:
            viewer.join()
        assert len(computations) == 1  # eight viewers on two replicas: one computation
        first = [wait_for(lambda r=replica: r.view(small_arena.db, OPTIONS)[0]) for replica in replicas]
        assert human_votes(first[0]) == human_votes(first[1]) == 2
        vote(small_arena, 3, name="second-voter")
        shown = [replica.view(small_arena.db, OPTIONS) for replica in replicas]  # due on both: one claims it
        assert [status for _, status in shown] == ["updating", "updating"]
        newest = [wait_for(lambda r=replica: (s := r.view(small_arena.db, OPTIONS)[0]) and human_votes(s) == 5 and s)
                  for replica in replicas]
        assert newest[0].computed_at == newest[1].computed_at and len(computations) == 2
    finally:
        for replica in replicas:
            replica.close()
