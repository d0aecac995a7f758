"""The server's sampler: vote counts kept vote by vote, and the Bradley–Terry fit (for strategies that
``needs_fit``, such as ``active``), on a schedule (:class:`SamplingStats`).

What a strategy draws is pure maths over count tables (:mod:`sampling.strategies`, whose docstring explains the
strategies, why the fit stays valid, replication and how the counts are kept at scale). The tables are
:mod:`sampling.counts`' and the battles in flight :mod:`sampling.in_flight`'s; this module keeps them for a server
(the full reads, the catch-up with the votes of every process, the refits), and the draws (:mod:`sampling.draws`)
read them through it.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable

import numpy as np

from datamodel.change_logs import ChangesMissed
from datamodel.connection import open_reader, reader_target
from datamodel.database import Database
from datamodel.sampling_reads import catalog_version, vote_changes_since
from sampling.counts import CountTables, VoteFacts, read_count_tables, vote_facts
from sampling.in_flight import InFlight
from sampling.strategies import FitState, SamplingParams, fit_state

log = logging.getLogger(__name__)


def refit_is_due(changed: int, seconds_since: float, refit_votes: int, refit_seconds: float) -> bool:
    """Whether a fit kept beside counts that change vote by vote is due: ``refit_votes`` counted votes changed since
    it, or ``refit_seconds`` passed with at least one change."""
    return changed >= refit_votes or (changed > 0 and seconds_since >= refit_seconds)


class SamplingStats:
    """Vote counts and the ``active`` strategy's Bradley–Terry state for one server (its context holds one), kept
    up to date vote by vote; the web server's threads share it.

    - **Counts.** :meth:`refresh` starts the one full read (:func:`read_count_tables`) on first use (or call
      :meth:`start` at start-up); it runs on a background thread with its own connection (on the calling thread for
      an in-memory database). After that the counts change only through :meth:`catch_up`: it reads the rows of
      ``vote_changes`` after the last one counted (:func:`datamodel.schema._vote_changes`: every vote that starts
      or stops counting, in commit order, written by triggers) and applies them. :meth:`note_vote`, which every
      human vote recorded by :func:`arena.session.vote` calls after its commit, catches up at once (the vote, and
      each earlier vote whose ``excluded`` flag the quality rules flipped with it); :meth:`refresh`, before every
      draw, at most every ``sync_seconds``. So the counts equal a full re-read of the votes, exactly, whichever
      process recorded them: with several app replicas on one database, each replica's draws count the others'
      votes committed more than ``sync_seconds`` (1 s) earlier, and its own at once.
    - **Full re-reads** happen only at start-up, when an admin includes or excludes a vote (:meth:`reload`, from the
      admin tab) and when models, prompts or images change (the ``catalog`` counter of ``data_versions``, checked at
      most every ``refresh_seconds`` by :meth:`refresh`; an open prompt's prompt and images, never drawn, leave it
      alone: its vote is counted as any other), and when rows of ``vote_changes`` it had not read yet were pruned
      (:mod:`datamodel.change_logs`: a server that read nothing for the whole retention, a day by default); always on
      the background thread, draws using the previous counts meanwhile. A read includes ``vote_changes`` up to a
      row it records (``change_seq``, read in the same snapshot); the changes after it are caught up as soon as the
      new tables are in place.
    - **Start-up.** Until the first full read is done, :meth:`refresh` waits for it up to ``startup_wait_seconds``;
      if it is still running, :func:`sampling.draws.draw_pairing` draws that battle by ``uniform`` and says so
      (:class:`sampling.draws.UniformDraw`, recorded as ``uniform``), and a replica draw is skipped.
    - **In flight.** :meth:`note_served` counts a battle just drawn (its prompt and pair) until its vote arrives
      (:meth:`note_vote` releases one in-flight battle of the same prompt and pair) or ``in_flight_seconds`` pass,
      so concurrent draws spread out while a skipped battle stops counting soon; these tallies
      (:class:`sampling.in_flight.InFlight`) are added to the vote counts at draw time, never stored in them.
    - **Refit.** The Bradley–Terry state is refitted when ``refit_votes`` counted votes changed since the last fit or
      ``refit_seconds`` passed with changes (:func:`fit_state`: one Newton fit and one n×n inverse, about a
      millisecond for 12 models) on the calling thread, i.e. when a battle is drawn, never when a vote is recorded; a
      thread that finds another one refitting does not wait and draws with the previous state.
    - **Threads.** One lock guards the count arrays and the in-flight tallies; draws hold it only to copy the K pair
      counts and, for the chosen pair, the counts of its prompts, or to pick a replica; votes to add a few counts.
      ``state`` is immutable and replaced whole.
    - The counts and the fit cover every suite (votes of ``voter_kind``, not excluded); a suite filter at draw time
      only narrows the prompts, and with them the pairs that can be shown.
    """

    def __init__(
        self,
        params: SamplingParams | None = None,
        *,
        refresh_seconds: float = 2.0,
        sync_seconds: float = 1.0,
        refit_votes: int = 50,
        refit_seconds: float = 60.0,
        in_flight_seconds: float = 60.0,
        startup_wait_seconds: float = 5.0,
        voter_kind: str = "human",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.params = params or SamplingParams()
        self.refresh_seconds = refresh_seconds
        self.sync_seconds = sync_seconds
        self.refit_votes = refit_votes
        self.refit_seconds = refit_seconds
        self.in_flight_seconds = in_flight_seconds
        self.startup_wait_seconds = startup_wait_seconds
        self.voter_kind = voter_kind
        self.clock = clock
        self.tables: CountTables | None = None
        self.state: FitState | None = None
        self.refitted_at = -math.inf
        self.load_error: BaseException | None = None
        self._lock = threading.Lock()
        self._refit_lock = threading.Lock()
        self._load_lock = threading.Lock()  # one full read at a time
        self._started = False
        self._loading = False  # a background full read runs
        self._loader: threading.Thread | None = None
        self._again = False  # a full read was asked for while one ran: read again after it
        self._synced_at = -math.inf  # when catch_up last ran from refresh
        self._changes = 0  # counted votes changed so far (for the refit schedule)
        self._fitted_changes = 0
        self._catalog_checked_at = -math.inf
        self._behind = False  # rows of vote_changes the counts had not read were pruned: a full read is due
        self._flight = InFlight(in_flight_seconds)  # the battles drawn and not voted on yet

    # -- full reads

    @property
    def ready(self) -> bool:
        """Whether the first full read is done (draws can use the counts)."""
        return self.tables is not None

    def start(self, db: Database) -> SamplingStats:
        """Start the first full read (in the background for a database file), if not started yet; returns ``self``."""
        if not self._started:
            self._load(db, wait=False)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background full read, if one runs (up to ``timeout`` seconds); True if none runs now."""
        loader = self._loader
        if loader is not None:
            loader.join(timeout)
        return not self._loading

    def reload(self, db: Database) -> None:
        """Read everything again in the background (after an admin review); nothing to do if not started yet."""
        if self._started:
            self._load(db, wait=False)

    def _load(self, db, *, wait: bool) -> None:
        """A full read: on this thread if ``wait`` or in memory, else on the background thread (once more after the
        running one, if one runs)."""
        target = None if wait else reader_target(db)
        with self._lock:
            self._started = True
            if target is not None:
                if self._loading:
                    self._again = True
                    return
                self._loading = True
                self._loader = threading.Thread(target=self._read_in_background, args=(target,), daemon=True,
                                                name="sampling-stats-read")
                self._loader.start()
                return
        self._read(db, background=False)

    def _read_in_background(self, target: str) -> None:
        try:
            reader = open_reader(target)
        except Exception as error:  # reported by load_error; the next refresh without counts tries again
            log.exception("The sampler could not open the database to read its counts")
            with self._lock:
                self.load_error, self._loading = error, False
            return
        try:
            self._read(reader, background=True)
        finally:
            reader.close()

    def _read(self, db, *, background: bool) -> None:
        """Full reads until none is asked for: each swaps in its snapshot, then catches up with the changes after
        it."""
        with self._load_lock:
            while True:
                with self._lock:
                    self._again = False
                try:
                    tables = read_count_tables(db, voter_kind=self.voter_kind)
                except Exception as error:
                    log.exception("The sampler could not read the vote counts")
                    with self._lock:
                        self.load_error = error
                        self._loading = self._loading and not background
                    if not background:
                        raise
                    return
                with self._lock:
                    old = self.tables
                    self.tables, self.load_error, self._behind = tables, None, False
                    self._changes += abs(tables.votes - (old.votes if old is not None else 0))
                    self._flight.rebuild(tables)
                missed = self._catch_up(db) is None  # rows after the read pruned already (a retention of seconds)
                with self._lock:
                    if not (missed or (background and self._again)):
                        self._loading = self._loading and not background
                        return

    # -- votes

    def catch_up(self, db: Database) -> list[tuple]:
        """Count the changes to the votes committed since the tables' ``change_seq`` (module docstring), by any
        process; return the rows read (:func:`datamodel.sampling_reads.vote_changes_since`). Safe from any thread:
        a row is applied once, in ``seq`` order. If rows it had not read were pruned
        (:class:`datamodel.change_logs.ChangesMissed`), it reads everything again instead (:meth:`reload`, in the
        background; draws use the counts as they are meanwhile) and returns no row."""
        if self._behind and self._loading:
            return []  # the read that brings them past the pruned rows runs: no need to read the log meanwhile
        rows = self._catch_up(db)
        if rows is None:
            log.info("The sampler's counts fell behind the pruned vote_changes rows: reading them again")
            self._behind = True
            if not self._loading:  # a read running now ends past the pruned rows
                self.reload(db)
            return []
        return rows

    def _catch_up(self, db: Database) -> list[tuple] | None:
        """:meth:`catch_up`'s reading and counting; None if rows it needs were pruned."""
        with self._lock:
            tables = self.tables
        if tables is None:
            return []  # the first full read, still to come, counts everything committed before its snapshot
        try:
            rows = vote_changes_since(db, tables.change_seq)
        except ChangesMissed:
            return None
        with self._lock:
            if self.tables is not tables:
                return rows  # a full read swapped in new tables meanwhile: it catches up itself
            applied = 0
            for seq, sign, vote_id, *facts in rows:
                if seq <= tables.change_seq:
                    continue  # another thread applied it
                if facts[0] == self.voter_kind:
                    tables.add(VoteFacts(vote_id, *facts), sign)
                    applied += 1
                tables.change_seq = seq
            self._changes += applied
        return rows

    def note_vote(self, db: Database, receipt) -> None:
        """Count a vote just committed (an :class:`datamodel.votes.VoteReceipt`), the flags the quality rules
        flipped with it and whatever else changed since (:meth:`catch_up`); release its battle from the in-flight
        tally.

        Call it after the vote's transaction commits, so that the counts follow committed votes only.
        """
        if not self._started:
            return  # the first full read, still to come, will count it
        rows = self.catch_up(db)
        vote = next((VoteFacts(vote_id, *facts) for _, _, vote_id, *facts in rows if vote_id == receipt.vote_id),
                    None)
        if vote is None:  # caught up by another thread, or not counted (a judge's): its battle, by primary key
            vote = vote_facts(db, [receipt.vote_id]).get(receipt.vote_id)
        if vote is not None:
            with self._lock:
                low, high = sorted((vote.left_model_id, vote.right_model_id))
                self._flight.release((vote.prompt_id, low, high))

    # -- battles in flight

    def note_served(self, prompt_id: int, model_a: int, model_b: int) -> None:
        """Count a battle just drawn (by model ids) as in flight, until its vote or ``in_flight_seconds``."""
        low, high = sorted((model_a, model_b))
        with self._lock:
            self._flight.serve((prompt_id, low, high), self.clock())

    @property
    def in_flight(self) -> int:
        """Battles drawn and neither voted on nor expired."""
        with self._lock:
            return self._flight.count(self.clock())

    # -- what a draw reads

    def pair_counts(self, tables: CountTables) -> np.ndarray:
        """Votes plus battles in flight per pair (K,), from ``tables`` (the current ones)."""
        with self._lock:
            self._flight.expire(self.clock())
            counts = tables.pair_counts.astype(np.float64)
            if self.tables is tables:
                counts += self._flight.pair
        return np.maximum(counts, 0.0)

    def prompt_counts(self, tables: CountTables, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(votes plus battles in flight of pair ``k`` per prompt, all votes plus in flight per prompt), for
        the prompt ``rows``."""
        with self._lock:
            per_pair = tables.prompt_pair_counts[rows, k].astype(np.float64)
            overall = tables.prompt_counts[rows].astype(np.float64)
            if self.tables is tables:
                self._flight.add_to_prompts(per_pair, overall, rows, k)
        return np.maximum(per_pair, 0.0), np.maximum(overall, 0.0)

    def pick_single_vote(self, rng: random.Random, suite: str | None = None, annotator_id: int | None = None,
                         exclude_prompts: np.ndarray | None = None) -> int | None:
        """The id of a vote alone on its battle, in ``suite``, not by ``annotator_id`` and not on one of the
        ``exclude_prompts`` (prompt ids), uniformly (:meth:`sampling.counts.BattleCounts.pick`); None if there is none
        or the counts are not read yet."""
        with self._lock:
            tables = self.tables
            if tables is None:
                return None
            code = None
            if suite:
                code = tables.suite_codes.get(suite)
                if code is None:
                    return None
            if tables.battles.available(code, annotator_id) <= 0:
                return None
            blocked = None
            if exclude_prompts is not None and len(exclude_prompts):
                blocked = np.zeros(len(tables.prompt_ids) + 1, dtype=bool)  # the last: prompts read since
                rows = tables.rows_of(exclude_prompts)
                blocked[rows if code is None else rows[tables.prompt_suite_codes[rows] == code]] = True
            return tables.battles.pick(np.random.default_rng(rng.getrandbits(64)), code, annotator_id, blocked)

    # -- the schedule

    def refresh(self, db: Database, *, force: bool = False, fit: bool = True) -> SamplingStats:
        """Make the counts usable for a draw, cheaply; returns ``self``.

        Starts the first full read if none ran (and waits for it up to ``startup_wait_seconds``), checks at most every
        ``refresh_seconds`` whether the catalog changed (then re-reads in the background) and at most every
        ``sync_seconds`` catches up with the votes of other processes, then refits if due (and ``fit``). ``force``
        re-reads everything now, on this thread (tests and tools; never the request path).
        """
        if force:
            self._load(db, wait=True)
        elif self.tables is None:
            if not self._loading:
                self._load(db, wait=False)  # the first read, or again after a failed one
            loader = self._loader
            if loader is not None:
                loader.join(self.startup_wait_seconds)
        else:
            now = self.clock()
            if now - self._catalog_checked_at >= self.refresh_seconds:
                self._catalog_checked_at = now
                version = catalog_version(db)
                if version is not None and version != self.tables.catalog_version and not self._loading:
                    self.reload(db)
            if now - self._synced_at >= self.sync_seconds:  # the other processes' votes
                self._synced_at = now
                self.catch_up(db)
        if fit:
            self.maybe_refit(force=force)
        return self

    def refit_due(self) -> bool:
        """Whether the Bradley–Terry state is missing, or ``refit_votes`` counted votes or ``refit_seconds`` behind."""
        tables, state = self.tables, self.state
        if tables is None:
            return False
        if state is None or len(state.ratings) != len(tables.model_ids):
            return True
        return refit_is_due(self._changes - self._fitted_changes, self.clock() - self.refitted_at, self.refit_votes,
                            self.refit_seconds)

    def maybe_refit(self, *, force: bool = False) -> bool:
        """Refit the Bradley–Terry state if due (or ``force``) and no other thread is at it; True if it refitted."""
        if not (force or self.refit_due()):
            return False
        if not self._refit_lock.acquire(blocking=False):
            return False
        try:
            with self._lock:
                tables, changes = self.tables, self._changes
                if tables is None:
                    return False
                counts = np.maximum(tables.counts, 0)
            state = self.state
            same_models = state is not None and len(state.theta) == len(tables.model_ids)
            theta0 = state.theta if state is not None and same_models else None
            fitted = fit_state(counts, params=self.params, theta0=theta0)
            self.state, self.refitted_at, self._fitted_changes = fitted, self.clock(), changes
            return True
        finally:
            self._refit_lock.release()

