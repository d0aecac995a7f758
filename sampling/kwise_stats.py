"""The four-image sampler's counts and strengths kept in memory for a server (:class:`KwiseStats`), so that a
``ksort-ucb`` draw (:mod:`sampling.kwise`) costs the same at a thousand four-image votes as at a hundred thousand.

Without it, every draw reads every counted four-image vote (:func:`datamodel.kwise.kwise_model_counts`) and fits
the strengths on them: O(votes) per draw, and the page draws the next set inside the vote's write transaction.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

import numpy as np

from datamodel.change_logs import ChangesMissed
from datamodel.connection import open_reader, reader_target
from datamodel.database import Database
from datamodel.kwise import kwise_changes_since, kwise_counts_read
from ratings.bradley_terry import newton_bt
from ratings.kwise import KwiseVotes, kwise_win_matrix
from sampling.kwise import RIDGE, KwiseState, kwise_counts
from sampling.sampler import refit_is_due

log = logging.getLogger(__name__)


class KwiseStats:
    """What ``ksort-ucb`` reads, for one server (its context holds one; the web server's threads share it).

    - **Counts.** Per model its four-image votes (``appearances``), per pair the votes that showed both
      (``pair_counts``), the rank-broken wins (W[i, j]: broken pairs won by i over j, :func:`ratings.kwise.
      kwise_win_matrix`) and ``total`` votes: all counted four-image votes, read once (:meth:`refresh` on first use,
      or ``force``), then kept vote by vote by :meth:`catch_up` from ``kwise_vote_changes``
      (:func:`datamodel.schema._four_image_vote_changes`: each vote that starts or stops counting, in commit order,
      by any process; a range read of the rows after the last one applied). So the counts equal a full re-read,
      exactly, after each catch-up, the quality rules' and the admin's flag changes included. Where the log cannot
      give the changes (rows not read yet were pruned, :mod:`datamodel.change_logs`; a vote deleted with its
      battle), the catch-up is a full read again, one for all the threads that find it so.
    - **Strengths.** The ridge Bradley–Terry fit of the wins (natural log, ridge 1, as :func:`sampling.kwise.
      kwise_state`), refitted when ``refit_votes`` counted votes changed since the last fit or ``refit_seconds``
      passed with changes, as the pairwise sampler's fit (:class:`sampling.sampler.SamplingStats`); a thread that
      finds another refitting draws with the previous strengths. A model that no counted vote showed has strength 0.
    - **Threads.** One lock guards the arrays; a draw holds it to copy the rows it needs (:meth:`state`).
    """

    def __init__(self, *, refit_votes: int = 50, refit_seconds: float = 60.0,
                 clock: Callable[[], float] = time.monotonic):
        self.refit_votes = refit_votes
        self.refit_seconds = refit_seconds
        self.clock = clock
        self.models: list[int] = []  # model ids, in the order first counted
        self._index: dict[int, int] = {}
        self.appearances = np.zeros(0, dtype=np.int64)
        self.pair_counts = np.zeros((0, 0), dtype=np.int64)
        self.wins = np.zeros((0, 0))
        self.total = 0
        self.change_seq: int | None = None  # None: not read yet
        self.strength = np.zeros(0)  # of the first len(strength) models
        self.refitted_at = -math.inf
        self._changes = 0  # counted votes changed so far (for the refit schedule)
        self._fitted_changes = 0
        self._lock = threading.Lock()
        self._refit_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._loader: threading.Thread | None = None  # the background first read (start)

    @property
    def ready(self) -> bool:
        return self.change_seq is not None

    def start(self, db: Database) -> KwiseStats:
        """Start the first full read on a background thread, over a connection of its own (a server calls this when
        it starts, so that the first annotator's request does not wait for it: 0.75 s at 100,000 four-image votes,
        ``python -m tools.kwise_bench``); nothing for an in-memory database, which no other connection sees (the first
        :meth:`refresh` reads it). A request that comes meanwhile waits for this read instead of making its own; a
        read that fails is logged and the next :meth:`refresh` reads again. Returns ``self``."""
        target = reader_target(db)
        if target is None or self.ready or self._loader is not None:
            return self
        self._loader = threading.Thread(target=self._read_in_background, args=(target,), daemon=True,
                                        name="kwise-stats-read")
        self._loader.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background read, if one was started (up to ``timeout`` seconds); True if none runs now."""
        loader = self._loader
        if loader is not None:
            loader.join(timeout)
            return not loader.is_alive()
        return True

    def _read_in_background(self, target: str) -> None:
        try:
            reader = open_reader(target)
            try:
                self.refresh(reader)
            finally:
                reader.close()
        except Exception:  # the next refresh on a request reads again
            log.exception("The four-image sampler could not read its counts in the background")

    # -- reads

    def refresh(self, db: Database, *, force: bool = False) -> KwiseStats:
        """Make the counts current (the one full read on first use or with ``force``, else :meth:`catch_up`), then
        refit if due (always with ``force``); returns ``self``. Call it outside a write transaction."""
        if force or not self.ready:
            self._read(db, force=force)
        else:
            self.catch_up(db)
        self.maybe_refit(force=force)
        return self

    def _read(self, db: Database, *, force: bool, unless_current: bool = False) -> None:
        """The full read (unless ``force`` is false and another thread's read is done, or ``unless_current`` and the
        log gives the changes since, another thread having read while this one waited), then the changes after it;
        again if rows after it were pruned already (a retention of seconds)."""
        with self._read_lock:
            if self.ready and not force:
                return  # another thread's first read, done while this one waited
            if unless_current and self._catch_up(db) is not None:
                return
            while True:
                seq, appearances, votes = kwise_counts_read(db)
                models = sorted(appearances)
                counted, shown_in, pairs = kwise_counts(tuple(models), votes)
                with self._lock:
                    self.models, self._index = models, {m: i for i, m in enumerate(models)}
                    self.appearances, self.pair_counts = shown_in.astype(np.int64), pairs.astype(np.int64)
                    self.wins, self.total = kwise_win_matrix(counted, len(models)), len(votes)
                    self.change_seq = seq
                    self._changes += 1  # a full read: refit
                if self._catch_up(db) is not None:
                    return

    def catch_up(self, db: Database) -> int:
        """Apply the rows of ``kwise_vote_changes`` committed since the last one applied (by any process); return how
        many were applied. Safe from any thread: a row is applied once, in ``seq`` order. Where the log cannot give
        them (:class:`datamodel.change_logs.ChangesMissed`: rows it had not read were pruned, or a vote was deleted
        with its battle), it reads everything again instead, on this thread, and returns 0."""
        applied = self._catch_up(db)
        if applied is None:
            log.info("The four-image sampler's counts cannot follow kwise_vote_changes (rows pruned or a battle "
                     "deleted): reading them again")
            self._read(db, force=True, unless_current=True)
            return 0
        return applied

    def _catch_up(self, db: Database) -> int | None:
        """:meth:`catch_up`'s reading and counting; None where the log cannot give the changes."""
        seq = self.change_seq
        if seq is None:
            return 0
        try:
            rows = kwise_changes_since(db, seq)
        except ChangesMissed:
            return None
        applied = 0
        with self._lock:
            for row_seq, sign, shown, best, worst in rows:
                if self.change_seq is not None and row_seq <= self.change_seq:
                    continue  # another thread applied it
                self._add(shown, best, worst, sign)
                self.change_seq = row_seq
                applied += 1
            self._changes += applied
        return applied

    def _model(self, model_id: int) -> int:
        at = self._index.get(model_id)
        if at is None:
            at = self._index[model_id] = len(self.models)
            self.models.append(model_id)
            n = len(self.models)
            self.appearances = np.concatenate([self.appearances, [0]])
            for name in ("pair_counts", "wins"):
                old = getattr(self, name)
                grown = np.zeros((n, n), dtype=old.dtype)
                grown[:n - 1, :n - 1] = old
                setattr(self, name, grown)
        return at

    def _add(self, shown: tuple[int, ...], best: int, worst: int | None, sign: int) -> None:
        """Count (``sign`` 1) or uncount (−1) one vote: slot model ids, best slot, worst slot or None (1-4)."""
        index = np.array([self._model(m) for m in shown], dtype=np.int64)
        self.appearances[index] += sign
        self.pair_counts[np.ix_(index, index)] += sign
        self.pair_counts[index, index] -= sign
        one = KwiseVotes(tuple(map(str, self.models)), index[None], np.array([best - 1]),
                         np.array([-1 if worst is None else worst - 1]))
        self.wins += sign * kwise_win_matrix(one, len(self.models))  # its rank-broken pairs (ratings.kwise)
        self.total += sign

    # -- the fit

    def refit_due(self) -> bool:
        """Whether the strengths are missing (or miss a model), or ``refit_votes`` counted votes or
        ``refit_seconds`` behind."""
        if not self.ready:
            return False
        if len(self.strength) != len(self.models):
            return True
        return refit_is_due(self._changes - self._fitted_changes, self.clock() - self.refitted_at, self.refit_votes,
                            self.refit_seconds)

    def maybe_refit(self, *, force: bool = False) -> bool:
        """Refit the strengths if due (or ``force``) and no other thread is at it; True if it refitted."""
        due = force or self.refit_due()
        if due and self._refit_lock.acquire(blocking=False):
            try:
                with self._lock:
                    wins, changes, total = np.maximum(self.wins, 0), self._changes, self.total
                strength = newton_bt(wins, ridge=RIDGE)[0] if total > 0 else np.zeros(len(wins))
                self.strength, self.refitted_at, self._fitted_changes = strength, self.clock(), changes
            finally:
                self._refit_lock.release()
            return True
        return False

    # -- what a draw reads

    def state(self, models: tuple[int, ...]) -> KwiseState:
        """The :class:`sampling.kwise.KwiseState` of ``models`` (ids) from the counts in memory and the last fit."""
        with self._lock:
            at = np.array([self._index.get(m, -1) for m in models], dtype=np.int64)
            known = at >= 0
            n = len(models)
            appearances = np.zeros(n, dtype=np.int64)
            appearances[known] = self.appearances[at[known]]
            pairs = np.zeros((n, n))
            pairs[np.ix_(known, known)] = self.pair_counts[np.ix_(at[known], at[known])]
            fitted = known & (at < len(self.strength))
            strength = np.zeros(n)
            strength[fitted] = self.strength[at[fitted]]
            return KwiseState(tuple(models), strength, appearances, pairs, self.total)

    def known_models(self) -> list[int]:
        """The model ids that counted votes showed."""
        with self._lock:
            return list(self.models)
