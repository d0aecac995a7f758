"""Drawing battles: the uniform draw, the pair-first draws of the other strategies, replicas, and serving a drawn
battle.

The ``uniform`` strategy is the published protocol (T1): a prompt uniformly among those with images from at least two
models (optionally within a suite), then two distinct models uniformly among those with an image for it, then one of
each model's images for that prompt, then a fair coin for which one is shown on the left (A) (:func:`draw_uniform`).
The other strategies draw the pair first, with the shares of :mod:`sampling.strategies` over the server's counts
(:class:`sampling.sampler.SamplingStats`), and use the same prompt pool (:func:`draw_pairing`); a share of the draws
may re-serve a battle with one vote (:func:`draw_replica`).

Every draw for an annotator leaves out the prompts they have already voted on, or keeps the least seen once they saw
them all (:mod:`sampling.prompt_pool`); it never refuses for this reason. Judges' draws (no annotator) are the
protocol's as stated.
"""

from __future__ import annotations

import random
from dataclasses import astuple, dataclass
from typing import ClassVar

import numpy as np

from datamodel.battles import Battle, Pairing, record_battle
from datamodel.database import Database
from datamodel.sampling_reads import eligible_prompts, not_shown, pair_images, prompt_images, vote_pairing
from sampling.prompt_pool import PromptPool, seen_prompts
from sampling.sampler import SamplingStats
from sampling.strategies import (
    UNIFORM,
    check_strategy,
    get_strategy,
    pair_index,
    pair_probabilities,
    prompt_probabilities,
)
from sampling.warmup import warming_pairs, with_warmup


class NoBattleAvailable(LookupError):
    """No prompt has images from two models (within the filter); the message says what to add."""


@dataclass(frozen=True)
class Replica(Pairing):
    """A :class:`~datamodel.battles.Pairing` that re-serves a battle with one human vote (for inter-annotator
    agreement).

    It is recorded under the configured strategy; the votes on it share the original's ``pair_key``.
    """


@dataclass(frozen=True)
class UniformDraw(Pairing):
    """A :class:`~datamodel.battles.Pairing` drawn by ``uniform`` where a pair-first strategy (``balanced``,
    ``active``, …) was asked for, because the sampler's counts were not read yet (start-up,
    :meth:`SamplingStats.refresh`). Record its battle under :attr:`strategy`, the one that really drew it
    (:func:`arena.session.vote` does)."""

    strategy: ClassVar[str] = UNIFORM.name


def draw_uniform(
    db: Database, rng: random.Random, *, suite: str | None = None, pool: PromptPool | None = None,
    annotator_id: int | None = None,
) -> Pairing:
    """The published protocol: uniform prompt, two distinct uniform models, uniform image each, random sides.

    For an annotator, the prompt is uniform among those they have not voted on (else the least seen: module
    docstring); the same random draws either way."""
    prompt_ids = pool.eligible_ids(db, suite) if pool is not None else eligible_prompts(db, suite)
    if not len(prompt_ids):
        scope = f"suite {suite!r}" if suite else "any suite"
        raise NoBattleAvailable(
            f"No prompt of {scope} has images from two models yet. Generate or import images "
            f"(python -m generators run, python -m arena import-images).{not_shown(db)}"
        )
    if annotator_id is not None:
        seen = seen_prompts(db, annotator_id, pool)
        if len(seen):
            prompt_ids = np.asarray(prompt_ids, dtype=np.int64)
            keep = seen.choosable(prompt_ids)
            if not keep.all():
                prompt_ids = prompt_ids[keep]
    prompt_id = int(rng.choice(prompt_ids))
    images_by_model: dict[int, list[int]] = {}
    for image_id, model_id in (pool.images(db, prompt_id) if pool is not None else prompt_images(db, prompt_id)):
        images_by_model.setdefault(model_id, []).append(image_id)
    model_a, model_b = rng.sample(sorted(images_by_model), 2)  # random order = random sides
    return Pairing(prompt_id, rng.choice(images_by_model[model_a]), rng.choice(images_by_model[model_b]))




def serve_battle(
    db: Database,
    rng: random.Random,
    *,
    session_id: str,
    annotator_id: int | None = None,
    judge: str | None = None,
    suite: str | None = None,
    strategy: str = UNIFORM.name,
    pairing: Pairing | None = None,
    pool: PromptPool | None = None,
    now: float | None = None,
) -> Battle:
    """Draw a battle uniformly (or use ``pairing``), record it as served to an annotator or a judge, and return it."""
    check_strategy(strategy)
    pairing = pairing or draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
    return record_battle(db, pairing, session_id=session_id, annotator_id=annotator_id, judge=judge,
                         strategy=strategy, now=now)

def _choose(rng: random.Random, probabilities: np.ndarray) -> int:
    """An index drawn with ``probabilities`` from ``rng`` (one ``rng.random()`` call)."""
    cumulative = np.cumsum(probabilities)
    x = rng.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, x, side="right"), len(cumulative) - 1))


def draw_replica(
    db: Database, rng: random.Random, *, suite: str | None = None, annotator_id: int | None = None,
    stats: SamplingStats | None = None, pool: PromptPool | None = None,
) -> Replica | None:
    """A battle (same prompt, left and right images) with exactly one non-excluded human vote, not cast by
    ``annotator_id`` and not of a prompt ``annotator_id`` has voted on (:func:`seen_prompts`, kept by the server's
    ``pool``), chosen uniformly among those (:meth:`SamplingStats.pick_single_vote`); None if there is none, or if the
    server's ``stats`` are still at their first full read. Without ``stats``, a fresh one is read.

    The candidates are kept in memory, vote by vote: a draw reads one vote by its id, however many there are.
    """
    if stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=False)
    else:
        stats.refresh(db, fit=False)
    seen = seen_prompts(db, annotator_id, pool).prompt_ids if annotator_id is not None else None
    vote_id = stats.pick_single_vote(rng, suite, annotator_id, seen)
    if vote_id is None:
        return None
    row = vote_pairing(db, vote_id)
    return Replica(*row) if row is not None else None  # None too when an image may no longer be shown


def draw_pairing(
    db: Database,
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
      :class:`Replica` of a battle with one human vote from someone other than ``annotator_id``, of a prompt
      ``annotator_id`` has not voted on, if there is one.
    - A ``prompt_first`` strategy (:class:`sampling.strategies.Strategy`; ``uniform``): exactly
      :func:`sampling.draws.draw_uniform` (the same random draws), except while a new model warms up
      (:mod:`sampling.warmup`; only with the server's ``stats``): then a share ``warmup_share`` of the draws (one
      more ``rng.random()``) are pair-first draws among the pairs that hold a warming model, uniformly.
    - Any other (``balanced``, ``active``, a registered one): a model pair from :func:`pair_probabilities` over the
      pairs that share an eligible prompt (of ``suite``, if given), with the warm-up's share for new models
      (:func:`sampling.warmup.with_warmup`), then the least-shown prompt for that pair, an image of each, sides by a
      coin. ``stats`` is the server's :class:`SamplingStats` (kept up to date vote by vote;
      a draw reads no votes; refitted first when the strategy ``needs_fit``); without one, a fresh one is read (and
      fitted) for this draw. Before the server's first full read is done, a :class:`UniformDraw`.
    - For an annotator, the prompts they have voted on are left out while the scope has others, else only the least
      seen are kept (:mod:`sampling.prompt_pool`; ``pool`` keeps what each annotator saw): the pair is drawn with the
      strategy's probabilities conditioned on its sharing a prompt kept (when the pair drawn first has none, once
      more among those that do: one more ``rng.random()``), then the prompt among those kept. When every pair shares
      every prompt, as at study scale, that costs nothing but finding the prompts kept.

    Deterministic for a seeded ``rng`` and the same database. Raises :class:`datamodel.battles.NoBattleAvailable` when
    no prompt has images of two models.
    """
    spec = get_strategy(strategy)
    if not 0.0 <= replication_share <= 1.0:
        raise ValueError(f"replication_share is a share between 0 and 1, got {replication_share}.")
    if replication_share > 0 and rng.random() < replication_share:
        stats = stats or SamplingStats().refresh(db, force=True, fit=False)
        replica = draw_replica(db, rng, suite=suite, annotator_id=annotator_id, stats=stats, pool=pool)
        if replica is not None:
            return replica
    if spec.prompt_first:
        if stats is None or stats.params.warmup_battles <= 0:
            return draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
        stats.refresh(db, fit=False)
    elif stats is None:
        stats = SamplingStats().refresh(db, force=True, fit=spec.needs_fit)
    else:
        stats.refresh(db, fit=spec.needs_fit)
    tables = stats.tables
    if tables is None:
        pairing = draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
        return pairing if spec.prompt_first else UniformDraw(*astuple(pairing))
    n = len(tables.model_ids)
    eligible, available = tables.scope(suite)
    if not eligible.any():
        return draw_uniform(db, rng, suite=suite)  # raises NoBattleAvailable with the usual message
    counts = stats.pair_counts(tables)
    warming = warming_pairs(counts, available, stats.params)
    if spec.prompt_first:  # the published draw, unless this is one of the warm-up's share of draws
        if not warming.any() or rng.random() >= stats.params.warmup_share:
            return draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)
    narrowed = False  # to the prompts the annotator may see (module docstring of sampling.prompt_pool)
    if annotator_id is not None:
        seen = seen_prompts(db, annotator_id, pool)
        if len(seen):
            rows = np.flatnonzero(eligible)
            keep = seen.choosable(tables.prompt_ids[rows])
            if not keep.all():
                eligible, narrowed = np.zeros_like(eligible), True
                eligible[rows[keep]] = True
    state = stats.state if spec.needs_fit else None
    if state is not None and np.shape(state.ratings)[-1] != n:
        state = None  # the models changed and the refit has not run yet: as before the first fit meanwhile
    if spec.prompt_first:  # a warm-up draw: the warming pairs, each as likely as under the published draw
        probabilities = warming / warming.sum()
    else:
        probabilities = with_warmup(pair_probabilities(spec.name, available=available, pair_counts=counts,
                                                       state=state, params=stats.params), counts, available,
                                    stats.params)
    k = _choose(rng, probabilities)
    i, j = pair_index(n)
    a, b = int(i[k]), int(j[k])
    rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if narrowed and len(rows) == 0:  # none of this pair's prompts is left to the annotator: draw among those that are
        shared = tables.pairs_sharing(np.flatnonzero(eligible))
        weights = np.where(shared, probabilities, 0.0)
        k = _choose(rng, weights if weights.sum() > 0 else shared.astype(np.float64))
        a, b = int(i[k]), int(j[k])
        rows = np.flatnonzero(eligible & tables.has_image[:, a] & tables.has_image[:, b])
    if len(rows) == 0:  # cannot happen: the pair is available
        raise NoBattleAvailable("No prompt has images of both models drawn; refresh the sampling statistics.")
    chosen = rows[_choose(rng, prompt_probabilities(*stats.prompt_counts(tables, rows, k)))]
    prompt_id = int(tables.prompt_ids[chosen])
    model_a, model_b = tables.model_ids[a], tables.model_ids[b]
    images: dict[int, list[int]] = {model_a: [], model_b: []}
    for image_id, model_id in pair_images(db, prompt_id, model_a, model_b):
        images[model_id].append(image_id)
    if not images[model_a] or not images[model_b]:  # images removed since the counts were read
        stats.reload(db)
        return UniformDraw(*astuple(draw_uniform(db, rng, suite=suite, pool=pool, annotator_id=annotator_id)))
    image_a, image_b = rng.choice(images[model_a]), rng.choice(images[model_b])
    if rng.random() < 0.5:
        image_a, image_b = image_b, image_a
    stats.note_served(prompt_id, model_a, model_b)
    return Pairing(prompt_id, image_a, image_b)
