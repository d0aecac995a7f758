"""The bundled demo: WordNet concepts and Commonsense-T2I pairs, with images from four demo models.

Filled into an empty database on first start (setting ``demo``), and finished on a later start if that first one
was interrupted (:func:`demo_incomplete`). The images are made offline by the project's own generators
(:mod:`generators.demo`: three procedural painters of known strength, which draw the concept's emoji, often a near
miss, or random shapes, and one tiny random-weight diffusers pipeline), and the models are named ``demo-*`` so
nobody mistakes them for real systems. No votes are made up.
"""

from __future__ import annotations

import sqlite_utils

from datamodel.catalog import add_prompts
from datamodel.media import MediaStore
from datamodel.settings import Settings

# The metric rows every demo model gets per demo suite (one per metric kind the demo computes, see
# judges.metrics.demo.DEMO_SUITE_METRICS); a missing one means the metric step did not finish.
DEMO_METRIC_NAMES = {
    "taxonomy": ("clip_score", "fid", "inception_score", "reward", "consistency_std"),
    "commonsense": ("clip_score", "commonsense_clip_fit", "fid", "inception_score", "reward"),
}


def demo_prompt_specs() -> list:
    from suites.commonsense import sample_specs
    from suites.taxonomy import demo_specs

    return [*demo_specs(), *sample_specs()]


def is_empty(db: sqlite_utils.Database) -> bool:
    return db.execute("SELECT NOT EXISTS (SELECT 1 FROM prompts)").fetchone()[0] == 1


def demo_prompt_ids(db: sqlite_utils.Database) -> list[int]:
    """Ids of the demo prompts that are in the database (none: this database never had the demo)."""
    wanted = {spec.key for spec in demo_prompt_specs()}
    suites = sorted({key[0] for key in wanted})
    rows = db.execute(
        f"SELECT id, suite, subset, item_key, variant, role FROM prompts WHERE suite IN ({','.join('?' * len(suites))})",
        suites,
    ).fetchall()
    return [row[0] for row in rows if tuple(row[1:]) in wanted]


def missing_demo_metrics(db: sqlite_utils.Database) -> list[tuple[str, str, str]]:
    """(model, suite, metric) of :data:`DEMO_METRIC_NAMES` that a demo model with images of that suite lacks."""
    with_images = db.execute(
        "SELECT DISTINCT m.name, p.suite FROM images i JOIN models m ON m.id = i.model_id "
        "JOIN prompts p ON p.id = i.prompt_id WHERE m.source = 'demo'"
    ).fetchall()
    present = set(db.execute(
        "SELECT DISTINCT m.name, mt.suite, mt.name FROM metrics mt JOIN models m ON m.id = mt.model_id "
        "WHERE m.source = 'demo'"
    ).fetchall())
    return [(model, suite, name) for model, suite in sorted(with_images)
            for name in DEMO_METRIC_NAMES.get(suite, ()) if (model, suite, name) not in present]


def demo_incomplete(db: sqlite_utils.Database) -> bool:
    """Whether the demo was started here but not finished: its prompts are there but not every prompt has an image
    from every demo model, or a demo metric is missing. False for a database without the demo's prompts."""
    from generators.demo import DEMO_MODELS

    prompt_ids = demo_prompt_ids(db)  # written in one transaction: all of them or none
    if not prompt_ids:
        return False
    made = db.execute(
        f"SELECT COUNT(DISTINCT i.prompt_id || '/' || i.model_id) FROM images i JOIN models m ON m.id = i.model_id "
        f"WHERE m.name IN ({','.join('?' * len(DEMO_MODELS))}) AND i.prompt_id IN ({','.join('?' * len(prompt_ids))})",
        [*DEMO_MODELS, *prompt_ids],
    ).fetchone()[0]
    return made < len(prompt_ids) * len(DEMO_MODELS) or bool(missing_demo_metrics(db))


def build_demo(db: sqlite_utils.Database, media: MediaStore, settings: Settings, *, progress: bool = False) -> dict:
    """Write the demo prompts and make the demo images and metrics that are missing (idempotent); return counts."""
    from generators.demo import generate_demo_images
    from judges.metrics.demo import compute_demo_metrics

    prompts = add_prompts(db, demo_prompt_specs())
    made = generate_demo_images(db, media, prompts.ids, cache_dir=settings.cache_dir, seed=settings.seed,
                                progress=progress)
    if made or missing_demo_metrics(db):  # the leaderboard's metric columns, from tiny stand-in scorers (labelled)
        compute_demo_metrics(db, media, cache_dir=settings.cache_dir, progress=progress)
    return {"prompts": len(prompts.ids), "new_prompts": prompts.inserted, "new_images": made}


def ensure_demo(db: sqlite_utils.Database, media: MediaStore, settings: Settings, *, progress: bool = True) -> dict | None:
    """Build the demo if the setting asks for it and the database is empty, or finish an interrupted one.

    A database holding other prompts and no demo prompts is left alone. Building is idempotent, so finishing
    writes only what is missing.
    """
    if settings.demo and (is_empty(db) or demo_incomplete(db)):
        return build_demo(db, media, settings, progress=progress)
    return None
