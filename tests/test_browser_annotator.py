"""The annotator's page in a real browser (Debian chromium via playwright), at a desktop and a phone size (issue 17).

Each test walks one part of the voting page: sign-in mistakes, refused votes, votes before the images have loaded,
the keyboard shortcuts after the expected-outcome checkbox, where the reveal and Next battle sit, and what the page
says around a battle. Every state is photographed into ``ARENA_SCREENSHOTS`` (default ``.cache/screenshots``, git
ignored), one folder per size, for a person to look at.
"""

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES, open_page  # noqa: F401  (SIZES, open_page: kept importable from here)
from support.webapp import running_app

from arena.web.arena_tab import EXPECTED_LABEL

SCREENSHOTS = browsers.screenshot_folder("ARENA_SCREENSHOTS", ".cache/screenshots")
BATTLE_SHOWN = ("() => document.querySelector('#image-a img') && document.querySelector('#image-b img') && "
                "document.querySelector('#reveal .voted') === null")


def shoot(page, size: str, name: str) -> None:
    """A screenshot of the page as it is now, kept for a person to look at."""
    browsers.shoot(page, SCREENSHOTS, size, name)


def sign_in(page, name: str = "annotator", token: str = "token-001") -> None:
    browsers.submit_sign_in(page, name, token)
    page.wait_for_function(BATTLE_SHOWN, timeout=20000)
    wait_images(page)


def wait_images(page) -> None:
    """Both images loaded, and the page has seen it (it drops the class that holds the votes back)."""
    page.wait_for_function("() => [...document.querySelectorAll('#image-a img, #image-b img')]"
                           ".every(img => img.complete && img.naturalWidth > 0) && "
                           "!document.documentElement.classList.contains('images-pending')", timeout=20000)


def votes(arena) -> int:
    return arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]


def unfold_controls(page, size: str) -> None:
    """On a phone the suite menu, the expected outcome and Sign out are folded behind a toggle (issue 29): open it."""
    if size == "phone" and not page.evaluate("() => document.getElementById('arena-top').classList"
                                             ".contains('menu-open')"):
        page.click(".arena-menu-toggle")
        page.wait_for_function("() => document.querySelector('#sign-out').getClientRects().length > 0", timeout=5000)


@pytest.mark.parametrize("size", SIZES)
def test_a_sign_in_mistake_leaves_the_form_usable(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        shoot(page, size, "01-sign-in")
        browsers.submit_sign_in(page, "mistaken", "short")
        page.wait_for_function("() => (document.querySelector('#signin-message') || {}).innerText"
                               "?.toLowerCase().includes('token')", timeout=20000)
        shoot(page, size, "02-sign-in-mistake")
        assert page.input_value("#signin-name textarea, #signin-name input") == "mistaken"  # what was typed stays
        assert page.input_value("#signin-token input") == "short"
        page.fill("#signin-token input", "token-001")  # the form still works
        page.click("#signin-button")
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        assert page.locator(".error:visible").count() == 0
        assert not page.is_visible("#signin-message") or page.inner_text("#signin-message").strip() == ""


@pytest.mark.parametrize("size", SIZES)
def test_a_refused_vote_says_why(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, rate_limit_annotator_per_minute=1)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        page.locator("body").press("a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        page.click("#next-battle")
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        wait_images(page)
        page.locator("body").press("b")  # the second vote in a minute is refused: the page says so in words
        page.wait_for_function("() => document.querySelector('#status')?.innerText.includes('again in')",
                               timeout=20000)
        shoot(page, size, "03-vote-refused")
        assert page.locator(".error:visible").count() == 0, "an empty red Error badge instead of the message"
        assert page.is_visible("#image-a img") and page.is_visible("#image-b img")  # the battle stays on screen
        assert votes(arena) == 1


@pytest.mark.parametrize("size", SIZES)
def test_votes_wait_for_both_images(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    held: list = []
    hold = {"on": False}

    def route(r):
        if hold["on"]:
            held.append(r)
        else:
            r.continue_()

    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.route("**/battle-media/**", route)
        sign_in(page)
        for how in ("skip", "next"):
            hold["on"] = True
            before = page.get_attribute("#image-a img", "src")
            if how == "next":
                page.locator("body").press("a")
                page.wait_for_selector("#reveal .voted", timeout=20000)
                page.click("#next-battle")
            else:
                page.click("#skip-battle")
            page.wait_for_function(f"() => document.querySelector('#image-a img').getAttribute('src') !== "
                                   f"'{before}'", timeout=20000)
            count = votes(arena)
            page.locator("body").press("b")  # the images are still loading: no vote
            box = page.locator("#vote-a").bounding_box()
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.wait_for_timeout(600)
            shoot(page, size, f"04-images-loading-after-{how}")
            assert votes(arena) == count, f"a vote counted while the images after {how} were loading"
            hold["on"] = False
            for r in held:
                r.continue_()
            held.clear()
            wait_images(page)
            page.locator("body").press("b")
            page.wait_for_selector("#reveal .voted", timeout=20000)
            assert votes(arena) == count + 1
            if how == "skip":
                page.click("#next-battle")
                page.wait_for_function(BATTLE_SHOWN, timeout=20000)
                wait_images(page)


@pytest.mark.parametrize("size", SIZES)
def test_shortcuts_work_after_the_checkbox(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        unfold_controls(page, size)
        # as a person does: a click on the label, after which the box keeps the focus
        page.locator("#show-expected").get_by_text(EXPECTED_LABEL).click()
        page.wait_for_function("() => document.querySelector('#show-expected input').checked", timeout=5000)
        assert page.evaluate("() => document.activeElement.type") == "checkbox"
        page.keyboard.press("a")
        page.wait_for_selector("#reveal .voted", timeout=5000)
        assert votes(arena) == 1
        page.keyboard.press("n")
        page.wait_for_function(BATTLE_SHOWN, timeout=5000)


def _bottom(page, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    return box["y"] + box["height"]


@pytest.mark.parametrize("size", SIZES)
def test_reveal_and_next_in_view(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    height = SIZES[size]["height"]
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        shoot(page, size, "05-battle")
        for button in ("#vote-a", "#vote-b", "#vote-tie", "#vote-both-bad", "#skip-battle"):
            assert _bottom(page, button) <= height, f"{button} is below the fold before the vote"
        if size == "phone":  # the vote bar: two rows of two buttons
            a, b, tie = (page.locator(s).bounding_box() for s in ("#vote-a", "#vote-b", "#vote-tie"))
            assert abs(a["y"] - b["y"]) < 2 and tie["y"] > a["y"] + a["height"] - 2
        page.click("#vote-a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        shoot(page, size, "06-revealed")
        assert _bottom(page, "#next-battle") <= height, "Next battle is below the fold"
        assert _bottom(page, "#reveal") <= height, "the reveal is below the fold"
        reveal, image = page.locator("#reveal").bounding_box(), page.locator("#image-a").bounding_box()
        assert reveal["y"] >= image["y"] + image["height"] - 2  # under the images


@pytest.mark.parametrize("size", SIZES)
def test_what_the_page_says_around_a_battle(tmp_path, browser, size):
    from suites.registry import SUITES

    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        page.wait_for_selector("#guidelines", timeout=20000)
        guide = page.inner_text("#guidelines")
        shoot(page, size, "07-guidelines")
        assert "Both are bad" in guide and "Tie" in guide
        assert SUITES["commonsense"].criteria in guide
        assert "of" in page.inner_text("#status") and "prompts" in page.inner_text("#status")  # progress
        unfold_controls(page, size)
        page.click("#show-expected input")
        page.wait_for_timeout(300)
        page.locator("body").press("a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        assert "Vote #" not in page.inner_text("#reveal")  # no global vote id
        assert "1 vote cast" in page.inner_text("#status")
        # the box ticked before the vote shows the expected outcome only after it (issue 29): never seen while voting
        assert arena.db.execute("SELECT expected_shown FROM votes").fetchone()[0] == 0
        page.click("#image-a img")  # a click enlarges the image
        page.wait_for_selector(".battle-image.enlarged", timeout=5000)
        shoot(page, size, "08-enlarged")
        page.click(".battle-image.enlarged")
        page.wait_for_selector(".battle-image.enlarged", state="detached", timeout=5000)
        page.click("#suite-filter input")
        options = page.get_by_role("option").all_inner_texts()
        assert SUITES["commonsense"].title in options  # the menu names suites as the panel does


@pytest.mark.parametrize("size", SIZES)
def test_a_reload_keeps_the_annotator_and_the_battle(tmp_path, browser, size):
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "stayer")
        page.locator("body").press("a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        page.click("#next-battle")
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        shown = page.get_attribute("#image-a img", "src")
        page.reload()
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        wait_images(page)
        shoot(page, size, "09-after-reload")
        assert "stayer" in page.inner_text("#status") and "1 vote cast" in page.inner_text("#status")
        assert page.get_attribute("#image-a img", "src") == shown  # the battle on screen before the reload
        page.locator("body").press("b")  # and it can be voted on
        page.wait_for_selector("#reveal .voted", timeout=20000)
        assert votes(arena) == 2
        unfold_controls(page, size)
        page.click("#sign-out")
        page.wait_for_selector("#signin-button", timeout=20000)
        page.reload()
        page.wait_for_selector("#signin-button", timeout=20000)
        page.wait_for_timeout(1500)
        shoot(page, size, "10-signed-out")
        assert not page.is_visible("#image-a img")  # signed out: the token no longer signs in
        assert arena.db.execute("SELECT COUNT(*) FROM annotator_sessions WHERE revoked_at IS NOT NULL").fetchone()[0]


GUIDE_OPEN = "() => { const t = document.querySelector('#guidelines-text'); return !!t && t.offsetParent !== null; }"


def _guide_open(page) -> bool:
    page.wait_for_timeout(300)
    return page.evaluate(GUIDE_OPEN)


@pytest.mark.parametrize("size", SIZES)
def test_the_reveal_is_never_under_the_vote_bar(tmp_path, browser, size):
    """On a phone the vote bar is fixed at the bottom of the screen: scrolled to the end of the page, the reveal's
    last line must sit above the bar, not behind it (the guidelines folded, as on every visit after the first)."""
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        if _guide_open(page):
            page.click("#guidelines > button, #guidelines .label-wrap")
            page.wait_for_function(f"() => !({GUIDE_OPEN})()", timeout=5000)
        page.click("#vote-a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
        page.wait_for_timeout(300)
        shoot(page, size, "11-revealed-scrolled-to-the-end")
        reveal, bar = page.locator("#reveal").bounding_box(), page.locator("#vote-bar").bounding_box()
        assert reveal["y"] + reveal["height"] <= bar["y"] + 1, (reveal, bar)


@pytest.mark.parametrize("size", SIZES)
def test_the_guidelines_are_open_on_the_first_visit_only(tmp_path, browser, size):
    """The guidelines panel is shown open the first time an annotator signs in, folded on every later visit (a
    reload, a new sign-in), whether or not they have voted; its header still opens it."""
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "newcomer")
        assert _guide_open(page), "the guidelines are folded on the first visit"
        page.evaluate("() => document.querySelector('#guidelines').scrollIntoView({block: 'start'})")
        shoot(page, size, "12-guidelines-first-visit")
        page.reload()  # no vote yet: still a later visit
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        wait_images(page)
        assert not _guide_open(page), "the guidelines are open again after a reload"
        unfold_controls(page, size)
        page.click("#sign-out")
        page.wait_for_selector("#signin-button", timeout=20000)
        sign_in(page, "newcomer")
        assert not _guide_open(page), "the guidelines are open again at the next sign-in"
        shoot(page, size, "13-guidelines-later-visit")
        page.click("#guidelines > button, #guidelines .label-wrap")
        page.wait_for_function(GUIDE_OPEN, timeout=5000)
        assert "Both are bad" in page.inner_text("#guidelines")
        page.evaluate("() => document.querySelector('#guidelines').scrollIntoView({block: 'start'})")
        shoot(page, size, "14-guidelines-opened-again")
        other = open_page(browser, url, size)  # another annotator's first visit is theirs
        sign_in(other, "second-person")
        assert _guide_open(other)


@pytest.mark.parametrize("size", SIZES)
def test_the_vote_bar_and_reveal_stay_in_view_through_every_prompt_with_the_page_s_messages(tmp_path, browser,
                                                                                             size):
    """Every prompt of the small arena, voted fast: the status line grows (the fast-vote warning, the end-of-suite
    message) and taxonomy prompts take three lines, yet the vote buttons, the reveal and Next stay in view."""
    arena = build_small_arena(tmp_path)
    height = SIZES[size]["height"]
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page)
        seen = []
        for step in range(len(arena.prompt_ids) + 1):
            page.wait_for_function(BATTLE_SHOWN, timeout=20000)
            wait_images(page)
            status = page.inner_text("#status")
            seen.append(("thank you" in status, "voting very fast" in status))
            for button in ("#vote-a", "#vote-both-bad", "#skip-battle"):
                assert _bottom(page, button) <= height, f"battle {step + 1}: {button} is below the fold ({status!r})"
            page.click("#vote-a")
            page.wait_for_selector("#reveal .voted", timeout=20000)
            page.wait_for_timeout(100)
            status = page.inner_text("#status")
            for part in ("#reveal", "#next-battle") if size == "desktop" else ("#next-battle",):  # phone: scrolls
                assert _bottom(page, part) <= height, f"vote {step + 1}: {part} is below the fold ({status!r})"
            if step == len(arena.prompt_ids) - 1:
                shoot(page, size, "15-revealed-with-messages")
            page.click("#next-battle")
        assert any(end and fast for end, fast in seen), seen  # the tallest status line was met
