"""``python -m tools.scale``: the arena at study scale, measured against its targets.

It builds (once, cached under ``.cache/scale/``) a database the size of a public arena's
(:mod:`tools.scale_fixture`: by default 1,000,000 votes, 10,000 annotators, 12 models, 2,000 prompts with images,
10% judge votes from two judge voters, 5% of the human votes on replicated battles), works on a copy of it, and
prints each figure with its target:

- the leaderboard snapshot (every panel, computed, rendered and stored) for the default filters and for one filtered
  view: seconds and the peak memory of the process, each in a fresh process;
- the app's start-up time on that database (until it answers), and how long a viewer waits for a view already
  computed (the ``/leaderboard`` API, median and worst of 20 calls);
- for each sampling strategy, on a fresh copy of the database: vote latency p50/p95 and votes per second with
  ``--annotators`` simulated annotators (:mod:`tools.load`), while ``--viewers`` clients each refresh a leaderboard
  with other filters in a loop (one call, then ``--viewer-pause`` seconds), the server recomputing every snapshot as
  soon as votes changed it (``ARENA_LEADERBOARD_REFRESH_S=0``, the worst case);
- the export of every vote in each format: seconds and peak memory, each in a fresh process.

Everything runs on 127.0.0.1 and stops by itself; the exit status is 0 only when every target is met. Sizes and
durations are flags (``--help``); a small run is a smoke test (``tests/test_scale_bench.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from arena.web.leaderboard_tab import ALL, MOST_VOTES, NOW
from ratings.protocols import DEFAULT_PROTOCOL
from sampling.strategies import STRATEGIES, get_strategy
from tools.load import (
    GradioSession,
    LoadError,
    _run,
    check_receipts,
    fetch_endpoints,
    free_port,
    run_load,
    start_server,
    stop_server,
    stored_votes,
)
from tools.scale_fixture import ScaleSpec, cached_scale_database

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("csv", "jsonl", "parquet")
# the leaderboard API's inputs: the filters, the judge column, the rating protocol, the vote source, anonymous votes
# only, the day (now or a kept board's), the order, the human column's votes; the last two are the page's server-side
# states (the signed-in annotator, the admin session), which Gradio fills from the session whatever is sent, so a raw
# call sends placeholders
VIEWER_FILTERS = tuple([*filters, MOST_VOTES, DEFAULT_PROTOCOL, ALL, False, NOW, "rating", "human", None, None]
                       for filters in (  # inputs:
    ["All", "All", "All", "All", "All", "drop", False],  # suite, subset, variant, category, voter, tie policy,
    ["taxonomy", "All", "All", "All", "All", "drop", False],  # include excluded, judge column
    ["All", "Easy", "All", "All", "All", "drop", False],
    ["All", "All", "All", "color", "All", "drop", False],
    ["All", "All", "All", "All", "All", "half", False],
))


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str
    target: float | None = None  # None: reported, no target
    at_least: bool = False  # the target is a minimum (else a maximum)

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        return self.value >= self.target if self.at_least else self.value <= self.target

    def line(self) -> str:
        whole = abs(self.value) >= 100 or float(self.value).is_integer()
        shown = f"{self.value:,.0f}" if whole else f"{self.value:.2f}"
        if self.target is None:
            return f"  {self.name}: {shown} {self.unit}"
        sign = "≥" if self.at_least else "≤"
        return f"  {self.name}: {shown} {self.unit} (target {sign} {self.target:g}: {'met' if self.met else 'NOT MET'})"


def measure(code: str, env: dict[str, str], root: Path = ROOT) -> tuple[dict, float]:
    """Run ``code`` in a fresh Python process in the checkout ``root`` (its modules are the ones imported); it leaves
    a dict in ``result``. Return that dict and the process's peak resident memory in MB (``VmHWM``, read by the
    process itself just before it exits)."""
    script = (f"import json, re\n{code}\nresult['peak_mb'] = int(re.search(r'VmHWM:\\s+(\\d+)', "
              "open('/proc/self/status').read()).group(1)) / 1024\nprint(json.dumps(result))")
    done = subprocess.run([sys.executable, "-c", script], cwd=root, env={**os.environ, **env}, capture_output=True,
                          text=True)
    if done.returncode:
        raise RuntimeError(f"the measured process failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result, result.pop("peak_mb")


def leaderboard_figures(env: dict[str, str]) -> list[Figure]:
    figures = []
    for label, filters, target in (("default filters", {}, True), ("suite taxonomy, subset Easy",
                                                                    {"suite": "taxonomy", "subset": "Easy"}, False)):
        result, peak = measure(
            "from core.settings import load_settings\nfrom arena.leaderboard.compute import leaderboard_options\n"
            "from arena.leaderboard.service import compute_snapshot\n"
            "from datamodel.connection import connect\nimport time\nsettings = load_settings()\n"
            "db = connect(settings.db_path, migrate_schema=False)\nstarted = time.perf_counter()\n"
            f"compute_snapshot(db, leaderboard_options(settings, **{filters!r}), settings.leaderboard_views)\n"
            "result = {'seconds': time.perf_counter() - started}", env)
        figures += [Figure(f"leaderboard snapshot, every panel, {label}", result["seconds"], "s",
                           5.0 if target else None),
                    Figure(f"peak memory of that process ({label})", peak, "MB", 1024.0 if target else None)]
    return figures


def start(env: dict[str, str], work: Path, root: Path) -> tuple[subprocess.Popen, int, float]:
    port = free_port()
    started = time.perf_counter()
    server = start_server(env, port, work / "server.log", timeout=300.0, root=root)
    return server, port, time.perf_counter() - started


async def _viewer_wait(base: str, calls: int = 20) -> list[float]:
    async with httpx.AsyncClient(timeout=120) as client:
        session = GradioSession(client, base, await fetch_endpoints(client, base))
        inputs = VIEWER_FILTERS[0]
        deadline = time.monotonic() + 120
        while "Updated" not in str((await session.call("leaderboard", inputs))[0]):  # the first computation
            if time.monotonic() > deadline:
                raise LoadError("no leaderboard snapshot after 120 s")
            await asyncio.sleep(1)
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await session.call("leaderboard", inputs)
            times.append(time.perf_counter() - started)
        await session.http.close()
        return times


async def _viewer(base: str, inputs: list, deadline: float, pause: float, latencies: list[float],
                  errors: list[str]) -> None:
    async with httpx.AsyncClient(timeout=120) as client:
        session = GradioSession(client, base, await fetch_endpoints(client, base))
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                await session.call("leaderboard", inputs)
                latencies.append(time.perf_counter() - started)
            except (LoadError, httpx.HTTPError) as error:
                errors.append(str(error))
            await asyncio.sleep(pause)
        await session.http.close()


async def _load_with_viewers(base: str, args) -> tuple:
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + args.duration + 30  # the annotators sign in first (not timed)
    load = asyncio.ensure_future(run_load(base, annotators=args.annotators, duration=args.duration,
                                          max_votes=1_000_000, seed=args.seed))
    viewers = [asyncio.ensure_future(_viewer(base, VIEWER_FILTERS[k % len(VIEWER_FILTERS)], deadline,
                                             args.viewer_pause, latencies, errors)) for k in range(args.viewers)]
    report = await load
    for viewer in viewers:
        viewer.cancel()
    await asyncio.gather(*viewers, return_exceptions=True)
    return report, latencies, errors


def serving_figures(args, folder: Path, work: Path, env: dict[str, str], root: Path) -> list[Figure]:
    """Start-up, a viewer's wait and the load per strategy, each strategy on a fresh copy of the database (so the
    simulated annotators start without the votes of the run before)."""
    figures = []
    for k, strategy in enumerate(args.strategies):
        here = work / strategy
        here.mkdir()
        shutil.copy2(folder / "arena.db", here / "arena.db")
        server, port, ready = start({**env, "ARENA_SAMPLING": strategy, "ARENA_DB": str(here / "arena.db")}, here,
                                    root)
        base = f"http://127.0.0.1:{port}/"
        try:
            if k == 0:
                figures.append(Figure("app start-up until it answers", ready, "s", 15.0))
                waits = _run(_viewer_wait(base))
                figures += [Figure("a viewer's wait for a computed view, median of 20", 1000 * statistics.median(
                    waits), "ms", 200.0), Figure("  ... and the slowest of them", 1000 * max(waits), "ms")]
            before = stored_votes(here / "arena.db")
            report, viewer_latencies, viewer_errors = _run(_load_with_viewers(base, args))
        finally:
            stop_server(server)
        stored = {i: v for i, v in stored_votes(here / "arena.db").items() if i not in before}
        shutil.rmtree(here, ignore_errors=True)
        problems = check_receipts(report, stored)
        label = f"{strategy}, {args.annotators} annotators, {args.viewers} leaderboard clients"
        figures += [
            Figure(f"vote p50 ({label})", report.percentile(50), "ms"),
            Figure(f"vote p95 ({label})", report.percentile(95), "ms", 150.0),
            Figure(f"votes per second ({label})", report.votes_per_second, "votes/s", args.min_votes_per_second,
                   at_least=True),
            Figure(f"vote errors and receipt mismatches ({strategy})", len(report.errors) + len(problems), "", 0.0),
            Figure(f"leaderboard refreshes answered ({strategy}; median latency "
                   f"{1000 * statistics.median(viewer_latencies or [float('nan')]):.0f} ms)", len(viewer_latencies),
                   "calls"),
            Figure(f"leaderboard refresh errors ({strategy})", len(viewer_errors), "", 0.0),
        ]
        for problem in [*problems, *report.errors[:3], *viewer_errors[:3]]:
            print(f"    {strategy}: {problem}")
    return figures


def export_figures(env: dict[str, str], work: Path) -> list[Figure]:
    figures = []
    for fmt in FORMATS:
        target = work / f"votes.{fmt}"
        result, peak = measure(
            "from core.settings import load_settings\nfrom datamodel.vote_table import export_votes\n"
            "from datamodel.connection import connect\nimport time\nsettings = load_settings()\n"
            "db = connect(settings.db_path, migrate_schema=False)\nstarted = time.perf_counter()\n"
            f"rows = export_votes(db, {str(target)!r}, {fmt!r})\n"
            "result = {'seconds': time.perf_counter() - started, 'rows': rows}", env)
        target.unlink(missing_ok=True)
        figures += [Figure(f"export of {result['rows']:,} votes as {fmt}", result["seconds"], "s", 15.0),
                    Figure(f"peak memory of that process ({fmt})", peak, "MB", 500.0)]
    return figures


def sampler_figures(db_path: Path) -> list[Figure]:
    try:
        from tools.sampler_bench import measure_draws
    except ImportError:
        return []
    figures = []
    for strategy in [name for name in STRATEGIES if get_strategy(name).reads_stats]:
        result = measure_draws(db_path, strategy, 500)
        figures.append(Figure(f"one {strategy} draw, mean over 500 (p95 {result['p95_ms']:.2f} ms)",
                              result["mean_ms"], "ms"))
    return figures


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tools.scale", description=__doc__.split("\n\n")[0])
    spec = ScaleSpec()
    parser.add_argument("--votes", type=int, default=spec.votes)
    parser.add_argument("--voters", type=int, default=spec.annotators, help="annotators in the database")
    parser.add_argument("--models", type=int, default=spec.models)
    parser.add_argument("--prompts", type=int, default=spec.prompts)
    parser.add_argument("--judge-share", type=float, default=spec.judge_share)
    parser.add_argument("--replicated-share", type=float, default=spec.replicated_share)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--annotators", type=int, default=64, help="simulated annotators voting during the load")
    parser.add_argument("--viewers", type=int, default=5, help="leaderboard clients refreshing during the load")
    parser.add_argument("--viewer-pause", type=float, default=0.5, help="seconds between one client's refreshes")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load per strategy")
    parser.add_argument("--min-votes-per-second", type=float, default=100.0, help="the throughput target")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="sampling strategies to load-test")
    parser.add_argument("--skip", default="", help="parts to leave out: leaderboard,serving,export,sampler")
    parser.add_argument("--cache-dir", default=".cache", help="where the database is built once")
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose server is measured")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.strategies = [s for s in args.strategies.split(",") if s]
    skip = set(filter(None, args.skip.split(",")))
    spec = ScaleSpec(votes=args.votes, annotators=args.voters, models=args.models, prompts=args.prompts,
                     judge_share=args.judge_share, replicated_share=args.replicated_share, seed=args.seed)
    folder = cached_scale_database(spec, args.cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-scale-"))
    try:
        shutil.copy2(folder / "arena.db", work / "arena.db")
        shutil.copytree(folder / "media", work / "media")
        env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(work / "media"), "ARENA_DEMO": "false",
               "ARENA_CACHE_DIR": str(Path(args.cache_dir).resolve()), "ARENA_RATE_LIMIT_CLIENT": "0",
               "ARENA_RATE_LIMIT_PAGES": "0", "ARENA_RATE_LIMIT_ANNOTATOR": "0", "ARENA_LEADERBOARD_REFRESH_S": "0",
               "GRADIO_ANALYTICS_ENABLED": "False"}
        print(f"database: {spec.votes:,} votes, {spec.annotators:,} annotators, {spec.models} models, "
              f"{spec.prompts:,} prompts ({folder}); working copy in {work}")
        figures: list[Figure] = []
        parts = (("leaderboard", lambda: leaderboard_figures(env)),
                 ("serving", lambda: serving_figures(args, folder, work, env, Path(args.root))),
                 ("export", lambda: export_figures(env, work)),
                 ("sampler", lambda: sampler_figures(work / "arena.db")))
        for name, run in parts:
            if name in skip:
                continue
            print(f"{name}:", flush=True)
            for figure in run():
                print(figure.line(), flush=True)
                figures.append(figure)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report_targets(figures)


def report_targets(figures: list[Figure]) -> int:
    """Print how many of the figures' targets were met and which were not; the exit status: 1 if any was missed."""
    missed = [f for f in figures if f.met is False]
    print(f"{sum(f.met is True for f in figures)} targets met, {len(missed)} not met"
          + (": " + "; ".join(f.name for f in missed) if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
