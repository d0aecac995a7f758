"""Per-key sliding-window rate limits for the vote endpoint (per annotator, per client address).

In memory, per server process; an instance lives in the app's context, never in a module global.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from datamodel.votes import VoteRejected


class RateLimited(VoteRejected):
    """Too many votes too fast; the message says when to try again. Nothing was written."""


class RateLimiter:
    def __init__(self, per_minute: int, what: str, clock=time.monotonic):
        self.per_minute, self.what, self.clock = per_minute, what, clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, key: str) -> None:
        """Count one request for ``key``, or raise :class:`RateLimited` if it would exceed the limit."""
        if self.per_minute <= 0:
            return
        now = self.clock()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - 60.0:
                hits.popleft()
            if len(hits) >= self.per_minute:
                wait = max(1, int(hits[0] + 60.0 - now + 0.999))
                raise RateLimited(
                    f"Slow down: at most {self.per_minute} votes per minute {self.what}. "
                    f"Look at the images a little longer and vote again in {wait} s."
                )
            hits.append(now)
