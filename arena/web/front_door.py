"""The front door: what every request meets before any of the app's work, and the browser cookie.

Every request is held to these before the app sees it; each limit is counted here, so no request makes the server
create anything (a Gradio session, an event, a file, a buffer) before it has passed them:

- **Routes.** Only the routes the page and its API clients use are open (:data:`ROUTES`, each with the limit that
  covers it; docs/security.md lists them): everything else Gradio serves (uploads, files, monitoring, deep links,
  streams of media components, ...) is a 404 here, unread. Before, ``/gradio_api/upload`` took 105 MB/s from one
  client without a session and kept the files an hour.
- **Bodies.** A request body is read here, at most ``max_request_bytes`` (``ARENA_MAX_REQUEST_BYTES``); a larger one
  (declared, or streamed past the limit) is answered 413 without reading the rest. Bodies being read at once are
  bounded too, by their bytes (declared, or received so far): :data:`BUFFERED_PER_ADDRESS` per client address (429)
  and :data:`BUFFERED_BYTES` in all (503), each body within :data:`BODY_TIMEOUT_S` (408), so slow connections cannot
  pile up buffers (before, 300 slow bodies of just under 1 MiB added 301 MB).
- **Streams.** Responses that stay open (a page's heartbeat, its event stream, an API call's result stream) are at
  most :data:`STREAMS_PER_ADDRESS` per client address at once (429).
- **Events.** A request that runs one of the page's events (``queue/join``, ``run/...``, ``call/...``) is looked at
  before Gradio: an unknown event is a 404 and one log line; an event that only a signed-in page can send (a vote,
  an answer, a battle or question load, signing out, every admin function but Unlock: ``session_events``) named with
  a session the server does not hold, or with none, is refused (409) without creating one; and a request that would
  open a new session (a page's first event, a program's first call) is counted against the client address's new
  pages per minute (``ARENA_RATE_LIMIT_PAGES``; a page's first events, sent together under one new session id, count
  once). Gradio creates a session for every new session
  id a request names (or, for ``call/``, for every request) and keeps ``capacity`` of them: before this door, requests
  with made-up session ids pushed the annotators' own sessions out, and 5,400 ``call/`` requests stopped Gradio's
  queue. Sessions where someone is signed in are kept before the others (:func:`keep_signed_in_sessions`).
- **Caching.** The page and its configuration carry ``Cache-Control: no-store``: they hold the root URL the page
  talks to, which a shared cache must never keep for someone else.
- **The browser cookie.** The page and its configuration, asked for without one, set ``arena-browser``, a random id
  the browser sends back and scripts cannot read (HttpOnly); battle images never carry it (both sides of a battle
  answer alike). Admin sessions and export links are bound to it and to the client
  address (:class:`arena.web.admin_session.Holder`), so knowing a page's Gradio session id (it is in URLs that
  proxies log) is not enough to use its admin session.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from http.cookies import SimpleCookie

from arena.ratelimit import RateLimited, RateLimiter

BROWSER_COOKIE = "arena-browser"
BODY_TIMEOUT_S = 15.0  # a request body must arrive whole within this many seconds
BUFFERED_PER_ADDRESS = 4 << 20  # bytes of request bodies one client address may have held while they are read
BUFFERED_BYTES = 32 << 20  # bytes of request bodies held while they are read, all clients together
STREAMS_PER_ADDRESS = 256  # open streaming responses (heartbeats, event streams) per client address
ADMITTED_S = 60.0  # a new session id let in is remembered this long: the page's other first requests pass with it
_NO_STORE = re.compile(r"(?:^|/)(?:config|gradio_api/info)/?$")
log = logging.getLogger("arena.web")


@dataclass(frozen=True)
class Route:
    """A route the front door lets through: its methods, its path (a regular expression over the whole path), what
    it is, and the limit that covers it (docs/security.md shows them). ``kind`` says how the door treats it: "read"
    (answered from what exists, nothing kept), "stream" (held open: counted per address), "event" (runs one of the
    page's events: checked as the module docstring says) or "small" (a body, no state)."""

    methods: tuple[str, ...]
    path: str
    what: str
    limit: str
    kind: str = "read"

    @property
    def pattern(self) -> re.Pattern:
        return re.compile(f"(?:{self.path})\\Z")


READ = ("GET", "HEAD", "OPTIONS")
EVENT = ("POST", "OPTIONS")
ROUTES: tuple[Route, ...] = (
    Route(READ, r"/", "the page", "new pages are counted at their first event"),
    Route(READ, r"/config/?", "the page's configuration (API clients)", "none needed: read only"),
    Route(READ, r"/gradio_api/info/?", "the API description", "none needed: read only"),
    Route(READ, r"/(?:gradio_api/)?theme\.css|/favicon\.ico|/robots\.txt", "the theme, icon and robots file",
          "none needed: read only"),
    Route(READ, r"/(?:assets|static)/[^?#]+", "Gradio's bundled scripts, styles and fonts", "none needed: read only"),
    Route(READ, r"/battle-media/[A-Za-z0-9_-]{1,64}/[ab]", "a battle's image",
          "an unguessable token per battle; renditions only, cached"),
    Route(READ, r"/kwise-media/[A-Za-z0-9_-]{1,64}/[1-4]", "a four-image battle's image",
          "an unguessable token per battle; renditions only, cached"),
    Route(READ, r"/rating-media/[A-Za-z0-9_-]{1,64}", "a rating question's image",
          "an unguessable token per question; renditions only, cached"),
    Route(READ, r"/admin-export/[A-Za-z0-9_-]{1,64}", "an admin's export",
          "once, to the admin session's address and browser"),
    Route(("GET",), r"/gradio_api/heartbeat/[^/]{1,128}", "a page's heartbeat (held open)",
          f"{STREAMS_PER_ADDRESS} open streams per address", kind="stream"),
    Route(("GET",), r"/gradio_api/queue/data", "a page's event stream (held open)",
          f"{STREAMS_PER_ADDRESS} open streams per address", kind="stream"),
    Route(("GET",), r"/gradio_api/call/[^/]{1,128}/[^/]{1,128}", "an API call's result stream (held open)",
          f"{STREAMS_PER_ADDRESS} open streams per address", kind="stream"),
    Route(EVENT, r"/gradio_api/queue/join", "a queued event of the page",
          "known events only; a signed-in page's events need a session the server holds; a new session is a new page, "
          "counted per address", kind="event"),
    Route(EVENT, r"/gradio_api/(?:run|api)/[^/]{1,128}/?", "an event run at once (votes, battles, answers)",
          "as queue/join", kind="event"),
    Route(EVENT, r"/gradio_api/call/(?:v2/)?[^/]{1,128}/?", "an event called as an HTTP API (curl)",
          "as queue/join; without a session id each call is a new page", kind="event"),
    Route(EVENT, r"/gradio_api/(?:cancel|reset)/?", "a page cancelling its event",
          "the body limits; creates nothing", kind="small"),
)
_EVENT_NAME = re.compile(r"/gradio_api/(?:run/([^/]+)|api/([^/]+)|call/(?:v2/)?([^/]+))/?$")


def route_of(method: str, path: str) -> Route | None:
    """The route of :data:`ROUTES` that ``method`` and ``path`` take, or None (the door answers 404)."""
    for route in ROUTES:
        if method in route.methods and route.pattern.match(path):
            return route
    return None


def request_cookie(headers, name: str = BROWSER_COOKIE) -> str | None:
    """The value of cookie ``name`` among ASGI ``headers`` ([(name, value)] bytes), or None."""
    for key, value in headers:
        if key == b"cookie":
            jar = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed cookie header: no cookie
                continue
            if name in jar:
                return jar[name].value
    return None


class FrontDoor:
    """ASGI front door of the web app (module docstring). ``blocks`` is the Gradio app's Blocks (its events and the
    sessions it holds); ``session_events`` the ids of the events that need a session the server holds (only a
    signed-in page sends them); ``pages`` the limiter of new sessions per client address."""

    def __init__(self, app, blocks, *, session_events: set[int], pages: RateLimiter, max_body: int):
        self.app, self.blocks, self.pages, self.max_body = app, blocks, pages, max_body
        self.session_events = session_events
        self.streams: dict[str, int] = {}  # open streaming responses per client address
        self.bodies: dict[str, int] = {}  # bytes of request bodies being read, per client address
        self.buffered = 0  # bytes of request bodies held while they are read, all clients together
        self.admitted: OrderedDict[str, float] = OrderedDict()  # new session ids let in lately, and when
        self._lock = threading.Lock()  # the counters: one event loop serves them, a test may share the door

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":  # the page uses none
            return await send({"type": "websocket.close", "code": 1008})
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):] or "/"
        route = route_of(scope["method"], path)
        if route is None:  # plain, as any server's: it says nothing of what is behind
            return await _not_found(send)
        send = self._headers(scope, send)
        client = (scope.get("client") or ("unknown",))[0]
        if route.kind == "stream":
            return await self._stream(client, scope, receive, send)
        if scope["method"] in READ:
            return await self.app(scope, receive, send)
        body = await self._body(scope, receive, client)
        if isinstance(body, tuple):
            return await _refuse(send, *body)
        if route.kind == "event":
            refused = self._check_event(client, path, body)
            if refused is not None:
                return await _refuse(send, *refused)
        return await self.app(scope, _replay(body, receive), send)

    async def _stream(self, client: str, scope, receive, send):
        """Pass a streaming response through, at most :data:`STREAMS_PER_ADDRESS` open per address."""
        with self._lock:
            if self.streams.get(client, 0) >= STREAMS_PER_ADDRESS:
                refused = True
            else:
                refused = False
                self.streams[client] = self.streams.get(client, 0) + 1
        if refused:
            _log_refusal("stream", client, f"{STREAMS_PER_ADDRESS} open streams")
            return await _refuse(send, 429, f"Too many open pages from your address (at most {STREAMS_PER_ADDRESS} "
                                            "at once): close some and reload this one.")
        try:
            return await self.app(scope, receive, send)
        finally:
            with self._lock:
                left = self.streams.get(client, 1) - 1
                if left:
                    self.streams[client] = left
                else:
                    self.streams.pop(client, None)

    def _headers(self, scope, send):
        """``send`` with the page's no-store and the browser cookie added to the response's headers."""
        path = scope.get("path", "")
        has_cookie = request_cookie(scope["headers"]) is not None
        secure = scope.get("scheme") == "https"

        async def sending(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                html = any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers)
                page = html or _NO_STORE.search(path) is not None
                if page:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", b"no-store"))
                if page and not has_cookie:  # the page and its configuration: what a browser or API client loads first
                    attributes = "; Secure; SameSite=None; Partitioned" if secure else "; SameSite=Lax"
                    headers.append((b"set-cookie", f"{BROWSER_COOKIE}={secrets.token_urlsafe(24)}; Path=/; "
                                                   f"HttpOnly{attributes}".encode()))
                message = dict(message, headers=headers)
            await send(message)

        return sending

    async def _body(self, scope, receive, client: str) -> bytes | tuple[int, str]:
        """The request's whole body, or (status, message) refusing it: larger than ``max_body`` (the rest is never
        read), more bytes held at once for ``client`` or for everyone than the door allows, or not whole within
        :data:`BODY_TIMEOUT_S`."""
        declared = 0
        for key, value in scope["headers"]:
            if key == b"content-length" and value.strip().isdigit():
                declared = int(value)
                if declared > self.max_body:
                    return 413, f"The request is larger than {self.max_body:,} bytes."
        held, size, chunks = 0, 0, []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + BODY_TIMEOUT_S
        try:
            refused = self._hold(client, declared)
            if refused:
                return refused
            held = declared
            while True:
                try:
                    message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    return 408, f"The request did not arrive whole within {BODY_TIMEOUT_S:.0f} s."
                if message["type"] == "http.disconnect":
                    break
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    return 413, f"The request is larger than {self.max_body:,} bytes."
                if size > held:
                    refused = self._hold(client, size - held)
                    if refused:
                        return refused
                    held = size
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            return b"".join(chunks)
        finally:
            self._release(client, held)

    def _hold(self, client: str, size: int) -> tuple[int, str] | None:
        """Count ``size`` more bytes held for ``client``'s body, or say why not (nothing counted then)."""
        with self._lock:
            if self.bodies.get(client, 0) + size > BUFFERED_PER_ADDRESS:
                _log_refusal("request body", client, f"more than {BUFFERED_PER_ADDRESS:,} bytes being sent at once")
                return 429, "Too many requests from your address at once. Try again in a moment."
            if self.buffered + size > BUFFERED_BYTES:
                _log_refusal("request body", client, f"more than {BUFFERED_BYTES:,} bytes being sent at once")
                return 503, "The server is busy. Try again in a moment."
            self.bodies[client] = self.bodies.get(client, 0) + size
            self.buffered += size
        return None

    def _release(self, client: str, size: int) -> None:
        with self._lock:
            self.buffered -= size
            left = self.bodies.get(client, 0) - size
            if left > 0:
                self.bodies[client] = left
            else:
                self.bodies.pop(client, None)

    def _check_event(self, client: str, path: str, body: bytes) -> tuple[int, str] | None:
        """(status, message) refusing an event request, or None to let it through."""
        try:
            request = json.loads(body) if body else {}
        except (ValueError, RecursionError):
            return None  # Gradio answers 422 before it creates anything
        if not isinstance(request, dict):
            return None
        match = _EVENT_NAME.search(path)
        name = next((group for group in match.groups() if group), None) if match else None
        fn = self._event(request.get("fn_index"), name)
        if fn is None or fn.fn is None:  # unknown, or one that runs in the browser alone
            fn = None
        if fn is None:
            _log_refusal("unknown event", client, f"{name or request.get('fn_index')!r}")
            return 404, "Unknown event."
        session = request.get("session_hash")
        if isinstance(session, str) and (session in self.blocks.state_holder or self._admitted(session)):
            return None
        if fn._id in self.session_events:
            _log_refusal(fn.api_name or str(fn._id), client, "no such session")
            return 409, "This page's session has ended: reload the page."
        try:
            self.pages.check(client)
        except RateLimited as error:
            _log_refusal("new page", client, str(error))
            return 429, str(error)
        if isinstance(session, str):
            self._admit(session)
        return None

    def _admitted(self, session: str) -> bool:
        """Whether ``session`` is a new session id let in within :data:`ADMITTED_S` (the page's load events arrive
        together, before the first of them has made the session)."""
        with self._lock:
            at = self.admitted.get(session)
        return at is not None and time.monotonic() - at < ADMITTED_S

    def _admit(self, session: str) -> None:
        now = time.monotonic()
        with self._lock:
            self.admitted[session] = now
            while self.admitted and (len(self.admitted) > 65_536
                                     or next(iter(self.admitted.values())) < now - ADMITTED_S):
                self.admitted.popitem(last=False)

    def _event(self, fn_index, name: str | None):
        """The event a request names by ``fn_index`` (or, without one, by its api name ``name``), or None."""
        fns = self.blocks.fns
        if isinstance(fn_index, int) and not isinstance(fn_index, bool):
            return fns.get(fn_index)
        if fn_index is None and name not in (None, "predict"):
            return next((fn for fn in fns.values() if fn.api_name == name), None)
        return None


def _log_refusal(event: str, client: str, message: str) -> None:
    log.info("refused %s from %s: %s", event, client, " ".join(message.split())[:300])


def _replay(body: bytes, receive):
    """A ``receive`` that hands the app ``body`` (already read) and then waits on the client as before."""
    sent = False

    async def replaying():
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replaying


async def _not_found(send) -> None:
    body = b"Not found."
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send, status: int, message: str) -> None:
    """Answer ``status`` with ``message`` in the shapes the page shows: Gradio's error of an event (``error``,
    ``visible``) and of a refused queue join (``detail``)."""
    body = json.dumps({"error": message, "visible": True, "title": "Refused", "detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})
