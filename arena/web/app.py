"""Build and serve the Gradio app."""

from __future__ import annotations

import os

import gradio as gr

from arena.annotators import sync_accounts
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
#image-a img, #image-b img { width: 100%; height: 100%; object-fit: contain; image-rendering: pixelated; }
"""


def build_app(settings: Settings, store: Store | None = None) -> gr.Blocks:
    """The arena as a Gradio Blocks app over the database of ``settings`` (or ``store``)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    store = store or Store(settings.db_path, synchronous=settings.sqlite_synchronous)
    sync_accounts(store.db(), settings.annotator_accounts)
    ctx = AppContext(settings=settings, store=store, media=MediaStore(settings.media_dir))
    with gr.Blocks(title="T2I Arena", analytics_enabled=False) as blocks:
        gr.Markdown("# Text-to-image arena\nWhich image shows the prompt better? Model names appear after your vote.")
        timer = gr.Timer(settings.leaderboard_refresh_s) if settings.leaderboard_refresh_s > 0 else None
        with gr.Tabs():
            with gr.Tab("Arena", id="arena"):
                build_arena_tab(ctx)
            with gr.Tab("Leaderboard", id="leaderboard"):
                build_leaderboard_tab(ctx, blocks, timer)
            with gr.Tab("Admin", id="admin"):
                build_admin_tab(ctx)
    blocks.queue(default_concurrency_limit=8)
    return blocks


def launch_options(settings: Settings) -> dict:
    """Keyword arguments for ``Blocks.launch``: address, page head (keyboard shortcuts), media folder access."""
    return dict(
        server_name=settings.host,
        server_port=settings.port,
        share=False,
        head=KEYBOARD_JS,
        css=CSS,
        allowed_paths=[str(settings.media_dir.resolve()), str((settings.cache_dir / "exports").resolve())],
        footer_links=["api"],
    )


def serve(settings: Settings, **overrides) -> None:
    blocks = build_app(settings)
    blocks.launch(**{**launch_options(settings), **overrides})
