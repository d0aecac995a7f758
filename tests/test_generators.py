"""Generators: registry, tiny offline pipelines, procedural renderers, the runner (resume, sharding) and the demo."""

from __future__ import annotations

import dataclasses
import gc
import json
import weakref
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.demo import DEMO_MODELS, demo_models, generate_demo_images
from generators.pipelines import Generator, make_generator
from generators.procedural import PaletteRenderer, SketchRenderer
from generators.registry import ModelSpec, RegistryError, builtin_models, load_registry, select
from generators.runner import RunError, item_seed, plan, run, shard, suite_prompt_ids

TAXONOMY_MODELS = {"sd-v1-5", "sdxl", "sdxl-turbo", "kandinsky-3", "playground-v2-aesthetic", "openjourney",
                   "deepfloyd-if", "sd3", "pixart-sigma", "hunyuan-dit", "flux-dev"}


@pytest.fixture(scope="session")
def tiny_cache(artefact_cache):
    """The tiny pipelines, in the test artefact cache (built once per version of generators/tiny.py)."""
    from generators.tiny import ensure_tiny

    for name in ("tiny-sd", "tiny-pixart-sigma"):
        ensure_tiny(artefact_cache, name)
    return artefact_cache


@pytest.fixture
def arena(tmp_path):
    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    ids = add_prompts(db, [
        PromptSpec("taxonomy", "coin.n.01", "An image of coin", variant="without_definition"),
        PromptSpec("taxonomy", "sofa.n.01", "An image of sofa", variant="without_definition"),
        PromptSpec("commonsense", "bulb", "A lightbulb without electricity", role="p1"),
    ]).ids
    yield db, media, ids
    db.close()


class Recording:
    """A stand-in generator that records its calls and can fail on a chosen call."""

    def __init__(self, name, fail_on_call=None):
        self.name, self.params, self.calls, self.fail_on_call = name, {"kind": "recording"}, [], fail_on_call

    def generate(self, prompts, seeds):
        self.calls.append(list(zip(prompts, seeds)))
        if self.fail_on_call == len(self.calls):
            raise RuntimeError("simulated crash")
        return [Image.new("RGB", (16, 16), (seed % 256, len(prompt), 7)) for prompt, seed in zip(prompts, seeds)]


def _spec(name):
    return ModelSpec(name=name, pipeline_class="palette", kind="procedural", resolution=(64, 64))


# --- registry -------------------------------------------------------------------------------------------------


def test_registry_has_both_benchmarks_models_with_recommended_settings():
    registry = builtin_models()
    assert TAXONOMY_MODELS <= {name for name, spec in registry.items() if "taxonomy" in spec.benchmarks}
    assert {"playground-v2.5", "sd-2-1", "flux-schnell", "flux-dev", "sdxl", "sd3", "openjourney-v4",
            "lcm-dreamshaper-v7", "sdxl-partner-negative", "sd3-partner-negative", "dall-e-3",
            "dall-e-3-no-revision"} == {name for name, spec in registry.items() if "commonsense" in spec.benchmarks}
    assert {"sd-2", "dall-e-3"} == {name for name, spec in registry.items() if "consistency" in spec.benchmarks}
    sd3 = registry["sd3"]
    assert (sd3.pipeline_class, sd3.steps, sd3.guidance) == ("StableDiffusion3Pipeline", 28, 7.0)
    assert registry["sdxl-turbo"].guidance == 0.0 and not registry["sdxl-turbo"].negative_prompt
    import diffusers

    for spec in registry.values():  # every class name exists in the pinned diffusers
        assert spec.kind == "api" or hasattr(diffusers, spec.pipeline_class), spec.pipeline_class
        assert not spec.scheduler or hasattr(diffusers, spec.scheduler)


def test_every_registry_pipeline_accepts_the_arguments_the_generator_passes():
    import inspect

    import diffusers

    from generators.pipelines import call_arguments

    specs = [*builtin_models().values(), *demo_models().values()]
    for spec in (spec for spec in specs if spec.kind == "diffusers"):
        pipeline_class = getattr(diffusers, spec.pipeline_class)
        accepted = set(inspect.signature(pipeline_class.__call__).parameters)
        passed = set(call_arguments(spec, pipeline_class, ["a cat"], [None], negative_prompt="blurry",
                                    image=object() if spec.takes_image else None))
        assert passed <= accepted, (spec.name, passed - accepted)


def test_models_file_overrides_weights_and_adds_models(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('[models.sdxl]\nweights = "/data/sdxl"\n\n[models.my-model]\npipeline_class = '
                    '"StableDiffusionPipeline"\nweights = "/data/mine"\nsteps = 20\nresolution = 256\n')
    registry = load_registry(path)
    assert registry["sdxl"].weights == "/data/sdxl" and registry["sdxl"].steps == 50  # the rest kept
    assert registry["my-model"].resolution == (256, 256) and registry["my-model"].source == "/data/mine"
    json_path = tmp_path / "models.json"
    json_path.write_text(json.dumps({"models": {"sd3": {"steps": 10}}}))
    assert load_registry(json_path)["sd3"].steps == 10


def test_registry_errors_name_the_fix(tmp_path):
    path = tmp_path / "models.toml"
    path.write_text('[models.newcomer]\nweights = "/x"\n')
    with pytest.raises(RegistryError, match="needs pipeline_class"):
        load_registry(path)
    path.write_text('[models.sdxl]\nstepz = 3\n')
    with pytest.raises(RegistryError, match="unknown field.*stepz"):
        load_registry(path)
    with pytest.raises(RegistryError, match="unknown model.*nope.*models file"):
        select(builtin_models(), ["sdxl", "nope"])
    with pytest.raises(RegistryError, match="multiples of 8"):
        ModelSpec(name="x", pipeline_class="StableDiffusionPipeline", resolution=(100, 100))


def test_missing_local_weights_folder_says_what_to_do(tmp_path):
    spec = ModelSpec(name="local", pipeline_class="StableDiffusionPipeline", weights=str(tmp_path / "absent"))
    with pytest.raises(RegistryError, match="does not exist.*weights"):
        make_generator(spec, cache_dir=tmp_path)


# --- seeds, plan, shards ----------------------------------------------------------------------------------------


def test_item_seed_is_stable_and_distinct():
    key = ("taxonomy", "Easy", "coin.n.01", "with_definition", "")
    assert item_seed(0, "sdxl", key, 0) == item_seed(0, "sdxl", key, 0)
    seeds = {item_seed(0, m, key, i) for m in ("sdxl", "sd3") for i in range(3)} | {item_seed(1, "sdxl", key, 0)}
    assert len(seeds) == 7 and all(0 <= s < 2**31 for s in seeds)
    assert item_seed(0, "sdxl", key, 2, policy="fixed") == 2
    with pytest.raises(RunError, match="seed policy"):
        item_seed(0, "sdxl", key, 0, policy="random")


def test_shards_partition_the_plan(arena):
    db, _, ids = arena
    items = plan(db, ["a", "b"], ids, images_per_prompt=3)
    assert len(items) == 2 * 3 * 3
    for n in (1, 2, 3, 5):
        parts = [shard(items, r, n) for r in range(n)]
        flat = [item for part in parts for item in part]
        assert sorted(flat, key=repr) == sorted(items, key=repr)
        assert len({(i.model, i.prompt_id, i.idx) for i in flat}) == len(items)


def test_suite_prompt_ids_explains_an_empty_suite(arena):
    db, _, ids = arena
    assert suite_prompt_ids(db, "taxonomy") == ids[:2]
    with pytest.raises(RunError, match="no prompts in suite 'nope'.*commonsense, taxonomy"):
        suite_prompt_ids(db, "nope")


# --- runner -----------------------------------------------------------------------------------------------------


def test_run_resumes_after_a_crash_without_redoing_anything(arena):
    db, media, ids = arena
    crashing = Recording("m", fail_on_call=2)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run(db, media, [_spec("m")], ids, lambda spec: crashing, images_per_prompt=2, batch_size=4)
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 4  # the first batch was committed
    first = {(p, s) for call in crashing.calls[:1] for p, s in call}
    resumed = Recording("m")
    report = run(db, media, [_spec("m")], ids, lambda spec: resumed, images_per_prompt=2, batch_size=4)
    assert report.made == 2 and report.existing == 4
    assert not first & {(p, s) for call in resumed.calls for p, s in call}
    never = Recording("m")
    assert run(db, media, [_spec("m")], ids, lambda spec: never, images_per_prompt=2).made == 0
    assert never.calls == []


def test_run_records_params_and_files_before_rows(arena):
    db, media, ids = arena
    run(db, media, [_spec("m")], ids, lambda spec: Recording("m"), seed=5)
    rows = list(db.query("SELECT * FROM images ORDER BY prompt_id"))
    assert len(rows) == 3
    for row in rows:
        params = json.loads(row["params"])
        assert params["seed"] == row["seed"] and params["base_seed"] == 5 and params["kind"] == "recording"
        assert media.path(row["media_hash"], row["media_ext"]).exists()


class Component:
    """A stand-in for a pipeline's torch module; with ``cycle`` it refers to itself, as a reference cycle would keep a
    real module alive after its generator is dropped."""

    def __init__(self, cycle: bool):
        self.me = self if cycle else None


class HoldingComponents(Recording):
    """A generator holding one pipeline with a module, a scheduler name and no tokenizer, as DiffusersGenerator's
    stages do."""

    def __init__(self, name, cycle: bool):
        super().__init__(name)
        self.stages = [(None, SimpleNamespace(components={"unet": Component(cycle), "scheduler": "ddim",
                                                           "tokenizer": None}))]


@pytest.mark.parametrize("cycle", [False, True], ids=["freed by its generator", "held by a cycle"])
def test_a_model_is_freed_before_the_next_loads_and_a_full_collection_runs_only_for_what_a_cycle_holds(
        arena, monkeypatch, cycle):
    db, media, ids = arena
    collections, loaded = [], []
    collect = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or collect(*args))

    def load(spec):
        assert [ref() for ref in loaded] == [None] * len(loaded)  # every model loaded before is gone
        generator = HoldingComponents(spec.name, cycle)
        loaded.append(weakref.ref(generator.stages[0][1].components["unet"]))
        return generator

    gc.disable()  # only the runner's own collection may break the cycle
    try:
        report = run(db, media, [_spec("m1"), _spec("m2"), _spec("m3")], ids, load)
    finally:
        gc.enable()
    assert report.made == 9 and len(loaded) == 3 and loaded[-1]() is None
    assert len(collections) == (3 if cycle else 0)


# --- procedural renderers and tiny pipelines --------------------------------------------------------------------


def test_procedural_renderers_are_deterministic_and_follow_the_prompt():
    for renderer in (PaletteRenderer(size=96), SketchRenderer(size=96)):
        assert isinstance(renderer, Generator)
        a, a2, b, c = renderer.generate(["a red fox", "a red fox", "a blue whale", "a red fox"], [1, 1, 1, 2])
        assert a.size == (96, 96)
        assert a.tobytes() == a2.tobytes()
        assert a.tobytes() != b.tobytes() and a.tobytes() != c.tobytes()


def test_non_square_specs_record_and_make_width_by_height(tiny_cache):
    """The registry's resolution is (width, height): params and pixels follow it for both kinds of generator."""
    for renderer in ("palette", "sketch"):
        spec = ModelSpec(name=f"wide-{renderer}", pipeline_class=renderer, kind="procedural", resolution=(128, 64),
                         guidance=None, dtype="float32", negative_prompt=False)
        generator = make_generator(spec)
        assert (generator.params["width"], generator.params["height"]) == (128, 64)
        assert generator.generate(["a red fox"], [0])[0].size == (128, 64)
    spec = dataclasses.replace(demo_models()["demo-tiny-unet"], resolution=(64, 32))
    generator = make_generator(spec, cache_dir=tiny_cache)
    assert (generator.params["width"], generator.params["height"]) == (64, 32)
    assert generator.generate(["a cat"], [0])[0].size == (64, 32)
    with pytest.raises(ValueError, match="at least 48 x 48"):
        PaletteRenderer(size=(128, 40))


def test_tiny_clip_tokenizer_matches_open_clip(tiny_cache):
    import open_clip
    from transformers import CLIPTokenizer

    folder = tiny_cache / "tiny" / "tiny-sd" / "tokenizer"
    assert (folder / "vocab.json").exists() and (folder / "merges.txt").exists()
    tokenizer = CLIPTokenizer.from_pretrained(folder)
    text = "An image of cigar lighter (a lighter for cigars or cigarettes)"
    ours = tokenizer(text).input_ids
    reference = open_clip.get_tokenizer("ViT-B-32")([text])[0].tolist()
    assert ours == reference[: len(ours)] and len(tokenizer) == 49408


def test_tiny_pipelines_load_through_from_pretrained(tiny_cache):
    from diffusers import DiffusionPipeline, PixArtSigmaPipeline, StableDiffusionPipeline

    assert type(DiffusionPipeline.from_pretrained(tiny_cache / "tiny" / "tiny-sd")) is StableDiffusionPipeline
    assert type(DiffusionPipeline.from_pretrained(tiny_cache / "tiny" / "tiny-pixart-sigma")) is PixArtSigmaPipeline


def test_tiny_diffusers_generator_is_seeded(tiny_cache):
    for spec in (demo_models()["demo-tiny-unet"], demo_models()["demo-tiny-dit"]):
        generator = make_generator(spec, cache_dir=tiny_cache)
        one, two, again = generator.generate(["a cat", "a dog", "a cat"], [3, 4, 3])
        assert one.size == (64, 64)
        diff = lambda a, b: np.abs(np.asarray(a, dtype=int) - np.asarray(b, dtype=int)).max()  # noqa: E731
        assert diff(one, again) <= 2 < diff(one, two)  # same seed: same image up to batch rounding
        assert generator.params["pipeline_class"] == spec.pipeline_class and generator.params["dtype"] == "float32"


# --- demo and CLI -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_demo_makes_one_image_per_model_and_prompt_once(arena, tiny_cache):
    db, media, ids = arena
    assert len(DEMO_MODELS) == 4 and all(name.startswith("demo-") for name in DEMO_MODELS)
    assert generate_demo_images(db, media, ids, cache_dir=tiny_cache) == 4 * len(ids)
    assert generate_demo_images(db, media, ids, cache_dir=tiny_cache) == 0
    models = {row["name"]: row["source"] for row in db.query("SELECT name, source FROM models")}
    assert models == {name: "demo" for name in DEMO_MODELS}
    sizes = {(row["width"], row["height"]) for row in db.query("SELECT width, height FROM images")}
    assert sizes == {(64, 64), (256, 256)}  # the tiny diffusers pipeline, the three painters


def test_cli_run_and_list(tmp_path, tiny_cache, capsys):
    from generators.commands import main

    db = connect(tmp_path / "a.db")
    add_prompts(db, [PromptSpec("s", f"k{i}", f"thing {i}") for i in range(3)])
    db.close()
    common = ["--db", str(tmp_path / "a.db"), "--media-dir", str(tmp_path / "m"), "--cache-dir", str(tiny_cache)]
    assert main([*common, "run", "--models", "demo-tiny-dit,demo-sketch", "--suite", "s", "--quiet",
                 "--images-per-prompt", "2"]) == 0
    assert "12 images made" in capsys.readouterr().out
    assert main([*common, "run", "--models", "demo-tiny-dit", "--suite", "s", "--quiet",
                 "--images-per-prompt", "2"]) == 0
    assert "0 images made, 6 already there" in capsys.readouterr().out
    assert main([*common, "run", "--models", "nope", "--suite", "s"]) == 2
    assert "unknown model(s) nope" in capsys.readouterr().err
    assert main([*common, "run", "--models", "sdxl", "--suite", "s", "--weights", f"sdxl={tmp_path}/none"]) == 2
    assert "weights folder" in capsys.readouterr().err
    weights = str(tiny_cache / "tiny" / "tiny-pixart-sigma")
    assert main([*common, "run", "--models", "demo-tiny-dit", "--suite", "s", "--quiet", "--weights",
                 f"demo-tiny-dit={weights}", "--images-per-prompt", "3"]) == 0
    assert "3 images made" in capsys.readouterr().out
    assert main(["list"]) == 0
    assert "stabilityai/stable-diffusion-3-medium-diffusers" in capsys.readouterr().out


def test_cli_tiny_builds_a_pipeline_that_from_pretrained_loads(tmp_path, capsys):
    from diffusers import DiffusionPipeline, StableDiffusionPipeline

    from generators.commands import main

    assert main(["--cache-dir", str(tmp_path), "tiny", "--names", "tiny-sd"]) == 0
    folder = tmp_path / "tiny" / "tiny-sd"
    assert f"tiny-sd: {folder}  (StableDiffusionPipeline" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == ["tiny-sd"]  # only the one asked for, no leftovers
    pipeline = DiffusionPipeline.from_pretrained(folder)
    assert type(pipeline) is StableDiffusionPipeline and pipeline.tokenizer.model_max_length == 77
    stamp = (folder / "model_index.json").stat().st_mtime_ns
    assert main(["--cache-dir", str(tmp_path), "tiny", "--names", "tiny-sd"]) == 0  # present: not rebuilt
    assert (folder / "model_index.json").stat().st_mtime_ns == stamp
    assert main(["--cache-dir", str(tmp_path), "tiny", "--names", "tiny-nope"]) == 2
    assert "no tiny recipe 'tiny-nope'" in capsys.readouterr().err


def test_every_cli_command_has_help(capsys):
    from generators.commands import build_parser

    parser = build_parser()
    for command in ("run", "tiny", "list"):
        with pytest.raises(SystemExit):
            parser.parse_args([command, "--help"])
        assert "usage:" in capsys.readouterr().out


def test_ray_deploy_hands_the_named_models_to_ray_serve_and_says_how_to_start_the_app(tmp_path, monkeypatch, capsys):
    """The command's own code up to Ray (the cluster itself is tests/test_open_prompts_serving.py's, with ray)."""
    import generators.ray_serving
    from generators.commands import build_parser, cmd_ray_deploy

    deployed = []
    monkeypatch.setattr(generators.ray_serving, "deploy",
                        lambda specs, address, **options: deployed.append((sorted(specs), address)) or
                        [f"arena-live-{name}" for name in specs])
    args = build_parser().parse_args(["--db", str(tmp_path / "arena.db"), "--media-dir", str(tmp_path / "media"),
                                      "ray-deploy", "--address", "127.0.0.1:6379",
                                      "--models", "demo-painter,demo-scribble"])
    assert cmd_ray_deploy(args) == 0
    assert deployed == [(["demo-painter", "demo-scribble"], "127.0.0.1:6379")]
    out = capsys.readouterr().out
    assert "2 Ray Serve applications running on 127.0.0.1:6379" in out
    assert "ARENA_OPEN_PROMPT_MODELS=demo-painter,demo-scribble" in out
