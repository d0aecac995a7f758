"""Battles in flight: drawn by the server and neither voted on nor expired yet.

Concurrent draws would otherwise all see the same counts and pile onto the same pair and prompt; so each battle just
drawn counts as a vote on its prompt and pair (:meth:`InFlight.serve`) until its vote arrives (:meth:`InFlight.release`
releases one in-flight battle of the same prompt and pair) or its time passes (a skipped battle stops counting soon).
The tallies are added to the vote counts at draw time (:meth:`sampling.sampler.SamplingStats.pair_counts` and
``prompt_counts``), never stored in them.
"""

from __future__ import annotations

from collections import Counter, deque

import numpy as np

from sampling.counts import CountTables


class InFlight:
    """The battles in flight per (prompt id, model id, model id), with their tallies per pair (:attr:`pair`, K), per
    prompt row (:attr:`prompt`) and per pair and prompt row (a few per pair) of the current :class:`CountTables`.

    A battle counts for ``seconds`` after it was drawn unless a vote releases it first; a vote releases the oldest
    entry of its key, which then stays in the queue until its time and is skipped there. Not thread-safe: the server's
    :class:`sampling.sampler.SamplingStats` holds its lock around every call.
    """

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._tables: CountTables | None = None
        self._queue: deque = deque()  # (expires at, (prompt id, model id, model id)), oldest first
        self._live: Counter = Counter()  # in flight per (prompt id, model id, model id)
        self._released: Counter = Counter()  # released by a vote, still in the queue
        self.pair = np.zeros(0)
        self.prompt = np.zeros(0)
        self._prompt_pair: dict[int, Counter] = {}  # pair index -> {prompt row: in flight}

    def serve(self, key: tuple[int, int, int], now: float) -> None:
        """Count the battle ``key`` (prompt id and the two model ids, sorted) as in flight from ``now`` on."""
        self.expire(now)
        self._queue.append((now + self.seconds, key))
        self._live[key] += 1
        self._shift(key, 1)

    def count(self, now: float) -> int:
        """Battles in flight at ``now``."""
        self.expire(now)
        return sum(self._live.values())

    def release(self, key: tuple[int, int, int]) -> None:
        """A vote on the battle ``key`` arrived: one in-flight battle of it stops counting."""
        if self._live[key] > 0:
            self._live[key] -= 1
            self._released[key] += 1
            self._shift(key, -1)

    def expire(self, now: float) -> None:
        """Stop counting the battles whose time passed at ``now``."""
        while self._queue and self._queue[0][0] <= now:
            _, key = self._queue.popleft()
            if self._released[key] > 0:  # its vote came: the oldest entry of the key stands for it
                self._released[key] -= 1
                if not self._released[key]:
                    del self._released[key]
            else:
                self._live[key] -= 1
                self._shift(key, -1)
            if not self._live[key]:
                del self._live[key]

    def rebuild(self, tables: CountTables) -> None:
        """Tally the battles in flight again over new ``tables`` (after a full read)."""
        self._tables = tables
        self.pair = np.zeros(len(tables.pair_counts))
        self.prompt = np.zeros(len(tables.prompt_ids))
        self._prompt_pair = {}
        for key, amount in self._live.items():
            self._shift(key, amount)

    def add_to_prompts(self, per_pair: np.ndarray, overall: np.ndarray, rows: np.ndarray, k: int) -> None:
        """Add the battles in flight to the counts of the prompt ``rows`` (sorted): of pair ``k`` to ``per_pair``,
        of every pair to ``overall`` (both in place)."""
        flying = self._prompt_pair.get(k)
        if flying:  # a few prompts: place them among the (sorted) rows
            prompts = np.fromiter(flying.keys(), dtype=np.int64, count=len(flying))
            amounts = np.fromiter(flying.values(), dtype=np.float64, count=len(flying))
            at = np.minimum(np.searchsorted(rows, prompts), len(rows) - 1)
            hit = rows[at] == prompts
            np.add.at(per_pair, at[hit], amounts[hit])
        overall += self.prompt[rows]

    def _shift(self, key, amount: int) -> None:
        tables = self._tables
        if tables is None:
            return
        prompt_id, model_a, model_b = key
        k = tables.pair(model_a, model_b)
        if k is None:
            return
        self.pair[k] += amount
        p = tables.prompt_index.get(prompt_id)
        if p is not None:
            self.prompt[p] += amount
            flying = self._prompt_pair.setdefault(k, Counter())
            flying[p] += amount
            if not flying[p]:
                del flying[p]
