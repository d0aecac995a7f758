"""``python -m tools.load``: a bounded load test of the arena through the page's own HTTP API.

It starts the app (``python -m arena serve`` in a child process) on a fresh copy of the demo database, runs N
simulated annotators concurrently on 127.0.0.1 — sign in, then repeat: wait a short random think time, vote (the
answer carries the next battle) and fetch the next battle's two images, exactly the requests the page makes — and
prints latency percentiles (from sending a vote to the next battle's images being loaded), votes per second, errors,
and the votes in the database checked against the receipts the clients saw (:func:`check_receipts`). It stops by
itself after ``--duration`` seconds or ``--max-votes`` votes, and only ever talks to 127.0.0.1.

The client speaks Gradio's queue protocol (``POST /gradio_api/queue/join``, then the ``/gradio_api/queue/data``
event stream) with httpx on one asyncio loop, so one process can drive many annotators.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import httpx
import numpy as np

from ratings.votes import OUTCOMES
from tools.ports import free_port

VOTE_ENDPOINTS = {"A": "vote_a", "B": "vote_b", "tie": "vote_tie", "both_bad": "vote_both_bad"}


class LoadError(RuntimeError):
    pass


def require_loopback(url: str) -> None:
    host = urlparse(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise LoadError(f"the load test only targets this machine (127.0.0.1), not {host!r}.")


class KeepAliveHTTP:
    """A minimal HTTP/1.1 client on one keep-alive connection, as a browser tab holds one.

    httpx cost the load generator more CPU per vote than the server spent answering it, on the same two cores;
    this client spends a fraction of that, so the figures measure the server. Only what the arena answers is
    understood: Content-Length or chunked bodies.
    """

    def __init__(self, base: str):
        url = urlparse(base)
        self.host, self.port = url.hostname, url.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"", cookie: str = "") -> tuple[int, bytes]:
        """(status, body) of one request; ``cookie`` is sent as the Cookie header, as a browser sends its cookies."""
        cookie_line = f"Cookie: {cookie}\r\n" if cookie else ""
        for attempt in (1, 2):  # the server may have closed an idle connection: reconnect once
            try:
                if self.reader is None or self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                self.writer.write(
                    f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                    f"{cookie_line}Content-Length: {len(body)}\r\n\r\n".encode() + body
                )
                await self.writer.drain()
                status = int((await self.reader.readline()).split()[1])
                headers = {}
                while (line := await self.reader.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                if headers.get("transfer-encoding") == "chunked":
                    chunks = []
                    while size := int((await self.reader.readline()).strip() or b"0", 16):
                        chunks.append(await self.reader.readexactly(size))
                        await self.reader.readline()
                    await self.reader.readline()
                    data = b"".join(chunks)
                else:
                    data = await self.reader.readexactly(int(headers.get("content-length", 0)))
                if headers.get("connection", "").lower() == "close":
                    await self.close()
                return status, data
            except (ConnectionError, asyncio.IncompleteReadError, IndexError, ValueError):
                await self.close()
                if attempt == 2:
                    raise LoadError(f"{method} {path}: the connection broke") from None
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class GradioSession:
    """One browser tab's worth of API calls (one Gradio session hash)."""

    def __init__(self, client: httpx.AsyncClient, base: str, endpoints: dict[str, tuple[int, bool]]):
        self.client, self.base, self.endpoints = client, base.rstrip("/") + "/", endpoints
        self.path = urlparse(self.base).path
        self.http = KeepAliveHTTP(self.base)
        self.session_hash = "".join(random.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=12))

    async def call(self, api_name: str, data: list) -> list:
        """Run one event and return its outputs; raise LoadError with the server's message on failure.

        Events wired with ``queue=False`` are one POST to ``/gradio_api/run/predict`` naming the event by its
        ``fn_index``; queued events join the queue and read their result from the session's event stream, as the
        page does.
        """
        fn_index, queued = self.endpoints[api_name]
        body = {"data": data, "fn_index": fn_index, "session_hash": self.session_hash, "event_data": None,
                "trigger_id": None}
        if not queued:
            status, answer = await self.http.request("POST", f"{self.path}gradio_api/run/predict",
                                                     json.dumps(body).encode(), cookie=self.cookie)
            if status != 200:
                raise LoadError(f"{api_name}: {status} {answer[:200].decode('utf-8', 'replace')}")
            return json.loads(answer)["data"]
        join = await self.client.post(self.base + "gradio_api/queue/join", json=body)
        if join.status_code != 200:
            raise LoadError(f"{api_name}: queue/join answered {join.status_code}")
        event_id = join.json()["event_id"]
        async with self.client.stream(
            "GET", self.base + "gradio_api/queue/data", params={"session_hash": self.session_hash}
        ) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") not in (event_id, None):
                    continue
                if message["msg"] == "process_completed":
                    output = message.get("output") or {}
                    if not message.get("success", False):
                        raise LoadError(f"{api_name}: {output.get('error') or 'failed'}")
                    return output.get("data", [])
                if message["msg"] in ("close_stream", "unexpected_error"):
                    raise LoadError(f"{api_name}: stream closed ({message.get('message', '')})")
        raise LoadError(f"{api_name}: stream ended without a result")

    @property
    def cookie(self) -> str:
        """The cookies the page's client holds (the browser cookie of arena.web.front_door), as a Cookie header."""
        return "; ".join(f"{name}={value}" for name, value in self.client.cookies.items())

    async def images(self, outputs: list) -> int:
        """Fetch the battle images referenced in the outputs, as the page's <img> tags do; return their count."""
        sources = [s.split('"')[0] for s in json.dumps(outputs).replace('\\"', '"').split('src="')[1:]]
        for source in sources:
            status, _ = await self.http.request("GET", self.path + source)
            if status != 200:
                raise LoadError(f"image {source}: {status}")
        return len(sources)


@dataclass
class LoadReport:
    annotators: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)  # voter name of each acknowledged vote
    vote_ids: list[int] = field(default_factory=list)  # the receipt number (the reveal's data-vote-id) of each
    errors: list[str] = field(default_factory=list)
    unanswered_votes: int = 0  # vote requests that failed: the server may or may not have stored them

    @property
    def votes_per_second(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        return percentile_ms(self.latencies, q)

    def summary(self) -> str:
        return (
            f"annotators {self.annotators}, {self.seconds:.1f} s: {len(self.latencies)} votes acknowledged, "
            f"{self.votes_per_second:.1f} votes/s, latency vote→next battle shown p50 {self.percentile(50):.0f} ms, "
            f"p95 {self.percentile(95):.0f} ms, p99 {self.percentile(99):.0f} ms, errors {len(self.errors)}"
        )


async def fetch_endpoints(client: httpx.AsyncClient, base: str) -> dict[str, tuple[int, bool]]:
    """{api_name: (fn_index, queued)} from the page's config, as the page reads it."""
    config = (await client.get(base.rstrip("/") + "/config")).json()
    return {d["api_name"]: (d["id"], d.get("queue") is not False) for d in config["dependencies"] if d.get("api_name")}


_MEDIA_TOKEN = re.compile(r"battle-media/([A-Za-z0-9_-]+)/a")


def shown_token(outputs) -> str:
    """The media token of the battle whose images ``outputs`` show (the page sends it back with the vote)."""
    found = _MEDIA_TOKEN.search(json.dumps(outputs))
    if found is None:
        raise LoadError("the answer shows no battle")
    return found.group(1)


async def _sign_in(index: int, session: GradioSession, report: LoadReport) -> str | None:
    """Sign in and load the first battle's images; return its media token (None if that failed)."""
    try:
        shown = await session.call("sign_in", [f"load-{index:03d}", "load-token", None, "All suites", False])
        await session.images(shown)
        return shown_token(shown)
    except (LoadError, httpx.HTTPError) as error:
        report.errors.append(f"annotator {index} sign-in: {error}")
        return None


async def _annotator(
    index: int, session: GradioSession, on_screen: str, report: LoadReport, deadline: float, budget: list[int],
    think: tuple[float, float], rng: random.Random,
) -> None:
    """Vote until the time or the vote budget is spent. Each vote's answer carries the next battle (the page shows
    it on Next battle, in the browser), so a vote is one request, then the next battle's two images."""
    while time.monotonic() < deadline and budget[0] > 0:
        await asyncio.sleep(rng.uniform(*think))
        if time.monotonic() >= deadline or budget[0] <= 0:
            return
        budget[0] -= 1
        outcome = rng.choice(OUTCOMES)
        started = time.monotonic()
        try:
            voted = await session.call(VOTE_ENDPOINTS[outcome], [None, "All suites", False, on_screen])
        except (LoadError, httpx.HTTPError, OSError) as error:
            report.errors.append(f"annotator {index} vote: {error}")
            report.unanswered_votes += 1
            continue
        try:
            receipt = re.search(r'data-vote-id=\\"(\d+)\\"', json.dumps(voted))  # the reveal's vote id
            if receipt is None:
                raise LoadError("the vote's answer has no receipt")
            report.acknowledged.append(f"load-{index:03d}")
            report.vote_ids.append(int(receipt.group(1)))
            following = voted[-1]  # the next battle, as the page keeps it until Next battle
            on_screen = shown_token(following)
            await session.images(following)
        except (LoadError, httpx.HTTPError, OSError) as error:
            report.errors.append(f"annotator {index}: {error}")
            continue
        report.latencies.append(time.monotonic() - started)


async def run_load(
    base: str, *, annotators: int = 64, duration: float = 30.0, max_votes: int = 100_000,
    think: tuple[float, float] = (0.2, 0.8), seed: int = 0,
) -> LoadReport:
    """Drive ``annotators`` simulated annotators against the app at ``base`` until the time or vote budget ends."""
    require_loopback(base)
    limits = httpx.Limits(max_connections=4 * annotators + 8, max_keepalive_connections=4 * annotators + 8)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0), limits=limits) as client:
        endpoints = await fetch_endpoints(client, base)
        report = LoadReport(annotators=annotators, seconds=duration)
        sessions = [GradioSession(client, base, endpoints) for _ in range(annotators)]
        first = await asyncio.gather(*(_sign_in(i, s, report) for i, s in enumerate(sessions)))  # not timed
        budget = [max_votes]
        started = time.monotonic()
        deadline = started + duration
        rngs = [random.Random(seed * 1000 + i) for i in range(annotators)]
        await asyncio.gather(*(
            _annotator(i, sessions[i], signed_in, report, deadline, budget, think, rngs[i])
            for i, signed_in in enumerate(first) if signed_in is not None
        ))
        report.seconds = time.monotonic() - started
        for session in sessions:
            await session.http.close()
    return report


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds the process ``pid`` has used so far (Linux ``/proc``; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14 and 15


def percentile_ms(seconds: list[float], q: float) -> float:
    """The ``q``-th percentile of latencies in ``seconds``, in milliseconds (NaN for none)."""
    return float(np.percentile(seconds, q) * 1000) if seconds else float("nan")


def start_server(env: dict[str, str], port: int, log: Path, timeout: float = 120.0,
                 root: Path | None = None) -> subprocess.Popen:
    """Start ``python -m arena serve`` on 127.0.0.1:``port`` and wait until it answers.

    ``root`` is the checkout whose code runs (default: this one), so another version can be measured the same way.
    """
    env = {**os.environ, **env, "ARENA_HOST": "127.0.0.1", "ARENA_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False"}
    handle = open(log, "ab")
    process = subprocess.Popen([sys.executable, "-m", "arena", "serve"], env=env, stdout=handle, stderr=handle,
                               cwd=root or Path(__file__).resolve().parents[1], start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LoadError(f"the server exited with {process.returncode}; see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/config", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop_server(process)
    raise LoadError(f"the server did not answer within {timeout:.0f} s; see {log}")


def stop_server(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def stored_votes(database: Path | str) -> dict[int, str]:
    """{vote id: voter} of every vote in the database (a SQLite file or a PostgreSQL URL; flagged or not)."""
    from datamodel.connection import connect
    from datamodel.votes import voters_by_vote

    db = connect(database, migrate_schema=False)
    try:
        return voters_by_vote(db)
    finally:
        db.close()


def check_receipts(report: LoadReport, stored: dict[int, str]) -> list[str]:
    """What is wrong between the receipts the clients saw and the votes stored (empty: nothing).

    Every acknowledged receipt must be stored exactly once, under the voter it was given to; a stored vote nobody
    saw acknowledged is allowed only for a vote request that failed on the client side (the server may have
    committed it before the answer was lost), so there may be at most ``report.unanswered_votes`` of them.
    """
    problems = []
    receipts: dict[int, str] = {}
    for vote_id, voter in zip(report.vote_ids, report.acknowledged):
        if vote_id in receipts:
            problems.append(f"receipt #{vote_id} was acknowledged twice ({receipts[vote_id]}, {voter})")
        receipts[vote_id] = voter
    lost = sorted(set(receipts) - set(stored))
    if lost:
        problems.append(f"{len(lost)} acknowledged votes are not in the database: #{', #'.join(map(str, lost[:20]))}")
    wrong = sorted(i for i in set(receipts) & set(stored) if receipts[i] != stored[i])
    if wrong:
        problems.append(f"{len(wrong)} votes are stored under another voter than the receipt's: "
                        + ", ".join(f"#{i} {receipts[i]} vs {stored[i]}" for i in wrong[:20]))
    unacknowledged = sorted(set(stored) - set(receipts))
    if len(unacknowledged) > report.unanswered_votes:
        problems.append(f"{len(unacknowledged)} stored votes were never acknowledged, but only "
                        f"{report.unanswered_votes} vote requests failed: #{', #'.join(map(str, unacknowledged[:20]))}")
    return problems


def integrity(database: Path | str) -> str:
    from datamodel.connection import connect, integrity_check

    db = connect(database, migrate_schema=False)
    try:
        return integrity_check(db)
    finally:
        db.close()


def demo_database(cache_dir: Path) -> Path:
    """A folder holding a fresh demo database and its media (the shipped bundle, loaded once; no torch), then
    copied."""
    template = cache_dir / "load-demo"
    if not (template / "arena.db").exists():
        from arena.demo.seeding import load_demo_bundle
        from core.settings import load_settings
        from datamodel.connection import checkpoint, connect
        from datamodel.media import MediaStore

        shutil.rmtree(template, ignore_errors=True)
        settings = load_settings().replace(db_path=template / "arena.db", media_dir=template / "media",
                                           cache_dir=cache_dir)
        db = connect(settings.db_path)
        load_demo_bundle(db, MediaStore(settings.media_dir))
        checkpoint(db)
        db.close()
    return template


def _run(coroutine):
    """Run on uvloop (as the server does) when it is installed: the load generator shares the server's cores."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    return uvloop.run(coroutine)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=64)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (default 30)")
    parser.add_argument("--max-votes", type=int, default=20_000, help="stop after this many votes")
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 0.8), metavar=("MIN", "MAX"),
                        help="think time range in seconds (default 0.2 0.8)")
    parser.add_argument("--synchronous", default="FULL", help="SQLite synchronous setting of the server")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary database folder")
    args = parser.parse_args(argv)
    from core.settings import load_settings

    cache_dir = load_settings().cache_dir.resolve()
    template = demo_database(cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-load-"))
    shutil.copytree(template, work, dirs_exist_ok=True)
    port = free_port()
    env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(work / "media"),
           "ARENA_CACHE_DIR": str(cache_dir),
           "ARENA_DEMO": "false", "ARENA_RATE_LIMIT_CLIENT": "0", "ARENA_RATE_LIMIT_ANNOTATOR": "0",
           "ARENA_RATE_LIMIT_PAGES": "0",  # every simulated annotator opens its page from this one address
           # ... and signs in from it, under its own name: the sign-in throttle lets people arriving pass (issue 37)
           "ARENA_SQLITE_SYNCHRONOUS": args.synchronous, "ARENA_LEADERBOARD_REFRESH_S": "0"}
    print(f"server: 127.0.0.1:{port}, database {work / 'arena.db'} (synchronous={args.synchronous})")
    server = start_server(env, port, work / "server.log")
    try:
        cpu_before = process_cpu_seconds(server.pid)
        report = _run(run_load(f"http://127.0.0.1:{port}/", annotators=args.annotators, duration=args.duration,
                               max_votes=args.max_votes, think=tuple(args.think), seed=args.seed))
        cpu_after = process_cpu_seconds(server.pid)
    finally:
        stop_server(server)
    stored = stored_votes(work / "arena.db")
    problems = check_receipts(report, stored)
    print(report.summary())
    if cpu_before is not None and cpu_after is not None and report.latencies:
        # steadier than the latencies on a shared machine: compare code changes with this figure
        used = cpu_after - cpu_before
        print(f"server CPU {1000 * used / len(report.latencies):.2f} ms per vote (the vote and two images; "
              f"{100 * used / report.seconds:.0f}% of one core)")
    print(f"votes acknowledged {len(report.acknowledged)}, stored {len(stored)}, "
          f"receipts match the database: {not problems}, integrity_check: {integrity(work / 'arena.db')}")
    for problem in problems:
        print("mismatch:", problem)
    for error in report.errors[:10]:
        print("error:", error)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not report.errors and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
