"""A small arena for the human rating tasks: the conftest's small arena plus SemVarBench and SANEval prompts, every
prompt drawn by the four models, and scripted raters and judges of known accuracy (seeded)."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import MODELS, SmallArena, build_small_arena, make_image
from datamodel.catalog import PromptSpec, add_image, add_prompts

SEMVAR_ITEMS = (
    ("sv1", "A dog chasing a cat", "A cat chasing a dog", "A cat being chased by a dog", ["Action"]),
    ("sv2", "A red cup on a blue book", "A blue cup on a red book", "On a blue book, a red cup", ["Color"]),
)
SANEVAL_PROMPTS = (
    ("spatial-1", "a dog to the left of a chair", "spatial",
     {"objects": ["dog", "chair"], "relation": {"subject": "dog", "relation": "left of", "object": "chair"}}),
    ("numeracy-1", "three apples", "numeracy", {"objects": ["apple"], "counts": {"apple": 3}}),
    ("color-1", "a red apple", "color", {"objects": ["apple"], "attribute_kind": "color",
                                         "attributes": {"apple": "red"}}),
)


def rating_prompts() -> list[PromptSpec]:
    specs = [PromptSpec("commonsense", "1", "A tree in winter", subset="Biological Laws", role="p1",
                        metadata={"description": "The tree has no leaves", "category": "Biological Laws"}),
             PromptSpec("commonsense", "1", "A tree in summer", subset="Biological Laws", role="p2",
                        metadata={"description": "The tree has green leaves", "category": "Biological Laws"})]
    for key, anchor, permutation, paraphrase, categories in SEMVAR_ITEMS:
        for role, text in (("anchor", anchor), ("permutation", permutation), ("paraphrase", paraphrase)):
            specs.append(PromptSpec("semvarbench", key, text, role=role,
                                    metadata={"categories": categories, "category": categories[0]}))
    for key, text, category, structure in SANEVAL_PROMPTS:
        specs.append(PromptSpec("saneval", key, text, subset=category, metadata={"category": category, **structure}))
    return specs


def build_rating_arena(root: Path, *, generations: int = 1, **settings) -> SmallArena:
    """The small arena (taxonomy and one Commonsense-T2I item) with one more Commonsense-T2I item, two SemVarBench
    items and three SANEval prompts, each drawn ``generations`` times by every model."""
    arena = build_small_arena(root, **settings)
    ids = add_prompts(arena.db, rating_prompts()).ids
    arena.prompt_ids.extend(ids)
    for m, model_id in enumerate(arena.model_ids.values()):
        for p, prompt_id in enumerate(arena.prompt_ids):
            for idx in range(generations):  # the small arena's own images (idx 0) are kept as they are
                add_image(arena.db, prompt_id=prompt_id, model_id=model_id, idx=idx,
                          stored=arena.media.put_image(make_image(m + 7 * idx, p)))
    return arena


def scripted_value(truth: float, accuracy: float, rng: random.Random, values: tuple[int, ...]) -> int:
    """``truth`` with probability ``accuracy``, else another of ``values`` at random."""
    if rng.random() < accuracy:
        return int(truth)
    return rng.choice([v for v in values if v != truth])


__all__ = ["MODELS", "build_rating_arena", "scripted_value"]
