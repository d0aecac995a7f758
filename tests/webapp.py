"""Start the real Gradio app on 127.0.0.1 in this process for API and browser tests."""

from __future__ import annotations

import contextlib
import socket

from arena.web.app import build_app, launch_options


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_app(settings):
    settings = settings.replace(host="127.0.0.1", port=free_port(), leaderboard_refresh_s=0)
    blocks = build_app(settings)
    blocks.launch(**launch_options(settings), prevent_thread_lock=True, quiet=True)
    try:
        yield f"http://127.0.0.1:{settings.port}/"
    finally:
        blocks.close()
