"""Simulated four-image votes (``python -m tools.simulate``'s four-image rows): annotators who pick the best of four
shown models by Plackett–Luce, and the worst of the other three by the reversed choice, under the draws of
:mod:`sampling.kwise` (uniform, K-Sort's UCB), all repetitions in lock-step.

The annotators: the true strengths are θ = (ln 10 / 400) · Elo; the best of the shown set S is model i with
probability e^θ_i / Σ_{j∈S} e^θ_j (Plackett–Luce's first choice, exactly Bradley–Terry for two models, so the pairwise
simulation's decisive votes and these share one truth); with probability ``worst_share`` the annotator also marks the
worst of the remaining three, model w with probability e^−θ_w / Σ e^−θ_j (Marley & Louviere's best–worst). A
four-image vote has no tie and no both-bad. The vote is rank-broken as the leaderboard's protocol does
(:mod:`ratings.kwise`).

The ``ksort-ucb`` draw (:func:`sampling.kwise.ucb_four`, vectorised): the pivot is a least-shown model (ties at
random), the three opponents the largest U = −|S_i − S_q| + sqrt(ln n / n_iq), S the Bradley–Terry fit of the broken
pairs so far (ridge 1), refitted every ``refit_every`` votes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ratings.bradley_terry import newton_bt

K = 4
NAT_PER_ELO = np.log(10.0) / 400.0


def _draw_uniform(rng: np.random.Generator, present: np.ndarray, repetitions: int) -> np.ndarray:
    keys = rng.random((repetitions, len(present))) + np.where(present, 0.0, 2.0)
    return np.argsort(keys, axis=1)[:, :K]


def _draw_ucb(rng, present, strength, shown, pairs, votes) -> np.ndarray:
    """(R, 4) models: a least-shown pivot, then the three largest UCB scores against it."""
    repetitions, n = strength.shape
    rows = np.arange(repetitions)
    pivot = np.argmin(np.where(present, shown, np.inf) + rng.random((repetitions, n)) * 0.5, axis=1)
    met = pairs[rows, pivot]
    with np.errstate(divide="ignore", invalid="ignore"):
        bonus = np.where(met == 0, np.inf, np.sqrt(np.log(max(votes, 1)) / met))
    score = -np.abs(strength - strength[rows, pivot][:, None]) + bonus + rng.random((repetitions, n)) * 1e-9
    score[rows, pivot] = -np.inf
    score[:, ~present] = -np.inf
    opponents = np.argsort(-score, axis=1)[:, :K - 1]
    return np.concatenate([pivot[:, None], opponents], axis=1)


def _vote(rng, theta: np.ndarray, chosen: np.ndarray, worst_share: float) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst slot (−1: none) of each row of ``chosen`` (R, 4)."""
    logits = theta[chosen]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    best = (rng.random(len(chosen))[:, None] > np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    best = np.minimum(best, K - 1)
    q = np.exp(-(logits - logits.min(axis=1, keepdims=True)))
    q[np.arange(len(chosen)), best] = 0.0
    worst = (rng.random(len(chosen))[:, None] > np.cumsum(q / q.sum(axis=1, keepdims=True), axis=1)).sum(axis=1)
    worst = np.where(rng.random(len(chosen)) < worst_share, np.minimum(worst, K - 1), -1)
    return best, worst


def four_image_walk(strategy: str, *, true_elo: np.ndarray, points: np.ndarray, repetitions: int,
                    rng: np.random.Generator, arrivals: np.ndarray | None = None, worst_share: float = 0.5,
                    refit_every: int = 50) -> Iterator[tuple[int, np.ndarray]]:
    """Cast four-image votes up to each of ``points`` (increasing vote counts); yield (point, win matrices (R, n, n)
    of the broken pairs so far). A model joins after ``arrivals[m]`` votes."""
    theta = np.asarray(true_elo, dtype=np.float64) * NAT_PER_ELO
    n = len(theta)
    arrivals = np.zeros(n, dtype=np.int64) if arrivals is None else np.asarray(arrivals)
    wins = np.zeros((repetitions, n, n))
    shown = np.zeros((repetitions, n))
    pairs = np.zeros((repetitions, n, n))
    strength = np.zeros((repetitions, n))
    rows = np.arange(repetitions)
    cast = 0
    for point in points:
        while cast < point:
            present = arrivals <= cast
            if strategy == "ksort-ucb":
                if cast % refit_every == 0 and cast:
                    strength = newton_bt(wins, ridge=1.0, theta0=strength, max_iter=20)[0]
                chosen = _draw_ucb(rng, present, strength, shown, pairs, cast)
            else:
                chosen = _draw_uniform(rng, present, repetitions)
            best, worst = _vote(rng, theta, chosen, worst_share)
            winner = chosen[rows, best]
            for slot in range(K):
                model = chosen[:, slot]
                other = best != slot
                wins[rows[other], winner[other], model[other]] += 1
                middle = other & (worst >= 0) & (worst != slot)
                wins[rows[middle], model[middle], chosen[rows[middle], worst[middle]]] += 1
                shown[rows, model] += 1
                for partner in range(slot + 1, K):
                    pairs[rows, model, chosen[:, partner]] += 1
                    pairs[rows, chosen[:, partner], model] += 1
            cast += 1
        yield int(point), wins
