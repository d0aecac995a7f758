"""Simulated arenas: annotators who answer from known ratings, battles drawn by the app's own strategies.

Two users: :mod:`tools.simulate` (how many votes each strategy needs, against a published truth) and the study
planner (:mod:`sampling.planner`: how many more votes the current arena needs, against truths drawn around its fit).
Both run many repetitions in lock-step as one batch of numpy arrays (the leading axis R), through :func:`walk`.

The annotators (:func:`outcome_probabilities`): a vote on models i, j is "both bad" with probability b_ij; otherwise a
Davidson (1970, JASA 65:317) tie or win: P(tie) ∝ ν√(π_i π_j), P(i wins) ∝ π_i, P(j wins) ∝ π_j with π = 10^(R/400).
Among decisive votes P(i beats j) is exactly Bradley–Terry, so the leaderboard's fit is correctly specified.

The draws (:func:`walk`): each repetition's pairs come from :func:`sampling.strategies.pair_probabilities`, the
function the server uses, with the warm-up of new models (:func:`sampling.warmup.with_warmup`) as the server applies
it; for a strategy that ``needs_fit`` the state is refitted with :func:`sampling.strategies.fit_state` (the server's
refit) whenever the votes have grown by ``Schedule.refit_growth`` or ``Schedule.refit_every`` votes, whichever is
more (checked before every batch of draws, not only at the checkpoints), and stays fixed in between, as in the
server between refits (the server's cadence is ``Schedule(refit_every=50, refit_growth=0)``; the default grows
with the votes, which the planner uses for speed); the probabilities are recomputed from the counts
every ``Schedule.redraw_every`` votes (or ``redraw_growth`` of the votes so far, whichever is more). Models can join
late (``arrivals``): a pair is available once both of its models have arrived.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from sampling.strategies import SamplingParams, fit_state, get_strategy, n_models_of, pair_index, pair_probabilities
from sampling.warmup import with_warmup

DAVIDSON_NU = 0.353  # ν/(2 + ν) = 15% ties between equal models


def davidson_outcomes(true_elo: np.ndarray, both_bad: np.ndarray, nu: float = DAVIDSON_NU) -> np.ndarray:
    """(…, K, 4) probabilities of (i wins, j wins, tie, both bad) per pair (i < j) for ratings (…, n) in Elo (near
    1000: π = 10^(R/400) must not overflow) and both-bad probabilities (…, K): Davidson ties and wins among the votes
    that are not both bad."""
    r = np.asarray(true_elo, dtype=np.float64)
    i, j = pair_index(r.shape[-1])
    pi_i, pi_j = 10.0 ** (r[..., i] / 400.0), 10.0 ** (r[..., j] / 400.0)
    tie = nu * np.sqrt(pi_i * pi_j)
    denom = pi_i + pi_j + tie
    both_bad = np.broadcast_to(np.asarray(both_bad, dtype=np.float64), denom.shape)
    rest = 1.0 - both_bad
    return np.stack([rest * pi_i / denom, rest * pi_j / denom, rest * tie / denom, both_bad], axis=-1)


def outcome_probabilities(
    true_elo: Sequence[float] | np.ndarray, *, bad_top: float = 0.15, bad_bottom: float = 0.45, nu: float = DAVIDSON_NU
) -> np.ndarray:
    """(K, 4) probabilities of (i wins, j wins, tie, both bad) per pair, with b_ij = q_i·q_j, where q falls linearly
    from ``bad_top`` for the best model to ``bad_bottom`` for the worst (weaker models draw more "both bad")."""
    r = np.asarray(true_elo, dtype=np.float64)
    span = r.max() - r.min()
    q = bad_bottom + (bad_top - bad_bottom) * (r - r.min()) / (span if span > 0 else 1.0)
    i, j = pair_index(len(r))
    return davidson_outcomes(r, q[i] * q[j], nu)


def checkpoints(max_votes: int, *, step: int = 50, growth: float = 0.02, start: int = 0) -> np.ndarray:
    """Vote counts at which criteria are checked: t_{k+1} = t_k + max(step, ⌈growth·t_k⌉) from ``start``, ending at
    ``max_votes``."""
    points = [start + step]
    while points[-1] < max_votes:
        points.append(min(max_votes, points[-1] + max(step, int(np.ceil(growth * points[-1])))))
    return np.array(points, dtype=np.int64)


def count_tensors(pair_outcomes: np.ndarray, n: int) -> np.ndarray:
    """Count tensors (R, n, n, 4) (:mod:`ratings.votes`) from outcomes per pair (R, K, 4), the lower-indexed model of
    each pair shown as A (sides do not matter to the simulated annotators)."""
    i, j = pair_index(n)
    counts = np.zeros(pair_outcomes.shape[:1] + (n, n, 4), dtype=np.int64)
    counts[:, i, j, :] = pair_outcomes
    return counts


def pair_outcomes_of(counts: np.ndarray) -> np.ndarray:
    """Outcomes per pair (…, K, 4) of count tensors (…, n, n, 4), folded onto the lower-indexed model as A."""
    counts = np.asarray(counts)
    i, j = pair_index(counts.shape[-2])
    swapped = counts[..., j, i, :][..., [1, 0, 2, 3]]
    return counts[..., i, j, :] + swapped


def spearman_rows(estimates: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Spearman's ρ = 1 − 6Σd²/(n(n²−1)) of each row of ``estimates`` with ``truth`` (one truth, or one per row; no
    tied values)."""
    n = truth.shape[-1]
    est_rank = np.argsort(np.argsort(estimates, axis=-1), axis=-1)
    true_rank = np.argsort(np.argsort(truth, axis=-1), axis=-1)
    d2 = ((est_rank - true_rank) ** 2).sum(axis=-1)
    return 1.0 - 6.0 * d2 / (n * (n * n - 1))


def top_k_rows(estimates: np.ndarray, truth: np.ndarray, k: int = 3) -> np.ndarray:
    """Whether each row's k highest estimates are the k truly best models (in any order; one truth, or one per
    row)."""
    est_top = np.sort(np.argsort(-estimates, axis=-1)[..., :k], axis=-1)
    true_top = np.sort(np.argsort(-truth, axis=-1)[..., :k], axis=-1)
    return (est_top == true_top).all(axis=-1)


def settled_at(ok: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``ok`` (reps × checkpoints): the first checkpoint from which ``ok`` holds to the end, and whether
    it ever does (rows that fail at the last checkpoint get ``points[-1]`` and False)."""
    failing = ~ok
    last_fail = np.where(failing.any(axis=1), ok.shape[1] - 1 - np.argmax(failing[:, ::-1], axis=1), -1)
    settled = last_fail < ok.shape[1] - 1
    index = np.minimum(last_fail + 1, ok.shape[1] - 1)
    return points[index], settled


@dataclass(frozen=True)
class Schedule:
    """When a simulated server refits and recomputes its draw probabilities (module docstring)."""

    refit_every: int = 50
    refit_growth: float = 0.02
    redraw_every: int = 100
    redraw_growth: float = 0.0


def walk(
    strategy: str,
    *,
    outcome_p: np.ndarray,
    points: np.ndarray,
    repetitions: int,
    rng: np.random.Generator,
    params: SamplingParams = SamplingParams(),
    schedule: Schedule = Schedule(),
    start: np.ndarray | None = None,
    arrivals: np.ndarray | None = None,
) -> Iterator[tuple[int, np.ndarray]]:
    """Run ``repetitions`` arenas under ``strategy``; yield ``(votes, pair_outcomes)`` at each checkpoint of
    ``points`` (ascending vote totals), ``pair_outcomes`` (R, K, 4) being the arrays themselves (read, do not keep:
    copy what you keep).

    ``outcome_p``: (K, 4) or (R, K, 4) outcome probabilities per pair (:func:`outcome_probabilities`); ``start``:
    (K, 4) or (R, K, 4) votes already cast (the planner's current arena; the vote totals then count them);
    ``arrivals``: (n,) the vote total at which each model joins (default: all at 0). ``rng`` is used in the order of
    the draws only, so a caller may draw from it between checkpoints (the coverage bootstrap does).
    """
    spec = get_strategy(strategy)
    outcome_p = np.asarray(outcome_p, dtype=np.float64)
    k = outcome_p.shape[-2]
    n = n_models_of(k)
    i, j = pair_index(n)
    outcomes = np.zeros((repetitions, k, 4), dtype=np.int64)
    if start is not None:
        outcomes += np.broadcast_to(np.asarray(start, dtype=np.int64), outcomes.shape)
    done = int(outcomes[0].sum())
    pair_counts = outcomes.sum(axis=2)
    arrivals = np.zeros(n, dtype=np.int64) if arrivals is None else np.asarray(arrivals, dtype=np.int64)
    joins = sorted(set(int(a) for a in arrivals if a > done))
    state = None
    refitted_at = done
    for point in points:
        while done < point:
            refit_due = state is None or done - refitted_at >= max(schedule.refit_every,
                                                                   schedule.refit_growth * refitted_at)
            if spec.needs_fit and refit_due:
                state = fit_state(count_tensors(outcomes, n), params=params,
                                  theta0=None if state is None else state.theta)
                refitted_at = done
            present = arrivals <= done
            available = present[i] & present[j]
            size = int(min(point - done, max(schedule.redraw_every, schedule.redraw_growth * done)))
            size = min([size] + [join - done for join in joins if join > done])
            probs = pair_probabilities(strategy, available=available, pair_counts=pair_counts, state=state,
                                       params=params)
            probs = with_warmup(np.broadcast_to(probs, (repetitions, k)), pair_counts, available, params)
            drawn = rng.multinomial(size, probs / probs.sum(axis=1, keepdims=True))
            outcomes += rng.multinomial(drawn, outcome_p)
            pair_counts += drawn
            done += size
        yield int(point), outcomes
