"""Start the real web app (uvicorn, 127.0.0.1, a free port) in a thread for API and browser tests."""

from __future__ import annotations

import contextlib
import threading
import time

import uvicorn

from arena.web.app import server_config
from tools.load import free_port


@contextlib.contextmanager
def running_app(settings):
    settings = settings.replace(host="127.0.0.1", port=free_port(), leaderboard_refresh_s=0)
    server = uvicorn.Server(server_config(settings))  # as arena.web.app.serve runs it (forwarded headers and all)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{settings.port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.asynccontextmanager
async def page_session(url: str):
    """One browser tab's API session (:class:`tools.load.GradioSession`) on the app at ``url``, closed afterwards."""
    import httpx

    from tools.load import GradioSession, fetch_endpoints

    async with httpx.AsyncClient(timeout=30) as client:
        session = GradioSession(client, url, await fetch_endpoints(client, url))
        try:
            yield session
        finally:
            await session.http.close()


def call_event(url: str, api_name: str, inputs: list) -> list:
    """Run one event of the page (also a private one, such as the admin tab's) as the page does; return its outputs.

    Raises :class:`tools.load.LoadError` with the server's message when the event fails.
    """
    import asyncio

    async def call():
        async with page_session(url) as session:
            return await session.call(api_name, inputs)

    return asyncio.run(call())
