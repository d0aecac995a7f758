"""SemVarBench's "all other settings are left as default" (Appendix D.1) read two ways: ``semvarbench-paper`` takes
each model card's example (footnotes 5 and 6 name the repositories of those examples), ``semvarbench-paper-pipeline-
defaults`` each diffusers pipeline called with the prompt alone. Where they differ, each value is checked against its
source: the pipelines' own ``__call__`` defaults in the installed diffusers."""

from __future__ import annotations

import inspect

import diffusers

from core.presets import get_preset
from generators.registry import apply_preset, builtin_models


def defaults(pipeline: str) -> dict:
    return {name: p.default for name, p in inspect.signature(getattr(diffusers, pipeline).__call__).parameters.items()}


def test_the_pipeline_defaults_reading_is_the_pipelines_call_defaults():
    preset = get_preset("semvarbench-paper-pipeline-defaults")
    registry = apply_preset(builtin_models(), preset)
    cascade, combined = registry["stable-cascade"], defaults("StableCascadeCombinedPipeline")
    assert cascade.resolution == (combined["width"], combined["height"]) == (512, 512)
    assert cascade.steps == combined["num_inference_steps"] == 12
    assert cascade.call_kwargs["prior_num_inference_steps"] == combined["prior_num_inference_steps"] == 60
    assert cascade.call_kwargs["prior_guidance_scale"] == combined["prior_guidance_scale"]
    assert cascade.call_kwargs["decoder_guidance_scale"] == combined["decoder_guidance_scale"]
    assert registry["flux-dev"].steps == defaults("FluxPipeline")["num_inference_steps"] == 28
    base, refiner = registry["sdxl-base-refiner"], registry["sdxl-refiner"]
    sdxl, img2img = defaults("StableDiffusionXLPipeline"), defaults("StableDiffusionXLImg2ImgPipeline")
    assert (base.steps, base.guidance, base.call_kwargs) == (sdxl["num_inference_steps"], sdxl["guidance_scale"], {})
    assert (refiner.steps, refiner.call_kwargs["strength"]) == (img2img["num_inference_steps"], img2img["strength"])
    assert set(preset.get("generation.models")) == set(get_preset("semvarbench-paper").get("generation.models"))


def test_the_papers_preset_reads_the_model_cards():
    """The card's settings; Stable Cascade's are also the defaults of the separate prior and decoder pipelines the
    card (and footnote 6's two repositories) use."""
    registry = apply_preset(builtin_models(), get_preset("semvarbench-paper"))
    prior, decoder = defaults("StableCascadePriorPipeline"), defaults("StableCascadeDecoderPipeline")
    cascade = registry["stable-cascade"]
    assert cascade.resolution == (prior["width"], prior["height"]) == (1024, 1024)
    assert cascade.call_kwargs["prior_num_inference_steps"] == prior["num_inference_steps"] == 20
    assert cascade.steps == decoder["num_inference_steps"] == 10
    assert registry["flux-dev"].steps == 50
    assert "sdxl-base-refiner" in get_preset("semvarbench-paper").get("generation.models")
    assert registry["sdxl-base-refiner"].call_kwargs == {"denoising_end": 0.8, "output_type": "latent"}
