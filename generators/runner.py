"""Making the images a suite needs: plan, skip what exists, shard across processes, generate in batches, store.

The plan is every (model, prompt, index) for the chosen prompts, in a fixed order, each with a deterministic seed
(:func:`item_seed`). Process ``r`` of ``n`` owns the plan's items ``r, r+n, r+2n, ...``; because the plan does not
depend on what is already in the database, processes that start at different moments still agree on who owns what,
so under ``accelerate launch`` no item is made twice and none is lost. A process then skips its items that already
have an ``images`` row, so a run that crashed resumes where it stopped.

Each batch's images are written to the media store first (files are content addressed and renamed into place), then
their rows are committed in one transaction: a crash leaves at most unreferenced files, never a row without a file.
An API model (:mod:`generators.api_images`) stores each image itself as it arrives and records the request, so a
crash loses no paid image either; an image it could not get is counted in the report's ``failed`` with the reason,
and the next run asks again.

A model with ``negative_prompt_from = "partner"`` gets each prompt's partner prompt (:func:`datamodel.catalog.
partner_texts`) as its negative prompt, recorded in the image's parameters; a prompt without a partner stops the run
before anything is made.
"""

from __future__ import annotations

import gc
import hashlib
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from tqdm.auto import tqdm

from core.presets import DEFAULT_PRESET
from datamodel.catalog import (
    add_image,
    add_model,
    generation_params,
    image_keys,
    model_config,
    partner_texts,
    prompts_by_id,
    suite_names,
)
from datamodel.catalog import suite_prompt_ids as prompt_ids_of_suite
from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.renditions import Renditions
from generators.api_images import GeneratedImage
from generators.pipelines import Generator
from generators.registry import ModelSpec

SEED_POLICIES = ("derived", "fixed")


class RunError(ValueError):
    """The run cannot start; the message says what to change."""


@dataclass(frozen=True)
class WorkItem:
    model: str
    prompt_id: int
    idx: int
    seed: int
    text: str


@dataclass
class RunReport:
    planned: int = 0  # items of the whole plan (all processes)
    owned: int = 0  # items this process is responsible for
    existing: int = 0  # of those, already in the database
    made: int = 0  # images generated now
    per_model: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # images not made (an API refusal, ...): model, prompt, index
    notes: list[str] = field(default_factory=list)  # what the generators report (an API's cost, cache use, errors)


def item_seed(base_seed: int, model: str, prompt_key: Sequence[str], idx: int, policy: str = "derived") -> int:
    """The seed of one image.

    ``derived`` (default): a stable hash of (base seed, model, prompt key, index) in [0, 2^31), so every image has
    its own noise and adding a model or a prompt changes no other image's seed. ``fixed``: ``base_seed + idx`` for
    every model and prompt, as the taxonomy benchmark did (seed 0 everywhere).
    """
    if policy == "fixed":
        return base_seed + idx
    if policy != "derived":
        raise RunError(f"seed policy must be one of {', '.join(SEED_POLICIES)}, got {policy!r}.")
    text = "\x1f".join([str(base_seed), model, *map(str, prompt_key), str(idx)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & 0x7FFFFFFF


def prompt_rows(db: Database, prompt_ids: Iterable[int]) -> list[dict]:
    ids = sorted(set(int(i) for i in prompt_ids))
    rows = prompts_by_id(db, ids)
    if len(rows) != len(ids):
        missing = sorted(set(ids) - {row["id"] for row in rows})
        raise RunError(f"no prompts with ids {missing[:10]}; load the suite first (python -m arena ...).")
    return rows


def suite_prompt_ids(db: Database, suite: str, subset: str | None = None, variant: str | None = None,
                     limit: int | None = None) -> list[int]:
    """Ids of a suite's prompts (optionally one subset / variant), in id order."""
    ids = prompt_ids_of_suite(db, suite, subset, variant, limit)
    if not ids:
        suites = suite_names(db)
        raise RunError(
            f"no prompts in suite {suite!r}" + (f" subset {subset!r}" if subset else "")
            + (f" variant {variant!r}" if variant else "")
            + f". Suites in the database: {', '.join(suites) or 'none'}; load prompts with `python -m arena` first."
        )
    return ids


def plan(db: Database, models: Sequence[str], prompt_ids: Iterable[int], *, images_per_prompt: int = 1,
         seed: int = 0, seed_policy: str = "derived") -> list[WorkItem]:
    """Every (model, prompt, index) in a fixed order (model order as given, then prompt id, then index)."""
    if images_per_prompt < 1:
        raise RunError(f"images per prompt must be at least 1, got {images_per_prompt}.")
    rows = prompt_rows(db, prompt_ids)
    items = []
    for model in models:
        for row in rows:
            key = (row["suite"], row["subset"], row["item_key"], row["variant"], row["role"])
            for idx in range(images_per_prompt):
                items.append(WorkItem(model, row["id"], idx, item_seed(seed, model, key, idx, seed_policy),
                                      row["text"]))
    return items


def shard(items: Sequence[WorkItem], process_index: int = 0, num_processes: int = 1) -> list[WorkItem]:
    """The items process ``process_index`` of ``num_processes`` owns (round robin over the whole plan)."""
    if not 0 <= process_index < num_processes:
        raise RunError(f"process index {process_index} is not in 0..{num_processes - 1}.")
    return list(items[process_index::num_processes])


def existing_keys(db: Database, model_ids: dict[str, int]) -> set[tuple[str, int, int]]:
    names = {model_id: name for name, model_id in model_ids.items()}
    rows = image_keys(db, names)
    return {(names[model_id], prompt_id, idx) for model_id, prompt_id, idx in rows}


def register_models(db: Database, specs: Sequence[ModelSpec], source: str | None = None,
                    preset: str = DEFAULT_PRESET) -> dict[str, int]:
    """Add the models (if new) with their spec as ``models.config``; return {name: id}.

    A model whose stored images were made at another resolution or with other cascade stages (DeepFloyd IF was
    stage I alone, 64 px, before it became the three-stage cascade) is refused: resuming would mix two systems. So
    is a diffusers model whose images were made under another preset with other steps or guidance (its model card's
    50 steps under ``arena``, the taxonomy paper's 28 under ``taxonomy-paper``).
    """
    ids = {}
    for spec in specs:
        default_source = {"procedural": "demo", "api": "api"}.get(spec.kind, "diffusers")
        ids[spec.name] = add_model(db, spec.name, description=spec.description, config=spec.config(),
                                   source=source or default_source)
        _refuse_changed_output(db, spec, ids[spec.name])
        _refuse_other_preset(db, spec, ids[spec.name], preset)
    return ids


def _refuse_other_preset(db: Database, spec: ModelSpec, model_id: int, preset: str) -> None:
    if spec.kind != "diffusers":
        return
    made = Counter((params.get("preset", DEFAULT_PRESET), params.get("steps"), params.get("guidance"))
                   for params in generation_params(db, model_id))
    for (other, steps, guidance), count in made.items():
        if other != preset and (steps, guidance) != (spec.steps, spec.guidance):
            raise RunError(
                f"the database has {count} images of {spec.name} made under preset {other} ({steps} steps, guidance "
                f"{guidance}); preset {preset} makes it with {spec.steps} steps, guidance {spec.guidance}. Resuming "
                "would mix the two under one name: run the preset into another database (ARENA_DB / --db), or give "
                f"the model another name in a models file ([models.{spec.name}-{preset}] with pipeline_class and the "
                f"other fields of {spec.name})."
            )


def _refuse_other_scheduler(db: Database, spec: ModelSpec, model_id: int, scheduler: str | None) -> None:
    """Refuse to add images made with ``scheduler`` (the loaded pipeline's class) to a model whose stored images were
    made with another one: steps and guidance may agree while the sampler differs (a model card's scheduler swap
    against the repository's own, as SD 2.1 under the arena and consistency-paper presets)."""
    if not scheduler:
        return
    made = Counter(params["scheduler"] for params in generation_params(db, model_id)
                   if params.get("scheduler") not in (None, scheduler))
    for other, count in made.items():
        raise RunError(
            f"the database has {count} images of {spec.name} made with {other}; this run makes them with "
            f"{scheduler}. Resuming would mix the two under one name: run into another database (ARENA_DB / --db), "
            f"or give the model another name in a models file ([models.{spec.name}-{scheduler.lower()}] with "
            f"pipeline_class and the other fields of {spec.name})."
        )


def _refuse_changed_output(db: Database, spec: ModelSpec, model_id: int) -> None:
    stored, images = model_config(db, model_id)
    if not images or not stored:
        return
    before = (list(stored.get("resolution") or spec.resolution), list(stored.get("stages") or []))
    now = (list(spec.resolution), list(spec.stages))
    if before != now:
        def describe(state):
            return f"{state[0][0]}x{state[0][1]}" + (f" with stages {', '.join(state[1])}" if state[1] else "")

        raise RunError(
            f"the database has {images} images of {spec.name} made at {describe(before)}; the registry now makes it "
            f"at {describe(now)}. Resuming would mix the two under one name: give the new one another name in a "
            f"models file (a [models.NEW-NAME] table with pipeline_class and the other fields of {spec.name}), or "
            "delete the old images first."
        )


def partner_negatives(db: Database, specs: Sequence[ModelSpec], items: Sequence[WorkItem]
                      ) -> dict[int, str]:
    """{prompt id: partner text} for the items of models whose negative prompt is the partner prompt; a prompt
    without a partner raises :class:`RunError` naming it."""
    wanted = {spec.name for spec in specs if spec.negative_prompt_from == "partner"}
    prompt_ids = {item.prompt_id for item in items if item.model in wanted}
    if not prompt_ids:
        return {}
    partners = partner_texts(db, prompt_ids)
    lonely = sorted(prompt_id for prompt_id, text in partners.items() if not text)
    if lonely:
        raise RunError(
            f"{', '.join(sorted(wanted))} take each prompt's partner prompt as negative prompt, but prompt(s) "
            f"{', '.join(map(str, lonely[:10]))} have no partner (the other prompt of a Commonsense-T2I item, named "
            "by metadata partner_role). Run these models on the commonsense suite only."
        )
    return {prompt_id: str(text) for prompt_id, text in partners.items()}


def _batches(items: list[WorkItem], size: int) -> Iterable[list[WorkItem]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def run(
    db: Database,
    media: MediaStore,
    specs: Sequence[ModelSpec],
    prompt_ids: Iterable[int],
    make_generator: Callable[[ModelSpec], Generator],
    *,
    images_per_prompt: int = 1,
    seed: int = 0,
    seed_policy: str = "derived",
    batch_size: int = 8,
    process_index: int = 0,
    num_processes: int = 1,
    source: str | None = None,
    progress: bool = False,
    preset: str = DEFAULT_PRESET,
    renditions: Renditions | None = None,
) -> RunReport:
    """Make this process's missing images of ``specs`` × ``prompt_ids`` × ``images_per_prompt``.

    ``make_generator(spec)`` is called only for a model that has missing images, once, and the generator is dropped
    before the next model is loaded. With ``renditions`` (the arena's display settings), the display renditions of
    the images are made at the end, so battles may show them (:mod:`datamodel.renditions`). Returns counts; calling
    it again with the same arguments makes nothing. Each image's ``params`` record the ``preset`` (protocol) the run
    followed.
    """
    if batch_size < 1:
        raise RunError(f"batch size must be at least 1, got {batch_size}.")
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise RunError(f"model names repeat in {names}; give each model once.")
    model_ids = register_models(db, specs, source, preset)
    items = plan(db, names, prompt_ids, images_per_prompt=images_per_prompt, seed=seed, seed_policy=seed_policy)
    mine = shard(items, process_index, num_processes)
    done = existing_keys(db, model_ids)
    todo = [item for item in mine if (item.model, item.prompt_id, item.idx) not in done]
    negatives = partner_negatives(db, specs, todo)  # before anything is made
    report = RunReport(planned=len(items), owned=len(mine), existing=len(mine) - len(todo))
    label = "generating" + (f" [process {process_index + 1}/{num_processes}]" if num_processes > 1 else "")
    with tqdm(total=len(todo), desc=label, unit="img", disable=not progress, position=process_index) as bar:
        for spec in specs:
            work = [item for item in todo if item.model == spec.name]
            if not work:
                continue
            generator = make_generator(spec)
            _refuse_other_scheduler(db, spec, model_ids[spec.name], generator.params.get("scheduler"))
            bar.set_postfix_str(spec.name)
            partner = spec.negative_prompt_from == "partner"
            for batch in _batches(work, getattr(generator, "batch_size", None) or batch_size):
                texts, seeds = [item.text for item in batch], [item.seed for item in batch]
                if partner:
                    images = generator.generate(texts, seeds, [negatives[item.prompt_id] for item in batch])
                else:
                    images = generator.generate(texts, seeds)
                if len(images) != len(batch):
                    raise RuntimeError(f"{spec.name} returned {len(images)} images for {len(batch)} prompts.")
                stored = [_store(media, image) for image in images]  # files first, rows after
                with db.conn:
                    for item, (image, extra) in zip(batch, stored, strict=True):
                        if image is None:
                            report.failed.append(f"{spec.name}, prompt {item.prompt_id}, image {item.idx}")
                            continue
                        params = {**generator.params, **extra, "model": spec.name, "seed": item.seed,
                                  "idx": item.idx, "seed_policy": seed_policy, "base_seed": seed, "preset": preset}
                        if partner:
                            params["negative_prompt"] = negatives[item.prompt_id]
                        add_image(db, prompt_id=item.prompt_id, model_id=model_ids[spec.name], stored=image,
                                  idx=item.idx, seed=item.seed, params=params)
                        report.made += 1
                        report.per_model[spec.name] = report.per_model.get(spec.name, 0) + 1
                bar.update(len(batch))
            stats = getattr(generator, "stats", None)
            if stats is not None:
                report.notes.append(f"{spec.name}: {stats.summary()}")
                report.notes.extend(stats.errors)
            held = _components(generator)
            del generator
            if any(component() is not None for component in held):
                gc.collect()  # a reference cycle holds the model: free it before the next one loads
            _empty_device_cache()
    if renditions is not None:
        renditions.render_missing(db)
    return report


def _store(media: MediaStore, image) -> tuple:
    """(stored image or None, parameters to record with it) of one generated image."""
    if image is None:
        return None, {}
    if isinstance(image, GeneratedImage):  # already in the media folder (an API model)
        return image.stored, image.params
    return media.put_image(image), {}


def _components(generator) -> list[weakref.ref]:
    """Weak references to the components (torch modules, tokenizers) of ``generator``'s pipelines: none for
    procedural and API generators.

    Dropping the generator frees a model by reference counting; only what a reference cycle keeps needs Python's
    full collection, which takes about a second in a process with transformers and diffusers imported, so the
    runner collects only when one of these outlives its generator."""
    held = []
    for _, pipeline in getattr(generator, "stages", ()):
        for component in getattr(pipeline, "components", {}).values():
            try:
                held.append(weakref.ref(component))
            except TypeError:  # a name or None: nothing to free
                pass
    return held


def _empty_device_cache() -> None:
    try:
        import torch
    except ImportError:  # procedural-only runs do not need torch
        return
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
