"""SemVarBench's footnote 5 names the SDXL refiner beside the base: ``sdxl-base-refiner`` runs the model card's
ensemble of experts (the base's first 80 % of 40 steps, its latents handed to the refiner for the rest)."""

from __future__ import annotations

import pytest
from support.shared import SHARED

from generators.registry import builtin_models, cascade


def recording(generator) -> dict:
    """What the base returned (``output``) and the refiner was given (``image``, ``start``, ``strength``) on the
    next ``generator.generate``: each stage's class swapped for one that records its call."""
    (_, base), (_, refiner) = generator.stages
    seen = {}
    base_call, refiner_call = type(base).__call__, type(refiner).__call__

    def record_base(self, *args, **kwargs):
        output = base_call(self, *args, **kwargs)
        seen["output"] = output.images.clone()
        return output

    def record_refiner(self, *args, **kwargs):
        seen.update(image=kwargs["image"].clone(), start=kwargs.get("denoising_start"),
                    strength=kwargs.get("strength"))
        return refiner_call(self, *args, **kwargs)

    base.__class__ = type("RecordingBase", (type(base),), {"__call__": record_base})
    refiner.__class__ = type("RecordingRefiner", (type(refiner),), {"__call__": record_refiner})
    return seen


def test_the_registry_runs_footnote_5s_base_and_refiner():
    paper = SHARED / "reference" / "papers" / "semvarbench.txt"
    registry = builtin_models()
    base, refiner = cascade(registry, registry["sdxl-base-refiner"])
    if paper.is_file():
        text = paper.read_text(encoding="utf-8")
        assert f"https://huggingface.co/{base.hub_id}" in text.replace("https:\n\n//", "https://")
        assert refiner.hub_id.split("/")[1] in text
    assert (base.steps, base.call_kwargs) == (40, {"denoising_end": 0.8, "output_type": "latent"})
    assert (refiner.steps, refiner.call_kwargs, refiner.takes_image) == (40, {"denoising_start": 0.8}, True)


def test_the_refiner_gets_the_bases_latents(artefact_cache):
    """Through the cascade generator on the tiny stand-ins: the refiner is called with exactly the latents the base
    returned (not turned into an image range), from the 80 % mark, and the image comes out at the base's size."""
    import torch

    from generators.pipelines import make_generator
    from generators.smoke import stand_ins

    tiny = stand_ins(builtin_models(), builtin_models()["sdxl-base-refiner"])
    generator = make_generator(tiny["sdxl-base-refiner"], registry=tiny, cache_dir=artefact_cache)
    seen = recording(generator)
    (image,) = generator.generate(["A dog chasing a cat"], [7])
    assert seen["output"].shape[1] == 4 and torch.equal(seen["image"], seen["output"])
    assert seen["start"] == pytest.approx(0.8)
    assert image.size == tiny["sdxl-base-refiner"].resolution


def test_under_the_pipeline_defaults_the_refiner_gets_the_bases_image(artefact_cache):
    """semvarbench-paper-pipeline-defaults: the base finishes its image (50 steps) and the refiner's img2img
    defaults refine it; the image reaches the refiner in [0, 1], as the base's pt output is."""
    import dataclasses

    import torch

    from core.presets import get_preset
    from generators.pipelines import make_generator
    from generators.registry import apply_preset
    from generators.smoke import stand_ins

    registry = apply_preset(builtin_models(), get_preset("semvarbench-paper-pipeline-defaults"))
    # ten steps (a stand-in's two would leave strength 0.3 no step to run)
    tiny = {name: dataclasses.replace(spec, steps=10)
            for name, spec in stand_ins(registry, registry["sdxl-base-refiner"]).items()}
    generator = make_generator(tiny["sdxl-base-refiner"], registry=tiny, cache_dir=artefact_cache)
    seen = recording(generator)
    generator.generate(["A dog chasing a cat"], [7])
    assert seen["output"].shape[1] == 3 and torch.equal(seen["image"], seen["output"])
    assert 0.0 <= float(seen["image"].min()) and float(seen["image"].max()) <= 1.0 and seen["strength"] == 0.3
