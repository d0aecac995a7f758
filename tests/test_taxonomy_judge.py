"""The taxonomy paper's judge: Figure 7 word for word, one call per battle, one battle per concept in both variants."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.openai_stub import engine_config, preference_judge

from datamodel.vote_table import votes_frame
from judges.pairwise import concept_prompt, plan_items, run_pairwise
from judges.prompts import PAIRWISE_TEMPLATE, Templates
from judges.selection import Selection
from tools.fake_openai import FakeServer

PAPER = Path(__file__).resolve().parents[2] / "shared" / "reference" / "papers" / "taxonomy-image-generation.txt"
RANKING = {"alpha-model": 0, "bravo-model": 1, "charlie-model": 2, "delta-model": 3}


def test_the_published_template_is_figure_7_with_its_slips_and_the_projects_own_is_corrected():
    paper = Templates().pairwise_taxonomy_paper
    assert paper.count("[Start of the first image]") == 2 and paper.count("[End of the first image]") == 2
    assert "second" not in paper
    assert '"[[C]]" for a tie and "\n"[[D]]" if both images are bad.' in paper  # the stray quote of Fig. 7, l. 1042
    assert Templates().pairwise.count("[Start of the second image]") == 1
    if PAPER.is_file():  # every line of ours is in the figure as printed (its line breaks and margin numbers are the
        text = PAPER.read_text(encoding="utf-8")  # PDF's: dropped)
        figure = text[text.index("Please act as an impartial judge"):text.index("Figure 7:")]
        figure = " ".join(word for word in figure.split() if not (word.isdigit() and len(word) == 4))
        for sentence in paper.replace("{prompt}", "").replace("<image A>", "").replace("<image B>", "").split("\n"):
            words = " ".join(sentence.split())
            if words:
                assert words in figure, words


def test_concept_prompt_is_the_concept_with_its_definition_only_in_the_definition_variant(small_arena):
    plans = plan_items(small_arena.db, small_arena.media, Selection(suite="taxonomy"), seed=0)
    texts = {(plan.prompt, concept_prompt(plan)) for plan in plans}
    assert texts == {("An image of coin (a flat metal piece used as money)", "coin (a flat metal piece used as money)"),
                     ("An image of coin", "coin"), ("An image of sofa", "sofa")}


def test_one_battle_per_item_with_the_same_two_models_and_sides_in_every_variant(small_arena):
    plans = plan_items(small_arena.db, small_arena.media, Selection(suite="taxonomy"), seed=3)
    assert [plan.subject.rsplit(":", 1)[1] for plan in plans] == [
        "taxonomy/Easy/coin.n.01/with_definition", "taxonomy/Easy/coin.n.01/without_definition",
        "taxonomy/Easy/sofa.n.01/without_definition"]
    sides = {}
    for plan in plans:
        left, right = (small_arena.db.execute("SELECT model_id FROM images WHERE id = ?", [image]).fetchone()[0]
                       for image in (plan.pairing.left_image_id, plan.pairing.right_image_id))
        sides.setdefault(plan.subject.rsplit("/", 2)[1], set()).add((left, right))
        assert left != right
    assert len(sides["coin.n.01"]) == 1  # the same pair, the same sides, with and without the definition
    assert plans == plan_items(small_arena.db, small_arena.media, Selection(suite="taxonomy"), seed=3)
    drawn = {seed: [p.pairing for p in plan_items(small_arena.db, small_arena.media, Selection(suite="taxonomy"),
                                                   seed=seed)] for seed in range(6)}
    assert len({tuple(pairs) for pairs in drawn.values()}) > 1  # the seed draws the models
    assert len(plan_items(small_arena.db, small_arena.media, Selection(suite="taxonomy", limit=1))) == 2


def test_the_published_judge_asks_once_with_figure_7_and_the_concept(small_arena):
    templates = Templates().replace(pairwise=Templates().pairwise_taxonomy_paper)
    with FakeServer(preference_judge(small_arena.db, RANKING)) as server:
        summary = asyncio.run(run_pairwise(
            small_arena.db, small_arena.media, engine_config(server), Selection(suite="taxonomy"), source="items",
            single_order=True, user_prompt="concept", templates=templates, env={}, progress=False,
            handle_signals=False))
        received = list(server.received)
    assert (summary.done, len(received)) == (3, 3)  # one call per battle
    texts = [r.text for r in received]
    users = sorted(text.split("[User Prompt]\n", 1)[1].split("\n[Start of the first image]", 1)[0] for text in texts)
    assert users == ["coin", "coin (a flat metal piece used as money)", "sofa"]
    assert all(text.count("[Start of the first image]") == 2 for text in texts)
    voters = set(votes_frame(small_arena.db)["voter"])
    assert voters == {f"gpt-judge-single-order:gpt-4o-mini@{PAIRWISE_TEMPLATE.version(templates)}"}
