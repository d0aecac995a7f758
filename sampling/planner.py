"""The study planner: how many more votes, per sampling strategy, until a target holds.

Targets (:class:`Target`, written as on the command line):

- ``ci=X``: every model's 95% interval is within ±X Elo points;
- ``top=K``: the top K are settled: the K best fitted models are the truly best K (in any order), from then on;
- ``spearman=R``: Spearman's ρ between the fitted ranking and the final one is at least R, from then on.

Method (:func:`plan_study`): the current votes are fitted (:func:`sampling.strategies.fit_state`: Bradley–Terry with
the leaderboard's tie policy and prior, ratings R̂ and their covariance Σ); ``repetitions`` possible truths are drawn
from N(R̂, Σ), the uncertainty the votes leave (a model without votes gets one drawn around the others), and for each
strategy the arena is simulated onwards from the current votes (:func:`sampling.simulation.walk`: the app's own
draws, refits and warm-up), with annotators who answer from the drawn truth: a vote is decisive, a tie or both bad
with the shares seen so far, and decisive votes follow Bradley–Terry. At checkpoints (every 2% of the votes) each
target is checked against that repetition's truth: the intervals are the Fisher-information (Wald) intervals of the
fit, R̂_i ± 1.96·√Σ_ii, which the leaderboard's bootstrap intervals follow closely (half-widths 0–4% wider on
average from 500 votes on, a model's within about ±10%; ``tests/test_planner.py``).
The votes still needed are the first checkpoint from which a target holds to the end of the horizon, less the votes
cast; the plan reports their median and their 10th–90th percentiles over the repetitions, "more than" the horizon
where most repetitions never got there.

Checked on simulated arenas (``tests/test_planner.py``): a planner's estimate falls within ±25% of the votes the
arena actually needed in at least 80% of repetitions for the interval target; the settling targets (top K,
Spearman) depend on luck far more than on the votes, so their 10–90% range is what to read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit

from sampling.simulation import (
    Schedule,
    checkpoints,
    count_tensors,
    pair_outcomes_of,
    settled_at,
    spearman_rows,
    top_k_rows,
    walk,
)
from sampling.strategies import (
    ELO_PER_NAT,
    SamplingParams,
    elo_covariance,
    fisher_information,
    fit_state,
    get_strategy,
    pair_index,
    pair_probabilities,
    pair_votes,
    win_matrices,
)
from sampling.warmup import with_warmup

_TARGET = re.compile(r"^\s*(ci|top|spearman)\s*=\s*([0-9.]+)\s*$")
DEFAULT_REPETITIONS = 40
DEFAULT_SHARES = (0.79, 0.14, 0.07)  # decisive, tie, both bad, before any vote (the simulation's annotators)


@dataclass(frozen=True)
class Target:
    """One target of a study: ``kind`` ``ci`` (± Elo points), ``top`` (K models) or ``spearman`` (a correlation)."""

    kind: str
    value: float

    @classmethod
    def parse(cls, text: str) -> Target:
        """``ci=15``, ``top=3`` or ``spearman=0.95``; a ValueError naming the forms otherwise."""
        match = _TARGET.match(text or "")
        forms = "ci=X (every interval within ±X Elo), top=K (the top K settled) or spearman=R (Spearman >= R)"
        if not match:
            raise ValueError(f"Target {text!r}: write {forms}.")
        kind, value = match.group(1), float(match.group(2))
        if kind == "ci" and not value > 0:
            raise ValueError(f"Target {text!r}: the interval's half-width must be more than 0 Elo points.")
        if kind == "top" and (value != int(value) or value < 1):
            raise ValueError(f"Target {text!r}: top takes a whole number of models, at least 1 (e.g. top=3).")
        if kind == "spearman" and not 0 < value <= 1:
            raise ValueError(f"Target {text!r}: spearman takes a correlation above 0 and at most 1 (e.g. 0.95).")
        return cls(kind, value)

    def __str__(self) -> str:
        return f"{self.kind}={self.value:g}"

    def describe(self) -> str:
        """The target in words: "every interval is within ±15", "the top 3 are settled", "Spearman >= 0.95"."""
        if self.kind == "ci":
            return f"every interval is within ±{self.value:g}"
        if self.kind == "top":
            return f"the top {int(self.value)} are settled"
        return f"Spearman against the final ranking is at least {self.value:g}"


@dataclass(frozen=True)
class PlanRow:
    """The votes still needed for one target under one strategy, over the simulated repetitions: the ``median``,
    the 10th and 90th percentiles (``low``, ``high``), and the share of repetitions that got there within the
    ``horizon`` (more votes); ``holds_now`` when it already holds (median 0)."""

    strategy: str
    target: Target
    median: float
    low: float
    high: float
    reached: float
    horizon: int

    @property
    def holds_now(self) -> bool:
        return self.median == 0 and self.reached >= 0.5

    @property
    def beyond_horizon(self) -> bool:
        """Most repetitions never got there within the horizon: the median is a lower bound."""
        return self.reached < 0.5

    def sentence(self) -> str:
        """"About 1,900 more votes until every interval is within ±15" (or that it holds, or "more than")."""
        return plan_sentence(self.target, 0.0 if self.holds_now else math.inf if self.beyond_horizon else self.median,
                             self.horizon)


def plan_sentence(target: Target, votes: float, horizon: int) -> str:
    """"About 1,900 more votes until every interval is within ±15"; "Every interval is within ±15 already" for 0 votes;
    "More than 20,000 more votes until ..." for ``inf``."""
    if votes == 0:
        words = f"{target.describe()} already"
    elif math.isinf(votes):
        words = f"more than {horizon:,} more votes until {target.describe()}"
    else:
        words = f"about {round_votes(votes):,} more votes until {target.describe()}"
    return words[0].upper() + words[1:]


@dataclass(frozen=True)
class StudyPlan:
    """What :func:`plan_study` found: the rows, the votes it started from, the repetitions and the seed."""

    rows: tuple[PlanRow, ...]
    votes: int
    repetitions: int
    seed: int

    def row(self, strategy: str, target: Target) -> PlanRow:
        return next(r for r in self.rows if r.strategy == strategy and r.target == target)


def round_votes(votes: float) -> int:
    """Two significant figures (1,937 → 1,900; 84 → 84): an estimate, not a count."""
    if votes < 100:
        return int(round(votes))
    digits = int(math.floor(math.log10(votes))) - 1
    return int(round(votes, -digits))


def outcome_shares(counts: np.ndarray) -> tuple[float, float, float]:
    """(decisive, tie, both bad) shares of the votes in count tensors (n, n, 4); the defaults before any vote."""
    totals = np.asarray(counts, dtype=np.float64).reshape(-1, 4).sum(axis=0)
    if totals.sum() == 0:
        return DEFAULT_SHARES
    shares = totals / totals.sum()
    return float(shares[0] + shares[1]), float(shares[2]), float(shares[3])


def draw_truths(ratings: np.ndarray, cov: np.ndarray, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """``repetitions`` rating vectors (R, n) from N(ratings, cov); a model without a rating (NaN) gets one from
    N(mean, sd) of the rated models (sd at least 50 Elo)."""
    ratings = np.asarray(ratings, dtype=np.float64)
    rated = np.isfinite(ratings)
    n = len(ratings)
    draws = np.zeros((repetitions, n))
    if rated.any():
        sub = cov[np.ix_(rated, rated)]
        draws[:, rated] = rng.multivariate_normal(ratings[rated], sub, size=repetitions, method="eigh")
    if (~rated).any():
        centre = ratings[rated].mean() if rated.any() else 1000.0
        spread = max(float(ratings[rated].std()) if rated.sum() > 1 else 0.0, 50.0)
        draws[:, ~rated] = rng.normal(centre, spread, size=(repetitions, int((~rated).sum())))
    return draws


def bradley_terry_outcomes(truths: np.ndarray, shares: tuple[float, float, float]) -> np.ndarray:
    """(R, K, 4) outcome probabilities per pair: decisive with the share seen so far, split by Bradley–Terry on the
    drawn ratings; ties and both-bad with theirs."""
    decisive, tie, both_bad = shares
    i, j = pair_index(truths.shape[-1])
    p = expit((truths[..., i] - truths[..., j]) / ELO_PER_NAT)
    return np.stack([decisive * p, decisive * (1 - p), np.full(p.shape, tie), np.full(p.shape, both_bad)], axis=-1)


def default_horizon(votes: int) -> int:
    """More votes the simulation looks ahead: four times the votes so far, at least 50,000."""
    return max(50_000, 4 * votes)


def plan_study(
    counts: np.ndarray,
    *,
    targets: Sequence[Target],
    strategies: Sequence[str],
    params: SamplingParams = SamplingParams(),
    repetitions: int = DEFAULT_REPETITIONS,
    seed: int = 0,
    horizon: int | None = None,
    z: float = 1.96,
) -> StudyPlan:
    """The votes still needed until each target holds, per strategy (module docstring), from the count tensor
    (n, n, 4) of the votes so far (those the leaderboard fits: one slice, one voter kind). ``params`` carries the
    leaderboard's tie policy and prior (``ridge``) and the warm-up; every strategy sees the same drawn truths."""
    counts = np.asarray(counts, dtype=np.int64)
    n = counts.shape[0]
    for strategy in strategies:
        get_strategy(strategy)
    if n < 2:
        raise ValueError("Planning needs at least two models with images; add models first.")
    top = [t for t in targets if t.kind == "top"]
    if top and max(t.value for t in top) >= n:
        raise ValueError(f"Target top={int(max(t.value for t in top))}: there are only {n} models; ask for fewer.")
    votes = int(counts.sum())
    horizon = default_horizon(votes) if horizon is None else int(horizon)
    state = fit_state(counts, params=params)
    rng = np.random.default_rng(seed)
    truths = draw_truths(state.ratings, state.cov, repetitions, rng)
    outcome_p = bradley_terry_outcomes(truths, outcome_shares(counts))
    start = pair_outcomes_of(counts)
    points = np.concatenate([[votes], checkpoints(votes + horizon, step=50, growth=0.02, start=votes)])
    schedule = Schedule(redraw_growth=0.01)
    rows = []
    for index, strategy in enumerate(strategies):
        ok = {t: np.zeros((repetitions, len(points)), dtype=bool) for t in targets}
        walked = walk(strategy, outcome_p=outcome_p, points=points, repetitions=repetitions,
                      rng=np.random.default_rng([seed, index + 1]), params=params, schedule=schedule, start=start)
        fitted = None
        for c, (_, outcomes) in enumerate(walked):
            fitted = fit_state(count_tensors(outcomes, n), params=params,
                               theta0=None if fitted is None else fitted.theta)
            estimates = np.nan_to_num(fitted.ratings, nan=-np.inf)
            for target in targets:
                if target.kind == "ci":
                    half = z * np.sqrt(np.clip(np.diagonal(fitted.cov, axis1=-2, axis2=-1), 0.0, None))
                    ok[target][:, c] = np.all(np.where(np.isfinite(fitted.ratings), half, np.inf) <= target.value,
                                              axis=-1)
                elif target.kind == "top":
                    ok[target][:, c] = top_k_rows(estimates, truths, int(target.value))
                else:
                    ok[target][:, c] = spearman_rows(estimates, truths) >= target.value
            if all(t.kind == "ci" for t in targets) and all(ok[t][:, c].all() for t in targets):
                for t in targets:  # intervals only narrow as votes come in: they hold to the horizon
                    ok[t][:, c:] = True
                break
        for target in targets:
            at, settled = settled_at(ok[target], points)
            more = np.where(settled, at - votes, horizon).astype(np.float64)
            rows.append(PlanRow(strategy, target, float(np.median(more)), float(np.percentile(more, 10)),
                                float(np.percentile(more, 90)), float(settled.mean()), horizon))
    return StudyPlan(tuple(rows), votes, repetitions, seed)


def interval_votes(counts: np.ndarray, strategy: str, half_width: float, *, params: SamplingParams = SamplingParams(),
                   horizon: int | None = None, z: float = 1.96) -> float:
    """A quick estimate of the more votes until every model's 95% interval is within ±``half_width`` Elo, without
    random draws (the leaderboard's line; :func:`plan_study` simulates): the expected path of the study if the current
    fit were the truth. Each vote adds, in expectation, G = Σ_k π_k·d·p_k(1 − p_k)·x_k x_kᵀ to the Fisher information
    H, where π_k are the strategy's pair shares (:func:`sampling.strategies.pair_probabilities` with the warm-up), d the
    share of decisive votes so far, p_k the fitted probability that pair k's first model wins and x_k = e_i − e_j; the
    shares are recomputed from the expected counts and the expected fit (the current ratings, covariance
    P(H + 11ᵀ/n)⁻¹P as :func:`sampling.strategies.fit_state`) every 10% of the votes, and the half-widths z·√Σ_ii
    followed until they are all within ±``half_width`` (the last step bisected). 0 when they already are; ``inf``
    beyond ``horizon``."""
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.shape[0]
    votes = float(counts.sum())
    horizon = default_horizon(int(votes)) if horizon is None else int(horizon)
    state = fit_state(counts, params=params)
    wins = win_matrices(counts, params.tie_policy)
    info = fisher_information(wins + wins.T, state.theta, params.ridge)
    i, j = pair_index(n)
    available = np.ones(len(i), dtype=bool)
    pairs = pair_votes(counts)
    informative = outcome_shares(counts)[0] * expit(state.theta[i] - state.theta[j]) * \
        expit(state.theta[j] - state.theta[i])

    def widest(information: np.ndarray) -> tuple[float, np.ndarray]:
        cov = elo_covariance(information)
        return float(z * np.sqrt(np.clip(np.diagonal(cov), 0.0, None)).max()), cov

    done = 0.0
    width, cov = widest(info)
    if width <= half_width:
        return 0.0
    spec = get_strategy(strategy)
    fixed = None if spec.needs_counts or spec.needs_fit else pair_probabilities(strategy, available=available)
    while done < horizon:
        if fixed is None:
            shares = pair_probabilities(strategy, available=available, pair_counts=pairs,
                                        state=replace(state, cov=cov), params=params)
        else:
            shares = fixed
        shares = with_warmup(shares, pairs, available, params)
        per_vote = np.zeros((n, n))
        np.add.at(per_vote, (i, j), -shares * informative)
        np.add.at(per_vote, (j, i), -shares * informative)
        per_vote[np.arange(n), np.arange(n)] = -per_vote.sum(axis=1)
        step = min(max(100.0, 0.1 * (votes + done)), horizon - done)
        width, cov = widest(info + step * per_vote)
        if width <= half_width:
            low, high = 0.0, step
            while high - low > max(1.0, 0.005 * (done + high)):
                middle = 0.5 * (low + high)
                low, high = (low, middle) if widest(info + middle * per_vote)[0] <= half_width else (middle, high)
            return done + high
        info, pairs, done = info + step * per_vote, pairs + step * shares, done + step
    return math.inf


def format_plan(plan: StudyPlan) -> str:
    """The plan as a table: per target and strategy, the median more votes and the 10–90% range."""
    width = max([8, *(len(r.strategy) for r in plan.rows)])
    lines = [f"From {plan.votes:,} votes; {plan.repetitions} simulated continuations per strategy (seed {plan.seed}).",
             f"{'target':<14} {'strategy':<{width}} {'more votes':>12} {'10%–90%':>19} {'reached':>8}"]
    for r in plan.rows:
        if r.holds_now:
            median = "holds now"
        elif r.beyond_horizon:
            median = f">{r.horizon:,}"
        else:
            median = f"{round_votes(r.median):,}"
        spread = f"{round_votes(r.low):,}–{round_votes(r.high):,}"
        lines.append(f"{str(r.target):<14} {r.strategy:<{width}} {median:>12} {spread:>19} {r.reached:8.0%}")
    lines.append("Intervals: the fit's Fisher-information 95% intervals. reached: the share of continuations in which "
                 "the target held within the horizon.")
    return "\n".join(lines)
