"""Leaderboards served from snapshots, computed in a worker process off the vote path.

A leaderboard of a million votes takes seconds of CPU to compute
(:func:`arena.leaderboard.compute.compute_leaderboard`).
Computed in the process that serves votes, on each viewer's timer tick, it stalled every vote behind it. Here a
viewer (the web tab, its timer, its API, the command line) always gets the latest *snapshot* for its filters at
once, with its age; the computing happens elsewhere:

- A snapshot is the leaderboard as shown (:func:`arena.leaderboard.view.render_view`) with the ``data_versions``
  counters it was computed at (:mod:`datamodel.schema`: triggers raise them on every change to the votes, metrics and
  catalog). Equal counters mean nothing shown has changed.
- When a viewer asks for filters whose snapshot is missing, or whose data changed and which is at least
  ``refresh_s`` old (or the viewer asks to refresh), the :class:`SnapshotService` hands the filters to one worker
  process (``concurrent.futures.ProcessPoolExecutor``, spawned, at a lower CPU priority than the server): at most one
  computation per set of filters at a time, at most ``keep`` waiting, so no request can start unbounded work.
- The worker hands each snapshot back; the server keeps the ``keep`` most recently viewed in memory and stores them
  in the ``leaderboard_snapshots`` table (the ``keep`` most recently computed). The ratings of the server's own
  boards (:func:`keeps_history`: every filter at its setting, all suites or one) become the board of their day
  (``leaderboard_history``, :mod:`datamodel.rating_history`: the leaderboard over time); a viewer's other filters
  read the history but never write it (before, 36 anonymous views with valid menu values pushed every kept day of
  the default board out). The command line reads those tables, so it prints what the server shows without
  computing anything.
- A viewer with no snapshot at all may wait for the first one (``wait_s``); one with a snapshot never waits.
- The first snapshot of a set of filters on a large slice (:data:`arena.leaderboard.compute.STAGED_FROM` of the
  arena's own human votes, and the worker holds no annotator's fit of it yet: a fresh worker, new filters) is
  *staged*: the board comes without the inter-annotator statistics (the page says they are being computed; the
  snapshot's view lists them in ``pending``), and the service asks the worker for the complete snapshot as soon as
  it has stored that one, from the board and the vote arrays the worker kept. At a million votes the board is shown
  after 1.3 s of the worker's CPU rather than 2.0 s; the rest comes 1.0 s later (``python -m tools.interval_timing``).
- The worker keeps what did not change between snapshots (:class:`arena.leaderboard.compute.BoardCache`, one per
  service:
  :func:`worker_cache`): the vote arrays of the last two slices, extended by the votes added since; each annotator's
  own fit for the consensus Spearman, refitted only for those who voted; the inter-annotator statistics of votes that
  did not change. A refresh after new votes costs what changed; every figure is the one a fresh computation gives.
- Several app replicas on one PostgreSQL database (``shared``, the default there) compute each snapshot once for all
  of them: a replica computes only under a claim on the filters (``snapshot_claims``, :func:`datamodel.snapshots.
  claim_computation`, which one replica at a time gets; it lapses after ``claim_s`` should its holder die), and
  before serving a snapshot from memory it checks (one primary-key read) whether another replica stored a newer one,
  so every replica shows the newest computed anywhere. A viewer whose filters another replica is computing sees
  "updating"; one without any snapshot waits for it in the table.
- The worker dies with the server, however the server ends (SIGTERM, kill -9, the OOM killer): a thread in the worker
  watches its parent process and ends the worker within ``PARENT_CHECK_S`` once the parent is gone.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import logging
import multiprocessing
import os
import secrets
import socket
import threading
import time
from collections import OrderedDict
from typing import TypeGuard

from arena.leaderboard.compute import BoardCache, LeaderboardOptions, compute_leaderboard
from arena.leaderboard.view import render_view
from datamodel.connection import Store, connect, database_errors
from datamodel.database import Database
from datamodel.rating_history import history
from datamodel.snapshots import (
    Snapshot,
    claim_computation,
    data_version,
    release_computation,
    snapshot_computed_at,
    store_snapshot,
    stored_snapshot,
)

log = logging.getLogger(__name__)
WORKER_NICENESS = 19  # the worker yields the CPU to the server, which answers votes (ARENA_LEADERBOARD_WORKER_NICE)
PARENT_CHECK_S = 0.5  # how often the worker checks that the server that started it still runs
MAX_WAITING = 4  # viewers that may wait for a first snapshot at once (each holds a server thread meanwhile)
CLAIM_S = 300.0  # a replica's claim on computing a snapshot lapses after this long (its holder died)
SETTLE_S = 10.0  # the most a viewer waits for a finished computation's outcome to be stored before deciding anew


# options added after boards were first kept: left out of the key at their defaults, so those boards keep their keys
LATER_OPTIONS = ("provisional_votes", "order", "intervals", "robustness_top", "mode")


def options_key(options: LeaderboardOptions) -> str:
    """The set of filters (and fit settings) a snapshot is for, as canonical JSON."""
    values = dataclasses.asdict(options)
    for name in LATER_OPTIONS:
        if values[name] == getattr(LeaderboardOptions, name):
            del values[name]
    return json.dumps(values, sort_keys=True)


def keeps_history(options: LeaderboardOptions, defaults: LeaderboardOptions | None) -> bool:
    """Whether the board of ``options`` is one whose days the server keeps: ``defaults`` (every filter at its
    setting: :func:`arena.leaderboard.compute.leaderboard_options`) for all suites or for one suite, as of now. None
    keeps
    none."""
    return defaults is not None and options.until is None and dataclasses.replace(options, suite=None) == defaults


def compute_snapshot(db: Database, options: LeaderboardOptions, keep: int | None = None,
                     history_days: int = 0, cache: BoardCache | None = None, figures: bool = True,
                     staged: bool = False) -> Snapshot:
    """Compute the leaderboard of ``options`` as a snapshot, with the boards kept for the same filters on earlier
    days (the rating-history chart); store it too unless ``keep`` is None (and keep it as today's board, for
    ``history_days``). ``cache``: what the worker keeps between snapshots
    (:class:`arena.leaderboard.compute.BoardCache`). ``figures=False`` (the command line) draws none: the page never
    serves such a snapshot (:func:`drawn`), the command line does. ``staged``: the board first on a large slice
    (:func:`arena.leaderboard.compute.compute_leaderboard`; :func:`incomplete`)."""
    version = data_version(db)  # read before the votes: a vote arriving meanwhile makes the snapshot stale, not wrong
    started, computed_at = time.perf_counter(), time.time()
    key = options_key(options)
    view = render_view(compute_leaderboard(db, options, cache, staged=staged), options,
                       history=history(db, key) if figures else None, now=computed_at, figures=figures)
    snapshot = Snapshot(key, view, version, computed_at, time.perf_counter() - started)
    if keep is not None:
        store_snapshot(db, snapshot, keep, history_days)
    return snapshot


def _holds(snapshot: Snapshot | None, version: tuple) -> bool:
    """Whether ``snapshot`` is the complete board of data ``version``: computing it again would give the same. A
    computation that ended between a viewer's read of the board before it and the viewer's ask stored it (under
    load a staged board's completion was computed twice)."""
    return snapshot is not None and not incomplete(snapshot) and snapshot.data_version == version


def incomplete(snapshot: Snapshot | None) -> bool:
    """Whether ``snapshot`` is a staged one whose inter-annotator statistics are still being computed."""
    return snapshot is not None and bool(snapshot.view.get("pending"))


def drawn(snapshot: Snapshot | None) -> TypeGuard[Snapshot]:
    """Whether ``snapshot`` holds the page's figures (the command line stores its boards without them)."""
    return snapshot is not None and "figures" in snapshot.view


def rebuild_history(db: Database, options: LeaderboardOptions, days: int, *, history_days: int,
                    keep: int | None = None, now: float | None = None) -> list[str]:
    """Keep a board for each of the ``days`` days before today that has none for ``options``' filters, computed from
    the votes cast by the end of that day (:attr:`arena.leaderboard.compute.LeaderboardOptions.until`); days already
    kept are
    left as they are. Returns the days it kept, oldest first. A day's board uses today's exclusions and models."""
    from arena.leaderboard.view import leaderboard_json
    from datamodel.rating_history import day_of, end_of_day, keep_day, kept_days

    now = time.time() if now is None else now
    key = options_key(options)
    have = set(kept_days(db, key))
    made = []
    for back in range(min(days, history_days), 0, -1):
        day = day_of(now - back * 86400)
        if day in have:
            continue
        until = end_of_day(day)
        dated = dataclasses.replace(options, until=until)
        keep_day(db, key, leaderboard_json(compute_leaderboard(db, dated), dated), until, days=history_days,
                 keep=keep)
        made.append(day)
    return made


def _start_worker(parent: int, niceness: int = WORKER_NICENESS) -> None:
    """The worker's start: ``niceness`` added to the server's (a lower CPU priority), and a watch on ``parent`` (the
    server's process id)."""
    try:
        os.nice(niceness)
    except OSError:  # not allowed here: run at the same priority
        pass
    threading.Thread(target=_exit_with_parent, args=(parent,), name="exit-with-server", daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` is no longer its parent (it died: the orphan was adopted by init or a
    subreaper), even in the middle of a computation; there is no one left to hand a snapshot to."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


_WORKER_CACHES: OrderedDict[tuple[str, str | None], BoardCache] = OrderedDict()  # the worker's, by (database, service)


def worker_cache(db_path: str, service: str | None = None) -> BoardCache:
    """The worker's :class:`arena.leaderboard.compute.BoardCache` for ``db_path`` as ``service`` (a
    :class:`SnapshotService`'s
    ``holder``) sees it: a new service, even on a database at the same path (a test's, reset), starts empty. Only
    the latest one is kept."""
    key = (db_path, service)
    if key not in _WORKER_CACHES:
        _WORKER_CACHES.clear()
        _WORKER_CACHES[key] = BoardCache()
    return _WORKER_CACHES[key]


def _compute_in_worker(db_path: str, options: LeaderboardOptions, service: str | None = None,
                       staged: bool = False) -> Snapshot:
    """The worker's job: compute (from what it kept of the last snapshots: :func:`worker_cache`), and leave the
    storing to the server, whose writers queue on one lock (a write from this process would make a vote wait in
    SQLite's busy handler, which sleeps up to 100 ms per try). ``staged``: the first snapshot of these filters, the
    board first on a large slice (module docstring)."""
    db = connect(db_path, migrate_schema=False)
    try:
        return compute_snapshot(db, options, cache=worker_cache(db_path, service), staged=staged)
    finally:
        db.close()


def _succeeded(future: concurrent.futures.Future | None) -> Snapshot | None:
    """The snapshot a finished computation returned, else None."""
    if future is None or not future.done() or future.cancelled() or future.exception() is not None:
        return None
    return future.result()


class SnapshotService:
    """The server's leaderboard snapshots (module docstring); thread-safe, one per app."""

    def __init__(self, store: Store, *, refresh_s: float = 30.0, keep: int = 32, history_days: int = 0,
                 history_defaults: LeaderboardOptions | None = None, shared: bool | None = None,
                 claim_s: float = CLAIM_S, niceness: int = WORKER_NICENESS):
        self.store, self.refresh_s, self.keep, self.history_days = store, refresh_s, keep, history_days
        self.niceness = niceness  # added to the server's by the worker at its start
        self.history_defaults = history_defaults  # the server's boards: keeps_history
        self.shared = getattr(store, "postgres", False) if shared is None else shared  # replicas share the database
        self.claim_s = claim_s
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._elsewhere: dict[str, float] = {}  # filters another replica computes: until when we say so
        self._lock = threading.Lock()
        self._memory: OrderedDict[str, Snapshot] = OrderedDict()
        self._pending: dict[str, concurrent.futures.Future] = {}
        self._failed: dict[str, tuple[tuple, str]] = {}  # data version and why a computation failed
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._waiting = threading.BoundedSemaphore(MAX_WAITING)
        self._closed = False

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._executor is None:
            self._executor = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                initargs=(os.getpid(), self.niceness))
        return self._executor

    def _remember(self, snapshot: Snapshot) -> None:
        with self._lock:
            self._memory[snapshot.key] = snapshot
            self._memory.move_to_end(snapshot.key)
            while len(self._memory) > self.keep:
                self._memory.popitem(last=False)

    def latest(self, db: Database, key: str) -> Snapshot | None:
        """The newest snapshot of ``key``: from memory, else from the database (computed earlier, or elsewhere);
        ``shared``, from the database whenever it holds a newer one than memory (another replica computed it)."""
        with self._lock:
            snapshot = self._memory.get(key)
            if snapshot is not None:
                self._memory.move_to_end(key)
        if snapshot is not None:
            if not self.shared:
                return snapshot
            stored_at = snapshot_computed_at(db, key)
            if stored_at is None or stored_at <= snapshot.computed_at:
                return snapshot
        stored = stored_snapshot(db, key)
        if not drawn(stored):  # none, or the command line's without the figures: the page computes its own
            return snapshot
        self._remember(stored)
        return stored

    def _schedule(self, key: str, options: LeaderboardOptions, version: tuple,
                  staged: bool = False) -> concurrent.futures.Future | None:
        """The computation of ``key``, started unless one is under way; None when ``keep`` are already waiting.
        ``staged``: no snapshot of ``key`` yet, so a large board may come first (:func:`incomplete`)."""
        with self._lock:
            future = self._pending.get(key)
            if future is not None:
                return future
            if len(self._pending) >= self.keep:
                return None
        if self.shared and not claim_computation(self.store.db(), key, self.holder, now=time.time(),
                                                 hold_s=self.claim_s):
            with self._lock:  # another replica computes it: it stores the snapshot for all
                self._elsewhere[key] = time.monotonic() + self.refresh_s + 1.0
            return None
        if self.shared and self._stored_elsewhere(key, version):
            return None
        with self._lock:
            future = self._pending.get(key)
            if future is not None:
                return future
            current = _holds(self._memory.get(key), version)  # a viewer read the board before it: nothing to do
            if not current:
                job = (_compute_in_worker, str(self.store.path), options, self.holder, *((True,) if staged else ()))
                try:
                    future = self._pool().submit(*job)
                except concurrent.futures.BrokenExecutor:  # the worker died (e.g. killed for memory): a new one
                    self._executor = None
                    future = self._pool().submit(*job)
                self._pending[key] = future
                # two attributes of ours on the Future (the executor makes it, so no subclass can declare them): an
                # event set once _finished has stored its outcome and let it go; whether a day of the board is kept
                future.settled = threading.Event()  # type: ignore[attr-defined]
                future.kept = keeps_history(options, self.history_defaults)  # type: ignore[attr-defined]
        if future is None:  # current: the claim (if any) goes back unused
            if self.shared:
                release_computation(self.store.db(), key, self.holder)
            return None
        future.add_done_callback(lambda done: self._finished(key, options, version, done))
        return future

    def _stored_elsewhere(self, key: str, version: tuple) -> bool:
        """Whether, now that this replica holds the claim, another replica has already stored ``key``'s snapshot of
        ``version`` (it stored it, then released the claim, after this replica read the older one): if so the claim
        is released and that snapshot remembered, so the data is not computed twice."""
        stored = stored_snapshot(self.store.db(), key)
        if not drawn(stored) or incomplete(stored) or stored.data_version != version:
            return False
        self._remember(stored)
        release_computation(self.store.db(), key, self.holder)
        return True

    def _finished(self, key: str, options: LeaderboardOptions, version: tuple,
                  future: concurrent.futures.Future) -> None:
        """Store the result (or the failure), and only then let the computation go: a viewer in between would find
        neither a pending computation nor its outcome and start the same one again. A staged snapshot's completion
        starts at once (:func:`incomplete`)."""
        try:
            self._store_result(key, version, future)
        finally:
            with self._lock:
                self._pending.pop(key, None)
                closed = self._closed
            if self.shared:
                try:
                    release_computation(self.store.db(), key, self.holder)
                except database_errors() as error:  # it lapses by itself
                    log.error("the claim on computing %s could not be released: %s", key, error)
            if not closed and incomplete(_succeeded(future)):
                try:
                    self._schedule(key, options, version)
                except Exception as error:  # a viewer's next look starts it (a pending snapshot is due)
                    log.error("the rest of the leaderboard for %s could not be started: %s", key, error)
            future.settled.set()  # type: ignore[attr-defined]  # set on the Future by _schedule

    def _settle(self, key: str) -> None:
        """Wait (at most :data:`SETTLE_S`) while a computation of ``key`` that has ended is being stored: until then
        it still counts as pending, and a viewer who came after new votes would start nothing and hear "fresh"."""
        with self._lock:
            future = self._pending.get(key)
        if future is not None and future.done():
            future.settled.wait(SETTLE_S)  # type: ignore[attr-defined]  # set on the Future by _schedule

    def _store_result(self, key: str, version: tuple, future: concurrent.futures.Future) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            log.error("the leaderboard for %s could not be computed: %s", key, error)
            with self._lock:
                self._failed[key] = (version, f"{type(error).__name__}: {error}")
            return
        with self._lock:
            self._failed.pop(key, None)
        snapshot = future.result()
        self._remember(snapshot)
        try:
            store_snapshot(self.store.db(), snapshot, self.keep,
                           self.history_days if getattr(future, "kept", False) else 0)
        except database_errors() as error:  # shown from memory all the same; only other processes miss it
            log.error("the leaderboard snapshot for %s could not be stored: %s", key, error)

    def view(self, db: Database, options: LeaderboardOptions, *, refresh: bool = False,
             wait_s: float = 0.0) -> tuple[Snapshot | None, str]:
        """The latest snapshot for ``options`` (None if there is none yet) and what is happening to it: "" (fresh),
        "updating" (a newer one is being computed) or why the last computation failed.

        A computation starts when there is no snapshot, or when the data changed since it and it is at least
        ``refresh_s`` old (``refresh``: whatever its age); after a failure, only once the data changed again or on
        ``refresh``. Only a viewer without any snapshot waits, at most ``wait_s`` seconds and ``MAX_WAITING``
        viewers at once, for the first one.
        """
        key = options_key(options)
        self._settle(key)
        snapshot, version = self.latest(db, key), data_version(db)
        with self._lock:
            failed = self._failed.get(key)
        due = snapshot is None or incomplete(snapshot) or (snapshot.data_version != version
                                                        and (refresh or snapshot.age() >= self.refresh_s))
        if due and (refresh or failed is None or failed[0] != version):
            future = self._schedule(key, options, version, staged=snapshot is None)
            if future is None and not _holds(snapshot, version):  # one stored since it was read (_schedule)
                snapshot = self.latest(db, key) or snapshot
        else:
            with self._lock:
                future = self._pending.get(key)
        elsewhere = self._computed_elsewhere(key)
        if (future is not None or elsewhere) and snapshot is None and wait_s > 0 \
                and self._waiting.acquire(blocking=False):
            try:
                if future is not None:
                    concurrent.futures.wait([future], timeout=wait_s)
                else:  # another replica computes it: its snapshot arrives in the table
                    deadline = time.monotonic() + wait_s
                    while snapshot_computed_at(db, key) is None and time.monotonic() < deadline:
                        time.sleep(0.1)
            finally:
                self._waiting.release()
            snapshot = self.latest(db, key) or _succeeded(future)  # its callback may still be storing it
        with self._lock:
            failed = self._failed.get(key)
            pending = self._pending.get(key)
            running = pending is not None and not pending.done()  # a done one is being stored
        running = running or (self._computed_elsewhere(key) and (snapshot is None or snapshot.data_version != version))
        running = running or (incomplete(snapshot) and failed is None)  # its completion follows (_finished)
        return snapshot, "updating" if running else (failed[1] if failed else "")

    def _computed_elsewhere(self, key: str) -> bool:
        """Whether another replica was found computing ``key`` lately (its claim was refused to this one)."""
        with self._lock:
            until = self._elsewhere.get(key)
            if until is not None and until < time.monotonic():
                del self._elsewhere[key]
                until = None
        return until is not None

    def warm_up(self) -> None:
        """Start the worker process now (it imports the numeric libraries once), so the first view is quick."""
        self._pool().submit(os.getpid)

    def close(self) -> None:
        with self._lock:
            self._closed = True
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
