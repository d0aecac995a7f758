"""The Arena tab for a keyboard and a screen reader (issue 41), at 1280×800 and 390×844 (touch).

Before: the reveal and the warnings were not announced (no ``aria-live``), the focus was lost after sign-in (left on
the sign-in button, which goes), and an image could be enlarged only by a click.
"""

import contextlib

import pytest
from support.arena import build_small_arena
from support.browser import screenshot_folder
from support.touch import SIZES, served_page, sign_in, vote

pytestmark = pytest.mark.browser
SHOTS = screenshot_folder("ARENA_ISSUE41_SCREENSHOTS", ".cache/screenshots-issue41")


@contextlib.contextmanager
def _signed_in(tmp_path, browser, size: str):
    """A page of a small arena, signed in, its first battle on screen."""
    arena = build_small_arena(tmp_path)
    with served_page(arena.settings, browser, size) as page:
        sign_in(page)
        yield page


@pytest.mark.parametrize("size", SIZES)
def test_the_arena_speaks_and_keeps_the_focus(tmp_path, browser, size):
    with _signed_in(tmp_path, browser, size) as page:
        page.wait_for_timeout(300)
        # the focus on the prompt, not lost on the page
        focused = page.evaluate("() => document.activeElement.closest('#prompt') ? 'prompt' "
                                ": document.activeElement.tagName")
        assert focused == "prompt", focused
        # the status line (warnings) and the reveal are live regions
        assert page.get_attribute("#status", "aria-live") == "polite"
        assert page.get_attribute("#reveal", "aria-live") == "polite"
        # an image enlarged and put back by the keyboard
        page.focus("#image-a img")
        page.keyboard.press("Enter")
        page.wait_for_selector("#image-a .battle-image.enlarged", timeout=5000)
        page.keyboard.press("Escape")
        page.wait_for_selector("#image-a .battle-image.enlarged", state="detached", timeout=5000)
        vote(page, size)
        assert "voted" in page.inner_html("#reveal")
        assert page.get_attribute("#reveal", "aria-live") == "polite"


@pytest.mark.parametrize("size", SIZES)
def test_a_focused_button_shows_a_ring(tmp_path, browser, size):
    with _signed_in(tmp_path, browser, size) as page:
        for _ in range(30):  # the keyboard's way to the first vote button
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.id") == "vote-a":
                break
        page.wait_for_timeout(400)  # Gradio's buttons ease every change of style in (a transition)
        ring = page.evaluate("() => { const s = getComputedStyle(document.activeElement); "
                             "return [document.activeElement.id, s.outlineStyle, parseFloat(s.outlineWidth), "
                             "s.outlineColor]; }")
        (SHOTS / size).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / size / "arena-focus-ring.png"))
        assert ring[0] == "vote-a" and ring[1] == "solid" and ring[2] >= 2 and ring[3] == "rgb(30, 58, 138)", ring
