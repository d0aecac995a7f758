"""Leaderboard snapshots as stored: the ``leaderboard_snapshots`` table and the ``data_versions`` counters.

A snapshot is a leaderboard as every viewer sees it (JSON), with the change counters it was computed at
(:func:`datamodel.schema._study_scale`); :mod:`arena.leaderboard.service` computes them and serves them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from datamodel.database import Database
from datamodel.rating_history import keep_day


def data_version(db: Database) -> tuple[int, ...]:
    """The ``data_versions`` counters (catalog, metrics, votes): they change whenever anything shown may have."""
    return tuple(version for _, version in db.execute("SELECT name, version FROM data_versions ORDER BY name"))


@dataclass(frozen=True)
class Snapshot:
    key: str
    view: dict  # arena.leaderboard.view.render_view
    data_version: tuple[int, ...]
    computed_at: float  # unix time
    seconds: float  # how long the computation took

    def age(self, now: float | None = None) -> float:
        return max(0.0, (time.time() if now is None else now) - self.computed_at)


def store_snapshot(db: Database, snapshot: Snapshot, keep: int, history_days: int = 0) -> None:
    """Write ``snapshot`` and drop all but the ``keep`` most recently computed; with ``history_days`` (the caller's
    decision: only the server's own boards, :func:`arena.leaderboard.service.keeps_history`), keep its ratings as the
    board of its day too (:func:`datamodel.rating_history.keep_day`, that many days)."""
    with db.conn:
        db.execute(
            "INSERT INTO leaderboard_snapshots (filters, data_version, computed_at, seconds, view) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (filters) DO UPDATE SET data_version = excluded.data_version, "
            "computed_at = excluded.computed_at, seconds = excluded.seconds, view = excluded.view",
            [snapshot.key, json.dumps(snapshot.data_version), snapshot.computed_at, snapshot.seconds,
             json.dumps(snapshot.view)],
        )
        db.execute("DELETE FROM leaderboard_snapshots WHERE filters NOT IN (SELECT filters FROM leaderboard_snapshots "
                   "ORDER BY computed_at DESC LIMIT ?)", [keep])
        if history_days and "json" in snapshot.view and json.loads(snapshot.key).get("until") is None:
            keep_day(db, snapshot.key, snapshot.view["json"], snapshot.computed_at, days=history_days)


def stored_snapshot(db: Database, key: str) -> Snapshot | None:
    row = db.execute("SELECT data_version, computed_at, seconds, view FROM leaderboard_snapshots WHERE filters = ?",
                     [key]).fetchone()
    if row is None:
        return None
    version, computed_at, seconds, view = row
    return Snapshot(key, json.loads(view), tuple(json.loads(version)), computed_at, seconds)


def change_marks(db: Database) -> tuple:
    """Counts and newest ids (or times) of the votes, judgments, ratings (and excluded ratings) and metrics: they
    move whenever the judges' tables could change."""
    return (*db.execute("SELECT COUNT(*), coalesce(max(id), 0) FROM votes").fetchone(),
            *db.execute("SELECT COUNT(*), coalesce(max(updated_at), '') FROM judgments").fetchone(),
            *db.execute("SELECT COUNT(*), coalesce(max(id), 0), coalesce(SUM(excluded), 0) FROM ratings").fetchone(),
            *db.execute("SELECT COUNT(*), coalesce(max(id), 0) FROM metrics").fetchone())


def snapshot_computed_at(db: Database, key: str) -> float | None:
    """When the stored snapshot of ``key`` was computed (unix time), or None: one primary-key read, without the
    view."""
    row = db.execute("SELECT computed_at FROM leaderboard_snapshots WHERE filters = ?", [key]).fetchone()
    return None if row is None else row[0]


def claim_computation(db: Database, key: str, holder: str, *, now: float, hold_s: float) -> bool:
    """Claim the computation of ``key``'s snapshot for ``holder`` until ``now + hold_s``: True when no one else
    holds an unexpired claim (``snapshot_claims``; one write transaction, so two processes never both get it)."""
    with db.conn:
        row = db.execute(
            "INSERT INTO snapshot_claims (filters, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (filters) DO UPDATE "
            "SET holder = excluded.holder, expires_at = excluded.expires_at WHERE snapshot_claims.expires_at <= ? "
            "OR snapshot_claims.holder = excluded.holder RETURNING holder", [key, holder, now + hold_s, now]).fetchone()
    return row is not None


def release_computation(db: Database, key: str, holder: str) -> None:
    """``holder`` is done with ``key`` (its snapshot stored, or failed): another may claim it at once."""
    with db.conn:
        db.execute("DELETE FROM snapshot_claims WHERE filters = ? AND holder = ?", [key, holder])


def snapshot_times(db: Database) -> dict[str, float]:
    """{filters: when its stored snapshot was computed} of every stored snapshot."""
    return dict(db.execute("SELECT filters, computed_at FROM leaderboard_snapshots").fetchall())
