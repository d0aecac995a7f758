"""Commonsense-T2I's systems (§3.1, issue 26): the partner prompt as each prompt's negative prompt ("SD-XL w/ negative
prompt", "SD-3 w/ negative prompt"), Openjourney v4 and LCM Dreamshaper v7, run offline through the generator path."""

from __future__ import annotations

import dataclasses
import json
from functools import partial

import pytest

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.pipelines import call_arguments, make_generator
from generators.registry import builtin_models
from generators.runner import RunError, run
from generators.smoke import stand_ins
from suites.commonsense import sample_specs


class Recording:
    """A generator that draws nothing but records what the runner hands it."""

    def __init__(self, spec):
        self.name, self.params, self.calls = spec.name, {}, []

    def generate(self, prompts, seeds, negative_prompts=None):
        from PIL import Image

        self.calls.append((list(prompts), None if negative_prompts is None else list(negative_prompts)))
        return [Image.new("RGB", (8, 8), (len(p) % 255, 0, 0)) for p in prompts]


@pytest.fixture
def commonsense_db(tmp_path):
    db = connect(tmp_path / "arena.db")
    ids = add_prompts(db, sample_specs()).ids
    yield db, MediaStore(tmp_path / "media"), ids
    db.close()


def test_each_prompt_gets_its_partner_prompt_as_negative_prompt(commonsense_db):
    db, media, ids = commonsense_db
    made = {}

    def factory(spec):
        made[spec.name] = Recording(spec)
        return made[spec.name]

    registry = builtin_models()
    report = run(db, media, [registry["sdxl-partner-negative"], registry["sdxl"]], ids, factory, batch_size=5)
    assert report.made == 2 * len(ids)
    texts = {row["id"]: row["text"] for row in db.query("SELECT id, text FROM prompts")}
    partner = {}
    for spec in sample_specs():
        for other in sample_specs():
            if other.item_key == spec.item_key and other.role != spec.role:
                partner[spec.text] = other.text
    sent = [(prompt, negative) for prompts, negatives in made["sdxl-partner-negative"].calls
            for prompt, negative in zip(prompts, negatives)]
    assert len(sent) == len(ids) and all(negative == partner[prompt] for prompt, negative in sent)
    assert all(negatives is None for _, negatives in made["sdxl"].calls)  # the plain run keeps the run's own
    rows = db.query("SELECT p.text, i.params FROM images i JOIN prompts p ON p.id = i.prompt_id "
                    "JOIN models m ON m.id = i.model_id WHERE m.name = 'sdxl-partner-negative'")
    for row in rows:
        assert json.loads(row["params"])["negative_prompt"] == partner[row["text"]]
    assert set(texts.values()) == set(partner)  # every sample prompt has its partner


def test_a_prompt_without_a_partner_stops_the_run_before_anything_is_made(tmp_path):
    db = connect(tmp_path / "arena.db")
    ids = add_prompts(db, [PromptSpec("taxonomy", "coin.n.01", "An image of coin")]).ids
    with pytest.raises(RunError, match=r"sd3-partner-negative take each prompt's partner prompt as negative prompt, "
                                       r"but prompt\(s\) 1 have no partner"):
        run(db, MediaStore(tmp_path / "media"), [builtin_models()["sd3-partner-negative"]], ids, Recording)
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 0


def test_the_partner_reaches_the_pipeline_call_as_its_negative_prompt():
    import diffusers

    spec = builtin_models()["sd3-partner-negative"]
    kwargs = call_arguments(spec, diffusers.StableDiffusion3Pipeline, ["A lightbulb without electricity",
                                                                         "A lightbulb with electricity"], [None, None],
                            negative_prompt=["A lightbulb with electricity", "A lightbulb without electricity"])
    assert kwargs["negative_prompt"] == ["A lightbulb with electricity", "A lightbulb without electricity"]
    with pytest.raises(ValueError, match="1 negative prompts for 2 prompts"):
        call_arguments(spec, diffusers.StableDiffusion3Pipeline, ["a", "b"], [None, None], negative_prompt=["x"])


@pytest.mark.slow
def test_sdxl_with_partner_negatives_runs_on_its_tiny_stand_in(commonsense_db, tmp_path):
    """The real diffusers path: the tiny SDXL pipeline, loaded with from_pretrained, called with one negative prompt
    per image (an image with the partner as negative differs from one with the run's empty negative prompt)."""
    db, media, ids = commonsense_db
    registry = builtin_models()
    tiny = {**stand_ins(registry, registry["sdxl-partner-negative"]), **stand_ins(registry, registry["sdxl"])}
    first_item = ids[:2]
    report = run(db, media, [tiny["sdxl-partner-negative"], tiny["sdxl"]], first_item,
                 partial(make_generator, registry=tiny, cache_dir=tmp_path / "cache"), batch_size=2)
    assert report.made == 4
    rows = {(row["name"], row["prompt_id"]): row for row in db.query(
        "SELECT m.name, i.prompt_id, i.media_hash, i.seed, i.params FROM images i JOIN models m ON m.id = i.model_id")}
    for prompt_id in first_item:
        with_partner, plain = rows[("sdxl-partner-negative", prompt_id)], rows[("sdxl", prompt_id)]
        assert json.loads(with_partner["params"])["negative_prompt"]
        assert json.loads(plain["params"])["negative_prompt"] == ""
    # same seed, other negative prompt: another picture
    generator = make_generator(tiny["sdxl-partner-negative"], registry=tiny, cache_dir=tmp_path / "cache")
    text = db.execute("SELECT text FROM prompts WHERE id = ?", [first_item[0]]).fetchone()[0]
    partner = db.execute("SELECT text FROM prompts WHERE id = ?", [first_item[1]]).fetchone()[0]
    plain_image = generator.generate([text], [7])[0]
    negative_image = generator.generate([text], [7], [partner])[0]
    assert plain_image.tobytes() != negative_image.tobytes()


def test_the_commonsense_systems_follow_the_authors_code_and_model_cards():
    registry = builtin_models()
    # generate_images.py: StableDiffusionPipeline(prompthero/openjourney-v4), pipe(prompt)
    oj = registry["openjourney-v4"]
    assert (oj.pipeline_class, oj.hub_id, oj.steps, oj.guidance, oj.resolution, oj.prompt_template) == (
        "StableDiffusionPipeline", "prompthero/openjourney-v4", 50, 7.5, (512, 512), "{prompt}")
    lcm = registry["lcm-dreamshaper-v7"]  # pipe(prompt, num_inference_steps=4, guidance_scale=8.0), float32
    assert (lcm.pipeline_class, lcm.hub_id, lcm.steps, lcm.guidance, lcm.dtype, lcm.negative_prompt) == (
        "LatentConsistencyModelPipeline", "SimianLuo/LCM_Dreamshaper_v7", 4, 8.0, "float32", False)
    for name, plain in (("sdxl-partner-negative", "sdxl"), ("sd3-partner-negative", "sd3")):
        assert dataclasses.replace(registry[name], name=plain, negative_prompt_from="", description="",
                                   benchmarks=()) == dataclasses.replace(registry[plain], description="", benchmarks=())
