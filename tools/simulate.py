"""How many votes each sampling strategy needs: a seeded simulation of annotators answering from true ratings.

``python -m tools.simulate [--repetitions 200 --max-votes N --strategies uniform,balanced,active --seed 0]``

The truth (:data:`TRUE_ELO`) is the taxonomy benchmark's published human Elo with definitions, Easy subset (T1;
12 systems, 900–1056), centred to mean 1000 like every fit. A simulated vote on models i, j has the outcome

- both bad with probability b_ij = q_i·q_j, where q falls linearly from :data:`BAD_TOP` for the best model to
  :data:`BAD_BOTTOM` for the worst (weaker models draw more "both bad");
- otherwise a Davidson (1970, JASA 65:317) tie or win: P(tie) ∝ ν√(π_i π_j), P(i wins) ∝ π_i, P(j wins) ∝ π_j with
  π = 10^(R/400), ν = :data:`DAVIDSON_NU` (15% ties between equal models). Among decisive votes P(i beats j) is
  exactly Bradley–Terry, so the leaderboard's fit (ties and both-bad dropped, T1) is correctly specified.

With these rates about 7% of votes are both bad and 14% ties under uniform sampling (the table's last line gives
the shares of the first strategy run). Prompts are not simulated: the simulated annotators answer from the models'
ratings only, so the prompt choice cannot change the ratings here; the pair draws are the app's.

Every strategy (any registered :class:`sampling.strategies.Strategy`) draws its pairs through
:func:`sampling.strategies.pair_probabilities`, the function the app uses; for a strategy that ``needs_fit``
(``active``) the state is refitted with :func:`sampling.strategies.fit_state` (the app's refit) whenever the votes have
grown by ``--refit-growth`` (2%) or ``--refit-every`` (50) votes, whichever is more, and stays fixed in between, as in
the app between refits; at 50 000 votes this refits every 1 000 votes, less often than the app does, so the
simulation if anything understates ``active``. The vote counts that ``balanced`` and the exploration share of
``active`` follow are refreshed every ``--redraw-every`` (100) votes. The repetitions of one strategy run in
lock-step as one batch of numpy arrays, and each strategy has its own random stream (``numpy.random.default_rng([seed,
index of the strategy in the registry])``), so adding a strategy changes no other row. At checkpoints (every
``--step`` votes or ``--growth`` of the votes so far, whichever is more) the leaderboard's point estimates are fitted
(:func:`ratings.newton_bt`, ridge 1e-6, ties dropped) and the criteria checked:

- *Spearman*: the votes from which Spearman's ρ between the fitted and the true ratings stays ≥ 0.95 at every later
  checkpoint up to ``--max-votes``;
- *top 3*: the votes from which the three best fitted models are the true top three (in any order), from then on;
- *coverage*: at ``--max-votes`` (and at ``--coverage-at`` votes, the benchmark's 3,370 by default), the share of
  models whose true (centred) rating lies inside the leaderboard's 95% bootstrap interval
  (:func:`ratings.fit_bradley_terry`, ``--bootstrap-rounds`` rounds);
- *bias*: the largest |mean over repetitions of fitted − true rating| over the models at ``--max-votes``.

A repetition that never settles by ``--max-votes`` counts as ``--max-votes`` (the "unsettled" column says how many;
its mean is then a lower bound).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sampling.strategies import (STRATEGIES, UNIFORM, SamplingParams, fit_state, get_strategy, pair_index,
                                 pair_probabilities)
from ratings.bradley_terry import fit_bradley_terry, newton_bt

TRUE_ELO: dict[str, float] = {
    "DeepFloyd IF": 1056, "Playground-v2": 1055, "FLUX": 1050, "SDXL Turbo": 1039, "SD3": 1033, "SDXL": 1015,
    "Hunyuan-DiT": 994, "PixArt-Sigma": 990, "Kandinsky 3": 961, "Retrieval": 960, "Openjourney": 941,
    "SD-v1-5": 900,
}
BAD_TOP = 0.15
BAD_BOTTOM = 0.45
DAVIDSON_NU = 0.353  # ν/(2 + ν) = 15% ties between equal models
SPEARMAN_TARGET = 0.95
TOP_K = 3


def centred_truth(true_elo: Sequence[float]) -> np.ndarray:
    """The true ratings shifted to mean 1000, the scale every fit reports."""
    truth = np.asarray(true_elo, dtype=np.float64)
    return truth - truth.mean() + 1000.0


def outcome_probabilities(
    true_elo: Sequence[float], *, bad_top: float = BAD_TOP, bad_bottom: float = BAD_BOTTOM, nu: float = DAVIDSON_NU
) -> np.ndarray:
    """(K, 4) probabilities of (i wins, j wins, tie, both bad) for each pair (i < j, pair order of sampling.sampler)."""
    r = np.asarray(true_elo, dtype=np.float64)
    span = r.max() - r.min()
    q = bad_bottom + (bad_top - bad_bottom) * (r - r.min()) / (span if span > 0 else 1.0)
    i, j = pair_index(len(r))
    both_bad = q[i] * q[j]
    pi_i, pi_j = 10.0 ** (r[i] / 400.0), 10.0 ** (r[j] / 400.0)
    tie = nu * np.sqrt(pi_i * pi_j)
    denom = pi_i + pi_j + tie
    rest = 1.0 - both_bad
    return np.stack([rest * pi_i / denom, rest * pi_j / denom, rest * tie / denom, both_bad], axis=1)


def checkpoints(max_votes: int, *, step: int = 50, growth: float = 0.02) -> np.ndarray:
    """Vote counts at which the criteria are checked: t_{k+1} = t_k + max(step, ⌈growth·t_k⌉), ending at max_votes."""
    points = [step]
    while points[-1] < max_votes:
        points.append(min(max_votes, points[-1] + max(step, int(np.ceil(growth * points[-1])))))
    return np.array(points, dtype=np.int64)


def spearman_rows(estimates: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Spearman's ρ = 1 − 6Σd²/(n(n²−1)) of each row of ``estimates`` with ``truth`` (no tied values)."""
    n = truth.shape[-1]
    est_rank = np.argsort(np.argsort(estimates, axis=-1), axis=-1)
    true_rank = np.argsort(np.argsort(truth))
    d2 = ((est_rank - true_rank) ** 2).sum(axis=-1)
    return 1.0 - 6.0 * d2 / (n * (n * n - 1))


def top_k_rows(estimates: np.ndarray, truth: np.ndarray, k: int = TOP_K) -> np.ndarray:
    """Whether each row's k highest estimates are the k truly best models (in any order)."""
    est_top = np.sort(np.argsort(-estimates, axis=-1)[..., :k], axis=-1)
    true_top = np.sort(np.argsort(-truth)[:k])
    return (est_top == true_top).all(axis=-1)


def settled_at(ok: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``ok`` (reps × checkpoints): the first checkpoint from which ``ok`` holds to the end, and whether
    it ever does (rows that fail at the last checkpoint get ``points[-1]`` and False)."""
    failing = ~ok
    last_fail = np.where(failing.any(axis=1), ok.shape[1] - 1 - np.argmax(failing[:, ::-1], axis=1), -1)
    settled = last_fail < ok.shape[1] - 1
    index = np.minimum(last_fail + 1, ok.shape[1] - 1)
    return points[index], settled


def _counts_from_pairs(pair_outcomes: np.ndarray, n: int) -> np.ndarray:
    """Count tensors (R, n, n, 4) with model i < j shown as A (sides do not matter to the simulated annotators)."""
    i, j = pair_index(n)
    counts = np.zeros(pair_outcomes.shape[:1] + (n, n, 4), dtype=np.int64)
    counts[:, i, j, :] = pair_outcomes
    return counts


def _leaderboard_wins(pair_outcomes: np.ndarray, n: int) -> np.ndarray:
    """Win matrices (R, n, n) under the leaderboard's tie policy "drop"."""
    i, j = pair_index(n)
    wins = np.zeros(pair_outcomes.shape[:1] + (n, n))
    wins[:, i, j] = pair_outcomes[:, :, 0]
    wins[:, j, i] = pair_outcomes[:, :, 1]
    return wins


def _coverage(pair_outcomes: np.ndarray, truth: np.ndarray, rounds: int, rng: np.random.Generator):
    """Share of models inside their 95% bootstrap interval, and the fitted ratings, per repetition."""
    n = len(truth)
    counts = _counts_from_pairs(pair_outcomes, n)
    inside = np.zeros(len(counts))
    fitted = np.zeros((len(counts), n))
    for r, c in enumerate(counts):
        fit = fit_bradley_terry(c, tie_policy="drop", rounds=rounds, seed=rng)
        lower, upper = fit.interval(0.95)
        inside[r] = np.mean((lower <= truth) & (truth <= upper))
        fitted[r] = fit.ratings
    return inside, fitted


@dataclass(frozen=True)
class StrategyResult:
    strategy: str
    spearman_votes: np.ndarray
    spearman_settled: np.ndarray
    top_votes: np.ndarray
    top_settled: np.ndarray
    coverage: np.ndarray
    coverage_early: np.ndarray
    bias: np.ndarray
    outcome_shares: np.ndarray
    seconds: float
    pair_counts: np.ndarray  # (repetitions, K) votes each pair got (pair order of sampling.strategies.pair_index)


def simulate_strategy(
    strategy: str,
    *,
    true_elo: Sequence[float] = tuple(TRUE_ELO.values()),
    repetitions: int = 200,
    max_votes: int = 60_000,
    seed: int | np.random.Generator = 0,
    params: SamplingParams = SamplingParams(),
    step: int = 50,
    growth: float = 0.02,
    refit_every: int = 50,
    refit_growth: float = 0.02,
    redraw_every: int = 100,
    bootstrap_rounds: int = 1000,
    coverage_at: int | None = 3370,
) -> StrategyResult:
    """Run ``repetitions`` seeded arenas of ``max_votes`` votes under ``strategy`` (module docstring)."""
    spec = get_strategy(strategy)
    started = time.perf_counter()
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    truth = centred_truth(true_elo)
    n = len(truth)
    outcome_p = outcome_probabilities(truth)
    k = n * (n - 1) // 2
    available = np.ones(k, dtype=bool)
    points = checkpoints(max_votes, step=step, growth=growth)
    if coverage_at is not None and 0 < coverage_at < max_votes:
        points = np.unique(np.append(points, coverage_at))
    outcomes = np.zeros((repetitions, k, 4), dtype=np.int64)
    pair_counts = np.zeros((repetitions, k), dtype=np.int64)
    state = None
    refitted_at = 0
    theta = np.zeros((repetitions, n))
    spearman_ok = np.zeros((repetitions, len(points)), dtype=bool)
    top_ok = np.zeros((repetitions, len(points)), dtype=bool)
    coverage_early = np.full(repetitions, np.nan)
    done = 0
    for c, point in enumerate(points):
        refit_due = state is None or done - refitted_at >= max(refit_every, refit_growth * refitted_at)
        if spec.needs_fit and refit_due:
            state = fit_state(_counts_from_pairs(outcomes, n), params=params,
                              theta0=None if state is None else state.theta)
            refitted_at = done
        while done < point:  # the counts the draws depend on are refreshed every ``redraw_every`` votes
            size = int(min(point - done, redraw_every))
            probs = pair_probabilities(strategy, available=available, pair_counts=pair_counts, state=state,
                                       params=params)
            probs = np.broadcast_to(probs, (repetitions, k))
            drawn = rng.multinomial(size, probs / probs.sum(axis=1, keepdims=True))
            outcomes += rng.multinomial(drawn, outcome_p)
            pair_counts += drawn
            done += size
        theta, _ = newton_bt(_leaderboard_wins(outcomes, n), ridge=1e-6, theta0=theta, max_iter=100)
        spearman_ok[:, c] = spearman_rows(theta, truth) >= SPEARMAN_TARGET
        top_ok[:, c] = top_k_rows(theta, truth)
        if coverage_at is not None and point == coverage_at:
            coverage_early, _ = _coverage(outcomes, truth, bootstrap_rounds, rng)
    spearman_votes, spearman_settled = settled_at(spearman_ok, points)
    top_votes, top_settled = settled_at(top_ok, points)
    coverage, fitted = _coverage(outcomes, truth, bootstrap_rounds, rng)
    shares = outcomes.sum(axis=(0, 1)) / max(outcomes.sum(), 1)
    return StrategyResult(strategy, spearman_votes, spearman_settled, top_votes, top_settled, coverage,
                          coverage_early, fitted.mean(axis=0) - truth, shares, time.perf_counter() - started,
                          pair_counts)


def format_table(
    results: Sequence[StrategyResult], *, repetitions: int, max_votes: int, coverage_at: int | None
) -> str:
    """The benchmark table: votes until each criterion settles (mean, median, both relative to ``uniform``, and the
    repetitions that never settled), the coverage of the 95% intervals at the end (and at ``coverage_at``), the bias."""
    base = {r.strategy: r for r in results}.get(UNIFORM.name)
    width = max([9, *(len(r.strategy) for r in results)])

    def block(votes, settled, reference):
        mean, median = votes.mean(), np.median(votes)
        if reference is None:
            ratio = f"{'':>5} {'':>5}"
        else:
            ratio = f"{mean / reference.mean():5.2f} {median / np.median(reference):5.2f}"
        return f"{mean:6.0f} {median:6.0f} {ratio} {(~settled).sum():5d}"

    early = f"@{coverage_at}" if coverage_at else ""
    lines = [
        f"{'':{width}} | {'votes: Spearman >= 0.95':^31} | {'votes: true top 3 = top 3':^31} | "
        f"{'95% CI coverage':^15} | {'max':>6}",
        f"{'strategy':{width}} | {'mean':>6} {'median':>6} {'÷unif':>5} {'÷unif':>5} {'never':>5} | "
        f"{'mean':>6} {'median':>6} {'÷unif':>5} {'÷unif':>5} {'never':>5} | {'end':>7} {early:>7} | {'|bias|':>6}",
    ]
    lines.insert(1, "-" * len(lines[1]))
    lines.append("-" * len(lines[1]))
    for r in results:
        measured = coverage_at and np.isfinite(r.coverage_early).any()
        cover_early = f"{np.nanmean(r.coverage_early):7.1%}" if measured else f"{'':7}"
        lines.append(
            f"{r.strategy:{width}} | {block(r.spearman_votes, r.spearman_settled, base and base.spearman_votes)}"
            f" | {block(r.top_votes, r.top_settled, base and base.top_votes)}"
            f" | {r.coverage.mean():7.1%} {cover_early} | {np.abs(r.bias).max():6.1f}"
        )
    shares = results[0].outcome_shares if results else np.zeros(4)
    lines += [
        f"{repetitions} seeded repetitions per strategy, {max_votes} votes each. Votes: from when on the criterion "
        "holds at every later checkpoint;",
        "÷unif: mean, then median, relative to uniform; never: repetitions not settled by the last vote (counted "
        "there).",
        "Coverage: share of models whose true rating lies inside the leaderboard's 95% bootstrap interval, at the "
        f"end{' and at ' + str(coverage_at) + ' votes' if coverage_at else ''}.",
        "max |bias|: the largest |mean fitted − true rating| over the models at the end, in Elo points. Simulated "
        f"votes ({results[0].strategy if results else ''}): {shares[0] + shares[1]:.0%} decisive, {shares[2]:.0%} tie, "
        f"{shares[3]:.0%} both bad.",
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.simulate",
        description="Simulate annotators voting from the taxonomy benchmark's human Elo and report, per sampling "
                    "strategy, the votes until the ranking settles and the coverage of the 95% intervals.",
    )
    parser.add_argument("--repetitions", type=int, default=200, help="seeded arenas per strategy (default 200)")
    parser.add_argument("--max-votes", type=int, default=60_000, help="votes per arena (default 60000)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help=f"comma-separated strategies (default {','.join(STRATEGIES)})")
    parser.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    parser.add_argument("--bootstrap-rounds", type=int, default=1000,
                        help="bootstrap rounds of the coverage check (default 1000, as the leaderboard)")
    parser.add_argument("--coverage-at", type=int, default=3370,
                        help="also check coverage at this many votes (default 3370, the benchmark's; 0: skip)")
    parser.add_argument("--step", type=int, default=50, help="smallest gap between checkpoints in votes (default 50)")
    parser.add_argument("--growth", type=float, default=0.02, help="checkpoint gap as a share of the votes so far")
    parser.add_argument("--refit-every", type=int, default=50, help="active: refit at least this many votes apart")
    parser.add_argument("--refit-growth", type=float, default=0.02, help="active: refit when votes grew by this share")
    parser.add_argument("--redraw-every", type=int, default=100,
                        help="recompute the pair probabilities from the counts every this many votes (default 100)")
    defaults = SamplingParams()
    parser.add_argument("--active-resolution", type=float, default=defaults.active_resolution,
                        help=f"active: resolution s in Elo points (default {defaults.active_resolution})")
    parser.add_argument("--active-sharpness", type=float, default=defaults.active_sharpness,
                        help=f"active: power α of the weights (default {defaults.active_sharpness})")
    parser.add_argument("--active-floor", type=float, default=defaults.active_floor,
                        help=f"active: exploration share ε (default {defaults.active_floor})")
    parser.add_argument("--active-cap", type=float, default=defaults.active_cap,
                        help=f"active: most a pair gets, times the uniform share (default {defaults.active_cap})")
    parser.add_argument("--ridge", type=float, default=defaults.ridge,
                        help=f"active: prior precision of the sampler's fit (default {defaults.ridge})")
    parser.add_argument("--balance-power", type=float, default=defaults.balance_power,
                        help=f"balanced: power of the deficits (default {defaults.balance_power})")
    parser.add_argument("--judge-votes", type=int, default=0,
                        help="also simulate a judge, biased toward one model, voting on this many battles no person "
                             "saw beside --human-votes human ones, and report the human votes the human + judge (PPI) "
                             "board saves at equal interval width (tools.coverage; default 0: skip)")
    parser.add_argument("--human-votes", type=int, default=2000, help="human votes of the --judge-votes study")
    parser.add_argument("--balance-cap", type=float, default=defaults.balance_cap,
                        help="balanced: a pair's share stays within 1/cap..cap times uniform "
                             f"(default {defaults.balance_cap})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for strategy in strategies:
        try:
            get_strategy(strategy)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
    if args.repetitions < 1 or args.max_votes < args.step:
        print("--repetitions must be >= 1 and --max-votes at least --step.", file=sys.stderr)
        return 2
    try:
        params = SamplingParams(balance_cap=args.balance_cap, balance_power=args.balance_power,
                                active_resolution=args.active_resolution,
                                active_sharpness=args.active_sharpness, active_floor=args.active_floor,
                                active_cap=args.active_cap, ridge=args.ridge)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    coverage_at = args.coverage_at or None
    results = []
    for strategy in strategies:
        rng = np.random.default_rng([args.seed, STRATEGIES.names().index(strategy)])
        results.append(simulate_strategy(
            strategy, repetitions=args.repetitions, max_votes=args.max_votes, seed=rng, params=params,
            step=args.step, growth=args.growth, refit_every=args.refit_every, refit_growth=args.refit_growth,
            redraw_every=args.redraw_every,
            bootstrap_rounds=args.bootstrap_rounds, coverage_at=coverage_at,
        ))
        print(f"{strategy}: done in {results[-1].seconds:.0f} s", file=sys.stderr, flush=True)
    print(format_table(results, repetitions=args.repetitions, max_votes=args.max_votes, coverage_at=coverage_at))
    if args.judge_votes:
        from tools.judge_study import ppi_coverage, ppi_table

        truth = centred_truth(list(TRUE_ELO.values()))
        print("\n" + ppi_table(ppi_coverage(truth, args.repetitions, args.human_votes, args.judge_votes, args.seed),
                                args.repetitions, 150.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
