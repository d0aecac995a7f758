"""What a battle draw costs at 1,000 and at 1,000,000 votes: ``python -m tools.sampler_bench``.

For each database (12 models with 1,000 and 1,000,000 votes, 30 models with 1,000,000; built once by
:func:`tools.scale_fixture.cached_scale_database` under ``.cache/scale``) and each strategy, :func:`measure_draws`
copies the database into a temporary folder (votes are written), times the start-up full read of a
:class:`sampling.sampler.SamplingStats`, then makes ``draws`` draws through it as the server does
(:func:`sampling.sampler.draw_pairing` with the warm stats and a :class:`datamodel.battles.PromptPool`), each
followed by a vote on the battle drawn (:func:`datamodel.votes.record_vote` with the default quality rules, then
:meth:`~sampling.sampler.SamplingStats.note_vote`, as :func:`arena.session.vote` does), so the counts change between
draws and the incremental path is exercised. A last line per database times replica draws
(``replication_share=1``: every draw re-serves a battle with one vote). Each draw is by a random annotator (most of
them drawing for the first time, so the figure includes reading which prompts they saw); ``--seen N`` adds a line per
strategy where every draw is by one annotator who has already voted on about ``N`` prompts (and keeps voting), the
steady state of a returning annotator whose draws leave out the prompts they saw. Timings are wall-clock on a shared
machine: repeat them.

Before this sampler (commit 705d5f3 re-read every count, joining the votes to battles and images, at most every 2 s
on the request path, and a read took longer than 2 s at a million votes, so every draw re-read) the figures were
those of :data:`BEFORE`; :func:`main` prints them beside the new ones.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from datamodel.annotators import annotator_names
from datamodel.connection import connect
from datamodel.votes import annotator_nearest, record_vote
from sampling.draws import draw_pairing, serve_battle
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from sampling.strategies import STRATEGIES, UNIFORM, SamplingParams, get_strategy
from tools.scale_fixture import ScaleSpec, cached_scale_database

SPECS = (ScaleSpec(votes=1_000, models=12), ScaleSpec(votes=1_000_000, models=12),
         ScaleSpec(votes=1_000_000, models=30))

# Measured with the sampler of commit 705d5f3 (/tmp copies of the same databases, 2 shared CPUs): ms per draw (mean,
# p95) over 2,000 draws, or over 15 where every draw re-read the counts (a million votes), and the counts' read in s
# (None where there was none: uniform draws and the old replica draws, which grouped every human vote per draw).
BEFORE: dict[tuple[int, int, str], dict] = {
    (1_000, 12, "uniform"): {"mean_ms": 1.72, "p95_ms": 2.16, "startup_s": None},
    (1_000, 12, "balanced"): {"mean_ms": 2.81, "p95_ms": 3.62, "startup_s": 0.03},
    (1_000, 12, "active"): {"mean_ms": 4.13, "p95_ms": 5.81, "startup_s": 0.03},
    (1_000, 12, "replica"): {"mean_ms": 3.38, "p95_ms": 6.08, "startup_s": None},
    (1_000_000, 12, "uniform"): {"mean_ms": 1.44, "p95_ms": 2.11, "startup_s": None},
    (1_000_000, 12, "balanced"): {"mean_ms": 6201.1, "p95_ms": 7979.6, "startup_s": 5.0},
    (1_000_000, 12, "active"): {"mean_ms": 6993.8, "p95_ms": 9791.7, "startup_s": 6.7},
    (1_000_000, 12, "replica"): {"mean_ms": 3229.1, "p95_ms": 3562.6, "startup_s": None},
    (1_000_000, 30, "uniform"): {"mean_ms": 3.28, "p95_ms": 3.58, "startup_s": None},
    (1_000_000, 30, "balanced"): {"mean_ms": 6019.5, "p95_ms": 6619.3, "startup_s": 5.7},
    (1_000_000, 30, "active"): {"mean_ms": 6667.9, "p95_ms": 7434.7, "startup_s": 6.5},
    (1_000_000, 30, "replica"): {"mean_ms": 3686.0, "p95_ms": 4118.0, "startup_s": None},
}


def _copy_database(source: Path, folder: Path) -> Path:
    target = folder / "arena.db"
    shutil.copyfile(source, target)
    if Path(f"{source}-wal").exists():  # committed pages not yet checkpointed into the file
        shutil.copyfile(f"{source}-wal", f"{target}-wal")
    return target


def _table_megabytes(stats: SamplingStats) -> float:
    tables = stats.tables
    assert tables is not None  # read by the refresh
    arrays = [tables.has_image, tables.counts, tables.pair_counts, tables.prompt_pair_counts, tables.prompt_counts]
    return (sum(a.nbytes for a in arrays) + tables.battles.nbytes) / 2**20


def annotator_with_seen(db_path: str | Path, seen: int) -> tuple[int, int]:
    """(annotator id, prompts they voted on) of the annotator whose number of distinct prompts voted on is closest to
    ``seen`` (ties: the lowest id)."""
    db = connect(db_path)
    try:
        found = annotator_nearest(db, seen)
    finally:
        db.close()
    if found is None:
        raise LookupError(f"{db_path} has no annotator votes: build it with tools.scale_fixture.")
    return found


def measure_draws(db_path: str | Path, strategy: str, draws: int = 2_000, *, replication_share: float = 0.0,
                  seed: int = 0, annotator: int | None = None) -> dict:
    """Time ``draws`` draws of ``strategy`` through a warm :class:`SamplingStats` on a copy of ``db_path``, each
    followed by a recorded vote (module docstring). Each draw is by a random annotator, or by ``annotator`` if given.

    Returns ``strategy, replication_share, votes`` (non-excluded human votes at start), ``models, draws,
    startup_s`` (the full read), ``mean_ms, p50_ms, p95_ms, max_ms`` (per draw), ``note_ms`` (counting each vote),
    ``vote_ms`` (recording it, quality rules included), ``replicas`` (draws that were replicas) and ``stats_mb``
    (the count arrays in memory).
    """
    with tempfile.TemporaryDirectory(prefix="sampler-bench-") as folder:
        db = connect(_copy_database(Path(db_path), Path(folder)))
        try:
            highest = max(annotator_names(db), default=0)  # the annotators' ids run from 1
            if annotator is None and not highest:
                raise LookupError(f"{db_path} has no annotators: build it with tools.scale_fixture.")
            stats = SamplingStats(SamplingParams())
            started = time.perf_counter()
            stats.refresh(db, force=True, fit=get_strategy(strategy).needs_fit)
            startup = time.perf_counter() - started
            assert stats.tables is not None  # read by the forced refresh
            votes, models = stats.tables.votes, len(stats.tables.model_ids)
            rng, pool = random.Random(seed), PromptPool()
            draw_s, note_s, vote_s, replicas = [], [], [], 0
            for _ in range(draws):
                voter = annotator if annotator is not None else rng.randint(1, highest)
                started = time.perf_counter()
                pairing = draw_pairing(db, rng, strategy, stats=stats, annotator_id=voter,
                                       replication_share=replication_share, pool=pool)
                draw_s.append(time.perf_counter() - started)
                replicas += type(pairing).__name__ == "Replica"
                started = time.perf_counter()
                battle = serve_battle(db, rng, session_id="bench", annotator_id=voter, pairing=pairing,
                                      strategy=strategy)
                receipt = record_vote(db, battle.id, rng.choice(["A", "B", "tie"]), session_id="bench")
                vote_s.append(time.perf_counter() - started)
                started = time.perf_counter()
                stats.note_vote(db, receipt)
                note_s.append(time.perf_counter() - started)
            megabytes = _table_megabytes(stats)
        finally:
            db.close()
    ms = np.array(draw_s) * 1e3
    return {"strategy": strategy, "replication_share": replication_share, "votes": votes, "models": models,
            "draws": draws, "startup_s": startup, "mean_ms": float(ms.mean()),
            "p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95)),
            "max_ms": float(ms.max()), "note_ms": float(np.mean(note_s) * 1e3),
            "vote_ms": float(np.mean(vote_s) * 1e3), "replicas": replicas, "stats_mb": megabytes}


def _number(value, fmt: str) -> str:
    return "—" if value is None else format(value, fmt)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=2_000, help="draws per case (default 2000)")
    parser.add_argument("--cache", default=".cache", help="where the scale databases are kept (default .cache)")
    parser.add_argument("--small", action="store_true", help="only the 1,000-vote database (quick)")
    parser.add_argument("--large", action="store_true", help="only the 1,000,000-vote database with 12 models")
    parser.add_argument("--seen", type=int, default=300,
                        help="also time draws by one annotator who voted on about this many prompts (default 300; "
                             "0: skip)")
    args = parser.parse_args(argv)
    for spec in SPECS[:1] if args.small else SPECS[1:2] if args.large else SPECS:
        folder = cached_scale_database(spec, args.cache)
        cases: list[tuple[str, float, int | None]] = [(strategy, 0.0, None) for strategy in STRATEGIES]
        cases.append((UNIFORM.name, 1.0, None))
        if args.seen > 0:
            annotator, seen = annotator_with_seen(folder / "arena.db", args.seen)
            cases += [(strategy, share, annotator) for strategy, share, _ in cases]
        for strategy, share, voter in cases:
            result = measure_draws(folder / "arena.db", strategy, args.draws, replication_share=share,
                                   annotator=voter)
            name = "replica" if share else strategy
            name += "" if voter is None else f" (one annotator, {seen} seen at start)"
            before = BEFORE.get((spec.votes, spec.models, name), {})
            print(f"{spec.votes:>9,} votes {spec.models:>2} models {name:<8}: start-up read "
                  f"{result['startup_s']:5.2f} s ({result['stats_mb']:.0f} MB), draw mean "
                  f"{result['mean_ms']:6.2f} ms p95 {result['p95_ms']:6.2f} ms max "
                  f"{result['max_ms']:6.1f} ms, counting a vote {result['note_ms']:.2f} ms"
                  + (f", {result['replicas']} replicas" if share else "")
                  + f"   | before: draw mean {_number(before.get('mean_ms'), '.1f')} ms p95 "
                    f"{_number(before.get('p95_ms'), '.1f')} ms, read {_number(before.get('startup_s'), '.2f')} s",
                  flush=True)


if __name__ == "__main__":
    main()
