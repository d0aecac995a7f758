"""Start the real web app (uvicorn, 127.0.0.1, a free port) in a thread for API and browser tests.

An app computes its leaderboards in a spawned worker process (:class:`arena.leaderboard.service.SnapshotService`),
which imports the numeric libraries anew: two to three seconds of CPU per app on the test machine. The worker takes a
database path with each job and keeps nothing between jobs, so the apps a test session starts share one worker
(:func:`shared_leaderboard_worker`); tests/test_snapshots.py still exercises a service's own worker.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import json
import secrets
import socket
import ssl
import threading
import time
from unittest import mock

import httpx
import uvicorn

from arena.leaderboard.service import SnapshotService
from arena.web.app import server_config

# One TLS context for every test client: httpx builds one per client otherwise (~20 ms of CPU, loading the CA bundle),
# and the tests make hundreds of clients for plain-HTTP servers on 127.0.0.1.
TLS = ssl.create_default_context()
_WORKER: dict[str, concurrent.futures.ProcessPoolExecutor] = {}  # the session's one leaderboard worker
_OWN_POOL = SnapshotService._pool


def _shared_pool(service: SnapshotService) -> concurrent.futures.ProcessPoolExecutor:
    if service._executor is None:
        worker = _WORKER.get("pool")
        if worker is None or getattr(worker, "_broken", False) or getattr(worker, "_shutdown_thread", False):
            service._executor = None  # first use, or the worker died or was shut down: a new one
            service.niceness = 0  # whichever service starts it: at the tests' priority, as running_app's apps ask
            _WORKER["pool"] = worker = _OWN_POOL(service)  # spawned as the app spawns its own
        service._executor = worker
        # this service's close (whenever its server thread gets to it) leaves the shared worker running: replaced on
        # this one instance, on purpose
        service.close = functools.partial(_leave_shared_pool, service)  # type: ignore[method-assign]
    return service._executor


def _leave_shared_pool(service: SnapshotService) -> None:
    """What the app's close does to its worker, minus the shutdown: its waiting computations are cancelled."""
    for future in list(service._pending.values()):
        future.cancel()
    service._executor = None


@contextlib.contextmanager
def shared_leaderboard_worker():
    """Apps made meanwhile share the session's leaderboard worker."""
    with mock.patch.object(SnapshotService, "_pool", _shared_pool):
        yield


@contextlib.contextmanager
def running_app(settings, app=None):
    """The app of ``settings`` (or the ASGI ``app`` made by :func:`arena.web.app.create_server` from them) served on a
    free port of 127.0.0.1 in a thread; yields its URL.

    The port is bound here and the socket handed to uvicorn: a port merely found free (bound, released, bound again by
    uvicorn) can be taken meanwhile by another test worker's server, as once happened in CI."""
    listening = socket.socket()
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn sets on the sockets it binds
    listening.bind(("127.0.0.1", 0))
    # the leaderboard worker at the server's priority: here the other busy programs are the other test workers, not
    # this server's votes, and a worker at 19 beside them waited 10-21 s for the CPU (a browser test's 20 s wait)
    settings = settings.replace(host="127.0.0.1", port=listening.getsockname()[1], leaderboard_refresh_s=0,
                                leaderboard_worker_nice=0)
    with listening, shared_leaderboard_worker():
        config = server_config(settings, app)  # as arena.web.app.serve runs it (forwarded headers and all)
        # A client the test leaves open (gradio_client keeps its streams; a browser page is closed after the test)
        # holds the server's shutdown for SHUTDOWN_GRACE_S (3 s; before it existed, until the join below gave up
        # after 10 s, with the app not yet closed): one second is plenty here, then the app's shutdown runs.
        config.timeout_graceful_shutdown = 1
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
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


def gradio_app(app):
    """The Gradio app inside the ASGI ``app`` of :func:`arena.web.app.create_server` (its front doors wrap it)."""
    seen = set()
    while not hasattr(app, "state_holder"):
        if id(app) in seen or not hasattr(app, "app"):
            for route in getattr(app, "routes", []):
                inner = getattr(route, "app", None)
                if hasattr(inner, "state_holder"):
                    return inner
            raise LookupError("no Gradio app inside")
        seen.add(id(app))
        app = app.app
    return app


@contextlib.asynccontextmanager
async def page_session(url: str):
    """One browser tab's API session (:class:`tools.load.GradioSession`) on the app at ``url``, closed afterwards."""
    import httpx

    from tools.load import GradioSession, fetch_endpoints

    async with httpx.AsyncClient(timeout=30, verify=TLS) as client:
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


class Page:
    """One browser tab's session on the app at ``url``, speaking Gradio's protocol over httpx with ``headers``.

    ``direct`` posts an event to ``/gradio_api/run/predict`` by its ``fn_index`` (as the page does for events that
    skip the queue, and as an attacker may do for any event); ``queued`` joins the queue and reads the session's
    event stream. Both name the event by its ``api_name`` in the page's config, hidden ones included.
    """

    def __init__(self, url: str, headers: dict | None = None):
        self.http = httpx.Client(base_url=url, headers=headers or {}, timeout=30, verify=TLS)
        self.session_hash = secrets.token_hex(6)
        config = self.http.get("config").json()
        self.events = {d["api_name"]: d for d in config["dependencies"] if d.get("api_name")}

    def body(self, api_name: str, data: list) -> dict:
        return {"data": data, "fn_index": self.events[api_name]["id"], "session_hash": self.session_hash,
                "event_data": None, "trigger_id": None}

    def direct(self, api_name: str, data: list, headers: dict | None = None) -> httpx.Response:
        return self.http.post("gradio_api/run/predict", json=self.body(api_name, data), headers=headers)

    def queued(self, api_name: str, data: list) -> tuple[bool, object]:
        """(True, outputs) or (False, the error message) of one queued event."""
        join = self.http.post("gradio_api/queue/join", json=self.body(api_name, data))
        if join.status_code != 200:
            return False, f"queue/join answered {join.status_code}: {join.text[:200]}"
        event_id = join.json()["event_id"]
        with self.http.stream("GET", "gradio_api/queue/data", params={"session_hash": self.session_hash}) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") == event_id and message["msg"] == "process_completed":
                    output = message.get("output") or {}
                    return (True, output.get("data")) if message.get("success") else (False, output.get("error"))
        return False, "the event stream ended without a result"

    def inputs(self, api_name: str) -> int:
        return len(self.events[api_name]["inputs"])

    def close(self) -> None:
        self.http.close()


def concurrently(calls) -> list:
    """Run the callables at once on threads (started together); their results (or the exception each raised) in
    order."""
    results = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i, call):
        start.wait()
        try:
            results[i] = call()
        except Exception as error:  # noqa: BLE001 - the test reads what each call met
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


TEST_TOKEN = "token-for-the-tests-1"  # the token the web tests' annotators sign in with


def sign_in(page: Page, name: str, token: str = TEST_TOKEN):
    """Sign ``name`` in on ``page`` (the Arena tab's queued sign_in); its outputs, or an AssertionError."""
    ok, outputs = page.queued("sign_in", [name, token, None, "All suites", False])
    assert ok, outputs
    return outputs
