"""Rate limits and sign-in throttles of the web app: in memory, per server process, or, for a :class:`RateLimiter`
given the app's store (several replicas on one PostgreSQL database), in the database, shared by all of them
(:mod:`datamodel.limits`).

:class:`RateLimiter` is a sliding window of requests per key (votes or battle loads per annotator, per client
address); :class:`LoginThrottle` counts failed sign-ins or admin unlocks per client address and for all addresses
together, and makes an address wait, twice as long after each further failure (guessing from many addresses at once
leaves each of them one guess). Instances live in the
app's context, never in a module global. The address of a request is :func:`client_address`: the connecting peer,
or the client named by a trusted proxy (``trusted_proxies``; uvicorn rewrites it before the app sees the request).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from datamodel.votes import VoteRejected

SWEEP_KEYS = 4096  # a limiter forgets idle keys once it holds this many (then twice as many as it keeps)


class RateLimited(VoteRejected):
    """Too many requests too fast; the message says when to try again. Nothing was written."""


def client_address(request) -> str:
    """The client address of a request (a ``gr.Request`` or a Starlette request) as the limits count it.

    The server rewrites the connecting address from ``X-Forwarded-For`` only for the proxies named in
    ``trusted_proxies`` (:func:`arena.web.app.server_config`), so a client cannot choose the address counted.
    """
    client = getattr(request, "client", None)
    return getattr(client, "host", None) or "unknown"


class RateLimiter:
    """At most ``per_minute`` requests per key in any 60 seconds (0: no limit); the refusal names ``noun``, ``what``
    (e.g. "per annotator") and the wait, after ``advice``. With a ``store`` the requests are counted in its database
    (:func:`datamodel.limits.rate_hit`, wall-clock time), so every app process on that database shares the limit;
    without one, in this process's memory."""

    SHARED_SWEEP_S = 60.0  # how often a shared limiter deletes the counts older than its window

    def __init__(self, per_minute: int, what: str, clock=time.monotonic, *, noun: str = "votes",
                 advice: str = "Look at the images a little longer and vote again", store=None):
        self.per_minute, self.what = per_minute, what
        self.clock = time.time if store is not None and clock is time.monotonic else clock  # replicas: wall time
        self.noun, self.advice = noun, advice
        self.store = store
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._sweep_at = SWEEP_KEYS
        self._swept = self.clock()

    def _refuse(self, wait: float) -> RateLimited:
        wait = max(1, int(wait + 0.999))
        return RateLimited(f"Slow down: at most {self.per_minute} {self.noun} per minute {self.what}. "
                           f"{self.advice} in {wait} s.")

    def _check_shared(self, key: str) -> None:
        from datamodel.limits import rate_hit, sweep_rate_events

        db, now = self.store.db(), self.clock()
        wait = rate_hit(db, f"{self.noun} {self.what}", key, now=now, window=60.0, limit=self.per_minute)
        if now - self._swept >= self.SHARED_SWEEP_S:
            self._swept = now
            sweep_rate_events(db, before=now - 60.0)
        if wait > 0:
            raise self._refuse(wait)

    def check(self, key: str) -> None:
        """Count one request for ``key``, or raise :class:`RateLimited` if it would exceed the limit."""
        if self.per_minute <= 0:
            return
        if self.store is not None:
            return self._check_shared(key)
        now = self.clock()
        with self._lock:
            if len(self._hits) >= self._sweep_at:
                self._hits = {k: hits for k, hits in self._hits.items() if hits and hits[-1] > now - 60.0}
                self._sweep_at = max(SWEEP_KEYS, 2 * len(self._hits))
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - 60.0:
                hits.popleft()
            if len(hits) >= self.per_minute:
                raise self._refuse(hits[0] + 60.0 - now)
            hits.append(now)


OVERALL = "*"  # the throttle's key for all addresses together (no client address is written like this)


@dataclass
class _Failures:
    times: deque[float] = field(default_factory=deque)  # failures within the window, oldest first
    pending: int = 0  # attempts begun and not ended


class LoginThrottle:
    """Failed attempts at a secret (an annotator's token, the admin password) per client address and overall, with
    exponential back-off.

    Each client address remembers its failures of the last ``window_s`` seconds. Once there are ``max_failures`` of
    them, the next attempt from that address is refused, unchecked and uncounted, until ``lockout_s · 2^(n − max)``
    seconds after the latest failure, for ``n`` failures in the window: the wait doubles with each further failure.
    With the defaults (5 failures, 30 s, 15 minutes) an address gets about ten guesses a quarter of an hour.

    Attempts in flight at one account count as failures of its address until they end, so a burst of concurrent
    guesses at an account cannot slip past the limit: at most ``max_failures`` of them are checked (the others are
    told that one is being checked). Attempts at different accounts are people arriving (a class behind one address
    signing in together, each with their own name), and pass together while the address has fewer failures than the
    limit; how many run at once is the sign-in events' concurrency (:data:`arena.web.context.SIGN_IN_CONCURRENCY`),
    so a burst spread over many accounts is checked at most ``max_failures`` plus that many, less one, times before
    the address waits. An address whose wait has passed gets one attempt at a time.

    All addresses together remember their failures too. Past ``max_failures_overall`` in the window (someone guessing
    from many addresses), the limit of every address drops to one failure: an address that has failed waits, one that
    has not may still try, one attempt at a time. So many addresses cannot lock everyone out (the right secret from a
    fresh address still opens), while each of them gets a single guess per back-off. A limit of 0 is no limit.

    A success counts nothing and forgives nothing: failures only age out of the window. Input that is refused before
    any secret is checked (a name that is not allowed, a token too short to sign up with) is not a guess either
    (:meth:`LoginAttempt.not_a_guess`).

    Usage: ``attempt = throttle.attempt(address, account=name)`` (raises :class:`RateLimited` while the address
    must wait; no ``account``, as for the admin password: one secret), then
    ``attempt.succeeded()``, ``attempt.failed()`` or ``attempt.not_a_guess()``; as a context manager, leaving
    without one of them (an exception included) is a failure.
    """

    def __init__(self, what: str, *, max_failures: int, max_failures_overall: int, window_s: float, lockout_s: float,
                 clock=time.monotonic, store=None):
        self.what = what
        self.clock = time.time if store is not None and clock is time.monotonic else clock  # replicas: wall time
        self.max_failures, self.max_failures_overall = max_failures, max_failures_overall
        self.window_s, self.lockout_s = window_s, lockout_s
        self.store = store  # several replicas on one database: the attempts are counted there
        self._records: dict[str, _Failures] = {}
        self._lock = threading.Lock()
        self._sweep_at = SWEEP_KEYS
        self._swept = self.clock()

    @classmethod
    def from_settings(cls, what: str, settings, store=None) -> LoginThrottle:
        """The throttle the ``login_*`` settings describe, for attempts named ``what`` ("sign-ins"); counted in
        ``store``'s database when given (replicas)."""
        return cls(what, max_failures=settings.login_max_failures,
                   max_failures_overall=settings.login_max_failures_overall, window_s=settings.login_window_s,
                   lockout_s=settings.login_lockout_s, store=store)

    def attempt(self, client: str, account: str | None = None) -> LoginAttempt:
        """Begin an attempt from ``client`` at ``account`` (a name as typed; None: the one secret), or raise
        :class:`RateLimited` saying what happened and how long to wait."""
        target = account_key(client, account)
        keys = list(dict.fromkeys(([OVERALL] if self.max_failures_overall > 0 else []) + (
            [client, target] if self.max_failures > 0 else [])))
        if self.store is not None:
            return self._attempt_shared(client, target, keys)
        now = self.clock()
        with self._lock:
            if len(self._records) >= self._sweep_at:
                self._sweep(now)
            self._check(client, target, account is not None, {key: self._state(key, now) for key in keys}, now)
            for key in keys:
                self._records.setdefault(key, _Failures()).pending += 1
        return LoginAttempt(self, keys)

    def _attempt_shared(self, client: str, target: str, keys: list[str]) -> LoginAttempt:
        """:meth:`attempt` with the records in the database (:mod:`datamodel.limits`), decided in one transaction
        that the throttle's attempts take in turn on every replica."""
        from datamodel.limits import attempt_state, begin_attempts, sweep_attempts, throttle_transaction

        db, now = self.store.db(), self.clock()
        if now - self._swept >= self.window_s:
            self._swept = now
            sweep_attempts(db, before=now - self.window_s)
        with throttle_transaction(db, self.what):
            state = attempt_state(db, self.what, keys, now=now, window=self.window_s)
            self._check(client, target, target != client, state, now)
            return LoginAttempt(self, begin_attempts(db, self.what, keys, now=now))

    def _state(self, key: str, now: float) -> tuple[int, float | None, int]:
        """(failures of ``key`` within the window, the latest one's time or None, its attempts in flight); older
        failures are forgotten."""
        record = self._records.get(key)
        if record is None:
            return 0, None, 0
        while record.times and record.times[0] <= now - self.window_s:
            record.times.popleft()
        return len(record.times), (record.times[-1] if record.times else None), record.pending

    def _check(self, client: str, target: str, named: bool, state: dict[str, tuple[int, float | None, int]],
               now: float) -> None:
        """Raise :class:`RateLimited` if the attempt of ``client`` at ``target`` (:func:`account_key`; ``named``: an
        account was named) must wait, given each key's :meth:`_state`; the message says which rule refused it."""
        if self.max_failures <= 0:
            return
        limit = self.max_failures
        if self.max_failures_overall > 0 and state[OVERALL][0] >= self.max_failures_overall:
            limit = 1  # guessing from many addresses: one failure each
        failures, latest, in_flight = state[client]
        if failures >= limit and latest is not None:  # latest is None only without failures
            remaining = latest + self.lockout_s * 2.0 ** (failures - limit) - now
            if remaining > 0:
                minutes = max(1, round(self.window_s / 60))
                raise RateLimited(f"Too many failed {self.what} from your address. Wait {math.ceil(remaining)} s and "
                                  f"try again ({failures} failed in the last {minutes} minutes).")
            if in_flight:  # the wait is over: one attempt at a time from this address
                raise self._busy(named)
        elif failures + state[target][2] >= limit:  # with the attempts at this account in flight
            raise self._busy(named)

    def _busy(self, named: bool) -> RateLimited:
        whose = " at this account" if named else ""
        return RateLimited(f"Other {self.what}{whose} from your address are being checked right now (nothing has "
                           "failed yet). Try again in a second.")

    def _end(self, keys: list, failed: bool) -> None:
        if self.store is not None:  # keys: the attempts' ids in the database
            from datamodel.limits import end_attempts

            end_attempts(self.store.db(), keys, failed=failed, now=self.clock())
            return
        now = self.clock()
        with self._lock:
            for key in keys:
                record = self._records.setdefault(key, _Failures())
                record.pending = max(0, record.pending - 1)
                if failed:
                    record.times.append(now)
                elif not record.pending and not record.times:
                    del self._records[key]

    def _sweep(self, now: float) -> None:
        for key, record in list(self._records.items()):
            if not record.pending and (not record.times or record.times[-1] <= now - self.window_s):
                del self._records[key]
        self._sweep_at = max(SWEEP_KEYS, 2 * len(self._records))


def account_key(client: str, account: str | None) -> str:
    """The throttle's key of the attempts from ``client`` at ``account``: the address and a digest of the name as
    accounts are looked up (:func:`datamodel.annotators.name_key`: a burst at "Alice" and "alice " is one burst;
    a name of any length makes a short key); ``client`` itself when no account is named."""
    if account is None:
        return client
    import hashlib

    from datamodel.annotators import name_key

    return f"{client} {hashlib.blake2b(name_key(str(account)).encode(), digest_size=12).hexdigest()}"


class LoginAttempt:
    """One attempt begun with :meth:`LoginThrottle.attempt`; it ends once, as a success or a failure."""

    def __init__(self, throttle: LoginThrottle, keys: list[str] | list[int]):  # keys in memory, ids in a database
        self._throttle, self._keys, self._ended = throttle, keys, False

    def succeeded(self) -> None:
        self._end(failed=False)

    def not_a_guess(self) -> None:
        """The input was refused before any secret was checked: nothing is counted."""
        self._end(failed=False)

    def failed(self) -> None:
        self._end(failed=True)

    def _end(self, failed: bool) -> None:
        if not self._ended:
            self._ended = True
            self._throttle._end(self._keys, failed)

    def __enter__(self) -> LoginAttempt:
        return self

    def __exit__(self, *exc) -> None:
        self._end(failed=True)  # no-op after succeeded()
