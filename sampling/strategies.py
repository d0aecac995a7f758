"""Battle sampling strategies: which two models, and which prompt, the next battle shows.

Pure math over count tables first (numpy; any leading batch axes, which :mod:`tools.simulate` uses for its
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
    Each strategy is one :class:`Strategy` declaration in the registry :data:`STRATEGIES` (the three below at the
    end of this module): its name, a description, what its pair probabilities need (the vote counts,
    the sampler's fit) and the function that computes them. The server, the simulation and the settings ask the
    declaration (:func:`get_strategy`) and never compare names.

    ``uniform``
        The published protocol (T1): a uniform prompt, then two distinct models uniformly among those with an image
        for it, unchanged (:func:`datamodel.battles.draw_uniform`).
    ``balanced``
        P(k) ∝ (d_k · √(e_i e_j))^γ, with the pair's deficit d_k = (c̄ + 1)/(c_k + 1) of its vote count c_k
        against the mean c̄ over available pairs and each model's deficit e_i = (m̄ + 1)/(m_i + 1) of its vote
        count m_i against the mean m̄ (γ = ``balance_power``: 4 turns a pair 10% behind into 1.5 times its share);
        then :func:`bounded_shares` keeps every available pair within [u/cap, cap·u] (``balance_cap``), so no
        pair is starved or flooded.
    ``active``
        From the sampler's Bradley–Terry fit (:func:`fit_state`: ratings R in Elo and their covariance Σ):

        - σ_k² = Σ_ii + Σ_jj − 2Σ_ij, the variance of the fitted difference R_i − R_j;
        - P_k = Φ(−(|R_i − R_j| + s) / σ_k), the posterior probability that the pair's true order is the opposite
          of the fitted one by more than the resolution s (``active_resolution``, Elo points): an *indifference
          zone* (Bechhofer 1954, "A single-sample multiple decision procedure for ranking means of normal
          populations", Ann. Math. Statist. 25:16). High while the intervals overlap by more than s; a pair the fit
          has within s of each other stops drawing votes once σ_k is well under s, because either order is then
          within s of the truth and no affordable number of votes would settle which (two models 1 Elo apart
          need about 600,000 votes between them to be ordered at 95%). The earlier rule, Φ(−|ΔR| / √(σ_k² + s²))
          with s = 20, kept a fitted tie at P = ½ forever: it spent its focused votes on the near-ties, and the
          pairs that separate groups (11–21 Elo apart in the benchmark's truth) waited;
        - U_i = Σ_j P_ij, the *rank* uncertainty of model i (the expected number of models on the wrong side of it
          by more than s);
        - w_k = (P_k · (U_i + U_j))^α (α = ``active_sharpness``).

        This is "exp(−|ΔR|/s)·(width_i + width_j)" with the gap scaled by the pair's own uncertainty and the widths
        measured in ranks rather than Elo points: it favours uncertain pairs of models whose rank is uncertain, i.e.
        dense groups of overlapping intervals, where the ranking errors are. In exploratory runs of the simulation
        (100 repetitions) the literal exp(−|ΔR|/30)·(W_i + W_j) saved only about 15% (Spearman) and 7% (top 3) of
        the votes, because it keeps spending on near-ties and starves the pairs that decide the order of a group;
        ``python -m tools.simulate`` gives this formula's numbers.
        Finally P = f·bounded(w; 0, cap·u) + (1 − f)·B, with B the ``balanced`` probabilities and the focused share
        f = (1 − ε)·min(1, M/m): at least a share ε (``active_floor``) of exploration goes to the pairs with the
        fewest votes, so every pair keeps getting votes and the pairs that the focused part starves are refilled
        first; no pair gets more than cap·u (``active_cap``) from the focused part. The cap is 32 (was 16): in the
        simulation 32 needed about 0.03–0.05 fewer of uniform's votes than 16 on the seeds it was tuned on and as
        many as 16 on five unseen seeds (docs/methods/sampling.md); a cap binds when a few pairs carry most of the
        weight, as the adjacent pairs of one group do late in the focused phase. M = Σ_k P_k is the expected
        number of pairs misordered by more than s: once it falls below m (``active_settle``) the ranking is settled
        to within the resolution, the focused part has little left to correct, and its share shrinks in proportion,
        down to a ``balanced`` (fixed, count-driven) design. Focusing after that only chased noise among the
        near-ties (P_k all tiny, their normalised weights swinging with every refit), and that is what biased the
        top models' ratings upwards by 2–3 Elo and cost the leaderboard's intervals their coverage (below).

        ``active`` acts on its fit only once every model in play has had its first W battles (``warmup_battles``,
        the warm-up's and the leaderboard's provisional threshold, :mod:`sampling.warmup`): until then, and again
        while a model added later warms up, it draws as ``balanced``. Early decisions on noisy ratings are what
        pushes the extreme models outwards (below): in the simulation this burn-in cost no votes and took the
        coverage of the leaderboard's intervals at the benchmark's 3,370 votes from 91.4% to 93.3% (uniform 94.3%).

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
    condition): the ε floor gives every pair a growing share of votes, and the weights settle where the focused
    pairs' z-scores (|ΔR| + s)/σ_k are level (a pair drawn more narrows faster and weighs less), within the cap.
    In finite samples, though, a design that votes less on pairs that *look* far apart corrects errors
    that spread the ratings out less than errors that bunch them together, so the ratings of the extreme models
    are pushed outwards a little (the bias of adaptively collected data; Nie et al. 2018, "Why adaptively collected
    data have negative bias and how to correct for it", AISTATS), and the leaderboard's bootstrap, which resamples
    votes as if they were independent, does not see it. So this is checked, not assumed: ``python -m
    tools.simulate`` reports per strategy the coverage of the leaderboard's 95% bootstrap intervals at the end and
    at the benchmark's 3,370 votes, and the largest mean error of a rating. Sending the exploration share to the
    least-voted pairs (rather than uniformly) reduced that bias in the simulation; handing the focused share back
    to ``balanced`` once the ranking is settled (``active_settle``) removes most of it: the late votes, most of a
    study's, then come from a design that does not depend on the outcomes, and they outweigh the early ones.

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
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr

from core.registry import Registry, RegistryError
from ratings.bradley_terry import elo_scale, newton_bt
from ratings.votes import OUTCOMES, check_tie_policy

ELO_PER_NAT = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class SamplingParams:
    """The knobs of the strategies; the defaults were chosen with ``python -m tools.simulate``
    (docs/methods/sampling.md).

    - ``balance_cap``: ``balanced`` keeps every available pair within [u/cap, cap·u] of the uniform share u.
    - ``balance_power``: γ, how hard ``balanced`` pushes towards the pairs and models with fewer votes.
    - ``active_resolution``: s, in Elo points: differences below it are not worth resolving (the indifference
      zone of P_k).
    - ``active_sharpness``: α, the power of the ``active`` weights (1: proportional; larger: more focused).
    - ``active_floor``: ε, the share of ``active`` draws that explore (by ``balanced``).
    - ``active_cap``: no pair gets more than cap·u of the focused ``active`` draws.
    - ``active_settle``: m, the expected number of pairs misordered by more than s below which ``active`` hands its
      focused share back to ``balanced`` in proportion (f = (1 − ε)·min(1, M/m)); 0: never.
    - ``ridge``: prior precision on θ (natural-log strengths) of the sampler's own fit (not the leaderboard's).
    - ``z``: interval half-width in standard errors for :attr:`FitState.widths` (1.96: 95%).
    - ``tie_policy``: how ties enter the sampler's fit (use the leaderboard's, ``ARENA_TIE_POLICY``).
    - ``warmup_battles``: W, the battles a model needs before it counts as warmed up (:mod:`sampling.warmup`;
      ``ARENA_WARMUP_BATTLES``; 0: no warm-up), and before ``active`` acts on its fit.
    - ``warmup_share``: the most draws that go to models warming up (``ARENA_WARMUP_SHARE``): the cap that keeps the
      rest of the study going.
    - ``active_burnin``: the battles every model in play needs before ``active`` acts on its fit (it draws as
      ``balanced`` until then); None: ``warmup_battles``.
    """

    balance_cap: float = 4.0
    balance_power: float = 4.0
    active_resolution: float = 10.0
    active_sharpness: float = 2.0
    active_floor: float = 0.15
    active_cap: float = 32.0
    active_settle: float = 0.1
    ridge: float = 0.5
    z: float = 1.96
    tie_policy: str = "drop"
    warmup_battles: int = 200
    warmup_share: float = 0.5
    active_burnin: int | None = None

    def __post_init__(self):
        if not self.balance_cap >= 1 or not self.active_cap >= 1:
            raise ValueError(f"balance_cap and active_cap must be at least 1 (1 means uniform), got "
                             f"{self.balance_cap} and {self.active_cap}.")
        if not self.active_resolution > 0 or not self.active_sharpness > 0 or not self.balance_power > 0:
            raise ValueError(f"active_resolution (Elo points), active_sharpness and balance_power must be positive, "
                             f"got {self.active_resolution}, {self.active_sharpness} and {self.balance_power}.")
        if not 0 <= self.active_floor <= 1:
            raise ValueError(f"active_floor is a share between 0 and 1, got {self.active_floor}.")
        if not self.active_settle >= 0:
            raise ValueError(f"active_settle (expected misordered pairs) must be >= 0 (0: never settle), got "
                             f"{self.active_settle}.")
        if not self.ridge >= 0 or not self.z > 0:
            raise ValueError(f"ridge must be >= 0 and z > 0, got ridge={self.ridge}, z={self.z}.")
        if not self.warmup_battles >= 0 or not 0 < self.warmup_share < 1:
            raise ValueError(f"warmup_battles must be >= 0 (0: no warm-up) and warmup_share a share strictly between 0 "
                             f"and 1, got {self.warmup_battles} and {self.warmup_share}.")
        if self.active_burnin is not None and not self.active_burnin >= 0:
            raise ValueError(f"active_burnin (battles per model before active acts) must be >= 0, or None for "
                             f"warmup_battles, got {self.active_burnin}.")
        check_tie_policy(self.tie_policy)

    @property
    def burnin_battles(self) -> int:
        """The battles every model needs before ``active`` acts on its fit: ``active_burnin``, or ``warmup_battles``
        when that is None."""
        return self.warmup_battles if self.active_burnin is None else self.active_burnin


# ---------------------------------------------------------------------------------------------------------------
# The strategies' declarations and their registry

PairProbabilities = Callable[..., np.ndarray]
"""``probabilities(*, available, pair_counts, state, params) -> (…, K)``, called with keywords (accept ``**_`` for
what you do not use): ``available`` (…, K) booleans; ``pair_counts`` (…, K) votes per pair, or None unless the
strategy ``needs_counts``; ``state`` the sampler's :class:`FitState`, or None unless it ``needs_fit`` (and still None
before the first fit); ``params`` the :class:`SamplingParams`. Leading batch axes must broadcast through (the
simulation passes (repetitions, K) counts with a (K,) ``available``). The result is P(k) ≥ 0 with Σ_k P(k) = 1 over
the available pairs of each row and 0 on the others (all zeros for a row with no available pair)."""

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_RESERVED = frozenset({"other"})  # the leaderboard's bucket for votes of strategies it does not know


@dataclass(frozen=True)
class Strategy:
    """One sampling strategy, declared once; :data:`STRATEGIES` makes it usable everywhere by its ``name``.

    - ``name``: what ``ARENA_SAMPLING`` and ``--strategies`` say and what every battle records (lowercase letters,
      digits, ``-`` and ``_``).
    - ``description``: one line for people: what the strategy favours.
    - ``probabilities``: P(k) over the K model pairs (:data:`PairProbabilities`); :func:`pair_probabilities` calls
      it and checks the result.
    - ``needs_counts``: the probabilities read the votes per pair (the server passes its counts plus the battles in
      flight; the simulation its counts). False: they get ``pair_counts=None``.
    - ``needs_fit``: the probabilities read the sampler's Bradley–Terry state (the server refits before a draw when
      due, :meth:`sampling.sampler.SamplingStats.maybe_refit`; the simulation on its refit schedule). False: they get
      ``state=None``.
    - ``prompt_first``: the server draws by the published protocol instead of a pair from ``probabilities``: a prompt
      uniformly, then two of its models uniformly (:func:`sampling.draws.draw_uniform`), reading no vote counts at
      all (the server then keeps no :class:`~sampling.sampler.SamplingStats` unless replication asks for them).
      ``probabilities`` are then the pair shares of that draw when every model has an image for every prompt, which
      is what the simulation uses. Only ``uniform`` needs it; it cannot be combined with counts or a fit.
    """

    name: str
    description: str
    probabilities: PairProbabilities
    needs_counts: bool = True
    needs_fit: bool = False
    prompt_first: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name) or self.name in _RESERVED:
            raise ValueError(f"A sampling strategy's name is lowercase letters, digits, '-' and '_' (not "
                             f"{', '.join(sorted(_RESERVED))}), got {self.name!r}: rename it.")
        if not callable(self.probabilities):
            raise ValueError(f"Strategy {self.name!r}: probabilities must be a function of (available, pair_counts, "
                             f"state, params), got {self.probabilities!r}.")
        if self.prompt_first and (self.needs_counts or self.needs_fit):
            raise ValueError(f"Strategy {self.name!r}: a prompt_first strategy draws without the vote counts; "
                             "declare needs_counts=False and needs_fit=False, or drop prompt_first.")

    @property
    def reads_stats(self) -> bool:
        """Whether the server's draws read its :class:`~sampling.sampler.SamplingStats` (every pair-first draw
        does: the catalog of which models have which prompts, and the prompt counts, live there)."""
        return not self.prompt_first


# the three built-in strategies are declared at the end of this module; a plug-in's module (an entry point of
# t2i_arena.sampling_strategies) declares its own
STRATEGIES = Registry[Strategy]("sampling_strategies", ("sampling.strategies",), what="sampling strategy",
                                hint="(setting ARENA_SAMPLING)")


def get_strategy(name: str) -> Strategy:
    """The declaration registered as ``name``, else a :class:`core.registry.RegistryError` (a ValueError) naming
    the known strategies."""
    if not isinstance(name, str):
        raise RegistryError(f"a sampling strategy is named by a string, got {name!r}; choices: "
                            f"{', '.join(STRATEGIES)}.")
    return STRATEGIES[name]


def check_strategy(strategy: str) -> str:
    """Return ``strategy`` if it is registered (:func:`get_strategy`), else raise a ValueError naming the known ones."""
    return get_strategy(strategy).name


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
    [low, high]. Σ_k clip(λ w_k, low, high) grows with λ: one row is solved exactly (:func:`water_level`), a batch by a
    safeguarded Newton iteration on log λ (:func:`_batch_log_level`);
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
    # shares depend only on the ratios of a row's weights: scale each row to a largest weight of 1, so that λ and the
    # floor below stay finite and nonzero however tiny (even subnormal) the weights are
    largest = weights.max(axis=-1, keepdims=True)
    weights = weights / np.where(largest > 0, largest, 1.0)
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

    shares = clipped(_batch_log_level(clipped, np.where(available, weights, 0.0), log_lo, log_hi, low, high))
    sums = shares.sum(axis=-1, keepdims=True)
    shares = shares / np.where(sums > 0, sums, 1.0)
    return np.where(has_weight, shares, uniform)


def _batch_log_level(clipped, weights: np.ndarray, log_lo: np.ndarray, log_hi: np.ndarray, low, high) -> np.ndarray:
    """log λ per row with Σ_k clip(λ·w_k, low, high) = 1, for a batch of rows (:func:`bounded_shares`).

    f(λ) = Σ clip(λ·w_k, low, high) is piecewise linear with slope Σ w_k over the free entries (low < λw_k < high),
    so a Newton step λ + (1 − f)/slope lands exactly on the root once λ is in the root's segment. Each row keeps a
    bracket [log_lo, log_hi] around the root and falls back to halving it (in log λ) whenever the Newton step
    leaves the bracket or the slope is zero: a safeguarded Newton, a handful of passes where bisection to adjacent
    floats took about sixty (measured: ``python -m cProfile -m tools.simulate``, 4 repetitions).
    """
    total_weight = weights.sum(axis=-1, keepdims=True)
    empty = total_weight <= 0  # no available pair: nothing to solve
    log_scale = np.clip(-np.log(np.maximum(total_weight, 1e-300)), log_lo, log_hi)  # λ = 1/Σw: no clipping
    for _ in range(200):
        shares = clipped(log_scale)
        total = shares.sum(axis=-1, keepdims=True)
        over = total > 1.0
        log_hi = np.where(over, log_scale, log_hi)
        log_lo = np.where(over, log_lo, log_scale)
        settled = empty | (np.abs(total - 1.0) <= 1e-13) | (log_hi - log_lo <= 1e-14 * np.maximum(1.0, np.abs(log_lo)))
        if np.all(settled):
            break
        scale = np.exp(log_scale)
        free = (shares > low) & (shares < high)
        slope = np.where(free, weights, 0.0).sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = np.log(np.maximum(scale + (1.0 - total) / slope, 0.0))
        inside = (slope > 0) & (newton > log_lo) & (newton < log_hi)
        log_scale = np.where(settled, log_scale, np.where(inside, newton, 0.5 * (log_lo + log_hi)))
    return log_scale


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
    """P_k = Φ(−(|R_i − R_j| + s) / σ_k) per pair (…, K), σ_k² = Σ_ii + Σ_jj − 2Σ_ij (module docstring): the
    posterior probability that the pair's true order is the opposite of the fitted one by more than s.

    A pair with a model that has no rating yet (NaN) gets P = 1/2.
    """
    ratings = np.asarray(ratings, dtype=np.float64)
    cov = np.asarray(cov, dtype=np.float64)
    i, j = pair_index(ratings.shape[-1])
    sd = np.sqrt(np.clip(cov[..., i, i] + cov[..., j, j] - 2.0 * cov[..., i, j], 1e-12, None))
    gap = np.abs(ratings[..., i] - ratings[..., j])
    p = ndtr(-(gap + resolution) / sd)
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
    """``active``: P = f·bounded(w; 0, cap·u) + (1 − f)·B, B = :func:`balanced_pair_probabilities`, with the focused
    share f = (1 − ε)·min(1, M / m), M = Σ_k P_k (…, K)."""
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    weights = active_pair_weights(ratings, cov, resolution=params.active_resolution,
                                  sharpness=params.active_sharpness)
    shape = np.broadcast_shapes(weights.shape, pair_counts.shape, np.shape(available))
    available = np.broadcast_to(np.asarray(available, dtype=bool), shape)
    focus = 1.0 - params.active_floor
    if params.active_settle > 0:
        misorder = misorder_probabilities(ratings, cov, resolution=params.active_resolution)
        misordered = np.where(available, misorder, 0.0).sum(axis=-1, keepdims=True)
        focus = focus * np.minimum(1.0, misordered / params.active_settle)
    u = 1.0 / np.maximum(available.sum(axis=-1, keepdims=True), 1)
    focused = bounded_shares(np.broadcast_to(weights, shape), available, 0.0, params.active_cap * u)
    explore = balanced_pair_probabilities(np.broadcast_to(pair_counts, shape), available, cap=params.balance_cap,
                                          power=params.balance_power)
    return focus * focused + (1.0 - focus) * explore


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
    """Win matrices (…, n, n) of count tensors (…, n, n, 4) under a tie policy, as :func:`ratings.votes.fit_cells`
    builds them (all rows at once): W_ij = A-wins of i shown left + B-wins of i shown right, plus ½ of the ties
    (``half``, ``half_ties_drop_both_bad``) and of the both-bad votes (``half``) between i and j, either side."""
    check_tie_policy(tie_policy)
    counts = np.asarray(counts, dtype=np.float64)

    def either_side(outcome):
        return counts[..., outcome] + np.swapaxes(counts[..., outcome], -1, -2)

    wins = counts[..., OUTCOMES.index("A")] + np.swapaxes(counts[..., OUTCOMES.index("B")], -1, -2)
    if tie_policy != "drop":
        wins = wins + 0.5 * either_side(OUTCOMES.index("tie"))
    if tie_policy == "half":
        wins = wins + 0.5 * either_side(OUTCOMES.index("both_bad"))
    return wins


def fisher_information(totals: np.ndarray, theta: np.ndarray, ridge: float) -> np.ndarray:
    """H = L + ridge·I (…, n, n) for comparisons per pair ``totals`` (…, n, n; N = W + Wᵀ) at strengths ``theta``
    (…, n, nats): L_ii = Σ_j N_ij p_ij p_ji, L_ij = −N_ij p_ij p_ji, p_ij = σ(θ_i − θ_j)."""
    p = expit(theta[..., :, None] - theta[..., None, :])
    weight = totals * p * np.swapaxes(p, -1, -2)
    info = -weight
    diag = np.arange(theta.shape[-1])
    info[..., diag, diag] = weight.sum(axis=-1) + ridge + 1e-9
    return info


def elo_covariance(info: np.ndarray) -> np.ndarray:
    """The covariance of the centred ratings in Elo², P(H + 11ᵀ/n)⁻¹P·(400/ln 10)² with P = I − 11ᵀ/n, from the
    information H (…, n, n) (:func:`fit_state`)."""
    n = info.shape[-1]
    projector = np.eye(n) - 1.0 / n
    return projector @ np.linalg.inv(info + 1.0 / n) @ projector * ELO_PER_NAT**2


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
    cov = elo_covariance(fisher_information(totals, theta, params.ridge))
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

    Asks the declaration (:func:`get_strategy`): a strategy that ``needs_counts`` must be given ``pair_counts`` and
    gets them (others get None); one that ``needs_fit`` gets ``state`` (:func:`fit_state`; None before the first
    fit), others None. The result is checked against :data:`PairProbabilities`' contract, so that a strategy's
    mistake is reported here, not as a strange draw.
    """
    spec = get_strategy(strategy)
    available = np.asarray(available, dtype=bool)
    if spec.needs_counts and pair_counts is None:
        raise ValueError(f"The {spec.name} strategy needs the vote counts per pair (pair_counts).")
    p = spec.probabilities(available=available, pair_counts=pair_counts if spec.needs_counts else None,
                           state=state if spec.needs_fit else None, params=params)
    return _checked(spec, np.asarray(p, dtype=np.float64), available)


def _checked(spec: Strategy, p: np.ndarray, available: np.ndarray) -> np.ndarray:
    """``p`` if it is a probability over the available pairs of each row (:data:`PairProbabilities`), else a
    ValueError saying what is wrong."""
    if p.shape[-1:] != available.shape[-1:]:
        raise ValueError(f"Strategy {spec.name!r} returned shape {p.shape} for {available.shape[-1]} model pairs: "
                         "return one probability per pair (the last axis).")
    if not np.all(p >= 0):  # NaN fails too
        raise ValueError(f"Strategy {spec.name!r} returned negative or NaN probabilities: return P(k) >= 0.")
    if np.any(np.where(available, 0.0, p) > 0):
        raise ValueError(f"Strategy {spec.name!r} gave probability to pairs that cannot be shown: set P(k) = 0 "
                         "where available[k] is False.")
    totals = p.sum(axis=-1)
    expected = np.broadcast_to(available, np.broadcast_shapes(p.shape, available.shape)).any(axis=-1)
    if not np.allclose(totals, np.where(expected, 1.0, 0.0), atol=1e-6):
        raise ValueError(f"Strategy {spec.name!r} returned probabilities that do not sum to 1 over the available "
                         "pairs: divide them by their sum.")
    return p


# ---------------------------------------------------------------------------------------------------------------
# The built-in strategies, one declaration each (module docstring)


def _uniform(*, available, **_):
    """P(k) = 1/A over the A available pairs."""
    return uniform_pair_probabilities(available)


def _balanced(*, available, pair_counts, params, **_):
    """P(k) ∝ (d_k·√(e_i e_j))^γ within [u/cap, cap·u] (:func:`balanced_pair_probabilities`)."""
    return balanced_pair_probabilities(pair_counts, available, cap=params.balance_cap, power=params.balance_power)


def _active(*, available, pair_counts, state, params):
    """P = (1 − ε)·bounded(w; 0, cap·u) + ε·B (:func:`active_pair_probabilities`); ``balanced`` before the first fit
    and while a model in play has fewer than ``active_burnin`` battles (:func:`provisional_rows`)."""
    balanced = _balanced(available=available, pair_counts=pair_counts, params=params)
    if state is None:
        return balanced
    focused = active_pair_probabilities(state.ratings, state.cov, pair_counts, available, params)
    return np.where(provisional_rows(pair_counts, available, params.burnin_battles), balanced, focused)


def provisional_rows(pair_counts: np.ndarray, available: np.ndarray, battles: float) -> np.ndarray:
    """Per row (…, 1): whether some model with an available pair has fewer than ``battles`` battles (votes per pair
    ``pair_counts`` (…, K)); never with ``battles`` 0."""
    pair_counts = np.asarray(pair_counts, dtype=np.float64)
    available = np.broadcast_to(np.asarray(available, dtype=bool), pair_counts.shape)
    n = n_models_of(pair_counts.shape[-1])
    in_play = model_votes(available.astype(np.float64), n) > 0
    return np.asarray((in_play & (model_votes(pair_counts, n) < battles)).any(axis=-1, keepdims=True))


UNIFORM = STRATEGIES.register(Strategy(
    "uniform", "The published protocol: a prompt, then two of its models, uniformly.", _uniform,
    needs_counts=False, prompt_first=True))
BALANCED = STRATEGIES.register(Strategy(
    "balanced", "Pairs and models with fewer votes first, within a cap of the uniform share.", _balanced))
ACTIVE = STRATEGIES.register(Strategy(
    "active", "Pairs whose order the sampler's fit is least sure of, plus balanced exploration.", _active,
    needs_fit=True))
