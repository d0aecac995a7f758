"""T1 pairwise judge end to end against the local OpenAI-compatible server."""

import asyncio
import hashlib
import io
import random

import pytest
from PIL import Image
from support.openai_stub import engine_config, first_position_judge, hash_models, preference_judge

from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from datamodel.annotators import sign_in
from datamodel.judgments import judgments
from datamodel.vote_table import votes_frame
from datamodel.votes import record_vote
from judges.client import Engine
from judges.pairwise import judge_battles, plan_drawn, run_pairwise
from judges.prompts import PAIRWISE_TEMPLATE, Templates
from judges.selection import Selection, SelectionError
from sampling.draws import serve_battle
from tools.fake_openai import FakeServer, Scripted

RANKING = {"alpha-model": 0, "bravo-model": 1, "charlie-model": 2, "delta-model": 3}
TAXONOMY = Selection(suite="taxonomy")
VERSION = PAIRWISE_TEMPLATE.version(Templates())  # the default template's: every voter name ends with @VERSION


def run(arena, server, selection=TAXONOMY, **kwargs):
    config = engine_config(server, **kwargs.pop("config", {}))
    return asyncio.run(run_pairwise(arena.db, arena.media, config, selection, env={}, progress=False,
                                    handle_signals=False, **kwargs))


def test_images_arrive_as_data_urls_in_battle_order_and_the_swapped_request_swaps(small_arena):
    with FakeServer(preference_judge(small_arena.db, RANKING)) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=4))
        received = {r.digest: r for r in server.received}
    assert (summary.done, summary.failed, len(received)) == (4, 0, 8)
    hashes = {h: m for h, m in hash_models(small_arena.db).items()}
    by_images = {tuple(r.image_hashes()): r for r in received.values()}
    for row in judgments(small_arena.db, task="pairwise"):
        left, right = small_arena.db.execute(
            "SELECT l.media_hash, r.media_hash FROM battles b JOIN images l ON l.id = b.left_image_id "
            "JOIN images r ON r.id = b.right_image_id WHERE b.id = ?", [row["battle_id"]]).fetchone()
        first, swapped = by_images[(left, right)], by_images[(right, left)]
        prompt = small_arena.db.execute("SELECT text FROM prompts WHERE id = ?", [row["prompt_id"]]).fetchone()[0]
        for request in (first, swapped):
            assert f"[User Prompt]\n{prompt}\n[Start of the first image]" in request.text
            assert request.image_details == ["high", "high"]
            assert all(url.startswith("data:image/png;base64,") for url in request.image_urls)
            for data in request.images():
                Image.open(io.BytesIO(data)).verify()
                assert hashlib.sha256(data).hexdigest() in hashes
            assert request.body["model"] == "gpt-4o-mini"
        assert first.texts == swapped.texts


def test_a_consistent_judge_votes_like_an_annotator_and_shows_on_the_leaderboard(small_arena):
    with FakeServer(preference_judge(small_arena.db, RANKING)) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=12))
    assert (summary.done, summary.inconsistent) == (12, 0)
    votes = votes_frame(small_arena.db)
    assert len(votes) == 12
    assert set(votes["voter_kind"]) == {"judge"} and set(votes["voter"]) == {f"gpt-judge:gpt-4o-mini@{VERSION}"}
    assert set(votes["judge"]) == {f"gpt-judge:gpt-4o-mini@{VERSION}"}
    assert {row["template_version"] for row in judgments(small_arena.db, task="pairwise")} == {VERSION}
    for vote in votes.itertuples():
        assert vote.winner == min((vote.model_a, vote.model_b), key=RANKING.get)
    board = compute_leaderboard(small_arena.db, LeaderboardOptions(rounds=20, min_votes=1)).table
    rated = board.dropna(subset=["Judge ELO"]).sort_values("Judge ELO", ascending=False)
    assert list(rated["model"]) == sorted(rated["model"], key=RANKING.get)
    assert board["Human ELO"].isna().all()
    bias = summary.extra["position_bias"]
    assert bias["before_n"] == 24 and bias["after_n"] == 12


def test_disagreeing_orders_become_ties_marked_inconsistent_with_both_verdicts(small_arena):
    with FakeServer(first_position_judge) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=5))
    assert (summary.done, summary.inconsistent) == (5, 5)
    assert set(votes_frame(small_arena.db)["outcome"]) == {"tie"}
    rows = judgments(small_arena.db, task="pairwise")
    assert {row["status"] for row in rows} == {"inconsistent"}
    assert all([o["label"] for o in row["verdict"]["orders"]] == ["A", "A"] and len(row["raw"]) == 2 for row in rows)
    assert summary.extra["position_bias"]["before"] == 1.0
    assert any("first-position win rate: 1.000 over 10 answers" in note for note in summary.notes)


def test_single_order_is_the_published_protocol(small_arena):
    with FakeServer(first_position_judge) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=5), single_order=True)
        assert len(server.received) == 5
    votes = votes_frame(small_arena.db)
    assert set(votes["outcome"]) == {"A"} and set(votes["voter"]) == {f"gpt-judge-single-order:gpt-4o-mini@{VERSION}"}
    assert summary.extra["position_bias"] == {"before": 1.0, "before_n": 5, "after": 1.0, "after_n": 5}


def test_malformed_replies_refusals_and_api_errors_never_become_votes(small_arena):
    good = preference_judge(small_arena.db, RANKING)

    def respond(received):
        if "An image of sofa" in received.text:
            return Scripted("Both images look fine to me.")  # no verdict
        if "An image of coin\n" in received.text:
            return Scripted("", refusal="I can't help with comparing these images.")
        if "a flat metal piece" in received.text:
            return Scripted("busy", status=500)
        return good(received)

    with FakeServer(respond) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=12), config={"max_retries": 1})
    rows = judgments(small_arena.db, task="pairwise")
    assert summary.failed == len(rows) == 12 and summary.done == 0
    reasons = [row["reason"] for row in rows]
    assert all(reasons)
    assert any("order: unparseable reply: no final verdict [[A]], [[B]], [[C]] or [[D]]" in r for r in reasons)
    assert any("order: refusal: I can't help with comparing these images." in r for r in reasons)
    assert any("order: API error after 2 attempts: InternalServerError" in r for r in reasons)
    assert votes_frame(small_arena.db).empty
    assert small_arena.db.execute("SELECT COUNT(*) FROM battles").fetchone()[0] == 0


def test_a_rerun_skips_judged_battles_and_another_judge_name_is_answered_from_the_cache(small_arena):
    with FakeServer(preference_judge(small_arena.db, RANKING)) as server:
        first = run(small_arena, server, Selection(suite="taxonomy", limit=6))
        again = run(small_arena, server, Selection(suite="taxonomy", limit=6))
        assert (again.skipped, again.done, again.requests_sent) == (6, 0, 0)
        renamed = run(small_arena, server, Selection(suite="taxonomy", limit=6), name="rerun")
        assert len(server.received) == 12
    assert (first.requests_sent, renamed.requests_sent, renamed.requests_cached, renamed.done) == (12, 0, 12, 6)
    assert len(votes_frame(small_arena.db)) == 12


def test_drawn_battles_follow_the_arena_draw_and_are_stable_prefixes(small_arena):
    from sampling.draws import draw_uniform

    plans = plan_drawn(small_arena.db, small_arena.media, Selection(), count=5, seed=3)
    rng = random.Random(3)
    first = draw_uniform(small_arena.db, rng)
    assert plans[0].pairing == first
    assert [p.pairing for p in plan_drawn(small_arena.db, small_arena.media, Selection(), count=2, seed=3)] == \
        [p.pairing for p in plans[:2]]
    pairs = {(p.pairing.prompt_id, *sorted((p.pairing.left_image_id, p.pairing.right_image_id))) for p in plans}
    assert len(pairs) == len(plans)
    only = plan_drawn(small_arena.db, small_arena.media, Selection(models=("alpha-model", "bravo-model")), count=4)
    models = {m for p in only for m in small_arena.db.execute(
        "SELECT model_id FROM images WHERE id IN (?, ?)", [p.pairing.left_image_id, p.pairing.right_image_id])}
    assert models <= {(small_arena.model_ids["alpha-model"],), (small_arena.model_ids["bravo-model"],)}
    with pytest.raises(SelectionError, match="unknown model 'zulu'. Known models: alpha-model"):
        plan_drawn(small_arena.db, small_arena.media, Selection(models=("zulu",)), count=1)


def test_human_battles_are_copied_side_for_side_and_agreement_is_measured(small_arena):
    db = small_arena.db
    annotator = sign_in(db, "alice", "a-long-token", open_signup=True)
    rng = random.Random(1)
    for _ in range(6):
        battle = serve_battle(db, rng, session_id="s1", annotator_id=annotator.id, suite="taxonomy")
        better = "A" if RANKING[_model(db, battle.left.image_id)] < RANKING[_model(db, battle.right.image_id)] else "B"
        record_vote(db, battle.id, better, session_id="s1", rules=None)
    with FakeServer(preference_judge(db, RANKING)) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=4), source="human")
        assert summary.done == 4
        rest = run(small_arena, server, Selection(suite="taxonomy"), source="human")
    assert (rest.done, rest.skipped) == (2, 4)
    votes = votes_frame(db)
    judge_votes, human_votes = votes[votes.voter_kind == "judge"], votes[votes.voter_kind == "human"]
    assert sorted(judge_votes.pair_key) == sorted(human_votes.pair_key)
    sides = "SELECT prompt_id, left_image_id, right_image_id FROM battles WHERE id = ?"
    for row in judgments(db, task="pairwise"):
        assert (db.execute(sides, [row["battle_id"]]).fetchone()
                == db.execute(sides, [row["source_battle_id"]]).fetchone())
    assert rest.extra["human_agreement"] == {"n": 6, "agreement": 1.0}
    with pytest.raises(SelectionError, match="No human battle with a vote"):
        run(small_arena, server, Selection(suite="commonsense"), source="human")


def _model(db, image_id):
    return db.execute("SELECT m.name FROM images i JOIN models m ON m.id = i.model_id WHERE i.id = ?",
                      [image_id]).fetchone()[0]


def test_a_run_stopped_halfway_and_restarted_repeats_no_request(small_arena):
    db = small_arena.db
    plans = plan_drawn(db, small_arena.media, TAXONOMY, count=12)
    with FakeServer(preference_judge(db, RANKING), latency=0.1) as server:
        async def judge(stop_after=None):
            async with Engine(db, engine_config(server, concurrency=2), env={}) as engine:
                if stop_after:
                    asyncio.get_running_loop().call_later(stop_after, engine.stop)
                return await judge_battles(db, engine, plans, judge="j:m", progress=False, handle_signals=False)

        stopped = asyncio.run(judge(stop_after=0.25))
        assert 0 < stopped.done < 12 and stopped.stopped > 0
        resumed = asyncio.run(judge())
        digests = [r.digest for r in server.received]
    assert resumed.skipped == stopped.done and stopped.done + resumed.done == 12
    assert len(digests) == len(set(digests)) == 24  # every request sent exactly once
    assert len(votes_frame(db)) == 12


def test_dry_run_counts_requests_and_cost_and_writes_nothing(small_arena):
    with FakeServer(preference_judge(small_arena.db, RANKING)) as server:
        summary = run(small_arena, server, Selection(suite="taxonomy", limit=5), dry_run=True)
        assert server.received == []
    assert (summary.planned_requests, summary.done) == (10, 0)
    assert summary.planned_cost_usd > 0
    assert "requests: 10 to send, 0 answered by the cache" in "\n".join(summary.lines())
    assert small_arena.db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0
