"""Plain labels everywhere on the leaderboard (issue 29), in a real browser at 1280×800 and 390×844 (touch).

What a maintainer met before: the Metrics footnote showed literal asterisks and "full names" that repeated the
snake_case names, the position-bias shares sat beside a vote count as decimals, headers and chart titles were
snake_case, five lines of jargon sat above every sub-tab ("1 battles", "1 pairs"), the zero-votes state said "Pick
other filters" with every filter at All, the suites were "commonsense"/"taxonomy" where the arena says
"Commonsense-T2I"/"WordNet taxonomy", the Judge column's value was cut ("The one with the most vo…"), the Judges
sub-tab ignored the filters above it, p-values from 4 models carried no caveat, and on the phone three sub-tabs hid
behind "•••" and Plotly's toolbar covered the charts' titles.
"""

import re

import pytest
from support.arena import build_small_arena
from support.browser import open_leaderboard_filters
from support.touch import SIZES, open_page, shoot
from support.votes import JUDGE, add_votes, store_metrics
from support.webapp import running_app

SNAKE = re.compile(r"\b[a-z]+_[a-z_]+\b")
ONE_PLURAL = re.compile(r"(?<![\d,.])1 (battles|pairs|votes|models|annotators)\b")


def _summary(page, text: str) -> None:
    page.wait_for_function(f"() => document.querySelector('#lb-summary')?.innerText.includes({text!r})",
                           timeout=30000)
    page.wait_for_timeout(300)


def _subtab(page, name: str) -> None:
    page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text=name).first.click()
    page.wait_for_timeout(500)


def _headers(page, table: str) -> list[str]:
    page.wait_for_function(f"() => document.querySelectorAll('#{table} thead th').length > 1", timeout=20000)
    return page.evaluate(f"() => [...document.querySelectorAll('#{table} thead th')]"
                         ".map(th => (th.querySelector('.header-content') || th).innerText.trim())"
                         ".filter(t => t)")


def _column(page, table: str, header: str) -> list[str]:
    """The cells of column ``header`` of the table ``#<table>`` (Gradio draws its rows as [role=row] of gridcells)."""
    return page.evaluate(f"""() => {{
      const heads = [...document.querySelectorAll('#{table} thead th')]
        .map(th => (th.querySelector('.header-content') || th).innerText.trim());
      const at = heads.indexOf({header!r});
      return [...document.querySelectorAll('#{table} [role=row]')].map(row => [...row.querySelectorAll(
        '[role=gridcell]')]).filter(cells => cells.length).map(cells => (cells[at] || {{}}).innerText);
    }}""")


def _options(page, menu: str) -> list[str]:
    page.click("#lb-summary")
    open_leaderboard_filters(page)
    page.click(f"#lb-{menu} input")
    page.wait_for_selector("ul[role=listbox] li[role=option]", timeout=5000)
    options = page.evaluate("() => [...document.querySelectorAll('ul[role=listbox] li[role=option]')]"
                            ".map(li => li.innerText.trim())")
    page.keyboard.press("Escape")
    page.click("#lb-summary")
    open_leaderboard_filters(page)
    return options


def _pick(page, menu: str, label: str) -> None:
    page.click("#lb-summary")
    open_leaderboard_filters(page)
    page.click(f"#lb-{menu} input")
    page.locator("ul[role=listbox] li[role=option]", has_text=label).first.click()
    page.wait_for_timeout(400)


@pytest.mark.parametrize("size", SIZES)
def test_the_leaderboard_speaks_plainly(tmp_path, browser, size):
    from datamodel.metrics import record_directions

    arena = build_small_arena(tmp_path)
    add_votes(arena)
    store_metrics(arena)
    record_directions(arena.db, {"clip_score": "higher", "reward": "higher", "fid": "lower"})
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Leaderboard").click()
        _summary(page, "36 human votes")
        page.wait_for_selector("#lb-chart .js-plotly-plot", timeout=20000)
        shoot(page, size, "labels-01-ratings", full_page=True)
        # one plain line; the statistics folded under it
        summary = page.inner_text("#lb-summary")
        assert "Bradley–Terry" not in summary and "Cohen" not in summary, summary
        assert page.locator("#lb-summary").bounding_box()["height"] < (60 if size == "desktop" else 130), summary
        assert not page.is_visible("#lb-details-text") or "Bradley" not in page.inner_text("#lb-details-text")
        page.locator("#lb-details").get_by_text("Statistics").first.click()
        page.wait_for_function("() => document.querySelector('#lb-details-text')?.innerText.includes('Bradley')",
                               timeout=5000)
        # the suites by the arena's names; the judge column's value whole
        assert {"Commonsense-T2I", "WordNet taxonomy"} <= set(_options(page, "suite"))
        assert page.evaluate("() => { const i = document.querySelector('#lb-judge input'); "
                             "return i.scrollWidth <= i.clientWidth + 1; }"), page.input_value("#lb-judge input")
        # every sub-tab in view on a phone too: none behind a "More tabs" menu
        assert page.locator("#lb-tabs button[aria-label='More tabs']:visible").count() == 0
        for name in ("Ratings", "Metrics", "Agreement", "Battles", "Judges"):
            assert page.locator("#lb-tabs [role=tablist] button[role=tab]:visible", has_text=name).count() == 1, name
        # Metrics: plain headers with the better direction, the note rendered, a caveat for few models
        _subtab(page, "Metrics")
        headers = _headers(page, "lb-metrics")
        shoot(page, size, "labels-02-metrics", full_page=True)
        assert not any(SNAKE.search(h) for h in headers), headers
        assert "FID ↓" in headers and any(h.startswith("CLIP score ↑") for h in headers), headers
        note = page.inner_text("#lb-metrics-note")
        assert "*" not in note and "`" not in note and "lower is better" in note, note
        correlations = _headers(page, "lb-correlations")
        assert not any(SNAKE.search(h) for h in correlations), correlations
        assert "rough guide" in page.inner_text("#lb-correlations-note")
        assert "FID ↓" in _column(page, "lb-correlations", correlations[0])
        # Agreement: shares as percentages, plain headers
        _subtab(page, "Agreement")
        bias = _headers(page, "lb-bias")
        shoot(page, size, "labels-03-agreement", full_page=True)
        assert not any(SNAKE.search(h) for h in bias), bias
        assert all(cell.endswith("%") for cell in _column(page, "lb-bias", "A won")), _column(page, "lb-bias", "A won")
        # every chart's title plain, and no Plotly toolbar over it on a phone
        titles = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                               ".map(t => t.textContent)")
        assert titles and not any(SNAKE.search(t) for t in titles), titles
        if size == "phone":
            assert page.evaluate("() => [...document.querySelectorAll('.modebar-container')]"
                                 ".filter(m => m.getClientRects().length > 0).length") == 0
        text = page.inner_text("#lb-tabs") + page.inner_text("#lb-summary") + page.inner_text("#lb-details-text")
        assert not ONE_PLURAL.search(text), ONE_PLURAL.search(text)
        # the Judges sub-tab follows the filters above it
        _subtab(page, "Judges")
        page.wait_for_function("() => document.querySelector('#lb-judges-note')?.innerText.includes('For every suite')",
                               timeout=30000)
        _pick(page, "suite", "WordNet taxonomy")
        page.wait_for_function("() => document.querySelector('#lb-judges-note')?.innerText"
                               ".includes('For Suite WordNet taxonomy')", timeout=30000)
        shoot(page, size, "labels-04-judges-filtered", full_page=True)
        scopes = {cell for cell in _column(page, "lb-judges", "Scope") if cell}
        assert scopes and all(scope.startswith("WordNet taxonomy") for scope in scopes), scopes
        assert JUDGE in _column(page, "lb-judges", "Judge")


@pytest.mark.parametrize("size", SIZES)
def test_an_empty_leaderboard_says_the_true_reason(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Leaderboard").click()
        _summary(page, "0 human votes")
        page.wait_for_function("() => document.querySelector('#lb-table-note')?.innerText.includes('No votes')",
                               timeout=20000)
        shoot(page, size, "labels-05-no-votes-yet", full_page=True)
        note = page.inner_text("#lb-table-note")
        assert "No votes yet" in note and "Pick other filters" not in note, note
        _pick(page, "suite", "Commonsense-T2I")
        page.wait_for_function("() => document.querySelector('#lb-table-note')?.innerText.includes('filters')",
                               timeout=20000)
        assert "No votes match these filters (Suite Commonsense-T2I)" in page.inner_text("#lb-table-note")
