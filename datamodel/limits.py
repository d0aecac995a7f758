"""The web app's rate limits, counted in the database so that several app replicas share them (:mod:`arena.ratelimit`
keeps them in memory when one process serves a SQLite file, as before).

:func:`rate_hit` counts one request of ``key`` (an annotator, a client address) against a limit of ``limit``
requests in any ``window`` seconds (the ``rate_events`` table: :func:`datamodel.schema._rate_events`), or says how
long to wait. The count and the new row are one transaction that holds the key's lock, so two replicas counting the
same key at once cannot both slip under the limit. On PostgreSQL it is one call of ``arena_rate_hit``, committed
without waiting for the disk (a count lost in a crash costs nothing). Times are unix seconds: replicas on several
machines keep their clocks in step (NTP), as any distributed rate limit needs.
"""

from __future__ import annotations

from datamodel.database import Database
from datamodel.transactions import transaction
from datamodel.dialect import is_postgres


def rate_hit(db: Database, scope: str, key: str, *, now: float, window: float, limit: int) -> float:
    """Count one request of ``key`` under ``scope``'s limit; return 0 when counted, else the seconds until the oldest
    counted request leaves the window (and nothing is counted)."""
    if is_postgres(db):
        return float(db.execute("SELECT arena_rate_hit(?, ?, ?, ?, ?)", [scope, key, now, window, limit]).fetchone()[0])
    with transaction(db):
        db.execute("DELETE FROM rate_events WHERE scope = ? AND key = ? AND at <= ?", [scope, key, now - window])
        found, first = db.execute("SELECT count(*), min(at) FROM rate_events WHERE scope = ? AND key = ?",
                                  [scope, key]).fetchone()
        if found >= limit:
            return first + window - now
        db.execute("INSERT INTO rate_events (scope, key, at) VALUES (?, ?, ?)", [scope, key, now])
    return 0.0


def sweep_rate_events(db: Database, *, before: float) -> int:
    """Delete every counted request older than ``before`` (keys not counted again keep theirs until this runs);
    return how many."""
    with transaction(db, scope="rate-sweep"):
        return db.execute("DELETE FROM rate_events WHERE at < ?", [before]).rowcount


# --- sign-in throttles ------------------------------------------------------------------------------------------------

STALE_ATTEMPT_S = 60.0  # an attempt not ended after this long (its replica died) no longer counts as in flight


def attempt_state(db: Database, throttle: str, keys, *, now: float, window: float
                  ) -> dict[str, tuple[int, float | None, int]]:
    """{key: (failures within ``window`` seconds before ``now``, the latest one's time or None, attempts in flight)}
    of ``throttle`` (``login_attempts``). Read it and :func:`begin_attempts` in one :func:`throttle_transaction`."""
    keys = list(keys)
    state = {key: (0, None, 0) for key in keys}
    for key, failures, latest, pending in db.execute(
            "SELECT key, count(*) FILTER (WHERE failed = 1 AND ended_at > ?), "
            "max(ended_at) FILTER (WHERE failed = 1 AND ended_at > ?), "
            "count(*) FILTER (WHERE ended_at IS NULL AND started_at > ?) FROM login_attempts "
            f"WHERE throttle = ? AND key IN ({', '.join('?' * len(keys)) or 'NULL'}) GROUP BY key",
            [now - window, now - window, now - STALE_ATTEMPT_S, throttle, *keys]).fetchall():
        state[key] = (failures, latest, pending)
    return state


def throttle_transaction(db: Database, throttle: str):
    """The transaction in which one attempt of ``throttle`` is decided: one at a time across every replica."""
    return transaction(db, scope=f"throttle:{throttle}")


def begin_attempts(db: Database, throttle: str, keys, *, now: float) -> list[int]:
    """Record an attempt in flight for each of ``keys``; return their ids (for :func:`end_attempts`)."""
    return [db.execute("INSERT INTO login_attempts (throttle, key, started_at) VALUES (?, ?, ?) RETURNING id",
                       [throttle, key, now]).fetchone()[0] for key in keys]


def end_attempts(db: Database, ids, *, failed: bool, now: float) -> None:
    """End the attempts ``ids``: failed ones count against their keys for the window; the others are forgotten."""
    ids = list(ids)
    if not ids:
        return
    marks = ", ".join("?" * len(ids))
    with transaction(db, scope="throttle-end"):
        if failed:
            db.execute(f"UPDATE login_attempts SET ended_at = ?, failed = 1 WHERE id IN ({marks})", [now, *ids])
        else:
            db.execute(f"DELETE FROM login_attempts WHERE id IN ({marks})", ids)


def sweep_attempts(db: Database, *, before: float) -> int:
    """Forget the failures that ended, and the attempts that began, before ``before``; return how many."""
    with transaction(db, scope="throttle-sweep"):
        return db.execute("DELETE FROM login_attempts WHERE coalesce(ended_at, started_at) < ?", [before]).rowcount
