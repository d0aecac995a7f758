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

import sqlite_utils

from datamodel.connection import transaction
from datamodel.dialect import is_postgres


def rate_hit(db: sqlite_utils.Database, scope: str, key: str, *, now: float, window: float, limit: int) -> float:
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


def sweep_rate_events(db: sqlite_utils.Database, *, before: float) -> int:
    """Delete every counted request older than ``before`` (keys not counted again keep theirs until this runs);
    return how many."""
    with transaction(db, scope="rate-sweep"):
        return db.execute("DELETE FROM rate_events WHERE at < ?", [before]).rowcount
