"""Build and serve the web app: the Gradio page mounted on a FastAPI app that also serves battle images."""

from __future__ import annotations

import functools
import os
import re

import gradio as gr
from fastapi import FastAPI

from arena.annotators import sync_accounts
from arena.battles import battle_image
from arena.media import MediaStore
from arena.settings import Settings
from arena.store import Store
from arena.web.admin_tab import build_admin_tab
from arena.web.arena_tab import KEYBOARD_JS, build_arena_tab
from arena.web.context import AppContext
from arena.web.leaderboard_tab import build_leaderboard_tab

CSS = """
#prompt h3 { margin: 0.2em 0; }
#reveal { min-height: 1.5em; }
.gradio-container:has(#reveal .voted) :is(#vote-a, #vote-b, #vote-tie, #vote-both-bad) {
    opacity: 0.45; pointer-events: none; }
.battle-image { margin: 0; }
.battle-image figcaption { font-weight: 600; margin-bottom: 0.3em; }
.battle-image img { width: 100%; aspect-ratio: 1 / 1; object-fit: contain; image-rendering: pixelated;
                    border: 1px solid var(--border-color-primary); border-radius: 6px; }
"""
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MEDIA_TYPES = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp"}


def build_app(settings: Settings, store: Store | None = None) -> gr.Blocks:
    """The arena as a Gradio Blocks app over the database of ``settings`` (or ``store``)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    # Gradio's queue recomputes a pandas summary of up to 10,000 past events after every event by default; under
    # load that, not the arena, dominated the server's time. Summarise rarely and over few events.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", "1000")
    os.environ.setdefault("GRADIO_ANALYTICS_MAX_EVENTS", "1000")
    store = store or Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    sync_accounts(store.db(), settings.annotator_accounts)
    ctx = AppContext(settings=settings, store=store, media=MediaStore(settings.media_dir))
    with gr.Blocks(title="T2I Arena", analytics_enabled=False) as blocks:
        gr.Markdown("# Text-to-image arena\nWhich image shows the prompt better? Model names appear after your vote.")
        # The periodic refresh runs only while the leaderboard tab is open.
        timer = gr.Timer(settings.leaderboard_refresh_s, active=False) if settings.leaderboard_refresh_s > 0 else None
        with gr.Tabs():
            with gr.Tab("Arena", id="arena") as arena_tab:
                build_arena_tab(ctx)
            with gr.Tab("Leaderboard", id="leaderboard") as leaderboard_tab:
                build_leaderboard_tab(ctx, leaderboard_tab, timer)
            with gr.Tab("Admin", id="admin") as admin_tab:
                build_admin_tab(ctx)
        if timer is not None:
            leaderboard_tab.select(lambda: gr.Timer(active=True), None, timer, api_visibility="private")
            for other in (arena_tab, admin_tab):
                other.select(lambda: gr.Timer(active=False), None, timer, api_visibility="private")
    blocks.queue(default_concurrency_limit=8)
    return blocks


class BattleMedia:
    """ASGI front door: ``GET .../battle-media/<token>/<a|b>`` answers a battle image, anything else goes to the app.

    Images are reachable only through a battle's unguessable media token, which only the session the battle was
    served to receives; the media folder itself is never exposed, so no path can be traversed. The images are
    answered here, before Gradio's middleware stack (CORS, Brotli, ...), which cost more than the vote itself under
    load; files are content-addressed and never change, so their bytes are cached.
    """

    def __init__(self, app, store: Store, media: MediaStore, cache_size: int = 1024):
        self.app, self.store, self.media = app, store, media
        self.read = functools.lru_cache(maxsize=cache_size)(lambda path: path.read_bytes())

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if "/battle-media/" not in path:
            return await self.app(scope, receive, send)
        token, _, side = path.rpartition("/battle-media/")[2].partition("/")
        shown = battle_image(self.store.db(), token, side) if _TOKEN.match(token) else None
        if shown is None or scope["method"] != "GET":
            return await _answer(send, 404, b"Unknown image.", "text/plain")
        body = self.read(self.media.path(shown.media_hash, shown.media_ext))
        await _answer(send, 200, body, MEDIA_TYPES[shown.media_ext], cache="private, max-age=86400")


async def _answer(send, status: int, body: bytes, media_type: str, cache: str = "no-store") -> None:
    headers = [(b"content-type", media_type.encode()), (b"content-length", str(len(body)).encode()),
               (b"cache-control", cache.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def create_server(settings: Settings):
    """The whole web app as an ASGI application: battle images (:class:`BattleMedia`) and the Gradio page."""
    store = Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    blocks = build_app(settings, store)
    app = gr.mount_gradio_app(
        FastAPI(openapi_url=None, docs_url=None, redoc_url=None), blocks, path="/", server_name=settings.host,
        server_port=settings.port, head=KEYBOARD_JS, css=CSS,
        allowed_paths=[str(settings.cache_dir.resolve() / "exports")], footer_links=["api"], run_history=False,
    )
    return BattleMedia(app, store, MediaStore(settings.media_dir))


def serve(settings: Settings) -> None:
    import uvicorn

    uvicorn.run(create_server(settings), host=settings.host, port=settings.port, log_level="warning")
