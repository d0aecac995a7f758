"""The floods of the fourth security review, bounded, against a live arena of its own: ``python -m tools.flood``.

It starts the app (``python -m arena serve`` in a child process, on 127.0.0.1 only) on a fresh copy of the demo
database with seven kept days of leaderboard history, an admin password and 127.0.0.1 as its trusted proxy (so one
machine can play many client addresses through ``X-Forwarded-For``); every other setting is the default. A victim
signs in and votes; then each flood runs in turn, bounded by its count (``--scale`` multiplies them) and by
``--seconds`` each, and the tool prints, per flood: the route it hit, the requests sent and refused, the server's
resident memory before and after, whether the victim was still signed in (a vote of theirs answered), whether the
queue still answered (a fresh page's queued event), and what the flood was after:

1. ``call/`` without a session id from one address (issue 37, finding 1: 5,400 stopped Gradio's queue);
2. anonymous leaderboard views with every menu value (finding 2: 36 erased the default board's history);
3. uploads to Gradio's ``/gradio_api/upload`` (finding 4: 105 MB/s kept for an hour);
4. signed-in events with fresh session ids from many addresses (finding 5);
5. new pages from many addresses, more than Gradio keeps (finding 5: the victim was pushed out);
6. queued events of fresh pages from many addresses, left unread (finding 1's crash: the queue's cache of 2,000
   sessions);
7. too-short tokens on the Ratings tab from many addresses (finding 6);
8. a class of 40 signing in at once from one address, and 60 wrong guesses at once at one account (finding 10);
9. slow request bodies of just under 1 MiB (finding 12);
10. wrong sign-ins from 40 addresses while the victim votes (finding 16: 8 ms became 234 ms).

It stops by itself: every flood ends at its count or its time, then the server is stopped and its folder deleted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tools.load import demo_database, require_loopback, shown_token, start_server, stop_server
from tools.ports import free_port

VICTIM, VICTIM_TOKEN = "flood-victim", "victim-token-1"
ADMIN_PASSWORD = "flood admin password"
CONCURRENCY = 16  # requests of one flood in flight at once


@dataclass
class Flood:
    """One flood's figures (module docstring)."""

    name: str
    route: str
    sent: int = 0
    refused: int = 0
    rss_before: float = 0.0
    rss_after: float = 0.0
    victim: bool = False
    queue: bool = False
    note: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        return (f"{self.name:44} {self.route:34} {self.sent:7,} {self.refused:7,} "
                f"{self.rss_before:6.0f} → {self.rss_after:6.0f} MB  {'yes' if self.victim else 'NO':3}  "
                f"{'yes' if self.queue else 'NO':3}  {self.seconds:5.1f} s  {self.note}")


HEADER = (f"{'flood':44} {'route':34} {'sent':>7} {'refused':>7} {'server RSS':>18}  {'victim':6} {'queue':5} "
          f"{'time':>7}  what it was after")


def address(k: int) -> dict[str, str]:
    """The ``X-Forwarded-For`` of simulated client address number ``k`` (0 to 63,999, in 198.18.0.0/15, the range
    for benchmarks). Each flood has addresses of its own, so no flood meets another's per-address limits."""
    return {"X-Forwarded-For": f"198.{18 + k // 64000}.{k // 250 % 256}.{k % 250 + 1}"}


class Page:
    """One page's (or API client's) session on the app: its session id, its client address, its calls."""

    def __init__(self, arena: Arena, headers: dict | None = None):
        self.arena, self.headers = arena, headers or {}
        self.session = secrets.token_hex(6)

    def body(self, api_name: str, data: list) -> dict:
        return {"data": data, "fn_index": self.arena.events[api_name][0], "session_hash": self.session,
                "event_data": None, "trigger_id": None}

    async def send(self, api_name: str, data: list) -> int:
        """Post one event without waiting for a queued one's result; the HTTP status."""
        path = "gradio_api/queue/join" if self.arena.events[api_name][1] else "gradio_api/run/predict"
        answer = await self.arena.client.post(self.arena.base + path, json=self.body(api_name, data),
                                              headers=self.headers)
        return answer.status_code

    async def call(self, api_name: str, data: list) -> tuple[bool, Any]:
        """(True, outputs) or (False, the refusal) of one event, a queued one's result read from its stream."""
        client, base = self.arena.client, self.arena.base
        if not self.arena.events[api_name][1]:
            answer = await client.post(base + "gradio_api/run/predict", json=self.body(api_name, data),
                                       headers=self.headers)
            if answer.status_code != 200:
                return False, f"{answer.status_code} {answer.text[:200]}"
            return True, answer.json()["data"]
        join = await client.post(base + "gradio_api/queue/join", json=self.body(api_name, data), headers=self.headers)
        if join.status_code != 200:
            return False, f"queue/join {join.status_code} {join.text[:200]}"
        event_id = join.json()["event_id"]
        async with client.stream("GET", base + "gradio_api/queue/data", params={"session_hash": self.session},
                                 headers=self.headers) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                if message.get("event_id") == event_id and message.get("msg") == "process_completed":
                    output = message.get("output") or {}
                    return (True, output.get("data")) if message.get("success") else (False, output.get("error"))
        return False, "the stream ended without a result"


class Arena:
    """The live server the floods hit, with the victim's page."""

    def __init__(self, base: str, pid: int, database: Path, client: httpx.AsyncClient, events: dict):
        self.base, self.pid, self.database, self.client, self.events = base, pid, database, client, events
        self.victim: Page | None = None
        self.on_screen = ""
        self.checks = 0  # queue checks made (each from an address of its own)

    def rss(self) -> float:
        """The server process's resident memory, MB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def sign_in_victim(self) -> None:
        self.victim = Page(self)
        ok, outputs = await self.victim.call("sign_in", [VICTIM, VICTIM_TOKEN, None, "All suites", False])
        if not ok:
            raise RuntimeError(f"the victim could not sign in: {outputs}")
        self.on_screen = shown_token(outputs)

    async def victim_votes(self) -> tuple[bool, float]:
        """Whether the victim is still signed in (their vote was recorded, or refused by the votes' rate limit only),
        and how long the vote took."""
        started = time.perf_counter()
        assert self.victim is not None  # signed in by start()
        ok, outputs = await self.victim.call("vote_a", [None, "All suites", False, self.on_screen])
        seconds = time.perf_counter() - started
        if not ok or "Your vote" not in json.dumps(outputs):
            return "Slow down" in json.dumps(outputs), seconds
        self.on_screen = shown_token(outputs[-1])
        return True, seconds

    async def queue_answers(self) -> bool:
        """Whether a fresh page's queued event (opening the Leaderboard tab) is answered within 30 s."""
        self.checks += 1
        try:
            ok, _ = await asyncio.wait_for(Page(self, address(9000 + self.checks)).call(
                "leaderboard_menus", [None, None]), 30)
        except TimeoutError:
            return False
        return ok

    def kept_days(self) -> int:
        """Days of leaderboard history kept for the default board (the default settings' filters)."""
        from arena.leaderboard.compute import leaderboard_options
        from arena.leaderboard.service import options_key
        from core.settings import Settings
        from datamodel.connection import connect
        from datamodel.rating_history import kept_days

        db = connect(self.database, migrate_schema=False)
        try:
            return len(kept_days(db, options_key(leaderboard_options(Settings()))))
        finally:
            db.close()


async def _bounded(count: int, deadline: float, send) -> tuple[int, int]:
    """Call ``send(i)`` (True when the request was refused) for i < ``count``, CONCURRENCY at a time, until the
    deadline; (sent, refused)."""
    sent = refused = 0
    numbers = iter(range(count))

    async def worker():
        nonlocal sent, refused
        for i in numbers:
            if time.monotonic() > deadline:
                return
            sent += 1
            try:
                was_refused = bool(await send(i))  # awaited first: ``refused += await ...`` loses updates
            except (httpx.HTTPError, OSError):
                was_refused = True
            refused += was_refused

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return sent, refused


# --- the floods: each (arena, count, deadline) -> (route, sent, refused, note) -------------------------------------


async def call_without_session(arena: Arena, count: int, deadline: float):
    async def send(_):
        answer = await arena.client.post(arena.base + "gradio_api/call/leaderboard_history", json={"data": []},
                                         headers=address(1000))
        return answer.status_code != 200

    sent, refused = await _bounded(count, deadline, send)
    return "POST /gradio_api/call/<event>", sent, refused, "new pages counted per address"


async def leaderboard_views(arena: Arena, count: int, deadline: float):
    from arena.web.leaderboard_tab import TIE_POLICIES
    from core.protocols import PROTOCOLS

    before = arena.kept_days()
    page = Page(arena, address(1100))
    combos = list(itertools.product(TIE_POLICIES, (False, True), (False, True), PROTOCOLS))[:count]

    async def send(i):
        tie, excluded, anonymous, protocol = combos[i]
        data = ["All"] * 5 + [tie, excluded, "Most votes", protocol, "All", anonymous, "Now", None, None]
        return await page.send("leaderboard", data) != 200

    sent, refused = await _bounded(len(combos), deadline, send)
    await asyncio.sleep(min(2 + sent / 2, max(0.0, deadline - time.monotonic())))  # the views' computations end
    return "POST /gradio_api/run/predict", sent, refused, f"default board's kept days {before} → {arena.kept_days()}"


async def uploads(arena: Arena, count: int, deadline: float):
    payload = os.urandom(100_000)

    async def send(i):
        answer = await arena.client.post(arena.base + "gradio_api/upload", files={"files": (f"f{i}.bin", payload)})
        return answer.status_code != 200

    sent, refused = await _bounded(count, deadline, send)
    kept = sum(f.stat().st_size for f in Path(os.environ["GRADIO_TEMP_DIR"]).rglob("*") if f.is_file())
    return "POST /gradio_api/upload", sent, refused, f"{kept:,} bytes kept on disk"


async def fresh_ids_on_signed_in_events(arena: Arena, count: int, deadline: float):
    async def send(i):
        return await Page(arena, address(2000 + i % 351)).send("rating_next", [None, "All open tasks"]) != 200

    sent, refused = await _bounded(count, deadline, send)
    return "POST /gradio_api/run/predict", sent, refused, "rating_next, fresh ids, 351 addresses"


async def new_pages_from_many_addresses(arena: Arena, count: int, deadline: float):
    data = ["All"] * 5 + ["drop", False, "Most votes", "arena", "All", False, "Now", None, None]

    async def send(i):
        return await Page(arena, address(3000 + i % 120)).send("leaderboard", data) != 200

    sent, refused = await _bounded(count, deadline, send)
    return ("POST /gradio_api/run/predict", sent, refused,
            "leaderboard, fresh ids, 120 addresses (more than the 4,000 sessions held)")


async def unread_queue_events(arena: Arena, count: int, deadline: float):
    async def send(i):
        return await Page(arena, address(4000 + i % 60)).send("leaderboard_menus", [None, None]) != 200

    sent, refused = await _bounded(count, deadline, send)
    await asyncio.sleep(min(1 + sent / 500, max(0.0, deadline - time.monotonic())))  # the queue works them off
    return "POST /gradio_api/queue/join", sent, refused, "fresh ids, 60 addresses, results never read"


async def short_tokens_on_ratings(arena: Arena, count: int, deadline: float):
    async def send(i):
        ok, outputs = await Page(arena, address(5000 + i % 20)).call("rating_sign_in", [f"flood-rater-{i}", "short"])
        return not ok or "at least" in json.dumps(outputs)

    sent, refused = await _bounded(count, deadline, send)
    ok, outputs = await Page(arena, address(5000)).call("sign_in", [VICTIM, VICTIM_TOKEN, None, "All suites", False])
    right = ok and "Signed in as" in json.dumps(outputs)
    return "POST /gradio_api/queue/join", sent, refused, (f"20 addresses; the right token from one of them: "
                                                          f"{'signed in' if right else 'REFUSED'}")


async def class_and_guesses(arena: Arena, count: int, deadline: float):
    people = max(1, count * 40 // 100)
    guesses = count - people
    same = address(6000)

    async def arrive(i):
        ok, outputs = await Page(arena, same).call("sign_in", [f"student-{i:03d}-{secrets.token_hex(2)}",
                                                              "student-token-1", None, "All suites", False])
        return not (ok and "battle-media/" in json.dumps(outputs))

    async def guess(i):
        ok, outputs = await Page(arena, address(6001)).call("sign_in", [VICTIM, f"wrong-guess-{i:04d}", None,
                                                                      "All suites", False])
        return "Wrong token" not in json.dumps(outputs)

    arrived = await asyncio.gather(*(arrive(i) for i in range(people)))
    guessed = await asyncio.gather(*(guess(i) for i in range(guesses)))
    reached = arrived.count(False)
    checked = guessed.count(False)
    return ("POST /gradio_api/queue/join", people + guesses, arrived.count(True) + guessed.count(True),
            f"{reached} of {people} arriving at once reached a battle; {checked} of {guesses} guesses at one "
            "account checked")


async def slow_bodies(arena: Arena, count: int, deadline: float):
    host, port = arena.base.split("//")[1].rstrip("/").split(":")
    size = 1_047_576
    refused = 0

    async def slow(i):
        nonlocal refused
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
        except OSError:
            refused += 1
            return
        try:
            writer.write(b"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(size).encode() + b"\r\n\r\n")
            for _ in range(9):  # 900 KB over about 9 seconds, unless the server answers first
                writer.write(b" " * 100_000)
                await writer.drain()
                try:
                    line = await asyncio.wait_for(reader.readline(), 1.0)
                except TimeoutError:
                    continue
                refused += b" 200 " not in line
                return
            line = await asyncio.wait_for(reader.readline(), 30)
            refused += b" 200 " not in line
        except (TimeoutError, OSError):
            refused += 1
        finally:
            writer.close()

    await asyncio.gather(*(slow(i) for i in range(count)))
    return "POST (a body sent slowly)", count, refused, f"{count} bodies of {size:,} bytes at 100 KB/s"


async def guesses_while_voting(arena: Arena, count: int, deadline: float):
    before = [(await arena.victim_votes())[1] for _ in range(10)]
    during: list[float] = []

    async def guess(i):  # refused: throttled before its token was checked
        ok, outputs = await Page(arena, address(7000 + i % 40)).call(
            "sign_in", [VICTIM, f"wrong-guess-{i:05d}", None, "All suites", False])
        return "Wrong token" not in json.dumps(outputs)

    async def voting():  # 10 votes before, at most 15 during: within the votes' rate limit (30 a minute)
        while time.monotonic() < deadline and len(during) < 15 and not flooding.done():
            during.append((await arena.victim_votes())[1])
            await asyncio.sleep(0.2)

    flooding = asyncio.ensure_future(_bounded(count, deadline, guess))
    await voting()
    sent, refused = await flooding
    return ("POST /gradio_api/queue/join", sent, refused,
            f"victim's median vote {1000 * statistics.median(before):.0f} ms before, "
            f"{1000 * statistics.median(during or [float('nan')]):.0f} ms during (max "
            f"{1000 * max(during or [float('nan')]):.0f} ms)")


FLOODS = (  # name, flood, count at --scale 1 (the review's figures or more)
    ("1. call/ without a session id, one address", call_without_session, 6000),
    ("2. leaderboard views, every menu value", leaderboard_views, 40),
    ("4. uploads of 100 KB", uploads, 2000),
    ("5. fresh ids on signed-in events, many addr.", fresh_ids_on_signed_in_events, 10150),
    ("5. new pages from many addresses", new_pages_from_many_addresses, 6000),
    ("1. unread queued events, many addresses", unread_queue_events, 6000),
    ("6. too-short tokens on the Ratings tab", short_tokens_on_ratings, 100),
    ("10. 40 arriving at once, 60 guesses at once", class_and_guesses, 100),
    ("12. slow bodies of just under 1 MiB", slow_bodies, 300),
    ("16. wrong guesses, 40 addresses, voter votes", guesses_while_voting, 200),
)


async def run_floods(base: str, pid: int, database: Path, *, scale: float, seconds: float,
                     only: set[str] | None = None) -> list[Flood]:
    """Run the floods against the app at ``base`` (process ``pid``, database file ``database``)."""
    require_loopback(base)
    limits = httpx.Limits(max_connections=4 * CONCURRENCY + 64, max_keepalive_connections=4 * CONCURRENCY)
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0), limits=limits) as client:
        config = (await client.get(base + "config")).json()
        events = {d["api_name"]: (d["id"], d.get("queue") is not False) for d in config["dependencies"]
                  if d.get("api_name")}
        arena = Arena(base, pid, database, client, events)
        await arena.sign_in_victim()
        results = []
        for name, flood, count in FLOODS:
            if only and not any(part in name for part in only):
                continue
            result = Flood(name, "")
            result.rss_before = arena.rss()
            started = time.monotonic()
            result.route, result.sent, result.refused, result.note = await flood(
                arena, max(1, round(count * scale)), started + seconds)
            result.seconds = time.monotonic() - started
            result.victim = (await arena.victim_votes())[0]
            result.queue = await arena.queue_answers()
            result.rss_after = arena.rss()
            print(result.line(), flush=True)
            results.append(result)
        return results


def prepare(work: Path, cache_dir: Path) -> dict[str, str]:
    """The demo database in ``work`` with seven days of leaderboard history; the server's environment."""
    shutil.copytree(demo_database(cache_dir), work, dirs_exist_ok=True)
    env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(work / "media"),
           "ARENA_CACHE_DIR": str(cache_dir), "ARENA_DEMO": "false", "ARENA_TRUSTED_PROXIES": "127.0.0.1",
           "ARENA_ADMIN_PASSWORD": ADMIN_PASSWORD, "GRADIO_TEMP_DIR": str(work / "gradio-temp")}
    (work / "gradio-temp").mkdir()
    subprocess.run([sys.executable, "-m", "arena", "leaderboard", "--rebuild-history", "7"],
                   env={**os.environ, **env}, check=True, capture_output=True, timeout=600)
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.flood", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every flood's count (default 1)")
    parser.add_argument("--seconds", type=float, default=300.0, help="the most seconds each flood runs (default 300)")
    parser.add_argument("--only", help="comma-separated parts of flood names to run (default: all)")
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 4 or not 0 < args.seconds <= 600:
        parser.error("--scale must be in (0, 4] and --seconds in (0, 600]: the floods are bounded")
    from core.settings import load_settings

    cache_dir = load_settings().cache_dir.resolve()
    work = Path(tempfile.mkdtemp(prefix="arena-flood-"))
    try:
        env = prepare(work, cache_dir)
        os.environ["GRADIO_TEMP_DIR"] = env["GRADIO_TEMP_DIR"]
        port = free_port()
        server = start_server(env, port, work / "server.log")
        try:
            print(f"server 127.0.0.1:{port} (pid {server.pid}), demo database, default limits, "
                  f"{socket.gethostname()}, {os.cpu_count()} cores")
            print(HEADER)
            asyncio.run(run_floods(f"http://127.0.0.1:{port}/", server.pid, work / "arena.db", scale=args.scale,
                                   seconds=args.seconds, only=set(args.only.split(",")) if args.only else None))
        finally:
            stop_server(server)
        tracebacks = (work / "server.log").read_text(errors="replace").count("Traceback")
        print(f"server log: {tracebacks} tracebacks")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
