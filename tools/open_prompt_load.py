"""``python -m tools.open_prompt_load``: simulated visitors typing open prompts, through the page's own HTTP API.

It starts the app (``python -m arena serve`` in a child process) on a fresh database with open prompts on and two
tiny CPU stand-ins (``--models``, default the demo's painter and its tiny diffusers pipeline), served by the embedded
workers (``--serving embedded``) or by Ray Serve (``--serving ray``: a local Ray instance started here on 127.0.0.1
with ``--ray-cpus`` CPUs, the two models deployed on it, stopped at the end). Then ``--visitors`` visitors, for
``--duration`` seconds: sign in, then repeat: type a prompt of their own (a unique text), wait for the battle, fetch
its two images, vote. It prints:

- **order**: every answer must show the prompt its visitor just sent, with both images of one battle of that prompt
  (checked against the database after the run); any other answer is out of order;
- **votes**: every vote the server acknowledged must be in the database, under its visitor (:func:`tools.load.
  check_receipts`);
- **serving overhead** per generation: the time from the app's submitting a generation to its answer, less the model's
  own seconds, its loading and the time it waited behind other generations (:attr:`generators.serving.Served.
  overhead`, recorded with each image), p50 and p95; beside it, measured in the same run, the **bare call**: the same
  pipeline called in this process (``generators.live.LiveModel``), p50 and p95, and the same model's seconds inside
  the serving layer;
- the overhead's **parts** (:attr:`generators.serving.Served.overhead_parts`): the request's way to the model, the
  PNG's encoding, the answer's way back, the app's event loop taking it up;
- a **bare hand-over** between two processes (:func:`handover_floor`: a pipe into an idle event loop, in a process
  of its own beside the visitors), the least any serving path pays on the machine at that moment;
- the **CPU** of every process of the run (the app, its workers, Ray's processes) per second, and the machine's load
  average before and after: on a shared machine every figure depends on what else runs.

Only ever talks to 127.0.0.1; stops by itself. Exit status 1 when an answer is out of order or a vote is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import random
import re
import shutil
import statistics
import struct
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from arena.web.render import escape_markdown
from tools.load import (
    GradioSession,
    LoadError,
    LoadReport,
    check_receipts,
    fetch_endpoints,
    shown_token,
    start_server,
    stop_server,
    stored_votes,
)
from tools.ports import free_port

DEFAULT_MODELS = "demo-painter,demo-tiny-unet"
WORDS = ("a lighthouse", "un chat roux", "ein alter Baum", "一只熊猫", "a red bicycle", "una casa azul", "雪の山",
         "a bowl of soup", "a paper boat", "город ночью")


@dataclass
class Answers:
    """What the visitors saw: each answer's (visitor, prompt sent, media token) and what went wrong."""

    shown: list[tuple[str, str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # answers without a battle (the message shown)
    prompt_seconds: list[float] = field(default_factory=list)  # Generate pressed → both images loaded


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


async def _visitor(index: int, base: str, endpoints: dict, deadline: float, answers: Answers, report: LoadReport,
                   rng: random.Random) -> None:
    async with httpx.AsyncClient(timeout=300) as client:
        session = GradioSession(client, base, endpoints)
        name = f"visitor-{index:02d}"
        try:
            signed = await session.call("sign_in", [name, "visitor-token", None, "All suites", False])
            if signed and signed[0]:  # the form's message: refused (the answer says why)
                raise LoadError(str(signed[0]))
        except (LoadError, httpx.HTTPError) as error:
            report.errors.append(f"{name} sign-in: {error}")
            return
        sent = 0
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(0.2, 1.0))  # typing
            sent += 1
            prompt = f"{rng.choice(WORDS)} · {name} · {sent}"
            started = time.monotonic()
            try:
                shown = await session.call("open_prompt", [None, prompt])
            except (LoadError, httpx.HTTPError, OSError) as error:
                report.errors.append(f"{name} open prompt: {error}")
                continue
            if not shown or not isinstance(shown[5], str) or not shown[5]:
                answers.refused.append(str(shown[-1] if shown else "no answer"))
                continue
            try:
                token = shown_token(shown[2:4])
                await session.images(shown[2:4])
            except (LoadError, httpx.HTTPError, OSError) as error:
                report.errors.append(f"{name} images: {error}")
                continue
            answers.prompt_seconds.append(time.monotonic() - started)
            written = escape_markdown(prompt) in str(shown[1])  # the prompt panel shows it literally (escaped)
            answers.shown.append((name, prompt if written else f"NOT SHOWN: {prompt}", token))
            outcome = rng.choice(("vote_a", "vote_b", "vote_tie", "vote_both_bad"))
            try:
                voted = await session.call(outcome, [None, "All suites", False, token])
            except (LoadError, httpx.HTTPError, OSError) as error:
                report.errors.append(f"{name} vote: {error}")
                report.unanswered_votes += 1
                continue
            receipt = re.search(r'data-vote-id=\\"(\d+)\\"', json.dumps(voted))
            if receipt is None:
                report.errors.append(f"{name} vote: no receipt")
                continue
            report.acknowledged.append(name)
            report.vote_ids.append(int(receipt.group(1)))


async def run_visitors(base: str, visitors: int, duration: float, seed: int = 0) -> tuple[Answers, LoadReport]:
    async with httpx.AsyncClient(timeout=60) as client:
        endpoints = await fetch_endpoints(client, base)
    answers, report = Answers(), LoadReport(annotators=visitors, seconds=duration)
    deadline = time.monotonic() + duration
    rng = random.Random(seed)
    await asyncio.gather(*(_visitor(i, base, endpoints, deadline, answers, report, random.Random(rng.random()))
                           for i in range(visitors)))
    return answers, report


def out_of_order(database: Path, answers: Answers) -> list[str]:
    """Answers whose battle is not of the prompt its visitor sent, or whose prompt was not shown."""
    from datamodel.connection import connect
    from datamodel.open_prompts import battle_prompt

    db = connect(database, migrate_schema=False)
    try:
        wrong = []
        for visitor, prompt, token in answers.shown:
            served = battle_prompt(db, token)
            if prompt.startswith("NOT SHOWN") or served != (prompt, visitor):
                wrong.append(f"{visitor}: sent {prompt!r}, shown {served!r}")
        return wrong
    finally:
        db.close()


def served_timings(database: Path) -> dict[str, list]:
    """{model: [(seconds, overhead_s, queued_s, load_s, {part: seconds})]} of the images made, from their recorded
    parameters (the parts of the overhead: :attr:`generators.serving.Served.overhead_parts`)."""
    from datamodel.connection import connect
    from datamodel.open_prompts import made_image_params

    db = connect(database, migrate_schema=False)
    try:
        rows = made_image_params(db)
    finally:
        db.close()
    timings: dict[str, list] = {}
    for model, seconds, params in rows:
        timings.setdefault(model, []).append((seconds, params["overhead_s"], params["queued_s"], params["load_s"],
                                              params.get("overhead_parts_s", {})))
    return timings


def bare_calls(models: list[str], cache_dir: Path, calls: int) -> dict[str, list[float]]:
    """Seconds of ``calls`` bare pipeline calls of each model in this process (loaded once, first call dropped)."""
    from generators.demo import demo_models
    from generators.live import LiveModel
    from generators.serving import cpu_threads

    cpu_threads()  # as the workers run: one thread each
    specs = demo_models()
    seconds = {}
    for name in models:
        model = LiveModel(specs[name], registry=specs, cache_dir=cache_dir)
        model.generate("a warm-up", 0)
        seconds[name] = [model.generate(f"{WORDS[i % len(WORDS)]} {i}", i).seconds for i in range(calls)]
    return seconds


def handover_floor(seconds: float, every_s: float = 0.02) -> list[float]:
    """Milliseconds from another process writing the time into a pipe to this process's idle event loop reading it,
    every ``every_s`` for ``seconds``: the least a hand-over between two processes costs on this machine at the time
    (the OS waking a sleeping process on shared cores), to set beside the serving overhead, which has one or more."""
    context = multiprocessing.get_context("spawn")
    reading, writing = context.Pipe(duplex=False)
    writer = context.Process(target=_write_times, args=(writing, seconds, every_s), daemon=True)
    writer.start()
    writing.close()
    delays: list[float] = []

    class Reader(asyncio.Protocol):
        def __init__(self):
            self.buffer, self.done = bytearray(), asyncio.get_running_loop().create_future()

        def data_received(self, data: bytes) -> None:
            now = time.time()
            self.buffer += data
            while len(self.buffer) >= 8:
                delays.append((now - struct.unpack_from("!d", self.buffer)[0]) * 1000)
                del self.buffer[:8]

        def eof_received(self) -> None:
            self.done.set_result(None)

    async def read() -> None:
        pipe = os.fdopen(os.dup(reading.fileno()), "rb", buffering=0)
        transport, reader = await asyncio.get_running_loop().connect_read_pipe(Reader, pipe)
        await reader.done
        transport.close()

    asyncio.run(read())
    writer.join()
    return delays


def _write_times(pipe, seconds: float, every_s: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(every_s)
        os.write(pipe.fileno(), struct.pack("!d", time.time()))


def process_cpu() -> dict[int, tuple[str, float]]:
    """{pid: (what it is, CPU seconds so far)} of this process's descendants: the app, the processes it spawned (its
    generation worker, its leaderboard worker) and, where this process started Ray, Ray's (psutil, installed with the
    gen extra the tool needs)."""
    import psutil

    me = psutil.Process()
    times = me.cpu_times()
    found = {me.pid: ("this tool (the visitors; Ray's driver with --serving ray)", times.user + times.system)}
    for child in me.children(recursive=True):
        try:
            cmdline, times = child.cmdline(), child.cpu_times()
        except psutil.Error:  # ended meanwhile
            continue
        found[child.pid] = (_what(cmdline), times.user + times.system)
    return found


def _what(cmdline: list[str]) -> str:
    text = " ".join(cmdline)
    if "-m arena serve" in text:
        return "the app"
    if "multiprocessing" in text:
        return "the app's worker processes (generation, leaderboard)"
    if text.startswith("ray::ServeReplica"):
        return "Ray Serve replicas (the models)"
    if text.startswith("ray::"):
        return "Ray: " + text.split()[0].removeprefix("ray::").split(":")[0].split(".")[0]  # its class, not its task
    script = next((Path(part).name for part in cmdline if part.endswith(".py")),
                  Path(cmdline[0]).name if cmdline else "?")
    return f"Ray: {script}" if "ray" in text else script


def cpu_shares(before: dict, after: dict, seconds: float) -> dict[str, float]:
    """CPU seconds per second of the run by kind of process, from two :func:`process_cpu` readings."""
    shares: dict[str, float] = {}
    for pid, (what, cpu) in after.items():
        shares[what] = shares.get(what, 0.0) + (cpu - before.get(pid, (what, 0.0))[1]) / seconds
    return dict(sorted(shares.items(), key=lambda item: -item[1]))


class LocalRay:
    """A Ray instance on 127.0.0.1 owned by this process (``ray.init``), stopped by :meth:`stop`."""

    def __init__(self, cpus: int, code_root: Path):
        # one machine, nothing but the loopback: Ray otherwise binds the machine's network address even when told
        # 127.0.0.1 (read when ray is imported; its workers and the app inherit it)
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        import ray

        self.temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code_root), os.environ.get("PYTHONPATH")]))
        ray.init(num_cpus=cpus, num_gpus=0, include_dashboard=False, _node_ip_address="127.0.0.1",
                 _temp_dir=str(self.temp), namespace="serve", logging_level=logging.WARNING, log_to_driver=False,
                 configure_logging=False)
        self.address = ray.get_runtime_context().gcs_address

    def stop(self) -> None:
        import ray
        from ray import serve

        try:
            serve.shutdown()
        finally:
            ray.shutdown()
            shutil.rmtree(self.temp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.open_prompt_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--serving", choices=["embedded", "ray"], default="embedded")
    parser.add_argument("--visitors", type=int, default=16)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of typing and voting (default 60)")
    parser.add_argument("--models", default=DEFAULT_MODELS, help=f"two or more demo models (default {DEFAULT_MODELS})")
    parser.add_argument("--bare-calls", type=int, default=30, help="bare pipeline calls per model (default 30)")
    parser.add_argument("--ray-cpus", type=int, default=4, help="CPUs of the local Ray instance (default 4)")
    parser.add_argument("--cache-dir", type=Path, default=Path(".cache"), help="where the tiny pipelines are built")
    parser.add_argument("--timeout", type=float, default=120.0, help="ARENA_OPEN_PROMPT_TIMEOUT_S of the app")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    models = [name.strip() for name in args.models.split(",") if name.strip()]
    cache_dir = args.cache_dir.resolve()
    folder = Path(tempfile.mkdtemp(prefix="open-prompt-load-"))
    database = folder / "arena.db"
    ray_cluster = None
    port = free_port()
    env = {"ARENA_DB": str(database), "ARENA_MEDIA_DIR": str(folder / "media"), "ARENA_CACHE_DIR": str(cache_dir),
           "ARENA_DEMO": "false", "ARENA_OPEN_PROMPTS": "on", "ARENA_OPEN_PROMPT_MODELS": ",".join(models),
           "ARENA_OPEN_PROMPT_TIMEOUT_S": str(args.timeout), "ARENA_RATE_LIMIT_OPEN_PROMPTS": "0",
           "ARENA_RATE_LIMIT_ANNOTATOR": "0", "ARENA_RATE_LIMIT_CLIENT": "0", "ARENA_RATE_LIMIT_SKIPS": "0",
           "ARENA_RATE_LIMIT_PAGES": "0", "ARENA_LOGIN_MAX_FAILURES": "0", "ARENA_LOGIN_MAX_FAILURES_OVERALL": "0",
           "ARENA_OPEN_PROMPT_CONCURRENCY": str(max(16, args.visitors)),
           "ARENA_SQLITE_SYNCHRONOUS": "NORMAL"}
    process, load_before, cpu, handover = None, (float('nan'),) * 3, {}, []
    try:
        bare = bare_calls(models, cache_dir, args.bare_calls)  # the same run, before the visitors come
        if args.serving == "ray":
            from generators.demo import demo_models
            from generators.ray_serving import deploy

            ray_cluster = LocalRay(args.ray_cpus, Path(__file__).resolve().parents[1])
            specs = demo_models()
            started = time.monotonic()
            deploy({name: specs[name] for name in models}, ray_cluster.address, registry=specs, cache_dir=cache_dir)
            print(f"Ray: local instance at {ray_cluster.address} ({args.ray_cpus} CPUs), {len(models)} deployments "
                  f"running after {time.monotonic() - started:.1f} s")
            env["ARENA_RAY_ADDRESS"] = ray_cluster.address
        process = start_server(env, port, folder / "server.log", timeout=300)
        base = f"http://127.0.0.1:{port}/"
        started, load_before, cpu_before = time.monotonic(), os.getloadavg(), process_cpu()
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as beside:
            floor = beside.submit(handover_floor, args.duration)  # in a process of its own, beside the visitors
            answers, report = asyncio.run(run_visitors(base, args.visitors, args.duration))
            report.seconds = time.monotonic() - started
            cpu = cpu_shares(cpu_before, process_cpu(), report.seconds)
            handover = floor.result()
    finally:
        if process is not None:
            stop_server(process)
        if ray_cluster is not None:
            ray_cluster.stop()
    wrong = out_of_order(database, answers)
    lost = check_receipts(report, stored_votes(database))
    timings = served_timings(database)
    overheads = [row[1] * 1000 for rows in timings.values() for row in rows]
    parts = {part: [row[4][part] * 1000 for rows in timings.values() for row in rows if part in row[4]]
             for part in ("request", "encode", "answer", "loop")}
    figures = {
        "serving": args.serving, "visitors": args.visitors, "seconds": round(report.seconds, 1),
        "battles": len(answers.shown), "refused": len(answers.refused), "votes": len(report.vote_ids),
        "errors": len(report.errors), "out_of_order": len(wrong), "votes_lost": len(lost),
        "prompt_to_images_s": {"p50": percentile(answers.prompt_seconds, 50),
                               "p95": percentile(answers.prompt_seconds, 95)},
        "overhead_ms": {"p50": percentile(overheads, 50), "p95": percentile(overheads, 95), "n": len(overheads)},
        "overhead_parts_ms": {part: {"p50": percentile(values, 50), "p95": percentile(values, 95)}
                              for part, values in parts.items()},
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "cpu_per_second": cpu,
        "handover_floor_ms": {"p50": percentile(handover, 50), "p95": percentile(handover, 95), "n": len(handover)},
        "models": {name: {"bare_ms": {"p50": percentile(bare[name], 50) * 1000,
                                      "p95": percentile(bare[name], 95) * 1000},
                          "served_model_ms": {"p50": percentile([row[0] for row in timings.get(name, [])], 50) * 1000,
                                              "p95": percentile([row[0] for row in timings.get(name, [])], 95) * 1000},
                          "queued_ms_mean": statistics.fmean([row[2] for row in timings[name]]) * 1000
                          if timings.get(name) else float("nan")} for name in models},
    }
    print(f"{args.serving}: {args.visitors} visitors, {figures['seconds']} s: {figures['battles']} battles shown, "
          f"{figures['votes']} votes acknowledged, {figures['refused']} prompts answered without a battle, "
          f"{figures['errors']} errors")
    print(f"order: {len(wrong)} answers out of order; votes: {len(lost)} problems with acknowledged votes")
    print(f"prompt → both images loaded: p50 {figures['prompt_to_images_s']['p50']:.2f} s, "
          f"p95 {figures['prompt_to_images_s']['p95']:.2f} s")
    print(f"serving overhead per generation: p50 {figures['overhead_ms']['p50']:.1f} ms, "
          f"p95 {figures['overhead_ms']['p95']:.1f} ms over {len(overheads)} generations")
    print("  its parts, p50 / p95 ms: " + "; ".join(
        f"{part} {row['p50']:.1f} / {row['p95']:.1f}" for part, row in figures["overhead_parts_ms"].items()))
    print(f"a bare hand-over between two processes (a pipe into an idle event loop), beside the visitors: p50 "
          f"{figures['handover_floor_ms']['p50']:.1f} ms, p95 {figures['handover_floor_ms']['p95']:.1f} ms")
    print("CPU seconds per second of the run (the machine has " + str(os.cpu_count()) + " cores): " + "; ".join(
        f"{what} {share:.2f}" for what, share in cpu.items() if share >= 0.005))
    print("machine load average (1, 5, 15 min) before the visitors: " + ", ".join(
        f"{x:.1f}" for x in figures["load_average"]["before"]) + "; after: " + ", ".join(
        f"{x:.1f}" for x in figures["load_average"]["after"]))
    for name, row in figures["models"].items():
        print(f"  {name}: bare call p50 {row['bare_ms']['p50']:.0f} ms, p95 {row['bare_ms']['p95']:.0f} ms; the "
              f"same model in the serving layer p50 {row['served_model_ms']['p50']:.0f} ms, p95 "
              f"{row['served_model_ms']['p95']:.0f} ms; waited behind other generations {row['queued_ms_mean']:.0f} ms "
              "on average")
    for line in (wrong + lost + report.errors + answers.refused)[:10]:
        print(f"  ! {line}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    shutil.rmtree(folder, ignore_errors=True)
    return 1 if wrong or lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
