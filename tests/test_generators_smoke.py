"""`python -m generators smoke` and the DeepFloyd IF cascade: every registry model's code path on tiny stand-ins.

The stand-ins are built once into the test artefact cache (conftest's ``artefact_cache``: keyed by a hash of the
recipes), so a later `make test`, in this clone or another, only loads them.
"""

from __future__ import annotations

import dataclasses
import functools
import re

import pytest

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.pipelines import make_generator
from generators.registry import builtin_models, output_resolution
from generators.runner import run
from generators.smoke import stand_in, stand_ins


@pytest.mark.slow
def test_smoke_runs_every_builtin_model_end_to_end(artefact_cache, capsys):
    from generators.commands import main

    assert main(["--cache-dir", str(artefact_cache), "smoke"]) == 0
    out = capsys.readouterr().out
    print(out)  # the per-model lines, for the log
    lines = {match[1]: match[0] for match in re.findall(r"^(ok   (\S+) .*)$", out, flags=re.M)}
    runnable = {name for name, spec in builtin_models().items() if not spec.takes_image and spec.kind != "api"}
    assert runnable <= set(lines), runnable - set(lines)
    skipped = set(re.findall(r"^skip (\S+) .*an API model: smoke sends no paid request", out, flags=re.M))
    assert skipped == {name for name, spec in builtin_models().items() if spec.kind == "api"}
    assert len(runnable) >= 15  # the 14 published systems and DeepFloyd IF stage I alone
    for name in runnable:
        pipeline_class = builtin_models()[name].pipeline_class
        assert pipeline_class in lines[name] and re.search(r"\d+\.\d s  \d+x\d+", lines[name]), lines[name]
    assert "1024x1024" in lines["deepfloyd-if"]  # the cascade ends at the registry's final resolution
    assert "IFPipeline > IFSuperResolutionPipeline > StableDiffusionUpscalePipeline" in lines["deepfloyd-if"]
    assert "tiny-playground-v2.5" in lines["playground-v2.5"] and "tiny-sdxl-turbo" in lines["sdxl-turbo"]
    assert "tiny-lcm" in lines["lcm-dreamshaper-v7"] and "tiny-sd2" in lines["sd-2"]
    assert re.search(r"^\d+ of \d+ models made their image in", out, flags=re.M)


@pytest.mark.slow
def test_smoke_checks_a_models_file_and_fails_loudly(tmp_path, artefact_cache, capsys):
    from generators.commands import main

    models = tmp_path / "models.toml"
    models.write_text(
        '[models.my-sdxl-finetune]\npipeline_class = "StableDiffusionXLPipeline"\nweights = "/nowhere"\n'
        'steps = 30\nresolution = [1024, 768]\n\n'
        '[models.broken]\npipeline_class = "StableDiffusionPipeline"\nhub_id = "me/broken"\n'
        'call_kwargs = { not_an_argument = 1 }\n\n'
        '[models.exotic]\npipeline_class = "WuerstchenCombinedPipeline"\nhub_id = "me/exotic"\n'
    )
    code = main(["--cache-dir", str(artefact_cache), "smoke", "--models-file", str(models), "--models",
                 "my-sdxl-finetune,broken,exotic"])
    captured = capsys.readouterr()
    assert code == 1 and "smoke failed for broken, exotic" in captured.err
    assert re.search(r"^ok   my-sdxl-finetune +StableDiffusionXLPipeline .* 64x48 ", captured.out, flags=re.M)
    assert re.search(r"^FAIL broken .*not_an_argument", captured.out, flags=re.M)
    assert re.search(r"^FAIL exotic .*no tiny stand-in for WuerstchenCombinedPipeline", captured.out, flags=re.M)
    assert main(["smoke", "--models", "deepfloyd-if-ii"]) == 2
    assert "run the cascade that uses them instead (deepfloyd-if)" in capsys.readouterr().err


def test_stand_ins_keep_everything_but_what_the_toy_size_forces():
    registry = builtin_models()
    sdxl, _ = stand_in(dataclasses.replace(registry["sdxl"], offload="model", vae_tiling=True))
    assert (sdxl.tiny, sdxl.weights, sdxl.steps, sdxl.resolution) == ("tiny-sdxl", "", 2, (64, 64))
    assert (sdxl.guidance, sdxl.variant, sdxl.offload, sdxl.vae_tiling) == (5.0, "fp16", "", True)
    turbo, _ = stand_in(registry["sdxl-turbo"])
    assert (turbo.steps, turbo.guidance) == (1, 0.0)
    assert stand_in(registry["flux-schnell"])[0].call_kwargs == {"max_sequence_length": 256}
    assert stand_in(registry["sd-2-1"])[0].scheduler == "DPMSolverMultistepScheduler"
    tiny = stand_ins(registry, registry["deepfloyd-if"])
    assert [spec.resolution for spec in tiny.values()] == [(64, 64), (256, 256), (1024, 1024)]
    assert output_resolution(tiny, tiny["deepfloyd-if"]) == output_resolution(registry, registry["deepfloyd-if"])


# --- the DeepFloyd IF cascade -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_cascade(artefact_cache):
    """The IF cascade's stand-ins at a quarter of the size (stage I 16 px -> 64 -> 256), for the slower checks."""
    registry = builtin_models()
    tiny = stand_ins(registry, registry["deepfloyd-if"])
    for name, side in (("deepfloyd-if", 16), ("deepfloyd-if-ii", 64), ("deepfloyd-if-iii", 256)):
        tiny[name] = dataclasses.replace(tiny[name], resolution=(side, side))
    return tiny, artefact_cache


@pytest.mark.slow
@pytest.mark.parametrize("stage", [0, 1, 2])
def test_a_run_killed_in_any_stage_of_the_cascade_resumes_without_redoing_images(tmp_path, small_cascade, stage,
                                                                                  monkeypatch):
    tiny, cache = small_cascade
    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    ids = add_prompts(db, [PromptSpec("s", f"k{i}", f"An image of thing {i}") for i in range(3)]).ids
    first = make_generator(tiny["deepfloyd-if"], registry=tiny, cache_dir=cache)
    assert first.stages[1][1].text_encoder is None  # IF-II is loaded without T5 and gets stage I's embeddings
    stage_class = type(first.stages[stage][1])
    real_call, calls = stage_class.__call__, []

    @functools.wraps(real_call)  # keeps the signature the generator reads
    def killed_on_second_batch(self, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real_call(self, **kwargs)

    monkeypatch.setattr(stage_class, "__call__", killed_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        run(db, media, [tiny["deepfloyd-if"]], ids, lambda spec: first, batch_size=1)
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 1
    monkeypatch.setattr(stage_class, "__call__", real_call)

    resumed = []

    def recording(spec):
        generator = make_generator(spec, registry=tiny, cache_dir=cache)
        generate = generator.generate
        generator.generate = lambda prompts, seeds: resumed.extend(prompts) or generate(prompts, seeds)
        return generator

    report = run(db, media, [tiny["deepfloyd-if"]], ids, recording, batch_size=1)
    assert report.made == 2 and report.existing == 1
    assert resumed == ["An image of thing 1", "An image of thing 2"]  # the finished image is not made again
    rows = list(db.query("SELECT prompt_id, width, height, params FROM images ORDER BY prompt_id"))
    assert [row["prompt_id"] for row in rows] == ids
    assert {(row["width"], row["height"]) for row in rows} == {(256, 256)}  # 16 px x 4 x 4
    assert all('"stages"' in row["params"] for row in rows)
    db.close()


@pytest.mark.slow
def test_cascade_images_do_not_depend_on_the_batch(tmp_path, small_cascade):
    import numpy as np

    tiny, cache = small_cascade
    generator = make_generator(tiny["deepfloyd-if"], registry=tiny, cache_dir=cache, negative_prompt="blurry")
    alone = generator.generate(["a red fox"], [7])[0]
    pair = generator.generate(["a blue whale", "a red fox"], [3, 7])
    assert alone.size == pair[1].size == (256, 256)
    difference = np.abs(np.asarray(alone, dtype=int) - np.asarray(pair[1], dtype=int)).max()
    assert difference <= 3 and np.abs(np.asarray(pair[0], dtype=int) - np.asarray(alone, dtype=int)).max() > 3
    stages = generator.params["stages"]
    assert [s["pipeline_class"] for s in stages] == ["IFPipeline", "IFSuperResolutionPipeline",
                                                     "StableDiffusionUpscalePipeline"]
    assert (generator.params["width"], generator.params["height"]) == (256, 256)
    assert stages[2]["call_kwargs"] == {"noise_level": 100}


def test_smoke_has_help(capsys):
    from generators.commands import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["smoke", "--help"])
    out = capsys.readouterr().out
    assert "usage:" in out and "--models-file" in out and "tiny random-weight stand-in" in out


@pytest.mark.slow
def test_a_stand_in_built_by_another_version_of_the_recipes_is_rebuilt(tmp_path):
    from generators.tiny import STAMP_FILE, ensure_tiny

    folder = ensure_tiny(tmp_path, "tiny-flux-schnell")
    built = (folder / "model_index.json").stat().st_mtime_ns
    assert ensure_tiny(tmp_path, "tiny-flux-schnell") == folder
    assert (folder / "model_index.json").stat().st_mtime_ns == built  # current: kept
    (folder / STAMP_FILE).write_text("generators/tiny.py sha256 0000 seed 0\n")
    ensure_tiny(tmp_path, "tiny-flux-schnell")
    assert (folder / "model_index.json").stat().st_mtime_ns != built
    assert sorted(p.name for p in (tmp_path / "tiny").iterdir()) == ["tiny-flux-schnell"]  # no leftovers
