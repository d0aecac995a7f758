"""``python -m generators smoke``: every registry model's code path, run end to end on a tiny stand-in.

Real weights are tens of gigabytes, so nothing here loads them. Each model instead gets the tiny random-weight recipe
of :mod:`generators.tiny` that mirrors its hub repository (components, scheduler, VAE configuration; else the first
recipe of its pipeline class), built once into ``<cache_dir>/tiny``, and makes one image through
:func:`generators.runner.run` with :func:`generators.pipelines.make_generator`: the same ``from_pretrained`` call,
scheduler swap, seeding, call arguments, batching, media store and image rows as ``python -m generators run``.

Only what the toy size forces changes (:func:`stand_in`): the weights (and their variant), at most
:data:`SMOKE_STEPS` steps, the resolution scaled so stage I of a model is the recipe's size (the stages of a cascade
keep their ratios, so DeepFloyd IF still ends at its registry resolution), the recipe's ``smoke_call_kwargs``, and on
the CPU no offload or compile.
A negative prompt is passed to every model that accepts one, so that path runs too (one per prompt, the way the
partner prompts of Commonsense-T2I are passed, for a model whose ``negative_prompt_from`` is ``partner``).

API models (kind ``api``: DALL-E 3, gpt-image-1) have no stand-in here: a smoke run sends no paid request. They are
listed as skipped; the tests run them against the project's fake OpenAI server (``tools.fake_openai``).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from generators.registry import ModelSpec, RegistryError, cascade, output_resolution

SMOKE_STEPS = 2
SMOKE_PROMPT = "An image of coin (a flat metal piece used as money)"
SMOKE_NEGATIVE_PROMPT = "blurry, low quality"


@dataclass(frozen=True)
class SmokeResult:
    name: str
    pipeline_class: str  # a cascade's classes joined with " > "
    stand_in: str  # the tiny recipe(s) it ran on
    seconds: float  # loading and generating, without building the stand-in
    size: tuple[int, int] | None  # (width, height) of the stored image
    error: str = ""
    skipped: str = ""  # why it was not run (an API model)

    @property
    def ok(self) -> bool:
        return not self.error

    def line(self) -> str:
        if self.skipped:
            return f"skip {self.name:24} {self.pipeline_class}: {self.skipped}"
        if not self.ok:
            return f"FAIL {self.name:24} {self.pipeline_class}: {self.error}"
        width, height = self.size or (0, 0)
        return (f"ok   {self.name:24} {self.pipeline_class:40} {self.seconds:5.1f} s  {width}x{height}  "
                f"({self.stand_in})")


def _scaled(resolution: tuple[int, int], scale: float) -> tuple[int, int]:
    return tuple(max(16, round(side * scale / 16) * 16) for side in resolution)  # type: ignore[return-value]


def stand_in(spec: ModelSpec, scale: float | None = None, device: str = "cpu") -> tuple[ModelSpec, float]:
    """``spec`` on its tiny stand-in, and the resolution scale used (pass it on to the stages of a cascade).

    Raises :class:`RegistryError` when no recipe has the model's pipeline class.
    """
    from generators.tiny import TINY_RECIPES, recipe_for

    changes: dict = {"steps": min(spec.steps, SMOKE_STEPS)}
    if not str(device).startswith("cuda"):
        changes.update(offload="", compile=False)
    if spec.kind != "diffusers":
        return dataclasses.replace(spec, **changes), 1.0
    if spec.tiny and not spec.weights:  # already tiny (the demo models)
        recipe = TINY_RECIPES[spec.tiny]
    else:
        found = recipe_for(spec.hub_id, spec.pipeline_class)
        if found is None:
            raise RegistryError(
                f"model {spec.name}: no tiny stand-in for {spec.pipeline_class}; smoke cannot check it. Recipes "
                f"exist for {', '.join(sorted({r.pipeline_class for r in TINY_RECIPES.values()}))} "
                "(add one to TINY_RECIPES in generators/tiny.py)."
            )
        recipe = found
        changes.update(weights="", tiny=recipe.name, variant=recipe.variant)
    if scale is None:
        scale = 1.0 if spec.tiny and not spec.weights else recipe.resolution / max(spec.resolution)
    changes.update(resolution=_scaled(spec.resolution, scale),
                   call_kwargs={**spec.call_kwargs, **recipe.smoke_call_kwargs})
    return dataclasses.replace(spec, **changes), scale


def stand_ins(registry: Mapping[str, ModelSpec], spec: ModelSpec, device: str = "cpu") -> dict[str, ModelSpec]:
    """{name: tiny spec} of ``spec`` and its cascade's stages (the registry ``make_generator`` looks stages up in)."""
    first, *stages = cascade(registry, spec) if spec.kind == "diffusers" else [spec]
    tiny_first, scale = stand_in(first, device=device)
    result = {first.name: tiny_first}
    for stage in stages:
        result[stage.name] = stand_in(stage, scale, device=device)[0]
    return result


def smoke_model(registry: Mapping[str, ModelSpec], name: str, *, cache_dir: str | Path, workdir: str | Path,
                device: str = "cpu") -> SmokeResult:
    """One image of registry model ``name`` on its stand-in, through the runner, in a database under ``workdir``."""
    from datamodel.catalog import PromptSpec, add_prompts, image_size
    from datamodel.connection import connect
    from datamodel.media import MediaStore
    from generators.pipelines import loading_bars, make_generator
    from generators.runner import run
    from generators.tiny import ensure_tiny

    spec = registry[name]
    classes = spec.pipeline_class
    if spec.kind == "api":
        return SmokeResult(name, f"images API ({spec.api_model})", "", 0.0, None,
                           skipped="an API model: smoke sends no paid request (the tests use tools.fake_openai)")
    try:
        tiny = stand_ins(registry, spec, device)
        classes = " > ".join(s.pipeline_class for s in tiny.values())
        recipes = ", ".join(dict.fromkeys(s.tiny for s in tiny.values() if s.tiny)) or spec.kind
        with loading_bars(False):
            for stage in tiny.values():
                if stage.tiny:
                    ensure_tiny(cache_dir, stage.tiny)
        db = connect(Path(workdir) / "smoke.db")
        try:
            if spec.negative_prompt_from == "partner":  # the partner (not generated) is the negative prompt
                pair = [PromptSpec("smoke", "coin.n.01", text, role=role, metadata={"partner_role": other})
                        for text, role, other in ((SMOKE_PROMPT, "p1", "p2"), (SMOKE_NEGATIVE_PROMPT, "p2", "p1"))]
                prompt_ids = add_prompts(db, pair).ids[:1]
            else:
                prompt_ids = add_prompts(db, [PromptSpec("smoke", "coin.n.01", SMOKE_PROMPT)]).ids
            started = time.perf_counter()
            run(db, MediaStore(Path(workdir) / "media"), [tiny[name]], prompt_ids,
                partial(make_generator, registry=tiny, cache_dir=cache_dir, device=device,
                        negative_prompt=SMOKE_NEGATIVE_PROMPT), batch_size=1, source="smoke")
            seconds = time.perf_counter() - started
            size = image_size(db, name)
        finally:
            db.close()
    except Exception as error:  # one model's failure is reported, the others still run
        where = traceback.extract_tb(error.__traceback__)[-1]
        text = f"{type(error).__name__}: {error} [{Path(where.filename).name}:{where.lineno}]"
        return SmokeResult(name, classes, "", 0.0, None, " ".join(text.split()))
    expected = output_resolution(tiny, tiny[name])
    if size is None or tuple(size) != expected:
        return SmokeResult(name, classes, recipes, seconds, size,
                           f"stored image is {size}, expected {expected[0]}x{expected[1]}")
    return SmokeResult(name, classes, recipes, seconds, size)


def smoke(registry: Mapping[str, ModelSpec], names: list[str] | None = None, *, cache_dir: str | Path,
          workdir: str | Path | None = None, device: str = "cpu") -> Iterator[SmokeResult]:
    """Smoke-test ``names`` (default: every model that runs on its own, i.e. all but cascade stages), in order."""
    names = names if names is not None else [name for name, spec in registry.items() if not spec.takes_image]
    with tempfile.TemporaryDirectory(prefix="smoke-") as temporary:
        for name in names:
            yield smoke_model(registry, name, cache_dir=cache_dir, workdir=workdir or temporary, device=device)
