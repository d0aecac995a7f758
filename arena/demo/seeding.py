"""The demo seeded into an empty database: WordNet concepts, Commonsense-T2I pairs, a SemVarBench sample and SANEval
prompts, with images from four demo models (the package's map: :mod:`arena.demo`).

The prompts (:func:`demo_prompt_specs`): the 48 taxonomy prompts of :func:`suites.taxonomy.demo_specs`, the 14
Commonsense-T2I items of :func:`suites.commonsense.sample_specs`, the 6 SemVarBench items (18 prompts) of
:func:`suites.semvarbench.sample_specs` and 3 SANEval prompts per category (15) of :func:`suites.saneval.demo_specs`,
so every human rating task (:mod:`judges.rating_tasks`) has something to rate on the demo.

Filled into an empty database on first start (setting ``demo``), and finished on a later start if that first one
was interrupted (:func:`demo_incomplete`). The images are made offline by the project's own generators
(:mod:`generators.demo`: three procedural painters of known strength, which draw the concept's emoji, often a near
miss, or random shapes, and one tiny random-weight diffusers pipeline), and the models are named ``demo-*`` so
nobody mistakes them for real systems. No votes are made up.

The arena does not make them at start: the first start loads the demo as data (:func:`load_demo_bundle`), from
:data:`DEMO_BUNDLE` (``arena/demo/bundle/``: ``manifest.json`` with the models, the images' files and parameters
and the metric rows, and the images, losslessly compressed), so a web-only install (no torch) serves the demo.
``python -m tools.demo_bundle`` (:mod:`arena.demo.making`) makes that bundle with the generators and the metric
scorers (:func:`build_demo`, seeded: the same code gives the same bundle); ``python -m arena demo --regenerate``
makes the demo with them in place of loading it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.settings import Settings
from datamodel.catalog import (
    add_image,
    add_model,
    add_prompts,
    all_image_keys,
    has_prompts,
    image_id_keys,
    model_suites,
    prompt_keys,
    prompts_with_images_of,
)
from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, metric_names_of_source, record_directions, write_metrics
from datamodel.renditions import Renditions

# The demo as data, made by ``python -m tools.demo_bundle`` and shipped in the package (pyproject's package-data).
DEMO_BUNDLE = Path(__file__).resolve().parent / "bundle"
BUNDLE_FORMAT = 1
BUNDLE_COMMAND = "python -m tools.demo_bundle"


class DemoBundleError(RuntimeError):
    """The shipped demo bundle is missing, damaged or out of step with the code; the message says how to remake it."""

# The metric rows every demo model gets per demo suite (one per metric kind the demo computes, see
# arena.demo.metrics.DEMO_SUITE_METRICS); a missing one means the metric step did not finish.
DEMO_METRIC_NAMES = {
    "taxonomy": ("clip_score", "fid", "inception_score", "reward", "consistency_std"),
    "commonsense": ("clip_score", "commonsense_clip_fit", "fid", "inception_score", "reward"),
    "semvarbench": ("clip_score", "fid", "inception_score", "reward"),
    "saneval": ("clip_score", "fid", "inception_score", "reward"),
}


def demo_prompt_specs() -> list:
    from suites import commonsense, saneval, semvarbench, taxonomy

    return [*taxonomy.demo_specs(), *commonsense.sample_specs(), *semvarbench.sample_specs(), *saneval.demo_specs()]


def is_empty(db: Database) -> bool:
    return not has_prompts(db)


def demo_prompt_ids(db: Database) -> list[int]:
    """Ids of the demo prompts that are in the database (none: this database never had the demo)."""
    wanted = {spec.key for spec in demo_prompt_specs()}
    suites = sorted({key[0] for key in wanted})
    return [prompt_id for prompt_id, key in prompt_keys(db, suites) if key in wanted]


def missing_demo_metrics(db: Database) -> list[tuple[str, str, str]]:
    """(model, suite, metric) of :data:`DEMO_METRIC_NAMES` that a demo model with images of that suite lacks."""
    with_images = model_suites(db, "demo")
    present = metric_names_of_source(db, "demo")
    return [(model, suite, name) for model, suite in sorted(with_images)
            for name in DEMO_METRIC_NAMES.get(suite, ()) if (model, suite, name) not in present]


def demo_incomplete(db: Database) -> bool:
    """Whether the demo was started here but not finished: its prompts are there but not every prompt has an image
    from every demo model, or a demo metric is missing. False for a database without the demo's prompts."""
    from generators.demo import DEMO_MODELS

    prompt_ids = demo_prompt_ids(db)  # written in one transaction: all of them or none
    if not prompt_ids:
        return False
    made = prompts_with_images_of(db, DEMO_MODELS, prompt_ids)
    return made < len(prompt_ids) * len(DEMO_MODELS) or bool(missing_demo_metrics(db))


def build_demo(db: Database, media: MediaStore, settings: Settings, *, progress: bool = False) -> dict:
    """Write the demo prompts and make the demo images, their display renditions and the metrics that are missing
    (idempotent); return counts."""
    from arena.demo.metrics import compute_demo_metrics
    from generators.demo import generate_demo_images

    prompts = add_prompts(db, demo_prompt_specs())
    made = generate_demo_images(db, media, prompts.ids, cache_dir=settings.cache_dir, seed=settings.seed,
                                progress=progress)
    Renditions.from_settings(media, settings).render_missing(db)  # before any battle may show them
    if made or missing_demo_metrics(db):  # the leaderboard's metric columns, from tiny stand-in scorers (labelled)
        compute_demo_metrics(db, media, cache_dir=settings.cache_dir, progress=progress)
    return {"prompts": len(prompts.ids), "new_prompts": prompts.inserted, "new_images": made}


def read_demo_bundle(bundle: str | Path = DEMO_BUNDLE) -> dict:
    """The bundle's manifest, checked against the code: its prompts must be :func:`demo_prompt_specs` (keys and
    texts, in order), else :class:`DemoBundleError` says to remake it."""
    path = Path(bundle) / "manifest.json"
    remake = f"Remake it with `{BUNDLE_COMMAND}` (or build the demo with `python -m arena demo --regenerate`)."
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DemoBundleError(f"the demo bundle {path} is missing. {remake}") from None
    except (OSError, ValueError) as error:
        raise DemoBundleError(f"the demo bundle {path} cannot be read ({error}). {remake}") from None
    if manifest.get("format") != BUNDLE_FORMAT:
        raise DemoBundleError(f"{path} has format {manifest.get('format')!r}; this code reads {BUNDLE_FORMAT}. "
                              f"{remake}")
    wanted = [[*spec.key, spec.text] for spec in demo_prompt_specs()]
    if manifest["prompts"] != wanted:
        raise DemoBundleError(f"the demo bundle {path} was made for other demo prompts than the code's. {remake}")
    return manifest


def _bundle_image_bytes(bundle: Path, name: str) -> bytes:
    try:
        data = (bundle / "images" / name).read_bytes()
    except OSError as error:
        raise DemoBundleError(f"demo bundle image {name} cannot be read ({error}). Remake the bundle with "
                              f"`{BUNDLE_COMMAND}`.") from None
    if hashlib.sha256(data).hexdigest() != name.partition(".")[0]:
        raise DemoBundleError(f"demo bundle image {name} is damaged (its SHA-256 differs from its name). Remake the "
                              f"bundle with `{BUNDLE_COMMAND}`.")
    return data


def load_demo_bundle(db: Database, media: MediaStore, bundle: str | Path = DEMO_BUNDLE, *,
                     renditions: Renditions | None = None) -> dict:
    """Write the demo from the shipped bundle: prompts, models, the missing images (files into the media store
    first, then their rows), their display renditions (``renditions``: the arena's settings; default: the default
    settings) and, when an image was added or a demo metric is missing, the metric rows (replaced).

    Idempotent, and in the order :func:`demo_incomplete` checks, so a load that stopped half way is finished by the
    next one. Imports no generator and no metric scorer (no torch). Returns the counts :func:`build_demo` returns.
    """
    bundle = Path(bundle)
    manifest = read_demo_bundle(bundle)
    prompts = add_prompts(db, demo_prompt_specs())
    model_ids = {model["name"]: add_model(db, model["name"], source=model["source"],
                                          description=model["description"], config=model["config"])
                 for model in manifest["models"]}
    keys = [(prompts.ids[image["prompt"]], model_ids[image["model"]], image["idx"]) for image in manifest["images"]]
    done = all_image_keys(db)
    made = 0
    for image, (prompt_id, model_id, idx) in zip(manifest["images"], keys, strict=True):
        if (prompt_id, model_id, idx) not in done:
            stored = media.put(_bundle_image_bytes(bundle, image["file"]), source=f"demo bundle {image['file']}")
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=stored, idx=idx, seed=image["seed"],
                      params=image["params"])
            made += 1
    (renditions or Renditions.from_settings(media, Settings())).render_missing(db)  # before a battle may show them
    if made or missing_demo_metrics(db):
        ids = image_id_keys(db)
        image_ids = [ids[key] for key in keys]
        columns = manifest["metric_columns"]
        rows = [dict(zip(columns, values, strict=True)) for values in manifest["metrics"]]
        write_metrics(db, [
            MetricRow(model_id=model_ids[row["model"]], name=row["name"], value=row["value"], scorer=row["scorer"],
                      image_id=None if row["image"] is None else image_ids[row["image"]], suite=row["suite"],
                      subset=row["subset"], variant=row.get("variant", ""), scorer_version=row["scorer_version"],
                      details=row["details"])
            for row in rows])
        record_directions(db, manifest["directions"])
    return {"prompts": len(prompts.ids), "new_prompts": prompts.inserted, "new_images": made}


def ensure_demo(db: Database, media: MediaStore, settings: Settings, *, progress: bool = True) -> dict | None:
    """Load the shipped demo (:func:`load_demo_bundle`) if the setting asks for it and the database is empty, or
    finish an interrupted load.

    A database holding other prompts and no demo prompts is left alone. Loading is idempotent, so finishing
    writes only what is missing. Nothing is generated: ``progress`` is kept for callers and unused.
    """
    if settings.demo and (is_empty(db) or demo_incomplete(db)):
        return load_demo_bundle(db, media, renditions=Renditions.from_settings(media, settings))
    return None
