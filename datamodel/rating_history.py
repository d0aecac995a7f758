"""The leaderboard over time: one kept board per set of filters and day, in ``leaderboard_history``.

Whenever a leaderboard is computed and stored (:func:`datamodel.snapshots.store_snapshot`), its ratings also become
the board of that day (UTC) for those filters: the last one computed that day wins. Days older than the retention
(setting ``leaderboard_history_days``) are dropped, and so are the days of filter sets beyond the ``keep`` most
recently updated ones, so the table stays bounded. A board is the leaderboard's JSON
(:func:`arena.leaderboard.view.leaderboard_json`: each model's rating, interval and votes, the vote counts).

The page's "As of" menu, the rating-history chart, the ``leaderboard_history`` API and ``python -m arena leaderboard
--as-of / --history`` read it; ``--rebuild-history`` fills past days from the votes cast by then.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from datamodel.database import Database

DAY_FORMAT = "%Y-%m-%d"


@dataclass(frozen=True)
class KeptBoard:
    day: str  # YYYY-MM-DD (UTC)
    computed_at: float  # unix time
    board: dict  # arena.leaderboard.view.leaderboard_json


def day_of(when: float) -> str:
    """The UTC day of unix time ``when``, as kept (YYYY-MM-DD)."""
    return dt.datetime.fromtimestamp(when, dt.timezone.utc).strftime(DAY_FORMAT)


def end_of_day(day: str) -> float:
    """The last instant of ``day`` (YYYY-MM-DD, UTC) as unix time; a ValueError naming the format otherwise."""
    try:
        start = dt.datetime.strptime(day, DAY_FORMAT).replace(tzinfo=dt.timezone.utc)
        return (start + dt.timedelta(days=1)).timestamp() - 1e-6
    except (TypeError, ValueError, OverflowError):  # 9999-12-31 has no next day
        raise ValueError(f"Date {str(day)[:40]!r}: write it as YYYY-MM-DD (UTC) up to 9999-12-30, e.g. "
                         "2025-01-31.") from None


def keep_day(db: Database, key: str, board: dict, computed_at: float, *, days: int,
             keep: int | None = None) -> None:
    """Keep ``board`` as the board of its day for the filters ``key``, then drop the days older than ``days`` and
    (``keep``) every day of the filter sets beyond the ``keep`` most recently updated. ``days`` 0 keeps nothing."""
    if days <= 0:
        return
    cutoff = day_of(computed_at - days * 86400)
    with db.conn:
        db.execute("INSERT INTO leaderboard_history (filters, day, computed_at, board) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT (filters, day) DO UPDATE SET computed_at = excluded.computed_at, board = excluded.board "
                   "WHERE excluded.computed_at >= leaderboard_history.computed_at",
                   [key, day_of(computed_at), computed_at, json.dumps(board)])
        db.execute("DELETE FROM leaderboard_history WHERE day <= ?", [cutoff])
        if keep is not None:
            db.execute("DELETE FROM leaderboard_history WHERE filters NOT IN (SELECT filters FROM leaderboard_history "
                       "GROUP BY filters ORDER BY MAX(computed_at) DESC LIMIT ?)", [keep])


def kept_days(db: Database, key: str) -> list[str]:
    """The days kept for the filters ``key``, newest first."""
    return [day for day, in db.execute("SELECT day FROM leaderboard_history WHERE filters = ? ORDER BY day DESC",
                                       [key])]


def board_as_of(db: Database, key: str, day: str) -> KeptBoard | None:
    """The board of the filters ``key`` as of ``day``: that day's, else the latest kept before it; None if none."""
    end_of_day(day)  # checks the format
    row = db.execute("SELECT day, computed_at, board FROM leaderboard_history WHERE filters = ? AND day <= ? "
                     "ORDER BY day DESC LIMIT 1", [key, day]).fetchone()
    return KeptBoard(row[0], row[1], json.loads(row[2])) if row else None


def history(db: Database, key: str, *, days: int | None = None) -> list[KeptBoard]:
    """Every board kept for the filters ``key`` (the last ``days`` of them), oldest first."""
    limit, args = ("", [key]) if days is None else (" LIMIT ?", [key, days])  # PostgreSQL has no LIMIT -1
    rows = db.execute("SELECT day, computed_at, board FROM (SELECT * FROM leaderboard_history WHERE filters = ? "
                      f"ORDER BY day DESC{limit}) kept ORDER BY day", args).fetchall()
    return [KeptBoard(day, at, json.loads(board)) for day, at, board in rows]


def any_kept_days(db: Database, limit: int = 400) -> list[str]:
    """Every day some board is kept for, newest first (the page's "As of" menu)."""
    return [day for day, in db.execute("SELECT DISTINCT day FROM leaderboard_history ORDER BY day DESC LIMIT ?",
                                       [limit])]
