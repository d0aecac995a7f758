"""Battle sampling strategies: which two models, and which prompt, the next battle shows.

Pure math over count tables first (numpy; any leading batch axes, which :mod:`arena.simulate` uses for its
repetitions), then the database edge (:class:`SamplingStats`, kept up to date vote by vote; :func:`draw_pairing`;
the admin tables). Randomness is always passed in: a ``numpy.random.Generator`` in the simulation, the app's
``random.Random`` at the edge.

Pairs
    Models are indices 0..n−1 (the database edge maps model ids, in id order, to indices). A *pair* is one of the
    K = n(n−1)/2 unordered pairs in ``numpy.triu_indices(n, 1)`` order (:func:`pair_index`); every per-pair table
    is a vector over those K pairs. ``available[k]`` says whether pair k can be shown at all (both models have an
    image for a common eligible prompt); unavailable pairs get probability 0. u = 1/A is the uniform share over
    the A available pairs.

Strategies (:data:`STRATEGIES`; the configured one is recorded on every battle, ``battles.strategy``)
    ``uniform``
        The published protocol (T1): a uniform prompt, then two distinct models uniformly among those with an image
        for it, unchanged (:func:`arena.battles.draw_uniform`).
    ``balanced``
        P(k) ∝ (d_k · √(e_i e_j))^γ, with the pair's deficit d_k = (c̄ + 1)/(c_k + 1) of its vote count c_k
        against the mean c̄ over available pairs and each model's deficit e_i = (m̄ + 1)/(m_i + 1) of its vote
        count m_i against the mean m̄ (γ = ``balance_power``: 4 turns a pair 10% behind into 1.5 times its share);
        then :func:`bounded_shares` keeps every available pair within [u/cap, cap·u] (``balance_cap``), so no
        pair is starved or flooded.
    ``active``
        From the sampler's Bradley–Terry fit (:func:`fit_state`: ratings R in Elo and their covariance Σ):

        - σ_k² = Σ_ii + Σ_jj − 2Σ_ij, the variance of the fitted difference R_i − R_j;
        - P_k = Φ(−|R_i − R_j| / √(σ_k² + s²)), the probability that the pair's fitted order is wrong or that the two
          are within the resolution s (``active_resolution``, Elo points) of each other: high when the intervals
          overlap. s keeps the design stable: as σ → 0 the weights converge to Φ(−|ΔR|/s), fixed numbers;
        - U_i = Σ_j P_ij, the *rank* uncertainty of model i (the expected number of models on the wrong side of it);
        - w_k = (P_k · (U_i + U_j))^α (α = ``active_sharpness``).

        This is "exp(−|ΔR|/s)·(width_i + width_j)" with the gap scaled by the pair's own uncertainty and the widths
        measured in ranks rather than Elo points: it favours uncertain pairs of models whose rank is uncertain, i.e.
        dense groups of overlapping intervals, where the ranking errors are. In exploratory runs of the simulation
        (100 repetitions) the literal exp(−|ΔR|/30)·(W_i + W_j) saved only about 15% (Spearman) and 7% (top 3) of
        the votes, because it keeps spending on near-ties and starves the pairs that decide the order of a group;
        ``python -m arena.simulate`` gives this formula's numbers.
        Finally P = (1 − ε)·bounded(w; 0, cap·u) + ε·B, with B the ``balanced`` probabilities: a share ε
        (``active_floor``) of exploration that goes to the pairs with the fewest votes, so every pair keeps getting
        votes and the pairs that the focused part starves are refilled first; no pair gets more than cap·u
        (``active_cap``) from the focused part. With few votes σ is large, every P_k ≈ 1/2, and ``active`` starts
        out close to uniform.

Prompts (``balanced`` and ``active``)
    The pair is drawn first, over all pairs; then a prompt uniformly among the eligible prompts with images of both
    models that have the fewest votes *for this pair*, ties going to the prompts with the fewest votes overall
    (:func:`prompt_probabilities`), so every prompt is shown a balanced number of times per model pair where
    possible; then one image of each model for that prompt, uniformly, and a fair coin for the sides.

Why the Bradley–Terry fit stays valid under the adaptive designs
    The probability of the observed votes factorises as Π_t P(pair_t | votes before t) · P(outcome_t | pair_t; θ).
    The first factor is set by the sampler from past votes (and its own random numbers) only and does not involve
    θ, so the likelihood of θ, and the MLE, are the same function of the votes as under a fixed design: the design
    is *ignorable* (Rubin 1976, "Inference and missing data", Biometrika 63:581, §6; Berger & Wolpert 1988, "The
    Likelihood Principle", §4.2 on stopping and design rules). No reweighting is needed for the point estimates.
    Their consistency and asymptotic normality under such sequential designs need the information on every
    contrast to grow and the design to settle down (Chaudhuri & Mykland 1993, "Nonlinear experiments: optimal design
    and inference based on likelihood", JASA 88:538; Lai & Wei 1982, Ann. Statist. 10:154 for the stability
    condition): the ε floor gives every pair a growing share of votes, and the resolution s makes the weights
    converge. In finite samples, though, a design that votes less on pairs that *look* far apart corrects errors
    that spread the ratings out less than errors that bunch them together, so the ratings of the extreme models
    are pushed outwards a little (the bias of adaptively collected data; Nie et al. 2018, "Why adaptively collected
    data have negative bias and how to correct for it", AISTATS), and the leaderboard's bootstrap, which resamples
    votes as if they were independent, does not see it. So this is checked, not assumed: ``python -m
    arena.simulate`` reports per strategy the coverage of the leaderboard's 95% bootstrap intervals at the end and
    at the benchmark's 3,370 votes, and the largest mean error of a rating. Sending the exploration share to the
    least-voted pairs (rather than uniformly) and the resolution s both reduced that bias in the simulation.

Replication
    With probability ``replication_share`` a draw re-serves an existing battle (same prompt, same left and right
    images) that has exactly one human vote, cast by someone else, so that inter-annotator agreement is measured
    (:func:`ratings.inter_annotator_agreement` matches votes by ``pair_key``). Such a draw returns a :class:`Replica`,
    chosen uniformly among those battles (:class:`BattleCounts` keeps them in memory). Which battles are repeated
    depends on past votes only, so this is ignorable too.

Counts at scale (:class:`SamplingStats`)
    A server reads the counts once, in one aggregate pass over the ``votes`` table on a background thread, and then
    keeps them exact vote by vote: a recorded human vote adds itself, and the earlier votes whose ``excluded`` flag the
    quality rules flipped in the same transaction are added back or taken away; an admin's review, or a change of
    models, prompts or images, has everything read again in the background. A draw reads no votes: it costs the same
    at a million votes as at a thousand. Battles drawn but not yet voted on count as votes while *in flight* (until
    their vote arrives, at most ``in_flight_seconds``), so that concurrent draws spread out. Everything a draw uses
    still depends on past votes and draws only, so the designs stay ignorable.
"""

from __future__ import annotations

import functools
import logging
import math
import random
import sqlite3
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import astuple, dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd
import sqlite_utils
from scipy.special import expit, ndtr

from arena.battles import NoBattleAvailable, Pairing, PromptPool, draw_uniform
from ratings.bradley_terry import elo_scale, newton_bt
from ratings.votes import OUTCOMES, check_tie_policy, fit_cells

STRATEGIES: tuple[str, ...] = ("uniform", "balanced", "active")
log = logging.getLogger(__name__)
ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class SamplingParams:
    """The knobs of the strategies; the defaults were chosen with ``python -m arena.simulate`` (see the README).

    - ``balance_cap``: ``balanced`` keeps every available pair within [u/cap, cap·u] of the uniform share u.
    - ``balance_power``: γ, how hard ``balanced`` pushes towards the pairs and models with fewer votes.
    - ``active_resolution``: s, in Elo points: differences below it are not worth resolving.
    - ``active_sharpness``: α, the power of the ``active`` weights (1: proportional; larger: more focused).
    - ``active_floor``: ε, the share of ``active`` draws that explore (by ``balanced``).
    - ``active_cap``: no pair gets more than cap·u of the focused ``active`` draws.
    - ``ridge``: prior precision on θ (natural-log strengths) of the sampler's own fit (not the leaderboard's).
    - ``z``: interval half-width in standard errors for :attr:`FitState.widths` (1.96: 95%).
    - ``tie_policy``: how ties enter the sampler's fit (use the leaderboard's, ``ARENA_TIE_POLICY``).
    """

    balance_cap: float = 4.0
    balance_power: float = 4.0
    active_resolution: float = 20.0
    active_sharpness: float = 2.0
    active_floor: float = 0.15
    active_cap: float = 8.0
    ridge: float = 0.5
    z: float = 1.96
    tie_policy: str = "drop"

    def __post_init__(self):
        if not self.balance_cap >= 1 or not self.active_cap >= 1:
            raise ValueError(f"balance_cap and active_cap must be at least 1 (1 means uniform), got "
                             f"{self.balance_cap} and {self.active_cap}.")
        if not self.active_resolution > 0 or not self.active_sharpness > 0 or not self.balance_power > 0:
            raise ValueError(f"active_resolution (Elo points), active_sharpness and balance_power must be positive, "
                             f"got {self.active_resolution}, {self.active_sharpness} and {self.balance_power}.")
        if not 0 <= self.active_floor <= 1:
            raise ValueError(f"active_floor is a share between 0 and 1, got {self.active_floor}.")
        if not self.ridge >= 0 or not self.z > 0:
            raise ValueError(f"ridge must be >= 0 and z > 0, got ridge={self.ridge}, z={self.z}.")
        check_tie_policy(self.tie_policy)


def check_strategy(strategy: str) -> str:
    """Return ``strategy`` if it is one of :data:`STRATEGIES`, else raise a ValueError naming them."""
    if strategy not in STRATEGIES:
        raise ValueError(f"Unknown sampling strategy {strategy!r}: choose one of {', '.join(STRATEGIES)} "
                         "(setting ARENA_SAMPLING).")
    return strategy


# ---------------------------------------------------------------------------------------------------------------
# Pure math over count tables


@functools.lru_cache(maxsize=64)
def pair_index(n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """``(I, J)``: the K = n(n−1)/2 unordered pairs (I[k] < J[k]) in ``numpy.triu_indices(n, 1)`` order (read-only
    arrays, made once per n: every draw asks for them)."""
    i, j = np.triu_indices(n_models, k=1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


@functools.lru_cache(maxsize=64)
def _incidence(n_models: int) -> np.ndarray:
    """The K × n matrix with a 1 where pair k holds model m (read-only, made once per n)."""
    i, j = pair_index(n_models)
    incidence = np.zeros((len(i), n_models))
    incidence[np.arange(len(i)), i] = 1.0
    incidence[np.arange(len(i)), j] = 1.0
    incidence.flags.writeable = False
    return incidence


def n_models_of(n_pairs: int) -> int:
    """n such that n(n−1)/2 = ``n_pairs``."""
    n = int(round((1 + math.sqrt(1 + 8 * n_pairs)) / 2))
    if n * (n - 1) // 2 != n_pairs:
        raise ValueError(f"{n_pairs} is not a number of model pairs n(n-1)/2.")
    return n


def pair_votes(counts: np.ndarray) -> np.ndarray:
    """Votes per pair (…, K), whatever the outcome and sides, from count tensors (…, n, n, 4) (:mod:`ratings.votes`)."""
    counts = np.asarray(counts)
    total = counts.sum(axis=-1)
    i, j = pair_index(counts.shape[-2])
    return total[..., i, j] + total[..., j, i]


def model_votes(pair_counts: np.ndarray, n_models: int) -> np.ndarray:
    """Votes per model (…, n) from votes per pair (…, K): a vote counts for both of its models."""
    return np.asarray(pair_counts, dtype=np.float64) @ _incidence(n_models)


def bounded_shares(weights: np.ndarray, available: np.ndarray, low, high) -> np.ndarray:
    """Probabilities p_k = clip(λ·w_k, low, high) over the available pairs (0 elsewhere), with λ such that Σ p = 1.

    The capped-simplex ("water-filling") normalisation: shares keep the order of the weights and stay within
    [low, high]. Σ_k clip(λ w_k, low, high) grows with λ, so λ is found by bisection on log λ (at most 100
    halvings, fewer once the bracket is two adjacent floats);
    ``low``/``high`` are numbers or arrays broadcasting against the leading axes (one bound per row, shape (…, 1)).
    Needs low·A ≤ 1 ≤ high·A for the A available pairs of a row. Zero (and NaN) weights count as 10⁻¹² of the
    largest, so they get ``low`` unless the cap leaves mass over, which then goes to them evenly. A row whose weights
    are all zero is uniform over its available pairs; a row with no available pair is all zeros.
    """
    available = np.asarray(available, dtype=bool)
    weights = np.asarray(weights, dtype=np.float64)
    shape = np.broadcast_shapes(weights.shape, available.shape)
    available = np.broadcast_to(available, shape)
    weights = np.where(available, np.maximum(np.nan_to_num(np.broadcast_to(weights, shape), nan=0.0), 0.0), 0.0)
    low = np.broadcast_to(np.asarray(low, dtype=np.float64), shape[:-1] + (1,))
    high = np.broadcast_to(np.asarray(high, dtype=np.float64), shape[:-1] + (1,))
    count = available.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        infeasible = (count > 0) & ((low * count > 1 + 1e-9) | (high * count < 1 - 1e-9))
    if np.any(infeasible):
        raise ValueError("Cannot keep every pair's share within the bounds: need low·pairs ≤ 1 ≤ high·pairs "
                         "(use a cap of at least 1).")
    total = weights.sum(axis=-1, keepdims=True)
    has_weight = total > 0
    # a zero weight becomes a tiny positive one, so that when the cap binds the rest can still rise above ``low``
    weights = np.where(available, np.maximum(weights, 1e-12 * weights.max(axis=-1, keepdims=True)), 0.0)
    uniform = np.where(available, 1.0 / np.maximum(count, 1), 0.0)
    with np.errstate(divide="ignore"):
        log_w = np.where(available, np.log(weights), -np.inf)
    smallest = np.where(np.isfinite(log_w), log_w, np.inf).min(axis=-1, keepdims=True)
    smallest = np.where(np.isfinite(smallest), smallest, 0.0)
    safe_total = np.where(has_weight, total, 1.0)
    # bracket the root of Σ clip(λw) = 1: at log_lo every share sits at ``low`` (sum ≤ 1), at log_hi at ``high``
    log_lo = np.log(np.minimum(np.maximum(low, 1e-300), 1.0 / np.maximum(count, 1))) - np.log(safe_total) - 1.0
    log_hi = np.log(np.where(np.isfinite(high), np.maximum(high, 1e-300), 1.0)) - smallest + 1.0
    log_hi = np.maximum(log_hi, log_lo + 1.0)

    def clipped(log_scale):
        return np.where(available, np.clip(np.exp(np.minimum(log_scale + log_w, 700.0)), low, high), 0.0)

    if len(shape) == 1 and has_weight.all():  # one row (a server's draw): the exact level, no bisection
        on = np.flatnonzero(available)
        level = water_level(weights[on], float(low[0]), float(high[0]))
        shares = np.zeros(shape)
        shares[on] = np.clip(level * weights[on], low[0], high[0])
        return shares / shares.sum()

    for _ in range(100):
        mid = 0.5 * (log_lo + log_hi)
        if np.all((mid == log_lo) | (mid == log_hi)):  # adjacent floats: λ is as exact as a float can be
            break
        over = clipped(mid).sum(axis=-1, keepdims=True) > 1.0
        log_hi = np.where(over, mid, log_hi)
        log_lo = np.where(over, log_lo, mid)
    shares = clipped(0.5 * (log_lo + log_hi))
    sums = shares.sum(axis=-1, keepdims=True)
    shares = shares / np.where(sums > 0, sums, 1.0)
    return np.where(has_weight, shares, uniform)


def water_level(weights: np.ndarray, low: float, high: float) -> float:
    """The λ of :func:`bounded_shares` for one row of positive ``weights``, exactly: f(λ) = Σ clip(λ·w_k, low, high)
    is nondecreasing and linear between the breakpoints low/w_k and high/w_k, so f is evaluated at every breakpoint
    (one (2K × K) array), the segment where it reaches 1 is found, and there f(λ) = n_low·low + n_high·high +
    λ·Σ_free w_k is solved for λ. A server's draw makes one row at a time; the bisection is for batches.
    """
    with np.errstate(over="ignore", divide="ignore"):  # a tiny weight's breakpoints beyond any float: never reached
        breaks = np.concatenate([low / weights, high / weights]) if np.isfinite(high) else low / weights
    breaks = np.unique(breaks[np.isfinite(breaks)])
    totals = np.clip(breaks[:, None] * weights, low, high).sum(axis=1)
    k = int(np.searchsorted(totals, 1.0))
    if k < len(breaks) and totals[k] == 1.0:
        return float(breaks[k])
    below = breaks[k - 1] if k > 0 else 0.0
    above = breaks[k] if k < len(breaks) else (below + 1.0) * 2.0
    middle = weights * 0.5 * (below + above)  # which entries are free (neither at low nor at high) in the segment
    free = (middle > low) & (middle < high)
    at_low, at_high = np.count_nonzero(middle <= low), np.count_nonzero(middle >= high)
    fixed = low * at_low + (high * at_high if at_high else 0.0)
    slope = float(weights[free].sum())
    return float(below) if slope == 0.0 else float((1.0 - fixed) / slope)


def uniform_pair_probabilities(available: np.ndarray) -> np.ndarray:
    """P(k) = u = 1/A over the A available pairs (what ``uniform`` gives when every model has every prompt)."""
    available = np.asarray(available, dtype=bool)
    return bounded_shares(np.ones(available.shape), available, 0.0, np.inf)


def balanced_pair_probabilities(
    pair_counts: np.ndarray,
    available: np.ndarray,
    *,
    cap: float = SamplingParams.balance_cap,
    power: float = SamplingParams.balance_power,
) -> np.ndarray:
    """``balanced``: P(k) ∝ (d_k·√(e_i e_j))^γ, bounded to [u/cap, cap·u] (module docstring). Counts are (…, K)."""
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    available = np.broadcast_to(np.asarray(available, dtype=bool), pair_counts.shape)
    n = n_models_of(pair_counts.shape[-1])
    i, j = pair_index(n)
    counted = np.where(available, pair_counts, 0.0)
    n_avail = np.maximum(available.sum(axis=-1, keepdims=True), 1)
    mean_pair = counted.sum(axis=-1, keepdims=True) / n_avail
    model_counts = model_votes(counted, n)
    in_play = model_votes(available.astype(np.float64), n) > 0
    mean_model = np.where(in_play, model_counts, 0.0).sum(axis=-1, keepdims=True) / np.maximum(
        in_play.sum(axis=-1, keepdims=True), 1)
    pair_deficit = (mean_pair + 1.0) / (pair_counts + 1.0)
    model_deficit = (mean_model + 1.0) / (model_counts + 1.0)
    weights = (pair_deficit * np.sqrt(model_deficit[..., i] * model_deficit[..., j])) ** power
    u = 1.0 / n_avail
    return bounded_shares(weights, available, u / cap, u * cap)


def misorder_probabilities(ratings: np.ndarray, cov: np.ndarray, *, resolution: float) -> np.ndarray:
    """P_k = Φ(−|R_i − R_j| / √(σ_k² + s²)) per pair (…, K), σ_k² = Σ_ii + Σ_jj − 2Σ_ij (module docstring).

    A pair with a model that has no rating yet (NaN) gets P = 1/2.
    """
    ratings = np.asarray(ratings, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    i, j = pair_index(ratings.shape[-1])
    var = np.clip(cov[..., i, i] + cov[..., j, j] - 2.0 * cov[..., i, j], 0.0, None)
    gap = np.abs(ratings[..., i] - ratings[..., j])
    p = ndtr(-gap / np.sqrt(var + resolution**2))
    return np.where(np.isfinite(p), p, 0.5)


def rank_uncertainty(misorder: np.ndarray) -> np.ndarray:
    """U_i = Σ_j P_ij (…, n): the expected number of models on the wrong side of model i."""
    return model_votes(misorder, n_models_of(misorder.shape[-1]))


def active_pair_weights(
    ratings: np.ndarray,
    cov: np.ndarray,
    *,
    resolution: float = SamplingParams.active_resolution,
    sharpness: float = SamplingParams.active_sharpness,
) -> np.ndarray:
    """w_k = (P_k · (U_i + U_j))^α (module docstring), per pair (…, K)."""
    p = misorder_probabilities(ratings, cov, resolution=resolution)
    u = rank_uncertainty(p)
    i, j = pair_index(u.shape[-1])
    return (p * (u[..., i] + u[..., j])) ** sharpness


def active_pair_probabilities(
    ratings: np.ndarray,
    cov: np.ndarray,
    pair_counts: np.ndarray,
    available: np.ndarray,
    params: SamplingParams = SamplingParams(),
) -> np.ndarray:
    """``active``: P = (1 − ε)·bounded(w; 0, cap·u) + ε·B, B = :func:`balanced_pair_probabilities` (…, K)."""
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    weights = active_pair_weights(ratings, cov, resolution=params.active_resolution,
                                  sharpness=params.active_sharpness)
    shape = np.broadcast_shapes(weights.shape, pair_counts.shape, np.shape(available))
    available = np.broadcast_to(np.asarray(available, dtype=bool), shape)
    u = 1.0 / np.maximum(available.sum(axis=-1, keepdims=True), 1)
    focused = bounded_shares(np.broadcast_to(weights, shape), available, 0.0, params.active_cap * u)
    explore = balanced_pair_probabilities(np.broadcast_to(pair_counts, shape), available, cap=params.balance_cap,
                                          power=params.balance_power)
    return (1.0 - params.active_floor) * focused + params.active_floor * explore


def prompt_probabilities(pair_prompt_counts: np.ndarray, prompt_counts: np.ndarray) -> np.ndarray:
    """Uniform over the prompts with the fewest votes for this pair, ties going to the fewest votes overall.

    Both arrays run over the eligible prompts of one pair (those with images of both models).
    """
    pair_prompt_counts = np.asarray(pair_prompt_counts, dtype=np.float64)
    prompt_counts = np.asarray(prompt_counts, dtype=np.float64)
    if pair_prompt_counts.size == 0:
        return np.zeros(0)
    fewest = pair_prompt_counts == pair_prompt_counts.min()
    overall = np.where(fewest, prompt_counts, np.inf)
    chosen = fewest & (overall == overall.min())
    return chosen / chosen.sum()


@dataclass(frozen=True)
class FitState:
    """The sampler's Bradley–Terry state (:func:`fit_state`); arrays keep the leading batch axes of the counts.

    ``ratings`` (…, n) in Elo (NaN for a model without votes in the fit), ``cov`` (…, n, n) their approximate
    covariance in Elo², ``theta`` (…, n) natural-log strengths (a warm start for the next fit), ``fit_votes`` (…, n)
    the votes of each model that entered the fit, ``votes`` the total votes (all outcomes) it was fitted on.
    """

    ratings: np.ndarray
    cov: np.ndarray
    theta: np.ndarray
    fit_votes: np.ndarray
    votes: int
    z: float = SamplingParams.z

    @property
    def widths(self) -> np.ndarray:
        """Wald interval widths 2·z·√Σ_ii in Elo points (NaN where there is no rating)."""
        diag = np.diagonal(self.cov, axis1=-2, axis2=-1)
        return np.where(np.isfinite(self.ratings), 2.0 * self.z * np.sqrt(np.clip(diag, 0.0, None)), np.nan)


def win_matrices(counts: np.ndarray, tie_policy: str = "drop") -> np.ndarray:
    """Win matrices (…, n, n) of count tensors (…, n, n, 4) under a tie policy (:func:`ratings.votes.fit_cells`)."""
    counts = np.asarray(counts)
    n = counts.shape[-2]
    flat = counts.reshape((-1, n, n, len(OUTCOMES)))
    wins = np.zeros((len(flat), n, n))
    for r, c in enumerate(flat):
        wins[r] = fit_cells(c, tie_policy).win_matrix(n)
    return wins.reshape(counts.shape[:-3] + (n, n))


def fit_state(
    counts: np.ndarray,
    *,
    params: SamplingParams = SamplingParams(),
    theta0: np.ndarray | None = None,
) -> FitState:
    """Fit Bradley–Terry to count tensors (…, n, n, 4) and approximate the covariance of the ratings.

    θ̂ = argmax ℓ(θ) − (ridge/2)‖θ‖² by :func:`ratings.newton_bt` (batched over the leading axes; ``theta0`` warm
    starts it). The information of the penalised likelihood is H = L + ridge·I, with the Laplacian
    L_ii = Σ_j N_ij p_ij p_ji, L_ij = −N_ij p_ij p_ji (N = W + Wᵀ, p_ij = σ(θ_i − θ_j); :mod:`ratings.bradley_terry`).
    The covariance of the centred θ̂ is taken as P (H + 11ᵀ/n)⁻¹ P with P = I − 11ᵀ/n, which for ridge = 0 is the
    pseudo-inverse L⁺, the asymptotic covariance of the sum-to-zero MLE (Simons & Yao 1999, Ann. Statist. 27:1041),
    and is scaled to Elo² by (400/ln 10)². Wald intervals, not the leaderboard's bootstrap: cheap (one n×n solve)
    and deterministic, which is all the sampler needs.
    """
    counts = np.asarray(counts)
    n = counts.shape[-2]
    batch = counts.shape[:-3]
    wins = win_matrices(counts, params.tie_policy).reshape((-1, n, n))
    totals = wins + wins.transpose(0, 2, 1)
    fit_votes = totals.sum(axis=2)
    start = None if theta0 is None else np.nan_to_num(np.asarray(theta0, dtype=np.float64).reshape((-1, n)))
    theta, _ = newton_bt(wins, ridge=params.ridge, theta0=start, max_iter=50)
    theta = np.reshape(theta, (-1, n))
    p = expit(theta[:, :, None] - theta[:, None, :])
    weight = totals * p * p.transpose(0, 2, 1)
    info = -weight
    diag = np.arange(n)
    info[:, diag, diag] = weight.sum(axis=2) + params.ridge + 1e-9
    projector = np.eye(n) - 1.0 / n
    cov = projector @ np.linalg.inv(info + 1.0 / n) @ projector * ELO_PER_NAT**2
    fitted = fit_votes > 0
    ratings = np.where(fitted, elo_scale(theta), np.nan)
    votes = int(np.asarray(counts).sum())
    return FitState(ratings.reshape(batch + (n,)), cov.reshape(batch + (n, n)), theta.reshape(batch + (n,)),
                    fit_votes.reshape(batch + (n,)), votes, params.z)


def pair_probabilities(
    strategy: str,
    *,
    available: np.ndarray,
    pair_counts: np.ndarray | None = None,
    state: FitState | None = None,
    params: SamplingParams = SamplingParams(),
) -> np.ndarray:
    """The probability of each model pair (…, K) under ``strategy``; the app and the simulation both call this.

    ``balanced`` needs ``pair_counts``; ``active`` needs ``pair_counts`` and the sampler's ``state``
    (:func:`fit_state`; without one it is ``balanced``, as at the very first vote).
    """
    check_strategy(strategy)
    available = np.asarray(available, dtype=bool)
    if strategy == "uniform":
        return uniform_pair_probabilities(available)
    if pair_counts is None:
        raise ValueError(f"The {strategy} strategy needs the vote counts per pair (pair_counts).")
    if strategy == "balanced" or state is None:
        return balanced_pair_probabilities(pair_counts, available, cap=params.balance_cap, power=params.balance_power)
    return active_pair_probabilities(state.ratings, state.cov, pair_counts, available, params)


# ---------------------------------------------------------------------------------------------------------------
# The database edge


@dataclass(frozen=True)
class Replica(Pairing):
    """A :class:`~arena.battles.Pairing` that re-serves a battle with one human vote (for inter-annotator agreement).

    It is recorded under the configured strategy; the votes on it share the original's ``pair_key``.
    """


@dataclass(frozen=True)
class UniformDraw(Pairing):
    """A :class:`~arena.battles.Pairing` drawn by ``uniform`` where ``balanced`` or ``active`` was asked for, because
    the sampler's counts were not read yet (start-up, :meth:`SamplingStats.refresh`). Record its battle under
    ``uniform``, the strategy that really drew it (:func:`arena.session.vote` does)."""


class VoteFacts(NamedTuple):
    """What the sampler counts of one vote: columns of the ``votes`` table, which never change once written."""

    vote_id: int
    voter_kind: str
    annotator_id: int | None
    prompt_id: int
    left_image_id: int
    right_image_id: int
    left_model_id: int
    right_model_id: int
    outcome: str


def vote_facts(db: sqlite_utils.Database, vote_ids) -> dict[int, VoteFacts]:
    """{vote id: :class:`VoteFacts`} of the given votes (primary-key lookups, 500 ids a query)."""
    ids = list(dict.fromkeys(int(vote_id) for vote_id in vote_ids))
    facts: dict[int, VoteFacts] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows = db.execute(
            "SELECT id, voter_kind, annotator_id, prompt_id, left_image_id, right_image_id, left_model_id, "
            f"right_model_id, outcome FROM votes WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
        facts.update((row[0], VoteFacts(*row)) for row in rows)
    return facts


def battle_key(image_a: int, image_b: int) -> int:
    """One integer per battle, i.e. per unordered pair of images (an image belongs to one prompt, so the pair also
    fixes the prompt): ``min << 32 | max``. Image ids must be below 2³¹."""
    low, high = (image_a, image_b) if image_a < image_b else (image_b, image_a)
    return (int(low) << 32) | int(high)


class BattleCounts:
    """Non-excluded human votes per battle (:func:`battle_key`), for :func:`draw_replica`.

    Per battle (a row): ``count`` votes, the sum of their vote ids and the sum of their annotators' ids (so a battle
    with exactly one vote names that vote and its annotator without a query), and the code of its prompt's suite
    (−1 for a prompt the tables do not know). Votes are added and removed with :meth:`add` (O(log n): rows are
    found through a sorted index of the rows that existed at the last re-index, plus a dict of the rows added since,
    re-indexed when it reaches an eighth of the table); about 50 bytes per battle. The battles with exactly one vote
    (the *candidates*) are counted per suite and annotator, so a draw knows at once whether there is one to show.

    Not thread-safe: :class:`SamplingStats` holds its lock around every call.
    """

    BATCH = 1024  # rows tried at once by pick
    ROUNDS = 4  # batches tried before an exact pass over the rows

    def __init__(self, keys=(), counts=(), id_sums=(), annotator_sums=(), suites=()):
        size = len(keys)
        capacity = max(1024, size + size // 8)
        self.size = size
        self.keys = np.zeros(capacity, dtype=np.int64)
        self.counts = np.zeros(capacity, dtype=np.int64)
        self.id_sums = np.zeros(capacity, dtype=np.int64)
        self.annotator_sums = np.zeros(capacity, dtype=np.int64)
        self.suites = np.zeros(capacity, dtype=np.int16)
        for column, values in ((self.keys, keys), (self.counts, counts), (self.id_sums, id_sums),
                               (self.annotator_sums, annotator_sums), (self.suites, suites)):
            column[:size] = values
        self._reindex()
        self._by_suite_annotator: Counter = Counter()
        self._by_suite: Counter = Counter()
        self._by_annotator: Counter = Counter()
        self.candidates = 0
        single = self.counts[:size] == 1
        if single.any():
            pairs, number = np.unique(np.stack([self.suites[:size][single], self.annotator_sums[:size][single]]),
                                      axis=1, return_counts=True)
            for suite, annotator, n in zip(pairs[0].tolist(), pairs[1].tolist(), number.tolist()):
                self._tally(suite, annotator, n)

    def _reindex(self) -> None:
        order = np.argsort(self.keys[:self.size], kind="stable")
        self._index_keys, self._index_rows = self.keys[:self.size][order], order
        self._recent: dict[int, int] = {}

    def _tally(self, suite: int, annotator: int, n: int) -> None:
        self._by_suite_annotator[(suite, annotator)] += n
        self._by_suite[suite] += n
        self._by_annotator[annotator] += n
        self.candidates += n

    def _row(self, key: int) -> int | None:
        i = int(np.searchsorted(self._index_keys, key))
        if i < len(self._index_keys) and self._index_keys[i] == key:
            return int(self._index_rows[i])
        return self._recent.get(key)

    def _append(self, key: int, suite: int) -> int:
        if self.size == len(self.keys):
            for name in ("keys", "counts", "id_sums", "annotator_sums", "suites"):
                old = getattr(self, name)
                grown = np.zeros(2 * len(old), dtype=old.dtype)
                grown[:len(old)] = old
                setattr(self, name, grown)
        row = self.size
        self.keys[row], self.suites[row] = key, suite
        self.size += 1
        self._recent[key] = row
        if len(self._recent) > max(4096, self.size // 8):
            self._reindex()
        return row

    def add(self, key: int, suite: int, vote_id: int, annotator_id: int | None, sign: int) -> None:
        """Count (``sign`` = 1) or uncount (−1) one vote on the battle ``key`` of a prompt of suite code ``suite``."""
        row = self._row(key)
        if row is None:
            row = self._append(key, suite)
        if self.counts[row] == 1:
            self._tally(int(self.suites[row]), int(self.annotator_sums[row]), -1)
        self.counts[row] += sign
        self.id_sums[row] += sign * vote_id
        self.annotator_sums[row] += sign * (annotator_id or 0)
        if self.counts[row] == 1:
            self._tally(int(self.suites[row]), int(self.annotator_sums[row]), 1)

    def available(self, suite: int | None = None, annotator_id: int | None = None) -> int:
        """How many candidates (battles with one vote) are in ``suite`` (a code; None: all) and not by
        ``annotator_id``."""
        total = self.candidates if suite is None else self._by_suite[suite]
        if annotator_id is None:
            return total
        own = self._by_annotator[annotator_id] if suite is None else self._by_suite_annotator[(suite, annotator_id)]
        return total - own

    def pick(self, gen: np.random.Generator, suite: int | None = None, annotator_id: int | None = None) -> int | None:
        """The vote id of a candidate in ``suite`` not by ``annotator_id``, uniformly, or None if there is none.

        Rejection sampling over the rows (every battle ever voted on since the last full read), ``BATCH`` rows at a
        time: the first row of a batch that qualifies is uniform over the qualifying rows. When the candidates are so
        rare that ``ROUNDS`` batches would likely miss (or do miss), one exact pass over the rows (numpy, in memory)
        picks one uniformly instead. Either way the choice is exactly uniform over the candidates.
        """
        wanted = self.available(suite, annotator_id)
        if wanted <= 0:
            return None

        def qualifies(rows):
            ok = self.counts[rows] == 1
            if suite is not None:
                ok &= self.suites[rows] == suite
            if annotator_id is not None:
                ok &= self.annotator_sums[rows] != annotator_id
            return ok

        if wanted * self.BATCH * self.ROUNDS >= 4 * self.size:  # P(miss) <= e^-4 for all the rounds together
            for _ in range(self.ROUNDS):
                rows = gen.integers(0, self.size, self.BATCH)
                hits = rows[qualifies(rows)]
                if hits.size:
                    return int(self.id_sums[hits[0]])
        rows = np.flatnonzero(qualifies(np.arange(self.size)))
        return int(self.id_sums[rows[gen.integers(rows.size)]]) if rows.size else None

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (the dict of recent rows aside)."""
        return sum(a.nbytes for a in (self.keys, self.counts, self.id_sums, self.annotator_sums, self.suites,
                                      self._index_keys, self._index_rows))

    def as_dict(self) -> dict[int, tuple[int, int, int]]:
        """{battle key: (votes, sum of vote ids, sum of annotator ids)} of the battles with votes (for tests)."""
        live = np.flatnonzero((self.counts[:self.size] != 0) | (self.id_sums[:self.size] != 0))
        return {int(self.keys[r]): (int(self.counts[r]), int(self.id_sums[r]), int(self.annotator_sums[r]))
                for r in live}


@dataclass(eq=False)
class CountTables:
    """What the sampler knows about the database, as arrays (model index = position in ``model_ids``).

    ``has_image[p, m]``: prompt ``prompt_ids[p]`` has an image of model ``model_ids[m]``. ``counts`` (n, n, 4): votes
    by displayed positions and outcome (:mod:`ratings.votes`); ``pair_counts`` (K,): votes per pair;
    ``prompt_pair_counts`` (prompts, K) and ``prompt_counts`` (prompts,): votes per prompt and pair, per prompt;
    ``battles``: votes per battle (:class:`BattleCounts`). Only the votes of one voter kind that are not excluded
    count. ``data_version`` and ``catalog_version`` are the ``data_versions`` counters the tables were read at.

    :class:`SamplingStats` changes the count arrays in place (:meth:`add`), under its lock.
    """

    model_ids: tuple[int, ...]
    prompt_ids: np.ndarray
    prompt_suites: np.ndarray
    has_image: np.ndarray
    counts: np.ndarray
    pair_counts: np.ndarray
    prompt_pair_counts: np.ndarray
    prompt_counts: np.ndarray
    battles: BattleCounts = field(default_factory=BattleCounts)
    data_version: int = 0
    catalog_version: int = 0

    def __post_init__(self):
        n = len(self.model_ids)
        self.model_index = {model_id: m for m, model_id in enumerate(self.model_ids)}
        self.prompt_index = {prompt_id: p for p, prompt_id in enumerate(self.prompt_ids.tolist())}
        self.position = np.full((n, n), -1, dtype=np.int64)
        i, j = pair_index(n)
        self.position[i, j] = self.position[j, i] = np.arange(len(i))
        self.suite_names = tuple(sorted(set(self.prompt_suites.tolist())))
        self.suite_codes = {suite: code for code, suite in enumerate(self.suite_names)}
        self.prompt_suite_codes = np.array([self.suite_codes[s] for s in self.prompt_suites.tolist()], dtype=np.int16)
        self._scopes: dict[str | None, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def votes(self) -> int:
        """Votes counted (battles drawn but not voted on are not votes)."""
        return int(self.counts.sum())

    def pair(self, model_a: int, model_b: int) -> int | None:
        """The pair index of two model ids, or None (an unknown model, or twice the same)."""
        a, b = self.model_index.get(model_a), self.model_index.get(model_b)
        return None if a is None or b is None or a == b else int(self.position[a, b])

    def scope(self, suite: str | None) -> tuple[np.ndarray, np.ndarray]:
        """(``eligible`` prompts (of ``suite``) with images of two models, ``available`` pairs (K,) that share one)."""
        if suite in self._scopes:
            return self._scopes[suite]
        eligible = self.has_image.sum(axis=1) >= 2
        if suite:
            eligible &= self.prompt_suites == suite
        cover = self.has_image[eligible].astype(np.int64)
        shared = cover.T @ cover  # prompts shared by each pair of models
        i, j = pair_index(len(self.model_ids))
        scope = (eligible, shared[i, j] > 0)
        if suite is None or suite in self.suite_codes:  # only real suites are kept
            self._scopes[suite] = scope
        return scope

    def add(self, vote: VoteFacts, sign: int) -> None:
        """Count (``sign`` = 1) or uncount (−1) one vote. A vote of a model or prompt read after these tables only
        counts for its battle (the full read that a catalog change starts counts it everywhere)."""
        k = self.pair(vote.left_model_id, vote.right_model_id)
        p = self.prompt_index.get(vote.prompt_id)
        if k is not None:
            a, b = self.model_index[vote.left_model_id], self.model_index[vote.right_model_id]
            self.counts[a, b, OUTCOMES.index(vote.outcome)] += sign
            self.pair_counts[k] += sign
            if p is not None:
                self.prompt_pair_counts[p, k] += sign
                self.prompt_counts[p] += sign
        suite = int(self.prompt_suite_codes[p]) if p is not None else -1
        self.battles.add(battle_key(vote.left_image_id, vote.right_image_id), suite, vote.vote_id,
                         vote.annotator_id, sign)


def _connection(db) -> sqlite3.Connection:
    return getattr(db, "conn", db)


def _database_file(db) -> str | None:
    """The file of ``db``'s main database, or None for an in-memory one."""
    for _, name, file in _connection(db).execute("PRAGMA database_list"):
        if name == "main":
            return file or None
    return None


_BATTLE_COUNTS = """
    SELECT min(left_image_id, right_image_id) AS low, max(left_image_id, right_image_id) AS high,
           ifnull(min(prompt_id), 0),
           ifnull(min(CASE WHEN left_image_id < right_image_id THEN left_model_id ELSE right_model_id END), 0),
           ifnull(min(CASE WHEN left_image_id < right_image_id THEN right_model_id ELSE left_model_id END), 0),
           COUNT(*), SUM(id), ifnull(SUM(annotator_id), 0), {by_outcome}
    FROM votes WHERE voter_kind = ? AND excluded = 0 GROUP BY low, high
"""
_BY_OUTCOME = ", ".join(f"SUM(outcome = '{o}' AND left_image_id < right_image_id), "
                        f"SUM(outcome = '{o}' AND left_image_id > right_image_id)" for o in OUTCOMES)


def read_count_tables(db: sqlite_utils.Database, *, voter_kind: str = "human") -> CountTables:
    """Read models, prompts with images and the vote counts from the database, in one read transaction.

    The votes are aggregated in SQL, per battle, from the ``votes`` table alone (it records what each battle showed,
    :func:`arena.schema._study_scale`): one pass over the votes (about 2 s per million), then numpy. ``db`` may also
    be a plain :class:`sqlite3.Connection`.
    """
    conn = _connection(db)
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        versions = dict(conn.execute("SELECT name, version FROM data_versions").fetchall())
        model_ids = tuple(row[0] for row in conn.execute("SELECT id FROM models ORDER BY id"))
        prompts = conn.execute(
            "SELECT p.id, p.suite FROM prompts p WHERE p.id IN (SELECT prompt_id FROM images) ORDER BY p.id"
        ).fetchall()
        images = conn.execute("SELECT DISTINCT prompt_id, model_id FROM images").fetchall()
        cursor = conn.execute(_BATTLE_COUNTS.format(by_outcome=_BY_OUTCOME), [voter_kind])
        chunks = []  # converted a slice at a time: a server's other threads get the interpreter in between
        while rows := cursor.fetchmany(50_000):
            chunks.append(np.array(rows, dtype=np.int64))
    finally:
        if own:
            conn.execute("COMMIT")
    prompt_ids = np.array([row[0] for row in prompts], dtype=np.int64)
    prompt_suites = np.array([row[1] for row in prompts], dtype=object)
    n, n_prompts, k = len(model_ids), len(prompt_ids), len(model_ids) * (len(model_ids) - 1) // 2
    model_index = {model_id: m for m, model_id in enumerate(model_ids)}
    prompt_index = {prompt_id: p for p, prompt_id in enumerate(prompt_ids.tolist())}
    has_image = np.zeros((n_prompts, n), dtype=bool)
    for prompt_id, model_id in images:
        has_image[prompt_index[prompt_id], model_index[model_id]] = True
    votes = np.concatenate(chunks) if chunks else np.zeros((0, 8 + 2 * len(OUTCOMES)), dtype=np.int64)
    low, high, prompt, model_low, model_high, count, id_sum, annotator_sum = votes[:, :8].T
    by_outcome = votes[:, 8:].reshape(-1, len(OUTCOMES), 2)  # [battle, outcome, 0: low image shown left / 1: right]

    def index_of(ids, mapping):
        lookup = np.full(max(max(mapping, default=0), int(ids.max(initial=0))) + 1, -1, dtype=np.int64)
        lookup[list(mapping)] = list(mapping.values())
        return lookup[ids]

    a, b, p = index_of(model_low, model_index), index_of(model_high, model_index), index_of(prompt, prompt_index)
    counts = np.zeros((n, n, len(OUTCOMES)), dtype=np.int64)
    prompt_pair_counts = np.zeros((n_prompts, k), dtype=np.int64)
    pair = (a >= 0) & (b >= 0) & (a != b)
    outcomes = np.arange(len(OUTCOMES))[None, :]
    np.add.at(counts, (a[pair, None], b[pair, None], outcomes), by_outcome[pair, :, 0])
    np.add.at(counts, (b[pair, None], a[pair, None], outcomes), by_outcome[pair, :, 1])
    position = np.full((n, n), -1, dtype=np.int64)
    i, j = pair_index(n)
    position[i, j] = position[j, i] = np.arange(k)
    placed = pair & (p >= 0)
    np.add.at(prompt_pair_counts, (p[placed], position[a[placed], b[placed]]), count[placed])
    suite_of_prompt = {suite: code for code, suite in enumerate(sorted(set(prompt_suites.tolist())))}
    prompt_codes = np.array([suite_of_prompt[s] for s in prompt_suites.tolist()] + [-1], dtype=np.int16)
    if len(high) and int(high.max()) >= 2**31:
        raise ValueError("Image ids of 2^31 and more do not fit the sampler's battle keys (arena.sampling.battle_key).")
    battles = BattleCounts((low << 32) | high, count, id_sum, annotator_sum, prompt_codes[p])
    return CountTables(model_ids, prompt_ids, prompt_suites, has_image, counts, pair_votes(counts),
                       prompt_pair_counts, prompt_pair_counts.sum(axis=1), battles,
                       data_version=int(versions.get("votes", 0)), catalog_version=int(versions.get("catalog", 0)))


class _VoteEvent(NamedTuple):
    data_version: float  # the ``votes`` counter right after the vote's transaction (inf: unknown)
    changes: tuple[tuple[int, VoteFacts], ...]  # (sign, vote)


class SamplingStats:
    """Vote counts and the ``active`` strategy's Bradley–Terry state for one server (its context holds one), kept
    up to date vote by vote; the web server's threads share it.

    - **Counts.** :meth:`refresh` starts the one full read (:func:`read_count_tables`) on first use (or call
      :meth:`start` at start-up); it runs on a background thread with its own connection (on the calling thread for
      an in-memory database). After that the counts change only through :meth:`note_vote`, which every human vote
      recorded by :func:`arena.session.vote` calls after its commit: the vote (+1), and each earlier vote whose
      ``excluded`` flag the quality rules flipped in the same transaction (∓1), read back by primary key. So the
      counts equal a full re-read of the votes recorded through this object, exactly.
    - **Full re-reads** happen only at start-up, when an admin includes or excludes a vote (:meth:`reload`, from the
      admin tab) and when models, prompts or images change (the ``catalog`` counter of ``data_versions``, checked at
      most every ``refresh_seconds`` by :meth:`refresh`); always on the background thread, draws using the previous
      counts meanwhile. Votes recorded while it runs are kept and replayed onto the new tables when they are newer
      than its snapshot: each vote's transaction records the ``votes`` counter of ``data_versions`` (raised by every
      change to the votes table), the snapshot reads it too, and SQLite's writers are serialised, so "newer" is exact.
      Votes recorded by another process, or by :func:`arena.votes.record_vote` without this object, count from the
      next full read.
    - **Start-up.** Until the first full read is done, :meth:`refresh` waits for it up to ``startup_wait_seconds``;
      if it is still running, :func:`draw_pairing` draws that battle by ``uniform`` and says so (:class:`UniformDraw`,
      recorded as ``uniform``), and a replica draw is skipped.
    - **In flight.** :meth:`note_served` counts a battle just drawn (its prompt and pair) until its vote arrives
      (:meth:`note_vote` releases one in-flight battle of the same prompt and pair) or ``in_flight_seconds`` pass,
      so concurrent draws spread out while a skipped battle stops counting soon; these tallies are added to the vote
      counts at draw time, never stored in them.
    - **Refit.** The Bradley–Terry state is refitted when ``refit_votes`` counted votes changed since the last fit or
      ``refit_seconds`` passed with changes (:func:`fit_state`: one Newton fit and one n×n inverse, about a
      millisecond for 12 models) on the calling thread, i.e. when a battle is drawn, never when a vote is recorded; a
      thread that finds another one refitting does not wait and draws with the previous state.
    - **Threads.** One lock guards the count arrays and the in-flight tallies; draws hold it only to copy the K pair
      counts and, for the chosen pair, the counts of its prompts, or to pick a replica; votes to add a few counts.
      ``state`` is immutable and replaced whole.
    - The counts and the fit cover every suite (votes of ``voter_kind``, not excluded); a suite filter at draw time
      only narrows the prompts, and with them the pairs that can be shown.
    """

    def __init__(
        self,
        params: SamplingParams | None = None,
        *,
        refresh_seconds: float = 2.0,
        refit_votes: int = 50,
        refit_seconds: float = 60.0,
        in_flight_seconds: float = 60.0,
        startup_wait_seconds: float = 5.0,
        voter_kind: str = "human",
        clock: Callable[[], float] = time.monotonic,
    ):
        self.params = params or SamplingParams()
        self.refresh_seconds = refresh_seconds
        self.refit_votes = refit_votes
        self.refit_seconds = refit_seconds
        self.in_flight_seconds = in_flight_seconds
        self.startup_wait_seconds = startup_wait_seconds
        self.voter_kind = voter_kind
        self.clock = clock
        self.tables: CountTables | None = None
        self.state: FitState | None = None
        self.refitted_at = -math.inf
        self.load_error: BaseException | None = None
        self._lock = threading.Lock()
        self._refit_lock = threading.Lock()
        self._load_lock = threading.Lock()  # one full read at a time
        self._started = False
        self._loading = False  # a background full read runs
        self._loader: threading.Thread | None = None
        self._again = False  # a full read was asked for while one ran: read again after it
        self._pending: list[_VoteEvent] | None = None  # votes noted while a full read runs
        self._changes = 0  # counted votes changed so far (for the refit schedule)
        self._fitted_changes = 0
        self._catalog_checked_at = -math.inf
        self._flight_queue: deque = deque()  # (expires at, (prompt id, model id, model id)), oldest first
        self._flight_live: Counter = Counter()  # in flight per (prompt id, model id, model id)
        self._flight_released: Counter = Counter()  # released by a vote, still in the queue
        self._flight_pair = np.zeros(0)
        self._flight_prompt = np.zeros(0)
        self._flight_prompt_pair: dict[int, Counter] = {}  # pair index -> {prompt row: in flight}

    # -- full reads

    @property
    def ready(self) -> bool:
        """Whether the first full read is done (draws can use the counts)."""
        return self.tables is not None

    def start(self, db: sqlite_utils.Database) -> "SamplingStats":
        """Start the first full read (in the background for a database file), if not started yet; returns ``self``."""
        if not self._started:
            self._load(db, wait=False)
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the background full read, if one runs (up to ``timeout`` seconds); True if none runs now."""
        loader = self._loader
        if loader is not None:
            loader.join(timeout)
        return not self._loading

    def reload(self, db: sqlite_utils.Database) -> None:
        """Read everything again in the background (after an admin review); nothing to do if not started yet."""
        if self._started:
            self._load(db, wait=False)

    def _load(self, db, *, wait: bool) -> None:
        """A full read: on this thread if ``wait`` or in memory, else on the background thread (once more after the
        running one, if one runs)."""
        path = None if wait else _database_file(db)
        with self._lock:
            self._started = True
            if path is not None:
                if self._loading:
                    self._again = True
                    return
                self._loading = True
                self._loader = threading.Thread(target=self._read_file, args=(path,), daemon=True,
                                                name="sampling-stats-read")
                self._loader.start()
                return
        self._read(db, background=False)

    def _read_file(self, path: str) -> None:
        try:
            conn = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA query_only = ON")
        except Exception as error:  # reported by load_error; the next refresh without counts tries again
            log.exception("The sampler could not open %s", path)
            with self._lock:
                self.load_error, self._loading = error, False
            return
        try:
            self._read(conn, background=True)
        finally:
            conn.close()

    def _read(self, db, *, background: bool) -> None:
        """Full reads until none is asked for: each swaps in its snapshot plus the votes noted after it."""
        with self._load_lock:
            while True:
                with self._lock:
                    self._again = False
                    self._pending = []  # what was noted before this committed before the snapshot below
                try:
                    tables = read_count_tables(db, voter_kind=self.voter_kind)
                except Exception as error:
                    log.exception("The sampler could not read the vote counts")
                    with self._lock:
                        self.load_error, self._pending = error, None
                        self._loading = self._loading and not background
                    if not background:
                        raise
                    return
                with self._lock:
                    for event in self._pending:
                        self._apply_event(tables, event)
                    old = self.tables
                    self.tables, self.load_error = tables, None
                    self._changes += abs(tables.votes - (old.votes if old is not None else 0))
                    self._rebuild_flight()
                    if not (background and self._again):
                        self._pending = None
                        self._loading = self._loading and not background
                        return

    # -- votes

    @staticmethod
    def _apply_event(tables: CountTables, event: _VoteEvent) -> int:
        if event.data_version <= tables.data_version:
            return 0  # already in the snapshot these tables were read from
        for sign, vote in event.changes:
            tables.add(vote, sign)
        return len(event.changes)

    def note_vote(self, db: sqlite_utils.Database, receipt) -> None:
        """Count a vote just committed (an :class:`arena.votes.VoteReceipt`), and the flags the quality rules
        flipped with it (``receipt.flag_changes``); release its battle from the in-flight tally.

        Call it after the vote's transaction commits, so that the counts follow committed votes only.
        """
        if not self._started:
            return  # the first full read, still to come, will count it
        flips = dict(getattr(receipt, "flag_changes", ()))
        facts = vote_facts(db, [receipt.vote_id, *flips])
        changes = []
        vote = facts.get(receipt.vote_id)
        if vote is not None and vote.voter_kind == self.voter_kind:
            changes.append((1, vote))  # written with excluded = 0; a flip below may take it out again
        for vote_id, excluded in flips.items():
            flipped = facts.get(vote_id)
            if flipped is not None and flipped.voter_kind == self.voter_kind:
                changes.append((-1 if excluded else 1, flipped))
        version = getattr(receipt, "data_version", None)
        event = _VoteEvent(math.inf if version is None else version, tuple(changes))
        with self._lock:
            if self._pending is not None:
                self._pending.append(event)
            if self.tables is not None:
                self._changes += self._apply_event(self.tables, event)
            if vote is not None:
                self._release((vote.prompt_id, *sorted((vote.left_model_id, vote.right_model_id))))

    # -- battles in flight

    def note_served(self, prompt_id: int, model_a: int, model_b: int) -> None:
        """Count a battle just drawn (by model ids) as in flight, until its vote or ``in_flight_seconds``."""
        key = (prompt_id, *sorted((model_a, model_b)))
        with self._lock:
            now = self.clock()
            self._expire(now)
            self._flight_queue.append((now + self.in_flight_seconds, key))
            self._flight_live[key] += 1
            self._shift_flight(key, 1)

    @property
    def in_flight(self) -> int:
        """Battles drawn and neither voted on nor expired."""
        with self._lock:
            self._expire(self.clock())
            return sum(self._flight_live.values())

    def _release(self, key) -> None:
        if self._flight_live[key] > 0:
            self._flight_live[key] -= 1
            self._flight_released[key] += 1
            self._shift_flight(key, -1)

    def _expire(self, now: float) -> None:
        while self._flight_queue and self._flight_queue[0][0] <= now:
            _, key = self._flight_queue.popleft()
            if self._flight_released[key] > 0:  # its vote came: the oldest entry of the key stands for it
                self._flight_released[key] -= 1
                if not self._flight_released[key]:
                    del self._flight_released[key]
            else:
                self._flight_live[key] -= 1
                self._shift_flight(key, -1)
            if not self._flight_live[key]:
                del self._flight_live[key]

    def _shift_flight(self, key, amount: int) -> None:
        tables = self.tables
        if tables is None:
            return
        prompt_id, model_a, model_b = key
        k = tables.pair(model_a, model_b)
        if k is None:
            return
        self._flight_pair[k] += amount
        p = tables.prompt_index.get(prompt_id)
        if p is not None:
            self._flight_prompt[p] += amount
            flying = self._flight_prompt_pair.setdefault(k, Counter())
            flying[p] += amount
            if not flying[p]:
                del flying[p]

    def _rebuild_flight(self) -> None:
        tables = self.tables
        self._flight_pair = np.zeros(len(tables.pair_counts))
        self._flight_prompt = np.zeros(len(tables.prompt_ids))
        self._flight_prompt_pair = {}
        for key, amount in self._flight_live.items():
            self._shift_flight(key, amount)

    # -- what a draw reads

    def pair_counts(self, tables: CountTables) -> np.ndarray:
        """Votes plus battles in flight per pair (K,), from ``tables`` (the current ones)."""
        with self._lock:
            self._expire(self.clock())
            counts = tables.pair_counts.astype(np.float64)
            if self.tables is tables:
                counts += self._flight_pair
        return np.maximum(counts, 0.0)

    def prompt_counts(self, tables: CountTables, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(votes plus battles in flight of pair ``k`` per prompt, all votes plus in flight per prompt), for
        the prompt ``rows``."""
        with self._lock:
            per_pair = tables.prompt_pair_counts[rows, k].astype(np.float64)
            overall = tables.prompt_counts[rows].astype(np.float64)
            if self.tables is tables:
                flying = self._flight_prompt_pair.get(k)
                if flying:  # a few prompts: place them among the (sorted) rows
                    prompts = np.fromiter(flying.keys(), dtype=np.int64, count=len(flying))
                    amounts = np.fromiter(flying.values(), dtype=np.float64, count=len(flying))
                    at = np.minimum(np.searchsorted(rows, prompts), len(rows) - 1)
                    hit = rows[at] == prompts
                    np.add.at(per_pair, at[hit], amounts[hit])
                overall += self._flight_prompt[rows]
        return np.maximum(per_pair, 0.0), np.maximum(overall, 0.0)

    def pick_single_vote(self, rng: random.Random, suite: str | None = None,
                         annotator_id: int | None = None) -> int | None:
        """The id of a vote alone on its battle, in ``suite`` and not by ``annotator_id``, uniformly
        (:meth:`BattleCounts.pick`); None if there is none or the counts are not read yet."""
        with self._lock:
            tables = self.tables
            if tables is None:
                return None
            code = None
            if suite:
                code = tables.suite_codes.get(suite)
                if code is None:
                    return None
            if tables.battles.available(code, annotator_id) <= 0:
                return None
            return tables.battles.pick(np.random.default_rng(rng.getrandbits(64)), code, annotator_id)

    # -- the schedule

    def refresh(self, db: sqlite_utils.Database, *, force: bool = False, fit: bool = True) -> "SamplingStats":
        """Make the counts usable for a draw, cheaply; returns ``self``.

        Starts the first full read if none ran (and waits for it up to ``startup_wait_seconds``), checks at most every
        ``refresh_seconds`` whether the catalog changed (then re-reads in the background), then refits if due (and
        ``fit``). ``force`` re-reads everything now, on this thread (tests and tools; never the request path).
        """
        if force:
            self._load(db, wait=True)
        elif self.tables is None:
            if not self._loading:
                self._load(db, wait=False)  # the first read, or again after a failed one
            loader = self._loader
            if loader is not None:
                loader.join(self.startup_wait_seconds)
        else:
            now = self.clock()
            if now - self._catalog_checked_at >= self.refresh_seconds:
                self._catalog_checked_at = now
                row = db.execute("SELECT version FROM data_versions WHERE name = 'catalog'").fetchone()
                if row is not None and row[0] != self.tables.catalog_version and not self._loading:
                    self.reload(db)
        if fit:
            self.maybe_refit(force=force)
        return self

    def refit_due(self) -> bool:
        """Whether the Bradley–Terry state is missing, or ``refit_votes`` counted votes or ``refit_seconds`` behind."""
        tables, state = self.tables, self.state
        if tables is None:
            return False
        if state is None or len(state.ratings) != len(tables.model_ids):
            return True
        changed = self._changes - self._fitted_changes
        return changed >= self.refit_votes or (changed > 0 and self.clock() - self.refitted_at >= self.refit_seconds)

    def maybe_refit(self, *, force: bool = False) -> bool:
        """Refit the Bradley–Terry state if due (or ``force``) and no other thread is at it; True if it refitted."""
        if not (force or self.refit_due()):
            return False
        if not self._refit_lock.acquire(blocking=False):
            return False
        try:
            with self._lock:
                tables, changes = self.tables, self._changes
                if tables is None:
                    return False
                counts = np.maximum(tables.counts, 0)
            state = self.state
            same_models = state is not None and len(state.theta) == len(tables.model_ids)
            fitted = fit_state(counts, params=self.params, theta0=state.theta if same_models else None)
            self.state, self.refitted_at, self._fitted_changes = fitted, self.clock(), changes
            return True
        finally:
            self._refit_lock.release()


def _choose(rng: random.Random, probabilities: np.ndarray) -> int:
    """An index drawn with ``probabilities`` from ``rng`` (one ``rng.random()`` call)."""
    cumulative = np.cumsum(probabilities)
    x = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, x, side="right"), len(cumulative) - 1))


def draw_replica(
    db: sqlite_utils.Database, rng: random.Random, *, suite: str | None = None, annotator_id: int | None = None,
    stats: SamplingStats | None = None,
) -> Replica | None:
    """A battle (same prompt, left and right images) with exactly one non-excluded human vote, not cast by
    ``annotator_id``, chosen uniformly among those (:meth:`SamplingStats.pick_single_vote`); None if there is none,
    or if the server's ``stats`` are still at their first full read. Without ``stats``, a fresh one is read.

    The candidates are kept in memory, vote by vote: a draw reads one vote by its id, however many there are.
    """
    if stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=False)
    else:
        stats.refresh(db, fit=False)
    vote_id = stats.pick_single_vote(rng, suite, annotator_id)
    if vote_id is None:
        return None
    row = db.execute("SELECT prompt_id, left_image_id, right_image_id FROM votes WHERE id = ?", [vote_id]).fetchone()
    return Replica(*row) if row is not None else None


def draw_pairing(
    db: sqlite_utils.Database,
    rng: random.Random,
    strategy: str,
    *,
    suite: str | None = None,
    stats: SamplingStats | None = None,
    annotator_id: int | None = None,
    replication_share: float = 0.0,
    pool: PromptPool | None = None,
) -> Pairing:
    """Draw the next battle's prompt and images under ``strategy`` (module docstring).

    - With probability ``replication_share`` (one ``rng.random()`` draw, made only when it is > 0) a
      :class:`Replica` of a battle with one human vote from someone other than ``annotator_id``, if there is one.
    - ``"uniform"``: exactly :func:`arena.battles.draw_uniform` (the same random draws).
    - ``"balanced"`` / ``"active"``: a model pair from :func:`pair_probabilities` over the pairs that share an
      eligible prompt (of ``suite``, if given), then the least-shown prompt for that pair, an image of each, sides by
      a coin. ``stats`` is the server's :class:`SamplingStats` (kept up to date vote by vote; a draw reads no votes);
      without one, a fresh one is read and fitted for this draw. Before the server's first full read is done, a
      :class:`UniformDraw`.

    Deterministic for a seeded ``rng`` and the same database. Raises :class:`arena.battles.NoBattleAvailable` when
    no prompt has images of two models.
    """
    check_strategy(strategy)
    if not 0.0 <= replication_share <= 1.0:
        raise ValueError(f"replication_share is a share between 0 and 1, got {replication_share}.")
    active = strategy == "active"
    if replication_share > 0 and rng.random() < replication_share:
        stats = stats or SamplingStats().refresh(db, force=True, fit=False)
        replica = draw_replica(db, rng, suite=suite, annotator_id=annotator_id, stats=stats)
        if replica is not None:
            return replica
    if strategy == "uniform":
        return draw_uniform(db, rng, suite=suite, pool=pool)
    if stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=active)
    else:
        stats.refresh(db, fit=active)
    tables = stats.tables
    if tables is None:
        return UniformDraw(*astuple(draw_uniform(db, rng, suite=suite, pool=pool)))
    n = len(tables.model_ids)
    eligible, available = tables.scope(suite)
    if not eligible.any():
        return draw_uniform(db, rng, suite=suite)  # raises NoBattleAvailable with the usual message
    state = stats.state
    if state is not None and np.shape(state.ratings)[-1] != n:
        state = None  # the models changed and the refit has not run yet: balanced meanwhile
    probabilities = pair_probabilities(strategy, available=available, pair_counts=stats.pair_counts(tables),
                                       state=state, params=stats.params)
    k = _choose(rng, probabilities)
    i, j = pair_index(n)
    a, b = int(i[k]), int(j[k])
    rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if len(rows) == 0:  # cannot happen: the pair is available
        raise NoBattleAvailable("No prompt has images of both models drawn; refresh the sampling statistics.")
    chosen = rows[_choose(rng, prompt_probabilities(*stats.prompt_counts(tables, rows, k)))]
    prompt_id = int(tables.prompt_ids[chosen])
    model_a, model_b = tables.model_ids[a], tables.model_ids[b]
    images: dict[int, list[int]] = {model_a: [], model_b: []}
    for image_id, model_id in db.execute(
        "SELECT id, model_id FROM images WHERE prompt_id = ? AND model_id IN (?, ?) ORDER BY model_id, idx",
        [prompt_id, model_a, model_b],
    ):
        images[model_id].append(image_id)
    if not images[model_a] or not images[model_b]:  # images removed since the counts were read
        stats.reload(db)
        return UniformDraw(*astuple(draw_uniform(db, rng, suite=suite, pool=pool)))
    image_a, image_b = rng.choice(images[model_a]), rng.choice(images[model_b])
    if rng.random() < 0.5:
        image_a, image_b = image_b, image_a
    stats.note_served(prompt_id, model_a, model_b)
    return Pairing(prompt_id, image_a, image_b)


# ---------------------------------------------------------------------------------------------------------------
# Admin tables: where the votes went


def _vote_rows(db: sqlite_utils.Database, voter_kind: str | None, include_excluded: bool, suite: str | None):
    clauses, params = [], []
    if voter_kind:
        clauses.append("v.voter_kind = ?")
        params.append(voter_kind)
    if not include_excluded:
        clauses.append("v.excluded = 0")
    if suite:
        clauses.append("p.suite = ?")
        params.append(suite)
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return db.execute(
        f"""
        SELECT b.prompt_id, ml.name, mr.name, v.outcome, b.left_image_id, b.right_image_id
        FROM votes v JOIN battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id
        JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id
        JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id
        {where}
        """,
        params,
    ).fetchall()


def _votes_table(db, voter_kind, include_excluded, suite) -> pd.DataFrame:
    rows = _vote_rows(db, voter_kind, include_excluded, suite)
    return pd.DataFrame(rows, columns=["prompt_id", "model_a", "model_b", "outcome", "image_a", "image_b"])


def votes_per_model(
    db: sqlite_utils.Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per model (all models, fewest votes first): ``model, votes, share, vs_mean, wins, losses, ties,
    both_bad``. ``share`` is the model's share of appearances (each vote shows two models; uniform: 2/n per model
    when every model has every prompt); ``vs_mean`` = votes / mean votes per model."""
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    models = [row[0] for row in db.execute("SELECT name FROM models ORDER BY name")]
    table = pd.DataFrame({"model": models})
    stats = {}
    for name in models:
        as_a, as_b = votes[votes["model_a"] == name], votes[votes["model_b"] == name]
        stats[name] = {
            "votes": len(as_a) + len(as_b),
            "wins": int((as_a["outcome"] == "A").sum() + (as_b["outcome"] == "B").sum()),
            "losses": int((as_a["outcome"] == "B").sum() + (as_b["outcome"] == "A").sum()),
            "ties": int((as_a["outcome"] == "tie").sum() + (as_b["outcome"] == "tie").sum()),
            "both_bad": int((as_a["outcome"] == "both_bad").sum() + (as_b["outcome"] == "both_bad").sum()),
        }
    for column in ("votes", "wins", "losses", "ties", "both_bad"):
        table[column] = [stats[m][column] for m in models]
    total = table["votes"].sum()
    table["share"] = (table["votes"] / total).round(4) if total else 0.0
    mean = table["votes"].mean() if len(table) else 0.0
    table["vs_mean"] = (table["votes"] / mean).round(2) if mean else np.nan
    table = table.sort_values(["votes", "model"], kind="stable").reset_index(drop=True)
    return table[["model", "votes", "share", "vs_mean", "wins", "losses", "ties", "both_bad"]]


def votes_per_pair(
    db: sqlite_utils.Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per pair of models that share a prompt (fewest votes first): ``model_1, model_2`` (by name),
    ``prompts`` (prompts with images of both), ``votes, decisive, share, vs_mean``; pairs without votes are listed."""
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    where, params = ("WHERE p.suite = ?", [suite]) if suite else ("", [])
    shared = db.execute(
        f"""
        SELECT ma.name, mb.name, COUNT(DISTINCT ia.prompt_id)
        FROM images ia JOIN images ib ON ib.prompt_id = ia.prompt_id AND ib.model_id > ia.model_id
        JOIN models ma ON ma.id = ia.model_id JOIN models mb ON mb.id = ib.model_id
        JOIN prompts p ON p.id = ia.prompt_id {where}
        GROUP BY ia.model_id, ib.model_id
        """,
        params,
    ).fetchall()
    prompts = {tuple(sorted((a, b))): count for a, b, count in shared}
    first = votes[["model_a", "model_b"]].min(axis=1) if len(votes) else pd.Series([], dtype=object)
    second = votes[["model_a", "model_b"]].max(axis=1) if len(votes) else pd.Series([], dtype=object)
    keyed = pd.DataFrame({"model_1": first, "model_2": second,
                          "decisive": votes["outcome"].isin(["A", "B"]) if len(votes) else []})
    grouped = keyed.groupby(["model_1", "model_2"]).agg(votes=("decisive", "size"), decisive=("decisive", "sum"))
    keys = sorted(set(prompts) | set(grouped.index))
    table = pd.DataFrame(keys, columns=["model_1", "model_2"]) if keys else pd.DataFrame(
        {"model_1": pd.Series([], dtype=object), "model_2": pd.Series([], dtype=object)})
    table["prompts"] = [prompts.get(key, 0) for key in keys]
    table["votes"] = [int(grouped["votes"].get(key, 0)) for key in keys]
    table["decisive"] = [int(grouped["decisive"].get(key, 0)) for key in keys]
    total = table["votes"].sum()
    table["share"] = (table["votes"] / total).round(4) if total else 0.0
    mean = table["votes"].mean() if len(table) else 0.0
    table["vs_mean"] = (table["votes"] / mean).round(2) if mean else np.nan
    table = table.sort_values(["votes", "model_1", "model_2"], kind="stable").reset_index(drop=True)
    return table[["model_1", "model_2", "prompts", "votes", "decisive", "share", "vs_mean"]]


def votes_per_prompt(
    db: sqlite_utils.Database, *, voter_kind: str | None = "human", include_excluded: bool = False,
    suite: str | None = None,
) -> pd.DataFrame:
    """One row per prompt with images of two or more models (fewest votes first): ``prompt_id, suite, subset,
    variant, prompt, models`` (with an image), ``votes, pairs_voted`` (distinct model pairs with a vote),
    ``max_per_pair`` (most votes of one pair on it), ``replicated`` (battles with two or more votes)."""
    where, params = ("AND p.suite = ?", [suite]) if suite else ("", [])
    prompts = pd.DataFrame(
        db.execute(
            f"""
            SELECT p.id, p.suite, p.subset, p.variant, p.text, COUNT(DISTINCT i.model_id)
            FROM prompts p JOIN images i ON i.prompt_id = p.id WHERE 1 = 1 {where}
            GROUP BY p.id HAVING COUNT(DISTINCT i.model_id) >= 2 ORDER BY p.id
            """,
            params,
        ).fetchall(),
        columns=["prompt_id", "suite", "subset", "variant", "prompt", "models"],
    )
    votes = _votes_table(db, voter_kind, include_excluded, suite)
    if len(votes):
        votes["pair"] = [tuple(sorted(p)) for p in zip(votes["model_a"], votes["model_b"])]
        votes["battle"] = [(p, min(a, b), max(a, b)) for p, a, b in
                           zip(votes["prompt_id"], votes["image_a"], votes["image_b"])]
        per_pair = votes.groupby(["prompt_id", "pair"]).size()
        per_battle = votes.groupby("battle").size()
        replicated = pd.Series([key[0] for key in per_battle[per_battle >= 2].index], dtype=np.int64).value_counts()
        summary = pd.DataFrame({
            "votes": votes.groupby("prompt_id").size(),
            "pairs_voted": per_pair.groupby(level=0).size(),
            "max_per_pair": per_pair.groupby(level=0).max(),
        })
        summary["replicated"] = replicated.reindex(summary.index).fillna(0)
    else:
        summary = pd.DataFrame(columns=["votes", "pairs_voted", "max_per_pair", "replicated"])
    table = prompts.join(summary, on="prompt_id")
    for column in ("votes", "pairs_voted", "max_per_pair", "replicated"):
        table[column] = table[column].fillna(0).astype(np.int64)
    return table.sort_values(["votes", "prompt_id"], kind="stable").reset_index(drop=True)


def votes_by_strategy(votes: pd.DataFrame) -> pd.DataFrame:
    """Votes per sampling strategy of a vote table with a ``strategy`` column (:func:`arena.export.votes_frame`):
    ``strategy, votes, share``, most votes first."""
    if "strategy" not in votes.columns:
        raise ValueError("The vote table has no 'strategy' column; read it with arena.export.votes_frame.")
    counts = votes["strategy"].value_counts()
    table = pd.DataFrame({"strategy": counts.index.astype(str), "votes": counts.to_numpy(dtype=np.int64)})
    table["share"] = (table["votes"] / max(int(table["votes"].sum()), 1)).round(4)
    return table.sort_values(["votes", "strategy"], ascending=[False, True], kind="stable").reset_index(drop=True)


def strategy_note(votes: pd.DataFrame) -> str:
    """One line for the leaderboard: which strategies produced these votes, e.g.
    "Votes by sampling strategy: active 812 (90%), uniform 90 (10%)."."""
    table = votes_by_strategy(votes)
    if table.empty:
        return "No votes yet."
    parts = ", ".join(f"{row.strategy} {row.votes} ({row.share:.0%})" for row in table.itertuples())
    return f"Votes by sampling strategy: {parts}."
