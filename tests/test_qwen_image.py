"""Qwen-Image (the taxonomy paper's Figure 9): in the registry with its model card's settings, its tiny stand-in
built from configs, and one image through the smoke path users take with real weights."""

from __future__ import annotations

import re

import pytest

from core.presets import get_preset
from generators.pipelines import call_arguments
from generators.registry import builtin_models
from generators.tiny import TINY_RECIPES, recipe_for


def test_qwen_image_is_in_the_registry_with_its_model_cards_settings():
    from diffusers import QwenImagePipeline

    spec = builtin_models()["qwen-image"]
    assert (spec.pipeline_class, spec.hub_id, spec.dtype) == ("QwenImagePipeline", "Qwen/Qwen-Image", "bfloat16")
    assert (spec.steps, spec.resolution, spec.guidance) == (50, (1328, 1328), None)  # not guidance-distilled
    assert spec.call_kwargs["true_cfg_scale"] == 4.0 and "taxonomy" in spec.benchmarks
    # the card's classifier-free guidance needs a negative prompt: " " unless the run gives one
    default = call_arguments(spec, QwenImagePipeline, ["an image of coin"], [None])
    assert default["negative_prompt"] == " " and "guidance_scale" not in default
    given = call_arguments(spec, QwenImagePipeline, ["an image of coin"], [None], negative_prompt="blurry")
    assert given["negative_prompt"] == ["blurry"]
    assert recipe_for(spec.hub_id, spec.pipeline_class) is TINY_RECIPES["tiny-qwen-image"]
    # the taxonomy preset runs it with the card's settings (Figure 9's are not in the released code)
    assert get_preset("taxonomy-paper").get("generation.model.qwen-image") == {}


@pytest.mark.slow
def test_smoke_makes_a_qwen_image_picture_on_the_tiny_stand_in(artefact_cache, capsys):
    from generators.commands import main

    assert main(["--cache-dir", str(artefact_cache), "smoke", "--models", "qwen-image"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ok   qwen-image +QwenImagePipeline .* \d+x\d+ +\(tiny-qwen-image\)", out, flags=re.M), out
