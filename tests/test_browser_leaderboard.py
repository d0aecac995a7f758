"""The leaderboard in a real browser (Debian chromium via playwright), at a desktop and a phone size (issue 17, items
7 and 8): a compact table that shows every row without scrolling inside it, short numbers, no judge columns without
judge votes, unranked models without a rank (greyed, with their ratings: issue 44), a chart bounded to the ranked
models, ranks explained, panels that say why they are empty and filter menus that follow the chosen suite. Every
state is photographed into ``ARENA_LEADERBOARD_SCREENSHOTS`` (default ``.cache/screenshots-leaderboard``, git
ignored), one folder per size.
"""

import random
import re

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES, leaderboard_summary
from support.votes import add_votes
from support.webapp import running_app

SCREENSHOTS = browsers.screenshot_folder("ARENA_LEADERBOARD_SCREENSHOTS", ".cache/screenshots-leaderboard")
MAIN = ["Rank", "Rank range", "Model", "Rating", "95% interval", "Votes", "Both bad"]
HEADERS = "() => [...document.querySelectorAll('#lb-table thead th')].map(th => th.innerText.trim()).filter(t => t)"
# every element of the table that scrolls vertically (a hidden last row): none may
INNER_SCROLL = ("() => [...document.querySelectorAll('#lb-table *')].filter(e => e.scrollHeight > e.clientHeight + 2"
                " && ['auto', 'scroll'].includes(getComputedStyle(e).overflowY)).length")
TALL_HEADERS = ("() => [...document.querySelectorAll('#lb-table thead th')].filter(th => th.innerText.trim())"
                ".filter(th => th.getBoundingClientRect().height > 60).map(th => th.innerText)")
Y_RANGE = "() => document.querySelector('#lb-chart .js-plotly-plot')._fullLayout.yaxis.range"


def shoot(page, size: str, name: str) -> None:
    """A screenshot of the whole page as it is now, kept for a person to look at."""
    browsers.shoot(page, SCREENSHOTS, size, name, full_page=True)


def _pick(page, menu: str, value: str) -> None:
    """Choose ``value`` in the Gradio dropdown ``#lb-<menu>``."""
    page.click("#lb-summary")
    browsers.open_leaderboard_filters(page)
    page.click(f"#lb-{menu} input")
    page.locator(f"ul[role=listbox] li[role=option][aria-label={value!r}]").first.click()
    page.wait_for_timeout(300)


def _subtab(page, name: str) -> None:
    """Open the leaderboard's sub-tab ``name``: from the tab bar, or from its "More tabs" menu on a narrow screen."""
    tab = page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text=name)
    if tab.count() and tab.first.is_visible():
        tab.first.click()
    else:
        page.click("#lb-tabs button[aria-label='More tabs']")
        page.locator("#lb-tabs .overflow-dropdown button", has_text=name).first.click()
    page.wait_for_timeout(500)


def _options(page, menu: str) -> list[str]:
    page.click("#lb-summary")  # away from any open menu, then open this one
    page.wait_for_timeout(200)
    page.click(f"#lb-{menu} input")
    page.wait_for_selector("ul[role=listbox] li[role=option]", timeout=5000)
    options = page.evaluate("() => [...document.querySelectorAll('ul[role=listbox] li[role=option]')]"
                            ".map(li => li.getAttribute('aria-label'))")
    page.click("#lb-summary")
    browsers.open_leaderboard_filters(page)
    page.wait_for_timeout(200)
    return options


@pytest.mark.parametrize("size", SIZES)
def test_the_leaderboard_reads_well_with_few_votes_and_with_many(tmp_path, browser, size):
    from arena import session as sessions

    arena = build_small_arena(tmp_path, min_votes=10, provisional_votes=10)  # the thresholds this view was made for
    s = sessions.start(arena.db, "voter", "token-001", open_signup=True)
    for i in range(6):  # a handful of human votes and no judge votes (the 5-vote view)
        s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), s), "A")
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "6 human votes")
        page.wait_for_selector("#lb-chart .js-plotly-plot", timeout=20000)
        shoot(page, size, "lb-01-few-votes")
        # item 7: a compact table, no judge columns without judge votes, headers on one line, every row shown
        assert page.evaluate(HEADERS) == MAIN
        assert page.evaluate(TALL_HEADERS) == []
        table = page.inner_text("#lb-table")
        assert all(name in table for name in arena.model_ids)
        assert page.evaluate(INNER_SCROLL) == 0
        assert not re.search(r"\d{6,}|\d\.\d{4,}", table), table
        # item 8: nobody has enough votes: unranked, greyed with their ratings (issue 44), none on the chart, ranks
        # explained
        assert re.search(r"\[-?\d+, \d+\]", table)
        assert "No model has enough votes" in page.inner_text("#lb-chart")
        assert "Rank = 1 + the number of ranked models" in page.inner_text("#lb-table-note")
        page.locator("#lb-table-note").scroll_into_view_if_needed()
        shoot(page, size, "lb-02-few-votes-note-and-chart")
        # item 7: the human-vs-judge matrix says why it is empty rather than showing a grid of zeros
        _subtab(page, "Agreement")
        page.wait_for_selector("#lb-confusion .js-plotly-plot", timeout=20000)
        assert "No judge votes" in page.inner_text("#lb-confusion")
        shoot(page, size, "lb-03-agreement-empty")
        _subtab(page, "Metrics")
        page.wait_for_timeout(300)
        assert "No automatic metric" in page.inner_text("#lb-metrics-note")
        shoot(page, size, "lb-04-metrics-empty")
        _subtab(page, "Ratings")

        # item 7: the menus follow the suite; a subset the suite lacks goes back to All
        _pick(page, "subset", "Easy")
        _pick(page, "suite", "Commonsense-T2I")  # the suites by their titles (issue 29)
        page.wait_for_function("() => document.querySelector('#lb-subset input').value === 'All'", timeout=20000)
        assert "Easy" not in _options(page, "subset") and "Physical Laws" in _options(page, "subset")
        page.wait_for_timeout(1000)
        shoot(page, size, "lb-05-suite-commonsense")
        _pick(page, "suite", "All")
        page.wait_for_function("() => document.querySelector('#lb-suite input').value === 'All'", timeout=20000)

        # many votes, judges too: judge columns, rated models, an axis bounded to them
        add_votes(arena)
        browsers.open_leaderboard_filters(page)
        page.click("#lb-refresh")
        leaderboard_summary(page, "42 human votes")
        page.wait_for_function("() => document.querySelectorAll('#lb-table thead th').length > 7", timeout=20000)
        assert page.evaluate(HEADERS) == [*MAIN, "Judge Rank", "Judge Rank range", "Judge Rating", "Judge 95% interval",
                                          "Judge Votes"]
        assert page.evaluate(INNER_SCROLL) == 0
        table = page.inner_text("#lb-table")
        assert not re.search(r"\d{6,}|\d\.\d{4,}", table), table
        assert re.search(r"\[\d+, \d+\]", table)
        page.wait_for_function("() => document.querySelector('#lb-chart .js-plotly-plot')?.data?.[0]?.x?.length > 0",
                               timeout=20000)
        low, high = page.evaluate(Y_RANGE)
        assert -200 < low and high < 2200, (low, high)
        shoot(page, size, "lb-06-many-votes")
        page.locator("#lb-chart").scroll_into_view_if_needed()
        shoot(page, size, "lb-07-many-votes-chart")
        _subtab(page, "Agreement")
        page.wait_for_selector("#lb-confusion .js-plotly-plot", state="visible", timeout=20000)
        shoot(page, size, "lb-08-agreement")
        _subtab(page, "Battles")
        page.wait_for_selector("#lb-wins .js-plotly-plot", state="visible", timeout=20000)
        shoot(page, size, "lb-09-battles")


# every header cell of a table with text, as (text, title); gradio sets a cell's title to its own text by default
HEADER_TITLES = ("(id) => [...document.querySelectorAll(`#${id} thead th`)].map(th => [(th.querySelector("
                 "'.header-content') || th).innerText.trim(), th.getAttribute('title') || ''])"
                 ".filter(([text]) => text)")
# every chart on screen: its id, the right edge of its box and the rightmost edge of anything drawn in it (titles and
# labels included: Plotly does not wrap a long title, it runs past the chart and is cut)
CHART_RIGHTS = ("() => [...document.querySelectorAll('.js-plotly-plot')]"
                ".filter(p => p.getBoundingClientRect().width > 0).map(p => [p.closest('[id]').id, "
                "Math.round(p.getBoundingClientRect().right), Math.round(Math.max("
                "...[...p.querySelectorAll('.main-svg, text')].map(e => e.getBoundingClientRect())"
                ".filter(r => r.width > 0).map(r => r.right)))])")


def _fit(page, width: int) -> None:
    """Every chart on screen within the screen's width, and nothing in it drawn past its right edge."""
    charts = page.evaluate(CHART_RIGHTS)
    assert charts, "no chart on screen"
    for chart, right, drawn in charts:
        assert right <= width and drawn <= right + 1, f"{chart} is cut: box to {right}, drawn to {drawn} of {width}"


def _titles(page, table: str) -> dict[str, str]:
    """{header text: its tooltip} of the table ``#<table>``, once its headers are drawn; each header hovered."""
    page.wait_for_function(f"() => document.querySelectorAll('#{table} thead th').length > 1", timeout=20000)
    page.wait_for_timeout(300)
    for cell in page.locator(f"#{table} thead th").all():
        if cell.is_visible() and cell.inner_text().strip():
            cell.scroll_into_view_if_needed()
            cell.hover()
    return dict(page.evaluate(HEADER_TITLES, table))


@pytest.mark.parametrize("size", SIZES)
def test_short_headers_have_tooltips_and_charts_fit_the_screen(tmp_path, browser, size):
    """Issue 17: the Metrics and Agreement tables' short headers each explain themselves on hover (the full name
    and, for a metric, which way is better), and no chart is cut at the right edge of a phone's screen."""
    from support.votes import store_metrics

    arena = build_small_arena(tmp_path, min_votes=10)  # 18 votes per model: ranked, on the chart
    width = SIZES[size]["width"]
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "Updated")
        for tab in ("Agreement", "Battles", "Ratings"):  # every chart drawn once while empty, then hidden
            _subtab(page, tab)
        add_votes(arena)
        store_metrics(arena)
        browsers.open_leaderboard_filters(page)
        page.click("#lb-refresh")  # the new charts reach the hidden sub-tabs too
        leaderboard_summary(page, "36 human votes")
        page.wait_for_function("() => document.querySelector('#lb-chart .js-plotly-plot')?.data?.[0]?.x?.length > 0",
                               timeout=20000)
        page.wait_for_timeout(500)
        _fit(page, width)
        main = _titles(page, "lb-table")
        assert "Bradley–Terry" in main["Rating"] and "bootstrap" in main["95% interval"], main
        _subtab(page, "Metrics")
        metrics = _titles(page, "lb-metrics")
        shoot(page, size, "lb-10-metrics-tooltips")
        # plain labels with the better direction's arrow where the board knows it (issue 29)
        label = {short: next((h for h in metrics if h.startswith(short)), None) for short in ("CLIP", "FID", "Reward")}
        assert all(label.values()), list(metrics)
        for header, title in metrics.items():
            assert title and title != header, f"header {header!r} has no tooltip of its own"
        assert "CLIP" in metrics[label["CLIP"]] and "higher is better" in metrics[label["CLIP"]]
        assert "Fréchet Inception Distance" in metrics[label["FID"]] and "lower is better" in metrics[label["FID"]]
        correlations = _titles(page, "lb-correlations")
        assert "Spearman" in correlations["Spearman ρ"] and "p-value" in correlations["Spearman p"], correlations
        assert all(title and title != header for header, title in correlations.items()), correlations
        _subtab(page, "Agreement")
        page.wait_for_timeout(800)
        _fit(page, width)
        bias = _titles(page, "lb-bias")
        assert "first position" in bias["A won"] and "p-value" in bias["p-value"], bias
        pairs = _titles(page, "lb-annotator-pairs")
        assert "Cohen" in pairs["Cohen's κ"], pairs
        for table in (bias, pairs):
            assert all(title and title != header for header, title in table.items()), table
        page.locator("#lb-bias").scroll_into_view_if_needed()
        shoot(page, size, "lb-11-agreement-tooltips")
        _subtab(page, "Battles")
        page.wait_for_timeout(800)
        _fit(page, width)
        shoot(page, size, "lb-12-battles-fit")
