"""An annotator is not shown a prompt again while the suite has prompts they have not seen.

Voting reveals the two models, and a prompt shown again shows the same images (their bytes carry the reveal), so
the draws leave out the prompts an annotator already voted on as long as unseen ones remain, then serve the least
seen; a replica (a battle re-served for inter-annotator agreement) is never of a prompt the annotator saw.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import astuple

import numpy as np
import pytest
from support.arena import MODELS, SmallArena, from_template, make_image, render_all

from arena import session as sessions
from core.settings import Settings
from datamodel.battles import Pairing
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from sampling.draws import Replica, draw_pairing, draw_uniform, serve_battle
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats

pytestmark = pytest.mark.both_engines

PROMPTS = 40


def build_wide_arena(root) -> SmallArena:
    """40 prompts (30 taxonomy, 10 commonsense), each with an image of three models."""
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", demo=False)
    db = connect(settings.db_path)
    media = MediaStore(settings.media_dir)
    specs = [PromptSpec("taxonomy" if p < 30 else "commonsense", f"item-{p}", f"An image of thing {p}")
             for p in range(PROMPTS)]
    prompt_ids = add_prompts(db, specs).ids
    model_ids = {name: add_model(db, name) for name in MODELS[:3]}
    for m, model_id in enumerate(model_ids.values()):
        for p, prompt_id in enumerate(prompt_ids):
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(m, p)))
    render_all(db, media)
    return SmallArena(settings, db, media, prompt_ids, model_ids)


@pytest.fixture
def wide_arena(tmp_path):
    arena = from_template(("wide arena",), build_wide_arena, tmp_path)
    yield arena.db
    arena.db.close()


def samplers(strategy: str) -> dict[str, sessions.Sampler]:
    """The sampler a server builds (shared stats and pool) and the bare default one of the session functions."""
    return {"server": sessions.Sampler(strategy, SamplingStats(), PromptPool()),
            "bare": sessions.Sampler(strategy)}


def walk(db, votes: int, sampler: sessions.Sampler, *, in_vote: bool, seed: int = 0, name: str = "walker",
         suite: str | None = None) -> list[int]:
    """The prompts one annotator votes on in ``votes`` votes through the session functions, the next battle drawn
    inside the vote's transaction (``in_vote``, as the web page does) or by :func:`arena.session.next_battle`."""
    rng = random.Random(seed)
    s = sessions.start(db, name, "token-001", open_signup=True)
    s = sessions.next_battle(db, rng, s, suite=suite, sampler=sampler)
    prompts = []
    for _ in range(votes):
        assert s.battle is not None
        prompts.append(s.battle.prompt_id)
        s = sessions.vote(db, s, rng.choice(["A", "B", "tie"]), rules=None, rng=rng if in_vote else None,
                          suite=suite, sampler=sampler)
        assert (s.upcoming is not None) == in_vote
        s = sessions.next_battle(db, rng, s, suite=suite, sampler=sampler)
    return prompts


def repeats(prompts: list[int]) -> int:
    return len(prompts) - len(set(prompts))


def test_a_30_vote_walk_sees_no_prompt_twice(wide_arena):
    """The issue's walk: uniform draws, the next battle loaded by next_battle."""
    prompts = walk(wide_arena, 30, sessions.Sampler("uniform", pool=PromptPool()), in_vote=False)
    assert repeats(prompts) == 0, f"{repeats(prompts)} repeated prompts in 30 votes over {PROMPTS} prompts"


@pytest.mark.parametrize("strategy", ["uniform", "balanced", "active"])
@pytest.mark.parametrize("in_vote", [False, True], ids=["next_battle", "in-vote"])
@pytest.mark.parametrize("kind", ["server", "bare"])
def test_no_repeat_under_every_strategy_and_path(wide_arena, strategy, in_vote, kind):
    for seed in range(2):
        prompts = walk(wide_arena, 30, samplers(strategy)[kind], in_vote=in_vote, seed=seed, name=f"w{seed}")
        assert repeats(prompts) == 0, f"seed {seed}: {repeats(prompts)} repeats in {prompts}"


@pytest.mark.parametrize("strategy", ["uniform", "balanced", "active"])
def test_no_repeat_within_a_suite(wide_arena, strategy):
    """Within the chosen suite (10 commonsense prompts): 10 distinct, then each prompt a second time."""
    prompts = walk(wide_arena, 20, samplers(strategy)["server"], in_vote=True, suite="commonsense")
    assert len(set(prompts[:10])) == 10 and len(set(prompts[10:])) == 10


@pytest.mark.parametrize("strategy", ["uniform", "balanced", "active"])
@pytest.mark.parametrize("in_vote", [False, True], ids=["next_battle", "in-vote"])
def test_when_every_prompt_is_seen_the_least_seen_are_served(small_arena, strategy, in_vote):
    """Five prompts, 23 votes: the draws never refuse, every prompt is seen once before any twice (and so on), and
    no prompt comes twice in a row."""
    db = small_arena.db
    prompts = walk(db, 23, samplers(strategy)["server"], in_vote=in_vote)
    n = len(small_arena.prompt_ids)
    for round_start in range(0, len(prompts), n):
        assert len(set(prompts[round_start:round_start + n])) == len(prompts[round_start:round_start + n])
    assert all(a != b for a, b in zip(prompts, prompts[1:]))
    assert max(Counter(prompts).values()) - min(Counter(prompts).values()) <= 1


@pytest.mark.parametrize("strategy", ["balanced", "active"])
def test_a_pair_whose_prompts_were_all_seen_is_not_drawn(tmp_path, strategy):
    """A model with images of only the prompts the annotator saw: the pair-first draws pick among the pairs that
    still share a prompt they have not seen, instead of showing a seen prompt again."""
    from datamodel.votes import record_vote

    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    prompts = add_prompts(db, [PromptSpec("taxonomy", f"item-{p}", f"An image of thing {p}") for p in range(6)]).ids
    models = [add_model(db, name) for name in MODELS[:3]]
    for m, model_id in enumerate(models):
        for p, prompt_id in enumerate(prompts if m < 2 else prompts[:2]):  # the third model: two prompts only
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(make_image(m, p)))
    render_all(db, media)
    s = sessions.start(db, "seer", "token-for-tests", open_signup=True)
    rng = random.Random(1)
    for prompt_id in prompts[:2]:
        images = [row[0] for row in db.execute("SELECT id FROM images WHERE prompt_id = ? ORDER BY model_id",
                                               [prompt_id])]
        battle = serve_battle(db, rng, session_id=s.session_id, annotator_id=s.annotator.id,
                              pairing=Pairing(prompt_id, images[0], images[2]))
        record_vote(db, battle.id, "A", session_id=s.session_id, rules=None)
    stats, pool = SamplingStats(), PromptPool()
    drawn = [draw_pairing(db, random.Random(seed), strategy, stats=stats, annotator_id=s.annotator.id, pool=pool)
             for seed in range(40)]
    assert {pairing.prompt_id for pairing in drawn} <= set(prompts[2:])
    assert {pairing.prompt_id for pairing in [draw_pairing(db, random.Random(seed), strategy, stats=stats, pool=pool)
                                              for seed in range(40)]} & set(prompts[:2])  # others may see them
    db.close()


def test_two_tabs_of_one_annotator_share_what_they_saw(wide_arena):
    """Votes cast in one tab (session) are left out of the other's draws, and so are votes recorded outside the
    session functions (another server process)."""
    from datamodel.votes import record_vote

    db, sampler = wide_arena, sessions.Sampler("uniform", pool=PromptPool())
    rng = random.Random(3)
    tabs = [sessions.start(db, "tabby", "token-001", open_signup=True) for _ in range(2)]
    prompts = []
    for step in range(24):
        s = sessions.next_battle(db, rng, tabs[step % 2], sampler=sampler)
        prompts.append(s.battle.prompt_id)
        tabs[step % 2] = sessions.vote(db, s, "A", rules=None, sampler=sampler)
        if step % 6 == 5:  # straight through the data model, as another process would
            battle = serve_battle(db, rng, session_id="elsewhere", annotator_id=s.annotator.id, pool=sampler.pool)
            prompts.append(battle.prompt_id)
            record_vote(db, battle.id, "B", session_id="elsewhere", rules=None)
    assert len(prompts) == 28 and repeats(prompts) == 0, prompts


def test_annotators_forgotten_by_the_server_are_read_again(wide_arena):
    """A server keeps what a bounded number of annotators saw; one it forgot is read again from the votes."""
    from sampling.prompt_pool import SeenPrompts

    pool = PromptPool()
    pool.seen = SeenPrompts(annotators=1)
    sampler, rng = sessions.Sampler("uniform", pool=pool), random.Random(2)
    people = [sessions.start(wide_arena, name, "token-for-tests", open_signup=True) for name in ("ann", "ben")]
    prompts = {0: [], 1: []}
    for step in range(30):
        s = sessions.next_battle(wide_arena, rng, people[step % 2], sampler=sampler)
        prompts[step % 2].append(s.battle.prompt_id)
        people[step % 2] = sessions.vote(wide_arena, s, "tie", rules=None, rng=rng, sampler=sampler)
    assert repeats(prompts[0]) == repeats(prompts[1]) == 0


def test_a_replica_is_never_of_a_prompt_the_annotator_saw(small_arena, monkeypatch):
    """Alice votes on two battles of every prompt; Bob, drawing only replicas where he can, gets one replica per
    prompt (never a second battle of a prompt he saw, nor the battle he just voted on), then fresh battles."""
    import sampling.draws
    from datamodel.votes import record_vote

    replicas = []

    def spy(*args, **kwargs):
        replica = draw_replica(*args, **kwargs)
        replicas.append(replica)
        return replica

    draw_replica = sampling.draws.draw_replica
    monkeypatch.setattr(sampling.draws, "draw_replica", spy)
    db = small_arena.db
    stats, pool = SamplingStats(), PromptPool()
    alice = sessions.start(db, "alice", "token-001", open_signup=True)
    bob = sessions.start(db, "bob", "token-001", open_signup=True)
    rng = random.Random(0)
    for prompt_id in small_arena.prompt_ids:
        images = [row[0] for row in db.execute("SELECT id FROM images WHERE prompt_id = ? ORDER BY model_id",
                                               [prompt_id])]
        for left, right in ((images[0], images[1]), (images[2], images[3])):
            battle = serve_battle(db, rng, session_id=alice.session_id, annotator_id=alice.annotator.id,
                                  pairing=Pairing(prompt_id, left, right))
            record_vote(db, battle.id, "A", session_id=alice.session_id, rules=None)
    sampler = sessions.Sampler("balanced", stats, pool, replication_share=1.0)
    s, shown = sessions.next_battle(db, rng, bob, sampler=sampler), []
    seen = 0  # the spy's calls up to the battle before: a battle on screen is a replica if a draw since returned it
    for _ in range(len(small_arena.prompt_ids) + 3):
        drawn = Pairing(s.battle.prompt_id, s.battle.left.image_id, s.battle.right.image_id)
        # (a fresh battle may show the same two images as an earlier replica: matching every replica ever drawn
        # took it for one when the draws, whose counts follow the clock, went that way)
        since, seen = replicas[seen:], len(replicas)
        shown.append((s.battle.prompt_id, any(r is not None and Pairing(*astuple(r)) == drawn for r in since)))
        s = sessions.vote(db, s, "B", rules=None, rng=rng, sampler=sampler)
        s = sessions.next_battle(db, rng, s, sampler=sampler)
    n = len(small_arena.prompt_ids)
    assert [replica for _, replica in shown[:n]] == [True] * n, shown  # replicas while bob has unseen prompts
    assert repeats([prompt for prompt, _ in shown[:n]]) == 0, shown
    assert not any(replica for _, replica in shown[n:]), shown  # the battles left are of prompts he saw
    for seed in range(20):  # the draw itself, asked for a replica every time
        pairing = draw_pairing(db, random.Random(seed), "active", stats=stats, annotator_id=bob.annotator.id,
                               replication_share=1.0, pool=pool)
        assert not isinstance(pairing, Replica)
    assert isinstance(draw_pairing(db, random.Random(0), "active", stats=stats, annotator_id=None,
                                   replication_share=1.0, pool=pool), Replica)  # others still get them
    kept, read = stats.tables.battles, SamplingStats().refresh(db, force=True).tables.battles
    assert np.trim_zeros(kept._by_prompt, "b").tolist() == np.trim_zeros(read._by_prompt, "b").tolist()


def test_judges_draws_are_unchanged(small_arena):
    """Judges have no annotator: their draws are the published protocol's, whatever anyone voted."""
    db, pool = small_arena.db, PromptPool()
    expected = [draw_uniform(db, random.Random(9)) for _ in range(5)]
    walk(db, 6, sessions.Sampler("uniform", pool=pool), in_vote=True)
    judged = [serve_battle(db, random.Random(9), session_id="j", judge="judge-1", pool=pool) for _ in range(5)]
    assert [(b.prompt_id, b.left.image_id, b.right.image_id) for b in judged] == \
        [(p.prompt_id, p.left_image_id, p.right_image_id) for p in expected]


def test_seen_prompts_merge_votes_read_in_any_batches():
    """What an annotator saw is the same whether their votes are read at once or a few at a time."""
    from sampling.prompt_pool import SeenPrompts

    rng = random.Random(4)
    votes = [(vote_id, rng.randint(1, 30)) for vote_id in range(1, 200)]

    def grouped(batch):
        rows = {}
        for vote_id, prompt in batch:
            count, _ = rows.get(prompt, (0, 0))
            rows[prompt] = (count + 1, vote_id)
        return [(prompt, *rows[prompt]) for prompt in sorted(rows)]

    at_once = SeenPrompts.Seen().plus(grouped(votes))
    seen, start = SeenPrompts.Seen(), 0
    while start < len(votes):
        size = rng.choice([1, 1, 2, 5, 17])
        seen, start = seen.plus(grouped(votes[start:start + size])), start + size
    counts = Counter(prompt for _, prompt in votes)
    for result in (at_once, seen):
        assert result.prompt_ids.tolist() == sorted(counts) and result.through == 199
        assert result.counts.tolist() == [counts[p] for p in sorted(counts)]
        assert result.latest.tolist() == [max(v for v, q in votes if q == p) for p in sorted(counts)]
    candidates = np.arange(1, 33)
    assert candidates[seen.choosable(candidates)].tolist() == [p for p in range(1, 33) if p not in counts]
    full = SeenPrompts.Seen().plus(grouped(votes + [(200 + p, p) for p in range(1, 33)]))
    assert candidates[full.choosable(candidates)].tolist() == [31]  # seen once; 32 too, but 32 was seen last
