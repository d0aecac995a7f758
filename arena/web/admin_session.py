"""The admin's sessions: opened by the admin password, checked on every admin call, each with a private folder.

An admin session is a random id that the page keeps in its server-held state (``gr.State``: never sent to the
browser) and that is registered here; every admin function but unlock asks :meth:`AdminSessions.live` first, so a
hidden admin function called by its ``fn_index`` from any other page gets nothing. A session is bound to its
:class:`Holder`, the client address and browser cookie (:mod:`arena.web.front_door`) that unlocked it, and answers no
other: Gradio finds a page's state by its session id, which travels in URLs that proxies log, so that id alone must
not open an admin session. A session ends after ``idle_s`` seconds without an admin call, and all of them when the
server stops.

Vote exports are written into the session's own folder (mode 0700, inside the app's folder, mode 0700; Gradio never
serves either) as files of mode 0600, then offered for download (:meth:`AdminSessions.offer`) under a random token
that only the export event's answer to that page's session carries. :meth:`AdminSessions.claim` hands a file out
once: while its session lives, for ``offer_s`` seconds, to the client address that asked for the export; the
front door (:class:`arena.web.app.AdminExports`) streams it and deletes it; a request from another holder gets
nothing and leaves the link working for its admin. An offer not claimed in time is deleted
(a timer sweeps it); what a session's folder holds goes when the session ends, and everything when the server stops
(:meth:`AdminSessions.close`, from the app's shutdown).

Several replicas on one database (:meth:`AdminSessions.attach`, which the app does on PostgreSQL) keep the sessions and
the offers in it (:mod:`datamodel.admin_state`), on wall-clock time: a session is live on every replica, kept alive
by an admin call on any of them, ended for all by its idleness; a link works once across all of them. The folders and
the export files stay on the replica that wrote them, which a sticky balancer sends the admin back to (a link claimed
on another replica answers nothing there).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datamodel.connection import Store

ADMIN_IDLE_S = 1800.0  # an admin session ends after 30 minutes without an admin call
SHARED_SWEEP_S = 5.0  # with the sessions in the database, how often a session check also sweeps the idle ones
EXPORT_OFFER_S = 600.0  # an export's download link works for 10 minutes (and once)


class SessionEnded(PermissionError):
    """The admin session is not (or no longer) live: unlock again."""


@dataclass(frozen=True)
class Holder:
    """Who holds an admin session or an export link: the client address and the browser's cookie (None when the
    browser sent none, e.g. cookies blocked in an embedding page: then the address alone binds)."""

    client: str
    browser: str | None = None

    def may_use(self, bound: Holder) -> bool:
        """Whether this requester may use what ``bound`` holds."""
        return self.client == bound.client and (bound.browser is None or self.browser == bound.browser)

    @classmethod
    def of(cls, request) -> Holder:
        """The holder making a ``gr.Request`` (or Starlette request)."""
        from arena.ratelimit import client_address
        from arena.web.front_door import BROWSER_COOKIE

        cookies = getattr(request, "cookies", None) or {}
        return cls(client_address(request), cookies.get(BROWSER_COOKIE) or None)


@dataclass
class _Session:
    holder: Holder
    seen: float
    folder: Path | None = None


@dataclass(frozen=True)
class Offer:
    """An export file waiting for its one download: ``token`` names it in the link; ``name`` and ``media_type``
    are what the download is called and declared as; only ``holder`` may claim it, before ``expires``."""

    token: str
    path: Path
    session_id: str
    holder: Holder
    name: str
    media_type: str
    expires: float


class AdminSessions:
    """The live admin sessions of one server, and their private export folders."""

    def __init__(self, idle_s: float = ADMIN_IDLE_S, clock=time.monotonic, offer_s: float = EXPORT_OFFER_S):
        self.idle_s, self.clock, self.offer_s = idle_s, clock, offer_s
        self._sessions: dict[str, _Session] = {}
        self._offers: dict[str, Offer] = {}  # exports waiting for their download, by token
        self._timers: dict[str, threading.Timer] = {}  # each offer's sweep once it has expired, by token
        self._root: Path | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.store: Store | None = None  # the app's store when the replicas share the sessions (attach)
        self._swept = float("-inf")

    def attach(self, store) -> None:
        """Keep the sessions and offers in ``store``'s database from now on, shared with every replica on it (on
        wall-clock time unless another clock was given)."""
        self.store = store
        if self.clock is time.monotonic:
            self.clock = time.time

    def open(self, holder: Holder) -> str:
        """A new admin session for the page of ``holder`` (after the right password); returns its id."""
        session_id = secrets.token_urlsafe(32)
        with self._lock:
            now = self.clock()
            self._expire(now)
            if self.store is not None:
                from datamodel.admin_state import open_session

                open_session(self.store.db(), session_id, client=holder.client, browser=holder.browser, now=now)
            self._sessions[session_id] = _Session(holder, now)
        return session_id

    def _shared_live(self, session_id: str, holder: Holder, now: float, touch: bool) -> bool:
        from datamodel.admin_state import session_live

        assert self.store is not None  # called only where the replicas share the sessions (attach)
        return session_live(self.store.db(), session_id, client=holder.client, browser=holder.browser, now=now,
                            idle_s=self.idle_s, touch=touch)

    def live(self, session_id, holder: Holder, *, touch: bool = True) -> bool:
        """Whether ``session_id`` (a page's state: anything) is a live admin session that ``holder`` may use; a live
        one is kept alive unless ``touch`` is false (the leaderboard's checks, which its timer repeats while the tab
        is open)."""
        if not isinstance(session_id, str):
            return False
        now = self.clock()
        with self._lock:
            if self.store is not None:
                if now - self._swept >= SHARED_SWEEP_S:
                    self._expire(now)
                if not self._shared_live(session_id, holder, now, touch):
                    return False
                session = self._sessions.get(session_id)
                if session is not None and touch:
                    session.seen = now
                return True
            self._expire(now)
            session = self._sessions.get(session_id)
            if session is None or not holder.may_use(session.holder):
                return False
            if touch:
                session.seen = now
            return True

    @contextlib.contextmanager
    def offer(self, session_id: str, suffix: str, *, name: str, media_type: str, holder: Holder) -> Iterator[Offer]:
        """A new empty file of mode 0600 in the session's folder (``offer.path``), for the block to write; when the
        block ends without an error the file is offered for download under ``offer.token`` (:meth:`claim`), otherwise
        it is deleted.

        Raises :class:`SessionEnded` unless ``session_id`` is live (check with :meth:`live` first for a message), and
        when the session ends (or the server stops) while the block runs.
        """
        with self._lock:
            if (self.store is not None and isinstance(session_id, str) and not self._closed
                    and self._shared_live(session_id, holder, self.clock(), False)):
                self._sessions.setdefault(session_id, _Session(holder, self.clock()))  # opened on another replica
            session = self._sessions.get(session_id) if isinstance(session_id, str) else None
            if session is None or self._closed:
                raise SessionEnded("no live admin session")
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="arena-exports-"))  # mode 0700
            if session.folder is None:
                session.folder = Path(tempfile.mkdtemp(prefix="admin-", dir=self._root))
            handle, file_name = tempfile.mkstemp(prefix="votes-", suffix=suffix, dir=session.folder)  # mode 0600
        os.close(handle)
        offer = Offer(secrets.token_urlsafe(32), Path(file_name), session_id, holder, name, media_type, 0.0)
        try:
            yield offer
        except BaseException:
            offer.path.unlink(missing_ok=True)
            raise
        with self._lock:
            expires = self.clock() + self.offer_s
            offered = True
            if self.store is not None and not self._closed:
                from datamodel.admin_state import put_offer

                offered = put_offer(self.store.db(), offer.token, session_id=session_id, client=holder.client,
                                    browser=holder.browser, path=str(offer.path), name=name, media_type=media_type,
                                    expires_at=expires)
            if self._closed or session_id not in self._sessions or not offered:
                offer.path.unlink(missing_ok=True)  # the server stopped or the session ended meanwhile
                raise SessionEnded("no live admin session")
            self._offers[offer.token] = replace(offer, expires=expires)
            timer = self._timers[offer.token] = threading.Timer(self.offer_s + 1.0, self.sweep)
            timer.daemon = True
            timer.start()

    def claim(self, token: str, holder: Holder) -> Offer | None:
        """The export offered under ``token``, taken out of the offers (a link works once), provided it has not
        expired, its session is still live (not kept alive by this) and ``holder`` is the one it was offered to;
        otherwise None. A request from anyone else uses nothing up: the link still works for its admin. The caller
        deletes the file of the offer it gets once it has sent it."""
        with self._lock:
            now = self.clock()
            self._expire(now)
            if self.store is not None:
                from datamodel.admin_state import claim_offer

                if not isinstance(token, str) or claim_offer(self.store.db(), token, client=holder.client,
                                                             browser=holder.browser, now=now) is None:
                    return None
            offer = self._offers.get(token) if isinstance(token, str) else None
            if offer is None or not holder.may_use(offer.holder):
                return None  # (shared: a link claimed on a replica other than the one holding its file)
            del self._offers[token]
            self._cancel_timer(token)
        return offer

    def sweep(self) -> None:
        """Delete the exports whose link expired and end the sessions idle for too long."""
        with self._lock:
            self._expire(self.clock())

    def close(self) -> None:
        """End every session, withdraw every offer and delete the app's export folder with all it holds."""
        with self._lock:
            self._closed = True
            if self.store is not None and self._sessions:  # this server's sessions end with it
                from datamodel.admin_state import end_sessions

                end_sessions(self.store.db(), list(self._sessions))
            self._sessions.clear()
            self._offers.clear()
            for token in list(self._timers):
                self._cancel_timer(token)
            root, self._root = self._root, None
        if root is not None:
            shutil.rmtree(root, ignore_errors=True)

    def _expire(self, now: float) -> None:
        """End the sessions idle for too long (their folders go) and withdraw the offers that expired or whose
        session ended (their files go); shared, the database's too. Holds the lock."""
        if self.store is not None:
            from datamodel.admin_state import end_idle_sessions

            self._swept = now
            end_idle_sessions(self.store.db(), now=now, idle_s=self.idle_s)
            for session_id, session in list(self._sessions.items()):  # kept alive on another replica meanwhile?
                if now - session.seen > self.idle_s and self._shared_live(session_id, session.holder, now, False):
                    session.seen = now
        for session_id, session in list(self._sessions.items()):
            if now - session.seen > self.idle_s:
                del self._sessions[session_id]
                if session.folder is not None:
                    shutil.rmtree(session.folder, ignore_errors=True)
        for token, offer in list(self._offers.items()):
            if offer.expires <= now or offer.session_id not in self._sessions:
                del self._offers[token]
                self._cancel_timer(token)
                offer.path.unlink(missing_ok=True)

    def _cancel_timer(self, token: str) -> None:
        timer = self._timers.pop(token, None)
        if timer is not None:
            timer.cancel()
