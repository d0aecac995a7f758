"""The text-to-image models the arena can run, as data.

A :class:`ModelSpec` says which diffusers pipeline class to load, from where (a hub id, or a local weights folder),
and how to call it (steps, guidance, resolution, dtype, scheduler, negative prompt). :func:`builtin_models` holds
the eleven systems of the taxonomy benchmark (T1) and the extra ones of Commonsense-T2I (T2) with their model cards'
settings; the retrieval baseline and API-only models (DALL-E 3) have no weights and enter the arena as imported image
folders (``python -m arena import-images``).

Users add models, or override any field of a built-in one (typically ``weights`` to point at a local folder), in a
models file, TOML or JSON::

    # models.toml
    [models.sdxl]
    weights = "/data/weights/sdxl-base-1.0"

    [models.my-finetune]
    pipeline_class = "StableDiffusionXLPipeline"
    weights = "/data/weights/my-finetune"
    steps = 30
    guidance = 6.0
    resolution = [1024, 1024]

A cascade is a model with ``stages``: registry names of super-resolution models (``takes_image = true``) run in
order on its images. ``deepfloyd-if`` is the published DeepFloyd IF cascade (stage I, then ``deepfloyd-if-ii`` and
``deepfloyd-if-iii``); ``deepfloyd-if-i`` is stage I alone. A stage's weights are overridden like any model's::

    [models.deepfloyd-if-ii]
    weights = "/data/weights/IF-II-L-v1.0"

``offload``, ``vae_tiling``, ``vae_slicing`` and ``compile`` fit a big model on one GPU (see
:mod:`generators.pipelines`); ``python -m generators run`` has the same as flags for every model of a run.

Nothing here is mutable module state: :func:`load_registry` returns a fresh ``dict`` every call.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

KINDS = ("diffusers", "procedural")
DTYPES = ("float32", "float16", "bfloat16")
OFFLOADS = ("", "model", "sequential")  # none; diffusers' enable_model_cpu_offload; enable_sequential_cpu_offload


class RegistryError(ValueError):
    """A model is unknown or its configuration is unusable; the message says which field and how to fix it."""


@dataclass(frozen=True)
class ModelSpec:
    """How to make images with one model. Only ``name`` and ``pipeline_class`` are required."""

    name: str
    pipeline_class: str  # a diffusers class name, e.g. "StableDiffusionXLPipeline"; or a procedural renderer name
    hub_id: str = ""  # where from_pretrained finds the weights on a machine with network
    weights: str = ""  # a local folder (save_pretrained layout); wins over hub_id
    kind: str = "diffusers"  # diffusers | procedural
    steps: int = 50
    guidance: float | None = 7.5  # None: the pipeline takes no guidance_scale
    resolution: tuple[int, int] = (512, 512)  # (width, height)
    dtype: str = "float16"  # recommended on GPU; the CPU always runs float32
    scheduler: str = ""  # a diffusers scheduler class to swap in; "" keeps the pipeline's own
    negative_prompt: bool = True  # whether the pipeline accepts negative_prompt
    variant: str = ""  # weights variant for from_pretrained, e.g. "fp16"
    prompt_template: str = "{prompt}"
    call_kwargs: dict[str, Any] = field(default_factory=dict)  # extra pipeline call arguments
    tiny: str = ""  # name of a tiny offline recipe in generators.tiny: weights are built into the cache
    benchmarks: tuple[str, ...] = ()  # which published benchmarks used it (taxonomy, commonsense)
    description: str = ""
    # a cascade: registry names of super-resolution stages run in order on this model's images (DeepFloyd IF)
    stages: tuple[str, ...] = ()
    takes_image: bool = False  # a super-resolution stage: runs only as another model's stage, on its images
    reuse_prompt_embeds: bool = False  # a stage loaded without a text encoder, given the first stage's embeddings
    # fitting a big model on one GPU (also flags of `python -m generators run`, which set them for every model)
    offload: str = ""  # "model" | "sequential": diffusers' CPU offload instead of moving the pipeline to the GPU
    vae_tiling: bool = False  # decode (and encode) in tiles
    vae_slicing: bool = False  # decode a batch one image at a time
    compile: bool = False  # torch.compile the denoiser (UNet or transformer): slow first call, faster later ones

    def __post_init__(self):
        if not self.name.strip():
            raise RegistryError("a model needs a non-empty name.")
        if self.kind not in KINDS:
            raise RegistryError(f"model {self.name}: kind must be one of {', '.join(KINDS)}, got {self.kind!r}.")
        if self.dtype not in DTYPES:
            raise RegistryError(f"model {self.name}: dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}.")
        if self.steps < 1:
            raise RegistryError(f"model {self.name}: steps must be at least 1, got {self.steps}.")
        width, height = self.resolution
        if width < 8 or height < 8 or width % 8 or height % 8:
            raise RegistryError(
                f"model {self.name}: resolution must be two multiples of 8 (width, height), got {self.resolution}."
            )
        if self.offload not in OFFLOADS:
            raise RegistryError(f"model {self.name}: offload must be \"model\" or \"sequential\" (or empty), "
                                f"got {self.offload!r}.")
        if self.takes_image and self.stages:
            raise RegistryError(f"model {self.name}: a super-resolution stage (takes_image) cannot have stages.")
        if "{prompt}" not in self.prompt_template:
            raise RegistryError(f"model {self.name}: prompt_template must contain {{prompt}}, got {self.prompt_template!r}.")

    @property
    def source(self) -> str:
        """Where the weights come from, as from_pretrained receives it (tiny models: resolved by the loader)."""
        return self.weights or self.hub_id

    def config(self) -> dict[str, Any]:
        """The spec as JSON-ready data (stored in ``models.config``)."""
        data = dataclasses.asdict(self)
        data["resolution"] = list(self.resolution)
        data["benchmarks"] = list(self.benchmarks)
        data["stages"] = list(self.stages)
        return data


def _spec(name, pipeline_class, hub_id, *, benchmarks=("taxonomy",), **kwargs) -> ModelSpec:
    return ModelSpec(name=name, pipeline_class=pipeline_class, hub_id=hub_id, benchmarks=tuple(benchmarks), **kwargs)


def builtin_models() -> dict[str, ModelSpec]:
    """The published benchmarks' models with their model cards' recommended settings (seed 0 in the papers).

    Each description names its source: the model card at huggingface.co/<hub id> (its example call), and where the
    card calls ``pipe(prompt)`` without an argument, the pipeline's own default in diffusers (checked by a test).
    Text lengths: CLIP encoders read 77 tokens; T5 lengths are the ``max_sequence_length`` call argument where the
    pipeline has one, otherwise fixed by the pipeline (IF 77, Kandinsky 3 128, Hunyuan-DiT 77 BERT + 256 mT5).
    """
    both = ("taxonomy", "commonsense")
    card = "Settings: model card at huggingface.co/"
    defaults = "the pipeline's defaults"
    deepfloyd_stage_1 = dict(
        steps=100, guidance=7.0, resolution=(64, 64), variant="fp16",
        description=f"DeepFloyd IF stage I alone (64 px). {card}DeepFloyd/IF-I-XL-v1.0 (stage_1(...), {defaults}).")
    specs = [
        _spec("sd-v1-5", "StableDiffusionPipeline", "stable-diffusion-v1-5/stable-diffusion-v1-5",
              steps=50, guidance=7.5, resolution=(512, 512),
              description=f"Stable Diffusion v1.5. {card}stable-diffusion-v1-5/stable-diffusion-v1-5 (pipe(prompt), "
              f"{defaults}; PNDM from the repository)."),
        _spec("sdxl", "StableDiffusionXLPipeline", "stabilityai/stable-diffusion-xl-base-1.0", benchmarks=both,
              steps=50, guidance=5.0, resolution=(1024, 1024), variant="fp16",
              description=f"SDXL base 1.0 (base only, no refiner). {card}stabilityai/stable-diffusion-xl-base-1.0 "
              f"(variant fp16, pipe(prompt), {defaults})."),
        _spec("sdxl-turbo", "StableDiffusionXLPipeline", "stabilityai/sdxl-turbo", steps=1, guidance=0.0,
              resolution=(512, 512), variant="fp16", negative_prompt=False,
              description=f"SDXL Turbo: one step, no classifier-free guidance (so no negative prompt), 512 px. "
              f"{card}stabilityai/sdxl-turbo (num_inference_steps=1, guidance_scale=0.0)."),
        _spec("kandinsky-3", "Kandinsky3Pipeline", "kandinsky-community/kandinsky-3", steps=25, guidance=3.0,
              resolution=(1024, 1024), variant="fp16",
              description=f"Kandinsky 3. {card}kandinsky-community/kandinsky-3 (variant fp16, "
              f"num_inference_steps=25; guidance 3.0 and 1024 px are {defaults})."),
        _spec("playground-v2-aesthetic", "StableDiffusionXLPipeline", "playgroundai/playground-v2-1024px-aesthetic",
              steps=50, guidance=3.0, resolution=(1024, 1024), variant="fp16",
              description=f"Playground v2 1024px aesthetic. {card}playgroundai/playground-v2-1024px-aesthetic "
              f"(variant fp16, guidance_scale=3.0; 50 steps are {defaults})."),
        _spec("openjourney", "StableDiffusionPipeline", "prompthero/openjourney", steps=50, guidance=7.5,
              resolution=(512, 512),
              description=f"Openjourney (SD 1.x fine-tuned on Midjourney images). {card}prompthero/openjourney "
              f"(pipe(prompt), {defaults}). The card adds 'mdjrny-v4 style' to prompts; the benchmarks did not, so "
              "the prompt is kept as is (set prompt_template to add it)."),
        _spec("deepfloyd-if", "IFPipeline", "DeepFloyd/IF-I-XL-v1.0",
              stages=("deepfloyd-if-ii", "deepfloyd-if-iii"), **{
                  **deepfloyd_stage_1, "description": "DeepFloyd IF as published: the cascade IF-I-XL (64 px) -> "
                  "IF-II-L (256 px) -> Stable Diffusion x4 upscaler (1024 px); stage II reuses stage I's T5 "
                  f"embeddings. {card}DeepFloyd/IF-I-XL-v1.0 (the three-stage example)."}),
        _spec("deepfloyd-if-i", "IFPipeline", "DeepFloyd/IF-I-XL-v1.0", benchmarks=(), **deepfloyd_stage_1),
        _spec("deepfloyd-if-ii", "IFSuperResolutionPipeline", "DeepFloyd/IF-II-L-v1.0", benchmarks=(),
              takes_image=True, reuse_prompt_embeds=True, steps=50, guidance=4.0, resolution=(256, 256),
              variant="fp16", description=f"DeepFloyd IF stage II (64 -> 256 px), a stage of deepfloyd-if. "
              f"{card}DeepFloyd/IF-II-L-v1.0 (text_encoder=None, stage I's prompt embeddings; {defaults}: 50 "
              "steps, guidance 4.0, noise level 250)."),
        _spec("deepfloyd-if-iii", "StableDiffusionUpscalePipeline", "stabilityai/stable-diffusion-x4-upscaler",
              benchmarks=(), takes_image=True, steps=75, guidance=9.0, resolution=(1024, 1024),
              call_kwargs={"noise_level": 100},
              description=f"DeepFloyd IF stage III: the Stable Diffusion x4 upscaler (256 -> 1024 px), a stage of "
              f"deepfloyd-if. {card}DeepFloyd/IF-I-XL-v1.0 (stage_3(prompt=..., image=..., noise_level=100); "
              f"{defaults}: 75 steps, guidance 9.0)."),
        _spec("sd3", "StableDiffusion3Pipeline", "stabilityai/stable-diffusion-3-medium-diffusers", benchmarks=both,
              steps=28, guidance=7.0, resolution=(1024, 1024), call_kwargs={"max_sequence_length": 256},
              description=f"Stable Diffusion 3 medium. {card}stabilityai/stable-diffusion-3-medium-diffusers "
              "(num_inference_steps=28, guidance_scale=7.0; T5 length 256 is the pipeline's default)."),
        _spec("pixart-sigma", "PixArtSigmaPipeline", "PixArt-alpha/PixArt-Sigma-XL-2-1024-MS", steps=20,
              guidance=4.5, resolution=(1024, 1024), call_kwargs={"max_sequence_length": 300},
              description=f"PixArt-Sigma XL 1024. {card}PixArt-alpha/PixArt-Sigma-XL-2-1024-MS (pipe(prompt), "
              f"{defaults}: 20 steps, guidance 4.5, 300 T5 tokens)."),
        _spec("pixart-sigma-512", "PixArtSigmaPipeline", "PixArt-alpha/PixArt-Sigma-XL-2-512-MS", steps=20,
              guidance=4.5, resolution=(512, 512), call_kwargs={"max_sequence_length": 300},
              description=f"PixArt-Sigma XL 512: the PixArt images the taxonomy paper's released scripts scored "
              f"(fid_is.py, reward.py read PixArt-Sigma-XL-2-512-MS). {card}PixArt-alpha/PixArt-Sigma-XL-2-512-MS "
              f"(pipe(prompt), {defaults}: 20 steps, guidance 4.5, 300 T5 tokens)."),
        _spec("pixart-alpha", "PixArtAlphaPipeline", "PixArt-alpha/PixArt-XL-2-1024-MS", benchmarks=("semvarbench",),
              steps=20, guidance=4.5, resolution=(1024, 1024), call_kwargs={"max_sequence_length": 120},
              description=f"PixArt-alpha XL 1024 (SemVarBench's 'PixArt'). {card}PixArt-alpha/PixArt-XL-2-1024-MS "
              f"(pipe(prompt), {defaults}: 20 steps, guidance 4.5, 120 T5 tokens)."),
        _spec("stable-cascade", "StableCascadeCombinedPipeline", "stabilityai/stable-cascade",
              benchmarks=("semvarbench",), steps=10, guidance=None, resolution=(1024, 1024), dtype="bfloat16",
              variant="bf16", call_kwargs={"prior_num_inference_steps": 20, "prior_guidance_scale": 4.0,
                                           "decoder_guidance_scale": 0.0},
              description=f"Stable Cascade (SemVarBench's 'SD CA'): prior stabilityai/stable-cascade-prior and "
              f"decoder stabilityai/stable-cascade as one combined pipeline. {card}stabilityai/stable-cascade (bf16; "
              "prior 20 steps at guidance 4.0, decoder 10 steps at guidance 0.0, 1024 px)."),
        _spec("kolors", "KolorsPipeline", "Kwai-Kolors/Kolors-diffusers", benchmarks=("semvarbench",), steps=50,
              guidance=5.0, resolution=(1024, 1024), variant="fp16",
              description=f"Kolors (ChatGLM3 text encoder). {card}Kwai-Kolors/Kolors-diffusers (variant fp16, "
              "guidance_scale=5.0, num_inference_steps=50, 1024 px)."),
        _spec("hunyuan-dit", "HunyuanDiTPipeline", "Tencent-Hunyuan/HunyuanDiT-v1.2-Diffusers", steps=50,
              guidance=5.0, resolution=(1024, 1024),
              description=f"Hunyuan-DiT v1.2. {card}Tencent-Hunyuan/HunyuanDiT-v1.2-Diffusers (pipe(prompt), "
              f"{defaults})."),
        _spec("flux-dev", "FluxPipeline", "black-forest-labs/FLUX.1-dev", benchmarks=both, steps=50, guidance=3.5,
              resolution=(1024, 1024), dtype="bfloat16", negative_prompt=False,
              call_kwargs={"max_sequence_length": 512},
              description=f"FLUX.1 [dev] (the taxonomy paper's 'FLUX'); guidance-distilled, so no negative prompt. "
              f"{card}black-forest-labs/FLUX.1-dev (bfloat16, guidance_scale=3.5, num_inference_steps=50, "
              "max_sequence_length=512)."),
        _spec("flux-schnell", "FluxPipeline", "black-forest-labs/FLUX.1-schnell", benchmarks=("commonsense",),
              steps=4, guidance=0.0, resolution=(1024, 1024), dtype="bfloat16", negative_prompt=False,
              call_kwargs={"max_sequence_length": 256},
              description=f"FLUX.1 [schnell]. {card}black-forest-labs/FLUX.1-schnell (bfloat16, guidance_scale=0.0, "
              "num_inference_steps=4, max_sequence_length=256)."),
        _spec("playground-v2.5", "StableDiffusionXLPipeline", "playgroundai/playground-v2.5-1024px-aesthetic",
              benchmarks=("commonsense", "taxonomy"), steps=50, guidance=3.0, resolution=(1024, 1024), variant="fp16",
              description=f"Playground v2.5 1024px aesthetic. {card}playgroundai/playground-v2.5-1024px-aesthetic "
              "(variant fp16, num_inference_steps=50, guidance_scale=3; the repository's EDM DPM-Solver scheduler)."),
        _spec("sd-2-1", "StableDiffusionPipeline", "stabilityai/stable-diffusion-2-1", benchmarks=("commonsense",),
              steps=50, guidance=7.5, resolution=(768, 768), scheduler="DPMSolverMultistepScheduler",
              description=f"Stable Diffusion 2.1 (768 px, v-prediction). {card}stabilityai/stable-diffusion-2-1 "
              f"(DPMSolverMultistepScheduler.from_config swapped in, pipe(prompt), {defaults})."),
    ]
    return {spec.name: spec for spec in specs}


def cascade(registry: Mapping[str, ModelSpec], spec: ModelSpec) -> list[ModelSpec]:
    """``spec`` followed by its super-resolution stages' specs, in the order they run."""
    stages = []
    for name in spec.stages:
        stage = registry.get(name)
        if stage is None or not stage.takes_image:
            known = sorted(other for other, candidate in registry.items() if candidate.takes_image)
            raise RegistryError(
                f"model {spec.name}: stage {name!r} is not a super-resolution stage in the registry (one with "
                f"takes_image = true). Known stages: {', '.join(known) or 'none'}."
            )
        stages.append(stage)
    return [spec, *stages]


def output_resolution(registry: Mapping[str, ModelSpec], spec: ModelSpec) -> tuple[int, int]:
    """(width, height) of the images ``spec`` makes: its last stage's resolution."""
    return cascade(registry, spec)[-1].resolution


def spec_from_mapping(name: str, data: Mapping[str, Any], base: ModelSpec | None = None, source: str = "") -> ModelSpec:
    """A spec from a models-file table; fields missing from ``data`` come from ``base`` (a built-in of that name)."""
    known = {f.name for f in dataclasses.fields(ModelSpec)}
    unknown = sorted(set(data) - known)
    where = f"{source}: " if source else ""
    if unknown:
        raise RegistryError(f"{where}model {name}: unknown field(s) {', '.join(unknown)}. Known fields: {', '.join(sorted(known - {'name'}))}.")
    values = dict(data)
    if "resolution" in values:
        resolution = values["resolution"]
        if isinstance(resolution, int):
            resolution = (resolution, resolution)
        if not isinstance(resolution, (list, tuple)) or len(resolution) != 2:
            raise RegistryError(f"{where}model {name}: resolution is [width, height] or one number, got {resolution!r}.")
        values["resolution"] = tuple(int(v) for v in resolution)
    for name_of_list in ("benchmarks", "stages"):
        if name_of_list in values:
            values[name_of_list] = tuple(values[name_of_list])
    values["name"] = name
    if base is not None:
        return dataclasses.replace(base, **values)
    if "pipeline_class" not in values:
        raise RegistryError(
            f"{where}model {name} is not a built-in model, so it needs pipeline_class "
            "(a diffusers class such as \"StableDiffusionXLPipeline\")."
        )
    try:
        return ModelSpec(**values)
    except TypeError as error:
        raise RegistryError(f"{where}model {name}: {error}.") from None


def read_models_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """{name: fields} from a TOML or JSON models file with a top-level ``models`` table."""
    path = Path(path)
    if not path.exists():
        raise RegistryError(f"{path}: models file not found. Pass --models-file with a .toml or .json file.")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        elif path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            raise RegistryError(f"{path}: use a .toml or .json models file.")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise RegistryError(f"{path}: not valid {path.suffix[1:].upper()} ({error}).") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not all(isinstance(v, dict) for v in models.values()):
        raise RegistryError(f"{path}: expected a 'models' table of tables, e.g. [models.sdxl] weights = \"/path\".")
    return models


def load_registry(models_file: str | Path | None = None, extra: Mapping[str, ModelSpec] | None = None) -> dict[str, ModelSpec]:
    """Built-in models, then ``extra`` specs (e.g. the demo models), then the models file's additions and overrides."""
    registry = builtin_models()
    registry.update(extra or {})
    if models_file is not None:
        for name, fields in read_models_file(models_file).items():
            registry[name] = spec_from_mapping(name, fields, registry.get(name), source=str(models_file))
    for spec in registry.values():
        cascade(registry, spec)  # every stage named exists and is a stage
    return registry


def apply_preset(registry: Mapping[str, ModelSpec], preset) -> dict[str, ModelSpec]:
    """The registry with a preset's generation settings (a :class:`datamodel.presets.Preset`): each model named by
    a ``generation.model.NAME`` entry gets that entry's fields (an empty entry keeps the registry's settings); every
    other text-to-image model (diffusers, not a cascade stage) gets ``generation.all_models``. A field or model the
    registry does not know raises :class:`RegistryError` naming the preset."""
    own = preset.section("generation.model.")
    unknown = sorted(set(own) - set(registry))
    if unknown:
        raise RegistryError(f"preset {preset.name}: generation.model.{unknown[0]} names no model of the registry. "
                            "Add it in a models file (--models-file) or fix the preset.")
    everyone = preset.get("generation.all_models", {})
    result = dict(registry)
    for name, spec in registry.items():
        fields = own.get(name, None if spec.kind != "diffusers" or spec.takes_image else everyone)
        if fields:
            result[name] = spec_from_mapping(name, fields, spec, source=f"preset {preset.name}")
    return result


def select(registry: Mapping[str, ModelSpec], names: list[str]) -> list[ModelSpec]:
    """The specs of ``names`` in order; an unknown name raises an error that lists the known ones."""
    missing = [name for name in names if name not in registry]
    if missing:
        raise RegistryError(
            f"unknown model(s) {', '.join(missing)}. Known: {', '.join(sorted(registry))}. "
            "Add new ones in a models file (--models-file)."
        )
    stages = [name for name in names if registry[name].takes_image]
    if stages:
        users = sorted(name for name, spec in registry.items() if set(stages) & set(spec.stages))
        raise RegistryError(
            f"{', '.join(stages)}: super-resolution stage(s) that need another model's images; run the cascade "
            f"that uses them instead ({', '.join(users) or 'none in the registry'})."
        )
    return [registry[name] for name in names]
