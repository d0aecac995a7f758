"""Battle sampling strategies: which two models, and which prompt, the next battle shows.

Pure math over count tables first (numpy; any leading batch axes, which :mod:`arena.simulate` uses for its
repetitions), then a thin database edge (:class:`SamplingStats`, :func:`draw_pairing`, the admin tables). Randomness
is always passed in: a ``numpy.random.Generator`` in the simulation, the app's ``random.Random`` at the edge.

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
    (:func:`ratings.inter_annotator_agreement` matches votes by ``pair_key``). Such a draw returns a :class:`Replica`.
    Which battles are repeated depends on past votes only, so this is ignorable too.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import sqlite_utils
from scipy.special import expit, ndtr

from arena.battles import NoBattleAvailable, Pairing, PromptPool, draw_uniform
from ratings.bradley_terry import elo_scale, newton_bt
from ratings.votes import OUTCOMES, check_tie_policy, fit_cells

STRATEGIES: tuple[str, ...] = ("uniform", "balanced", "active")
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


def pair_index(n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """``(I, J)``: the K = n(n−1)/2 unordered pairs (I[k] < J[k]) in ``numpy.triu_indices(n, 1)`` order."""
    return np.triu_indices(n_models, k=1)


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
    i, j = pair_index(n_models)
    incidence = np.zeros((len(i), n_models))
    incidence[np.arange(len(i)), i] = 1.0
    incidence[np.arange(len(i)), j] = 1.0
    return np.asarray(pair_counts, dtype=np.float64) @ incidence


def bounded_shares(weights: np.ndarray, available: np.ndarray, low, high) -> np.ndarray:
    """Probabilities p_k = clip(λ·w_k, low, high) over the available pairs (0 elsewhere), with λ such that Σ p = 1.

    The capped-simplex ("water-filling") normalisation: shares keep the order of the weights and stay within
    [low, high]. Σ_k clip(λ w_k, low, high) grows with λ, so λ is found by bisection on log λ (100 halvings);
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

    for _ in range(100):
        mid = 0.5 * (log_lo + log_hi)
        over = clipped(mid).sum(axis=-1, keepdims=True) > 1.0
        log_hi = np.where(over, mid, log_hi)
        log_lo = np.where(over, log_lo, mid)
    shares = clipped(0.5 * (log_lo + log_hi))
    sums = shares.sum(axis=-1, keepdims=True)
    shares = shares / np.where(sums > 0, sums, 1.0)
    return np.where(has_weight, shares, uniform)


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
class CountTables:
    """What the sampler knows about the database, as arrays (model index = position in ``model_ids``).

    ``has_image[p, m]``: prompt ``prompt_ids[p]`` has an image of model ``model_ids[m]``. ``counts`` (n, n, 4): votes
    by displayed positions and outcome (:mod:`ratings.votes`); ``pair_counts`` (K,): votes per pair;
    ``prompt_pair_counts`` (prompts, K) and ``prompt_counts`` (prompts,): votes per prompt and pair, per prompt.
    Only the votes of ``voter_kind`` that are not excluded count.
    """

    model_ids: tuple[int, ...]
    prompt_ids: np.ndarray
    prompt_suites: np.ndarray
    has_image: np.ndarray
    counts: np.ndarray
    pair_counts: np.ndarray
    prompt_pair_counts: np.ndarray
    prompt_counts: np.ndarray

    @property
    def votes(self) -> int:
        """Votes read from the database (battles noted as served since are not votes)."""
        return int(self.counts.sum())


def read_count_tables(db: sqlite_utils.Database, *, voter_kind: str = "human") -> CountTables:
    """Read models, prompts with images and the vote counts from the database (three aggregate queries)."""
    model_ids = tuple(row[0] for row in db.execute("SELECT id FROM models ORDER BY id"))
    prompts = db.execute(
        "SELECT p.id, p.suite FROM prompts p WHERE p.id IN (SELECT prompt_id FROM images) ORDER BY p.id"
    ).fetchall()
    prompt_ids = np.array([row[0] for row in prompts], dtype=np.int64)
    prompt_suites = np.array([row[1] for row in prompts], dtype=object)
    n, n_prompts = len(model_ids), len(prompt_ids)
    model_index = {model_id: m for m, model_id in enumerate(model_ids)}
    prompt_index = {prompt_id: p for p, prompt_id in enumerate(prompt_ids.tolist())}
    has_image = np.zeros((n_prompts, n), dtype=bool)
    for prompt_id, model_id in db.execute("SELECT DISTINCT prompt_id, model_id FROM images"):
        has_image[prompt_index[prompt_id], model_index[model_id]] = True
    counts = np.zeros((n, n, len(OUTCOMES)), dtype=np.int64)
    k = n * (n - 1) // 2
    prompt_pair_counts = np.zeros((n_prompts, k), dtype=np.int64)
    position = np.full((n, n), -1, dtype=np.int64)
    i, j = pair_index(n)
    position[i, j] = position[j, i] = np.arange(k)
    outcome_index = {o: x for x, o in enumerate(OUTCOMES)}
    rows = db.execute(
        """
        SELECT b.prompt_id, l.model_id, r.model_id, v.outcome, COUNT(*)
        FROM votes v JOIN battles b ON b.id = v.battle_id
        JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id
        WHERE v.voter_kind = ? AND v.excluded = 0
        GROUP BY b.prompt_id, l.model_id, r.model_id, v.outcome
        """,
        [voter_kind],
    )
    for prompt_id, left, right, outcome, count in rows:
        a, b = model_index[left], model_index[right]
        if a == b:
            continue
        counts[a, b, outcome_index[outcome]] += count
        if prompt_id in prompt_index:
            prompt_pair_counts[prompt_index[prompt_id], position[a, b]] += count
    return CountTables(model_ids, prompt_ids, prompt_suites, has_image, counts, pair_votes(counts),
                       prompt_pair_counts, prompt_pair_counts.sum(axis=1))


@dataclass
class SamplingStats:
    """Vote counts and the ``active`` strategy's Bradley–Terry state for one server (its context holds one).

    - :meth:`refresh` re-reads the count tables when they are older than ``refresh_seconds`` (three aggregate
      queries), then refits the sampler's Bradley–Terry state when ``refit_votes`` votes arrived since the last fit
      or ``refit_seconds`` passed with new votes. The refit (:func:`fit_state`: one Newton fit and one n×n inverse,
      about a millisecond for 12 models) runs on the calling thread, i.e. when a battle is drawn, never when a vote
      is recorded; a thread that finds another one refitting does not wait and draws with the previous state.
    - Between refreshes, :meth:`note_served` counts the battles just drawn, so concurrent draws spread out.
    - Readers take ``tables`` and ``state`` as they are: both are immutable and replaced whole.
    - The counts and the fit cover every suite (votes of ``voter_kind``, not excluded); a suite filter at draw time
      only narrows the prompts, and with them the pairs that can be shown.
    """

    params: SamplingParams = field(default_factory=SamplingParams)
    refresh_seconds: float = 2.0
    refit_votes: int = 50
    refit_seconds: float = 60.0
    voter_kind: str = "human"
    clock: Callable[[], float] = time.monotonic
    tables: CountTables | None = None
    state: FitState | None = None
    refreshed_at: float = -math.inf
    refitted_at: float = -math.inf
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _refit_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def refresh(self, db: sqlite_utils.Database, *, force: bool = False, fit: bool = True) -> "SamplingStats":
        """Re-read the counts if stale (or ``force``), then refit if due (and ``fit``); returns ``self``."""
        now = self.clock()
        if force or self.tables is None or now - self.refreshed_at >= self.refresh_seconds:
            tables = read_count_tables(db, voter_kind=self.voter_kind)
            with self._lock:
                self.tables, self.refreshed_at = tables, now
        if fit:
            self.maybe_refit(force=force)
        return self

    def refit_due(self) -> bool:
        """Whether the Bradley–Terry state is missing, or ``refit_votes`` votes or ``refit_seconds`` behind."""
        tables, state = self.tables, self.state
        if tables is None:
            return False
        if state is None or len(state.ratings) != len(tables.model_ids):
            return True
        changed = abs(tables.votes - state.votes)  # new votes (or votes excluded since)
        return changed >= self.refit_votes or (changed > 0 and self.clock() - self.refitted_at >= self.refit_seconds)

    def maybe_refit(self, *, force: bool = False) -> bool:
        """Refit the Bradley–Terry state if due (or ``force``) and no other thread is at it; True if it refitted."""
        if not (force or self.refit_due()):
            return False
        if not self._refit_lock.acquire(blocking=False):
            return False
        try:
            tables, state = self.tables, self.state
            if tables is None:
                return False
            same_models = state is not None and len(state.theta) == len(tables.model_ids)
            fitted = fit_state(tables.counts, params=self.params, theta0=state.theta if same_models else None)
            self.state, self.refitted_at = fitted, self.clock()
            return True
        finally:
            self._refit_lock.release()

    def note_served(self, prompt_id: int, model_a: int, model_b: int) -> None:
        """Count a battle just drawn (by model ids) until the next refresh re-reads the votes."""
        with self._lock:
            tables = self.tables
            if tables is None:
                return
            index = {model_id: m for m, model_id in enumerate(tables.model_ids)}
            a, b = sorted((index[model_a], index[model_b]))
            n = len(tables.model_ids)
            k = a * n - a * (a + 1) // 2 + (b - a - 1)
            pair_counts = tables.pair_counts.copy()
            pair_counts[k] += 1
            prompt_pair_counts, prompt_counts = tables.prompt_pair_counts, tables.prompt_counts
            rows = np.flatnonzero(tables.prompt_ids == prompt_id)
            if len(rows):
                prompt_pair_counts = prompt_pair_counts.copy()
                prompt_counts = prompt_counts.copy()
                prompt_pair_counts[rows[0], k] += 1
                prompt_counts[rows[0]] += 1
            self.tables = CountTables(tables.model_ids, tables.prompt_ids, tables.prompt_suites, tables.has_image,
                                      tables.counts, pair_counts, prompt_pair_counts, prompt_counts)


def _choose(rng: random.Random, probabilities: np.ndarray) -> int:
    """An index drawn with ``probabilities`` from ``rng`` (one ``rng.random()`` call)."""
    cumulative = np.cumsum(probabilities)
    x = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, x, side="right"), len(cumulative) - 1))


def draw_replica(
    db: sqlite_utils.Database, rng: random.Random, *, suite: str | None = None, annotator_id: int | None = None
) -> Replica | None:
    """A battle (same prompt, left and right images) with exactly one non-excluded human vote, not cast by
    ``annotator_id``, chosen uniformly; None if there is none."""
    where, params = ("AND p.suite = ?", [suite]) if suite else ("", [])
    rows = db.execute(
        f"""
        SELECT b.prompt_id, b.left_image_id, b.right_image_id, v.annotator_id
        FROM votes v JOIN battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id
        WHERE v.voter_kind = 'human' AND v.excluded = 0 {where}
        GROUP BY b.prompt_id, min(b.left_image_id, b.right_image_id), max(b.left_image_id, b.right_image_id)
        HAVING COUNT(*) = 1
        ORDER BY b.prompt_id, min(b.left_image_id, b.right_image_id), max(b.left_image_id, b.right_image_id)
        """,
        params,
    ).fetchall()
    candidates = [row for row in rows if annotator_id is None or row[3] != annotator_id]
    if not candidates:
        return None
    prompt_id, left, right, _ = candidates[rng.randrange(len(candidates))]
    return Replica(prompt_id, left, right)


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
      a coin. ``stats`` is the server's :class:`SamplingStats` (refreshed here, cheaply); without one, a fresh one is
      read and fitted for this draw.

    Deterministic for a seeded ``rng`` and the same database. Raises :class:`arena.battles.NoBattleAvailable` when
    no prompt has images of two models.
    """
    check_strategy(strategy)
    if not 0.0 <= replication_share <= 1.0:
        raise ValueError(f"replication_share is a share between 0 and 1, got {replication_share}.")
    if replication_share > 0 and rng.random() < replication_share:
        replica = draw_replica(db, rng, suite=suite, annotator_id=annotator_id)
        if replica is not None:
            return replica
    if strategy == "uniform":
        return draw_uniform(db, rng, suite=suite, pool=pool)
    stats = (stats or SamplingStats()).refresh(db, fit=strategy == "active")
    tables = stats.tables
    n = len(tables.model_ids)
    eligible = tables.has_image.sum(axis=1) >= 2
    if suite:
        eligible &= tables.prompt_suites == suite
    if not eligible.any():
        return draw_uniform(db, rng, suite=suite)  # raises NoBattleAvailable with the usual message
    cover = tables.has_image[eligible].astype(np.int64)
    shared = cover.T @ cover  # prompts shared by each pair of models
    i, j = pair_index(n)
    available = shared[i, j] > 0
    probabilities = pair_probabilities(strategy, available=available, pair_counts=tables.pair_counts,
                                       state=stats.state, params=stats.params)
    k = _choose(rng, probabilities)
    a, b = int(i[k]), int(j[k])
    rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if len(rows) == 0:  # cannot happen: the pair is available
        raise NoBattleAvailable("No prompt has images of both models drawn; refresh the sampling statistics.")
    chosen = rows[_choose(rng, prompt_probabilities(tables.prompt_pair_counts[rows, k], tables.prompt_counts[rows]))]
    prompt_id = int(tables.prompt_ids[chosen])
    model_a, model_b = tables.model_ids[a], tables.model_ids[b]
    images: dict[int, list[int]] = {model_a: [], model_b: []}
    for image_id, model_id in db.execute(
        "SELECT id, model_id FROM images WHERE prompt_id = ? AND model_id IN (?, ?) ORDER BY model_id, idx",
        [prompt_id, model_a, model_b],
    ):
        images[model_id].append(image_id)
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
