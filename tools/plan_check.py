"""How good the study planner's estimates are, on simulated arenas: ``python -m tools.plan_check``.

``python -m tools.plan_check [--arenas 40 --start 1500 --strategies uniform,active --repetitions 40 --seed 0]``

``python -m tools.plan_check --example --start 2000`` prints instead the plan of one such arena after ``--start``
uniform votes, for every strategy and the targets ci=25, top=3 and spearman=0.95 (docs/methods/sampling.md's
example: what ``python -m arena plan`` prints for it).

For each strategy, ``--arenas`` arenas of the benchmark's truth (:data:`tools.simulate.TRUE_ELO`, the simulation's
annotators: Davidson ties, more "both bad" for weaker models) are run to ``--start`` votes; the planner
(:func:`sampling.planner.plan_study`, ``--repetitions`` continuations with truths drawn around the fit, annotators
with the observed shares) and the leaderboard's quick estimate (:func:`sampling.planner.interval_votes`) are asked how
many more votes each target needs; then the arena goes on, and the votes it actually needed are counted (the
interval target: the first time every Wald half-width of the leaderboard's fit is within ±X; the settling targets:
from when on they hold against the truth up to ``--start`` + ``--horizon`` votes). Printed per strategy and target:
the share of arenas whose planner median was within ±25% of the votes actually needed, the share whose actual votes
fell inside the planner's 10–90% range, and the same ±25% share for the quick estimate (interval target only).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from ratings.leaderboard import prior_ridge
from sampling.planner import Target, format_plan, interval_votes, plan_study
from sampling.simulation import (
    checkpoints,
    count_tensors,
    outcome_probabilities,
    settled_at,
    spearman_rows,
    top_k_rows,
    walk,
)
from sampling.strategies import STRATEGIES, SamplingParams, fit_state, get_strategy
from tools.simulate import BAD_BOTTOM, BAD_TOP, TRUE_ELO, centred_truth

TARGETS = (Target("ci", 15.0), Target("top", 3), Target("spearman", 0.95))
EXAMPLE_TARGETS = (Target("ci", 25.0), Target("top", 3), Target("spearman", 0.95))


def actual_votes(strategy: str, *, arenas: int, start: int, horizon: int, params: SamplingParams, seed: int,
                 targets: Sequence[Target] = TARGETS) -> tuple[np.ndarray, dict[Target, np.ndarray]]:
    """The arenas' counts at ``start`` votes (arenas, n, n, 4) and, per target, the votes each needed after that
    (``horizon`` where it never held)."""
    truth = centred_truth(list(TRUE_ELO.values()))
    n = len(truth)
    points = np.concatenate([[start], checkpoints(start + horizon, step=50, growth=0.01, start=start)])
    ok = {t: np.zeros((arenas, len(points)), dtype=bool) for t in targets}
    walked = walk(strategy, outcome_p=outcome_probabilities(truth, bad_top=BAD_TOP, bad_bottom=BAD_BOTTOM),
                  points=points, repetitions=arenas, rng=np.random.default_rng([seed, 1]), params=params)
    at_start = None
    for c, (_, outcomes) in enumerate(walked):
        counts = count_tensors(outcomes, n)
        if at_start is None:
            at_start = counts.copy()
        state = fit_state(counts, params=params)
        for t in targets:
            if t.kind == "ci":
                half = 1.96 * np.sqrt(np.diagonal(state.cov, axis1=-2, axis2=-1))
                ok[t][:, c] = half.max(axis=1) <= t.value
            elif t.kind == "top":
                ok[t][:, c] = top_k_rows(state.ratings, truth, int(t.value))
            else:
                ok[t][:, c] = spearman_rows(state.ratings, truth) >= t.value
    assert at_start is not None  # walk yields the start point first
    needed = {}
    for t in targets:
        at, settled = settled_at(ok[t], points)
        needed[t] = np.where(settled, at - start, horizon).astype(np.float64)
    return at_start, needed


def agree(estimates: np.ndarray, actual: np.ndarray, horizon: int) -> np.ndarray:
    """Within ±25% of the votes actually needed; an estimate beyond the horizon agrees with an arena that never got
    there."""
    estimates = np.minimum(estimates, horizon)
    return np.abs(estimates - actual) <= 0.25 * np.maximum(actual, 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.plan_check", description=__doc__.split("\n\n")[0])
    parser.add_argument("--arenas", type=int, default=40, help="simulated arenas per strategy (default 40)")
    parser.add_argument("--start", type=int, default=1500, help="votes cast when the planner is asked (default 1500)")
    parser.add_argument("--horizon", type=int, default=50_000, help="more votes the arenas and plans run (default "
                                                                     "50000)")
    parser.add_argument("--strategies", default="uniform,active", help="comma-separated (default uniform,active)")
    parser.add_argument("--repetitions", type=int, default=40, help="the planner's continuations (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--example", action="store_true",
                        help="print the plan of one arena after --start uniform votes, every strategy "
                             "(the docs' example)")
    args = parser.parse_args(argv)
    params = SamplingParams(ridge=prior_ridge(400.0))  # the leaderboard's fit: ties dropped, its default prior
    if args.example:
        counts, _ = actual_votes("uniform", arenas=1, start=args.start, horizon=50, params=params, seed=args.seed,
                                 targets=())
        plan = plan_study(counts[0], targets=list(EXAMPLE_TARGETS), strategies=list(STRATEGIES), params=params,
                          repetitions=args.repetitions, seed=args.seed)
        print(format_plan(plan))
        return 0
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for strategy in strategies:
        get_strategy(strategy)
    print(f"{args.arenas} arenas per strategy from {args.start} votes, {args.repetitions} continuations per plan, "
          f"horizon {args.horizon} more votes, seed {args.seed}.")
    print(f"{'strategy':<9} {'target':<14} {'actual (median)':>15} {'plan ±25%':>9} {'in 10-90%':>9} "
          f"{'quick ±25%':>10}")
    for strategy in strategies:
        started = time.perf_counter()
        counts, needed = actual_votes(strategy, arenas=args.arenas, start=args.start, horizon=args.horizon,
                                      params=params, seed=args.seed)
        plans = [plan_study(c, targets=list(TARGETS), strategies=[strategy], params=params,
                            repetitions=args.repetitions, seed=args.seed + a, horizon=args.horizon)
                 for a, c in enumerate(counts)]
        for t in TARGETS:
            rows = [p.row(strategy, t) for p in plans]
            median = np.array([r.median for r in rows])
            low, high = np.array([r.low for r in rows]), np.array([r.high for r in rows])
            actual = needed[t]
            close = agree(median, actual, args.horizon)
            inside = (low <= actual) & (actual <= high)
            quick = ""
            if t.kind == "ci":
                estimates = np.array([interval_votes(c, strategy, t.value, params=params, horizon=args.horizon)
                                      for c in counts])
                quick = f"{np.mean(agree(estimates, actual, args.horizon)):10.0%}"
            print(f"{strategy:<9} {str(t):<14} {np.median(actual):15,.0f} {close.mean():9.0%} {inside.mean():9.0%} "
                  f"{quick:>10}", flush=True)
        print(f"  ({strategy}: {time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
