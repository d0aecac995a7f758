"""``python -m tools.interval_timing``: what the leaderboard snapshot and its 95% intervals cost, against the board
before issue 44 (bootstrap intervals, commit 8249c45) and bootstrap against sandwich.

Two parts:

- ``study``: on the study-scale database of :mod:`tools.scale` (cached in ``.cache/scale/``; by default 1,000,000
  votes, 10,000 annotators, 12 models), the leaderboard of the default filters computed as the server's worker
  computes it (every panel, rendered; ``arena.leaderboard.service``), each run a fresh worker process: its *first
  snapshot* (nothing kept yet, the imports included), then, after ``--new-votes`` votes from 50 annotators cast
  through the arena's own path (served, voted 6 s later, the quality rules on), its *refresh* (what the worker does
  every ``ARENA_LEADERBOARD_REFRESH_S`` while people vote). A checkout whose worker stages a large board (the board
  first, the inter-annotator statistics next: :mod:`arena.leaderboard.service`) is timed as the server runs it: its
  first snapshot is the board, and *the complete page* adds the completion the service asks for at once (for a
  checkout that does not stage, the complete page is its first snapshot). Measured for the arena protocol with its
  bootstrap, with its sandwich intervals (``ARENA_INTERVALS=sandwich``) and for ``lmarena-2025``, and with
  ``--baseline DIR`` for the checkout in DIR too (the board before issue 44: ``git worktree add --detach DIR
  8249c45``, run with the same Python), the variants taking turns ``--repeats`` times on one copy of the database;
  the figure is the process's CPU time, the median of the runs with the least beside it (other work on a shared
  machine moves the wall time far more), and the wall time; beside them, the human column's fit with its intervals alone
  (``RatingProtocol.rate``). The target of issue 44: the sandwich snapshot at most 0.5× the snapshot before it (the
  ratio of the median CPU times, and beside it the median of each turn's own ratio), printed for the first snapshot
  and for the refresh; the complete page's ratio beside them, without a target.
- ``models``: the fit with intervals alone on a simulated log of ``--votes`` votes with 12, 50 and 100 models
  (``--models``): the bootstrap refits all its rounds (a batched Newton, n³ per round and step), the sandwich solves
  once, so the gap grows with the models.

Each line prints its figure; a target line says met or NOT MET. The exit status is 0 whatever the figures (they are
measurements to read, not a check).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from core.protocols import get_protocol
from ratings.leaderboard import prior_ridge
from ratings.votes import EncodedVotes
from tools.scale import ROOT, Figure, measure
from tools.scale_fixture import ScaleSpec, cached_scale_database

VARIANTS: tuple[tuple[str, dict[str, str], dict[str, str]], ...] = (  # label, environment, leaderboard options
    ("arena protocol, bootstrap (1000 rounds)", {"ARENA_INTERVALS": "bootstrap"}, {}),
    ("arena protocol, sandwich", {"ARENA_INTERVALS": "sandwich"}, {}),
    ("lmarena-2025 (sandwich)", {}, {"protocol": "lmarena-2025"}),
)
SANDWICH = VARIANTS[1][0]
PARTS = ("first", "complete", "refresh")
TARGET = 0.5  # issue 44: the sandwich snapshot at most half the snapshot before it
VOTERS = 50  # annotators casting the new votes between the two snapshots
# one run: the worker's job as the server hands it over (_compute_in_worker, in every checkout since the snapshots),
# a fresh worker's first snapshot (and, staged, its completion), new votes through the arena's own path, the refresh;
# then the human fit alone
SNAPSHOT = """
import inspect, random, time
try:
    from core.settings import load_settings
    from arena.leaderboard.compute import leaderboard_options
    from arena.leaderboard.service import _compute_in_worker
except ImportError:  # a checkout before core/ and the arena/leaderboard/ package (8249c45, the board before issue 44)
    from datamodel.settings import load_settings
    from arena.leaderboard import leaderboard_options
    from arena.leaderboard_service import _compute_in_worker
from datamodel.annotators import annotator_names
from datamodel.connection import connect
from datamodel.snapshots import data_version
from datamodel.votes import record_vote
from sampling.draws import serve_battle
settings = load_settings()
options = leaderboard_options(settings, **{options!r})
staging = 'staged' in inspect.signature(_compute_in_worker).parameters  # a checkout since the staged board
def snapshot(**staged):
    started, cpu = time.perf_counter(), time.process_time()
    shown = _compute_in_worker(str(settings.db_path), options, **staged)
    return time.process_time() - cpu, time.perf_counter() - started, bool(shown.view.get('pending'))
first, first_wall, staged = snapshot(**({{'staged': True}} if staging else {{}}))
result = dict(first=first, first_wall=first_wall, complete=first, complete_wall=first_wall, staged=staged)
if staged:  # what the service asks next: the rest of the page, from the arrays the worker kept
    rest, rest_wall, _ = snapshot()
    result.update(complete=first + rest, complete_wall=first_wall + rest_wall)
db = connect(settings.db_path, migrate_schema=False)
votes_counter = lambda: data_version(db)[-1]  # the counters by name: catalog, metrics, votes
before, rng, now = votes_counter(), random.Random({seed}), time.time()
people = rng.sample(sorted(annotator_names(db)), {voters})
for k in range({new_votes}):
    battle = serve_battle(db, rng, session_id=f'bench-{{k}}', annotator_id=people[k % len(people)], now=now + 8.0 * k)
    record_vote(db, battle.id, rng.choice(('A', 'B', 'A', 'B', 'tie')), session_id=f'bench-{{k}}',
                now=now + 8.0 * k + 6.0)
result['changes'] = votes_counter() - before
result.update(zip(('refresh', 'refresh_wall'), snapshot()[:2]))
{fit}
"""
FIT = """
from arena.leaderboard.compute import rating_protocol
from datamodel.vote_arrays import read_vote_arrays
arrays = read_vote_arrays(db)
human = arrays.take(arrays.human & ~arrays.excluded).encoded()
protocol = rating_protocol(options)
started = time.perf_counter()
protocol.rate(human, min_votes=options.min_votes)
result['fit'] = time.perf_counter() - started
"""


def baseline_label(root: Path) -> str:
    """"the checkout in DIR (commit abc1234)": which board the baseline is."""
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    commit = done.stdout.strip() or "not a git checkout"
    return f"the checkout in {root} ({commit}), its default board"


def study_figures(spec: ScaleSpec, repeats: int, cache_dir: str, new_votes: int,
                  baseline: Path | None = None) -> list[Figure]:
    folder = cached_scale_database(spec, cache_dir)
    work = Path(tempfile.mkdtemp(prefix="arena-intervals-"))
    measured = [(label, extra, options, ROOT, FIT) for label, extra, options in VARIANTS]
    if baseline is not None:
        measured.insert(0, (baseline_label(baseline), {}, {}, baseline, ""))
    try:
        shutil.copy2(folder / "arena.db", work / "arena.db")
        env = {"ARENA_DB": str(work / "arena.db"), "ARENA_MEDIA_DIR": str(folder / "media"), "ARENA_DEMO": "false"}
        runs: dict[str, list[dict]] = {label: [] for label, *_ in measured}
        for turn in range(repeats):  # the variants take turns, so a burst of load elsewhere falls on each alike
            for index, (label, extra, options, root, fit) in enumerate(measured):
                code = SNAPSHOT.format(options=options, seed=turn * len(measured) + index,
                                       voters=min(VOTERS, spec.annotators), new_votes=new_votes, fit=fit)
                result, peak = measure(code, {**env, **extra}, root=root)
                runs[label].append({**result, "peak_mb": peak})
        figures, median = [], {}
        for label, *_ in measured:
            done = runs[label]
            median[label] = {part: statistics.median(run[part] for run in done) for part in PARTS}
            staged = " (staged: the board, its inter-annotator statistics next)" if done[0].get("staged") else ""
            for part, title in (("first", f"first snapshot of a fresh worker{staged}"),
                                ("complete", "the complete page (a staged first snapshot and its completion)"),
                                ("refresh", f"refresh after {new_votes} new votes")):
                walls = [run[f"{part}_wall"] for run in done]
                figures += [Figure(f"{label}: {title}, CPU time, median of {repeats} (least "
                                   f"{min(run[part] for run in done):.2f} s)", median[label][part], "s"),
                            Figure(f"  wall time, median of {repeats} (fastest {min(walls):.2f} s)",
                                   statistics.median(walls), "s")]
            figures.append(Figure(f"  the votes counter's rise over the {new_votes} votes, most of {repeats} (above "
                                  f"{new_votes}: the quality rules switched earlier votes' flags)",
                                  max(run["changes"] for run in done), "changes"))
            figures.append(Figure("  peak memory of the worker process, most of the runs",
                                  max(run["peak_mb"] for run in done), "MB"))
            if "fit" in done[0]:
                figures.append(Figure("  of which the human column's fit and intervals, median",
                                      statistics.median(run["fit"] for run in done), "s"))
        compared: list[tuple[str, str, float | None]] = (
            [(f"the board before ({baseline.name})", measured[0][0], TARGET)] if baseline is not None else [])
        compared.append(("bootstrap, this checkout", VARIANTS[0][0], None))
        for name, other, target in compared:
            for part, title in (("first", "first snapshot"), ("complete", "complete page"), ("refresh", "refresh")):
                figures.append(Figure(f"sandwich ÷ {name}, {title}, median CPU times",
                                      median[SANDWICH][part] / median[other][part], "×",
                                      None if part == "complete" else target))
                figures.append(Figure(f"  median of the {repeats} turns' own ratios", statistics.median(
                    mine[part] / theirs[part] for mine, theirs in zip(runs[SANDWICH], runs[other])), "×"))
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
                        help="runs per figure (default 5): their median")
    parser.add_argument("--cache-dir", default=".cache", help="where the study database is built once")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout of the board to compare with (git worktree add --detach DIR 8249c45: the "
                             "board before issue 44), measured in the same turns; without it, no target line")
    parser.add_argument("--new-votes", type=int, default=200,
                        help="votes cast between a worker's first snapshot and its refresh (default 200)")
    parser.add_argument("--annotators", type=int, default=ScaleSpec.annotators,
                        help=f"annotators of the study database (default {ScaleSpec.annotators})")
    parser.add_argument("--study-models", type=int, default=ScaleSpec.models,
                        help=f"models of the study database (default {ScaleSpec.models})")
    parser.add_argument("--prompts", type=int, default=ScaleSpec.prompts,
                        help=f"prompts of the study database (default {ScaleSpec.prompts})")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    if "study" in parts:
        spec = ScaleSpec(votes=args.votes, annotators=args.annotators, models=args.study_models, prompts=args.prompts)
        print(f"study database, {args.votes:,} votes (tools.scale_fixture); each run a fresh worker process, its first "
              f"snapshot, then its refresh after {args.new_votes} new votes:")
        for figure in study_figures(spec, args.repeats, args.cache_dir, args.new_votes, args.baseline):
            print(figure.line(), flush=True)
        if args.baseline is None:
            print(f"  (the target, the sandwich snapshot ≤ {TARGET}× the board before issue 44, needs --baseline "
                  "DIR: a checkout of 8249c45)")
    if "models" in parts:
        print("simulated logs, the fit with its intervals alone:")
        for figure in model_figures(args.votes, [int(n) for n in args.models.split(",")], args.repeats):
            print(figure.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
