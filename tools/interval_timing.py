"""``python -m tools.interval_timing``: what the leaderboard's 95% intervals cost, bootstrap against sandwich.

Two parts:

- ``study``: on the study-scale database of :mod:`tools.scale` (cached in ``.cache/scale/``; by default 1,000,000
  votes, 12 models), the leaderboard snapshot of the default filters (every panel, computed, rendered and stored,
  as ``tools.scale`` times it) with the arena protocol's bootstrap (today's board), with its sandwich intervals
  (``ARENA_INTERVALS=sandwich``) and with ``lmarena-2025``, each in a fresh process, taking turns ``--repeats`` times;
  the figure is the process's CPU time for the snapshot, the least of the runs (other work on a shared machine moves
  the wall time far more), with the wall time beside it;
  beside it, the human column's fit with its intervals alone (``RatingProtocol.rate``), in the same processes. The
  target of issue 44: the sandwich snapshot at most 0.5× the bootstrap one.
- ``models``: the fit with intervals alone on a simulated log of ``--votes`` votes with 12, 50 and 100 models
  (``--models``): the bootstrap refits all its rounds (a batched Newton, n³ per round and step), the sandwich solves
  once, so the gap grows with the models.

Each line prints its figure; the target line says met or NOT MET. The exit status is 0 whatever the figures (they are
measurements to read, not a check).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ratings.leaderboard import prior_ridge
from core.protocols import get_protocol
from ratings.votes import EncodedVotes
from tools.scale import Figure, measure
from tools.scale_fixture import ScaleSpec, cached_scale_database

VARIANTS = (  # label, environment, leaderboard options
    ("arena protocol, bootstrap (1000 rounds)", {"ARENA_INTERVALS": "bootstrap"}, {}),
    ("arena protocol, sandwich", {"ARENA_INTERVALS": "sandwich"}, {}),
    ("lmarena-2025 (sandwich)", {}, {"protocol": "lmarena-2025"}),
)
SNAPSHOT = """
from core.settings import load_settings
from arena.leaderboard import leaderboard_options, rating_protocol
from arena.leaderboard_service import compute_snapshot
from datamodel.connection import connect
from datamodel.vote_arrays import read_vote_arrays
import time
settings = load_settings()
db = connect(settings.db_path, migrate_schema=False)
options = leaderboard_options(settings, **{options!r})
started, cpu = time.perf_counter(), time.process_time()
compute_snapshot(db, options, settings.leaderboard_views)
snapshot, snapshot_cpu = time.perf_counter() - started, time.process_time() - cpu
arrays = read_vote_arrays(db)
human = arrays.take(arrays.human & ~arrays.excluded).encoded()
protocol = rating_protocol(options)
started = time.perf_counter()
protocol.rate(human, min_votes=options.min_votes)
result = {{'snapshot': snapshot, 'cpu': snapshot_cpu, 'fit': time.perf_counter() - started}}
"""


def study_figures(votes: int, repeats: int, cache_dir: str) -> list[Figure]:
    folder = cached_scale_database(ScaleSpec(votes=votes), cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-intervals-"))
    try:
        shutil.copy2(folder / "arena.db", work / "arena.db")
        env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(folder / "media"), "ARENA_DEMO": "false"}
        runs: dict[str, list[dict]] = {label: [] for label, _, _ in VARIANTS}
        for _ in range(repeats):  # the variants take turns, so a burst of load elsewhere falls on each alike
            for label, extra, options in VARIANTS:
                runs[label].append(measure(SNAPSHOT.format(options=options), {**env, **extra})[0])
        snapshots, figures = {}, []
        for label, _, _ in VARIANTS:
            times = [run["snapshot"] for run in runs[label]]
            snapshots[label] = min(run["cpu"] for run in runs[label])
            figures += [Figure(f"snapshot, default filters, {label}: CPU time, least of {repeats}", snapshots[label],
                               "s"),
                        Figure(f"  wall time, fastest of {repeats} (median {statistics.median(times):.2f} s)",
                               min(times), "s"),
                        Figure("  of which the human column's fit and intervals", min(
                            run["fit"] for run in runs[label]), "s")]
        bootstrap, sandwich = snapshots[VARIANTS[0][0]], snapshots[VARIANTS[1][0]]
        figures.append(Figure("sandwich snapshot ÷ bootstrap snapshot, CPU time", sandwich / bootstrap, "×", 0.5))
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


def simulated_log(votes: int, n_models: int, seed: int = 0) -> EncodedVotes:
    rng = np.random.default_rng(seed)
    truth = np.linspace(1300.0, 700.0, n_models)
    a = rng.integers(0, n_models, votes)
    b = (a + rng.integers(1, n_models, votes)) % n_models
    p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    u = rng.random(votes)
    outcome = np.where(u < 0.15, 2, np.where(u < 0.2, 3, np.where(rng.random(votes) < p, 0, 1)))
    return EncodedVotes(tuple(f"m{k:03d}" for k in range(n_models)), a, b, outcome)


def model_figures(votes: int, models: list[int], repeats: int) -> list[Figure]:
    figures = []
    for n in models:
        log = simulated_log(votes, n)
        for label, protocol in (("bootstrap (1000 rounds)", get_protocol("arena", ridge=prior_ridge(400.0))),
                                ("sandwich", get_protocol("arena", ridge=prior_ridge(400.0), intervals="sandwich"))):
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                protocol.rate(log)
                times.append(time.perf_counter() - started)
            figures.append(Figure(f"{votes:,} votes, {n} models: fit with {label} intervals", statistics.median(times),
                                  "s"))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.interval_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", default="study,models", help="study, models or both (default)")
    parser.add_argument("--votes", type=int, default=1_000_000, help="votes (default 1000000)")
    parser.add_argument("--models", default="12,50,100", help="models of the simulated logs (default 12,50,100)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="runs per figure (default 5): the study's fastest, the simulated logs' median")
    parser.add_argument("--cache-dir", default=".cache", help="where the study database is built once")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "study" in parts:
        print(f"study database, {args.votes:,} votes (tools.scale_fixture), each snapshot in a fresh process:")
        for figure in study_figures(args.votes, args.repeats, args.cache_dir):
            print(figure.line(), flush=True)
    if "models" in parts:
        print("simulated logs, the fit with its intervals alone:")
        for figure in model_figures(args.votes, [int(n) for n in args.models.split(",")], args.repeats):
            print(figure.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
