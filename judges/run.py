"""Running a judge over many units of work: concurrency, progress bar, Ctrl-C, the summary.

A *unit* is what one judgment (or one score) needs: a battle asked in both orders, an image and two descriptions,
... Each judge module gives :func:`run_units` its units and an async worker that asks the engine, parses and writes;
the worker returns one of the :data:`UNIT_STATUSES`. Units start in order, a bounded number at a time, so an
interrupted run has finished (and stored) everything it started.

The first Ctrl-C (or SIGTERM) stops sending: requests in flight finish and are stored, units that still needed a
request end as ``stopped`` and write nothing; a second Ctrl-C aborts at once. Either way a re-run resumes from the
cache and pays for nothing twice.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tqdm import tqdm

from judges.client import Engine

UNIT_STATUSES = ("ok", "inconsistent", "failed", "stopped", "dry_run")
Unit = TypeVar("Unit")


@dataclass
class RunSummary:
    judge: str
    task: str
    units: int = 0
    done: int = 0          # ok or inconsistent
    inconsistent: int = 0
    failed: int = 0
    stopped: int = 0
    skipped: int = 0       # judged by an earlier run
    dry_run: bool = False
    requests_sent: int = 0
    requests_cached: int = 0
    requests_failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    planned_requests: int = 0
    planned_cost_usd: float = 0.0
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_engine(self, engine: Engine) -> None:
        s = engine.stats
        self.requests_sent, self.requests_cached, self.requests_failed = s.sent, s.cached, s.failed
        self.retries, self.prompt_tokens, self.completion_tokens, self.cost_usd = (
            s.retries, s.prompt_tokens, s.completion_tokens, s.cost_usd)
        self.planned_requests, self.planned_cost_usd = s.planned, s.planned_cost_usd

    def lines(self) -> list[str]:
        if self.dry_run:
            out = [f"{self.judge} {self.task} (dry run): {self.units} units, {self.skipped} already judged",
                   f"requests: {self.planned_requests} to send, {self.requests_cached} answered by the cache",
                   f"estimated cost: ${self.planned_cost_usd:.4f}"]
        else:
            out = [f"{self.judge} {self.task}: {self.done} done ({self.inconsistent} inconsistent), "
                   f"{self.failed} failed, {self.stopped} not finished (stopped), {self.skipped} already judged",
                   f"requests: {self.requests_sent} sent, {self.requests_cached} cached, "
                   f"{self.requests_failed} failed, "
                   f"{self.retries} retries; tokens {self.prompt_tokens} in / {self.completion_tokens} out; "
                   f"cost ${self.cost_usd:.4f}; {self.wall_s:.1f} s"]
        out.extend(self.notes)
        return out


async def run_units(
    engine: Engine, units: Sequence[Unit], worker: Callable[[Unit], Awaitable[str]], summary: RunSummary,
    *, progress: bool = True, handle_signals: bool = True,
) -> RunSummary:
    """Run ``worker`` on every unit (at most ``2 x concurrency`` units at a time) and count the outcomes."""
    started = time.monotonic()
    summary.units += len(units)
    summary.dry_run = engine.dry_run
    slots = asyncio.Semaphore(max(4, 2 * engine.config.concurrency))
    bar = tqdm(total=len(units), desc=f"{summary.task}", unit="unit", disable=not progress, file=sys.stderr,
               dynamic_ncols=True)
    main = asyncio.current_task()
    if main is None:
        raise RuntimeError("the judging run must be awaited in an asyncio task.")
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)

    def on_signal() -> None:
        if engine.stopping:
            main.cancel()
            return
        engine.stop()
        print("\nStopping: finishing the requests in flight and storing them (Ctrl-C again to abort).",
              file=sys.stderr)

    installed = []
    if handle_signals:
        for sig in signals:
            try:
                loop.add_signal_handler(sig, on_signal)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                pass

    async def one(unit: Unit) -> None:
        async with slots:
            status = await worker(unit)
        if status not in UNIT_STATUSES:
            raise ValueError(f"worker returned {status!r}, not one of {UNIT_STATUSES}")
        if status in ("ok", "inconsistent"):
            summary.done += 1
            summary.inconsistent += status == "inconsistent"
        elif status == "failed":
            summary.failed += 1
        elif status == "stopped":
            summary.stopped += 1
        bar.update(1)
        bar.set_postfix(failed=summary.failed, cached=engine.stats.cached, refresh=False)

    try:
        await asyncio.gather(*(one(unit) for unit in units))
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        bar.close()
        summary.add_engine(engine)
        summary.wall_s += time.monotonic() - started
    return summary
