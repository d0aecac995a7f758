"""Debian chromium driven by playwright: one browser for the whole test session, a fresh context for each test.

Launching chromium costs one to two seconds on the shared test machine, so the session launches it once (at the first
use of the ``browser`` fixture) and every test opens its pages in contexts of its own, which the fixture closes after
the test: cookies, local storage and routes never leak from one test to the next.

playwright's synchronous API runs an asyncio loop on the main thread and leaves it marked as running after every call,
which makes ``asyncio.run`` fail ("cannot be called from a running event loop") in any later test.
:class:`BrowserSession` therefore unmarks it after each test (:meth:`BrowserSession.lend`): a test may call
``asyncio.run`` until it first uses the browser (as when a test started its own playwright after its other work),
not after; the other tests are not affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
MISSING = "Debian chromium is missing: run `make test` (it installs it) or `apt-get install chromium`."


def require_chromium() -> None:
    """Fail (not skip: a browser test that does not run must not pass unseen) when chromium is not installed."""
    if not shutil.which("chromium"):
        pytest.fail(MISSING)


class BrowserSession:
    """One playwright driver and one chromium, started when a test first uses the browser it was lent, and kept
    until :meth:`close`."""

    def __init__(self):
        self._playwright = None
        self._browser = None
        self._loop = None

    def _attach(self):
        """The browser, started if need be, with playwright's loop marked running (as playwright leaves it)."""
        from playwright.sync_api import sync_playwright

        if self._playwright is None:
            self._playwright = sync_playwright().start()
            self._loop = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(self._loop)
        if self._browser is None or not self._browser.is_connected():  # the first test, or chromium crashed
            self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        return self._browser

    @contextlib.contextmanager
    def lend(self):
        """A stand-in for the browser for one test: the browser starts, and playwright's loop is marked running, at
        the test's first use of it (so the test may call ``asyncio.run`` before); every context the test opened is
        closed afterwards and the loop unmarked."""
        require_chromium()
        pytest.importorskip("playwright.sync_api")
        lent = LentBrowser(self)
        try:
            yield lent
        finally:
            try:
                if lent.used and self._browser is not None and self._browser.is_connected():
                    asyncio.events._set_running_loop(self._loop)
                    for context in list(self._browser.contexts):
                        context.close()
            finally:
                asyncio.events._set_running_loop(None)  # other tests may use asyncio.run

    def close(self) -> None:
        if self._playwright is None:
            return
        asyncio.events._set_running_loop(self._loop)
        try:
            if self._browser is not None and self._browser.is_connected():
                self._browser.close()
            self._playwright.stop()
        finally:
            asyncio.events._set_running_loop(None)
            self._playwright = self._browser = self._loop = None


class LentBrowser:
    """What the ``browser`` fixture gives: playwright's ``Browser`` (``new_page``, ``new_context``, ...), reached
    through the session so that it starts at the first use."""

    def __init__(self, session: BrowserSession):
        self._session = session
        self.used = False

    def __getattr__(self, name: str):
        self.used = True
        return getattr(self._session._attach(), name)


def open_page(browser, url: str, size: str):
    """A new page (in a fresh context) at one of :data:`SIZES`, opened at ``url``."""
    page = browser.new_page(viewport=SIZES[size])
    page.goto(url)
    return page


def submit_sign_in(page, name: str, token: str) -> None:
    """Fill the sign-in form and press Sign in (the answer is the test's to wait for)."""
    page.fill("#signin-name textarea, #signin-name input", name)
    page.fill("#signin-token input", token)
    page.click("#signin-button")


def sign_in(page, name: str, token: str, *, timeout: float = 20000) -> None:
    """Sign in and wait for the first battle's image A."""
    submit_sign_in(page, name, token)
    page.wait_for_selector("#image-a img", timeout=timeout)


def leaderboard_summary(page, text: str) -> None:
    """Wait until the leaderboard's summary line says ``text``."""
    page.wait_for_function(f"() => document.querySelector('#lb-summary').innerText.includes({text!r})", timeout=30000)
    page.wait_for_timeout(300)


def leaderboard_details(page, text: str) -> None:
    """Open the leaderboard's folded statistics (how the ratings were made, the vote sources) if they are closed, and
    wait until they say ``text``."""
    if not page.locator("#lb-details-text").is_visible():
        page.click("#lb-details button.label-wrap")
    page.wait_for_function(
        f"() => document.querySelector('#lb-details-text')?.innerText.includes({text!r})", timeout=30000)


def screenshot_folder(variable: str, default: str) -> Path:
    """Where a test module keeps its screenshots for a person to look at: ``$variable``, else ``default`` (under
    .cache/, git-ignored)."""
    return Path(os.environ.get(variable, default))


def shoot(page, folder: Path, size: str, name: str, *, full_page: bool = False) -> None:
    """A screenshot of the page as it is now, as ``<folder>/<size>/<name>.png``."""
    (folder / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / size / f"{name}.png"), full_page=full_page)


def open_leaderboard_filters(page) -> None:
    """Unfold the leaderboard's filters and options (folded under one line since issue 41) when they are folded."""
    if page.locator("#lb-filters").count() and not page.is_visible("#lb-suite"):
        page.locator("#lb-filters button").first.click()
        page.wait_for_selector("#lb-suite", state="visible", timeout=5000)
