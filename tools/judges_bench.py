"""Benchmark of the judge engine: ``python -m tools.judges_bench``.

Against the scripted OpenAI-compatible server (:mod:`tools.fake_openai`, its own process, ``--latency`` seconds per
reply) and a throwaway arena database (``--prompts`` prompts x ``--models`` models, one small image each):

1. ``--n`` pairwise judgments of battles drawn like the arena draws them, at ``--concurrency``; wall time against the
   ideal (requests x latency / concurrency). Single order by default (one request per judgment, the published
   protocol); ``--both-orders`` asks both orders (two requests per judgment).
2. The same judgments again under another judge name: every request should be answered by the cache.
3. ``python -m judges pairwise`` in a subprocess on a fresh database, interrupted (SIGINT, as Ctrl-C) once the server
   has received half of the requests, then started again with the same command: how many requests the server
   received twice. This SIGINT line carries the target "repeated requests after kill and restart: expected 0"
   (Ctrl-C lets the requests in flight finish and stores their answers). The same with SIGKILL (a crash): the
   requests in flight when the process died (received by the server, answer not stored: counted from the cache
   table after the kill) are lost with it and sent again, so that line expects at most that many repeats (itself at
   most ``--concurrency``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from PIL import Image

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.judge_requests import usage as cache_usage
from datamodel.media import MediaStore
from datamodel.renditions import Renditions, RenditionSpec
from datamodel.votes import vote_count
from judges.client import EngineConfig
from judges.pairwise import run_pairwise
from judges.run import RunSummary
from judges.selection import Selection

SUITE = "bench"
ROOT = Path(__file__).resolve().parents[1]


def build_arena(folder: Path, prompts: int, models: int) -> tuple[Path, Path]:
    """A database with ``prompts`` prompts of suite ``bench`` and one 16 x 16 image per model and prompt."""
    db_path, media_dir = folder / "arena.db", folder / "media"
    db, media = connect(db_path, synchronous="NORMAL"), MediaStore(media_dir)
    ids = add_prompts(db, [PromptSpec(SUITE, f"p{i}", f"An image of bench concept number {i}")
                           for i in range(prompts)]).ids
    with db.conn:
        for m in range(models):
            model_id = add_model(db, f"bench-model-{m}")
            for p, prompt_id in enumerate(ids):
                image = Image.new("RGB", (16, 16), (m * 40 % 256, p % 256, p // 256 * 30 % 256))
                add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(image))
    Renditions(media, RenditionSpec()).render_missing(db)  # battles draw only rendered images
    db.close()
    return db_path, media_dir


class Server:
    """The fake server in a process of its own (so it does not share the judge's interpreter)."""

    def __init__(self, latency: float):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tools.fake_openai", "--latency", str(latency)], stdout=subprocess.PIPE,
            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert self.process.stdout is not None  # stdout=PIPE
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise RuntimeError("the fake server did not start; run python -m tools.fake_openai to see why.")
        self.root = self.base_url.rsplit("/v1", 1)[0]

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.root}/stats") as response:
            return json.loads(response.read())

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.root}/reset", method="POST")).close()

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def judge_in_process(db_path: Path, media_dir: Path, config: EngineConfig, n: int, single_order: bool,
                     name: str) -> tuple[float, RunSummary]:
    db = connect(db_path, synchronous="NORMAL")
    try:
        started = time.perf_counter()
        summary = asyncio.run(run_pairwise(db, MediaStore(media_dir), config, Selection(suite=SUITE, limit=n),
                                           single_order=single_order, name=name, env={}, progress=False))
        return time.perf_counter() - started, summary
    finally:
        db.close()


def interrupted_run(folder: Path, server: Server, args, sig: int) -> dict:
    """Run the CLI, send ``sig`` when half the requests have arrived, run it again; count repeats."""
    db_path, media_dir = build_arena(folder, args.prompts, args.models)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARENA_DB": str(db_path), "ARENA_MEDIA_DIR": str(media_dir),
           "ARENA_JUDGE_BASE_URL": server.base_url, "ARENA_SQLITE_SYNCHRONOUS": "NORMAL"}
    command = [sys.executable, "-m", "judges", "pairwise", "--suite", SUITE, "--limit", str(args.n),
               "--concurrency", str(args.concurrency), "--no-progress"]
    if not args.both_orders:
        command.append("--single-order")
    requests = args.n * (2 if args.both_orders else 1)
    server.reset()
    first = subprocess.Popen(command, env=env, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while server.stats()["requests"] < requests // 2:
        if first.poll() is not None:
            raise RuntimeError(f"the judge run ended before half its requests: {first.communicate()[1][-2000:]}")
        time.sleep(0.02)
    first.send_signal(sig)
    first.communicate(timeout=120)
    at_stop = server.stats()["requests"]
    db = connect(db_path)
    stored = cache_usage(db)["requests"]  # answers kept by the stopped run
    db.close()
    second = subprocess.run(command, env=env, cwd=folder, capture_output=True, text=True, timeout=600)
    if second.returncode != 0:
        raise RuntimeError(f"the restarted judge run failed: {second.stderr[-2000:]}")
    stats = server.stats()
    db = connect(db_path)
    votes = vote_count(db)
    db.close()
    return {"before_stop": at_stop, "stored": stored, "in_flight": max(at_stop - stored, 0), "total": stats["requests"],
            "repeated": stats["repeated"], "votes": votes, "exit_code": first.returncode}


def interrupted_line(name: str, result: dict, concurrency: int) -> str:
    """One line per interrupted run, with its target: 0 repeats after SIGINT; after SIGKILL at most the requests
    that were in flight when the process died."""
    head = (f"{name} at {result['before_stop']} requests ({result['stored']} answers stored, {result['in_flight']} "
            f"in flight), then the same command again: {result['repeated']} requests received twice, "
            f"{result['total']} in all, {result['votes']} votes")
    if name.startswith("SIGINT"):
        verdict = "met" if result["repeated"] == 0 else "NOT met"
        return f"{head}; target: repeated requests after kill and restart: expected 0 ({verdict})"
    verdict = "as expected" if result["repeated"] <= result["in_flight"] else "MORE than expected"
    return (f"{head}; a crash loses its requests in flight, so expected at most {result['in_flight']} repeats "
            f"(the in-flight count; --concurrency {concurrency}) ({verdict})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.judges_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="pairwise judgments (default 1000)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per reply (default 0.3)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    parser.add_argument("--prompts", type=int, default=200, help="prompts in the bench database (default 200)")
    parser.add_argument("--models", type=int, default=6, help="models in the bench database (default 6)")
    parser.add_argument("--both-orders", action="store_true", help="ask both orders (2 requests per judgment)")
    parser.add_argument("--skip-kill", action="store_true", help="skip the interrupted-run part")
    args = parser.parse_args(argv)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"machine: {os.cpu_count()} CPUs, load average {load} (the judge, the server and anything else share them)")
    server = Server(args.latency)
    try:
        with tempfile.TemporaryDirectory(prefix="judges-bench-") as folder:
            tmp = Path(folder)
            (tmp / "run").mkdir()
            db_path, media_dir = build_arena(tmp / "run", args.prompts, args.models)
            config = EngineConfig(base_url=server.base_url, model="gpt-4o-mini", concurrency=args.concurrency,
                                  max_retries=3, retry_base_s=0.1)
            single = not args.both_orders
            wall, summary = judge_in_process(db_path, media_dir, config, args.n, single, "bench")
            sent = server.stats()["requests"]
            ideal = sent * args.latency / args.concurrency
            print(f"run 1: {summary.done} judgments ({summary.failed} failed), {sent} requests at concurrency "
                  f"{args.concurrency}, {args.latency * 1000:.0f} ms per reply")
            print(f"       wall {wall:.2f} s; ideal {sent} x {args.latency} s / {args.concurrency} = {ideal:.2f} s; "
                  f"ratio {wall / ideal:.2f} (target <= 1.30)")
            wall2, again = judge_in_process(db_path, media_dir, config, args.n, single, "bench-rerun")
            print(f"run 2 (same battles, another judge name): {again.requests_cached} of "
                  f"{again.requests_cached + again.requests_sent} requests answered by the cache, "
                  f"{server.stats()['requests'] - sent} sent to the server; wall {wall2:.2f} s")
            if not args.skip_kill:
                for name, sig in (("SIGINT (Ctrl-C)", signal.SIGINT), ("SIGKILL (crash)", signal.SIGKILL)):
                    (tmp / name[:6]).mkdir()
                    result = interrupted_run(tmp / name[:6], server, args, sig)
                    print(interrupted_line(name, result, args.concurrency), flush=True)
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
