"""Which four models a four-image battle shows (the four-image mode, :mod:`datamodel.kwise`).

Two rules (setting ``four_image_strategy``):

- ``uniform``: four different models of the prompt, uniformly at random.
- ``ksort-ucb``: K-Sort Arena's exploration–exploitation matchmaking (Li et al., "K-Sort Arena: Efficient and Reliable
  Benchmarking for Generative Models via K-wise Human Preferences", 2024, §3.3). A pivot model X_i is taken (here:
  the least-compared model of the prompt, ties at random, so every model gets its turn), and its K − 1 opponents are
  the models with the largest upper confidence bound

      U(X_i, X_q) = −|S_i − S_q| + α · sqrt(ln n / n_iq),

  where S are the current strengths (natural-log Bradley–Terry strengths of the rank-broken four-image votes,
  :mod:`ratings.kwise`), n the four-image votes so far, n_iq the votes that showed both, α = 1 (the paper's
  balancing coefficient). The first term exploits (close opponents make informative comparisons: the paper's
  "players of similar skill levels are prioritised"), the second explores (a pair never compared has n_iq = 0 and
  an infinite bonus). The paper writes the first term as the score difference and picks the largest U; we take its
  negative so that the rule does what the paper's text says it does. Ties between equal U are broken at random.

The slots are shuffled after the models are chosen, so the pivot is in any slot.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ratings.bradley_terry import newton_bt
from ratings.kwise import KwiseVotes, kwise_win_matrix

K = 4
UCB_ALPHA = 1.0
RIDGE = 1.0  # of the strengths' Bradley–Terry fit
FOUR_IMAGE_STRATEGIES = ("uniform", "ksort-ucb")


@dataclass(frozen=True)
class KwiseState:
    """What ``ksort-ucb`` reads: per model (index into ``models``) its strength, votes it was in, and per pair the
    votes that showed both; ``total`` votes so far."""

    models: tuple[int, ...]  # model ids
    strength: np.ndarray
    appearances: np.ndarray
    pair_counts: np.ndarray
    total: int


def kwise_counts(models: tuple[int, ...], votes) -> tuple[KwiseVotes, np.ndarray, np.ndarray]:
    """(the votes as :class:`ratings.kwise.KwiseVotes` over ``models``, the votes each model was in, the votes each
    pair was in (n×n)) of ``votes``: (model ids of slots 1-4, best slot 1-4, worst slot or None) per counted
    four-image vote (:func:`datamodel.kwise.kwise_model_counts`); votes of a model not in ``models`` are left out."""
    index = {m: i for i, m in enumerate(models)}
    kept = [v for v in votes if all(m in index for m in v[0])]
    n = len(models)
    shown = np.array([[index[m] for m in v[0]] for v in kept], dtype=np.int64).reshape(len(kept), K)
    log = KwiseVotes(tuple(map(str, models)), shown, np.array([v[1] - 1 for v in kept], dtype=np.int64),
                     np.array([-1 if v[2] is None else v[2] - 1 for v in kept], dtype=np.int64))
    pairs = np.zeros((n, n))
    for row in shown:
        pairs[np.ix_(row, row)] += 1
    np.fill_diagonal(pairs, 0)
    return log, np.bincount(shown.ravel(), minlength=n), pairs


def kwise_state(models: tuple[int, ...], votes) -> KwiseState:
    """The state of ``models`` (ids) after ``votes`` (:func:`kwise_counts`)."""
    log, appearances, pairs = kwise_counts(models, votes)
    n, total = len(models), len(log.shown)
    strength = newton_bt(kwise_win_matrix(log, n), ridge=RIDGE)[0] if total else np.zeros(n)
    return KwiseState(tuple(models), strength, appearances, pairs, total)


def ucb_scores(pivot: int, state: KwiseState, alpha: float = UCB_ALPHA) -> np.ndarray:
    """U(pivot, q) for every model index q (module docstring); −inf for the pivot itself."""
    with np.errstate(divide="ignore", invalid="ignore"):
        bonus = alpha * np.sqrt(np.log(max(state.total, 1)) / state.pair_counts[pivot])
    bonus = np.where(state.pair_counts[pivot] == 0, np.inf, bonus)
    scores = -np.abs(state.strength - state.strength[pivot]) + bonus
    scores[pivot] = -np.inf
    return scores


def ucb_four(state: KwiseState, available: list[int], rng: random.Random, alpha: float = UCB_ALPHA) -> list[int]:
    """K-Sort's pick among the model indices ``available`` (at least four): the least-compared as the pivot, then
    the K − 1 largest U (ties at random)."""
    fewest = min(state.appearances[m] for m in available)
    pivot = rng.choice([m for m in available if state.appearances[m] == fewest])
    scores = ucb_scores(pivot, state, alpha)
    others = [m for m in available if m != pivot]
    rng.shuffle(others)  # ties at random: the sort is stable
    others.sort(key=lambda m: -scores[m])
    return [pivot, *others[:K - 1]]


def choose_models(strategy: str, state: KwiseState | None, available_ids: list[int], rng: random.Random) -> list[int]:
    """The four model ids of a battle among ``available_ids`` (the prompt's models), in random slot order."""
    if strategy not in FOUR_IMAGE_STRATEGIES:
        raise ValueError(f"Unknown four-image strategy {strategy!r}: choose one of {', '.join(FOUR_IMAGE_STRATEGIES)}.")
    if len(set(available_ids)) < K:
        raise ValueError(f"a four-image battle needs images from {K} models, got {len(set(available_ids))}")
    if strategy == "uniform" or state is None:
        chosen = rng.sample(sorted(set(available_ids)), K)
    else:
        index = {m: i for i, m in enumerate(state.models)}
        chosen = [state.models[i] for i in ucb_four(state, [index[m] for m in sorted(set(available_ids))], rng)]
    rng.shuffle(chosen)
    return chosen


class NoFourImageBattle(LookupError):
    """No prompt of the four-image suites has images from four models that battles may show."""


def draw_four(db, rng: random.Random, suites, annotator_id: int, strategy: str,
              stats=None) -> tuple[int, list[int]]:
    """(prompt id, image ids of slots 1-4) of the next four-image battle: a prompt of ``suites`` the annotator has
    voted on least in this mode (ties at random), then four of its models by ``strategy``, one image of each (at
    random among the model's images of that prompt). Reads only. ``ksort-ucb`` reads its counts and strengths from
    ``stats`` (a :class:`sampling.kwise_stats.KwiseStats`, as recent as its last refresh) when given, else every
    counted four-image vote."""
    from datamodel.kwise import four_image_prompts, kwise_model_counts
    from datamodel.sampling_reads import prompt_images

    prompts = four_image_prompts(db, suites, annotator_id)
    if not prompts:
        raise NoFourImageBattle(f"No prompt of {', '.join(suites) or 'no suite'} has images from {K} models to show.")
    fewest = min(seen for _, seen in prompts)
    prompt_id = rng.choice([p for p, seen in prompts if seen == fewest])
    by_model: dict[int, list[int]] = {}
    for image_id, model_id in prompt_images(db, prompt_id):
        by_model.setdefault(model_id, []).append(image_id)
    state = None
    if strategy == "ksort-ucb" and stats is not None:
        state = stats.state(tuple(sorted(set(by_model) | set(stats.known_models()))))
    elif strategy == "ksort-ucb":
        appearances, votes = kwise_model_counts(db)
        models = tuple(sorted(set(by_model) | set(appearances)))
        state = kwise_state(models, votes)
    chosen = choose_models(strategy, state, list(by_model), rng)
    return prompt_id, [rng.choice(by_model[model]) for model in chosen]
