"""``python -m tools.export_bench``: an admin's vote export through the running server, timed and its memory measured.

It builds (once, cached under ``.cache/scale/``, :mod:`tools.scale_fixture`) a database of ``--votes`` votes, starts
``python -m arena serve`` on a copy of it (127.0.0.1), unlocks the admin tab over the page's own HTTP API, asks for
an export in ``--format`` and receives it as the admin's browser would: the file that the export event's answer
links to (or, in a version that sent the file inside the answer, the bytes it carried). It prints the seconds from
the click to the last byte received, the bytes received, and the server process's resident memory before the export
and at its peak during it (``VmHWM`` after resetting it through ``/proc/<pid>/clear_refs``, and sampled every
10 ms): the growth is what one export costs the server; and the same from the event's answer to the last byte
received, which is the file's way to the browser.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from tools.load import GradioSession, fetch_endpoints, free_port, start_server, stop_server
from tools.scale_fixture import ScaleSpec, cached_scale_database

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "export-bench-password"
_LINK = re.compile(r'href="([^"]*admin-export/[A-Za-z0-9_-]+)"')


def _status_kb(pid: int, field: str) -> int:
    found = re.search(rf"{field}:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    if found is None:
        raise LookupError(f"/proc/{pid}/status has no {field} line (this measures Linux processes only).")
    return int(found.group(1))


class RssSampler:
    """The highest ``VmRSS`` of a process, sampled every ``every`` seconds on a thread until :meth:`stop`."""

    def __init__(self, pid: int, every: float = 0.01):
        self.pid, self.every, self.peak_kb = pid, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, _status_kb(self.pid, "VmRSS"))
            time.sleep(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak_kb


async def receive_export(base: str, fmt: str, target: Path, on_answer=lambda: None) -> dict:
    """Unlock, export in ``fmt`` and write what the admin's browser receives to ``target``; seconds and bytes.
    ``on_answer`` is called when the export event has answered (before a download starts)."""
    async with httpx.AsyncClient(timeout=600) as client:
        session = GradioSession(client, base, await fetch_endpoints(client, base))
        await session.call("admin_unlock", [PASSWORD, None])
        started = time.perf_counter()
        answer = await session.call(f"admin_export_{fmt}", [None])
        answered = time.perf_counter() - started
        on_answer()
        carried = [value for value in answer if isinstance(value, dict) and "base64" in value]
        if carried:  # the file inside the event's answer
            target.write_bytes(base64.b64decode(carried[0]["base64"]))
            how = "inside the event's answer (base64)"
        else:
            link = _LINK.search(json.dumps(answer).replace('\\"', '"'))
            if link is None:
                raise RuntimeError(f"the export's answer holds no download link: {str(answer)[:300]}")
            async with client.stream("GET", base + link.group(1).lstrip("/")) as response:
                response.raise_for_status()
                with open(target, "wb") as handle:
                    async for chunk in response.aiter_bytes(1 << 20):
                        handle.write(chunk)
            how = "from the one-time download route"
        return {"seconds": time.perf_counter() - started, "answer_seconds": answered, "bytes": target.stat().st_size,
                "how": how}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.export_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=200_000)
    parser.add_argument("--voters", type=int, default=2_000, help="annotators in the database")
    parser.add_argument("--format", default="csv", choices=("csv", "jsonl", "parquet"))
    parser.add_argument("--cache-dir", default=str(ROOT / ".cache"))
    parser.add_argument("--root", default=str(ROOT), help="the checkout whose server is measured")
    args = parser.parse_args(argv)
    folder = cached_scale_database(ScaleSpec(votes=args.votes, annotators=args.voters), args.cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-export-bench-"))
    server = None
    try:
        shutil.copy2(folder / "arena.db", work / "arena.db")
        (work / "tmp").mkdir()
        env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(folder / "media"), "ARENA_DEMO": "false",
               "ARENA_CACHE_DIR": str(work / "cache"), "ARENA_ADMIN_PASSWORD": PASSWORD, "TMPDIR": str(work / "tmp")}
        port = free_port()
        server = start_server(env, port, work / "server.log", timeout=300.0, root=Path(args.root))
        time.sleep(3.0)  # the sampler's first read and the leaderboard worker settle
        before_kb = _status_kb(server.pid, "VmRSS")
        try:
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # VmHWM starts again from VmRSS
            reset = True
        except OSError:
            reset = False
        sampler = RssSampler(server.pid)
        answered: dict[str, int] = {}

        def on_answer() -> None:  # from here on, only the download: its own peak
            answered["peak_kb"] = max(sampler.peak_kb, _status_kb(server.pid, "VmHWM") if reset else 0)
            answered["rss_kb"] = _status_kb(server.pid, "VmRSS")
            if reset:
                Path(f"/proc/{server.pid}/clear_refs").write_text("5")
            sampler.peak_kb = 0

        result = asyncio.run(receive_export(f"http://127.0.0.1:{port}/", args.format, work / f"votes.{args.format}",
                                            on_answer))
        download_kb = max(sampler.stop(), _status_kb(server.pid, "VmHWM") if reset else 0)
        peak_kb = max(answered["peak_kb"], download_kb)
        print(f"export of {args.votes:,} votes as {args.format}, received {result['how']}:")
        print(f"  {result['bytes'] / 1e6:,.1f} MB in {result['seconds']:.2f} s (event answered after "
              f"{result['answer_seconds']:.2f} s)")
        print(f"  server resident memory: {before_kb / 1024:,.0f} MB before, peak {peak_kb / 1024:,.0f} MB "
              f"(growth {(peak_kb - before_kb) / 1024:,.0f} MB; peak {'from VmHWM and ' if reset else ''}"
              f"sampled every 10 ms)")
        print("  of which after the event answered (the file's way to the browser): "
              f"{answered['rss_kb'] / 1024:,.0f} MB"
              f" when it answered, peak {download_kb / 1024:,.0f} MB (growth "
              f"{(download_kb - answered['rss_kb']) / 1024:,.0f} MB)")
    finally:
        if server is not None:
            stop_server(server)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
