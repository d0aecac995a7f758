"""A small arena for the human rating tasks: the small arena of support/arena.py plus SemVarBench and SANEval prompts,
every prompt drawn by the four models."""

from __future__ import annotations

from pathlib import Path

from support.arena import MODELS, SmallArena, build_small_arena, from_template, make_image, render_all

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


ANIMALS = ("dog", "cat", "horse", "bird", "mouse", "goat", "sheep", "fox", "owl", "bear")


def more_prompts(items: int) -> list[PromptSpec]:
    """``items`` more Commonsense-T2I items, SemVarBench items and SANEval prompts, made up for scale."""
    specs = []
    for k in range(items):
        a, b = ANIMALS[k % len(ANIMALS)], ANIMALS[(k + 1 + k // len(ANIMALS)) % len(ANIMALS)]
        specs += [PromptSpec("commonsense", f"x{k}", f"A {a} in the rain, {k}", subset="Daily Items", role="p1",
                             metadata={"description": f"The {a} is wet", "category": "Daily Items"}),
                  PromptSpec("commonsense", f"x{k}", f"A {a} under a roof, {k}", subset="Daily Items", role="p2",
                             metadata={"description": f"The {a} is dry", "category": "Daily Items"})]
        for role, text in (("anchor", f"A {a} chasing a {b}, {k}"), ("permutation", f"A {b} chasing a {a}, {k}"),
                           ("paraphrase", f"A {b} being chased by a {a}, {k}")):
            specs.append(PromptSpec("semvarbench", f"sx{k}", text, role=role,
                                    metadata={"categories": ["Action"], "category": "Action"}))
        specs.append(PromptSpec("saneval", f"numeracy-x{k}", f"{k % 5 + 2} {a}s", subset="numeracy",
                                metadata={"category": "numeracy", "objects": [a], "counts": {a: k % 5 + 2}}))
    return specs


def build_rating_arena(root: Path, *, generations: int = 1, items: int = 0, **settings) -> SmallArena:
    """The small arena (taxonomy and one Commonsense-T2I item) with one more Commonsense-T2I item, two SemVarBench
    items and three SANEval prompts, and ``items`` more of each (:func:`more_prompts`), each drawn ``generations``
    times by every model, with ``settings`` (a PostgreSQL ``database_url`` among them puts it there): a copy of this
    process's first build with the same numbers and renditions (:func:`support.arena.from_template`)."""
    return from_template(("rating arena", generations, items),
                         lambda folder, **on: _build_rating_arena(folder, generations=generations, items=items, **on),
                         root, **settings)


def _build_rating_arena(root: Path, *, generations: int, items: int, **settings) -> SmallArena:
    arena = build_small_arena(root, **settings)
    ids = add_prompts(arena.db, rating_prompts() + more_prompts(items)).ids
    arena.prompt_ids.extend(ids)
    with arena.db.conn:  # one transaction
        _draw_all(arena, generations)
    render_all(arena.db, arena.media, arena.settings)  # as every path that adds images does: questions show only these
    return arena


def _draw_all(arena: SmallArena, generations: int) -> None:
    for m, model_id in enumerate(arena.model_ids.values()):
        for p, prompt_id in enumerate(arena.prompt_ids):
            for idx in range(generations):  # the small arena's own images (idx 0) are kept as they are
                add_image(arena.db, prompt_id=prompt_id, model_id=model_id, idx=idx,
                          stored=arena.media.put_image(make_image(m + 7 * idx, p)))


__all__ = ["MODELS", "build_rating_arena", "more_prompts"]
