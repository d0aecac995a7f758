"""The demo models and the function that makes the demo's images.

The demo arena (:data:`DEMO_MODELS`) has four models of four known strengths, so a vote there has a visible right
answer and the leaderboard and taxonomy metrics have something to separate:

- ``demo-painter`` draws the prompt's concept as an emoji (Debian's fonts-noto-color-emoji) on a scene with colour
  and composition; for a Commonsense-T2I prompt the emoji in the prompt's state (a lit or unlit bulb, a bare tree).
- ``demo-lookalike`` draws the same scenes but for 60 % of the prompts a near miss: a cohyponym's emoji (a pug for a
  poodle) or the hypernym's (a palette for red), or the partner prompt's state; smaller and off centre.
- ``demo-scribble`` draws random shapes on a random gradient.
- ``demo-tiny-unet`` is a tiny random-weight Stable-Diffusion-style diffusers pipeline, built once into
  ``<cache_dir>/tiny`` and loaded with ``from_pretrained`` like real weights: the real diffusers code path, whose
  pictures are coloured noise.

:func:`demo_models` also registers, for ``python -m generators``, a tiny PixArt-Sigma transformer pipeline
(``demo-tiny-dit``) and two older procedural renderers (``demo-sketch``, ``demo-palette``: the prompt's words drawn
as shapes or colour fields). All are named ``demo-*`` and registered with source ``demo`` so no one mistakes them
for real systems.

:func:`generate_demo_images` goes through :func:`generators.runner.run`, the code path of
``python -m generators run``: a second call finds every image present and makes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from datamodel.database import Database
from datamodel.media import MediaStore
from generators.pipelines import make_generator
from generators.registry import ModelSpec
from generators.runner import run


def demo_models() -> dict[str, ModelSpec]:
    """A fresh {name: spec} of every demo model (CPU-sized: 64 px diffusion, 128 or 256 px drawings)."""
    specs = [
        ModelSpec(name="demo-painter", pipeline_class="painter", kind="procedural", steps=1, guidance=None,
                  resolution=(256, 256), dtype="float32", negative_prompt=False,
                  description="Demo: draws the prompt's concept as an emoji on a coloured scene (the right answer)"),
        ModelSpec(name="demo-lookalike", pipeline_class="lookalike", kind="procedural", steps=1, guidance=None,
                  resolution=(256, 256), dtype="float32", negative_prompt=False,
                  description="Demo: often draws a near miss (a cohyponym's or hypernym's emoji, the partner state)"),
        ModelSpec(name="demo-scribble", pipeline_class="scribble", kind="procedural", steps=1, guidance=None,
                  resolution=(256, 256), dtype="float32", negative_prompt=False,
                  description="Demo: random shapes on a random gradient (ignores the prompt)"),
        ModelSpec(name="demo-tiny-unet", pipeline_class="StableDiffusionPipeline", tiny="tiny-sd", steps=3,
                  guidance=7.5, resolution=(64, 64), dtype="float32",
                  description="Demo: tiny random-weight Stable-Diffusion-style UNet pipeline "
                              "(noise, not a real model)"),
        ModelSpec(name="demo-tiny-dit", pipeline_class="PixArtSigmaPipeline", tiny="tiny-pixart-sigma", steps=3,
                  guidance=4.5, resolution=(64, 64), dtype="float32",
                  call_kwargs={"use_resolution_binning": False, "clean_caption": False, "max_sequence_length": 64},
                  description="Demo: tiny random-weight PixArt-Sigma-style transformer pipeline "
                              "(noise, not a real model)"),
        ModelSpec(name="demo-sketch", pipeline_class="sketch", kind="procedural", steps=1, guidance=None,
                  resolution=(128, 128), dtype="float32", negative_prompt=False,
                  description="Demo: procedural line drawing labelled with the prompt's words"),
        ModelSpec(name="demo-palette", pipeline_class="palette", kind="procedural", steps=1, guidance=None,
                  resolution=(128, 128), dtype="float32", negative_prompt=False,
                  description="Demo: procedural colour fields with the prompt's words written over them"),
    ]
    return {spec.name: dataclasses.replace(spec, serve_gpus=0.0) for spec in specs}  # CPU-sized: no GPU on Ray


# the demo arena's models, best first (the others in demo_models() are for python -m generators only)
DEMO_MODELS: tuple[str, ...] = ("demo-painter", "demo-lookalike", "demo-scribble", "demo-tiny-unet")


def generate_demo_images(db: Database, media: MediaStore, prompt_ids: Iterable[int], *,
                         cache_dir: str | Path, seed: int = 0, progress: bool = False, batch_size: int = 16) -> int:
    """Register the demo arena's models (:data:`DEMO_MODELS`, source ``demo``) and make their missing image per
    prompt; return how many were made."""
    specs = demo_models()
    report = run(
        db, media, [specs[name] for name in DEMO_MODELS], prompt_ids,
        partial(make_generator, cache_dir=cache_dir, device="cpu", dtype="float32"),
        images_per_prompt=1, seed=seed, batch_size=batch_size, source="demo", progress=progress,
    )
    return report.made
