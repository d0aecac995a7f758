"""``python -m tools.replicas``: N app replicas on one PostgreSQL under load, one of them killed, the guarantees
checked and the figures printed against the targets of issue 30.

For each N of ``--replicas`` (default 1, 2, 4) the run starts a throwaway PostgreSQL server (Debian's, durable: fsync
and synchronous commit on, so an acknowledged vote is on disk; :mod:`tools.postgres_server`), copies the shipped demo
into a fresh database of it (``migrate-db``), starts N servers (``python -m arena serve``) on that database and one
media folder they share, and drives them from 127.0.0.1 only:

- ``--annotators`` simulated annotators, each pinned to one replica as a sticky load balancer pins a browser
  (annotator i to replica i mod N), signed in before the clock starts and voting as :mod:`tools.load`'s do (think
  time, a vote whose answer carries the next battle, its two images); the votes per second and the CPU per vote are
  over the voting window, from the first vote's start to the last annotator's end; ``--viewers`` leaderboard
  clients, spread the same way, asking for the leaderboard every ``--viewer-pause`` seconds;
- with N ≥ 2 and ``--kill-at`` (a share of the duration, default 0.5), a ``kill -9`` of replica 0 and its leaderboard
  worker mid-run: its annotators' requests fail; each then does what a browser behind a sticky balancer does, reloading
  on the next live replica, whose page resumes the session with the stay-signed-in token it stored (issue 29's
  reload), and votes on; the vote p95 is printed for the votes answered before the kill (N replicas serving: what
  the target of issue 30 is about), for those after it (the survivors taking over the dead replica's annotators at
  once) and for the whole run;
- afterwards: every acknowledged vote is in the database exactly once under its voter, a stored vote that nobody saw
  acknowledged is one whose request failed (at most as many), no battle has two votes, the survivors acknowledged
  votes after the kill, and each leaderboard snapshot was computed once for all replicas (the number of computations
  seen in ``leaderboard_snapshots`` during the run, against N);

then, with ``--limits`` (two replicas, the rate limits on): one annotator voting as fast as it can through both
replicas at once gets no more accepted votes per minute than ``ARENA_RATE_LIMIT_ANNOTATOR``; and that annotator,
voting through both, never sees a prompt twice while the suite has one it has not voted on (the no-repeat rule). (The
sign-in throttles, admin sessions and export links across replicas are checked by tests/test_shared_state.py, not
here.)

``--snapshot-votes N`` also times the leaderboard snapshot of the scale fixture's N votes (1,000,000 for the issue's
target) on SQLite and on its PostgreSQL copy, each in a fresh process.

Every request loop is bounded by ``--duration`` and ``--max-votes`` and stops by itself. On a two-core machine the
load generator, PostgreSQL and every replica share the same two cores: with more replicas each gets less of them, so
the throughput and latency figures of N = 2 and 4 measure the machine as much as the design; the guarantees do not
depend on it.
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
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from ratings.votes import OUTCOMES
from tools.load import (
    VOTE_ENDPOINTS,
    GradioSession,
    LoadError,
    LoadReport,
    _run,
    check_receipts,
    demo_database,
    fetch_endpoints,
    free_port,
    percentile_ms,
    shown_token,
    start_server,
    stop_server,
    stored_votes,
)
from tools.postgres_server import TemporaryPostgres
from tools.scale import VIEWER_FILTERS, Figure, report_targets

ROOT = Path(__file__).resolve().parents[1]
DEMO_VIEWS = (VIEWER_FILTERS[0], VIEWER_FILTERS[1], VIEWER_FILTERS[4])  # the views the demo has (every vote, the
# taxonomy suite, ties as half a win): the scale fixture's category and subset are not the demo's
_RECEIPT = re.compile(r'data-vote-id=\\"(\d+)\\"')


@dataclass
class Replica:
    index: int
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class Run:
    """What one N's load saw, besides the :class:`LoadReport`."""

    replicas: int
    report: LoadReport
    killed_at: float | None = None  # seconds into the load
    after_kill: int = 0  # votes acknowledged after the kill
    failovers: int = 0  # annotators whose page reloaded on another replica
    viewer_calls: list[float] = field(default_factory=list)
    viewer_errors: list[str] = field(default_factory=list)
    computations: int = 0  # snapshot computations seen in the table during the load
    app_cpu: float = 0.0  # CPU seconds of the surviving replicas (and their leaderboard workers) while the votes ran
    database_cpu: float = 0.0  # CPU seconds of PostgreSQL while the votes ran
    answered_at: list[float] = field(default_factory=list)  # seconds into the load each of report.latencies ended

    def p95(self, before_kill: bool | None = None) -> float:
        """The votes' p95 in ms: of all of them (``None``), of those answered before the kill, or of those after."""
        if before_kill is None or self.killed_at is None:
            chosen = self.report.latencies
        else:
            chosen = [latency for latency, at in zip(self.report.latencies, self.answered_at)
                      if (at < self.killed_at) == before_kill]
        return percentile_ms(chosen, 95)


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by process ``pid``, its children that ended, and its live children
    (Linux ``/proc``): a replica and its leaderboard worker, or PostgreSQL's postmaster and its backends."""
    def fields(proc: int) -> list[str] | None:
        try:
            return Path(f"/proc/{proc}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None

    tick = os.sysconf("SC_CLK_TCK")
    own = fields(pid)
    if own is None:
        return 0.0
    total = sum(int(own[k]) for k in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            child = fields(int(entry.name))
            if child is not None and int(child[1]) == pid:  # ppid
                total += int(child[11]) + int(child[12])
    return total / tick


def _postmaster(server: TemporaryPostgres) -> int:
    return int((server.data / "postmaster.pid").read_text().split()[0])


def _next_live(replicas: list[Replica], start: int) -> Replica:
    for step in range(1, len(replicas) + 1):
        replica = replicas[(start + step) % len(replicas)]
        if replica.alive:
            return replica
    raise LoadError("no replica is left")


async def _sign_in(client, replica: Replica, endpoints, index: int) -> tuple[GradioSession, str, str]:
    """(page session, the battle on screen, the stay-signed-in token the page stores) of a sign-in on ``replica``."""
    session = GradioSession(client, replica.base, endpoints)
    shown = await session.call("sign_in", [f"load-{index:03d}", "load-token", None, "All suites", False])
    await session.images(shown)
    return session, shown_token(shown), shown[-1] if isinstance(shown[-1], str) else ""


async def _reload(client, replica: Replica, endpoints, stored: str) -> tuple[GradioSession, str]:
    """A page reloaded on ``replica`` with its stored stay-signed-in token: the page's resume event (the battle on
    screen again), as a browser does after its replica is gone and the balancer sends it to another."""
    session = GradioSession(client, replica.base, endpoints)
    shown = await session.call("resume", [stored, "", ""])
    await session.images(shown)
    return session, shown_token(shown)


async def _first_sign_in(index: int, replicas: list[Replica], client, endpoints, run: Run):
    """The annotator's sign-in on its pinned replica before the clock starts, as :mod:`tools.load` signs its
    annotators in (session, battle token, stay-signed-in token), or (None, None, "") after an error (the annotator
    tries again in the run)."""
    replica = replicas[index % len(replicas)]
    try:
        return await _sign_in(client, replica, endpoints, index)
    except (LoadError, httpx.HTTPError, OSError) as error:
        run.report.errors.append(f"annotator {index} sign-in on replica {replica.index}: {error}")
        return None, None, ""


async def _annotator(index: int, replicas: list[Replica], client, endpoints, run: Run, started: float,
                     deadline: float, budget: list[int], think: tuple[float, float], rng: random.Random,
                     first: tuple) -> None:
    """Vote from the ``first`` sign-in on the pinned replica until the time or the vote budget is spent; when the
    replica is gone, reload on the next live one (a sticky balancer's failover), which resumes the session with the
    stored stay-signed-in token (a new sign-in when there is none), and go on."""
    report = run.report
    replica, (session, on_screen, stored) = replicas[index % len(replicas)], first
    while time.monotonic() < deadline and budget[0] > 0:
        if session is None:
            try:
                if stored:
                    session, on_screen = await _reload(client, replica, endpoints, stored)
                else:
                    session, on_screen, stored = await _sign_in(client, replica, endpoints, index)
            except (LoadError, httpx.HTTPError, OSError) as error:
                if replica.alive:
                    report.errors.append(f"annotator {index} sign-in or reload on replica {replica.index}: {error}")
                    await asyncio.sleep(1.0)
                else:
                    replica = _next_live(replicas, replica.index)
                    run.failovers += 1
                continue
        await asyncio.sleep(rng.uniform(*think))
        if time.monotonic() >= deadline or budget[0] <= 0:
            break
        budget[0] -= 1
        asked = time.monotonic()
        try:
            voted = await session.call(VOTE_ENDPOINTS[rng.choice(OUTCOMES)], [None, "All suites", False, on_screen])
        except (LoadError, httpx.HTTPError, OSError) as error:
            report.unanswered_votes += 1  # the server may have stored it: the check allows as many
            if replica.alive:
                report.errors.append(f"annotator {index} vote on replica {replica.index}: {error}")
            else:
                await session.http.close()
                session, replica = None, _next_live(replicas, replica.index)
                run.failovers += 1
            continue
        receipt = _RECEIPT.search(json.dumps(voted))
        if receipt is None:
            report.errors.append(f"annotator {index}: the vote's answer has no receipt")
            continue
        report.acknowledged.append(f"load-{index:03d}")
        report.vote_ids.append(int(receipt.group(1)))
        if run.killed_at is not None and asked - started > run.killed_at:
            run.after_kill += 1
        try:
            on_screen = shown_token(voted[-1])
            await session.images(voted[-1])
        except (LoadError, httpx.HTTPError, OSError) as error:
            if replica.alive:
                report.errors.append(f"annotator {index}: {error}")
            session = None
            continue
        report.latencies.append(time.monotonic() - asked)
        run.answered_at.append(time.monotonic() - started)
    if session is not None:
        await session.http.close()


async def _viewer(index: int, replicas: list[Replica], client, endpoints, run: Run, deadline: float,
                  pause: float) -> None:
    replica = replicas[index % len(replicas)]
    session = GradioSession(client, replica.base, endpoints)
    inputs = DEMO_VIEWS[index % len(DEMO_VIEWS)]
    while time.monotonic() < deadline:
        asked = time.perf_counter()
        try:
            await session.call("leaderboard", inputs)
            run.viewer_calls.append(time.perf_counter() - asked)
        except (LoadError, httpx.HTTPError, OSError) as error:
            if replica.alive:
                run.viewer_errors.append(str(error))
            else:
                await session.http.close()
                replica = _next_live(replicas, replica.index)
                session = GradioSession(client, replica.base, endpoints)
        await asyncio.sleep(pause)
    await session.http.close()


async def _drive(replicas: list[Replica], args, run: Run, kill_at: float | None,
                 cpu_seconds: Callable[[], tuple[dict[int, float], float]]) -> None:
    """The load of one N; ``cpu_seconds()`` gives ({live replica: its CPU}, PostgreSQL's CPU) so far, read at the
    start and the end of the votes' window for :attr:`Run.app_cpu` and :attr:`Run.database_cpu`."""
    limits = httpx.Limits(max_connections=4 * args.annotators + 16, max_keepalive_connections=4 * args.annotators + 16)
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0), limits=limits) as client:
        endpoints = await fetch_endpoints(client, replicas[0].base)
        first = await asyncio.gather(*(_first_sign_in(i, replicas, client, endpoints, run)
                                       for i in range(args.annotators)))  # not timed, as in tools.load
        app_before, database_before = cpu_seconds()
        started = time.monotonic()
        deadline = started + args.duration
        budget = [args.max_votes]
        annotators = [asyncio.ensure_future(_annotator(i, replicas, client, endpoints, run, started, deadline, budget,
                                                       tuple(args.think), random.Random(args.seed * 1000 + i),
                                                       first[i]))
                      for i in range(args.annotators)]
        viewers = [asyncio.ensure_future(_viewer(k, replicas, client, endpoints, run, deadline, args.viewer_pause))
                   for k in range(args.viewers)]
        if kill_at is not None:
            await asyncio.sleep(kill_at)
            os.killpg(replicas[0].process.pid, signal.SIGKILL)  # the server and its leaderboard worker
            replicas[0].process.wait()
            run.killed_at = time.monotonic() - started
        await asyncio.gather(*annotators)
        run.report.seconds = time.monotonic() - started  # the votes' window (a viewer's last pause ends later)
        app_after, database_after = cpu_seconds()
        run.app_cpu = sum(app_after[index] - app_before[index] for index in app_after)  # the survivors
        run.database_cpu = database_after - database_before
        await asyncio.gather(*viewers)


def _count_computations(url: str, stop: threading.Event, found: list[int]) -> None:
    """Count the snapshot computations stored while the load runs (each replica stores the ones it made)."""
    from datamodel.connection import connect
    from datamodel.snapshots import snapshot_times

    db = connect(url, migrate_schema=False)
    try:
        seen = snapshot_times(db)
        while not stop.wait(0.2):
            now = snapshot_times(db)
            found[0] += sum(1 for key, at in now.items() if seen.get(key) != at)
            seen = now
    finally:
        db.close()


def start_replicas(count: int, env: dict[str, str], work: Path) -> list[Replica]:
    replicas = []
    try:
        for index in range(count):
            port = free_port()
            log = work / f"replica-{index}.log"
            replicas.append(Replica(index, port, start_server(env, port, log, timeout=300.0), log))
    except BaseException:
        for replica in replicas:
            stop_server(replica.process)
        raise
    return replicas


def load_run(server: TemporaryPostgres, template: str, media: Path, cache_dir: Path, count: int, args,
             work: Path) -> tuple[Run, list[str]]:
    """N replicas under load (module docstring); the run and the problems the checks found."""
    from datamodel.connection import connect
    from datamodel.votes import battles_with_several_votes

    name = f"run_{count}"
    url = server.create_database(name, template=template)
    env = {"ARENA_DATABASE_URL": url, "ARENA_MEDIA_DIR": str(media), "ARENA_CACHE_DIR": str(cache_dir),
           "ARENA_DEMO": "false", "ARENA_RATE_LIMIT_CLIENT": "0", "ARENA_RATE_LIMIT_ANNOTATOR": "0",
           "ARENA_RATE_LIMIT_SKIPS": "0", "ARENA_LEADERBOARD_REFRESH_S": str(args.leaderboard_refresh),
           # every simulated annotator opens its page and signs in from this one address: concurrent sign-ins from
           # one address are limited to ARENA_LOGIN_MAX_FAILURES at once (issue 23); --limits checks the throttle
           "ARENA_RATE_LIMIT_PAGES": "0", "ARENA_LOGIN_MAX_FAILURES": "0"}
    replicas = start_replicas(count, env, work)
    run = Run(count, LoadReport(annotators=args.annotators, seconds=args.duration))
    stop, computations = threading.Event(), [0]
    counter = threading.Thread(target=_count_computations, args=(url, stop, computations), daemon=True)
    counter.start()
    try:
        kill_at = args.duration * args.kill_at if count >= 2 and args.kill_at > 0 else None
        _run(_drive(replicas, args, run, kill_at,
                    lambda: ({r.index: tree_cpu_seconds(r.process.pid) for r in replicas if r.alive},
                             tree_cpu_seconds(_postmaster(server)))))
    finally:
        stop.set()
        counter.join(10)
        for replica in replicas:
            stop_server(replica.process)
    run.computations = computations[0]
    stored = stored_votes(url)
    problems = check_receipts(run.report, stored)
    db = connect(url, migrate_schema=False)
    try:
        doubled = battles_with_several_votes(db)
    finally:
        db.close()
    if doubled:
        problems.append(f"{doubled} battles have more than one vote")
    if run.killed_at is not None and run.after_kill == 0:
        problems.append("no vote was acknowledged after the kill: the survivors did not serve on")
    server.drop_database(name)
    return run, problems


def run_figures(run: Run, problems: list[str], args) -> list[Figure]:
    n, report = run.replicas, run.report
    label = f"{n} replica{'s' if n > 1 else ''}, {args.annotators} annotators, {args.viewers} leaderboard clients"
    figures = [
        Figure(f"vote p50 ({label})", report.percentile(50), "ms"),
        *((Figure(f"vote p95 ({label})", run.p95(), "ms", 150.0 if n <= 2 else None),) if run.killed_at is None else
          # the target is the replicas' own: the window before the kill; the failover after it is reported beside it
          (Figure(f"vote p95 ({label}, before the kill)", run.p95(before_kill=True), "ms", 150.0 if n <= 2 else None),
           Figure(f"vote p95 ({label}, after the kill: the survivors and the failover)", run.p95(before_kill=False),
                  "ms"),
           Figure(f"vote p95 ({label}, the whole run, the failover included)", run.p95(), "ms"))),
        Figure(f"votes per second ({label})", report.votes_per_second, "votes/s", 100.0 if n == 1 else None,
               at_least=True),
        Figure(f"acknowledged votes lost, doubled or misattributed ({n} replicas)", len(problems), "", 0.0),
        Figure(f"vote errors other than the killed replica's ({n} replicas)", len(report.errors), ""),
        Figure(f"app CPU per acknowledged vote ({n} replicas' processes{', the survivors' if run.killed_at else ''})",
               1000 * run.app_cpu / max(1, len(report.latencies)), "ms"),
        Figure(f"PostgreSQL CPU per acknowledged vote ({n} replicas)",
               1000 * run.database_cpu / max(1, len(report.latencies)), "ms"),
        Figure(f"leaderboard snapshots computed during the run ({n} replicas, refresh "
               f"{args.leaderboard_refresh:g} s)", run.computations, ""),
        Figure(f"leaderboard calls answered ({n} replicas; median "
               f"{1000 * statistics.median(run.viewer_calls or [float('nan')]):.0f} ms)", len(run.viewer_calls), ""),
    ]
    if run.killed_at is not None:
        figures += [Figure(f"kill -9 of replica 0 at {run.killed_at:.1f} s: votes the survivors acknowledged after "
                           f"it ({run.failovers} annotators failed over)", run.after_kill, "", 1.0, at_least=True),
                    Figure("vote requests that failed at the kill (stored or not; none acknowledged)",
                           report.unanswered_votes, "")]
    return figures


async def _limit_checks(replicas: list[Replica], per_minute: int) -> dict:
    """One annotator voting as fast as it can through two replicas at once (two tabs, one on each); another signing
    in on one replica, then the other, three votes each time (module docstring)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as client:
        endpoints = await fetch_endpoints(client, replicas[0].base)
        tabs = [(await _sign_in(client, replica, endpoints, 900))[:2] for replica in replicas]
        accepted, refused, other = 0, 0, []
        for attempt in range(3 * per_minute):  # far more than the limit, within a few seconds
            session, on_screen = tabs[attempt % 2]
            try:
                voted = await session.call("vote_a", [None, "All suites", False, on_screen])
            except LoadError as error:
                other.append(str(error))
                continue
            answer = json.dumps(voted)
            if _RECEIPT.search(answer) is None:  # refused: told on the status line, the battle stays on screen
                if "Slow down" in answer:
                    refused += 1
                else:
                    other.append(answer[:200])
                continue
            accepted += 1
            tabs[attempt % 2] = (session, shown_token(voted[-1]))
        for session, _ in tabs:
            await session.http.close()
        rounds = 0
        for rounds in range(8):  # the no-repeat rule: sign in on one replica, then the other
            session, on_screen, _ = await _sign_in(client, replicas[rounds % 2], endpoints, 901)
            for _ in range(3):
                voted = await session.call("vote_b", [None, "All suites", False, on_screen])
                on_screen = shown_token(voted[-1])
            await session.http.close()
    return {"accepted": accepted, "refused": refused, "errors": other, "rounds": rounds + 1}


def limit_figures(server: TemporaryPostgres, template: str, media: Path, cache_dir: Path, work: Path
                  ) -> list[Figure]:
    """The rate limit and the no-repeat rule across two replicas (module docstring)."""
    from datamodel.annotators import annotator_names
    from datamodel.connection import connect
    from datamodel.sampling_reads import annotator_prompts, eligible_prompts

    per_minute = 30
    url = server.create_database("limits", template=template)
    env = {"ARENA_DATABASE_URL": url, "ARENA_MEDIA_DIR": str(media), "ARENA_CACHE_DIR": str(cache_dir),
           "ARENA_DEMO": "false", "ARENA_RATE_LIMIT_ANNOTATOR": str(per_minute), "ARENA_RATE_LIMIT_CLIENT": "0",
           "ARENA_RATE_LIMIT_SKIPS": "0", "ARENA_RATE_LIMIT_PAGES": "0"}
    replicas = start_replicas(2, env, work)
    try:
        started = time.monotonic()
        found = _run(_limit_checks(replicas, per_minute))
        seconds = time.monotonic() - started
    finally:
        for replica in replicas:
            stop_server(replica.process)
    db = connect(url, migrate_schema=False)
    try:
        names = {name: number for number, name in annotator_names(db).items()}
        seen = annotator_prompts(db, names["load-901"])
        scope = len(eligible_prompts(db))
    finally:
        db.close()
    server.drop_database("limits")
    votes = sum(count for _, count, _ in seen)
    repeated = sum(count - 1 for _, count, _ in seen) if votes <= scope else None
    tries = found["accepted"] + found["refused"]
    figures = [Figure(f"votes accepted from one annotator voting through 2 replicas at once ({tries} tries in "
                      f"{seconds:.0f} s; limit {per_minute} a minute)", found["accepted"], "", float(per_minute)),
               Figure("  ... and refused with the limit's message", found["refused"], "")]
    if repeated is not None:
        figures.append(Figure(f"prompts shown twice to one annotator signing in on replica 1, then 2, then 1 ... "
                              f"({votes} votes, {scope} prompts in scope)", repeated, "", 0.0))
    figures.append(Figure("other errors of these checks", len(found["errors"]), "", 0.0))
    return figures


def snapshot_figures(votes: int, cache_dir: Path, server: TemporaryPostgres) -> list[Figure]:
    """The leaderboard snapshot (default filters, every panel) of ``votes`` votes on SQLite and on PostgreSQL, each
    computed in a fresh process (the scale fixture, copied by migrate-db)."""
    from datamodel.migrate_db import migrate_database
    from tools.scale import measure
    from tools.scale_fixture import ScaleSpec, cached_scale_database

    folder = cached_scale_database(ScaleSpec(votes=votes), cache_dir)
    url = server.create_database("scale")
    started = time.perf_counter()
    migrate_database(folder / "arena.db", url)
    copied = time.perf_counter() - started
    code = ("from arena.leaderboard.compute import leaderboard_options\n"
            "from arena.leaderboard.service import compute_snapshot\n"
            "from datamodel.connection import connect\nfrom core.settings import load_settings\nimport time\n"
            "settings = load_settings()\ndb = connect(settings.database, migrate_schema=False)\n"
            "started = time.perf_counter()\ncompute_snapshot(db, leaderboard_options(settings), None)\n"
            "result = {'seconds': time.perf_counter() - started}")
    base = {"ARENA_DEMO": "false", "ARENA_CACHE_DIR": str(cache_dir)}
    sqlite, sqlite_peak = measure(code, {**base, "ARENA_DATABASE_URL": str(folder / "arena.db")})
    postgres, postgres_peak = measure(code, {**base, "ARENA_DATABASE_URL": url})
    server.drop_database("scale")
    ratio = postgres["seconds"] / sqlite["seconds"]
    return [Figure(f"migrate-db of {votes:,} votes into PostgreSQL, verified", copied, "s"),
            Figure(f"leaderboard snapshot of {votes:,} votes on SQLite (peak {sqlite_peak:.0f} MB)",
                   sqlite["seconds"], "s"),
            Figure(f"leaderboard snapshot of {votes:,} votes on PostgreSQL (peak {postgres_peak:.0f} MB)",
                   postgres["seconds"], "s"),
            Figure("PostgreSQL's snapshot time over SQLite's", ratio, "×", 2.0)]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.replicas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", default="1,2,4", help="the numbers of app replicas to run (default 1,2,4)")
    parser.add_argument("--annotators", type=int, default=64)
    parser.add_argument("--viewers", type=int, default=5, help="leaderboard clients")
    parser.add_argument("--viewer-pause", type=float, default=2.0, help="seconds between one client's calls")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load per number of replicas")
    parser.add_argument("--max-votes", type=int, default=20_000, help="stop after this many votes")
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 0.8), metavar=("MIN", "MAX"))
    parser.add_argument("--kill-at", type=float, default=0.5,
                        help="kill -9 replica 0 at this share of the duration, with 2 replicas or more (0: never)")
    parser.add_argument("--leaderboard-refresh", type=float, default=5.0,
                        help="ARENA_LEADERBOARD_REFRESH_S of the replicas (default 5)")
    parser.add_argument("--limits", action="store_true", help="also check the limits across two replicas")
    parser.add_argument("--snapshot-votes", type=int, default=0,
                        help="also time the leaderboard snapshot of this many votes on both engines (0: not)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", default=".cache", help="where the demo and the scale fixture are built once")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    counts = [int(n) for n in args.replicas.split(",") if n.strip()]
    cache_dir = Path(args.cache_dir).resolve()
    work = Path(tempfile.mkdtemp(prefix="arena-replicas-"))
    figures: list[Figure] = []
    try:
        template_folder = demo_database(cache_dir)
        media = work / "media"  # the one media folder every replica reads, as a shared volume would be
        shutil.copytree(template_folder / "media", media)
        with TemporaryPostgres(durable=True, max_connections=500) as server:
            from datamodel.migrate_db import migrate_database

            migrate_database(template_folder / "arena.db", server.create_database("demo"))
            print(f"PostgreSQL {server.url()} (durable: fsync and synchronous commit on); demo copied; media {media}")
            for count in counts:
                print(f"{count} replica{'s' if count > 1 else ''}:", flush=True)
                run, problems = load_run(server, "demo", media, cache_dir, count, args, work)
                for figure in run_figures(run, problems, args):
                    print(figure.line(), flush=True)
                    figures.append(figure)
                for problem in [*problems, *run.report.errors[:5], *run.viewer_errors[:3]]:
                    print(f"    {problem}")
            if args.limits:
                print("limits across 2 replicas:", flush=True)
                for figure in limit_figures(server, "demo", media, cache_dir, work):
                    print(figure.line(), flush=True)
                    figures.append(figure)
            if args.snapshot_votes:
                print(f"leaderboard snapshot of {args.snapshot_votes:,} votes:", flush=True)
                for figure in snapshot_figures(args.snapshot_votes, cache_dir, server):
                    print(figure.line(), flush=True)
                    figures.append(figure)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    status = report_targets(figures)
    print(f"(this machine: {os.cpu_count()} cores shared by the load generator, PostgreSQL and every replica)")
    return status


if __name__ == "__main__":
    sys.exit(main())
