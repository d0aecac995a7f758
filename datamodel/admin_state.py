"""Admin sessions and one-time export links in the database, so that several app replicas share them
(:class:`arena.web.admin_session.AdminSessions` keeps them in memory when one process serves a SQLite file).

Ids and tokens are stored as their SHA-256 only, as the annotators' tokens are. A session is held by a client address
and, when the browser sent one, its cookie: only that holder may use it (:func:`session_live`). An export link works
once, for its holder, before it expires and while its session lives (:func:`claim_offer` takes it out in the same
transaction). The export's file stays on the replica that wrote it (a sticky balancer sends its admin back there).
"""

from __future__ import annotations

import hashlib

from datamodel.database import Database
from datamodel.transactions import transaction


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _holds(client: str, browser: str | None, held_client: str, held_browser: str | None) -> bool:
    return client == held_client and (held_browser is None or browser == held_browser)


def open_session(db: Database, session_id: str, *, client: str, browser: str | None, now: float) -> None:
    with transaction(db, scope="admin"):
        db.execute("INSERT INTO admin_sessions (id_hash, client, browser, opened_at, seen_at) VALUES (?, ?, ?, ?, ?)",
                   [_hash(session_id), client, browser, now, now])


def session_live(db: Database, session_id: str, *, client: str, browser: str | None, now: float,
                 idle_s: float, touch: bool = True) -> bool:
    """Whether ``session_id`` is a session used within ``idle_s`` seconds that this holder may use; it is kept alive
    (``seen_at``) unless ``touch`` is false."""
    row = db.execute("SELECT client, browser, seen_at FROM admin_sessions WHERE id_hash = ?",
                     [_hash(session_id)]).fetchone()
    if row is None or now - row[2] > idle_s or not _holds(client, browser, row[0], row[1]):
        return False
    if touch:
        with transaction(db, scope="admin"):
            db.execute("UPDATE admin_sessions SET seen_at = ? WHERE id_hash = ? AND seen_at < ?",
                       [now, _hash(session_id), now])
    return True


def end_idle_sessions(db: Database, *, now: float, idle_s: float) -> list[str]:
    """End the sessions idle for more than ``idle_s`` seconds, and withdraw their offers and the expired ones; return
    the files of the withdrawn offers (the replica that wrote one deletes it)."""
    with transaction(db, scope="admin"):
        db.execute("DELETE FROM admin_sessions WHERE seen_at < ?", [now - idle_s])
        gone = [path for path, in db.execute(
            "DELETE FROM export_offers WHERE expires_at <= ? OR session_hash NOT IN (SELECT id_hash FROM admin_sessions) "
            "RETURNING path", [now])]
    return gone


def put_offer(db: Database, token: str, *, session_id: str, client: str, browser: str | None, path: str,
              name: str, media_type: str, expires_at: float) -> bool:
    """Offer the file at ``path`` for one download under ``token``; False when the session has ended meanwhile."""
    with transaction(db, scope="admin"):
        if db.execute("SELECT 1 FROM admin_sessions WHERE id_hash = ?", [_hash(session_id)]).fetchone() is None:
            return False
        db.execute("INSERT INTO export_offers (token_hash, session_hash, client, browser, path, name, media_type, "
                   "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [_hash(token), _hash(session_id), client, browser, path, name, media_type, expires_at])
    return True


def claim_offer(db: Database, token: str, *, client: str, browser: str | None, now: float
                ) -> tuple[str, str, str] | None:
    """(path, name, media type) of the export offered under ``token``, taken out of the offers (a link works once),
    if it has not expired, its session is still live and this holder is the one it was offered to; else None (and
    a request from anyone else uses nothing up)."""
    with transaction(db, scope="admin"):
        row = db.execute("SELECT o.client, o.browser, o.path, o.name, o.media_type, o.expires_at FROM export_offers o "
                         "JOIN admin_sessions s ON s.id_hash = o.session_hash WHERE o.token_hash = ?",
                         [_hash(token)]).fetchone()
        if row is None or row[5] <= now or not _holds(client, browser, row[0], row[1]):
            return None
        db.execute("DELETE FROM export_offers WHERE token_hash = ?", [_hash(token)])
    return row[2], row[3], row[4]


def end_sessions(db: Database, session_ids) -> None:
    """End these sessions (a server stopping ends its own) and withdraw their offers."""
    hashes = [_hash(session_id) for session_id in session_ids]
    if not hashes:
        return
    marks = ", ".join("?" * len(hashes))
    with transaction(db, scope="admin"):
        db.execute(f"DELETE FROM export_offers WHERE session_hash IN ({marks})", hashes)
        db.execute(f"DELETE FROM admin_sessions WHERE id_hash IN ({marks})", hashes)
