"""Published-protocol presets: declarations checked, applied to every command without overriding what the user types."""

from __future__ import annotations

import argparse
import json

import pytest

from core.presets import (
    DEFAULT_PRESET,
    PRESETS,
    Choice,
    Preset,
    PresetError,
    apply_defaults,
    get_preset,
    given_options,
    preset_markdown,
)
from core.registry import RegistryError
from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect


@pytest.fixture
def toy_preset():
    """A preset for suite ``toy`` touching every command, registered for the test only."""
    preset = PRESETS.register(Preset(
        name="toy-paper", title="A toy paper", suite="taxonomy", report=None, paper="toy.txt",
        choices={
            "generation.models": Choice(("demo-tiny-unet", "demo-painter"), "toy Table 1"),
            "generation.all_models": Choice({"steps": 2, "guidance": 3.0}, "toy code: steps=2"),
            "generation.model.demo-tiny-dit": Choice({}, "toy card"),
            "generation.seed_policy": Choice("fixed", "toy code"),
            "generation.seed": Choice(7, "toy code"),
            "generation.batch_size": Choice(3, "toy code"),
            "judge.task": Choice("pairwise", "toy §4"),
            "judge.model": Choice("toy-judge-model", "toy App. E"),
            "judge.image_detail": Choice("low", "toy App. E"),
            "judge.templates": Choice({"pairwise": "pairwise_taxonomy_paper"}, "toy Fig. 7"),
            "judge.options": Choice({"single_order": True, "source": "items"}, "toy App. A"),
            "metrics.names": Choice(("clip", "fid"), "toy §4.2"),
            "metrics.option.clip_model": Choice("local-dir:/nowhere", "toy clipscore.py"),
            "metrics.option.fid_reference": Choice("*", "toy fid.py"),
            "rating.protocol": Choice("arena", "toy"),
        }))
    yield preset
    PRESETS.unregister(preset.name)


# --- declarations -------------------------------------------------------------------------------------------------


def test_every_registered_preset_documents_each_choice_and_arena_is_the_default():
    presets = dict(PRESETS)
    assert next(iter(presets)) == DEFAULT_PRESET and get_preset(None).name == "arena"
    assert not get_preset("arena").published
    for preset in presets.values():
        for key, _value, source, _ in preset.lines():
            assert source.strip(), (preset.name, key)
        text = preset_markdown(preset)
        assert text.count("\n| `") == len(preset.choices), preset.name


@pytest.mark.parametrize("choices, message", [
    ({"generation.modles": Choice((), "x")}, "generation.modles: unknown key. Known keys: generation.models"),
    ({"generation.models": Choice(("a",), " ")}, "say where the choice comes from"),
    ({"generation.models": Choice("sdxl", "paper")}, "'sdxl' is not a list of registry model names"),
    ({"judge.image_detail": Choice("max", "paper")}, "'max' is not high, low or auto"),
    ({"generation.seed": ("not a Choice",)}, "write the value as Choice(value, source)"),
])
def test_a_declaration_with_an_unknown_key_an_unsourced_or_mistyped_choice_is_refused(choices, message):
    with pytest.raises(PresetError, match="preset 'bad'") as error:
        Preset(name="bad", title="bad", choices=choices)
    assert message in str(error.value)


def test_an_unknown_preset_names_the_known_ones_and_a_name_is_declared_once(toy_preset):
    with pytest.raises(RegistryError, match=r"unknown preset 'nope'; choices: arena, .*toy-paper \(python -m arena "
                                            r"presets lists them with their choices\)\."):
        get_preset("nope")
    PRESETS.register(toy_preset)  # the same declaration again: a no-op
    with pytest.raises(RegistryError, match="preset 'toy-paper' is declared twice"):
        PRESETS.register(Preset(name="toy-paper", title="another"))


def test_section_and_get_read_the_values():
    preset = Preset(name="p", title="p", choices={
        "generation.model.a": Choice({"steps": 1}, "s"), "generation.model.b": Choice({}, "s"),
        "generation.seed": Choice(3, "s")})
    assert preset.section("generation.model.") == {"a": {"steps": 1}, "b": {}}
    assert preset.get("generation.seed") == 3 and preset.get("judge.model", "default") == "default"


# --- applying to a command line -----------------------------------------------------------------------------------


def test_given_options_sees_spelled_out_options_equals_forms_prefixes_and_sub_commands():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run")
    for option in ("--seed", "--seed-policy", "--judge-model", "--batch-size"):
        run.add_argument(option)
    argv = ["--top", "x", "run", "--seed", "3", "--judge-mod=m", "--batch", "2"]
    assert given_options(parser, argv) == {"top", "seed", "judge_model", "batch_size"}  # --seed is not --seed-policy
    args = parser.parse_args(argv)
    applied = apply_defaults(args, {"seed": 9, "seed_policy": "fixed"}, given_options(parser, argv))
    assert (args.seed, args.seed_policy, applied) == ("3", "fixed", {"seed_policy": "fixed"})
    with pytest.raises(PresetError, match="sets option 'nope', which this command does not have"):
        apply_defaults(args, {"nope": 1}, set())


def _namespace(build, argv):
    parser = build()
    return parser, parser.parse_args(argv)


def test_the_arena_preset_changes_no_option_of_any_command():
    from generators.commands import apply_run_preset
    from generators.commands import build_parser as generators_parser
    from judges.commands import apply_judge_preset
    from judges.commands import build_parser as judges_parser
    from judges.metrics.commands import apply_metrics_preset
    from judges.metrics.commands import build_parser as metrics_parser
    from judges.prompts import Templates

    argv = ["run", "--models", "sdxl", "--suite", "taxonomy"]
    parser, args = _namespace(generators_parser, argv)
    before = dict(vars(args))
    apply_run_preset(parser, args, argv)
    assert {k: v for k, v in vars(args).items() if k != "preset"} == {k: v for k, v in before.items()
                                                                        if k != "preset"}
    for task in ("pairwise", "semvar", "commonsense", "saneval"):
        parser, args = _namespace(judges_parser, [task])
        before = dict(vars(args))
        assert apply_judge_preset(args, set(), Templates()) == Templates()
        assert {k: v for k, v in vars(args).items() if k != "preset"} == {k: v for k, v in before.items()
                                                                            if k != "preset"}, task
    argv = ["--suite", "taxonomy"]
    parser, args = _namespace(metrics_parser, argv)
    before = dict(vars(args))
    apply_metrics_preset(parser, args, argv)
    assert {k: v for k, v in vars(args).items() if k != "preset"} == {k: v for k, v in before.items()
                                                                        if k != "preset"}


def test_generation_settings_apply_to_every_model_but_those_with_their_own_entry_and_cascade_stages(toy_preset):
    from generators.demo import demo_models
    from generators.registry import RegistryError, apply_preset, load_registry

    registry = load_registry(extra=demo_models())
    applied = apply_preset(registry, toy_preset)
    assert (applied["sdxl"].steps, applied["sdxl"].guidance) == (2, 3.0)
    assert (applied["demo-tiny-unet"].steps, applied["demo-tiny-unet"].guidance) == (2, 3.0)
    assert applied["demo-tiny-dit"] == registry["demo-tiny-dit"]  # its own (empty) entry: the registry's settings
    assert applied["demo-painter"] == registry["demo-painter"]  # procedural: nothing to set
    assert applied["deepfloyd-if-iii"] == registry["deepfloyd-if-iii"]  # a cascade stage runs as its cascade says
    bad = Preset(name="bad", title="b", choices={"generation.model.no-such-model": Choice({}, "s")})
    with pytest.raises(RegistryError, match="preset bad: generation.model.no-such-model names no model"):
        apply_preset(registry, bad)
    typo = Preset(name="typo", title="t", choices={"generation.all_models": Choice({"stpes": 3}, "s")})
    with pytest.raises(RegistryError, match="preset typo: model sd-v1-5: unknown field\\(s\\) stpes"):
        apply_preset(registry, typo)


def test_generators_run_takes_the_presets_models_and_options_unless_typed(toy_preset):
    from generators.commands import apply_run_preset, build_parser

    argv = ["run", "--suite", "taxonomy", "--preset", "toy-paper", "--seed", "11"]
    parser, args = _namespace(build_parser, argv)
    apply_run_preset(parser, args, argv)
    assert (args.models, args.seed, args.seed_policy, args.batch_size) == ("demo-tiny-unet,demo-painter", 11,
                                                                          "fixed", 3)
    argv = ["run", "--suite", "commonsense", "--preset", "toy-paper"]
    parser, args = _namespace(build_parser, argv)
    with pytest.raises(PresetError, match="preset 'toy-paper' is for suite 'taxonomy', not 'commonsense'"):
        apply_run_preset(parser, args, argv)
    argv = ["run", "--suite", "taxonomy"]
    parser, args = _namespace(build_parser, argv)
    with pytest.raises(ValueError, match="--models is required: preset arena names no models"):
        apply_run_preset(parser, args, argv)


@pytest.mark.slow
def test_a_preset_run_records_its_name_and_refuses_to_mix_with_another_presets_settings(tmp_path, toy_preset):
    from generators.commands import main

    db = connect(tmp_path / "arena.db")
    add_prompts(db, [PromptSpec("taxonomy", "coin.n.01", "An image of coin", subset="Easy",
                                variant="without_definition")])
    db.close()
    common = ["--db", str(tmp_path / "arena.db"), "--media-dir", str(tmp_path / "media"), "--cache-dir",
              str(tmp_path / "cache"), "run", "--suite", "taxonomy", "--quiet", "--device", "cpu"]
    assert main(common + ["--models", "demo-tiny-unet,demo-painter"]) == 0
    db = connect(tmp_path / "arena.db")
    params = [json.loads(p) for (p,) in db.execute("SELECT params FROM images ORDER BY id")]
    assert [(p["model"], p["preset"], p.get("steps")) for p in params] == [("demo-tiny-unet", "arena", 3),
                                                                            ("demo-painter", "arena", None)]
    db.close()
    assert main(common + ["--preset", "toy-paper", "--models", "demo-painter"]) == 0  # procedural: nothing to mix
    with pytest.raises(Exception) as error:
        from generators.demo import demo_models
        from generators.registry import apply_preset, load_registry
        from generators.runner import register_models

        db = connect(tmp_path / "arena.db")
        spec = apply_preset(load_registry(extra=demo_models()), toy_preset)["demo-tiny-unet"]
        register_models(db, [spec], preset="toy-paper")
    assert ("1 images of demo-tiny-unet made under preset arena (3 steps, guidance 7.5); preset toy-paper makes it "
            "with 2 steps, guidance 3.0") in str(error.value)
    assert main(common + ["--preset", "toy-paper", "--models", "demo-tiny-unet"]) == 2


def test_the_judge_preset_sets_model_detail_template_and_task_options_unless_typed(toy_preset):
    from judges.commands import apply_judge_preset, build_parser
    from judges.prompts import PAIRWISE_TEMPLATE, Templates

    argv = ["pairwise", "--preset", "toy-paper", "--detail", "auto"]
    parser, args = _namespace(build_parser, argv)
    templates = apply_judge_preset(args, given_options(parser, argv), Templates())
    assert (args.judge_model, args.detail, args.single_order, args.source) == ("toy-judge-model", "auto", True,
                                                                              "items")
    assert args.suite == "taxonomy"  # the preset's suite when none is given
    assert templates.pairwise == Templates().pairwise_taxonomy_paper
    assert "[Start of the first image]\n<image B>\n[End of the first image]" in templates.pairwise
    assert PAIRWISE_TEMPLATE.version(templates) != PAIRWISE_TEMPLATE.version(Templates())  # another voter name
    parser, args = _namespace(build_parser, ["semvar", "--suite", "taxonomy", "--preset", "toy-paper"])
    with pytest.raises(Exception, match="preset toy-paper's judge is the pairwise task, not semvar"):
        apply_judge_preset(args, set(), Templates())
    parser, args = _namespace(build_parser, ["pairwise", "--preset", "toy-paper"])
    with pytest.raises(Exception, match="template file replaces 'pairwise', which preset toy-paper also replaces"):
        apply_judge_preset(args, set(), Templates(pairwise=Templates().pairwise + "\nmine"))


def test_the_metrics_preset_sets_the_metrics_and_their_options_unless_typed(toy_preset):
    from judges.metrics.commands import apply_metrics_preset, build_parser

    argv = ["--suite", "taxonomy", "--preset", "toy-paper", "--fid-reference", "retrieval"]
    parser, args = _namespace(build_parser, argv)
    apply_metrics_preset(parser, args, argv)
    assert (args.metrics, args.clip_model, args.fid_reference) == ("clip,fid", "local-dir:/nowhere", "retrieval")
    PRESETS.register(Preset(name="toy-bad-option", title="t", choices={"metrics.option.no_such": Choice(1, "s")}))
    try:
        argv = ["--suite", "taxonomy", "--preset", "toy-bad-option"]
        parser, args = _namespace(build_parser, argv)
        with pytest.raises(PresetError, match="sets option 'no_such', which this command does not have"):
            apply_metrics_preset(parser, args, argv)
    finally:
        PRESETS.unregister("toy-bad-option")


def test_presets_command_lists_and_prints_a_preset(capsys, toy_preset):
    from arena.commands import main

    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "arena " in out and "toy-paper" in out and "suite taxonomy" in out
    assert main(["presets", "toy-paper"]) == 0
    out = capsys.readouterr().out
    assert "| `generation.all_models` | steps=2; guidance=3.0 | toy code: steps=2 |" in out
    assert "| `generation.model.demo-tiny-dit` | the registry's settings" in out
    assert main(["presets", "nope"]) == 2
