"""The text-to-image models the arena can run, as data.

A :class:`ModelSpec` says which diffusers pipeline class to load, from where (a hub id, or a local weights folder),
and how to call it (steps, guidance, resolution, dtype, scheduler, negative prompt). ``BUILTIN_MODELS`` holds the
eleven systems of the taxonomy benchmark (T1) and the extra ones of Commonsense-T2I (T2) with their recommended
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
        return data


def _spec(name, pipeline_class, hub_id, *, benchmarks=("taxonomy",), **kwargs) -> ModelSpec:
    return ModelSpec(name=name, pipeline_class=pipeline_class, hub_id=hub_id, benchmarks=tuple(benchmarks), **kwargs)


def builtin_models() -> dict[str, ModelSpec]:
    """The published benchmarks' models with their model cards' recommended settings (seed 0 in the papers)."""
    both = ("taxonomy", "commonsense")
    specs = [
        _spec("sd-v1-5", "StableDiffusionPipeline", "stable-diffusion-v1-5/stable-diffusion-v1-5",
              steps=50, guidance=7.5, resolution=(512, 512), description="Stable Diffusion v1.5"),
        _spec("sdxl", "StableDiffusionXLPipeline", "stabilityai/stable-diffusion-xl-base-1.0", benchmarks=both,
              steps=50, guidance=5.0, resolution=(1024, 1024), variant="fp16", description="SDXL base 1.0"),
        _spec("sdxl-turbo", "StableDiffusionXLPipeline", "stabilityai/sdxl-turbo", steps=1, guidance=0.0,
              resolution=(512, 512), variant="fp16", negative_prompt=False,
              description="SDXL Turbo: one step, no classifier-free guidance"),
        _spec("kandinsky-3", "Kandinsky3Pipeline", "kandinsky-community/kandinsky-3", steps=25, guidance=3.0,
              resolution=(1024, 1024), variant="fp16", description="Kandinsky 3"),
        _spec("playground-v2-aesthetic", "StableDiffusionXLPipeline", "playgroundai/playground-v2-1024px-aesthetic",
              steps=50, guidance=3.0, resolution=(1024, 1024), variant="fp16",
              description="Playground v2 1024px aesthetic"),
        _spec("openjourney", "StableDiffusionPipeline", "prompthero/openjourney", steps=50, guidance=7.5,
              resolution=(512, 512), description="Openjourney (SD 1.x fine-tuned on Midjourney images)"),
        _spec("deepfloyd-if", "IFPipeline", "DeepFloyd/IF-I-XL-v1.0", steps=100, guidance=7.0, resolution=(64, 64),
              variant="fp16", description="DeepFloyd IF stage I (64 px). The published images used stages II and "
              "III as well; chain them yourself or import the images."),
        _spec("sd3", "StableDiffusion3Pipeline", "stabilityai/stable-diffusion-3-medium-diffusers", benchmarks=both,
              steps=28, guidance=7.0, resolution=(1024, 1024), description="Stable Diffusion 3 medium"),
        _spec("pixart-sigma", "PixArtSigmaPipeline", "PixArt-alpha/PixArt-Sigma-XL-2-1024-MS", steps=20,
              guidance=4.5, resolution=(1024, 1024), description="PixArt-Sigma XL 1024"),
        _spec("hunyuan-dit", "HunyuanDiTPipeline", "Tencent-Hunyuan/HunyuanDiT-v1.2-Diffusers", steps=50,
              guidance=5.0, resolution=(1024, 1024), description="Hunyuan-DiT v1.2"),
        _spec("flux-dev", "FluxPipeline", "black-forest-labs/FLUX.1-dev", benchmarks=both, steps=50, guidance=3.5,
              resolution=(1024, 1024), dtype="bfloat16", negative_prompt=False,
              description="FLUX.1 [dev] (the taxonomy paper's 'FLUX')"),
        _spec("flux-schnell", "FluxPipeline", "black-forest-labs/FLUX.1-schnell", benchmarks=("commonsense",),
              steps=4, guidance=0.0, resolution=(1024, 1024), dtype="bfloat16", negative_prompt=False,
              call_kwargs={"max_sequence_length": 256}, description="FLUX.1 [schnell]"),
        _spec("playground-v2.5", "StableDiffusionXLPipeline", "playgroundai/playground-v2.5-1024px-aesthetic",
              benchmarks=("commonsense",), steps=50, guidance=3.0, resolution=(1024, 1024), variant="fp16",
              description="Playground v2.5 1024px aesthetic"),
        _spec("sd-2-1", "StableDiffusionPipeline", "stabilityai/stable-diffusion-2-1", benchmarks=("commonsense",),
              steps=50, guidance=7.5, resolution=(768, 768), scheduler="DPMSolverMultistepScheduler",
              description="Stable Diffusion 2.1 (768 px)"),
    ]
    return {spec.name: spec for spec in specs}


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
    if "benchmarks" in values:
        values["benchmarks"] = tuple(values["benchmarks"])
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
    return registry


def select(registry: Mapping[str, ModelSpec], names: list[str]) -> list[ModelSpec]:
    """The specs of ``names`` in order; an unknown name raises an error that lists the known ones."""
    missing = [name for name in names if name not in registry]
    if missing:
        raise RegistryError(
            f"unknown model(s) {', '.join(missing)}. Known: {', '.join(sorted(registry))}. "
            "Add new ones in a models file (--models-file)."
        )
    return [registry[name] for name in names]
