"""Build and serve the web app: the Gradio page mounted on a FastAPI app that also serves battle images."""

from __future__ import annotations

import os
import re

import gradio as gr
from fastapi import FastAPI, Response
from fastapi.responses import FileResponse

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


def create_server(settings: Settings) -> FastAPI:
    """The whole web app: ``/battle-media/<token>/<a|b>`` for battle images, the Gradio page at ``/``.

    Images are reachable only through a battle's unguessable media token, which only the session the battle was
    served to receives; the media folder itself is never exposed, so no path can be traversed.
    """
    store = Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    media = MediaStore(settings.media_dir)
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get("/battle-media/{token}/{side}")
    def battle_media(token: str, side: str):
        shown = battle_image(store.db(), token, side) if _TOKEN.match(token) else None
        if shown is None:
            return Response("Unknown image.", status_code=404, media_type="text/plain")
        return FileResponse(media.path(shown.media_hash, shown.media_ext), media_type=MEDIA_TYPES[shown.media_ext],
                            headers={"Cache-Control": "private, max-age=86400"})

    blocks = build_app(settings, store)
    return gr.mount_gradio_app(
        app, blocks, path="/", server_name=settings.host, server_port=settings.port, head=KEYBOARD_JS, css=CSS,
        allowed_paths=[str(settings.cache_dir.resolve() / "exports")], footer_links=["api"],
    )


def serve(settings: Settings) -> None:
    import uvicorn

    uvicorn.run(create_server(settings), host=settings.host, port=settings.port, log_level="warning")
