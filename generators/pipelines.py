"""Loading a registry model as a generator: the one place that calls diffusers.

The generator interface is deliberately tiny (:class:`Generator`): a name, the parameters to record with each image,
and ``generate(prompts, seeds)``, one image per (prompt, seed). Diffusers pipelines and the procedural demo renderers
both implement it, so the runner never knows which it drives.

Device and precision are the caller's choice; the defaults are safe (CPU, float32). On a CUDA device the registry's
recommended dtype is used unless the caller names one. Randomness comes only from one ``torch.Generator`` per image,
seeded with that image's seed, so an image does not depend on which batch it was made in (up to the kernels'
batch-size-dependent rounding on GPUs).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Protocol, runtime_checkable

from PIL import Image

from generators.procedural import make_renderer
from generators.registry import ModelSpec, RegistryError


@runtime_checkable
class Generator(Protocol):
    name: str
    params: dict[str, Any]  # recorded in images.params with each image (plus seed and index)

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]: ...


def resolve_dtype(spec: ModelSpec, device: str, dtype: str | None = None):
    """The torch dtype to load ``spec`` in: ``dtype`` if given, else the spec's on CUDA and float32 elsewhere."""
    import torch

    name = dtype or (spec.dtype if str(device).startswith("cuda") else "float32")
    if name not in ("float32", "float16", "bfloat16"):
        raise RegistryError(f"dtype must be float32, float16 or bfloat16, got {name!r}.")
    return getattr(torch, name)


def weights_source(spec: ModelSpec, cache_dir: str | Path | None) -> str:
    """What ``from_pretrained`` opens: the local weights folder, the tiny build in the cache, or the hub id."""
    if spec.weights:
        if not Path(spec.weights).exists():
            raise RegistryError(
                f"model {spec.name}: weights folder {spec.weights} does not exist. Fix 'weights' in the models file "
                "or download the weights there (huggingface-cli download <hub id> --local-dir <folder>)."
            )
        return spec.weights
    if spec.tiny:
        from generators.tiny import ensure_tiny

        if cache_dir is None:
            raise RegistryError(f"model {spec.name} is a tiny offline model: pass cache_dir to build it in.")
        return str(ensure_tiny(cache_dir, spec.tiny))
    if not spec.hub_id:
        raise RegistryError(f"model {spec.name} has neither weights nor hub_id. Set one of them in the models file.")
    return spec.hub_id


@contextmanager
def loading_bars(show: bool) -> Iterator[None]:
    """Hide diffusers' and transformers' loading/saving progress bars for the block unless ``show`` (the libraries
    keep this switch globally; it is restored afterwards)."""
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as transformers_logging

    before = diffusers_logging.is_progress_bar_enabled(), transformers_logging.is_progress_bar_enabled()
    if not show:
        diffusers_logging.disable_progress_bar()
        transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        for enabled, module in zip(before, (diffusers_logging, transformers_logging)):
            module.enable_progress_bar() if enabled else module.disable_progress_bar()


def load_pipeline(spec: ModelSpec, *, cache_dir: str | Path | None = None, device: str = "cpu", dtype: str | None = None,
                  progress: bool = False):
    """``<spec.pipeline_class>.from_pretrained(...)`` on ``device``, with the spec's scheduler swapped in."""
    import diffusers

    pipeline_class = getattr(diffusers, spec.pipeline_class, None)
    if pipeline_class is None or not hasattr(pipeline_class, "from_pretrained"):
        raise RegistryError(
            f"model {spec.name}: diffusers {diffusers.__version__} has no pipeline class {spec.pipeline_class!r}. "
            "Use a class name from diffusers (e.g. StableDiffusionXLPipeline) in the models file."
        )
    kwargs: dict[str, Any] = {"dtype": resolve_dtype(spec, device, dtype)}
    if spec.variant and not spec.weights and not spec.tiny:  # local folders are usually saved without a variant
        kwargs["variant"] = spec.variant
    with loading_bars(progress):
        pipeline = pipeline_class.from_pretrained(weights_source(spec, cache_dir), **kwargs)
    if spec.scheduler:
        scheduler_class = getattr(diffusers, spec.scheduler, None)
        if scheduler_class is None:
            raise RegistryError(f"model {spec.name}: diffusers has no scheduler {spec.scheduler!r}.")
        pipeline.scheduler = scheduler_class.from_config(pipeline.scheduler.config)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline.to(device)


class DiffusersGenerator:
    """A loaded diffusers pipeline called with the registry's settings."""

    def __init__(self, spec: ModelSpec, pipeline, *, device: str = "cpu", negative_prompt: str = ""):
        import diffusers

        self.spec = spec
        self.name = spec.name
        self.pipeline = pipeline
        self.device = str(device)
        self.negative_prompt = negative_prompt if spec.negative_prompt else ""
        width, height = spec.resolution
        self.params = {
            "pipeline_class": spec.pipeline_class, "weights": spec.weights or spec.tiny or spec.hub_id,
            "steps": spec.steps, "guidance": spec.guidance, "width": width, "height": height,
            "dtype": str(pipeline.dtype).removeprefix("torch."), "scheduler": type(pipeline.scheduler).__name__,
            "negative_prompt": self.negative_prompt, "prompt_template": spec.prompt_template,
            "call_kwargs": dict(spec.call_kwargs), "device": self.device, "diffusers": diffusers.__version__,
        }

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
        import torch

        if len(prompts) != len(seeds):
            raise ValueError(f"generate needs one seed per prompt, got {len(prompts)} prompts and {len(seeds)} seeds.")
        generator_device = "cpu" if self.device.startswith("mps") else self.device
        width, height = self.spec.resolution
        kwargs: dict[str, Any] = {
            "prompt": [self.spec.prompt_template.format(prompt=p) for p in prompts],
            "num_inference_steps": self.spec.steps, "width": width, "height": height,
            "generator": [torch.Generator(device=generator_device).manual_seed(int(s)) for s in seeds],
            "output_type": "pil",
        }
        if self.spec.guidance is not None:
            kwargs["guidance_scale"] = self.spec.guidance
        if self.negative_prompt:
            kwargs["negative_prompt"] = [self.negative_prompt] * len(prompts)
        kwargs.update(self.spec.call_kwargs)
        with torch.inference_mode():
            images = self.pipeline(**kwargs).images
        if len(images) != len(prompts):
            raise RuntimeError(f"{self.name} returned {len(images)} images for {len(prompts)} prompts.")
        return images


class ProceduralGenerator:
    """A procedural renderer (demo) under a registry name."""

    def __init__(self, spec: ModelSpec):
        self.name = spec.name
        width, height = spec.resolution  # the registry's convention: (width, height)
        self.renderer = make_renderer(spec.pipeline_class, spec.name, (width, height))
        self.params = {"renderer": spec.pipeline_class, "width": width, "height": height}

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
        return self.renderer.generate(prompts, seeds)


def make_generator(spec: ModelSpec, *, cache_dir: str | Path | None = None, device: str = "cpu",
                   dtype: str | None = None, negative_prompt: str = "", progress: bool = False) -> Generator:
    """The generator for ``spec``: a procedural renderer, or its diffusers pipeline loaded on ``device``."""
    if spec.kind == "procedural":
        return ProceduralGenerator(spec)
    pipeline = load_pipeline(spec, cache_dir=cache_dir, device=device, dtype=dtype, progress=progress)
    return DiffusersGenerator(spec, pipeline, device=device, negative_prompt=negative_prompt)
