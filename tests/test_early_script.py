"""The script written first into the page (arena.web.early_script): the frame budget of Gradio's orphaned
status-tracker loop, and the middleware that writes it."""

from __future__ import annotations

import asyncio

from support.arena import build_small_arena
from support.browser import SIZES
from support.webapp import running_app

from arena.web.early_script import FRAME_BUDGET_JS, EarlyScript

# Counts the frames the page asks the browser for, underneath any wrapper the page installs (an init script runs
# before the page's own scripts).
COUNT_FRAMES = """
window.__frames = 0;
const browserFrame = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => { window.__frames += 1; return browserFrame(callback); };
"""


def _frames_in(page, seconds: float) -> int:
    page.evaluate("() => { window.__frames = 0; }")
    page.wait_for_timeout(seconds * 1000)
    return page.evaluate("() => window.__frames")


def _answer(app, path: str = "/", method: str = "GET") -> tuple[dict, bytes]:
    """The response start message and the whole body ``app`` sends for a request of ``path``."""
    messages = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        messages.append(message)

    asyncio.run(app({"type": "http", "method": method, "path": path, "headers": []}, receive, send))
    start = next(m for m in messages if m["type"] == "http.response.start")
    return start, b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")


def _app(content_type: bytes, chunks: list[bytes], extra_headers=()):
    async def app(scope, receive, send):
        length = str(sum(map(len, chunks))).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", content_type), (b"content-length", length), *extra_headers]})
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk, "more_body": i < len(chunks) - 1})
    return app


def test_the_script_comes_first_in_the_head_of_an_html_page_sent_in_pieces():
    page = [b"<!doctype html><html><HEAD lang='en'><meta charset=utf-8>", b"<script src=x.js></script></head>",
            b"<body></body></html>"]
    start, body = _answer(EarlyScript(_app(b"text/html; charset=utf-8", page), "let early = 1;"))
    assert body == (b"<!doctype html><html><HEAD lang='en'><script>let early = 1;</script><meta charset=utf-8>"
                    b"<script src=x.js></script></head><body></body></html>")
    assert dict(start["headers"])[b"content-length"] == str(len(body)).encode()
    assert [k for k, _ in start["headers"]].count(b"content-length") == 1


def test_other_answers_go_through_unchanged():
    html = [b"<html><head></head></html>"]
    for app, method in [(_app(b"application/json", [b'{"head": "<head>"}']), "GET"),
                        (_app(b"text/html", [b"<p>no head</p>"]), "GET"),
                        (_app(b"text/html", html, [(b"content-encoding", b"gzip")]), "GET"),
                        (_app(b"text/html", html), "POST")]:
        expected = _answer(app, method=method)
        assert _answer(EarlyScript(app), method=method) == expected


def test_an_idle_arena_page_asks_for_at_most_a_frame_or_two_a_second(tmp_path, browser):
    """Before: 120 frames in 2 s, all from Gradio's page loader, removed from the page seconds earlier."""
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES["desktop"])
        page.add_init_script(COUNT_FRAMES)
        page.goto(url)
        page.wait_for_selector("#signin-button")
        page.wait_for_timeout(4000)  # the loader's own animation (Svelte's spring) is usually over by then
        # on a loaded machine the spring can run late: the page must settle within three more windows (a loop that
        # keeps asking for frames, as before, fails every one)
        windows = [_frames_in(page, 3)]
        while windows[-1] > 6 and len(windows) < 4:
            windows.append(_frames_in(page, 3))
        assert windows[-1] <= 6, f"frames in successive 3 s windows: {windows}"
        assert page.evaluate("() => document.head.firstElementChild.textContent").strip() == FRAME_BUDGET_JS.strip()


STATUS_TRACKER = """
window.__ticks = 0;
window.__running = true;
function tick() { window.__ticks += 1; if (window.__running) requestAnimationFrame(tick); }
window.startTracker = () => requestAnimationFrame(tick);
window.cancelled = () => { let ran = false; const id = requestAnimationFrame(() => { ran = true; });
  cancelAnimationFrame(id); return new Promise((done) => setTimeout(() => done({id, ran}), 1500)); };
"""
OTHER = "window.__others = 0; function other() { window.__others += 1; requestAnimationFrame(other); }\n" \
        "window.startOther = () => requestAnimationFrame(other);"


def test_a_status_tracker_s_loop_waits_a_second_a_frame_unless_a_timer_is_in_view(browser):
    """A stand-in page: a loop in an asset named like Gradio's status tracker, one in another asset, and a
    tracker's wrapper that is hidden, then shown."""
    page = browser.new_page(viewport=SIZES["desktop"])
    files = {
        "/": ("text/html", f"<html><head><script>{FRAME_BUDGET_JS}</script>"
                           "<script src='/assets/statustracker-AbC1.js'></script>"
                           "<script src='/assets/index-XyZ2.js'></script></head>"
                           "<body><div id=tracker class='wrap default full hide'></div></body></html>"),
        "/assets/statustracker-AbC1.js": ("text/javascript", STATUS_TRACKER),
        "/assets/index-XyZ2.js": ("text/javascript", OTHER),
    }

    def serve(route):
        path = "/" + route.request.url.split("/", 3)[3]
        kind, body = files[path]
        route.fulfill(status=200, content_type=kind, body=body)

    page.route("http://arena.test/**", serve)
    page.goto("http://arena.test/")
    page.evaluate("() => { startTracker(); startOther(); }")
    page.wait_for_timeout(2000)
    ticks, others = page.evaluate("() => [window.__ticks, window.__others]")
    assert ticks <= 4 and others >= 30, (ticks, others)
    page.evaluate("() => { document.getElementById('tracker').classList.remove('hide'); window.__ticks = 0; }")
    page.wait_for_timeout(2000)  # the frame already waiting comes within a second; then the screen's rate
    assert page.evaluate("() => window.__ticks") >= 30
    page.evaluate("() => { document.getElementById('tracker').classList.add('hide'); }")
    cancelled = page.evaluate("() => cancelled()")
    assert cancelled == {"id": cancelled["id"], "ran": False} and cancelled["id"] < 0
