"""Loading real weights and fitting them on a GPU, with fakes where weights or a GPU would be needed.

Missing weights are a clear error naming the model, the hub id and the ``weights`` override, not diffusers' OSError
stack; the GPU memory options reach diffusers; running out of memory names the flags; every built-in's call
arguments are arguments of its pipeline class; the settings the model cards leave to the pipeline are its defaults.
"""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest
from PIL import Image

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.pipelines import MissingWeights, OutOfMemory, call_arguments, check_call_kwargs, make_generator, place
from generators.registry import ModelSpec, RegistryError, builtin_models, cascade, load_registry, select
from generators.runner import RunError, run


@pytest.fixture
def suite_db(tmp_path):
    db = connect(tmp_path / "a.db")
    add_prompts(db, [PromptSpec("s", f"k{i}", f"a cat number {i}") for i in range(3)])
    db.close()
    return ["--db", str(tmp_path / "a.db"), "--media-dir", str(tmp_path / "m"), "--cache-dir", str(tmp_path / "c")]


class Recorder:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def __getattr__(self, method):
        return lambda *args, **kwargs: self.log.append((f"{self.name}.{method}", kwargs))


class FakePipeline:
    """Stands in for a loaded diffusers pipeline: records what is done to it, makes grey images."""

    def __init__(self, fail_with: BaseException | None = None):
        import torch

        self.log: list[tuple[str, dict[str, object]]] = []
        self.fail_with, self.dtype = fail_with, torch.float32
        self.scheduler = type("EulerDiscreteScheduler", (), {"config": {}})()
        self.vae, self.unet = Recorder(self.log, "vae"), Recorder(self.log, "unet")

    def set_progress_bar_config(self, **kwargs):
        pass

    def to(self, device):
        self.log.append(("to", {"device": device}))
        return self

    def enable_model_cpu_offload(self, device=None):
        self.log.append(("enable_model_cpu_offload", {"device": device}))

    def enable_sequential_cpu_offload(self, device=None):
        self.log.append(("enable_sequential_cpu_offload", {"device": device}))

    def __call__(self, **kwargs):
        self.log.append(("call", kwargs))
        if self.fail_with is not None:
            raise self.fail_with
        images = [Image.new("RGB", (kwargs["width"], kwargs["height"]), (128, 128, 128)) for _ in kwargs["prompt"]]
        return type("Output", (), {"images": images})()


class FakeLoader:
    """A from_pretrained that records its arguments and returns a FakePipeline (failing with ``fail_with``)."""

    def __init__(self):
        self.made, self.fail_with = [], None

    def __call__(self, source, **kwargs):
        self.made.append((source, kwargs, FakePipeline(self.fail_with)))
        return self.made[-1][2]


@pytest.fixture
def fake_sdxl(monkeypatch) -> FakeLoader:
    import diffusers

    loader = FakeLoader()
    monkeypatch.setattr(diffusers.StableDiffusionXLPipeline, "from_pretrained", staticmethod(loader))
    return loader


# --- missing weights --------------------------------------------------------------------------------------------


def test_run_without_weights_names_the_model_the_hub_id_and_the_override(suite_db, tmp_path, monkeypatch, capsys):
    from generators.commands import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main([*suite_db, "run", "--models", "sdxl", "--suite", "s", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "sdxl" in err and "stabilityai/stable-diffusion-xl-base-1.0" in err and "weights" in err
    assert "HF_HUB_OFFLINE" in err and "Traceback" not in err
    assert "[models.sdxl]" in err and "--weights sdxl=FOLDER" in err and "hf download" in err
    # before anything runs, every missing model of the run is named, a cascade's stages included
    assert main([*suite_db, "run", "--models", "demo-sketch,deepfloyd-if,flux-dev", "--suite", "s", "--quiet"]) == 2
    err = capsys.readouterr().err
    for hub_id in ("DeepFloyd/IF-I-XL-v1.0", "DeepFloyd/IF-II-L-v1.0", "stabilityai/stable-diffusion-x4-upscaler",
                   "black-forest-labs/FLUX.1-dev"):
        assert hub_id in err
    db = connect(tmp_path / "a.db")
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 0  # demo-sketch did not run either
    db.close()


def test_a_failed_download_says_how_to_get_the_weights(fake_sdxl, monkeypatch):
    import diffusers

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)

    def refuse(source, **kwargs):
        raise OSError("401 Client Error: gated repository")

    monkeypatch.setattr(diffusers.StableDiffusion3Pipeline, "from_pretrained", staticmethod(refuse))
    with pytest.raises(MissingWeights) as error:
        make_generator(builtin_models()["sd3"])
    message = str(error.value)
    assert message.startswith("model sd3: the weights of stabilityai/stable-diffusion-3-medium-diffusers are not")
    assert "hf auth login" in message and "401" in message and "[models.sd3]" in message
    make_generator(builtin_models()["sdxl"])  # online: the hub id, the fp16 variant, downloads allowed
    source, kwargs, _ = fake_sdxl.made[-1]
    assert source == "stabilityai/stable-diffusion-xl-base-1.0" and kwargs["variant"] == "fp16"
    assert "local_files_only" not in kwargs
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    make_generator(builtin_models()["sdxl"])
    assert fake_sdxl.made[-1][1]["local_files_only"] is True  # offline: the cache only, no retried downloads


def test_a_local_folder_that_is_not_a_pipeline_is_named(tmp_path):
    spec = ModelSpec(name="local", pipeline_class="StableDiffusionPipeline", weights=str(tmp_path))
    with pytest.raises(MissingWeights, match=rf"model local: {tmp_path} could not be loaded as a "
                                             r"StableDiffusionPipeline .*save_pretrained layout.*\[models.local\]"):
        make_generator(spec)


def test_a_variant_is_asked_for_only_where_the_folder_has_it(tmp_path):
    from generators.pipelines import _variant

    spec = builtin_models()["sdxl"]
    assert _variant(spec, spec.hub_id) == "fp16"
    (tmp_path / "unet").mkdir()
    (tmp_path / "unet" / "diffusion_pytorch_model.safetensors").write_bytes(b"")
    assert _variant(spec, str(tmp_path)) is None  # a folder saved without the variant
    (tmp_path / "unet" / "diffusion_pytorch_model.fp16.safetensors").write_bytes(b"")
    assert _variant(spec, str(tmp_path)) == "fp16"


# --- GPU memory options -----------------------------------------------------------------------------------------


def test_memory_options_reach_diffusers():
    spec = builtin_models()["flux-dev"]
    pipeline = place(FakePipeline(), spec, "cuda")
    assert pipeline.log == [("to", {"device": "cuda"})]
    pipeline = place(FakePipeline(), dataclasses.replace(spec, offload="model", vae_tiling=True, vae_slicing=True,
                                                          compile=True), "cuda:1")
    assert pipeline.log == [("enable_model_cpu_offload", {"device": "cuda:1"}), ("vae.enable_tiling", {}),
                            ("vae.enable_slicing", {}), ("unet.compile", {})]
    pipeline = place(FakePipeline(), dataclasses.replace(spec, offload="sequential"), "cuda")
    assert pipeline.log == [("enable_sequential_cpu_offload", {"device": "cuda"})]
    pixels = FakePipeline()
    del pixels.vae  # DeepFloyd IF's first stages have no VAE: tiling is skipped there
    place(pixels, dataclasses.replace(spec, vae_tiling=True), "cuda")
    with pytest.raises(RegistryError, match="offload.*device is cpu. Drop --offload"):
        place(FakePipeline(), dataclasses.replace(spec, offload="model"), "cpu")
    with pytest.raises(RegistryError, match='offload must be "model" or "sequential"'):
        dataclasses.replace(spec, offload="disk")


def test_run_flags_set_the_memory_options_of_every_model(suite_db, fake_sdxl, capsys):
    from generators.commands import main

    assert main([*suite_db, "run", "--models", "sdxl", "--suite", "s", "--quiet", "--device", "cpu",
                 "--vae-tiling", "--vae-slicing", "--compile", "--batch-size", "2"]) == 0
    assert "3 images made" in capsys.readouterr().out
    log = fake_sdxl.made[0][2].log
    assert [entry[0] for entry in log[:4]] == ["to", "vae.enable_tiling", "vae.enable_slicing", "unet.compile"]
    assert [len(kwargs["prompt"]) for name, kwargs in log if name == "call"] == [2, 1]
    db = connect(suite_db[1])
    params = json.loads(db.execute("SELECT params FROM images LIMIT 1").fetchone()[0])
    db.close()
    assert (params["vae_tiling"], params["compile"], params["offload"]) == (True, True, "")
    assert main([*suite_db, "run", "--models", "sdxl", "--suite", "s", "--quiet", "--device", "cpu",
                 "--offload", "model", "--images-per-prompt", "2"]) == 2
    assert "Drop --offload" in capsys.readouterr().err


def test_running_out_of_gpu_memory_names_the_flags(suite_db, fake_sdxl, capsys):
    import torch

    from generators.commands import main

    fake_sdxl.fail_with = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
    assert main([*suite_db, "run", "--models", "sdxl", "--suite", "s", "--quiet", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: model sdxl ran out of memory on cpu making 3 images in one call (CUDA out of")
    for flag in ("--batch-size 1", "--offload model", "--offload sequential", "--vae-tiling", "--vae-slicing"):
        assert flag in err
    assert 'offload = "model"' in err and "Traceback" not in err
    with pytest.raises(OutOfMemory):
        make_generator(builtin_models()["sdxl"]).generate(["a"], [0])


# --- settings and call arguments ----------------------------------------------------------------------------------

# the settings each model card leaves to the pipeline (it calls pipe(prompt) without them)
CARD_LEAVES_TO_PIPELINE = {
    "sd-v1-5": ("steps", "guidance"), "openjourney": ("steps", "guidance"), "sdxl": ("steps", "guidance"),
    "pixart-sigma": ("steps", "guidance"), "pixart-sigma-512": ("steps", "guidance"),
    "hunyuan-dit": ("steps", "guidance"), "sd-2-1": ("steps", "guidance"),
    "deepfloyd-if": ("steps", "guidance"), "deepfloyd-if-i": ("steps", "guidance"),
    "deepfloyd-if-ii": ("steps", "guidance"), "deepfloyd-if-iii": ("steps", "guidance"),
    "kandinsky-3": ("guidance",), "playground-v2-aesthetic": ("steps",), "openjourney-v4": ("steps", "guidance"),
    "sd-2": ("steps", "guidance"), "sdxl-partner-negative": ("steps", "guidance"),
}


def test_settings_follow_the_model_cards_and_the_pipeline_defaults_they_rely_on():
    import diffusers

    registry = builtin_models()
    for name, spec in registry.items():
        if spec.kind == "api":  # no model card: the API reference and the price list
            assert "platform.openai.com/docs/api-reference/images" in spec.description and spec.price_usd
            continue
        assert f"huggingface.co/{spec.hub_id}" in spec.description or "huggingface.co/DeepFloyd" in spec.description
        parameters = inspect.signature(getattr(diffusers, spec.pipeline_class).__call__).parameters
        for setting in CARD_LEAVES_TO_PIPELINE.get(name, ()):
            argument = {"steps": "num_inference_steps", "guidance": "guidance_scale"}[setting]
            assert getattr(spec, setting) == parameters[argument].default, (name, setting)
    assert {name: spec.resolution for name, spec in registry.items() if spec.resolution != (1024, 1024)} == {
        "sd-v1-5": (512, 512), "sdxl-turbo": (512, 512), "openjourney": (512, 512), "deepfloyd-if": (64, 64),
        "deepfloyd-if-i": (64, 64), "deepfloyd-if-ii": (256, 256), "sd-2-1": (768, 768), "sd-2": (768, 768),
        "openjourney-v4": (512, 512), "lcm-dreamshaper-v7": (768, 768), "pixart-sigma-512": (512, 512),
        "qwen-image": (1328, 1328)}
    assert {name for name, spec in registry.items() if not spec.negative_prompt} == {
        "sdxl-turbo", "flux-dev", "flux-schnell", "lcm-dreamshaper-v7", "dall-e-3", "dall-e-3-no-revision",
        "gpt-image-1"}
    assert {name for name, spec in registry.items() if spec.negative_prompt_from == "partner"} == {
        "sdxl-partner-negative", "sd3-partner-negative"}
    assert {name: spec.dtype for name, spec in registry.items() if spec.dtype != "float16" and spec.kind != "api"} == {
        "flux-dev": "bfloat16", "flux-schnell": "bfloat16", "stable-cascade": "bfloat16",
        "lcm-dreamshaper-v7": "float32", "qwen-image": "bfloat16"}
    assert registry["stable-cascade"].guidance is None  # prior and decoder guidance are their own arguments
    assert registry["flux-dev"].call_kwargs == {"max_sequence_length": 512}
    assert registry["deepfloyd-if-iii"].call_kwargs == {"noise_level": 100}
    assert [s.name for s in cascade(registry, registry["deepfloyd-if"])] == [
        "deepfloyd-if", "deepfloyd-if-ii", "deepfloyd-if-iii"]


def test_every_builtin_call_is_accepted_by_its_pipeline_class():
    import diffusers

    registry = builtin_models()
    for spec in (spec for spec in registry.values() if spec.kind == "diffusers"):
        pipeline_class = getattr(diffusers, spec.pipeline_class)
        parameters = inspect.signature(pipeline_class.__call__).parameters
        named = {name for name, p in parameters.items() if p.kind is not p.VAR_KEYWORD}
        kwargs = call_arguments(spec, pipeline_class, ["a cat"], [None], negative_prompt="blurry",
                                image=object() if spec.takes_image else None, output_type="pt")
        assert set(kwargs) <= named, (spec.name, set(kwargs) - named)
        if spec.reuse_prompt_embeds or spec.stages:
            assert {"prompt_embeds", "negative_prompt_embeds"} <= named
        assert ("negative_prompt" in kwargs) == spec.negative_prompt
        check_call_kwargs(spec, pipeline_class)
    assert "height" not in call_arguments(registry["deepfloyd-if-iii"], diffusers.StableDiffusionUpscalePipeline,
                                          ["a"], [None], image=object())  # the x4 upscaler's size is its input's
    with pytest.raises(RegistryError, match="call_kwargs max_sequence_lenght is not .*StableDiffusion3Pipeline"):
        check_call_kwargs(dataclasses.replace(registry["sd3"], call_kwargs={"max_sequence_lenght": 77}),
                          diffusers.StableDiffusion3Pipeline)


# --- registry: cascades and stages --------------------------------------------------------------------------------


def test_cascade_stages_are_checked_and_cannot_run_alone(tmp_path, capsys):
    path = tmp_path / "models.toml"
    path.write_text('[models.deepfloyd-if]\nstages = ["deepfloyd-if-ii", "sdxl"]\n')
    with pytest.raises(RegistryError, match="stage 'sdxl' is not a super-resolution stage.*deepfloyd-if-ii"):
        load_registry(path)
    path.write_text('[models.deepfloyd-if-ii]\nweights = "/data/IF-II-L"\n')
    registry = load_registry(path)
    assert cascade(registry, registry["deepfloyd-if"])[1].weights == "/data/IF-II-L"
    with pytest.raises(RegistryError, match="deepfloyd-if-iii: super-resolution stage.*cascade.*deepfloyd-if"):
        select(registry, ["sdxl", "deepfloyd-if-iii"])
    with pytest.raises(RegistryError, match="model deepfloyd-if-ii is a super-resolution stage"):
        make_generator(registry["deepfloyd-if-ii"], registry=registry)
    from generators.commands import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "64x64->1024x1024" in out and "stages: deepfloyd-if-ii, deepfloyd-if-iii" in out
    assert "(a cascade stage)" in out


def test_a_model_whose_images_were_made_differently_is_not_resumed(tmp_path):
    class Grey:
        name, params = "grey", {}

        def generate(self, prompts, seeds):
            return [Image.new("RGB", (64, 64), (seed % 256, 9, 9)) for seed in seeds]

    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    ids = add_prompts(db, [PromptSpec("s", "k", "a cat")]).ids
    stage_1_alone = dataclasses.replace(builtin_models()["deepfloyd-if"], stages=())  # the old registry entry
    run(db, media, [stage_1_alone], ids, lambda spec: Grey())
    more = add_prompts(db, [PromptSpec("s", "k2", "a dog")]).ids
    with pytest.raises(RunError, match=r"1 images of deepfloyd-if made at 64x64; the registry now makes it at "
                                       r"64x64 with stages deepfloyd-if-ii, deepfloyd-if-iii.*another name"):
        run(db, media, [builtin_models()["deepfloyd-if"]], ids + more, lambda spec: Grey())
    db.close()
