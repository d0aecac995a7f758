"""Which prompts a draw may show: the prompts with images of two models per suite, and the prompts each annotator
has voted on, kept for a server.

Every draw for an annotator leaves out the prompts they have already voted on (the vote revealed the two models,
and a prompt shown again shows images they may recognise) as long as the prompts in scope (the suite filter) include
some they have not; once they have seen them all, only the least often seen are drawn, leaving out the one seen last
if another is as little seen (:meth:`SeenPrompts.Seen.choosable`). The draw never refuses for this reason. Judges'
draws (no annotator) are the protocol's as stated. The draws themselves: :mod:`sampling.draws`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from datamodel.database import Database
from datamodel.sampling_reads import (
    annotator_prompts,
    catalog_version,
    eligible_prompts,
    prompt_images,
    suites_with_battles,
)

_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.flags.writeable = False


class SeenPrompts:
    """Which prompts each annotator has voted on, for the draws to leave out (module docstring); thread-safe, one per
    server (its :class:`PromptPool` holds it).

    An annotator's prompts are read from the votes table on their first draw (the covering index
    ``votes_annotator_prompt``: 0.2 ms for 300 votes, 2 ms for 3,000), and at every later draw only their votes newer
    than the last one read (one seek in ``votes_annotator``, which usually finds nothing or the vote just cast), so
    votes from another tab, another server process or the vote's own transaction count at once; a draw never reads
    all of an annotator's votes again. What a draw reads inside a transaction is used, not kept: the transaction may
    roll back and its vote id be given again. Beyond ``annotators``, those drawn for least recently are forgotten (read
    again at their next draw); about 24 bytes per prompt seen.
    """

    ANNOTATORS = 10_000

    @dataclass(frozen=True)
    class Seen:
        """One annotator's seen prompts (immutable; a vote makes a new one): sorted ``prompt_ids``, the votes on each
        (``counts``), the id of the latest vote on each (``latest``), and the highest vote id read (``through``)."""

        prompt_ids: np.ndarray = field(default_factory=lambda: _EMPTY)
        counts: np.ndarray = field(default_factory=lambda: _EMPTY)
        latest: np.ndarray = field(default_factory=lambda: _EMPTY)
        through: int = 0

        def __len__(self) -> int:
            return len(self.prompt_ids)

        def plus(self, rows: list[tuple[int, int, int]]) -> SeenPrompts.Seen:
            """These prompts and ``rows`` ((prompt id, votes, latest vote id) of votes newer than :attr:`through`,
            ascending prompt ids)."""
            if not rows:
                return self
            prompts, counts, latest = np.array(rows, dtype=np.int64).T
            through = max(self.through, int(latest.max()))
            if not len(self.prompt_ids):
                return SeenPrompts.Seen(prompts, counts, latest, through)
            if len(rows) == 1:  # the usual case: the vote just cast
                (prompt, votes, last), = rows
                i = int(np.searchsorted(self.prompt_ids, prompt))
                if i < len(self.prompt_ids) and self.prompt_ids[i] == prompt:
                    counts, latest = self.counts.copy(), self.latest.copy()
                    counts[i] += votes
                    latest[i] = last
                    return SeenPrompts.Seen(self.prompt_ids, counts, latest, through)
                ids, counts, latest = (np.concatenate([a[:i], [v], a[i:]]) for a, v in (
                    (self.prompt_ids, prompt), (self.counts, votes), (self.latest, last)))
                return SeenPrompts.Seen(ids, counts, latest, through)
            at = np.searchsorted(self.prompt_ids, prompts)
            hit = at < len(self.prompt_ids)
            hit[hit] = self.prompt_ids[at[hit]] == prompts[hit]
            old_counts, old_latest = self.counts.copy(), self.latest.copy()
            old_counts[at[hit]] += counts[hit]
            old_latest[at[hit]] = latest[hit]
            new = ~hit
            return SeenPrompts.Seen(np.insert(self.prompt_ids, at[new], prompts[new]),
                                    np.insert(old_counts, at[new], counts[new]),
                                    np.insert(old_latest, at[new], latest[new]), through)

        def choosable(self, prompt_ids: np.ndarray) -> np.ndarray:
            """Which of ``prompt_ids`` (an array, not empty) a draw may show, as a boolean mask: those never seen if
            there are any, else the least often seen, less the one seen last when another is as little seen (never the
            same prompt twice in a row while there are two)."""
            if not len(self.prompt_ids):
                return np.ones(len(prompt_ids), dtype=bool)
            at = np.searchsorted(self.prompt_ids, prompt_ids)
            np.minimum(at, len(self.prompt_ids) - 1, out=at)
            hit = self.prompt_ids[at] == prompt_ids
            if not hit.all():
                return ~hit
            counts, latest = self.counts[at], self.latest[at]
            keep = counts == counts.min()
            if np.count_nonzero(keep) > 1:
                keep &= latest != latest[keep].max()
            return keep

    def __init__(self, annotators: int = ANNOTATORS):
        self._lock = threading.Lock()
        self._annotators = annotators
        self._held: OrderedDict[int, SeenPrompts.Seen] = OrderedDict()

    def of(self, db: Database, annotator_id: int) -> SeenPrompts.Seen:
        """The prompts ``annotator_id`` has voted on, as of now (module and class docstrings)."""
        with self._lock:
            held = self._held.get(annotator_id)
            if held is not None:
                self._held.move_to_end(annotator_id)
        if held is None:  # all their votes, from the covering index votes_annotator_prompt
            held, newer = SeenPrompts.Seen(), annotator_prompts(db, annotator_id)
        else:  # the votes since: one seek in votes_annotator, whose entries follow the vote ids
            newer = annotator_prompts(db, annotator_id, after_vote=held.through)
        seen = held.plus(newer)
        if not db.conn.in_transaction:
            with self._lock:
                kept = self._held.get(annotator_id)
                if kept is None or kept.through < seen.through:
                    self._held[annotator_id] = seen
                self._held.move_to_end(annotator_id)
                while len(self._held) > self._annotators:
                    self._held.popitem(last=False)
        return seen


def seen_prompts(db: Database, annotator_id: int, pool: PromptPool | None = None) -> SeenPrompts.Seen:
    """The prompts ``annotator_id`` has voted on: kept by the server's ``pool``, or read afresh without one."""
    return (pool.seen if pool is not None else SeenPrompts()).of(db, annotator_id)


class PromptPool:
    """:func:`eligible_prompts` per suite and :func:`suites_with_battles`, computed again only when the catalog
    (models, prompts, images) has changed.

    The query groups every image (13 ms at 40,000 images); a server keeps one pool (thread-safe) and reads the
    catalog's change counter (``data_versions``, one row) per draw instead.
    Only suites that have battles are kept, so a client naming made-up suites can neither grow the pool nor make it
    run the grouping query.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._version: int | None = None  # the catalog counter the kept reads were made at (None: none kept)
        self._suites: list[str] = []
        self._by_suite: dict[str | None, list[int]] = {}
        self._arrays: dict[str | None, np.ndarray] = {}  # the same, as arrays
        self._kept: dict = {}  # prompt id: its images (:meth:`images`); other keys: :meth:`catalog_cached`
        self._checked_at = float("-inf")  # when the catalog's change counter was last read (time.monotonic)
        self.seen = SeenPrompts()  # what each annotator voted on, for the draws to leave out

    def _refresh(self, db: Database) -> None:
        """Forget everything if the images changed (call with the lock held). A database without the catalog's
        counter (its row deleted by hand) cannot say so: everything is read again each time."""
        version, self._checked_at = catalog_version(db), time.monotonic()
        if version is None or version != self._version:
            self._version, self._by_suite, self._suites = version, {}, suites_with_battles(db)
            self._arrays, self._kept = {}, {}

    def images(self, db: Database, prompt_id: int) -> list[tuple[int, int]]:
        """:func:`prompt_images` of ``prompt_id``, kept until the catalog changes. It reads no change counter: a draw
        calls it after :meth:`eligible_ids`, which has just read it. (At most every shown image is kept: 40,000
        images are a few megabytes.)"""
        with self._lock:
            kept = self._kept.get(prompt_id)
            if kept is None:
                kept = self._kept[prompt_id] = prompt_images(db, prompt_id)
            return kept

    def catalog_cached(self, db: Database, key: tuple, read, *, max_age_s: float = 0.0):
        """``read()``, a value made from the catalog (models, prompts, images), kept under ``key`` until the catalog
        changes: the change counter is read first, unless a draw read it less than ``max_age_s`` seconds ago (under
        load, every draw does)."""
        with self._lock:
            if time.monotonic() - self._checked_at >= max_age_s:
                self._refresh(db)
            if key not in self._kept:
                self._kept[key] = read()
            return self._kept[key]

    def suites(self, db: Database) -> list[str]:
        """The suites that have at least one battle to show, as :func:`suites_with_battles`."""
        with self._lock:
            self._refresh(db)
            return list(self._suites)

    def eligible(self, db: Database, suite: str | None = None) -> list[int]:
        with self._lock:
            self._refresh(db)
            if suite is not None and suite not in self._suites:
                return []
            if suite not in self._by_suite:
                self._by_suite[suite] = eligible_prompts(db, suite)
            return self._by_suite[suite]

    def eligible_ids(self, db: Database, suite: str | None = None) -> np.ndarray:
        """:meth:`eligible` as a read-only numpy array (made once per catalog change)."""
        with self._lock:
            self._refresh(db)
            if suite is not None and suite not in self._suites:
                return _EMPTY
            if suite not in self._arrays:
                if suite not in self._by_suite:
                    self._by_suite[suite] = eligible_prompts(db, suite)
                array = np.array(self._by_suite[suite], dtype=np.int64)
                array.flags.writeable = False
                self._arrays[suite] = array
            return self._arrays[suite]

