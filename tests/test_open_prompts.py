"""Open prompts (issue 43): a typed prompt, two models drawn by the sampler, both images shown together and anonymised
as stored ones are, the vote and the reveal as today; refusals (length, moderation, failure, timeout, safety) shown
in words with nothing to vote on; the prompts, images, votes and latencies stored like suite battles."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import httpx
import pytest
from PIL import Image
from support.arena import build_small_arena
from support.live import StandInService
from support.webapp import running_app

from arena import session as sessions
from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from arena.open_prompts import FAILED, FLAGGED, GenerationFailed, LiveModels, OpenPrompts, open_prompts_enabled
from core.settings import Settings
from datamodel.connection import Store
from datamodel.open_prompts import (
    LATENCY_METRIC,
    OPEN_SUITE,
    PromptRefused,
    generation_rows,
    median_latencies,
    normalise_prompt,
    open_prompt_count,
)
from datamodel.renditions import Renditions
from generators.demo import demo_models
from generators.serving import ResidentModels
from judges.moderation import APIModerator, RuleModerator
from sampling.live import draw_live_pair
from tools.fake_openai import FakeServer, ScriptedModeration

SERVED = ("demo-painter", "demo-lookalike", "demo-scribble")


def _open_prompts(arena, service, *, moderator=None, timeout_s: float = 30.0, seed: int = 0) -> OpenPrompts:
    settings = arena.settings.replace(open_prompt_timeout_s=timeout_s)
    specs = demo_models()
    return OpenPrompts(settings, Store(settings.database), arena.media, Renditions.from_settings(arena.media, settings),
                       service, moderator or RuleModerator.from_file(),
                       LiveModels({n: specs[n] for n in SERVED}, specs),
                       rng=random.Random(seed))


def _signed_in(arena, name: str = "ola") -> sessions.ArenaSession:
    return sessions.start(arena.db, name, f"{name}-token-1", open_signup=True)


def test_a_typed_prompt_becomes_a_battle_of_two_anonymous_images_stored_like_a_suite_battle(tmp_path):
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED, sizes={"demo-painter": 64, "demo-lookalike": 512, "demo-scribble": 200})
    live = _open_prompts(arena, service)
    session = asyncio.run(live.battle(_signed_in(arena), "  une  maison   rouge au bord de la mer "))
    battle = session.battle
    assert battle.suite == OPEN_SUITE and battle.text == "une maison rouge au bord de la mer"
    assert session.receipt is None and session.shown_at > 0
    rows = generation_rows(arena.db, battle.prompt_id)
    assert [row["status"] for row in rows] == ["ok", "ok"] and len({row["model"] for row in rows}) == 2
    assert all(row["seconds"] > 0 and row["serving"] == "stand-in" for row in rows)
    images = arena.db.execute("SELECT id, withheld, rendition FROM images WHERE prompt_id = ?",
                              [battle.prompt_id]).fetchall()
    assert {battle.left.image_id, battle.right.image_id} == {row[0] for row in images}
    key = Renditions.from_settings(arena.media, arena.settings).spec.key
    assert {(row[1], row[2]) for row in images} == {("open prompt", key)}  # rendered, never drawn for suite battles
    # the vote and the reveal are the arena's own; the leaderboard's suite filter finds the vote
    voted = sessions.vote(arena.db, session, "A", on_screen=battle.media_token)
    assert {voted.receipt.model_a, voted.receipt.model_b} == {row["model"] for row in rows}
    board = compute_leaderboard(arena.db, LeaderboardOptions(suite=OPEN_SUITE, rounds=10))
    assert board.votes["human"] == 1
    assert LATENCY_METRIC in board.table.columns
    assert set(median_latencies(arena.db)) == {row["model"] for row in rows}
    assert compute_leaderboard(arena.db, LeaderboardOptions(suite="taxonomy", rounds=10)).votes["human"] == 0


def test_both_images_are_shown_together_and_the_side_never_follows_the_arrival_order(tmp_path):
    """The slow model finishes last every time; the battle comes back only once both are in, and the slow model is
    on either side as often as the coin puts it there."""
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED, delays={"demo-scribble": 0.05})
    live = _open_prompts(arena, service, seed=3)
    session = _signed_in(arena)
    sides = Counter()
    for index in range(24):
        before = len(service.arrived)
        session = asyncio.run(live.battle(session, f"a lighthouse at dusk, take {index}"))
        assert len(service.arrived) == before + 2  # both answers were in before the battle was recorded
        receipt = sessions.vote(arena.db, session, "tie", on_screen=session.battle.media_token).receipt
        if "demo-scribble" in (receipt.model_a, receipt.model_b):
            sides["A" if receipt.model_a == "demo-scribble" else "B"] += 1
        session = sessions.show_battle(session, session.battle)  # as the page does for the next prompt
    assert sides["A"] >= 3 and sides["B"] >= 3, sides


def test_the_images_of_an_open_prompt_are_served_alike(tmp_path):
    """Two models of very different native sizes: both sides answer the same length, dimensions and headers, as every
    battle's images do (tests/test_anonymity.py)."""
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED, sizes={"demo-painter": 48, "demo-lookalike": 1024, "demo-scribble": 300})
    session = asyncio.run(_open_prompts(arena, service).battle(_signed_in(arena), "a bowl of ramen"))
    with running_app(arena.settings.replace(open_prompts="off")) as url, httpx.Client(timeout=30) as client:
        answers = [client.get(f"{url}battle-media/{session.battle.media_token}/{side}") for side in "ab"]
    assert [answer.status_code for answer in answers] == [200, 200]
    assert answers[0].headers == answers[1].headers
    assert len(answers[0].content) == len(answers[1].content)
    sizes = {Image.open(__import__("io").BytesIO(answer.content)).size for answer in answers}
    assert len(sizes) == 1


@pytest.mark.parametrize("what", ["failed", "timeout", "flagged"])
def test_a_failed_late_or_flagged_generation_shows_nothing_records_the_model_and_keeps_the_prompt(tmp_path, what):
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED, fail=("demo-scribble",) if what == "failed" else (),
                             flag=("demo-scribble",) if what == "flagged" else (),
                             delays={"demo-scribble": 2.0} if what == "timeout" else {})
    live = _open_prompts(arena, service, timeout_s=0.5)
    session = _signed_in(arena)
    for attempt in range(12):  # until the pair drawn holds demo-scribble
        try:
            asyncio.run(live.battle(session, f"a snowy owl {attempt}"))
        except GenerationFailed as error:
            message = str(error)
            break
    else:
        pytest.fail("demo-scribble was never drawn")
    expected = {"failed": FAILED, "flagged": FLAGGED}.get(what, "did not finish within 0.5 s")
    assert expected in message and "demo-" not in message  # said in words, no model named
    prompt_id = arena.db.execute("SELECT id FROM prompts WHERE suite = 'open' AND text = ?",
                                 [f"a snowy owl {attempt}"]).fetchone()[0]  # the prompt is kept
    rows = generation_rows(arena.db, prompt_id)
    bad = [row for row in rows if row["model"] == "demo-scribble"]
    assert [row["status"] for row in bad] == [what] and bad[0]["image_id"] is None and bad[0]["reason"]
    good = [row for row in rows if row["model"] != "demo-scribble"]
    assert good[0]["status"] == "ok" and good[0]["image_id"] is not None  # the other model's image is kept
    assert arena.db.execute("SELECT COUNT(*) FROM battles WHERE prompt_id = ?", [prompt_id]).fetchone()[0] == 0


def test_prompts_are_limited_in_length_in_any_language():
    assert normalise_prompt("猫が屋根の上で眠っている" * 10, 120) == "猫が屋根の上で眠っている" * 10
    assert normalise_prompt("مدينة تحت المطر\n\tليلاً", 50) == "مدينة تحت المطر ليلاً"
    assert normalise_prompt("e\u0301te\u0301", 4) == "été"  # NFC: four code points typed, four shown
    with pytest.raises(PromptRefused, match="has 121 characters; the limit is 120"):
        normalise_prompt("猫" * 121, 120)
    for empty in ("", "   ", None, 3):
        with pytest.raises(PromptRefused, match="Type a prompt first"):
            normalise_prompt(empty, 120)
    with pytest.raises(PromptRefused, match="control"):
        normalise_prompt("a cat\u0007", 120)


def test_the_rule_list_refuses_a_prompt_says_why_and_stores_nothing(tmp_path):
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED)
    live = _open_prompts(arena, service)
    with pytest.raises(PromptRefused, match=r"^Your prompt was refused: it asks for graphic violence\.$"):
        asyncio.run(live.battle(_signed_in(arena), "a Gory battlefield"))
    assert open_prompt_count(arena.db) == 0 and service.arrived == []
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\ncategory = "spam"\nwhy = "it advertises"\npattern = "\\\\bbuy now\\\\b|今すぐ購入"\n')
    mine = _open_prompts(arena, service, moderator=RuleModerator.from_file(rules))
    with pytest.raises(PromptRefused, match="it advertises"):
        asyncio.run(mine.battle(_signed_in(arena), "今すぐ購入 のポスター"))
    assert asyncio.run(mine.battle(_signed_in(arena), "a gory battlefield")).battle is not None  # its own list only


def test_a_broken_rule_file_is_named_with_the_rule():
    from judges.moderation import ModerationConfigError

    with pytest.raises(ModerationConfigError, match=r"rule 1 \(x\): the pattern is not a regular expression"):
        RuleModerator.from_file(_write("[[rule]]\ncategory = 'x'\nwhy = 'y'\npattern = '(('\n"))


def _write(text: str):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "rules.toml"
    path.write_text(text)
    return path


def test_the_moderation_model_refuses_flagged_prompts_and_fails_closed(tmp_path):
    arena = build_small_arena(tmp_path)
    service = StandInService(SERVED)
    with FakeServer() as server:
        moderator = APIModerator("omni-moderation-latest", base_url=server.base_url, env={})
        live = _open_prompts(arena, service, moderator=moderator)
        with pytest.raises(PromptRefused, match=r"the moderation model flagged it \(violence, violence/graphic\)"):
            asyncio.run(live.battle(_signed_in(arena), "a duel [flag:violence] [flag:violence/graphic]"))
        assert asyncio.run(live.battle(_signed_in(arena), "a quiet harbour")).battle is not None
        asked = [received.body for received in server.snapshot() if received.endpoint == "moderations"]
        assert [body["model"] for body in asked] == ["omni-moderation-latest"] * 2
        assert asked[1]["input"] == "a quiet harbour"
    with FakeServer(moderation_responder=lambda received: ScriptedModeration(status=500)) as server:
        moderator = APIModerator("omni-moderation-latest", base_url=server.base_url, env={})
        live = _open_prompts(arena, service, moderator=moderator)
        with pytest.raises(PromptRefused, match="could not be reached"):
            asyncio.run(live.battle(_signed_in(arena), "a quiet harbour"))


def test_the_sampler_draws_the_pair_and_the_coin_the_sides():
    rng = random.Random(0)
    drawn = Counter(draw_live_pair(rng, "uniform", [4, 9, 2]) for _ in range(3000))
    assert set(drawn) == {(a, b) for a in (2, 4, 9) for b in (2, 4, 9) if a != b}
    assert max(drawn.values()) / min(drawn.values()) < 1.3
    assert all(a != b for a, b in (draw_live_pair(rng, "balanced", [1, 2, 3]) for _ in range(50)))


def test_open_prompts_are_on_in_the_demo_off_elsewhere_unless_set():
    assert open_prompts_enabled(Settings(), has_demo=True)
    assert not open_prompts_enabled(Settings(), has_demo=False)
    assert open_prompts_enabled(Settings(open_prompts="on"), has_demo=False)
    assert not open_prompts_enabled(Settings(open_prompts="off"), has_demo=True)


def test_a_worker_keeps_its_models_resident_least_recently_used_first():
    loads, unloads = [], []
    resident = ResidentModels(2, lambda name: loads.append(name) or f"model {name}", unloads.append)
    for name in ("a", "b", "a", "c", "a", "b"):
        model, _ = resident.get(name)
        assert model == f"model {name}"
    assert loads == ["a", "b", "c", "b"] and unloads == ["model b", "model c"]
    assert resident.names == ["a", "b"]


def test_an_open_prompt_is_taken_vote_by_vote_without_a_full_read_of_the_counts_or_the_prompt_pool(tmp_path,
                                                                                                     monkeypatch):
    """An open prompt adds a prompt and two images that battles never draw (withheld): the sampler's counts and the
    prompt pool, which read everything again when what battles draw changes (at a million votes a full read is 2 s of
    CPU), take it as it comes: its vote through the vote changes, nothing re-read. A suite's new image still is a
    catalog change, read again."""
    from datamodel.catalog import add_image
    from datamodel.sampling_reads import catalog_version
    from sampling import prompt_pool
    from sampling import sampler as sampler_module
    from sampling.prompt_pool import PromptPool
    from sampling.sampler import SamplingStats

    arena = build_small_arena(tmp_path)
    reads = Counter()

    def counted(name, read):
        def wrapper(*args, **kwargs):
            reads[name] += 1
            return read(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(sampler_module, "read_count_tables", counted("counts", sampler_module.read_count_tables))
    monkeypatch.setattr(prompt_pool, "suites_with_battles", counted("pool", prompt_pool.suites_with_battles))
    stats = SamplingStats(refresh_seconds=0.0, sync_seconds=0.0)
    sampler = sessions.Sampler("balanced", stats, PromptPool())
    live = _open_prompts(arena, StandInService(SERVED))
    live.sampler = sampler
    live.model_ids()  # the served models are registered once, as the server's first open prompt does
    stats.refresh(arena.db, force=True)
    sampler.pool.eligible_ids(arena.db)
    reads.clear()
    before = (catalog_version(arena.db), stats.tables.votes)

    session = asyncio.run(live.battle(_signed_in(arena), "a lighthouse at dusk"))
    voted = sessions.vote(arena.db, session, "A", on_screen=session.battle.media_token, sampler=sampler,
                          rng=random.Random(1))
    stats.refresh(arena.db)
    stats.wait(30)
    sampler.pool.eligible_ids(arena.db)
    assert voted.upcoming is not None  # the next battle was drawn, as after any vote
    assert reads == Counter() and catalog_version(arena.db) == before[0]
    assert stats.tables.votes == before[1] + 1  # the open prompt's vote is counted, vote by vote

    prompt_id = arena.prompt_ids[0]
    add_image(arena.db, prompt_id=prompt_id, model_id=arena.model_ids["alpha-model"],
              stored=arena.media.put_image(Image.new("RGB", (8, 8))), idx=1)
    stats.refresh(arena.db)
    stats.wait(30)
    sampler.pool.eligible_ids(arena.db)
    assert catalog_version(arena.db) != before[0] and reads == Counter(counts=1, pool=1)


@pytest.mark.both_engines
def test_an_open_prompts_rows_move_their_own_counter_and_a_suites_the_catalog(small_arena):
    """The ``data_versions`` triggers on both engines: an open prompt's prompt and images (never drawn) move
    ``open_prompts``; a suite's image, or an open prompt's image let into battles, moves ``catalog``."""
    from datamodel.catalog import add_image, release_withheld
    from datamodel.open_prompts import WITHHELD, Generation, add_open_prompt, record_generations

    db, media = small_arena.db, small_arena.media

    def counters() -> dict[str, int]:
        return dict(db.execute("SELECT name, version FROM data_versions").fetchall())

    model_ids = {name: small_arena.model_ids[name] for name in ("alpha-model", "bravo-model")}
    before = counters()
    prompt_id = add_open_prompt(db, "a lighthouse at dusk")
    made = [Generation(model=name, status="ok", stored=media.put_image(Image.new("RGB", (8, 8), (k, 0, 0))), seed=k,
                       seconds=0.1) for k, name in enumerate(model_ids)]
    record_generations(db, prompt_id, made, model_ids=model_ids, annotator_id=None, serving="stand-in",
                       rendition=None)
    after = counters()
    assert after["catalog"] == before["catalog"] and after["open_prompts"] == before["open_prompts"] + 3
    assert release_withheld(db, WITHHELD) == 2  # an admin lets them into battles: battles may draw them now
    assert counters()["catalog"] == after["catalog"] + 2
    add_image(db, prompt_id=small_arena.prompt_ids[0], model_id=model_ids["alpha-model"],
              stored=media.put_image(Image.new("RGB", (8, 8), (9, 9, 9))), idx=1)
    assert counters()["catalog"] == after["catalog"] + 3


def test_a_models_ray_placement_is_checked_with_the_field_named():
    from generators.registry import ModelSpec, RegistryError

    painter = demo_models()["demo-painter"]
    assert painter.serve_replica_queue == 16 and "serve_replica_queue" not in painter.config()  # placement only
    with pytest.raises(RegistryError, match="serve_replica_queue at least 1"):
        ModelSpec(**{**painter.__dict__, "serve_replica_queue": 0})
