"""Build and serve the web app: the Gradio page mounted on a FastAPI app that also serves battle images."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

import gradio as gr
from fastapi import FastAPI

from datamodel.annotators import sync_accounts
from datamodel.battles import battle_image
from datamodel.media import MediaStore
from datamodel.settings import Settings
from datamodel.connection import Store
from arena.web.admin_tab import build_admin_tab
from arena.web.arena_tab import KEYBOARD_JS, build_arena_tab
from arena.web.context import AppContext
from arena.web.leaderboard_tab import LEADERBOARD_POLL_S, build_leaderboard_tab

CSS = """
#prompt h3 { margin: 0.2em 0; }
#reveal { min-height: 1.5em; }
.gradio-container:has(#reveal .voted) :is(#vote-a, #vote-b, #vote-tie, #vote-both-bad) {
    opacity: 0.45; pointer-events: none; }
.gradio-container:has(#reveal .voted) #skip-battle, .gradio-container:not(:has(#reveal .voted)) #next-battle {
    display: none; }
.battle-image { margin: 0; }
.battle-image figcaption { font-weight: 600; margin-bottom: 0.3em; }
/* the window's height less the header, prompt and buttons (about 500 px), so the vote buttons stay in view */
.battle-image img { width: 100%; aspect-ratio: 1 / 1; max-height: max(260px, calc(100vh - 500px)); object-fit: contain;
                    image-rendering: pixelated; border: 1px solid var(--border-color-primary); border-radius: 6px; }
"""
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MEDIA_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp"}
MEDIA_CACHE_BYTES = 64 * 1024 * 1024  # battle image bytes kept in memory per server process
GRADIO_CACHE_CLEANUP = (600, 3600)  # every 10 minutes, delete Gradio cache files older than an hour
log = logging.getLogger(__name__)


def make_context(settings: Settings, store: Store | None = None) -> AppContext:
    """What the app's handlers share, over the database of ``settings`` (or ``store``); accounts synced."""
    store = store or Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    sync_accounts(store.db(), settings.annotator_accounts)
    return AppContext(settings=settings, store=store, media=MediaStore(settings.media_dir))


def build_app(settings: Settings, store: Store | None = None, ctx: AppContext | None = None) -> gr.Blocks:
    """The arena as a Gradio Blocks app over ``ctx`` (default: :func:`make_context` of ``settings`` and ``store``)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Gradio's queue recomputes a pandas summary of up to 10,000 past events after every event by default; under
    # load that, not the arena, dominated the server's time. Summarise rarely and over few events.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "1000")
    ctx = ctx or make_context(settings, store)
    # Files Gradio hands out (an admin's vote export) live in its cache under unguessable names; drop them after an
    # hour (and all of them at a restart), so an export's address does not open it for ever.
    with gr.Blocks(title="T2I Arena", analytics_enabled=False, delete_cache=GRADIO_CACHE_CLEANUP) as blocks:
        gr.Markdown("# Text-to-image arena\nWhich image shows the prompt better? Model names appear after your vote.")
        # While the leaderboard tab is open it asks for the latest snapshot every few seconds (one small query).
        timer = gr.Timer(LEADERBOARD_POLL_S, active=False)
        with gr.Tabs():
            with gr.Tab("Arena", id="arena") as arena_tab:
                build_arena_tab(ctx)
            with gr.Tab("Leaderboard", id="leaderboard") as leaderboard_tab:
                build_leaderboard_tab(ctx, leaderboard_tab, timer)
            with gr.Tab("Admin", id="admin") as admin_tab:
                build_admin_tab(ctx)
        leaderboard_tab.select(lambda: gr.Timer(active=True), None, timer, api_visibility="private")
        for other in (arena_tab, admin_tab):
            other.select(lambda: gr.Timer(active=False), None, timer, api_visibility="private")
    blocks.queue(default_concurrency_limit=8)
    return blocks


class ByteCache:
    """A thread-safe least-recently-used cache of file contents, bounded by their total size in bytes.

    A file larger than the whole budget is read but never kept. Files are content-addressed and never change, so a
    cached copy is never stale.
    """

    def __init__(self, max_bytes: int = MEDIA_CACHE_BYTES):
        self.max_bytes, self.size = max_bytes, 0
        self._items: OrderedDict[Path, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def read(self, path: Path) -> bytes:
        """The bytes of ``path``, from memory when they are there; raises OSError when the file cannot be read."""
        with self._lock:
            body = self._items.get(path)
            if body is not None:
                self._items.move_to_end(path)
                return body
        body = path.read_bytes()
        if len(body) <= self.max_bytes:
            with self._lock:
                if path not in self._items:
                    self._items[path] = body
                    self.size += len(body)
                while self.size > self.max_bytes:
                    _, dropped = self._items.popitem(last=False)
                    self.size -= len(dropped)
        return body

    def __len__(self) -> int:
        return len(self._items)


class BattleMedia:
    """ASGI front door: ``GET .../battle-media/<token>/<a|b>`` answers a battle image, anything else goes to the app.

    Images are reachable only through a battle's unguessable media token, which only the session the battle was
    served to receives; a token answers that battle's two images and nothing else, and does not expire (the page
    keeps showing the images after the vote). The media folder itself is never exposed, so no path can be
    traversed. The images are answered here, before Gradio's middleware stack (CORS, Brotli, ...), which cost more
    than the vote itself under load; files are content-addressed and never change, so their bytes are cached
    (:class:`ByteCache`, at most ``cache_bytes`` in all).
    """

    def __init__(self, app, store: Store, media: MediaStore, cache_bytes: int = MEDIA_CACHE_BYTES):
        self.app, self.store, self.media = app, store, media
        self.cache = ByteCache(cache_bytes)

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if "/battle-media/" not in path:
            return await self.app(scope, receive, send)
        token, _, side = path.rpartition("/battle-media/")[2].partition("/")
        shown = battle_image(self.store.db(), token, side) if _TOKEN.match(token) else None
        if shown is None or scope["method"] != "GET":
            return await _answer(send, 404, b"Unknown image.", "text/plain")
        file = self.media.path(shown.media_hash, shown.media_ext)
        try:
            body = self.cache.read(file)
        except OSError as error:
            log.error("battle image %s (image id %s) is missing from the media folder: %s. Restore the media folder "
                      "or re-import the image.", file, shown.image_id, error)
            return await _answer(send, 404, b"Image file missing on the server.", "text/plain")
        await _answer(send, 200, body, MEDIA_TYPES[shown.media_ext], cache="private, max-age=86400")


async def _answer(send, status: int, body: bytes, media_type: str, cache: str = "no-store") -> None:
    headers = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode()),
               (b"cache-control", cache.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def skip_matplotlib_backend_switch() -> bool:
    """Make Gradio's per-event matplotlib backend switch a no-op where matplotlib is not installed; True if it did.

    Gradio 6 wraps every event in ``gradio.utils.MatplotlibBackendMananger``, which tries ``import matplotlib`` on
    entering and on leaving. This project draws with plotly and installs no matplotlib, and a failed import is not
    cached, so each try searches ``sys.path`` again: about 4% of the server's CPU under the load test. Without
    matplotlib there is no backend to switch, so a null context does the same.
    """
    import contextlib
    import importlib.util

    if importlib.util.find_spec("matplotlib") is not None or not hasattr(gr.utils, "MatplotlibBackendMananger"):
        return False
    gr.utils.MatplotlibBackendMananger = contextlib.nullcontext
    return True


def create_server(settings: Settings):
    """The whole web app as an ASGI application: battle images (:class:`BattleMedia`) and the Gradio page."""
    skip_matplotlib_backend_switch()
    store = Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    store.checkpoint_in_background()
    ctx = make_context(settings, store)
    ctx.snapshots.warm_up()  # the leaderboard worker starts beside the server, not at the first viewer
    blocks = build_app(settings, ctx=ctx)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        yield
        ctx.close()

    app = gr.mount_gradio_app(
        FastAPI(openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan), blocks, path="/",
        server_name=settings.host, server_port=settings.port, head=KEYBOARD_JS, css=CSS, footer_links=["api"],
        run_history=False,
    )  # no allowed_paths: Gradio would serve those folders to anyone (admin exports go through a private folder)
    return BattleMedia(app, ctx.store, ctx.media)


def serve(settings: Settings) -> None:
    import uvicorn

    uvicorn.run(create_server(settings), host=settings.host, port=settings.port, log_level="warning")
