"""The leaderboard's tables on a phone (390×844, touch) and a desktop (1280×800), in a real browser.

Before: on the phone Gradio's monospace table gave Rank, Rank range and Model 291 of the table's 324 px, so the
Rating showed three digits ("126") and its 95% interval was off screen; and ``pinned_columns=3`` pinned nothing
(Gradio 6.31 draws no column sticky), so a reader who scrolled sideways to the intervals or the judge's columns lost
the model's name. Now, on a phone only, the tables are compact (the page's font, narrower padding, headers on two
lines), the model's name wraps within 7em and stays at the left edge while the other columns scroll under it.
Screenshots go to ``$ARENA_LEADERBOARD_PHONE_SCREENSHOTS`` (default ``.cache/screenshots-leaderboard-phone``).
"""

import pytest
from support.arena import build_small_arena
from support.browser import screenshot_folder
from support.touch import served_page
from support.votes import add_votes, store_metrics

SHOTS = screenshot_folder("ARENA_LEADERBOARD_PHONE_SCREENSHOTS", ".cache/screenshots-leaderboard-phone")
LONG_NAME = "stable-diffusion-3.5-large-turbo"  # as long as the names people give real models
FIRST_SCREEN = ("Rank", "Rank range", "Model", "Rating", "95% interval")  # the phone's columns seen without scrolling
# The table ``id``'s scrolling box and, for each header text asked, the header's box and the first row's cell's box
# (viewport coordinates), with whether the cell's text is shown whole (not cut, no ellipsis).
BOXES = """([id, headers]) => {
  const table = document.getElementById(id), scroller = table.querySelector('.virtual-table-viewport');
  const box = (e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                      bottom: r.bottom, width: r.width}; };
  const ths = [...table.querySelectorAll('thead th')];
  const texts = ths.map(th => (th.querySelector('.header-content') || th).innerText.replace(/\\s+/g, ' ').trim());
  const columns = {};
  for (const header of headers) {
    const index = texts.indexOf(header);
    if (index < 0) { columns[header] = null; continue; }
    const cell = table.querySelector(`.virtual-row [data-row="0"][data-col="${index}"]`);
    const span = cell && cell.querySelector('span');
    columns[header] = {header: box(ths[index]), cell: cell && box(cell), text: span ? span.innerText : '',
                       whole: !!span && span.scrollWidth <= span.clientWidth + 1};
  }
  const scrolling = {scrollLeft: scroller.scrollLeft, max: scroller.scrollWidth - scroller.clientWidth};
  return {scroller: {...box(scroller), ...scrolling},
          screen: {width: innerWidth, height: innerHeight}, headers: texts, columns};
}"""
# every cell of the Model column: its text and whether it is shown whole
MODEL_CELLS = ("(col) => [...document.querySelectorAll(`#lb-table .virtual-row [data-col='${col}'] span`)]"
               ".map(s => [s.innerText.replace(/\\s+/g, ''), s.scrollWidth <= s.clientWidth + 1])")
# the fonts loaded and two frames drawn: Gradio has measured the columns (a ResizeObserver) from the final layout
SETTLED = ("() => document.fonts.ready.then(() => new Promise(r => requestAnimationFrame(() => "
           "requestAnimationFrame(r))))")
# the table's column widths the same three looks in a row, 150 ms apart (at most 15 s): measured, on a busy machine too
STEADY = """(id) => new Promise((resolve) => {
  let last = '', same = 0, looks = 0;
  const look = () => {
    const now = [...document.querySelectorAll(`#${id} thead th`)].map(th => th.getBoundingClientRect().width.toFixed(1))
      .join(' ');
    same = now && now === last ? same + 1 : 0; last = now; looks += 1;
    if (same >= 2 || looks > 100) resolve(now); else setTimeout(look, 150);
  };
  look();
})"""


def _shoot(page, size: str, name: str, *, full_page: bool = False) -> None:
    (SHOTS / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / size / f"{name}.png"), full_page=full_page)


def _in_view(found: dict, header: str) -> None:
    """The column's header and first cell whole within the table's scrolling box and the screen, without scrolling."""
    column, scroller, screen = found["columns"][header], found["scroller"], found["screen"]
    assert column is not None, (header, found["headers"])
    for part in ("header", "cell"):
        box = column[part]
        assert box is not None, (header, part)
        assert scroller["left"] - 1 <= box["left"] and box["right"] <= min(scroller["right"], screen["width"]) + 1, (
            f"{header} {part} spans x {box['left']:.0f}..{box['right']:.0f}; the table shows "
            f"{scroller['left']:.0f}..{scroller['right']:.0f} of the screen's {screen['width']}")
        assert box["bottom"] <= screen["height"], (header, part, box, screen)
    assert column["whole"], f"{header}'s first cell is cut: {column['text']!r}"


def _settle(page, table: str = "lb-table") -> None:
    """Wait until ``table`` shows its rows and its columns keep their widths."""
    page.wait_for_function(f"() => document.querySelectorAll('#{table} [role=gridcell]').length > 3", timeout=30000)
    page.evaluate(SETTLED)
    page.evaluate(STEADY, table)


def _subtab(page, name: str, tables: tuple[str, ...]) -> None:
    page.locator("#lb-tabs [role=tablist] button[role=tab]", has_text=name).first.click()
    for table in tables:
        _settle(page, table)


@pytest.fixture
def arena(tmp_path):
    """A small arena with 36 human and 24 judge votes (the judge's columns shown), metrics, and one model named as
    long as real ones are."""
    arena = build_small_arena(tmp_path)
    add_votes(arena)
    store_metrics(arena)
    arena.db.execute("UPDATE models SET name = ? WHERE name = ?", [LONG_NAME, "bravo-model"])
    return arena


def test_on_a_phone_the_rating_and_its_interval_show_beside_the_model_without_scrolling(arena, browser):
    with served_page(arena.settings, browser, "phone") as page:
        page.get_by_role("tab", name="Leaderboard").click()
        _settle(page)
        _shoot(page, "phone", "lb-phone-01-first-screen")
        found = page.evaluate(BOXES, ["lb-table", list(FIRST_SCREEN)])
        assert found["scroller"]["scrollLeft"] == 0 and found["scroller"]["max"] > 0, found["scroller"]
        for header in FIRST_SCREEN:
            _in_view(found, header)
        # every model's name whole, on two lines where it is long
        names = page.evaluate(MODEL_CELLS, found["headers"].index("Model"))
        shown = sorted(LONG_NAME if name == "bravo-model" else name for name in arena.model_ids)
        assert sorted(name for name, _ in names) == shown and all(whole for _, whole in names), names
        # scrolled to the far right: the model's name still at the left edge, taking at most half the table's width,
        # the last column whole beside it
        page.evaluate("() => { const s = document.querySelector('#lb-table .virtual-table-viewport');"
                      " s.scrollLeft = s.scrollWidth; }")
        _settle(page)
        last = found["headers"][-1]
        scrolled = page.evaluate(BOXES, ["lb-table", ["Model", last]])
        assert scrolled["scroller"]["scrollLeft"] > 0
        model, scroller = scrolled["columns"]["Model"], scrolled["scroller"]
        for part in ("header", "cell"):
            assert abs(model[part]["left"] - scroller["left"]) <= 2, (part, model, scroller)
        assert model["header"]["width"] <= scroller["width"] / 2, (model["header"]["width"], scroller["width"])
        _in_view(scrolled, last)
        assert scrolled["columns"][last]["header"]["left"] >= model["header"]["right"] - 1, scrolled["columns"]
        page.locator("#lb-table").scroll_into_view_if_needed()
        _shoot(page, "phone", "lb-phone-02-scrolled-right")


def test_on_a_phone_the_other_tables_keep_their_first_column_to_half_the_width(arena, browser):
    """The Metrics and Agreement sub-tabs' tables: the first column (the model, the comparison, the voters, the
    annotator) at most half the table's width, the second column's header and first cell on screen without
    scrolling."""
    with served_page(arena.settings, browser, "phone") as page:
        page.get_by_role("tab", name="Leaderboard").click()
        _settle(page)
        for subtab, tables in (("Metrics", ("lb-metrics", "lb-correlations")),
                               ("Agreement", ("lb-bias", "lb-annotator-pairs"))):
            _subtab(page, subtab, tables)
            for table in tables:
                headers = page.evaluate(BOXES, [table, []])["headers"]
                page.locator(f"#{table}").scroll_into_view_if_needed()
                found = page.evaluate(BOXES, [table, headers[:2]])
                first = found["columns"][headers[0]]["header"]
                assert first["width"] <= found["scroller"]["width"] / 2, (table, headers[0], first["width"])
                assert found["columns"][headers[1]]["header"]["right"] <= found["scroller"]["right"] + 1, (
                    table, found["columns"])
                _shoot(page, "phone", f"lb-phone-03-{table}")


def test_on_a_desktop_the_tables_are_as_gradio_lays_them_out(arena, browser):
    """The phone's rules change nothing at 1280×800: every column of the Ratings table is as wide with the
    leaderboard's phone rules deleted from the page, in Gradio's monospace font, nothing pinned."""
    with served_page(arena.settings, browser, "desktop") as page:
        page.get_by_role("tab", name="Leaderboard").click()
        _settle(page)
        _shoot(page, "desktop", "lb-desktop-01-first-screen")
        widths = ("() => [...document.querySelectorAll('#lb-table thead th')]"
                  ".map(th => th.getBoundingClientRect().width)")
        style = ("() => { const th = document.querySelector('#lb-table thead th:nth-child(3)'); const cell = "
                 "document.querySelector('#lb-table [data-row=\"0\"][data-col=\"2\"]'); return [getComputedStyle(th)"
                 ".fontFamily, getComputedStyle(th).position, getComputedStyle(cell).position]; }")
        before, (font, *positions) = page.evaluate(widths), page.evaluate(style)
        assert "mono" in font.lower() and "sticky" not in positions, (font, positions)
        deleted = page.evaluate("""() => { let deleted = 0;
            for (const sheet of document.styleSheets) {
              let rules; try { rules = sheet.cssRules; } catch (e) { continue; }
              for (let i = rules.length - 1; i >= 0; i--) {
                if (rules[i] instanceof CSSMediaRule && rules[i].cssText.includes('#lb-table')) {
                  sheet.deleteRule(i); deleted++;
                }
              }
            }
            return deleted; }""")
        assert deleted >= 1
        _settle(page)
        assert page.evaluate(widths) == before
