"""A real browser (Debian chromium driven by playwright) votes on three battles.

Checks that no model name reaches the page or any network response before each vote, that names appear after it,
that a keyboard shortcut votes, and that the votes land in the database.
"""

import shutil

import pytest

from conftest import MODELS
from webapp import running_app

playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]


@pytest.fixture
def browser():
    if not shutil.which("chromium"):
        pytest.fail("Debian chromium is missing: run `make test` (it installs it) or `apt-get install chromium`.")
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield browser
        browser.close()


def _names_in(text: str) -> list[str]:
    return [name for name in MODELS if name in text]


def test_three_votes_in_a_real_browser(small_arena, browser):
    bodies: list[tuple[str, str]] = []

    def keep(response):
        try:
            bodies.append((response.url, response.body().decode("utf-8", "replace")))
        except Exception:  # bodies of redirects and aborted requests are not readable
            bodies.append((response.url, ""))

    with running_app(small_arena.settings) as url:
        page = browser.new_page()
        page.on("response", keep)
        page.goto(url)
        page.fill("#signin-name textarea, #signin-name input", "browser-user")
        page.fill("#signin-token input", "token-1")
        page.click("#signin-button")
        for step, how in enumerate(["click:#vote-a", "key:b", "click:#vote-tie"]):
            page.wait_for_selector("#image-a img", timeout=20000)
            page.wait_for_function("() => !document.querySelector('#vote-a').disabled", timeout=20000)
            page.wait_for_timeout(300)  # let every response of this step arrive
            assert _names_in(page.content()) == [], f"model name in the page before vote {step + 1}"
            leaks = [(u, _names_in(b)) for u, b in bodies if _names_in(b)]
            assert leaks == [], f"model name in a response before vote {step + 1}: {leaks}"
            if how.startswith("click:"):
                page.click(how[6:])
            else:
                page.locator("body").press(how[4:])
            page.wait_for_function("() => document.querySelector('#reveal').innerText.includes('A was')", timeout=20000)
            revealed = page.inner_text("#reveal")
            assert len(_names_in(revealed)) >= 1
            page.wait_for_timeout(300)  # the vote's own response (with the names) has fully arrived
            bodies.clear()
            page.click("#next-battle")
            page.wait_for_function("() => document.querySelector('#reveal').innerText.trim() === ''", timeout=20000)
    outcomes = [row[0] for row in small_arena.db.execute(
        "SELECT outcome FROM votes WHERE voter = 'browser-user' ORDER BY id")]
    assert outcomes == ["A", "B", "tie"]
