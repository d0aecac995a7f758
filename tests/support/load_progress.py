"""What a running :func:`tools.load.run_load` has acknowledged so far, for tests that act in the middle of a load
(take a backup, kill the server) once enough votes are in rather than after a fixed time, which a slow or busy
machine may not reach."""

from __future__ import annotations

import asyncio
import time
from types import CoroutineType


def receipts_so_far(task: asyncio.Task) -> list[int]:
    """The vote receipts the running load has seen so far: its LoadReport (a local of run_load) read through the
    task's suspended coroutine frame, since run_load returns the report only at the end."""
    coro = task.get_coro()
    assert isinstance(coro, CoroutineType)  # run_load is an async function, so its task runs a coroutine
    frame = coro.cr_frame
    report = frame.f_locals.get("report") if frame is not None else None
    return report.vote_ids if report is not None else []


async def wait_for_votes(task: asyncio.Task, votes: int, timeout: float = 60.0) -> list[int]:
    """Wait until the load in ``task`` has acknowledged ``votes`` votes; return a copy of its receipts then."""
    deadline = time.monotonic() + timeout
    while len(receipts := receipts_so_far(task)) < votes:
        assert time.monotonic() < deadline and not task.done(), "the load run acknowledged too few votes"
        await asyncio.sleep(0.05)
    return list(receipts)
