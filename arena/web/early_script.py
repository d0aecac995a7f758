"""A script the page runs before Gradio's own: the frame budget of Gradio's orphaned status-tracker loop.

Gradio 6.31 shows a status tracker while the page loads its configuration. The tracker starts an elapsed-time loop
(``requestAnimationFrame`` calling itself while its status is "pending") and is removed from the page once the app
is in; nothing stops the loop then, so an idle arena page asked for 60 animation frames a second for as long as it
stayed open. Measured in headless Chromium on the shared 2-core machine, an idle arena page took 0.055-0.060 s of CPU
a second with the loop and 0.005-0.008 s with this script (an empty page: 0.003 s): a laptop's or phone's battery
through a long annotation session. (The test suite's browser tier used the same CPU either way: its pages are busy.)
Gradio reaches ``requestAnimationFrame`` through a reference it takes when its modules load, so a script in the
page's ``head`` setting (which Gradio adds after loading) comes too late; :class:`EarlyScript` therefore writes the
script into the HTML page itself, as the first element of ``<head>``.

The script (``static/frame_budget.js``, :data:`FRAME_BUDGET_JS`) lets a frame asked for by a status tracker wait one
second unless a tracker is in view (``.wrap`` with ``full`` or ``minimal`` progress and not ``hide``: its timer then
runs at the screen's rate as before). Every other caller (Svelte's transitions, the page's own scripts) is not
touched. If Gradio fixes the loop, the script costs one stack trace per tracker frame and can go.
"""

from __future__ import annotations

import re

from arena.web.assets import STATIC

SCRIPT = STATIC / "frame_budget.js"
FRAME_BUDGET_JS = SCRIPT.read_text()

_HEAD = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)


class EarlyScript:
    """ASGI middleware: ``script`` as the first element of the ``<head>`` of every HTML page ``app`` answers to a GET
    (its Content-Length corrected); every other response, and a page without ``<head>`` or with a Content-Encoding,
    goes through unchanged. A HEAD is answered with the headers of the GET, the page's corrected Content-Length
    included, and no body (before, HEAD / said a length 987 bytes shorter than GET / sent)."""

    def __init__(self, app, script: str = FRAME_BUDGET_JS):
        self.app = app
        self.tag = b"<script>" + script.encode() + b"</script>"

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        if scope["method"] == "HEAD":
            scope, send = dict(scope, method="GET"), _headers_only(send)
        start, chunks = None, []

        async def sending(message):
            nonlocal start
            if message["type"] == "http.response.start":
                if _is_plain_html(message.get("headers", [])):
                    start = message  # held until the whole page is in
                    return None
                return await send(message)
            if message["type"] != "http.response.body" or start is None:
                return await send(message)
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return None
            page = self._insert(b"".join(chunks))
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send(dict(start, headers=headers + [(b"content-length", str(len(page)).encode())]))
            await send({"type": "http.response.body", "body": page, "more_body": False})

        await self.app(scope, receive, sending)

    def _insert(self, page: bytes) -> bytes:
        head = _HEAD.search(page)
        return page if head is None else page[:head.end()] + self.tag + page[head.end():]


def _headers_only(send):
    """``send`` for a HEAD answered as its GET: the response's start as it is, one empty body, nothing else."""
    ended = False

    async def sending(message):
        nonlocal ended
        if message["type"] == "http.response.start":
            return await send(message)
        if message["type"] == "http.response.body" and not ended and not message.get("more_body", False):
            ended = True
            return await send({"type": "http.response.body", "body": b"", "more_body": False})
        return None

    return sending


def _is_plain_html(headers) -> bool:
    """Whether response ``headers`` announce an HTML page that is not compressed (so it can be edited)."""
    names = {key.lower(): value for key, value in headers}
    return names.get(b"content-type", b"").startswith(b"text/html") and b"content-encoding" not in names
