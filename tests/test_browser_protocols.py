"""The leaderboard's rating protocol, vote source and anonymous-only choices in a real browser, at a desktop and a
phone size, with the arena's own votes and an imported FastChat log. Screenshots go to
``ARENA_LEADERBOARD_SCREENSHOTS`` (default ``.cache/screenshots-leaderboard``, git ignored)."""

import json

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES, leaderboard_details, leaderboard_summary
from support.votes import add_votes
from support.webapp import running_app

from arena.vote_import import import_votes

SCREENSHOTS = browsers.screenshot_folder("ARENA_LEADERBOARD_SCREENSHOTS", ".cache/screenshots-leaderboard")


def shoot(page, size: str, name: str) -> None:
    """A screenshot of the whole page as it is now, kept for a person to look at."""
    browsers.shoot(page, SCREENSHOTS, size, name, full_page=True)


def _choose(page, menu: str, label_start: str) -> None:
    """Choose the option of dropdown ``#lb-<menu>`` whose label starts with ``label_start``."""
    page.click("#lb-summary")
    browsers.open_leaderboard_filters(page)
    page.click(f"#lb-{menu} input")
    page.locator(f"ul[role=listbox] li[role=option][aria-label^={label_start!r}]").first.click()
    page.wait_for_timeout(300)


@pytest.mark.parametrize("size", SIZES)
def test_protocol_source_and_anonymous_choices(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    add_votes(arena)
    models = sorted(arena.model_ids)
    battles = [{"question_id": f"q{i}", "model_a": models[i % 3], "model_b": models[(i + 1) % 3],
                "winner": ["model_a", "model_b", "tie", "model_a"][i % 4], "judge": f"user{i % 5}",
                "anony": i % 3 != 0, "tstamp": 1_700_000_000 + i} for i in range(60)]
    (tmp_path / "log.json").write_text(json.dumps(battles))
    import_votes(arena.db, tmp_path / "log.json", "fastchat", source="peer-arena")
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "96 human votes")
        leaderboard_details(page, "by source: arena 60, peer-arena 60")
        shoot(page, size, "lb-20-protocols-default")
        _choose(page, "protocol", "taxonomy-paper")
        leaderboard_summary(page, "the taxonomy-paper protocol")
        leaderboard_details(page, "Rating protocol taxonomy-paper")
        assert "truncated to integers" in page.text_content("#lb-details-text")
        shoot(page, size, "lb-21-protocol-taxonomy-paper")
        _choose(page, "source", "peer-arena")
        leaderboard_summary(page, "source peer-arena only")
        browsers.open_leaderboard_filters(page)
        page.click("#lb-anonymous label")
        leaderboard_summary(page, "anonymous votes only")
        summary = page.inner_text("#lb-summary")
        assert "40 human votes" in summary, summary  # the 60 battles less every third (not anonymous)
        table = page.inner_text("#lb-table")
        assert all(name in table for name in models[:3])
        shoot(page, size, "lb-22-peer-arena-anonymous")
