"""The front door: what every request meets before any of the app's work, and the browser cookie.

- **Bodies.** A request body is read here, at most ``max_request_bytes`` (``ARENA_MAX_REQUEST_BYTES``); a larger one
  (declared, or streamed past the limit) is answered 413 without reading the rest, so no request can make the server
  hold more than that. The page's own requests are a few kilobytes; it uploads nothing.
- **Events.** A request that runs one of the page's events (``queue/join``, ``run/...``, ``call/...``) is looked at
  before Gradio: an unknown event is a 404 and one log line (Gradio wrote a 60-line traceback); an event that needs
  the page's session (``session_events``: a vote, a battle load, signing out, an admin function) named with a session
  the server does not hold is refused (409) without creating one; and a request that would open a new session is
  counted against the client address's new pages per minute (``ARENA_RATE_LIMIT_PAGES``). Gradio creates a session
  (a copy of the page's configuration, about 0.2 MB) for every new session id a request names and keeps 10,000; before
  this door, refused requests with made-up session ids pushed the annotators' own sessions out.
- **Caching.** The page and its configuration carry ``Cache-Control: no-store``: they hold the root URL the page
  talks to, which a shared cache must never keep for someone else.
- **The browser cookie.** The page and its configuration, asked for without one, set ``arena-browser``, a random id
  the browser sends back and scripts cannot read (HttpOnly); battle images never carry it (both sides of a battle
  answer alike). Admin sessions and export links are bound to it and to the client
  address (:class:`arena.web.admin_session.Holder`), so knowing a page's Gradio session id (it is in URLs that
  proxies log) is not enough to use its admin session.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from http.cookies import SimpleCookie

from arena.ratelimit import RateLimited, RateLimiter

BROWSER_COOKIE = "arena-browser"
_EVENT_PATH = re.compile(r"/gradio_api/(?:queue/join|run/([^/]+)|api/([^/]+)|call/(?:v2/)?([^/]+)|component_server)/?$")
_NO_STORE = re.compile(r"(?:^|/)(?:config|gradio_api/info)/?$")
log = logging.getLogger("arena.web")


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
    sessions it holds); ``session_events`` the events that need a session the server holds; ``pages`` the limiter of
    new sessions per client address."""

    def __init__(self, app, blocks, *, session_events: set[str], pages: RateLimiter, max_body: int):
        self.app, self.blocks, self.session_events = app, blocks, session_events
        self.pages, self.max_body = pages, max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        send = self._headers(scope, send)
        if scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        body = await self._body(scope, receive)
        if body is None:
            return await _refuse(send, 413, f"The request is larger than {self.max_body:,} bytes.")
        match = _EVENT_PATH.search(scope.get("path", ""))
        if match is not None:
            refused = self._check_event(scope, match, body)
            if refused is not None:
                return await _refuse(send, *refused)
        return await self.app(scope, _replay(body, receive), send)

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

    async def _body(self, scope, receive) -> bytes | None:
        """The request's whole body, or None once it is larger than ``max_body`` (the rest is never read)."""
        for key, value in scope["headers"]:
            if key == b"content-length" and value.strip().isdigit() and int(value) > self.max_body:
                return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    def _check_event(self, scope, match, body: bytes) -> tuple[int, str] | None:
        """(status, message) refusing an event request, or None to let it through."""
        try:
            request = json.loads(body) if body else {}
        except (ValueError, RecursionError):
            return None  # Gradio answers 422 before it creates anything
        if not isinstance(request, dict):
            return None
        client = (scope.get("client") or ("unknown",))[0]
        name = next((group for group in match.groups() if group), None)
        fn = self._event(request.get("fn_index"), name)
        if fn is None and "component_server" not in match.group(0):
            _log_refusal("unknown event", client, f"{name or request.get('fn_index')!r}")
            return 404, "Unknown event."
        session = request.get("session_hash")
        if not isinstance(session, str) or session in self.blocks.state_holder:
            return None
        if fn is None or getattr(fn, "api_name", None) in self.session_events:
            _log_refusal(getattr(fn, "api_name", None) or "component_server", client, "no such session")
            return 409, "This page's session has ended: reload the page."
        try:
            self.pages.check(client)
        except RateLimited as error:
            _log_refusal("new page", client, str(error))
            return 429, str(error)
        return None

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


async def _refuse(send, status: int, message: str) -> None:
    """Answer ``status`` with ``message`` in the shapes the page shows: Gradio's error of an event (``error``,
    ``visible``) and of a refused queue join (``detail``)."""
    body = json.dumps({"error": message, "visible": True, "title": "Refused", "detail": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})
