"""``python -m tools.import_bench``: a million-battle FastChat log imported, then rated with ``fastchat-2023``.

It writes a FastChat ``clean_battle`` log of ``--battles`` battles (a JSON array, as FastChat publishes it: 20 models,
ties and both-bad, 80% anonymous, one record per battle with FastChat's fields), then runs, each as its own process on
a fresh database:

1. ``python -m arena import-votes LOG --format fastchat``: the seconds it takes and its peak resident memory
   (``ru_maxrss`` of the finished child: the whole process, Python and libraries included);
2. ``python -m arena leaderboard --protocol fastchat-2023 --anonymous-only --fresh``: the seconds it takes (100
   bootstrap rounds, as FastChat), and its peak memory.

It prints the figures beside the targets (import ≤ 60 s and ≤ 500 MB; leaderboard ≤ 30 s) and says whether each is
met. The log is written to ``--workdir`` (a temporary folder by default, removed afterwards). Timings depend on the
machine and on what else runs on it: say so when reporting them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"import_s": 60.0, "import_mb": 500.0, "leaderboard_s": 30.0}
WINNERS = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])


def write_log(path: Path, battles: int, *, models: int = 20, seed: int = 0, chunk: int = 50_000) -> int:
    """A FastChat battle log of ``battles`` records (module docstring), written a chunk at a time; its size in bytes."""
    rng = np.random.default_rng(seed)
    names = np.array([f"t2i-model-{i:02d}" for i in range(models)])
    strength = np.linspace(-1.5, 1.5, models)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for start in range(0, battles, chunk):
            n = min(chunk, battles - start)
            a = rng.integers(0, models, n)
            b = (a + rng.integers(1, models, n)) % models
            p_a = 1 / (1 + np.exp(-(strength[a] - strength[b])))
            draw = rng.random(n)
            outcome = np.where(draw < 0.15, 2, np.where(draw < 0.2, 3, np.where(rng.random(n) < p_a, 0, 1)))
            anony = rng.random(n) < 0.8
            users = rng.integers(0, 50_000, n)
            records = (
                json.dumps({"question_id": f"{start + k:08x}{users[k]:05d}", "model_a": names[a[k]],
                            "model_b": names[b[k]], "winner": WINNERS[outcome[k]], "judge": f"arena_user_{users[k]}",
                            "turn": 1, "anony": bool(anony[k]), "language": "English",
                            "tstamp": 1_700_000_000.0 + (start + k) * 2.5})
                for k in range(n))
            handle.write(("," if start else "") + ",".join("\n" + r for r in records))
        handle.write("\n]\n")
    return path.stat().st_size


def run(command: list[str], env: dict, workdir: Path) -> tuple[float, float, str]:
    """Seconds and peak resident MB (``ru_maxrss`` of this child alone, from ``os.wait4``) of ``command``, and its
    output."""
    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{err_path.read_text()[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, out_path.read_text()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.import_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1_000_000, help="battles in the log (default 1,000,000)")
    parser.add_argument("--workdir", help="folder for the log and the database (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="import-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        log = workdir / "clean_battle.json"
        started = time.perf_counter()
        size = write_log(log, args.battles)
        print(f"log: {args.battles:,} battles, {size / 1e6:.0f} MB, written in {time.perf_counter() - started:.1f} s")
        db = workdir / "arena.db"
        for leftover in (db, workdir / "arena.db-wal", workdir / "arena.db-shm"):
            leftover.unlink(missing_ok=True)
        env = {**os.environ, "ARENA_DB": str(db), "ARENA_MEDIA_DIR": str(workdir / "media"), "ARENA_DEMO": "false",
               "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONPATH": str(ROOT)}
        import_s, import_mb, out = run([sys.executable, "-m", "arena", "import-votes", str(log), "--format",
                                        "fastchat", "--quiet"], env, workdir)
        print(out.strip())
        board_s, board_mb, out = run([sys.executable, "-m", "arena", "leaderboard", "--protocol", "fastchat-2023",
                                      "--anonymous-only", "--fresh"], env, workdir)
        print("\n".join(out.strip().splitlines()[:3]))
        figures = {"import_s": import_s, "import_mb": import_mb, "leaderboard_s": board_s}
        print(f"\nimport-votes: {import_s:.1f} s (target ≤ {TARGETS['import_s']:.0f} s), peak memory "
              f"{import_mb:.0f} MB (target ≤ {TARGETS['import_mb']:.0f} MB)")
        print(f"leaderboard --protocol fastchat-2023: {board_s:.1f} s (target ≤ {TARGETS['leaderboard_s']:.0f} s), "
              f"peak memory {board_mb:.0f} MB")
        missed = [name for name, value in figures.items() if not value <= TARGETS[name]]
        print("targets met" if not missed else f"targets missed: {', '.join(missed)}")
        return 0 if not missed else 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
