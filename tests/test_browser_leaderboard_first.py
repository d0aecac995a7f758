"""The leaderboard starts with the table (issue 41), in a real browser at 1280×800 and 390×844 (touch).

Before: its 11 filters and options sat above the table (on a desktop two rows of them filled the first screen, on a
phone only filters showed); visitors read command lines ("run `python -m judges metrics`"); a non-date typed in
"As of" turned every panel into a bare red "Error" badge; the Judges sub-tab had lowercase and snake_case headers
("shared battles", "kappa") and a second Refresh button.
"""

import contextlib
import re

import pytest
from support.arena import build_small_arena
from support.browser import open_leaderboard_filters, screenshot_folder
from support.touch import SIZES, served_page
from support.votes import add_votes

SHOTS = screenshot_folder("ARENA_ISSUE41_SCREENSHOTS", ".cache/screenshots-issue41")
LOWER_OR_SNAKE = re.compile(r"^[a-z]|\b[a-z]+_[a-z_]+\b")


def _shoot(page, size: str, name: str) -> None:
    (SHOTS / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / size / f"{name}.png"))


def _leaderboard(page) -> None:
    page.get_by_role("tab", name="Leaderboard").click()
    page.wait_for_function("() => document.querySelector('#lb-summary')?.innerText.includes('human votes')",
                           timeout=30000)
    page.wait_for_function("() => document.querySelectorAll('#lb-table [role=gridcell]').length > 3", timeout=20000)
    page.wait_for_timeout(400)


@contextlib.contextmanager
def _leaderboard_page(tmp_path, browser, size: str):
    """A page of a small arena with 36 human and 24 judge votes, on its Leaderboard tab."""
    arena = build_small_arena(tmp_path)
    add_votes(arena)
    with served_page(arena.settings, browser, size) as page:
        _leaderboard(page)
        yield page


@pytest.mark.parametrize("size", SIZES)
def test_the_leaderboard_starts_with_the_table(tmp_path, browser, size):
    with _leaderboard_page(tmp_path, browser, size) as page:
        _shoot(page, size, "leaderboard-01-first-screen")
        # the table's header and first rows on the first screen (150 px: its tool row, header and two rows), no menu
        # above it
        table_top = page.locator("#lb-table").bounding_box()["y"]
        assert table_top + 150 < page.viewport_size["height"], table_top
        above = page.evaluate("""(top) => [...document.querySelectorAll('input, button[role=switch], select')]
            .filter(e => e.closest('[id^=lb-]') && e.getClientRects().length && e.getBoundingClientRect().y < top)
            .map(e => e.closest('[id^=lb-]').id)""", table_top)
        assert above == [], above
        # the folded filters say what is applied, before and after a pick
        line = page.inner_text("#lb-filters")
        assert "none applied" in line, line
        open_leaderboard_filters(page)
        page.click("#lb-suite input")
        page.locator("ul[role=listbox] li[role=option]", has_text="WordNet taxonomy").first.click()
        page.wait_for_function("() => document.querySelector('#lb-filters').innerText"
                               ".includes('Suite: WordNet taxonomy')",
                               timeout=10000)
        _shoot(page, size, "leaderboard-02-filters-open")


@pytest.mark.parametrize("size", SIZES)
def test_a_visitor_reads_no_command_line_and_a_bad_day_in_words(tmp_path, browser, size):
    with _leaderboard_page(tmp_path, browser, size) as page:
        for name in ("Ratings", "Metrics", "Agreement", "Battles"):
            page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text=name).first.click()
            page.wait_for_timeout(300)
            text = page.inner_text("#lb-tabs") + page.inner_text("#lb-summary") + page.evaluate(
                "() => document.querySelector('#lb-details-text')?.textContent || ''")
            assert "python -m" not in text, (name, text[text.index("python -m") - 200:][:400])
        page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text="Ratings").first.click()
        # a day that is no date: one line that says how to write it, the tables kept, no "Error" badge
        open_leaderboard_filters(page)
        page.fill("#lb-as-of input", "last tuesday")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.querySelector('#lb-summary').innerText.includes('YYYY-MM-DD')",
                               timeout=15000)
        page.wait_for_timeout(500)
        _shoot(page, size, "leaderboard-03-bad-day")
        badges = page.evaluate("() => [...document.querySelectorAll("
                               "'.error, .toast-body.error, [data-testid=toast-body]')]"
                               ".filter(e => e.getClientRects().length).map(e => e.innerText.slice(0, 80))")
        assert badges == [], badges
        assert page.locator("#lb-table [role=gridcell]").count() > 3


@pytest.mark.parametrize("size", SIZES)
def test_the_judges_subtab_names_its_columns_in_words_with_one_refresh(tmp_path, browser, size):
    with _leaderboard_page(tmp_path, browser, size) as page:
        page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text="Judges").first.click()
        page.wait_for_function("() => document.querySelector('#lb-judges-note')?.innerText.length > 0", timeout=30000)
        page.wait_for_timeout(300)
        _shoot(page, size, "leaderboard-04-judges")
        for table in ("lb-judges", "lb-judges-ratings"):
            headers = page.evaluate(f"() => [...document.querySelectorAll('#{table} thead th')]"
                                    ".map(th => (th.querySelector('.header-content') || th).innerText.trim())"
                                    ".filter(t => t)")
            assert headers and not [h for h in headers if LOWER_OR_SNAKE.search(h)], headers
        refreshes = page.evaluate("() => [...document.querySelectorAll('button')]"
                                  ".filter(b => b.innerText.trim().startsWith('Refresh')).map(b => b.id)")
        assert len(set(refreshes)) <= 1, refreshes
