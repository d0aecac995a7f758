"""The leaderboard page says what it did with an imported record an import flagged (a self-battle), at a desktop and
a phone size. Screenshots: ``ARENA_FLAGGED_SCREENSHOTS`` (default ``.cache/screenshots-flagged``)."""

from __future__ import annotations

import json

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES, leaderboard_details
from support.webapp import running_app

from arena.vote_import import import_votes

SCREENSHOTS = browsers.screenshot_folder("ARENA_FLAGGED_SCREENSHOTS", ".cache/screenshots-flagged")


@pytest.mark.parametrize("size", SIZES)
def test_the_leaderboard_says_the_flagged_votes_it_left_out(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    models = sorted(arena.model_ids)
    records = [{"question_id": f"q{k}", "model_a": models[k % 4], "model_b": models[(k + 1) % 4],
                "winner": "model_a" if k % 3 else "model_b", "judge": f"user{k % 5}", "anony": True,
                "tstamp": 1717200000 + k} for k in range(40)]
    records.append({"question_id": "q40", "model_a": models[0], "model_b": models[0], "winner": "model_a",
                    "judge": "user1", "anony": False, "tstamp": 1717200040})
    log = tmp_path / "peer.json"
    log.write_text(json.dumps(records))
    assert import_votes(arena.db, log, "fastchat", source="peer").added == 41
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_details(page, "1 imported vote flagged (self_battle 1): left out of the fit")
        page.locator("#lb-details-text").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "flagged-votes", full_page=True)
