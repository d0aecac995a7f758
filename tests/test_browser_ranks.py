"""Ranks that respect the intervals, in a real browser at a desktop and a phone size (issue 44): the rank range beside
the rank, provisional and unranked rows greyed (never hidden, so a new study's board is not empty), the robustness
line under the board, and the Order by and Human column menus. Screenshots go to ``ARENA_RANKS_SCREENSHOTS``
(default ``.cache/screenshots-ranks``), one folder per size."""

from __future__ import annotations

import itertools

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES, leaderboard_summary
from support.votes import RANKING, add_votes, image_of, vote_on
from support.webapp import running_app

from datamodel.annotators import sign_in
from datamodel.battles import Pairing

SCREENSHOTS = browsers.screenshot_folder("ARENA_RANKS_SCREENSHOTS", ".cache/screenshots-ranks")
# the table's body rows as drawn (Gradio's virtual rows), each cell's text and computed style
ROWS = ("() => [...document.querySelectorAll('#lb-table .virtual-row')].map(row => [...row.querySelectorAll("
        "'[role=gridcell]')].map(cell => ({text: cell.innerText.trim(), style: getComputedStyle(cell).fontStyle, "
        "color: getComputedStyle(cell).color})))")
HEADERS = "() => [...document.querySelectorAll('#lb-table thead th')].map(th => th.innerText.trim()).filter(t => t)"


def more_votes(arena) -> None:
    """On top of add_votes (18 votes per model): 20 more alpha–bravo votes and 6 charlie–bravo votes, so with the
    thresholds 20 and 30 alpha and bravo are ranked, charlie provisional and delta unranked."""
    carol = sign_in(arena.db, "carol", "carol-token", open_signup=True)
    pairs = [("alpha-model", "bravo-model")] * 20 + [("charlie-model", "bravo-model")] * 6
    for n, ((better, worse), p) in enumerate(zip(pairs, itertools.cycle(range(3)))):
        prompt_id = arena.prompt_ids[p]
        left, right = (better, worse) if n % 2 else (worse, better)
        pairing = Pairing(prompt_id, image_of(arena.db, prompt_id, left), image_of(arena.db, prompt_id, right))
        wins = n % 4 != 3  # the better model wins three in four
        vote_on(arena.db, pairing, ("A" if left == better else "B") if wins else ("B" if left == better else "A"),
                annotator=carol)


def rows_by_model(page) -> dict[str, list[dict]]:
    return {row[2]["text"]: row for row in page.evaluate(ROWS) if len(row) > 2}


@pytest.mark.parametrize("size", SIZES)
def test_rank_ranges_grey_rows_and_the_robustness_line(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, min_votes=20, provisional_votes=30)
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "0 human votes")
        assert page.evaluate(HEADERS)[:3] == ["Rank", "Rank range", "Model"]
        browsers.shoot(page, SCREENSHOTS, size, "ranks-01-new-study", full_page=True)

        add_votes(arena)  # 18 votes per model: none ranked yet, every row greyed with its rating
        browsers.open_leaderboard_filters(page)
        page.click("#lb-refresh")
        leaderboard_summary(page, "36 human votes")
        page.wait_for_function("() => document.querySelector('#lb-summary').innerText.includes('none is ranked')",
                               timeout=20000)
        rows = rows_by_model(page)
        assert set(rows) == set(RANKING)
        assert all(row[0]["text"] == "" and row[3]["text"].isdigit() and row[4]["text"].startswith("[")
                   for row in rows.values())  # no rank, but a rating and its interval
        assert all(row[2]["style"] == "italic" for row in rows.values())
        browsers.shoot(page, SCREENSHOTS, size, "ranks-02-none-ranked", full_page=True)

        more_votes(arena)
        browsers.open_leaderboard_filters(page)
        page.click("#lb-refresh")
        leaderboard_summary(page, "62 human votes")
        page.wait_for_function("() => document.querySelector('#lb-table-note').innerText.includes('By rating, the #1')",
                               timeout=20000)
        rows = rows_by_model(page)
        firm, provisional, unranked = rows["alpha-model"], rows["charlie-model"], rows["delta-model"]
        assert firm[0]["text"] == "1" and firm[1]["text"] and firm[2]["style"] == "normal"
        assert provisional[0]["text"].isdigit() and provisional[1]["text"] and provisional[2]["style"] == "italic"
        assert unranked[0]["text"] == "" and unranked[1]["text"] == "" and unranked[2]["style"] == "italic"
        assert unranked[2]["color"] != firm[2]["color"]  # greyed
        assert list(rows)[-1] == "delta-model"  # the unranked row last, not hidden
        note = page.inner_text("#lb-table-note")
        assert "By rating, the #1 (alpha-model) changes if" in note and "votes are dropped" in note
        assert "Grey rows: provisional (fewer than 30 votes" in note
        page.locator("#lb-table-note").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "ranks-03-ranked-provisional-unranked", full_page=True)

        page.click("#lb-summary")
        browsers.open_leaderboard_filters(page)
        page.click("#lb-order input")
        page.locator("ul[role=listbox] li[role=option][aria-label='Lower bound of the 95% interval']").first.click()
        page.wait_for_function("() => document.querySelector('#lb-table-note').innerText.includes("
                               "'ordered by the lower bound')", timeout=20000)
        browsers.shoot(page, SCREENSHOTS, size, "ranks-04-by-lower-bound", full_page=True)
