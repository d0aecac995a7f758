"""The study planner's line and the warm-up marker on the leaderboard page, in a real browser at both sizes: a fifth
model added after 700 votes shows its interval as provisional until 200 battles, and the page says how many more
votes every interval needs. Photographed into ``ARENA_PLAN_SCREENSHOTS`` (default ``.cache/screenshots-plan``)."""

from __future__ import annotations

import random

import pytest
from support import browser as browsers
from support.arena import build_small_arena, make_image, render_all
from support.browser import SIZES, leaderboard_summary, open_page
from support.webapp import running_app

from datamodel.annotators import sign_in
from datamodel.catalog import add_image, add_model
from datamodel.votes import record_vote
from sampling.draws import draw_uniform, serve_battle

SCREENSHOTS = browsers.screenshot_folder("ARENA_PLAN_SCREENSHOTS", ".cache/screenshots-plan")


def _cast(db, voter, rng, votes, *, only=None):
    """``votes`` uniform battles voted on (only those that show model id ``only``, if given)."""
    cast = 0
    while cast < votes:
        pairing = draw_uniform(db, rng)
        if only is not None:
            shown = {row[0] for row in db.execute("SELECT model_id FROM images WHERE id IN (?, ?)",
                                                  [pairing.left_image_id, pairing.right_image_id])}
            if only not in shown:
                continue
        battle = serve_battle(db, rng, session_id="s", annotator_id=voter, pairing=pairing)
        record_vote(db, battle.id, rng.choice(["A", "A", "B", "tie"]), session_id="s", rules=None)
        cast += 1


@pytest.mark.parametrize("size", SIZES)
def test_the_page_says_how_many_more_votes_and_marks_a_warming_model(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    db = arena.db
    voter = sign_in(db, "planner", "token-for-planner", open_signup=True).id
    rng = random.Random(3)
    _cast(db, voter, rng, 700)
    newcomer = add_model(db, "echo-model")
    for p, prompt_id in enumerate(arena.prompt_ids):
        add_image(db, prompt_id=prompt_id, model_id=newcomer, stored=arena.media.put_image(make_image(4, p)))
    render_all(db, arena.media, arena.settings)
    _cast(db, voter, rng, 30, only=newcomer)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "730 human votes")
        page.wait_for_function("() => document.querySelector('#lb-table').innerText.includes("
                               "'warming up: 30/200 battles')", timeout=10000)
        line = page.locator("text=more votes until every interval is within ±15").first
        line.wait_for(timeout=20000)
        page.wait_for_selector("#lb-chart .js-plotly-plot", timeout=20000)
        # one read in the page (the summary may be re-rendered between two calls: bounding_box() then gave None)
        width = line.evaluate("e => e.offsetParent === null ? 0 : e.getBoundingClientRect().width")
        assert 0 < width <= SIZES[size]["width"]
        browsers.shoot(page, SCREENSHOTS, size, "plan-line-and-warming-model", full_page=True)
        page.close()
