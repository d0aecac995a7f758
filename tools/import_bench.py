"""``python -m tools.import_bench``: a million-battle FastChat log imported, then rated with ``fastchat-2023``; or
(``--format pick-a-pic``) a Pick-a-Pic-sized parquet file of a million pairs imported without its images.

It writes a FastChat ``clean_battle`` log of ``--battles`` battles (a JSON array, as FastChat publishes it: 20 models,
ties and both-bad, 80% anonymous, one record per battle with FastChat's fields), or a parquet file in Pick-a-Pic v2's
schema (caption, jpg_0, jpg_1, model_0, model_1, label_0, label_1, user_id, created_at, ranking_id, has_label,
are_different; row groups of 50,000 pairs; 60,000 captions, about 16 pairs each as in the dataset; 15% of the pairs
two images of one model; each jpg cell a short stand-in, since ``--no-images`` never decodes them),
then runs, each as its own process on a fresh database:

1. ``python -m arena import-votes LOG --format fastchat`` (``--format pick-a-pic --no-images``): the seconds it takes
   and its peak resident memory (``ru_maxrss`` of the finished child: the whole process, Python and libraries
   included);
2. ``python -m arena leaderboard --protocol fastchat-2023 --anonymous-only --fresh`` (Pick-a-Pic: the arena's own
   protocol over every vote, ``--source pick-a-pic --fresh``): the seconds it takes, and its peak memory.

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


def write_pick_a_pic(path: Path, pairs: int, *, models: int = 12, seed: int = 0, group: int = 50_000) -> int:
    """A parquet file in Pick-a-Pic v2's schema with ``pairs`` rows (module docstring); its size in bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = np.array([f"t2i-model-{i:02d}" for i in range(models)])
    strength = np.linspace(-1.5, 1.5, models)
    stand_in = b"\xff\xd8" + b"\x00" * 62  # 64 bytes where the JPEG would be: never decoded with --no-images
    start = np.datetime64("2023-04-01T00:00:00", "ns")
    with pq.ParquetWriter(path, pa.schema([
            ("caption", pa.string()), ("jpg_0", pa.binary()), ("jpg_1", pa.binary()), ("model_0", pa.string()),
            ("model_1", pa.string()), ("label_0", pa.float64()), ("label_1", pa.float64()), ("user_id", pa.int64()),
            ("created_at", pa.timestamp("ns")), ("ranking_id", pa.int64()), ("has_label", pa.bool_()),
            ("are_different", pa.bool_())])) as writer:
        for first in range(0, pairs, group):
            n = min(group, pairs - first)
            a = rng.integers(0, models, n)
            b = np.where(rng.random(n) < 0.15, a, (a + rng.integers(1, models, n)) % models)  # some of one model
            p_a = 1 / (1 + np.exp(-(strength[a] - strength[b])))
            tie = rng.random(n) < 0.1
            label_0 = np.where(tie, 0.5, (rng.random(n) < p_a).astype(float))
            prompt = rng.integers(0, 60_000, n)  # Pick-a-Pic v2: about 16 pairs per caption
            writer.write_table(pa.table({
                "caption": [f"prompt number {k} of the study" for k in prompt.tolist()],
                "jpg_0": [stand_in] * n, "jpg_1": [stand_in] * n,
                "model_0": names[a], "model_1": names[b], "label_0": label_0, "label_1": 1.0 - label_0,
                "user_id": rng.integers(0, 100_000, n), "created_at": start + np.arange(first, first + n) * 10**9,
                "ranking_id": np.arange(first, first + n) + 1_000_000, "has_label": rng.random(n) < 0.98,
                "are_different": rng.random(n) < 0.995}))
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
    parser.add_argument("--format", choices=("fastchat", "pick-a-pic"), default="fastchat",
                        help="the file to import: a FastChat log (default) or a Pick-a-Pic v2 parquet file of "
                             "--battles pairs, imported without its images")
    parser.add_argument("--workdir", help="folder for the log and the database (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="import-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        pick = args.format == "pick-a-pic"
        log = workdir / ("pickapic_v2.parquet" if pick else "clean_battle.json")
        started = time.perf_counter()
        size = write_pick_a_pic(log, args.battles) if pick else write_log(log, args.battles)
        print(f"{'file' if pick else 'log'}: {args.battles:,} {'pairs' if pick else 'battles'}, {size / 1e6:.0f} MB, "
              f"written in {time.perf_counter() - started:.1f} s")
        db = workdir / "arena.db"
        for leftover in (db, workdir / "arena.db-wal", workdir / "arena.db-shm"):
            leftover.unlink(missing_ok=True)
        env = {**os.environ, "ARENA_DB": str(db), "ARENA_MEDIA_DIR": str(workdir / "media"), "ARENA_DEMO": "false",
               "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONPATH": str(ROOT)}
        import_s, import_mb, out = run([sys.executable, "-m", "arena", "import-votes", str(log), "--format",
                                        args.format, "--quiet", *(["--no-images"] if pick else [])], env, workdir)
        print(out.strip())
        board = (["--source", "pick-a-pic"] if pick else ["--protocol", "fastchat-2023", "--anonymous-only"])
        board_s, board_mb, out = run([sys.executable, "-m", "arena", "leaderboard", *board, "--fresh"], env,
                                     workdir)
        print("\n".join(out.strip().splitlines()[:3]))
        figures = {"import_s": import_s, "import_mb": import_mb, "leaderboard_s": board_s}
        print(f"\nimport-votes: {import_s:.1f} s (target ≤ {TARGETS['import_s']:.0f} s), peak memory "
              f"{import_mb:.0f} MB (target ≤ {TARGETS['import_mb']:.0f} MB)")
        print(f"leaderboard {' '.join(board)}: {board_s:.1f} s (target ≤ {TARGETS['leaderboard_s']:.0f} s), "
              f"peak memory {board_mb:.0f} MB")
        missed = [name for name, value in figures.items() if not value <= TARGETS[name]]
        print("targets met" if not missed else f"targets missed: {', '.join(missed)}")
        return 0 if not missed else 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
