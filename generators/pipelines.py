"""Loading a registry model as a generator: the one place that calls diffusers.

The generator interface is deliberately tiny (:class:`Generator`): a name, the parameters to record with each image,
and ``generate(prompts, seeds)``, one image per (prompt, seed). Diffusers pipelines and the procedural demo renderers
both implement it, so the runner never knows which it drives.

Device and precision are the caller's choice; the defaults are safe (CPU, float32). On a CUDA device the registry's
recommended dtype is used unless the caller names one. Randomness comes only from one ``torch.Generator`` per image,
seeded with that image's seed, so an image does not depend on which batch it was made in (up to the kernels'
batch-size-dependent rounding on GPUs).

A cascade (a spec with ``stages``, DeepFloyd IF) is one generator over several pipelines: each batch runs through
stage I, then each super-resolution stage on the previous stage's images, with the same per-image torch generators,
so the runner stores only finished images and resumes a killed run at the first batch without rows.

Fitting a model on one GPU: a spec's ``offload``, ``vae_tiling``, ``vae_slicing`` and ``compile`` fields (flags of
``python -m generators run``) are passed to diffusers' ``enable_model_cpu_offload`` /
``enable_sequential_cpu_offload``, ``vae.enable_tiling`` / ``vae.enable_slicing`` and ``torch.compile``; running out
of GPU memory raises :class:`OutOfMemory`, whose message names those flags.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from core.registry import load
from generators.procedural import make_renderer
from generators.registry import ModelSpec, RegistryError, builtin_models, cascade

MEMORY_FLAGS = (
    "--batch-size 1, --offload model (or --offload sequential: slowest, least memory), --vae-tiling, --vae-slicing"
)


class MissingWeights(RegistryError):
    """A model's weights are neither in a local folder nor loadable from the hub; the message says how to get them."""


class OutOfMemory(RuntimeError):
    """The device ran out of memory; the message names the flags that make a model fit."""


@runtime_checkable
class Generator(Protocol):
    """Makes one image per (prompt, seed): a PIL image, or (API models) a
    :class:`generators.api_images.GeneratedImage` already in the media folder, or None when that image failed
    (the generator says why). ``negative_prompts`` (one per prompt) replaces the run's negative prompt where given."""

    name: str
    params: dict[str, Any]  # recorded in images.params with each image (plus seed and index)

    def generate(self, prompts: list[str], seeds: list[int],
                 negative_prompts: list[str] | None = None) -> list: ...


def resolve_dtype(spec: ModelSpec, device: str, dtype: str | None = None):
    """The torch dtype to load ``spec`` in: ``dtype`` if given, else the spec's on CUDA and float32 elsewhere."""
    import torch

    name = dtype or (spec.dtype if str(device).startswith("cuda") else "float32")
    if name not in ("float32", "float16", "bfloat16"):
        raise RegistryError(f"dtype must be float32, float16 or bfloat16, got {name!r}.")
    return getattr(torch, name)


def hub_offline() -> bool:
    """Whether ``HF_HUB_OFFLINE`` forbids downloads (read now, not when huggingface_hub was imported)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def weights_source(spec: ModelSpec, cache_dir: str | Path | None) -> str:
    """What ``from_pretrained`` opens: the local weights folder, the tiny build in the cache, or the hub id."""
    if spec.weights:
        if not Path(spec.weights).exists():
            raise MissingWeights(
                f"model {spec.name}: weights folder {spec.weights} does not exist. Fix 'weights' in the models file "
                f"or download the weights there (hf download {spec.hub_id or '<hub id>'} --local-dir {spec.weights})."
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


def missing_weights_message(spec: ModelSpec, reason: object = "") -> str:
    """What to do when ``spec``'s weights cannot be loaded: the model, the hub id, and the ``weights`` override."""
    said = " ".join(str(reason).split())
    said = f" (diffusers: {said[:300]}{'...' if len(said) > 300 else ''})" if said else ""
    if spec.weights or spec.tiny:
        folder = spec.weights or f"the tiny build of {spec.tiny}"
        fix = (f"rebuild it with `python -m generators tiny --names {spec.tiny} --rebuild`" if spec.tiny and
               not spec.weights else f"fix 'weights' under [models.{spec.name}] in the models file")
        return (f"model {spec.name}: {folder} could not be loaded as a {spec.pipeline_class}{said}. It needs the "
                f"save_pretrained layout (model_index.json and a folder per component); {fix}.")
    if hub_offline():
        why = ("HF_HUB_OFFLINE is set, so nothing is downloaded: unset it to download them into the Hugging Face "
               "cache, or")
    else:
        why = ("They could not be downloaded (no connection to huggingface.co, or a gated model whose license is "
               "not accepted on its page: accept it and run `hf auth login`). Otherwise")
    return (
        f"model {spec.name}: the weights of {spec.hub_id} are not on this machine{said}. {why} download them "
        f"(hf download {spec.hub_id} --local-dir FOLDER) and set weights = \"FOLDER\" under [models.{spec.name}] in "
        f"a models file (--models-file), or pass --weights {spec.name}=FOLDER."
    )


def check_weights(specs: list[ModelSpec], registry: Mapping[str, ModelSpec] | None = None) -> None:
    """With ``HF_HUB_OFFLINE`` set, fail before the run if a hub model (or a cascade's stage) is not in the cache.

    Without it nothing is checked here: ``from_pretrained`` downloads what is missing.
    """
    if not hub_offline():
        return
    from huggingface_hub import try_to_load_from_cache

    registry = registry if registry is not None else builtin_models()
    problems = []
    for spec in specs:
        for stage in cascade(registry, spec) if spec.kind == "diffusers" else []:
            if stage.weights or stage.tiny or not stage.hub_id:
                continue
            if not isinstance(try_to_load_from_cache(stage.hub_id, "model_index.json"), str):
                problems.append(missing_weights_message(stage))
    if problems:
        raise MissingWeights("\n".join(problems))


def _variant(spec: ModelSpec, source: str) -> str | None:
    """The weights variant to ask for: the spec's for the hub; for a local folder only if its files have it."""
    if not spec.variant:
        return None
    folder = Path(source)
    if not folder.is_dir():
        return spec.variant
    return spec.variant if any(folder.glob(f"*/*.{spec.variant}.safetensors")) else None


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


@contextmanager
def memory_errors(spec: ModelSpec, device: str, doing: str) -> Iterator[None]:
    """Turn running out of device memory into :class:`OutOfMemory` with the flags that help."""
    import torch

    try:
        yield
    except torch.OutOfMemoryError as error:
        first = str(error).splitlines()[0] if str(error) else "out of memory"
        raise OutOfMemory(
            f"model {spec.name} ran out of memory on {device} {doing} ({first}). Make it fit with {MEMORY_FLAGS}, "
            f"or the same as fields under [models.{spec.name}] in a models file (offload = \"model\", "
            "vae_tiling = true, ...)."
        ) from None


def place(pipeline, spec: ModelSpec, device: str):
    """Put ``pipeline`` on ``device`` the spec's way: CPU offload or ``.to``, VAE tiling/slicing, torch.compile."""
    if spec.offload:
        if not str(device).startswith("cuda"):
            raise RegistryError(f"model {spec.name}: offload = {spec.offload!r} moves weights between the CPU and a "
                                f"GPU, but the device is {device}. Drop --offload, or run on a GPU (--device cuda).")
        method = {"model": "enable_model_cpu_offload", "sequential": "enable_sequential_cpu_offload"}[spec.offload]
        getattr(pipeline, method)(device=device)
    else:
        pipeline = pipeline.to(device)
    vae = getattr(pipeline, "vae", None)
    for wanted, method in ((spec.vae_tiling, "enable_tiling"), (spec.vae_slicing, "enable_slicing")):
        if wanted and hasattr(vae, method):  # a pixel-space pipeline (DeepFloyd IF stages I and II) has no VAE
            getattr(vae, method)()
    if spec.compile:
        for name in ("unet", "transformer"):
            denoiser = getattr(pipeline, name, None)
            if denoiser is not None:
                denoiser.compile()  # torch.nn.Module.compile: in place, so offload hooks and saving still work
    return pipeline


# Classes that released model_index.json files name as top-level diffusers classes but diffusers 0.42 only keeps in
# a deprecated module (Stable Cascade's "vqgan": ["diffusers", "PaellaVQModel"]): from_pretrained looks them up with
# getattr(diffusers, name) and fails, for the real repository as for its tiny stand-in, even when the component is
# passed. {pipeline class: [(module, class)]}; :func:`expose_relocated_classes` makes the name resolve.
RELOCATED_CLASSES = {
    name: [("diffusers.pipelines.deprecated.wuerstchen.modeling_paella_vq_model", "PaellaVQModel")]
    for name in ("StableCascadeCombinedPipeline", "StableCascadeDecoderPipeline")
}


def expose_relocated_classes(pipeline_class: str) -> None:
    """Make ``diffusers.<name>`` resolve for the relocated classes ``pipeline_class``'s repositories name."""
    import diffusers

    for module, name in RELOCATED_CLASSES.get(pipeline_class, []):
        if getattr(diffusers, name, None) is None:
            setattr(diffusers, name, load(f"{module}:{name}"))


def load_pipeline(spec: ModelSpec, *, cache_dir: str | Path | None = None, device: str = "cpu",
                  dtype: str | None = None, progress: bool = False):
    """``<spec.pipeline_class>.from_pretrained(...)`` placed on ``device``, with the spec's scheduler swapped in."""
    import diffusers

    pipeline_class = getattr(diffusers, spec.pipeline_class, None)
    if pipeline_class is None or not hasattr(pipeline_class, "from_pretrained"):
        raise RegistryError(
            f"model {spec.name}: diffusers {diffusers.__version__} has no pipeline class {spec.pipeline_class!r}. "
            "Use a class name from diffusers (e.g. StableDiffusionXLPipeline) in the models file."
        )
    source = weights_source(spec, cache_dir)
    kwargs: dict[str, Any] = {"dtype": resolve_dtype(spec, device, dtype)}
    if variant := _variant(spec, source):
        kwargs["variant"] = variant
    if spec.reuse_prompt_embeds:
        kwargs["text_encoder"] = None  # the cascade passes the first stage's prompt embeddings
    if source == spec.hub_id and hub_offline():
        kwargs["local_files_only"] = True
    try:
        with loading_bars(progress):
            expose_relocated_classes(spec.pipeline_class)
            pipeline = pipeline_class.from_pretrained(source, **kwargs)
    except OSError as error:  # diffusers' EnvironmentError and every huggingface_hub download error
        raise MissingWeights(missing_weights_message(spec, error)) from None
    if spec.scheduler:
        scheduler_class = getattr(diffusers, spec.scheduler, None)
        if scheduler_class is None:
            raise RegistryError(f"model {spec.name}: diffusers has no scheduler {spec.scheduler!r}.")
        pipeline.scheduler = scheduler_class.from_config(pipeline.scheduler.config)
    pipeline.set_progress_bar_config(disable=True)
    with memory_errors(spec, device, "while loading"):
        return place(pipeline, spec, device)


def call_arguments(spec: ModelSpec, pipeline_class: type, prompts: list[str], generators: list, *,
                   negative_prompt: str | list[str] = "", image=None, output_type: str = "pil") -> dict[str, Any]:
    """The keyword arguments a pipeline of ``spec`` is called with (the registry's settings plus the batch).

    ``negative_prompt`` is one text for the whole batch or one per prompt (the partner prompts of Commonsense-T2I).
    A super-resolution stage gets the previous stage's ``image``; one whose pipeline takes no size (the x4 upscaler:
    four times its input) gets no height and width.
    """
    width, height = spec.resolution
    kwargs: dict[str, Any] = {
        "prompt": [spec.prompt_template.format(prompt=p) for p in prompts], "num_inference_steps": spec.steps,
        "generator": generators, "output_type": output_type,
    }
    if not spec.takes_image or "height" in inspect.signature(pipeline_class.__call__).parameters:
        kwargs.update(width=width, height=height)
    if image is not None:
        kwargs["image"] = image
    if spec.guidance is not None:
        kwargs["guidance_scale"] = spec.guidance
    negatives = per_prompt(negative_prompt, len(prompts))
    given = any(negatives) and spec.negative_prompt
    if given:
        kwargs["negative_prompt"] = negatives
    # a negative prompt among the model's call_kwargs (Qwen-Image's " ") is its default: the run's replaces it
    kwargs.update({k: v for k, v in spec.call_kwargs.items() if not (k == "negative_prompt" and given)})
    return kwargs


def per_prompt(negative_prompt: str | list[str] | None, count: int) -> list[str]:
    """One negative prompt per prompt: a single text repeated, or the list as given (checked for its length)."""
    if isinstance(negative_prompt, list):
        if len(negative_prompt) != count:
            raise ValueError(f"{len(negative_prompt)} negative prompts for {count} prompts; give one per prompt.")
        return [text or "" for text in negative_prompt]
    return [negative_prompt or ""] * count


def check_call_kwargs(spec: ModelSpec, pipeline_class: type) -> None:
    """Refuse ``call_kwargs`` that the pipeline's ``__call__`` does not name: most pipelines take ``**kwargs`` and
    would silently ignore a misspelt one."""
    parameters = inspect.signature(pipeline_class.__call__).parameters
    named = [name for name, p in parameters.items()
             if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and name != "self"]
    unknown = sorted(set(spec.call_kwargs) - set(named))
    if unknown:
        raise RegistryError(
            f"model {spec.name}: call_kwargs {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not "
            f"argument(s) of {pipeline_class.__name__} (it would ignore them). Fix call_kwargs in the models file; "
            f"its arguments are {', '.join(named)}."
        )


def _stage_params(spec: ModelSpec, pipeline, negative_prompt: str) -> dict[str, Any]:
    width, height = spec.resolution
    return {
        "pipeline_class": spec.pipeline_class, "weights": spec.weights or spec.tiny or spec.hub_id,
        "steps": spec.steps, "guidance": spec.guidance, "width": width, "height": height,
        "dtype": str(pipeline.dtype).removeprefix("torch."), "scheduler": type(pipeline.scheduler).__name__,
        "negative_prompt": negative_prompt if spec.negative_prompt else "", "prompt_template": spec.prompt_template,
        "call_kwargs": dict(spec.call_kwargs), "offload": spec.offload, "vae_tiling": spec.vae_tiling,
        "vae_slicing": spec.vae_slicing, "compile": spec.compile,
    }


def _handover(images, pipeline, previous: ModelSpec | None = None, previous_pipeline=None):
    """A stage's ``pt`` output ([-1, 1], as DeepFloyd IF's stages pass it on) in the range the next stage expects:
    pipelines with a ``VaeImageProcessor`` (the x4 upscaler) take [0, 1]. Latents (a stage called with
    ``output_type="latent"``: the SDXL base handing over to its refiner) pass as they are, and so does the ``pt``
    output of a pipeline with a ``VaeImageProcessor`` (already [0, 1]: the SDXL base's image to the refiner)."""
    if images is None or (previous is not None and previous.call_kwargs.get("output_type") == "latent"):
        return images
    from diffusers.image_processor import VaeImageProcessor

    if isinstance(getattr(previous_pipeline, "image_processor", None), VaeImageProcessor):
        return images
    if isinstance(getattr(pipeline, "image_processor", None), VaeImageProcessor):
        return (images / 2 + 0.5).clamp(0, 1)
    return images


class DiffusersGenerator:
    """A loaded diffusers pipeline called with the registry's settings; with ``stages``, a cascade.

    ``stages``: (spec, pipeline) of each super-resolution stage after ``pipeline``, in order.
    """

    def __init__(self, spec: ModelSpec, pipeline, *, device: str = "cpu", negative_prompt: str = "",
                 stages: list[tuple[ModelSpec, Any]] | tuple = ()):
        import diffusers

        self.spec = spec
        self.name = spec.name
        self.pipeline = pipeline
        self.stages = [(spec, pipeline), *stages]
        self.device = str(device)
        self.negative_prompt = negative_prompt
        self.nsfw: list[bool] | None = None  # the last call's safety checker flags (generate)
        self.params = {**_stage_params(spec, pipeline, negative_prompt), "device": self.device,
                       "diffusers": diffusers.__version__}
        if stages:
            width, height = stages[-1][0].resolution
            self.params.update(width=width, height=height,
                               stages=[_stage_params(s, p, negative_prompt) for s, p in self.stages])

    def _shared_embeddings(self, prompts: list[str], negatives: list[str]) -> dict[str, Any]:
        """The first stage's prompt embeddings, when a later stage has no text encoder of its own (DeepFloyd IF)."""
        if not any(spec.reuse_prompt_embeds for spec, _ in self.stages[1:]):
            return {}
        spec = self.spec
        embeds, negative_embeds = self.pipeline.encode_prompt(
            [spec.prompt_template.format(prompt=p) for p in prompts], do_classifier_free_guidance=True,
            negative_prompt=negatives if spec.negative_prompt and any(negatives) else None,
        )
        return {"prompt_embeds": embeds, "negative_prompt_embeds": negative_embeds}

    def generate(self, prompts: list[str], seeds: list[int],
                 negative_prompts: list[str] | None = None) -> list[Image.Image]:
        import torch

        if len(prompts) != len(seeds):
            raise ValueError(f"generate needs one seed per prompt, got {len(prompts)} prompts and {len(seeds)} seeds.")
        negatives = per_prompt(negative_prompts if negative_prompts is not None else self.negative_prompt,
                               len(prompts))
        generator_device = "cpu" if self.device.startswith("mps") else self.device
        generators = [torch.Generator(device=generator_device).manual_seed(int(s)) for s in seeds]
        with memory_errors(self.spec, self.device, f"making {len(prompts)} images in one call"), torch.inference_mode():
            embeddings = self._shared_embeddings(prompts, negatives)
            images: Any = None  # a stage's output: tensors handed to the next stage, the last one's PIL images
            for index, (spec, pipeline) in enumerate(self.stages):
                last = index == len(self.stages) - 1
                previous, previous_pipeline = self.stages[index - 1] if index else (None, None)
                kwargs = call_arguments(spec, type(pipeline), prompts, generators, negative_prompt=negatives,
                                        image=_handover(images, pipeline, previous, previous_pipeline),
                                        output_type="pil" if last else "pt")
                if embeddings and (index == 0 or spec.reuse_prompt_embeds):
                    kwargs.pop("prompt")
                    kwargs.pop("negative_prompt", None)
                    kwargs.update(embeddings)
                output = pipeline(**kwargs)
                images = output.images
        # what the pipeline's own safety checker said of each image (None: the model ships none)
        self.nsfw = getattr(output, "nsfw_content_detected", None)
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

    def generate(self, prompts: list[str], seeds: list[int],
                 negative_prompts: list[str] | None = None) -> list[Image.Image]:
        return self.renderer.generate(prompts, seeds)  # the painters take no negative prompt


def make_generator(spec: ModelSpec, *, registry: Mapping[str, ModelSpec] | None = None,
                   cache_dir: str | Path | None = None, device: str = "cpu", dtype: str | None = None,
                   negative_prompt: str = "", progress: bool = False, db=None, media=None, api_config=None,
                   env: Mapping[str, str] | None = None) -> Generator:
    """The generator for ``spec``: a procedural renderer, an image API (kind ``api``: it stores its images in
    ``media`` and records them in ``db`` as they arrive, asking the endpoint of ``api_config``, an
    :class:`generators.api_images.ImageAPIConfig`), or its diffusers pipeline(s) loaded on ``device``.

    ``registry`` (default: the built-ins) supplies a cascade's stages by name.
    """
    if spec.kind == "procedural":
        return ProceduralGenerator(spec)
    if spec.kind == "api":
        from generators.api_images import ImageAPIConfig, ImageAPIGenerator

        if db is None or media is None:
            raise RegistryError(f"model {spec.name} is an API model: it needs the database and the media folder to "
                                "record each image as it arrives (make_generator(..., db=db, media=media)).")
        return ImageAPIGenerator(spec, api_config or ImageAPIConfig(), db=db, media=media, env=env)
    registry = registry if registry is not None else builtin_models()
    if spec.takes_image:
        users = sorted(name for name, other in registry.items() if spec.name in other.stages)
        raise RegistryError(f"model {spec.name} is a super-resolution stage and needs another model's images; run "
                            f"a cascade that lists it in stages ({', '.join(users) or 'none in the registry'}).")
    first, *later = cascade(registry, spec)
    import diffusers

    for stage in (first, *later):  # before loading gigabytes
        if hasattr(diffusers, stage.pipeline_class):
            check_call_kwargs(stage, getattr(diffusers, stage.pipeline_class))
    load: dict[str, Any] = dict(cache_dir=cache_dir, device=device, dtype=dtype, progress=progress)
    pipeline = load_pipeline(first, **load)
    stages = [(stage, load_pipeline(stage, **load)) for stage in later]
    return DiffusersGenerator(spec, pipeline, device=device, negative_prompt=negative_prompt, stages=stages)

