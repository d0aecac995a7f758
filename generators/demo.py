"""The four demo models and the function that makes the demo's images.

Two are tiny diffusers pipelines with random weights, of two families (a UNet Stable-Diffusion layout and a
PixArt-Sigma diffusion transformer), built once into ``<cache_dir>/tiny`` and loaded with ``from_pretrained`` like
real weights; their pictures are coloured noise. Two are procedural renderers whose pictures show the prompt's words,
so a person clicking through the demo arena sees which prompt an image belongs to. All are named ``demo-*`` and
registered with source ``demo`` so no one mistakes them for real systems.

:func:`generate_demo_images` goes through :func:`generators.runner.run`, the code path of
``python -m generators run``: a second call finds every image present and makes nothing.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Iterable

import sqlite_utils

from datamodel.media import MediaStore
from generators.pipelines import make_generator
from generators.registry import ModelSpec
from generators.runner import run


def demo_models() -> dict[str, ModelSpec]:
    """A fresh {name: spec} of the demo models (CPU-sized: 64 px diffusion, 128 px drawings)."""
    specs = [
        ModelSpec(name="demo-tiny-unet", pipeline_class="StableDiffusionPipeline", tiny="tiny-sd", steps=3,
                  guidance=7.5, resolution=(64, 64), dtype="float32",
                  description="Demo: tiny random-weight Stable-Diffusion-style UNet pipeline (noise, not a real model)"),
        ModelSpec(name="demo-tiny-dit", pipeline_class="PixArtSigmaPipeline", tiny="tiny-pixart-sigma", steps=3,
                  guidance=4.5, resolution=(64, 64), dtype="float32",
                  call_kwargs={"use_resolution_binning": False, "clean_caption": False, "max_sequence_length": 64},
                  description="Demo: tiny random-weight PixArt-Sigma-style transformer pipeline (noise, not a real model)"),
        ModelSpec(name="demo-sketch", pipeline_class="sketch", kind="procedural", steps=1, guidance=None,
                  resolution=(128, 128), dtype="float32", negative_prompt=False,
                  description="Demo: procedural line drawing labelled with the prompt's words"),
        ModelSpec(name="demo-palette", pipeline_class="palette", kind="procedural", steps=1, guidance=None,
                  resolution=(128, 128), dtype="float32", negative_prompt=False,
                  description="Demo: procedural colour fields with the prompt's words written over them"),
    ]
    return {spec.name: spec for spec in specs}


DEMO_MODELS: tuple[str, ...] = tuple(demo_models())


def generate_demo_images(db: sqlite_utils.Database, media: MediaStore, prompt_ids: Iterable[int], *,
                         cache_dir: str | Path, seed: int = 0, progress: bool = False, batch_size: int = 16) -> int:
    """Register the demo models (source ``demo``) and make their missing image per prompt; return how many were made."""
    report = run(
        db, media, list(demo_models().values()), prompt_ids,
        partial(make_generator, cache_dir=cache_dir, device="cpu", dtype="float32"),
        images_per_prompt=1, seed=seed, batch_size=batch_size, source="demo", progress=progress,
    )
    return report.made
