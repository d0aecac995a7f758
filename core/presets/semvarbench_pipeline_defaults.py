"""``semvarbench-paper-pipeline-defaults``: SemVarBench with the other reading of "all other settings are left as
default" (Appendix D.1).

``semvarbench-paper`` reads "default" as each model's card (its example call: footnotes 5 and 6 name the repositories
of the card's SDXL base + refiner and Stable Cascade prior + decoder examples). This preset reads it as each diffusers
pipeline called with the prompt alone: the same models and judge, where the two readings differ the pipelines' own
``__call__`` defaults (diffusers 0.42, checked by tests/test_semvarbench_presets.py). docs/methods/semvarbench.md
explains both.
"""

from core.presets import PRESETS, Choice, Preset
from core.presets.semvarbench_paper import PRESET as PAPER

CALL = "diffusers' {}.__call__ defaults"

PRESETS.register(Preset(
    name="semvarbench-paper-pipeline-defaults",
    title="SemVarBench, as published, with the diffusers pipelines' call defaults",
    suite=PAPER.suite, report=PAPER.report, paper=PAPER.paper,
    description="As semvarbench-paper, but every model called with the prompt alone: Stable Cascade's combined "
                "pipeline at 512 px with 60 + 12 steps, FLUX.1-dev with 28 steps, SDXL base then the refiner's "
                "img2img defaults.",
    choices={
        **PAPER.choices,
        "generation.model.stable-cascade": Choice(
            {"resolution": [512, 512], "steps": 12,
             "call_kwargs": {"prior_num_inference_steps": 60, "prior_guidance_scale": 4.0,
                             "decoder_guidance_scale": 0.0}},
            CALL.format("StableCascadeCombinedPipeline") + ": height = width = 512, prior_num_inference_steps=60, "
            "prior_guidance_scale=4.0, num_inference_steps=12, decoder_guidance_scale=0.0",
            "The card (and the separate prior and decoder pipelines footnote 6 points to) use 1024 px, 20 + 10 "
            "steps: semvarbench-paper."),
        "generation.model.flux-dev": Choice(
            {"steps": 28}, CALL.format("FluxPipeline") + ": num_inference_steps=28 (guidance 3.5, 1024 px and 512 T5 "
            "tokens as the card)", "The card calls 50 steps: semvarbench-paper."),
        "generation.model.sdxl-base-refiner": Choice(
            {"steps": 50, "call_kwargs": {}},
            CALL.format("StableDiffusionXLPipeline") + ": 50 steps, guidance 5.0, the finished image handed on",
            "The card's ensemble of experts (40 steps, the refiner from 80 %): semvarbench-paper."),
        "generation.model.sdxl-refiner": Choice(
            {"steps": 50, "call_kwargs": {"strength": 0.3}},
            CALL.format("StableDiffusionXLImg2ImgPipeline") + ": strength=0.3, num_inference_steps=50 (the last 15 "
            "run), guidance 5.0, on the base's image"),
    },
))
