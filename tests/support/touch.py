"""Pages as people open them (issue 29): a desktop at 1280×800 with a mouse, a phone at 390×844 with a touch screen.

A phone page is opened in a context that emulates touch (``has_touch``, ``is_mobile``): CSS media queries then see a
coarse pointer without hover, as on a real phone, so what the page shows only where there is a keyboard (key hints)
is tested where it must not show. Screenshots go to ``$ARENA_ISSUE29_SCREENSHOTS`` (default
``.cache/screenshots-issue29``, git-ignored), one folder per size, for a person to look at.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from support.webapp import running_app

SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
TOUCH = {"desktop": False, "phone": True}
SCREENSHOTS = Path(os.environ.get("ARENA_ISSUE29_SCREENSHOTS", ".cache/screenshots-issue29"))
BATTLE_SHOWN = ("() => document.querySelector('#image-a img') && document.querySelector('#image-b img') && "
                "document.querySelector('#reveal .voted') === null")
IMAGES_LOADED = ("() => [...document.querySelectorAll('#image-a img, #image-b img')]"
                 ".every(img => img.complete && img.naturalWidth > 0)")


def open_page(browser, url: str, size: str, *, block: str | None = None):
    """A new page at ``url`` in a fresh context of ``size``, with touch on the phone; requests for URLs matching the
    glob ``block`` fail (as on a connection that lost them)."""
    context = browser.new_context(viewport=SIZES[size], has_touch=TOUCH[size], is_mobile=TOUCH[size])
    if block:
        context.route(block, lambda route: route.abort())
    page = context.new_page()
    page.goto(url)
    return page


def shoot(page, size: str, name: str, *, full_page: bool = False) -> Path:
    """A screenshot of the page as it is now, as ``<folder>/<size>/<name>.png``."""
    folder = SCREENSHOTS / size
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def press(page, size: str, selector: str) -> None:
    """Press a button as the size's person does: a tap on the phone, a click on the desktop."""
    if TOUCH[size]:
        page.tap(selector)
    else:
        page.click(selector)


def wait_images(page) -> None:
    page.wait_for_function(IMAGES_LOADED, timeout=20000)
    page.wait_for_timeout(150)


def sign_in(page, name: str = "annotator", token: str = "token-001") -> None:
    """Sign in with the form and wait for the first battle's images."""
    page.fill("#signin-name textarea, #signin-name input", name)
    page.fill("#signin-token input", token)
    page.click("#signin-button")
    page.wait_for_function(BATTLE_SHOWN, timeout=20000)
    wait_images(page)


def vote(page, size: str, button: str = "#vote-a") -> None:
    """Vote on the battle on screen and wait for the names."""
    press(page, size, button)
    page.wait_for_selector("#reveal .voted", timeout=20000)


def next_battle(page, size: str) -> None:
    """Press Next battle and wait for the new battle's images."""
    press(page, size, "#next-battle")
    page.wait_for_function(BATTLE_SHOWN, timeout=20000)
    wait_images(page)


def box(page, selector: str) -> dict:
    """The bounding box of the first element matching ``selector`` (viewport coordinates)."""
    found = page.locator(selector).first.bounding_box()
    assert found is not None, f"{selector} is not on the page"
    return found


@contextlib.contextmanager
def served_page(settings, browser, size: str):
    """A page of the app of ``settings``, served for the block, at ``size``, its sign-in form shown."""
    with running_app(settings) as url:
        page = open_page(browser, url, size)
        page.wait_for_selector("#signin-button", timeout=20000)
        yield page
