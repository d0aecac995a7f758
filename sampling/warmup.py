"""New models warm up fast: a model added to a running arena gets its first battles soon, whatever the strategy.

A model is *warming up* while it has fewer than W battles (W = ``SamplingParams.warmup_battles``, 200 by default,
``ARENA_WARMUP_BATTLES``; the leaderboard marks its interval provisional until then) **and** trails the median model
in play by more than W/2 battles. The second condition is what makes it a *new* model: at the start of a study every
model has few battles, none trails, and every strategy runs exactly as declared (``uniform`` stays the published
protocol). Under ``uniform`` a model's battles are about Poisson with mean μ, and falling below min(W, μ − W/2) is at
worst (μ = 300) a 5.8-standard-deviation event: it does not happen by chance.

While some model warms up, a share s (``SamplingParams.warmup_share``, ½ by default, ``ARENA_WARMUP_SHARE``) of the
draws go to the pairs that hold a warming model, in proportion to the strategy's own probabilities over those pairs
(uniformly over them when the strategy gives them nothing):

    P'(k) = (1 − s)·P(k) + s·P(k | pair k holds a warming model)

The share s is the documented cap: the models already in the study keep at least 1 − s of the votes, so their study
goes on. A single new model is in at least s of the battles, so its first W battles take at most W/s votes (400
with the defaults), whatever the strategy and however many models there are; with m new models at once, about
m·W/s. This is ComparIA's idea (draws tilted towards under-voted models, w ∝ 1/(n + 50)^0.4 capped at 3×) made a
bounded phase: the tilt ends at W battles, so the strategy's design is left alone afterwards.

Everything here depends on the vote counts only (past votes, never outcomes), so the fit stays valid (the design is
ignorable; :mod:`sampling.strategies`). The server applies it to every strategy (:func:`sampling.draws.draw_pairing`;
for ``uniform``, a warm-up draw is a pair-first draw), the simulation likewise (:mod:`sampling.simulation`).
"""

from __future__ import annotations

import numpy as np

from sampling.strategies import SamplingParams, model_votes, n_models_of, pair_index


def warming_models(pair_counts: np.ndarray, available: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Which models (…, n) are warming up (module docstring), from the battles per pair (…, K): a model with an
    available pair, fewer than W battles, and more than W/2 battles fewer than the median of the models in play."""
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    available = np.broadcast_to(np.asarray(available, dtype=bool), pair_counts.shape)
    n = n_models_of(pair_counts.shape[-1])
    battles = model_votes(pair_counts, n)
    in_play = model_votes(available.astype(np.float64), n) > 0
    if params.warmup_battles <= 0:
        return np.zeros(battles.shape, dtype=bool)
    median: float | np.ndarray
    if not in_play.any():
        median = 0.0
    elif battles.ndim == 1:  # one row (a server's draw): no NaN machinery
        median = float(np.median(battles[in_play]))
    else:
        median = np.nan_to_num(np.nanmedian(np.where(in_play, battles, np.nan), axis=-1, keepdims=True))
    return in_play & (battles < params.warmup_battles) & (battles < median - params.warmup_battles / 2)


def warming_pairs(pair_counts: np.ndarray, available: np.ndarray, params: SamplingParams) -> np.ndarray:
    """The available pairs (…, K) that hold at least one warming model."""
    warming = warming_models(pair_counts, available, params)
    i, j = pair_index(warming.shape[-1])
    return np.broadcast_to(available, warming[..., i].shape) & (warming[..., i] | warming[..., j])


def with_warmup(
    probabilities: np.ndarray, pair_counts: np.ndarray, available: np.ndarray, params: SamplingParams
) -> np.ndarray:
    """P'(k) = (1 − s)·P(k) + s·P(k | warming pair) on the rows (…, K) where a model warms up; P elsewhere."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    shape = np.broadcast_shapes(probabilities.shape, pair_counts.shape)
    probabilities = np.broadcast_to(probabilities, shape)
    warm = np.broadcast_to(warming_pairs(np.broadcast_to(pair_counts, shape), available, params), shape)
    if not warm.any():
        return probabilities
    mass = np.where(warm, probabilities, 0.0)
    total = mass.sum(axis=-1, keepdims=True)
    flat = warm / np.maximum(warm.sum(axis=-1, keepdims=True), 1)
    conditional = np.where(total > 0, mass / np.where(total > 0, total, 1.0), flat)
    any_warm = warm.any(axis=-1, keepdims=True)
    share = params.warmup_share
    return np.where(any_warm, (1.0 - share) * probabilities + share * conditional, probabilities)
