"""The bundled demo: WordNet concepts and Commonsense-T2I pairs, with images from four demo models.

Filled into an empty database on first start (setting ``demo``). The images are made offline by the project's own
generators (:mod:`generators.demo`: two tiny random-weight diffusers pipelines and two procedural renderers), and
the models are named ``demo-*`` so nobody mistakes them for real systems. No votes are made up.
"""

from __future__ import annotations

import sqlite_utils

from arena.catalog import add_prompts
from arena.media import MediaStore
from arena.settings import Settings


def demo_prompt_specs() -> list:
    from arena.suites.commonsense import sample_specs
    from arena.suites.taxonomy import demo_specs

    return [*demo_specs(), *sample_specs()]


def is_empty(db: sqlite_utils.Database) -> bool:
    return db.execute("SELECT NOT EXISTS (SELECT 1 FROM prompts)").fetchone()[0] == 1


def build_demo(db: sqlite_utils.Database, media: MediaStore, settings: Settings, *, progress: bool = False) -> dict:
    """Write the demo prompts and make the demo images that are missing (idempotent); return counts."""
    from generators.demo import generate_demo_images
    from judges.metrics.demo import compute_demo_metrics

    prompts = add_prompts(db, demo_prompt_specs())
    made = generate_demo_images(db, media, prompts.ids, cache_dir=settings.cache_dir, seed=settings.seed,
                                progress=progress)
    if made:  # the metric columns of the leaderboard, from tiny stand-in scorers (labelled as such)
        compute_demo_metrics(db, media, cache_dir=settings.cache_dir, progress=progress)
    return {"prompts": len(prompts.ids), "new_prompts": prompts.inserted, "new_images": made}


def ensure_demo(db: sqlite_utils.Database, media: MediaStore, settings: Settings, *, progress: bool = True) -> dict | None:
    """Build the demo if the setting asks for it and the database has no prompts yet."""
    if settings.demo and is_empty(db):
        return build_demo(db, media, settings, progress=progress)
    return None
