"""How many votes, and how many human seconds, each sampling strategy needs: a seeded simulation of annotators.

``python -m tools.simulate [--scenario benchmark|hard --repetitions 200 --strategies uniform,balanced,active
--seed 0]``

Scenarios (:data:`SCENARIOS`):

- ``benchmark``: the truth (:data:`TRUE_ELO`) is the taxonomy benchmark's published human Elo with definitions, Easy
  subset (T1; 12 systems, 900–1056), centred to mean 1000 like every fit; 60,000 votes.
- ``hard``: 30 models whose neighbours are 5 to 15 Elo apart (:data:`HARD_GAPS`, many near-ties), one of them
  (the second best, ``newcomer``) added after 5,000 votes; 100,000 votes.

The annotators (:func:`sampling.simulation.outcome_probabilities`): a vote is both bad with probability q_i·q_j, q
falling linearly from :data:`BAD_TOP` for the best model to :data:`BAD_BOTTOM` for the worst, else a Davidson tie or
win (15% ties between equal models); among decisive votes exactly Bradley–Terry. With these rates about 7% of votes
are both bad and 14% ties under uniform sampling (the table's last line gives the shares of the first strategy run).
Prompts are not simulated: the simulated annotators answer from the models' ratings only.

The draws are the app's (:func:`sampling.simulation.walk`: :func:`sampling.strategies.pair_probabilities`, the
server's refit on the server's cadence, every 50 votes, the warm-up of new models; the pair probabilities are
recomputed every 50 votes, where the server recomputes them at every draw). The repetitions of one strategy run in
lock-step as one batch, and each
strategy has its own random stream (``numpy.random.default_rng([seed, index of the strategy in the registry])``), so
adding a strategy changes no other row. At checkpoints (every ``--step`` votes or ``--growth`` of the votes so far,
whichever is more) the leaderboard's point estimates are fitted (:func:`ratings.newton_bt`, ridge 1e-6, ties dropped)
over the models that have arrived, and the criteria checked:

- *Spearman*: the votes from which Spearman's ρ between the fitted and the true ratings stays ≥ 0.95 at every later
  checkpoint up to ``--max-votes``;
- *top 3*: the votes from which the three best fitted models are the true top three (in any order), from then on;
- *coverage*: at ``--max-votes`` (and at ``--coverage-at`` votes: the benchmark's 3,370 by default), the share of
  models whose true (centred) rating lies inside the leaderboard's 95% bootstrap interval
  (:func:`ratings.fit_bradley_terry`, ``--bootstrap-rounds`` rounds);
- *bias*: the largest |mean over repetitions of fitted − true rating| over the models at ``--max-votes``;
- *warm-up* (a scenario with a late model): the votes after it joined until it had its first W battles
  (``SamplingParams.warmup_battles``; 200 when ``--warmup-battles 0`` turns the warm-up off), and the largest of them
  as a share of the votes that followed its arrival.

A repetition that never settles by ``--max-votes`` counts as ``--max-votes`` (the "never" column says how many;
its mean is then a lower bound).

Human seconds (:class:`TimeModel`): a pairwise vote costs an annotator the seconds to look and decide plus the
seconds the page takes between two battles, measured by the page's own timing tool; the second table turns each
strategy's votes into annotator hours, against uniform pairwise; ``--timings-from DATABASE`` takes the seconds to look
and decide from the votes an arena recorded.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ratings.bradley_terry import fit_bradley_terry, newton_bt
from sampling.kwise_simulation import four_image_walk
from sampling.simulation import (  # noqa: F401
    DAVIDSON_NU,
    Schedule,
    checkpoints,
    count_tensors,
    outcome_probabilities,
    settled_at,
    spearman_rows,
    top_k_rows,
    walk,
)
from sampling.strategies import STRATEGIES, UNIFORM, SamplingParams, get_strategy, pair_index

TRUE_ELO: dict[str, float] = {
    "DeepFloyd IF": 1056, "Playground-v2": 1055, "FLUX": 1050, "SDXL Turbo": 1039, "SD3": 1033, "SDXL": 1015,
    "Hunyuan-DiT": 994, "PixArt-Sigma": 990, "Kandinsky 3": 961, "Retrieval": 960, "Openjourney": 941,
    "SD-v1-5": 900,
}
HARD_GAPS: tuple[int, ...] = (8, 12, 15, 6, 9, 14, 5, 11, 7, 13, 10, 5, 12, 9, 6, 15, 8, 11, 5, 14, 7, 10, 13, 6, 9,
                              12, 5, 11, 8)
"""The ``hard`` scenario: Elo gaps between neighbours, best first (29 gaps of 5–15 points, 30 models)."""
BAD_TOP = 0.15
BAD_BOTTOM = 0.45
SPEARMAN_TARGET = 0.95
FOUR_PAGE_SECONDS = 0.0581 + 0.0061  # four-image page (next set preloaded): vote → names + Next → images, 1280×800
FOUR_IMAGE_STRATEGIES = ("uniform", "ksort-ucb")
MIN_TIMED_VOTES = 30  # --timings-from: fewer timed votes of a kind than this, and the time model keeps its figure


@dataclass(frozen=True)
class TimeModel:
    """Seconds of an annotator's time per vote, by kind of vote.

    - ``look_seconds``: looking at a pairwise battle and deciding. The arena's quality rules take a careful
      annotator's pace as about 6 s a vote (``ARENA_QUALITY_MAX_PER_3_HOURS`` = 1,800 votes in three hours; a vote
      under ``ARENA_QUALITY_FAST_SECONDS`` = 5 s counts as fast), so 6 s; ``--look-seconds`` changes it.
    - ``page_seconds``: what the page adds per pairwise vote, measured with ``python -m tools.page_timing --votes 40``
      (docs/benchmarks.md, 2026-11-25, 1280×800 medians): 71.8 ms from the vote to the names, 11.2 ms from Next battle
      to the next two images.
    - ``four_look_seconds``: looking at four images and picking the best (and, for half of the votes, the worst):
      **assumed** 2 × ``look_seconds`` = 12 s (four images to look at instead of two, one or two picks instead of
      one); no annotator has been timed on the four-image page yet, so ``--four-look-seconds`` changes it and the
      table says at which figure the four-image mode would break even.
    - ``four_page_seconds``: what the page adds per four-image vote, measured with ``python -m tools.page_timing
      --votes 40 --four-image`` (docs/benchmarks.md, 2026-11-28, 1280×800 medians): vote → names plus Next → the
      four images (:data:`FOUR_PAGE_SECONDS`).
    - ``four_look_source``: whether ``four_look_seconds`` is ``assumed`` or ``measured`` (:func:`recorded_time_model`).

    ``--timings-from DATABASE`` replaces both looking figures by the median seconds of that arena's own timed votes
    (:func:`recorded_time_model`), keeping a figure above where the database has too few votes of its kind.
    """

    look_seconds: float = 6.0
    page_seconds: float = 0.0718 + 0.0112
    four_look_seconds: float = 12.0
    four_page_seconds: float = FOUR_PAGE_SECONDS
    four_look_source: str = "assumed"  # where four_look_seconds comes from, as the table's last line says it

    @property
    def four_image_seconds(self) -> float:
        return self.four_look_seconds + self.four_page_seconds

    @property
    def pairwise_seconds(self) -> float:
        return self.look_seconds + self.page_seconds

    def seconds(self, mode: str) -> float | None:
        """Seconds per vote of ``mode`` (``pairwise`` or ``four-image``); None where the model has no figure yet."""
        return {"pairwise": self.pairwise_seconds, "four-image": self.four_image_seconds}[mode]


def recorded_time_model(database: str, base: TimeModel = TimeModel()) -> tuple[TimeModel, list[str]]:
    """``base`` with the seconds to look and decide taken from ``database``'s own votes (a path or a PostgreSQL URL):
    per kind of vote, the median ``seconds_to_vote`` of its counted human votes
    (:func:`datamodel.vote_table.recorded_vote_seconds`; the median, because an annotator who walks away from an open
    battle records minutes), where it has at least :data:`MIN_TIMED_VOTES` of them; else ``base``'s figure. Returns
    the model and one line per kind saying which it is (the page's own seconds stay the measured ones)."""
    from datamodel.connection import connect, is_postgres_url
    from datamodel.vote_table import recorded_vote_seconds

    if not is_postgres_url(database) and not Path(database).is_file():
        raise ValueError(f"--timings-from {database}: no such database file. Give the arena's database (ARENA_DB) "
                         "or its PostgreSQL URL.")
    db = connect(database, migrate_schema=False)
    try:
        seconds = recorded_vote_seconds(db)
    finally:
        db.close()
    figures = {"pairwise": base.look_seconds, "four-image": base.four_look_seconds}
    notes = []
    for kind, assumed in (("pairwise", "the quality rules' pace of a careful annotator"),
                          ("four-image", "twice a pairwise vote's 6 s")):
        timed = seconds[kind]
        if len(timed) >= MIN_TIMED_VOTES:
            figures[kind] = float(np.median(timed))
            notes.append(f"{kind}: {figures[kind]:.1f} s to look and decide, the median of {len(timed)} timed human "
                         f"{kind} votes in {database}.")
        else:
            notes.append(f"{kind}: {figures[kind]:.1f} s to look and decide is an assumption ({assumed}): "
                         f"{database} has {len(timed)} timed {kind} votes, fewer than {MIN_TIMED_VOTES}.")
    four_source = "measured" if len(seconds["four-image"]) >= MIN_TIMED_VOTES else base.four_look_source
    return replace(base, look_seconds=figures["pairwise"], four_look_seconds=figures["four-image"],
                   four_look_source=four_source), notes


@dataclass(frozen=True)
class Scenario:
    """A simulated study: the true ratings (Elo), the models' names, when each joins (votes cast before it), the
    votes per arena and when coverage is also checked."""

    name: str
    description: str
    true_elo: tuple[float, ...]
    names: tuple[str, ...]
    arrivals: tuple[int, ...]
    max_votes: int
    coverage_at: int | None

    @property
    def late(self) -> list[int]:
        """The models that join after the first vote."""
        return [m for m, at in enumerate(self.arrivals) if at > 0]


def _hard_scenario() -> Scenario:
    ratings = -np.concatenate([[0], np.cumsum(HARD_GAPS)]).astype(np.float64)
    names = ["newcomer" if m == 1 else f"hard-{m + 1:02d}" for m in range(len(ratings))]
    arrivals = [5000 if m == 1 else 0 for m in range(len(ratings))]
    return Scenario("hard", "30 models 5-15 Elo apart, the second best added after 5,000 votes",
                    tuple(centred_truth(ratings)), tuple(names), tuple(arrivals), 100_000, 20_000)


def centred_truth(true_elo: Sequence[float] | np.ndarray) -> np.ndarray:
    """The true ratings shifted to mean 1000, the scale every fit reports."""
    truth = np.asarray(true_elo, dtype=np.float64)
    return truth - truth.mean() + 1000.0


SCENARIOS: dict[str, Scenario] = {
    "benchmark": Scenario("benchmark", "the taxonomy benchmark's 12 human ratings", tuple(TRUE_ELO.values()),
                          tuple(TRUE_ELO), (0,) * len(TRUE_ELO), 60_000, 3370),
    "hard": _hard_scenario(),
}


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
    counts = count_tensors(pair_outcomes, n)
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
    warmup_votes: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (repetitions,) to W battles; 0: none
    warmup_share: float = float("nan")  # the largest of warmup_votes over the votes after the late model joined
    mode: str = "pairwise"  # the kind of vote the strategy asks for (TimeModel.seconds)


def warmup_target(params: SamplingParams) -> int:
    """The battles the warm-up report counts to: the warm-up's W, or the default W when the warm-up is off (to show
    what a late model waits without it)."""
    return params.warmup_battles or SamplingParams.warmup_battles


def simulate_strategy(
    strategy: str,
    *,
    true_elo: Sequence[float] = tuple(TRUE_ELO.values()),
    arrivals: Sequence[int] | None = None,
    repetitions: int = 200,
    max_votes: int = 60_000,
    seed: int | np.random.Generator = 0,
    params: SamplingParams = SamplingParams(),
    step: int = 50,
    growth: float = 0.02,
    refit_every: int = 50,
    refit_growth: float = 0.0,
    redraw_every: int = 50,
    bootstrap_rounds: int = 1000,
    coverage_at: int | None = 3370,
) -> StrategyResult:
    """Run ``repetitions`` seeded arenas of ``max_votes`` votes under ``strategy`` (module docstring); ``arrivals``
    gives the votes cast before each model joins (default: every model from the start)."""
    started = time.perf_counter()
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    truth = centred_truth(true_elo)
    n = len(truth)
    joined = np.zeros(n, dtype=np.int64) if arrivals is None else np.asarray(arrivals, dtype=np.int64)
    outcome_p = outcome_probabilities(truth, bad_top=BAD_TOP, bad_bottom=BAD_BOTTOM)
    points = checkpoints(max_votes, step=step, growth=growth)
    extra = [coverage_at] if coverage_at is not None and 0 < coverage_at < max_votes else []
    points = np.unique(np.concatenate([points, extra, joined[(joined > 0) & (joined < max_votes)]]))
    i, j = pair_index(n)
    late = np.flatnonzero(joined > 0)
    warmup_votes: np.ndarray = np.full(repetitions, -1, dtype=np.int64)
    theta = np.zeros((repetitions, n))
    spearman_ok = np.zeros((repetitions, len(points)), dtype=bool)
    top_ok = np.zeros((repetitions, len(points)), dtype=bool)
    coverage_early = np.full(repetitions, np.nan)
    outcomes = np.zeros((repetitions, n * (n - 1) // 2, 4), dtype=np.int64)
    schedule = Schedule(refit_every=refit_every, refit_growth=refit_growth, redraw_every=redraw_every)
    for c, (point, outcomes) in enumerate(walk(strategy, outcome_p=outcome_p, points=points, repetitions=repetitions,
                                               rng=rng, params=params, schedule=schedule, arrivals=joined)):
        present = joined <= point
        theta, _ = newton_bt(_leaderboard_wins(outcomes, n), ridge=1e-6, theta0=theta, max_iter=100)
        spearman_ok[:, c] = spearman_rows(theta[:, present], truth[present]) >= SPEARMAN_TARGET
        top_ok[:, c] = top_k_rows(theta[:, present], truth[present])
        if len(late):
            battles = outcomes.sum(axis=2)[:, (i == late[0]) | (j == late[0])].sum(axis=1)
            warmup_votes = np.where((warmup_votes < 0) & (battles >= warmup_target(params)),
                                    point - joined[late[0]], warmup_votes)
        if coverage_at is not None and point == coverage_at:
            coverage_early, _ = _coverage(outcomes, truth, bootstrap_rounds, rng)
    spearman_votes, spearman_settled = settled_at(spearman_ok, points)
    top_votes, top_settled = settled_at(top_ok, points)
    coverage, fitted = _coverage(outcomes, truth, bootstrap_rounds, rng)
    shares = outcomes.sum(axis=(0, 1)) / max(outcomes.sum(), 1)
    following = max_votes - joined[late[0]] if len(late) else 0
    warmup_votes = np.where(warmup_votes < 0, following, warmup_votes) if len(late) else np.zeros(0)
    warmup_share = float(warmup_votes.max() / following) if len(late) and following > 0 else float("nan")
    return StrategyResult(strategy, spearman_votes, spearman_settled, top_votes, top_settled, coverage,
                          coverage_early, fitted.mean(axis=0) - truth, shares, time.perf_counter() - started,
                          outcomes.sum(axis=2), warmup_votes, warmup_share)


def simulate_four_image(
    strategy: str,
    *,
    true_elo: Sequence[float] = tuple(TRUE_ELO.values()),
    arrivals: Sequence[int] | None = None,
    repetitions: int = 200,
    max_votes: int = 20_000,
    seed: int | np.random.Generator = 0,
    step: int = 50,
    growth: float = 0.02,
    worst_share: float = 0.5,
) -> StrategyResult:
    """Run ``repetitions`` seeded arenas of ``max_votes`` four-image votes drawn by ``strategy`` (``uniform`` or
    ``ksort-ucb``; :mod:`sampling.kwise_simulation`) and check the criteria at the same checkpoints as the pairwise
    runs; the fit is the leaderboard's ``kwise-rank-breaking`` point estimate (the rank-broken pairs' Bradley–Terry
    fit). Coverage is not simulated for this mode (NaN)."""
    started = time.perf_counter()
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    truth = centred_truth(true_elo)
    n = len(truth)
    joined = np.zeros(n, dtype=np.int64) if arrivals is None else np.asarray(arrivals, dtype=np.int64)
    points = checkpoints(max_votes, step=step, growth=growth)
    theta = np.zeros((repetitions, n))
    spearman_ok = np.zeros((repetitions, len(points)), dtype=bool)
    top_ok = np.zeros((repetitions, len(points)), dtype=bool)
    wins = np.zeros((repetitions, n, n))
    for c, (point, wins) in enumerate(four_image_walk(strategy, true_elo=truth, points=points,
                                                      repetitions=repetitions, rng=rng, arrivals=joined,
                                                      worst_share=worst_share)):
        present = joined <= point
        theta, _ = newton_bt(wins, ridge=1e-6, theta0=theta, max_iter=100)
        spearman_ok[:, c] = spearman_rows(theta[:, present], truth[present]) >= SPEARMAN_TARGET
        top_ok[:, c] = top_k_rows(theta[:, present], truth[present])
    spearman_votes, spearman_settled = settled_at(spearman_ok, points)
    top_votes, top_settled = settled_at(top_ok, points)
    fitted = 1000 + (theta - theta.mean(axis=1, keepdims=True)) / np.log(10) * 400
    nothing = np.full(repetitions, np.nan)
    return StrategyResult(f"four-{strategy}", spearman_votes, spearman_settled, top_votes, top_settled, nothing,
                          nothing, fitted.mean(axis=0) - truth, np.array([1.0, 0.0, 0.0, 0.0]),
                          time.perf_counter() - started, np.zeros((repetitions, 0)), mode="four-image")


def coverage_error(coverage: np.ndarray) -> float:
    """The Monte-Carlo standard error of a mean coverage: the sd of the per-repetition coverages over √repetitions
    (the models of one repetition share its votes, so they are not counted as independent)."""
    coverage = np.asarray(coverage, dtype=np.float64)
    return float(coverage.std(ddof=1) / np.sqrt(len(coverage)))


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
    errors = ", ".join(f"{r.strategy} ±{coverage_error(r.coverage):.1%}" for r in results
                       if np.isfinite(r.coverage).all() and len(r.coverage) > 1)
    lines += [
        f"{repetitions} seeded repetitions per strategy, {max_votes} votes each. Votes: from when on the criterion "
        "holds at every later checkpoint;",
        "÷unif: mean, then median, relative to uniform; never: repetitions not settled by the last vote (counted "
        "there).",
        "Coverage: share of models whose true rating lies inside the leaderboard's 95% bootstrap interval, at the "
        f"end{' and at ' + str(coverage_at) + ' votes' if coverage_at else ''}.",
        f"Standard error of the coverage at the end (sd over repetitions / √repetitions): {errors or 'none'}.",
        "max |bias|: the largest |mean fitted − true rating| over the models at the end, in Elo points. Simulated "
        f"votes ({results[0].strategy if results else ''}): {shares[0] + shares[1]:.0%} decisive, {shares[2]:.0%} tie, "
        f"{shares[3]:.0%} both bad.",
    ]
    return "\n".join(lines)


def format_warmup(results: Sequence[StrategyResult], *, late_name: str, joined: int, battles: int) -> str:
    """Per strategy: the votes after the late model joined until it had ``battles`` battles (mean, largest), and
    the largest as a share of the votes that followed."""
    width = max([9, *(len(r.strategy) for r in results)])
    lines = [f"Warm-up of {late_name} (joined after {joined} votes): votes until its first {battles} battles",
             f"{'strategy':{width}} | {'mean':>6} {'largest':>7} | {'largest, share of the votes that followed':>40}"]
    for r in results:
        if r.mode != "pairwise":  # the four-image rows have no warm-up of their own
            continue
        lines.append(f"{r.strategy:{width}} | {r.warmup_votes.mean():6.0f} {r.warmup_votes.max():7d} | "
                     f"{r.warmup_share:40.1%}")
    return "\n".join(lines)


def format_seconds(results: Sequence[StrategyResult], time_model: TimeModel) -> str:
    """Annotator hours until each criterion settles (mean), per strategy and kind of vote, against uniform pairwise."""
    base = {r.strategy: r for r in results}.get(UNIFORM.name)
    width = max([9, *(len(r.strategy) for r in results)])
    lines = [f"Human time (annotator hours, mean) with the time model: a pairwise vote = "
             f"{time_model.look_seconds:.1f} s to look and decide + {time_model.page_seconds:.3f} s of the page",
             f"{'strategy':{width}} | {'vote':>10} {'s/vote':>6} | {'h: Spearman':>11} {'÷unif':>5} | "
             f"{'h: top 3':>8} {'÷unif':>5}"]
    base_seconds = time_model.pairwise_seconds
    for r in results:
        seconds = time_model.seconds(r.mode)
        if seconds is None:
            lines.append(f"{r.strategy:{width}} | {r.mode:>10} {'':>6} | no figure for this kind of vote yet")
            continue
        spearman = r.spearman_votes.mean() * seconds / 3600
        top = r.top_votes.mean() * seconds / 3600
        ratios = ("", "")
        if base is not None:
            ratios = (f"{spearman / (base.spearman_votes.mean() * base_seconds / 3600):5.2f}",
                      f"{top / (base.top_votes.mean() * base_seconds / 3600):5.2f}")
        lines.append(f"{r.strategy:{width}} | {r.mode:>10} {seconds:6.2f} | {spearman:11.1f} {ratios[0]:>5} | "
                     f"{top:8.1f} {ratios[1]:>5}")
    fours = [r for r in results if r.mode == "four-image"]
    if base is not None and fours:
        best = min(fours, key=lambda r: r.spearman_votes.mean())
        even = base.spearman_votes.mean() * base_seconds / best.spearman_votes.mean() - time_model.four_page_seconds
        lines.append(f"A four-image vote = {time_model.four_look_seconds:.1f} s to look and pick "
                     f"({time_model.four_look_source}) + "
                     f"{time_model.four_page_seconds:.3f} s of the page (measured); {best.strategy} breaks even "
                     f"with uniform pairwise on Spearman at {even:.1f} s of looking per four-image vote.")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.simulate",
        description="Simulate annotators voting from known ratings and report, per sampling strategy, the votes and "
                    "annotator hours until the ranking settles, the coverage of the 95% intervals and the warm-up "
                    "of a late model.",
    )
    parser.add_argument("--scenario", choices=list(SCENARIOS), default="benchmark",
                        help="benchmark: the taxonomy benchmark's 12 human ratings (default); hard: 30 models 5-15 "
                             "Elo apart, the second best added after 5,000 votes")
    parser.add_argument("--repetitions", type=int, default=200, help="seeded arenas per strategy (default 200)")
    parser.add_argument("--max-votes", type=int, help="votes per arena (default: the scenario's, 60000 or 100000)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help=f"comma-separated strategies (default {','.join(STRATEGIES)})")
    parser.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    parser.add_argument("--bootstrap-rounds", type=int, default=1000,
                        help="bootstrap rounds of the coverage check (default 1000, as the leaderboard)")
    parser.add_argument("--coverage-at", type=int,
                        help="also check coverage at this many votes (default: the scenario's, 3370 for the "
                             "benchmark; 0: skip)")
    parser.add_argument("--step", type=int, default=50, help="smallest gap between checkpoints in votes (default 50)")
    parser.add_argument("--growth", type=float, default=0.02, help="checkpoint gap as a share of the votes so far")
    parser.add_argument("--refit-every", type=int, default=50, help="active: refit at least this many votes apart")
    parser.add_argument("--refit-growth", type=float, default=0.0,
                        help="active: refit only when the votes also grew by this share (default 0: every "
                             "--refit-every votes, as the server does)")
    parser.add_argument("--redraw-every", type=int, default=50,
                        help="recompute the pair probabilities from the counts every this many votes (default 50)")
    parser.add_argument("--look-seconds", type=float, default=TimeModel.look_seconds,
                        help=f"time model: seconds to look at a pairwise battle and decide (default "
                             f"{TimeModel.look_seconds})")
    parser.add_argument("--four-look-seconds", type=float, default=TimeModel.four_look_seconds,
                        help=f"time model: seconds to look at four images and pick (default "
                             f"{TimeModel.four_look_seconds}, an assumption: see TimeModel)")
    parser.add_argument("--timings-from", metavar="DATABASE",
                        help="time model: take the seconds to look and decide from this arena database's own votes "
                             "(the median seconds_to_vote of its counted human pairwise and four-image votes; a kind "
                             f"with fewer than {MIN_TIMED_VOTES} timed votes keeps the figure above, said so)")
    parser.add_argument("--four-image", default=",".join(FOUR_IMAGE_STRATEGIES),
                        help="comma-separated four-image draws to simulate beside the pairwise strategies (default "
                             f"{','.join(FOUR_IMAGE_STRATEGIES)}; empty: none)")
    parser.add_argument("--four-max-votes", type=int,
                        help="four-image votes per arena (default: a third of --max-votes)")
    parser.add_argument("--worst-share", type=float, default=0.5,
                        help="share of four-image votes that also mark the worst (default 0.5)")
    defaults = SamplingParams()
    parser.add_argument("--active-resolution", type=float, default=defaults.active_resolution,
                        help=f"active: resolution s in Elo points (default {defaults.active_resolution})")
    parser.add_argument("--active-sharpness", type=float, default=defaults.active_sharpness,
                        help=f"active: power α of the weights (default {defaults.active_sharpness})")
    parser.add_argument("--active-floor", type=float, default=defaults.active_floor,
                        help=f"active: exploration share ε (default {defaults.active_floor})")
    parser.add_argument("--active-settle", type=float, default=defaults.active_settle,
                        help="active: expected misordered pairs below which the focused share goes back to balanced "
                             f"in proportion (default {defaults.active_settle}; 0: never)")
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
    parser.add_argument("--warmup-battles", type=int, default=defaults.warmup_battles,
                        help=f"battles a new model gets first (default {defaults.warmup_battles}; 0: no warm-up)")
    parser.add_argument("--warmup-share", type=float, default=defaults.warmup_share,
                        help=f"most draws that go to warming models (default {defaults.warmup_share})")
    parser.add_argument("--active-burnin", type=int, default=defaults.active_burnin,
                        help="active: battles every model needs before it acts on its fit (default: "
                             "--warmup-battles)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    scenario = SCENARIOS[args.scenario]
    max_votes = args.max_votes or scenario.max_votes
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for strategy in strategies:
        try:
            get_strategy(strategy)
        except ValueError as error:
            print(error, file=sys.stderr)
            return 2
    fours = [s.strip() for s in args.four_image.split(",") if s.strip()]
    if any(name not in FOUR_IMAGE_STRATEGIES for name in fours) or not 0 <= args.worst_share <= 1:
        print(f"--four-image takes {', '.join(FOUR_IMAGE_STRATEGIES)}; --worst-share is a share between 0 and 1.",
              file=sys.stderr)
        return 2
    if args.repetitions < 1 or max_votes < args.step:
        print("--repetitions must be >= 1 and --max-votes at least --step.", file=sys.stderr)
        return 2
    try:
        params = SamplingParams(balance_cap=args.balance_cap, balance_power=args.balance_power,
                                active_resolution=args.active_resolution,
                                active_sharpness=args.active_sharpness, active_floor=args.active_floor,
                                active_cap=args.active_cap, active_settle=args.active_settle, ridge=args.ridge,
                                warmup_battles=args.warmup_battles, warmup_share=args.warmup_share,
                                active_burnin=args.active_burnin)
        time_model = TimeModel(look_seconds=args.look_seconds, four_look_seconds=args.four_look_seconds)
        timing_notes: list[str] = []
        if args.timings_from:
            time_model, timing_notes = recorded_time_model(args.timings_from, time_model)
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    coverage_at = scenario.coverage_at if args.coverage_at is None else (args.coverage_at or None)
    results = []
    for strategy in strategies:
        rng = np.random.default_rng([args.seed, STRATEGIES.names().index(strategy)])
        results.append(simulate_strategy(
            strategy, true_elo=scenario.true_elo, arrivals=scenario.arrivals, repetitions=args.repetitions,
            max_votes=max_votes, seed=rng, params=params, step=args.step, growth=args.growth,
            refit_every=args.refit_every, refit_growth=args.refit_growth, redraw_every=args.redraw_every,
            bootstrap_rounds=args.bootstrap_rounds, coverage_at=coverage_at,
        ))
        print(f"{strategy}: done in {results[-1].seconds:.0f} s", file=sys.stderr, flush=True)
    for index, name in enumerate(fours):
        rng = np.random.default_rng([args.seed, len(STRATEGIES) + index])
        results.append(simulate_four_image(
            name, true_elo=scenario.true_elo, arrivals=scenario.arrivals, repetitions=args.repetitions,
            max_votes=args.four_max_votes or max(args.step, max_votes // 3), seed=rng, step=args.step,
            growth=args.growth, worst_share=args.worst_share))
        print(f"four-{name}: done in {results[-1].seconds:.0f} s", file=sys.stderr, flush=True)
    print(f"Scenario {scenario.name}: {scenario.description}; seed {args.seed}.")
    print(format_table(results, repetitions=args.repetitions, max_votes=max_votes, coverage_at=coverage_at))
    if scenario.late and max_votes > scenario.arrivals[scenario.late[0]]:
        late = scenario.late[0]
        print()
        print(format_warmup(results, late_name=scenario.names[late], joined=scenario.arrivals[late],
                            battles=warmup_target(params)))
    print()
    print(format_seconds(results, time_model))
    for note in timing_notes:
        print(note)
    if args.judge_votes:
        from tools.judge_study import ppi_coverage, ppi_table

        truth = centred_truth(list(TRUE_ELO.values()))
        print("\n" + ppi_table(ppi_coverage(truth, args.repetitions, args.human_votes, args.judge_votes, args.seed),
                                args.repetitions, 150.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
