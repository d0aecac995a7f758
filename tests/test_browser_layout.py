"""The battle page at 1280×800 with a mouse and at 390×844 on a touch screen (issue 29): a phone layout people would
use, desktop images that use their frames, a font whose every weight renders, and an enlarged image that says how
to close it. Screenshots go to ``.cache/screenshots-issue29`` (see ``support/touch.py``).

What a person met before: on a phone the reveal sat under the fixed vote bar, Next kept the scroll position (the new
prompt off-screen), the images were about 120 px under 330 px of title, tabs, status, suite menu and Sign out, the
buttons showed "(A) (T) (X) (N)" key hints on a touch screen, and a long revealed name pushed image B below image A;
on a desktop the images were 258 px inside 575 px frames; bold text mixed two typefaces (Gradio's bundled SemiBold
font file is a stub); an enlarged image had no close button or hint, and pressing B while A was enlarged voted.
"""

import pytest
from support.arena import build_small_arena
from support.touch import (
    BATTLE_SHOWN,
    SIZES,
    TOUCH,
    box,
    next_battle,
    open_page,
    press,
    shoot,
    sign_in,
    vote,
    wait_images,
)
from support.webapp import running_app

LONG_NAMES = {"alpha-model": "alpha-model-trained-on-an-uncommonly-long-list-of-datasets-v2-final",
              "bravo-model": "bravo-model-with-a-name-long-enough-to-wrap-twice-on-a-phone-screen-xl",
              "charlie-model": "charlie-model", "delta-model": "delta-model"}


def _long_names(arena) -> None:
    for old, new in LONG_NAMES.items():
        arena.db.execute("UPDATE models SET name = ? WHERE name = ?", [new, old])


def _visible(page, selector: str) -> bool:
    return page.evaluate(f"() => {{ const e = document.querySelector({selector!r}); return !!e && "
                         "e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'; }")


def _after(page, selector: str) -> str:
    return page.evaluate(f"() => getComputedStyle(document.querySelector({selector!r}), '::after').content")


@pytest.mark.parametrize("size", SIZES)
def test_the_battle_uses_the_screen(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    _long_names(arena)
    height = SIZES[size]["height"]
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "viewer")
        shoot(page, size, "layout-01-battle")
        a, b, bar = box(page, "#image-a img"), box(page, "#image-b img"), box(page, "#vote-bar")
        assert not _visible(page, "#page-title"), "the page's title still takes room once signed in"
        if size == "desktop":
            assert min(a["width"], a["height"], b["width"], b["height"]) >= 450, (a, b)
            assert bar["y"] + bar["height"] <= height, f"the vote bar is below the fold: {bar}"
            assert abs(a["y"] - b["y"]) < 1  # side by side
        else:
            # images as large as the screen allows, both above the fixed bar, the controls folded
            assert min(a["width"], b["width"]) >= 190, (a, b)
            for image in (a, b):
                assert image["y"] >= 0 and image["y"] + image["height"] <= bar["y"] + 1, (image, bar)
            assert not _visible(page, "#suite-filter") and not _visible(page, "#sign-out")
            press(page, size, ".arena-menu-toggle")
            page.wait_for_function("() => document.querySelector('#suite-filter').getClientRects().length > 0",
                                   timeout=5000)
            shoot(page, size, "layout-02-menu-unfolded")
            press(page, size, ".arena-menu-toggle")
            page.wait_for_function("() => document.querySelector('#suite-filter').getClientRects().length === 0",
                                   timeout=5000)
        # key hints only where there is a keyboard
        hints = [_after(page, f"#{button}") for button in ("vote-a", "vote-b", "vote-tie", "vote-both-bad",
                                                            "skip-battle")]
        texts = [page.inner_text(f"#{button}") for button in ("vote-a", "vote-tie", "skip-battle")]
        assert not any("(" in text for text in texts), texts
        if TOUCH[size]:
            assert all(hint in ("none", "normal") for hint in hints), hints
            assert not _visible(page, "#key-hints .key-hint")
        else:
            assert [hint.strip('"').strip() for hint in hints] == ["(A)", "(B)", "(T)", "(X)", "(N)"], hints
        # the vote: the reveal in view (on a phone: on the bar, not under it), the images where they were
        vote(page, size)
        page.wait_for_timeout(300)
        shoot(page, size, "layout-03-revealed-long-names")
        a2, b2 = box(page, "#image-a img"), box(page, "#image-b img")
        assert (round(a2["y"]), round(b2["y"]), round(b2["x"])) == (round(a["y"]), round(b["y"]), round(b["x"])), \
            "a revealed name moved the images"
        reveal, bar = box(page, "#reveal"), box(page, "#vote-bar")
        assert reveal["y"] >= 0 and reveal["y"] + reveal["height"] <= (bar["y"] + 1 if size == "phone" else height)
        names = page.evaluate("() => [...document.querySelectorAll('#battle-images .model-name')].map(e => "
                              "[e.getBoundingClientRect().height, e.scrollWidth > e.clientWidth])")
        assert all(h < 30 for h, _ in names), names  # one line each, cut with an ellipsis rather than wrapped
        # Next from the bottom of the page: the new prompt is on screen, both images above the bar
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(200)
        next_battle(page, size)
        page.wait_for_timeout(300)
        shoot(page, size, "layout-04-after-next")
        prompt = box(page, "#prompt")
        assert 0 <= prompt["y"] <= height * 0.4, f"the new prompt is off-screen: {prompt}"
        bottom = box(page, "#vote-bar")["y"] if size == "phone" else height
        for image in (box(page, "#image-a img"), box(page, "#image-b img")):
            assert image["y"] + image["height"] <= bottom + 1, (image, bottom)


@pytest.mark.parametrize("size", SIZES)
def test_an_enlarged_image_says_how_to_close_it_and_takes_no_vote(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "looker")
        press(page, size, "#image-a img")
        page.wait_for_selector(".battle-image.enlarged", timeout=5000)
        shoot(page, size, "layout-05-enlarged")
        hint = page.evaluate("() => getComputedStyle(document.querySelector('.battle-image.enlarged'), '::before')"
                             ".content")
        assert "Close" in hint and ("Esc" in hint if size == "desktop" else "tap" in hint), hint
        page.keyboard.press("b")  # B while A is enlarged: the image goes back, nothing is voted
        page.wait_for_selector(".battle-image.enlarged", state="detached", timeout=5000)
        page.wait_for_timeout(500)
        assert arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 0
        page.wait_for_function(BATTLE_SHOWN, timeout=5000)
        press(page, size, "#image-b img")
        page.wait_for_selector(".battle-image.enlarged", timeout=5000)
        press(page, size, ".battle-image.enlarged")  # a click (tap) anywhere closes it
        page.wait_for_selector(".battle-image.enlarged", state="detached", timeout=5000)
        wait_images(page)


@pytest.mark.parametrize("size", SIZES)
def test_before_sign_in_the_page_says_what_the_task_and_a_token_are(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.wait_for_selector("#signin-button", timeout=20000)
        shoot(page, size, "layout-06-sign-in")
        intro = page.inner_text("#signin-intro")
        assert "two images" in intro and "names appear after your vote" in intro, intro
        assert "The token is a password you make up now" in intro and "8 characters" in intro, intro


TABS = ("Arena", "Ratings", "Leaderboard", "Admin")
TABS_IN_VIEW = ("() => [...document.querySelectorAll('[role=tab]')].filter(t => { const r = t.getBoundingClientRect();"
                " return r.width > 0 && r.left >= 0 && r.right <= innerWidth; }).map(t => t.innerText.trim())")


@pytest.mark.parametrize("size", SIZES)
def test_every_tab_is_in_view_when_the_web_font_does_not_arrive(tmp_path, browser, size):
    """The page's tabs with the browser's own font, wider than the web font (a slow or failed download): on a
    phone, Leaderboard and Admin went behind a "More tabs" menu (and the test that opened Admin by its tab once
    waited 30 s for it on a loaded machine); now the tab bar wraps instead."""
    arena = build_small_arena(tmp_path, admin_password="admin-password-123")
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size, block="**/*.woff2")
        page.wait_for_selector("#signin-button", timeout=20000)
        page.wait_for_timeout(500)  # the tab bar measures its tabs once they are drawn
        shoot(page, size, "layout-08-tabs-without-the-web-font")
        assert page.evaluate(TABS_IN_VIEW) == list(TABS)
        assert page.locator("button[aria-label='More tabs']:visible").count() == 0


# Every element whose own text is plain ASCII, marked for the font probe (symbols such as ⚠ or κ may come from
# another font by design).
MARK_TEXT = """() => {
  let n = 0;
  for (const element of document.querySelectorAll('body *')) {
    if (element.closest('svg') || !element.getClientRects().length) continue;
    const own = [...element.childNodes].filter((node) => node.nodeType === 3).map((node) => node.textContent)
      .join('').trim();
    if (own && /^[\\x20-\\x7e]+$/.test(own)) { element.setAttribute('data-font-probe', String(n++)); }
  }
  return n;
}"""


def _fonts_of_text(page) -> dict[str, list]:
    """{'weight text': [platform fonts]} of every marked element: the fonts Chromium really drew its text with."""
    page.evaluate("() => document.fonts.ready")
    page.evaluate("() => document.querySelectorAll('[data-font-probe]').forEach(e => "
                  "e.removeAttribute('data-font-probe'))")
    page.evaluate(MARK_TEXT)
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]["nodeId"]
    found: dict[str, list[list[tuple[str, bool]]]] = {}
    for node in cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-font-probe]"})["nodeIds"][:400]:
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        described = cdp.send("DOM.describeNode", {"nodeId": node})["node"]
        weight = next((p["value"] for p in cdp.send("CSS.getComputedStyleForNode", {"nodeId": node})["computedStyle"]
                       if p["name"] == "font-weight"), "?")
        label = f"{weight} <{described['localName']}>"
        found.setdefault(label, [])
        found[label].append([(f["familyName"], f["isCustomFont"]) for f in fonts])
    cdp.detach()
    return found


@pytest.mark.parametrize("size", SIZES)
def test_every_font_weight_the_page_uses_renders_from_one_whole_font(tmp_path, browser, size):
    """Each element's plain text is drawn by the fonts the page loaded, whatever its weight: no glyph falls back to a
    system font (Chromium's own account of the fonts it drew with, CSS.getPlatformFontsForNode). Before, weight 600
    drew a few glyphs from Gradio's stub SemiBold file and the rest from DejaVu Sans."""
    arena = build_small_arena(tmp_path, admin_password="letmein-admin")
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "reader")
        vote(page, size)
        drawn = _fonts_of_text(page)
        page.get_by_role("tab", name="Leaderboard").click()
        page.wait_for_function("() => document.querySelector('#lb-summary')?.innerText.includes('vote')",
                               timeout=30000)
        page.wait_for_timeout(500)
        for label, fonts in _fonts_of_text(page).items():
            drawn.setdefault(label, []).extend(fonts)
        shoot(page, size, "layout-07-leaderboard-fonts")
        mixed = {label: fonts for label, fonts in drawn.items()
                 if any(not custom for used in fonts for _, custom in used)}
        weights = sorted({label.split()[0] for label in drawn})
        assert {"400", "700"} <= set(weights) or {"400", "600"} <= set(weights), weights
        assert not mixed, {label: [used for used in fonts if any(not custom for _, custom in used)][:3]
                           for label, fonts in mixed.items()}
