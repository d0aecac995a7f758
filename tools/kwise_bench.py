"""What a four-image vote and its draw cost at 1,000 to 100,000 four-image votes: ``python -m tools.kwise_bench``.

For each count, :func:`build_kwise_database` writes a small arena (:func:`tools.scale_fixture.build_scale_database`:
12 models, 200 prompts with an image of every model, 1,000 pairwise votes) into a temporary folder and adds that many
counted four-image battles and votes with bulk inserts (:func:`datamodel.bulk.insert_rows`: four distinct models of a
random prompt, a random best slot, a worst one in half of them, spread over 1,000 annotators; ``--annotator-votes``
of them by each case's voter). Then :func:`measure_votes` signs the case's voter in and casts ``votes`` four-image
votes through :func:`arena.four_image_session.vote_four` as the page does (the default quality rules, the next set
drawn with the vote by ``ksort-ucb``), timing each, and times ``draws`` draws alone (:func:`sampling.kwise.draw_four`,
with the stats' refresh before each, as the page does). Each count runs two cases: ``uncached``, every draw reading
all the four-image votes (what the page did before the sampler kept them, :class:`sampling.kwise_stats.KwiseStats`),
and ``cached``, through one warm ``KwiseStats``, as a server does. Bounded: at most ``votes`` votes and ``draws``
draws per case, and a case stops after ``seconds``.

``--change-logs`` measures the change logs instead (:mod:`datamodel.change_logs`): with ``--pairwise-votes`` pairwise
votes in the fixture too (spread over its 90 days; the four-image ones over 30), each log row takes its vote's time,
as if logged as it was cast, and :func:`measure_change_logs` prints, before and after one pruning at ``--keep-s``
(default a day): each log's rows and bytes (SQLite's ``dbstat``), a current reader's refresh (the pairwise sampler's
:meth:`~sampling.sampler.SamplingStats.catch_up`, the four-image one's :meth:`~sampling.kwise_stats.KwiseStats.
refresh`: median over ``--draws`` calls), the full read a reader pays at start-up or when it fell behind the pruned
rows, and what the pruning itself took.
Timings are wall-clock on a shared machine: repeat them.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from arena import session as sessions
from arena.four_image_session import next_four, show_upcoming, vote_four
from core.settings import Settings
from datamodel.bulk import insert_rows
from datamodel.catalog import suite_names
from datamodel.change_logs import PRUNE_EVERY_S, date_rows_by_their_votes, log_sizes, prune_change_logs
from datamodel.connection import checkpoint, connect
from sampling.kwise import draw_four
from sampling.kwise_stats import KwiseStats
from sampling.sampler import SamplingStats
from tools.scale_fixture import ScaleSpec, build_scale_database

SPEC = ScaleSpec(votes=1_000, annotators=1_000, models=12, prompts=200, judges=0, judge_share=0.0)
STRATEGY = "ksort-ucb"


VOTERS = ("bench-voter-uncached", "bench-voter-cached")  # who votes in each case (their token: TOKEN)
TOKEN = "a-long-bench-token"


def build_kwise_database(folder: Path, kwise_votes: int, seed: int = 0, voter_votes: int = 0,
                         pairwise_votes: int = SPEC.votes) -> Path:
    """The arena of :data:`SPEC` (with ``pairwise_votes`` pairwise votes) at ``folder / arena.db`` with
    ``kwise_votes`` counted four-image votes added, and the accounts of :data:`VOTERS`, each of whom cast
    ``voter_votes`` of them (the rest spread over the fixture's annotators)."""
    path = folder / "arena.db"
    build_scale_database(dataclasses.replace(SPEC, votes=pairwise_votes), path, folder / "media",
                         progress=lambda *_: None)
    db = connect(path)
    voters = []
    for name in VOTERS:
        account = sessions.start(db, name, TOKEN, open_signup=True).annotator
        assert account is not None, "a signed-up account has an annotator"
        voters.append(account.id)
    rng = np.random.default_rng(seed)
    n_models, n_prompts = SPEC.models, SPEC.prompts
    prompt = rng.integers(0, n_prompts, kwise_votes)
    models = np.argsort(rng.random((kwise_votes, n_models)), axis=1)[:, :4]  # four distinct models, in slot order
    annotator = rng.integers(1, SPEC.annotators + 1, kwise_votes)
    for v, voter in enumerate(voters):
        annotator[v * voter_votes:(v + 1) * voter_votes] = voter
    best = rng.integers(1, 5, kwise_votes)
    worst = np.where(rng.random(kwise_votes) < 0.5, (best + rng.integers(0, 3, kwise_votes)) % 4 + 1, 0)
    at = time.time() - 30 * 86400 + np.sort(rng.random(kwise_votes)) * 29 * 86400
    image = prompt[:, None] * n_models + models + 1  # the fixture's image ids: one per prompt and model
    try:
        with db.conn:
            insert_rows(db, "kwise_battles", ("id", "prompt_id", "slot_1_image_id", "slot_2_image_id",
                                              "slot_3_image_id", "slot_4_image_id", "annotator_id", "session_id",
                                              "media_token", "strategy", "served_at"),
                        ((f"bench-battle-{k}", int(prompt[k]) + 1, *map(int, image[k]), int(annotator[k]),
                          f"bench-session-{annotator[k]}", f"bench-media-{k}", STRATEGY, float(at[k]) - 12.0)
                         for k in range(kwise_votes)))
            insert_rows(db, "kwise_votes", ("battle_id", "annotator_id", "best", "worst", "best_image_id",
                                            "worst_image_id", "seconds_to_vote", "voted_at"),
                        ((f"bench-battle-{k}", int(annotator[k]), int(best[k]), int(worst[k]) or None,
                          int(image[k, best[k] - 1]), int(image[k, worst[k] - 1]) if worst[k] else None, 12.0,
                          float(at[k])) for k in range(kwise_votes)))
    finally:
        db.close()
    return path


def _figures(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1e3
    return {"n": len(ms), "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "max_ms": float(ms.max())}


def measure_votes(path: Path, *, cached: bool, votes: int = 200, draws: int = 200, seconds: float = 60.0,
                  seed: int = 0) -> dict:
    """Time ``votes`` calls of :func:`vote_four` (each drawing the next set) by the case's voter (:data:`VOTERS`),
    and ``draws`` draws alone, on the database at ``path`` (written to); through one :class:`KwiseStats` if
    ``cached``."""
    db = connect(path)
    try:
        suites = suite_names(db)
        stats, read_s = (KwiseStats() if cached else None), None
        if stats is not None:
            started = time.perf_counter()
            stats.refresh(db, force=True)
            read_s = time.perf_counter() - started
        session = sessions.start(db, VOTERS[int(cached)], TOKEN, open_signup=True)
        rng = random.Random(seed)
        sitting = next_four(db, rng, session, None, suites=suites, strategy=STRATEGY, stats=stats)
        vote_s: list[float] = []
        stop = time.monotonic() + seconds
        while len(vote_s) < votes and time.monotonic() < stop:
            assert sitting.battle is not None, "the fixture has a four-image set to show"
            started = time.perf_counter()
            sitting = vote_four(db, session, sitting, best=rng.randint(1, 4), on_screen=sitting.battle.media_token,
                                now=time.time() + 10.0 * len(vote_s), rng=rng, suites=suites, strategy=STRATEGY,
                                stats=stats)
            vote_s.append(time.perf_counter() - started)
            sitting = show_upcoming(sitting) if sitting.upcoming is not None else next_four(
                db, rng, session, sitting, suites=suites, strategy=STRATEGY, stats=stats)
        draw_s: list[float] = []
        stop = time.monotonic() + seconds
        assert session.annotator is not None, "a signed-up account has an annotator"
        annotator = session.annotator.id
        while len(draw_s) < draws and time.monotonic() < stop:
            started = time.perf_counter()
            if stats is not None:
                stats.refresh(db)
            draw_four(db, rng, suites, annotator, STRATEGY, stats=stats)
            draw_s.append(time.perf_counter() - started)
    finally:
        db.close()
    return {"cached": cached, "read_s": read_s, "vote": _figures(vote_s), "draw": _figures(draw_s)}


def _median_ms(call, times: int) -> float:
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return float(np.median(seconds)) * 1e3


def _readers(db, times: int) -> dict:
    """A current reader's refresh (median ms over ``times``) and a full read (median s of 3) of each sampler."""
    pairwise, kwise = SamplingStats(), KwiseStats()
    pairwise_read_ms = _median_ms(lambda: pairwise.refresh(db, force=True, fit=False), 3)
    kwise_read_ms = _median_ms(lambda: kwise.refresh(db, force=True), 3)
    return {"pairwise_refresh_ms": _median_ms(lambda: pairwise.catch_up(db), times),
            "kwise_refresh_ms": _median_ms(lambda: kwise.refresh(db), times),
            "pairwise_read_s": pairwise_read_ms / 1e3, "kwise_read_s": kwise_read_ms / 1e3}


def measure_change_logs(path: Path, *, keep_s: float, times: int = 200) -> dict:
    """Each change log's rows and bytes and the readers' costs (:func:`_readers`) before and after one pruning at
    ``keep_s``, the rows logged at their votes' times (the newest vote's time is now); a reader that fell behind the
    pruned rows reads everything again (timed: ``behind_*``)."""
    db = connect(path)
    try:
        now = date_rows_by_their_votes(db)
        checkpoint(db)
        behind_pairwise = SamplingStats().refresh(db, force=True, fit=False)
        behind_kwise = KwiseStats().refresh(db, force=True)
        assert behind_pairwise.tables is not None, "a forced refresh reads the counts"
        behind_pairwise.tables.change_seq = behind_kwise.change_seq = 0  # as if they had read nothing since
        before = {"sizes": log_sizes(db), **_readers(db, times)}
        started = time.perf_counter()
        deleted = prune_change_logs(db, keep_s=keep_s, now=now)
        prune_s = time.perf_counter() - started
        started = time.perf_counter()
        prune_change_logs(db, keep_s=keep_s, now=now + PRUNE_EVERY_S)
        next_prune_s = time.perf_counter() - started
        checkpoint(db)  # as the server's background checkpoint does within a second: reads past a long WAL are slower
        after = {"sizes": log_sizes(db), **_readers(db, times)}
        started = time.perf_counter()
        behind_pairwise.refresh(db, fit=False)  # finds the pruned rows gone: reads again (on this thread)
        behind_pairwise.wait()
        behind_pairwise_s = time.perf_counter() - started
        started = time.perf_counter()
        behind_kwise.refresh(db)
        behind_kwise_s = time.perf_counter() - started
    finally:
        db.close()
    return {"before": before, "after": after, "deleted": deleted, "prune_s": prune_s, "next_prune_s": next_prune_s,
            "behind_pairwise_s": behind_pairwise_s, "behind_kwise_s": behind_kwise_s}


def print_change_logs(result: dict, keep_s: float) -> None:
    for when in ("before", "after"):
        figures = result[when]
        logs = "; ".join(f"{log} {rows:,} rows {size / 2**20:.1f} MiB"
                         for log, (rows, size) in figures["sizes"].items())
        print(f"{when} pruning: {logs}; a current reader's refresh: pairwise {figures['pairwise_refresh_ms']:.3f} ms, "
              f"four-image {figures['kwise_refresh_ms']:.3f} ms; a full read: pairwise {figures['pairwise_read_s']:.2f}"
              f" s, four-image {figures['kwise_read_s']:.2f} s", flush=True)
    deleted = ", ".join(f"{log} {count:,}" for log, count in result["deleted"].items())
    print(f"pruning at {keep_s:,.0f} s deleted {deleted} rows in {result['prune_s']:.2f} s (the next one "
          f"{result['next_prune_s'] * 1e3:.1f} ms); a reader behind the pruned rows read again in: pairwise "
          f"{result['behind_pairwise_s']:.2f} s, four-image {result['behind_kwise_s']:.2f} s", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kwise-votes", type=int, nargs="+", default=[1_000, 10_000, 100_000],
                        help="counted four-image votes in the arena (default 1000 10000 100000)")
    parser.add_argument("--votes", type=int, default=200, help="votes timed per case (default 200)")
    parser.add_argument("--draws", type=int, default=200,
                        help="draws timed alone per case; with --change-logs, refreshes of a current reader (default "
                             "200)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="a case's votes, and then its draws, stop after this many seconds (default 60)")
    parser.add_argument("--annotator-votes", type=int, default=0,
                        help="each case's voter already cast this many of the four-image votes (default 0: none; an "
                             "annotator well into a study: the draw reads which prompts they voted on, the quality "
                             "rules their votes)")
    parser.add_argument("--only", choices=("uncached", "cached"), help="one of the two cases (default both)")
    parser.add_argument("--change-logs", action="store_true",
                        help="measure the change logs before and after pruning instead (module docstring)")
    parser.add_argument("--pairwise-votes", type=int, default=SPEC.votes,
                        help=f"pairwise votes in the fixture (default {SPEC.votes:,})")
    parser.add_argument("--keep-s", type=float, default=Settings().change_log_keep_s,
                        help="--change-logs: the retention pruned at (default ARENA_CHANGE_LOG_KEEP_S's default)")
    args = parser.parse_args(argv)
    if min(args.votes, args.draws, *args.kwise_votes) < 1 or args.annotator_votes < 0 or args.seconds <= 0:
        parser.error("--kwise-votes, --votes and --draws take counts of 1 or more, --seconds a positive time and "
                     "--annotator-votes 0 or more")
    if 2 * args.annotator_votes > min(args.kwise_votes):
        parser.error("--annotator-votes: each of the two voters casts that many of the smallest --kwise-votes; "
                     "give at most half of it")
    if args.change_logs:
        if args.pairwise_votes < 1 or args.keep_s <= 0:
            parser.error("--pairwise-votes takes a count of 1 or more and --keep-s a positive time")
        for count in args.kwise_votes:
            with tempfile.TemporaryDirectory(prefix="kwise-bench-") as folder:
                path = build_kwise_database(Path(folder), count, pairwise_votes=args.pairwise_votes)
                print(f"{args.pairwise_votes:,} pairwise and {count:,} four-image votes:", flush=True)
                print_change_logs(measure_change_logs(path, keep_s=args.keep_s, times=args.draws), args.keep_s)
        return
    cases = [args.only == "cached"] if args.only else [False, True]
    for count in args.kwise_votes:
        with tempfile.TemporaryDirectory(prefix="kwise-bench-") as folder:
            path = build_kwise_database(Path(folder), count, voter_votes=args.annotator_votes)
            for cached in cases:
                result = measure_votes(path, cached=cached, votes=args.votes, draws=args.draws, seconds=args.seconds)
                vote, draw = result["vote"], result["draw"]
                own = f" ({args.annotator_votes:,} by the voter)" if args.annotator_votes else ""
                print(f"{count:>8,} four-image votes{own}, {'cached' if cached else 'uncached':<8}: vote_four median "
                      f"{vote['median_ms']:7.2f} ms p95 {vote['p95_ms']:7.2f} ms ({vote['n']} votes); draw alone "
                      f"median {draw['median_ms']:7.2f} ms p95 {draw['p95_ms']:7.2f} ms ({draw['n']} draws)"
                      + (f"; the first read {result['read_s']:.2f} s" if cached else ""),
                      flush=True)


if __name__ == "__main__":
    main()
