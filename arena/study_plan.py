"""The study planner for this arena's votes: the leaderboard's line and what ``python -m arena plan`` needs.

The leaderboard shows one line of the plan (:mod:`sampling.planner` says how it is made): the votes until every
interval is within ±15 (:data:`LINE_TARGET`) under the strategy that drew most of the slice's human votes; and it
marks the intervals of models still warming up (:mod:`sampling.warmup`). ``python -m arena plan``
(:mod:`arena.plan_commands`) prints the whole plan, for any target and strategy.
"""

from __future__ import annotations

import numpy as np

from ratings.leaderboard import prior_ridge
from sampling.planner import Target, default_horizon, interval_votes, plan_sentence
from sampling.strategies import STRATEGIES, UNIFORM, SamplingParams, pair_votes
from sampling.warmup import warming_models

LINE_TARGET = Target("ci", 15.0)
LINE_HORIZON_FACTOR = 4  # the line looks four times further ahead than a simulated plan (it costs next to nothing)


def in_play(models, counts: np.ndarray, shown) -> tuple[list[str], np.ndarray]:
    """The ``models`` that have a vote in ``counts`` (n, n, 4) or an image that can be shown (names in ``shown``), and
    the counts among them."""
    voted = (counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))) > 0
    shown = set(shown)
    keep = [m for m, name in enumerate(models) if voted[m] or name in shown]
    return [models[m] for m in keep], counts[np.ix_(keep, keep)]


def planner_params(options, *, warmup_battles: int = SamplingParams.warmup_battles,
                   warmup_share: float = SamplingParams.warmup_share) -> SamplingParams:
    """The planner's fit: the leaderboard's tie policy and prior (``options``: :class:`arena.leaderboard.compute.
    LeaderboardOptions`), and the arena's warm-up."""
    return SamplingParams(tie_policy=options.tie_policy, ridge=prior_ridge(options.prior_sd),
                          warmup_battles=warmup_battles, warmup_share=warmup_share)


def warming_up(models, counts: np.ndarray, battles: int) -> dict[str, int]:
    """{model: battles so far} of the models still warming up (:func:`sampling.warmup.warming_models`): their intervals
    are provisional until they have ``battles``."""
    if len(models) < 2 or battles <= 0:
        return {}
    pairs = pair_votes(counts)
    warm = warming_models(pairs, np.ones(len(pairs), dtype=bool), SamplingParams(warmup_battles=battles))
    totals = counts.sum(axis=(1, 2)) + counts.sum(axis=(0, 2))
    return {models[m]: int(totals[m]) for m in np.flatnonzero(warm)}


def main_strategy(strategies: dict[str, int]) -> str:
    """The registered strategy that drew the most of these votes ({strategy: votes}); uniform when there are none."""
    known = {name: n for name, n in strategies.items() if name in STRATEGIES and n}
    return max(known, key=known.__getitem__) if known else UNIFORM.name


def plan_line(models, counts: np.ndarray, strategy: str, options) -> str:
    """"About 1,900 more votes until every interval is within ±15 (sampling: active; ...)." for the leaderboard,
    from :func:`sampling.planner.interval_votes` (the study's expected path, no simulation: a few milliseconds);
    "" with fewer than two models in play or no vote."""
    if len(models) < 2 or counts.sum() == 0:
        return ""
    horizon = LINE_HORIZON_FACTOR * default_horizon(int(counts.sum()))
    votes = interval_votes(counts, strategy, LINE_TARGET.value, params=planner_params(options), horizon=horizon)
    return (f"{plan_sentence(LINE_TARGET, votes, horizon)} (sampling: {strategy}; python -m arena plan for other "
            "targets and strategies).")
