"""The two models of an open prompt, drawn by the arena's sampling strategy (:mod:`sampling.strategies`).

There is no stored prompt to draw first: every pair of the models that serve open prompts is available. A
``prompt_first`` strategy (``uniform``, the published protocol) draws two distinct models uniformly; any other draws
a pair with the strategy's probabilities over those pairs, from the server's vote counts (:class:`SamplingStats`:
the human votes per pair, all suites together, plus the battles in flight) and, for a strategy that needs one, its fit
(only while every served model is in it; before, as the strategy does before its first fit). A fair coin then picks
which model is shown on the left (A).
"""

from __future__ import annotations

import random

import numpy as np

from sampling.draws import _choose
from sampling.sampler import SamplingStats
from sampling.strategies import SamplingParams, get_strategy, pair_index, pair_probabilities


def draw_live_pair(rng: random.Random, strategy: str, model_ids: list[int],
                   stats: SamplingStats | None = None) -> tuple[int, int]:
    """(model shown as A, model shown as B), two distinct ids of ``model_ids``, drawn under ``strategy``."""
    spec = get_strategy(strategy)
    models = sorted(set(model_ids))
    if len(models) < 2:
        raise ValueError("open prompts need at least two models to serve them.")
    if spec.prompt_first:
        first, second = rng.sample(models, 2)
        return first, second
    n = len(models)
    i, j = pair_index(n)
    counts = np.zeros(len(i))
    state = None
    tables = stats.tables if stats is not None else None
    if stats is not None and tables is not None:
        known = stats.pair_counts(tables)
        for k, (a, b) in enumerate(zip(i, j)):
            at = tables.pair(models[a], models[b])
            counts[k] = known[at] if at is not None else 0.0
        if spec.needs_fit and stats.state is not None and list(tables.model_ids) == models:
            state = stats.state
    probabilities = pair_probabilities(spec.name, available=np.ones(len(i), dtype=bool),
                                       pair_counts=counts if spec.needs_counts else None, state=state,
                                       params=stats.params if stats is not None else SamplingParams())
    k = _choose(rng, probabilities)
    a, b = models[int(i[k])], models[int(j[k])]
    return (a, b) if rng.random() < 0.5 else (b, a)

