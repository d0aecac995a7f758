"""API image models (issue 26): DALL-E 3 and its successors through an OpenAI-compatible images endpoint, run by the
generators' runner against the project's fake OpenAI server, with the judges' retry, concurrency, cost and resume
behaviour, a clear error without a key, and images stored like any generated image."""

from __future__ import annotations

import dataclasses
import json
from functools import partial

import pytest
from PIL import Image

from core.openai_http import MissingAPIKey
from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.image_requests import usage
from datamodel.media import MediaStore
from generators.api_images import ImageAPIConfig, ImageAPIGenerator
from generators.pipelines import make_generator
from generators.registry import NO_REVISION_PREFIX, RegistryError, builtin_models, spec_from_mapping
from generators.runner import run
from tools.fake_openai import FakeServer, ScriptedImage

PROMPTS = ("A lightbulb without electricity", "A lightbulb with electricity", "A flag on a windless day")


@pytest.fixture
def arena(tmp_path):
    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    ids = add_prompts(db, [PromptSpec("commonsense", f"item{i}", text, role="p1")
                           for i, text in enumerate(PROMPTS)]).ids
    yield db, media, ids
    db.close()


def small(name: str, **changes):
    """A registry API model asking for 64 px images (the fake draws what is asked)."""
    return dataclasses.replace(builtin_models()[name], resolution=(64, 64), **changes)


def generate(db, media, ids, specs, server, *, images_per_prompt=1, env=None, **config):
    api = ImageAPIConfig(base_url=server.base_url, retry_base_s=0.0, **config)
    return run(db, media, specs, ids, partial(make_generator, db=db, media=media, api_config=api, env=env or {}),
               images_per_prompt=images_per_prompt)


def test_the_fake_server_reads_the_no_revision_prefix_the_registry_declares():
    """DALL-E 3's no-revision prefix is declared once, in the registry: the fake server's revision recognises that
    very string, so a change to the prefix cannot leave the fake revising prompts the model sends unrevised."""
    from tools import fake_openai

    assert fake_openai.NO_REVISION_PREFIX is NO_REVISION_PREFIX
    assert fake_openai.revise(NO_REVISION_PREFIX + PROMPTS[0]) == PROMPTS[0]


def test_dall_e_3_images_are_made_through_the_api_and_stored_like_any_image(arena):
    db, media, ids = arena
    with FakeServer() as server:
        report = generate(db, media, ids, [small("dall-e-3"), small("dall-e-3-no-revision")], server,
                          images_per_prompt=2)
        bodies = [received.body for received in server.images()]
    assert report.made == 12 and not report.failed
    assert len(bodies) == 12  # one request per image: the API makes one image per call (n = 1)
    assert {(b["model"], b["size"], b["quality"], b["style"], b["n"], b["response_format"]) for b in bodies} == {
        ("dall-e-3", "64x64", "standard", "vivid", 1, "b64_json")}
    sent = sorted(b["prompt"] for b in bodies)
    assert sent.count(PROMPTS[0]) == 2 and sent.count(NO_REVISION_PREFIX + PROMPTS[0]) == 2
    rows = list(db.query("SELECT m.name, m.source, i.params, i.media_hash, i.media_ext, i.width, i.idx, p.text "
                         "FROM images i JOIN models m ON m.id = i.model_id JOIN prompts p ON p.id = i.prompt_id"))
    assert len(rows) == 12 and {row["source"] for row in rows} == {"api"}
    for row in rows:
        params = json.loads(row["params"])
        assert params["api_model"] == "dall-e-3" and params["size"] == "64x64" and params["quality"] == "standard"
        with Image.open(media.path(row["media_hash"], row["media_ext"])) as image:
            assert image.size == (64, 64) and row["width"] == 64
        if row["name"] == "dall-e-3":  # the API's rewritten prompt is kept with the image
            assert params["revised_prompt"] == f"{row['text']}. A detailed, photorealistic picture."
        else:  # behind the prefix the API draws the prompt as given
            assert params["revised_prompt"] == row["text"]
    by_prompt = {}
    for row in rows:
        by_prompt.setdefault((row["name"], row["text"]), set()).add(row["media_hash"])
    assert all(len(hashes) == 2 for hashes in by_prompt.values())  # the two generations are two pictures
    assert usage(db) == {"images": 12, "cost_usd": pytest.approx(12 * 0.040)}  # the price list's $0.040 each
    assert report.notes == [f"{name}: image API: 6 images made ($0.240), 0 from the cache of earlier runs, 0 failed, "
                            "0 retries" for name in ("dall-e-3", "dall-e-3-no-revision")]


def test_a_second_run_makes_nothing_and_a_crash_after_the_answer_pays_nothing_again(arena):
    db, media, ids = arena
    with FakeServer() as server:
        generate(db, media, ids, [small("dall-e-3")], server)
        again = generate(db, media, ids, [small("dall-e-3")], server)
        assert again.made == 0 and again.existing == 3 and len(server.images()) == 3
        # a crash after the API answered but before the image rows were committed: the rows are gone, the
        # answers are in image_requests, so the next run rebuilds the rows without a request
        hashes = {row[0] for row in db.execute("SELECT media_hash FROM images")}
        with db.conn:
            db.execute("DELETE FROM images")
        resumed = generate(db, media, ids, [small("dall-e-3")], server)
        assert resumed.made == 3 and len(server.images()) == 3
        assert "0 images made ($0.000), 3 from the cache of earlier runs" in resumed.notes[0]
    assert {row[0] for row in db.execute("SELECT media_hash FROM images")} == hashes


def test_a_refused_prompt_is_reported_and_asked_again_by_the_next_run(arena, capsys):
    db, media, ids = arena
    refuse = {"on": True}

    def respond(received):
        if refuse["on"] and "windless" in received.body["prompt"]:
            return ScriptedImage(status=400, error="Your request was rejected by the safety system.")
        return ScriptedImage()

    with FakeServer(image_responder=respond) as server:
        report = generate(db, media, ids, [small("dall-e-3")], server)
        assert report.made == 2 and report.failed == [f"dall-e-3, prompt {ids[2]}, image 0"]
        assert any("rejected by the safety system" in note and "after 1 attempt" in note for note in report.notes)
        refuse["on"] = False
        retry = generate(db, media, ids, [small("dall-e-3")], server)
        assert retry.made == 1 and not retry.failed
        assert [r.body["prompt"] for r in server.images()].count(PROMPTS[2]) == 2  # asked again; others not
        assert len(server.images()) == 4


def test_429s_and_5xx_are_retried_with_the_servers_wait_and_then_give_up(arena):
    db, media, ids = arena
    waits = []

    def respond(received):
        if "without" in received.body["prompt"] and received.attempt < 2:
            return ScriptedImage(status=429, error="Rate limit", headers={"retry-after-ms": "5"})
        if "windless" in received.body["prompt"]:
            return ScriptedImage(status=503, error="overloaded")
        return ScriptedImage()

    async def wait(seconds):
        waits.append(seconds)

    with FakeServer(image_responder=respond) as server:
        spec = small("dall-e-3")
        generator = ImageAPIGenerator(spec, ImageAPIConfig(base_url=server.base_url, retry_base_s=0.0, max_retries=2),
                                      db=db, media=media, env={}, wait=wait)
        images = generator.generate(list(PROMPTS), [1, 2, 3])
    assert images[0] is not None and images[1] is not None and images[2] is None
    assert generator.stats.retries == 4 and generator.stats.failed == 1 and generator.stats.sent == 2
    assert waits.count(0.005) == 2  # the 429's retry-after-ms, honoured
    assert "503" in generator.stats.errors[0] and "after 3 attempts" in generator.stats.errors[0]


def test_no_more_requests_are_in_flight_than_the_concurrency_allows(arena):
    db, media, ids = arena
    delay = 0.3
    with FakeServer(image_responder=lambda received: ScriptedImage(delay=delay)) as server:
        report = generate(db, media, ids, [small("dall-e-3")], server, images_per_prompt=4, concurrency=3)
        arrivals = sorted(received.at for received in server.images())
    # each answer takes `delay`, so the requests that arrive within less than `delay` of each other were in flight
    # together: three at a time, never more (the 12 images came in four waves)
    together = max(sum(1 for t in arrivals if start <= t < start + 0.8 * delay) for start in arrivals)
    assert report.made == 12 and together == 3
    assert arrivals[-1] - arrivals[0] >= 3 * delay


def test_images_answered_as_urls_are_fetched(arena):
    db, media, ids = arena
    with FakeServer() as server:
        spec = small("dall-e-3", call_kwargs={"quality": "hd", "style": "natural", "response_format": "url"})
        report = generate(db, media, ids[:1], [spec], server)
        body = server.images()[0].body
    assert report.made == 1 and (body["quality"], body["style"], body["response_format"]) == ("hd", "natural", "url")
    row = db.execute("SELECT media_hash, media_ext FROM images").fetchone()
    assert media.path(*row).exists()


def test_gpt_image_1_sends_no_style_and_records_the_token_usage(arena):
    db, media, ids = arena
    with FakeServer() as server:
        generate(db, media, ids[:1], [small("gpt-image-1")], server)
        body = server.images()[0].body
    assert body == {"model": "gpt-image-1", "prompt": PROMPTS[0], "n": 1, "size": "64x64", "quality": "medium"}
    assert json.loads(db.execute("SELECT usage FROM image_requests").fetchone()[0])["output_tokens"] == 272


def test_without_a_key_the_generator_says_what_to_set_and_sends_nothing(arena, tmp_path, monkeypatch, capsys):
    db, media, _ = arena
    with pytest.raises(MissingAPIKey, match=r"OPENAI_API_KEY is not set\. Export it .* or set "
                                            r"ARENA_IMAGE_API_BASE_URL"):
        ImageAPIGenerator(small("dall-e-3"), ImageAPIConfig(), db=db, media=media, env={})
    from generators.commands import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARENA_IMAGE_API_BASE_URL", raising=False)
    code = main(["--db", str(tmp_path / "arena.db"), "--media-dir", str(tmp_path / "media"), "run",
                 "--models", "dall-e-3", "--suite", "commonsense", "--quiet"])
    assert code == 2
    assert "error: OPENAI_API_KEY is not set. Export it" in capsys.readouterr().err
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM models WHERE name = 'dall-e-3'").fetchone()[0] == 0  # nothing written


def test_the_key_goes_to_the_server_and_never_into_a_message(arena):
    db, media, ids = arena
    secret = "sk-test-0123456789abcdef"
    with FakeServer(image_responder=lambda r: ScriptedImage(status=401, error=f"bad key {r.headers['authorization']}")
                    ) as server:
        report = generate(db, media, ids[:1], [small("dall-e-3")], server, env={"OPENAI_API_KEY": secret})
        assert server.images()[0].headers["authorization"] == f"Bearer {secret}"
    assert report.failed and secret not in " ".join(report.notes) and "bad key Bearer ***" in " ".join(report.notes)


def test_the_cli_runs_an_api_model_against_the_endpoint_setting(tmp_path, monkeypatch, capsys):
    from generators.commands import main

    db = connect(tmp_path / "arena.db")
    add_prompts(db, [PromptSpec("commonsense", "item0", PROMPTS[0], role="p1")])
    db.close()
    models = tmp_path / "models.toml"
    models.write_text("[models.dall-e-3]\nresolution = 64\n")
    with FakeServer() as server:
        monkeypatch.setenv("ARENA_IMAGE_API_BASE_URL", server.base_url)
        code = main(["--db", str(tmp_path / "arena.db"), "--media-dir", str(tmp_path / "media"), "run", "--models",
                     "dall-e-3", "--suite", "commonsense", "--images-per-prompt", "4", "--models-file", str(models),
                     "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "dall-e-3: image API: 4 images made ($0.160), 0 from the cache of earlier runs, 0 failed" in out
    assert "4 images made, 0 already there" in out


def test_api_models_are_checked_when_declared():
    with pytest.raises(RegistryError, match="needs api_model"):
        spec_from_mapping("mine", {"pipeline_class": "images", "kind": "api", "negative_prompt": False})
    with pytest.raises(RegistryError, match="takes no negative prompt"):
        spec_from_mapping("mine", {"pipeline_class": "images", "kind": "api", "api_model": "dall-e-3"})
    with pytest.raises(RegistryError, match="call_kwargs seed are not request fields"):
        spec_from_mapping("mine", {"pipeline_class": "images", "kind": "api", "api_model": "dall-e-3",
                                   "negative_prompt": False, "call_kwargs": {"seed": 1}})
    spec = builtin_models()["dall-e-3-no-revision"]
    # Commonsense-T2I §3.1 prints the prefix as "... just use it AS-IS: {prompt}"; the authors' generate_images.py
    # joins prefix + prompt without a space, and that code made Table 2's images
    assert spec.prompt_template.format(prompt="A cat") == (
        "I NEED to test how the tool works with extremely simple prompts. DO NOT add any detail, just use it "
        "AS-IS:A cat")
