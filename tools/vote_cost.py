"""``python -m tools.vote_cost``: what one vote costs the app and the database, per engine, without the wall clock.

The web server's latency and throughput figures (:mod:`tools.load`, :mod:`tools.replicas`) depend on how busy the
machine's cores are; this command counts instead. It builds the real app (:func:`arena.web.app.build_app`) in this
process over a copy of the shipped demo, on SQLite and on a throwaway PostgreSQL server (durable, as the replica
load test runs it: :mod:`tools.postgres_server`), signs ``--annotators`` annotators in through the page's sign-in
event, and casts ``--votes`` votes through the page's vote events (the very handlers Gradio calls), each followed by
the two image lookups of the battle the answer shows (what the media front door asks the database), round robin
over the annotators. Before each vote the session's clocks are moved back by a think time drawn from ``--think``, so
the quality rules see the pace of :mod:`tools.load`'s annotators. Per vote it prints:

- **statements**: the SQL statements the app sent (a text holding two statements counts two; SQLite's trigger
  statements are not counted);
- **round trips**: the calls that waited for the server's answer (PostgreSQL; SQLite has none, it runs in-process);
- **transactions**: the ``BEGIN``\\ s;
- **rows**: the rows that came back (PostgreSQL);
- **app CPU**: this process's CPU time (``time.process_time``), all its threads;
- **server CPU**: the CPU time of PostgreSQL's postmaster and its processes (``/proc``).

The Gradio request handling around the handlers (HTTP, JSON, the front doors) is not in these figures: it is the same
on both engines. ``--profile`` also prints the functions taking the most CPU (cProfile) of the PostgreSQL run.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import cProfile
import io
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from unittest import mock

from tools.load import demo_database
from tools.postgres_server import TemporaryPostgres
from tools.replicas import tree_cpu_seconds

VOTE_EVENTS = ("vote_a", "vote_b", "vote_tie", "vote_both_bad")
# as tools.replicas runs the replicas: limits that a load from one address would trip, off; no leaderboard refresh
LOAD_ENVIRONMENT = {"ARENA_DEMO": "false", "ARENA_RATE_LIMIT_CLIENT": "0", "ARENA_RATE_LIMIT_ANNOTATOR": "0",
                    "ARENA_RATE_LIMIT_SKIPS": "0", "ARENA_RATE_LIMIT_PAGES": "0", "ARENA_LOGIN_MAX_FAILURES": "0",
                    "ARENA_LEADERBOARD_REFRESH_S": "0"}


@dataclass
class Counts:
    """What the app sent to its database (module docstring)."""

    statements: int = 0
    round_trips: int = 0
    transactions: int = 0
    rows: int = 0
    texts: collections.Counter = field(default_factory=collections.Counter)  # each text sent, how many times

    def note(self, sql: str, rows: int = 0, round_trip: bool = True) -> None:
        parts = [part for part in sql.split(";") if part.strip()]
        self.statements += len(parts) or 1
        self.round_trips += round_trip
        self.transactions += sum(1 for part in parts if part.strip().upper().startswith("BEGIN"))
        self.rows += rows
        self.texts[" ".join(sql.split())] += 1

    def reset(self) -> None:
        """Back to nothing counted, in place (the patched connection holds this object)."""
        vars(self).update(vars(Counts()))


@dataclass
class Cost:
    """What ``count`` events (votes, or sign-ins) cost on one engine."""

    engine: str
    event: str  # "vote" or "sign-in"
    count: int
    counts: Counts
    app_cpu: float
    server_cpu: float | None
    wall: float

    def lines(self) -> list[str]:
        per, c, event = 1 / self.count, self.counts, self.event
        lines = [f"{self.engine}: {self.count} {event}s in {self.wall:.1f} s",
                 f"  statements per {event:8}{c.statements * per:7.1f}",
                 f"  transactions per {event:6}{c.transactions * per:7.1f}"]
        if self.server_cpu is not None:
            lines += [f"  round trips per {event:7}{c.round_trips * per:7.1f}",
                      f"  rows fetched per {event:6}{c.rows * per:7.1f}"]
        lines.append(f"  app CPU per {event:11}{1000 * self.app_cpu * per:7.2f} ms")
        if self.server_cpu is not None:
            lines.append(f"  server CPU per {event:8}{1000 * self.server_cpu * per:7.2f} ms")
        return lines

    def text_lines(self, width: int = 160) -> list[str]:
        """The texts sent, the most frequent first, each with how many times per event."""
        return [f"  {count / self.count:5.2f}  {text[:width]}" for text, count in self.counts.texts.most_common()]


class Meter:
    """Counts and CPU times from :meth:`start` to :meth:`cost`."""

    def __init__(self, counts: Counts, postmaster: int | None):
        self.counts, self.postmaster = counts, postmaster

    def start(self) -> None:
        self.counts.reset()
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        self.server = tree_cpu_seconds(self.postmaster) if self.postmaster else None

    def cost(self, engine: str, event: str, count: int) -> Cost:
        server = tree_cpu_seconds(self.postmaster) - self.server if self.postmaster and self.server is not None \
            else None
        return Cost(engine, event, count, copy.deepcopy(self.counts), time.process_time() - self.cpu, server,
                    time.perf_counter() - self.wall)


@contextlib.contextmanager
def counting_postgres(counts: Counts):
    """Count what every psycopg cursor of this process sends (:class:`Counts`)."""
    import psycopg

    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def counted_execute(cursor, query, params=None, **kwargs):
        result = execute(cursor, query, params, **kwargs)
        text = query if isinstance(query, str) else query.decode() if isinstance(query, bytes) else str(query)
        answer = cursor.pgresult
        counts.note(text, answer.ntuples if answer is not None else 0)
        return result

    def counted_executemany(cursor, query, params_seq, **kwargs):
        rows = list(params_seq)
        result = executemany(cursor, query, rows, **kwargs)
        for _ in rows:
            counts.note(str(query))
        return result

    with mock.patch.object(psycopg.Cursor, "execute", counted_execute), \
            mock.patch.object(psycopg.Cursor, "executemany", counted_executemany):
        yield


def count_sqlite(store, counts: Counts):
    """Make every SQLite connection ``store`` hands out count its statements (trigger statements left out)."""
    own = store.db

    def db():
        database = own()
        if not getattr(database.conn, "_counted", False):
            database.conn.set_trace_callback(
                lambda sql: None if sql.startswith("--") else counts.note(sql, round_trip=False))
            database.conn._counted = True
        return database

    store.db = db


def _events(blocks) -> dict:
    return {fn.api_name: fn.fn for fn in blocks.fns.values() if fn.api_name}


def cast_votes(database: str, media: Path, cache_dir: Path, *, votes: int, annotators: int,
               think: tuple[float, float], seed: int, profile: cProfile.Profile | None = None,
               postmaster: int | None = None) -> tuple[Cost, Cost]:
    """Build the app over ``database``, sign ``annotators`` in and cast ``votes`` votes through its events (module
    docstring); (the votes' cost, the sign-ins' cost)."""
    from arena.web.app import BattlePairs, build_app, make_context
    from arena.web.arena_tab import ALL_SUITES
    from core.settings import load_settings

    environment = {**LOAD_ENVIRONMENT, "ARENA_DATABASE_URL": database, "ARENA_MEDIA_DIR": str(media),
                   "ARENA_CACHE_DIR": str(cache_dir)}
    counts = Counts()
    meter = Meter(counts, postmaster)
    with mock.patch.dict(os.environ, environment):
        settings = load_settings()
        ctx = make_context(settings)
        postgres = ctx.store.postgres
        engine = "PostgreSQL" if postgres else "SQLite"
        if not postgres:
            count_sqlite(ctx.store, counts)
        try:
            events = _events(build_app(settings, ctx=ctx))
            rng, pairs = random.Random(seed), BattlePairs()
            sessions = []
            with counting_postgres(counts) if postgres else contextlib.nullcontext():
                meter.start()
                for index in range(annotators):  # a new account each: the sign-up, as the load tests' annotators
                    shown = events["sign_in"](f"cost-{index:03d}", "cost-token", None, ALL_SUITES, False, None)
                    sessions.append(next(value for value in shown if hasattr(value, "battle")))
                sign_ins = meter.cost(engine, "sign-in", annotators)
                meter.start()
                if profile is not None:
                    profile.enable()
                for number in range(votes):
                    index = number % annotators
                    session = sessions[index]
                    pause = rng.uniform(*think)
                    session = replace(session, shown_at=session.shown_at - pause,
                                      voted_at=None if session.voted_at is None else session.voted_at - pause)
                    answer = events[rng.choice(VOTE_EVENTS)](session, ALL_SUITES, False, session.battle.media_token,
                                                             None)
                    if answer[0].votes != session.votes + 1:
                        raise RuntimeError(f"vote {number} was refused: {answer[1]}")
                    session = answer[0]
                    for side in ("a", "b"):  # the two images the answer shows, as the media front door finds them
                        pairs.image(ctx.store.db(), session.battle.media_token, side)
                    sessions[index] = session
                if profile is not None:
                    profile.disable()
                cast = meter.cost(engine, "vote", votes)
        finally:
            ctx.close()
    return cast, sign_ins


def report(votes: Cost, sign_ins: Cost, statements: bool) -> None:
    for cost in (votes, sign_ins):
        print("\n".join(cost.lines() + (cost.text_lines() if statements else [])), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.vote_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=600)
    parser.add_argument("--annotators", type=int, default=16)
    parser.add_argument("--think", type=float, nargs=2, default=(0.2, 0.8), metavar=("MIN", "MAX"))
    parser.add_argument("--engines", default="sqlite,postgresql", help="sqlite, postgresql or both (default)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="print the N functions of the PostgreSQL run with the most CPU of their own (cProfile)")
    parser.add_argument("--statements", action="store_true", help="list the SQL texts sent, with their count per vote")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", default=".cache", help="where the demo is built once")
    args = parser.parse_args(argv)
    engines = [name.strip() for name in args.engines.split(",") if name.strip()]
    unknown = set(engines) - {"sqlite", "postgresql"}
    if unknown:
        parser.error(f"unknown engine {sorted(unknown)[0]!r}: use sqlite, postgresql or both (sqlite,postgresql)")
    cache_dir = Path(args.cache_dir).resolve()
    template = demo_database(cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-vote-cost-"))
    options = dict(votes=args.votes, annotators=args.annotators, think=tuple(args.think), seed=args.seed)
    try:
        shutil.copytree(template, work / "demo")
        media = work / "demo" / "media"
        if "sqlite" in engines:
            report(*cast_votes(str(work / "demo" / "arena.db"), media, cache_dir, **options), args.statements)
        if "postgresql" in engines:
            from datamodel.migrate_db import migrate_database

            with TemporaryPostgres(durable=True) as server:
                migrate_database(template / "arena.db", server.create_database("demo"))
                profile = cProfile.Profile(time.process_time) if args.profile else None
                postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
                costs = cast_votes(server.url("demo"), media, cache_dir, profile=profile, postmaster=postmaster,
                                  **options)
                report(*costs, args.statements)
                if profile is not None:
                    out = io.StringIO()
                    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.profile)
                    print(out.getvalue())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"(machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}: app CPU "
          "is this process's, so other load on the machine disturbs it little)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
