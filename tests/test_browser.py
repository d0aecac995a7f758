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
            page.wait_for_function("() => document.querySelector('#reveal .reveal') !== null && "
                                   "document.querySelector('#reveal .voted') === null", timeout=20000)
            page.wait_for_timeout(300)  # let every response of this step arrive
            assert _names_in(page.content()) == [], f"model name in the page before vote {step + 1}"
            leaks = [(u, _names_in(b)) for u, b in bodies if _names_in(b)]
            assert leaks == [], f"model name in a response before vote {step + 1}: {leaks}"
            if how.startswith("click:"):
                page.click(how[6:])
            else:
                page.locator("body").press(how[4:])
            page.wait_for_selector("#reveal .voted", timeout=20000)
            revealed = page.inner_text("#reveal")
            assert len(_names_in(revealed)) >= 1
            page.locator("body").press("a")  # a second vote on the revealed battle is ignored
            page.wait_for_timeout(300)
            assert small_arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == step + 1
            page.wait_for_timeout(300)  # the vote's own response (with the names) has fully arrived
            bodies.clear()
            page.click("#next-battle")
            page.wait_for_function("() => document.querySelector('#reveal').innerText.trim() === ''", timeout=20000)
    outcomes = [row[0] for row in small_arena.db.execute(
        "SELECT outcome FROM votes WHERE voter = 'browser-user' ORDER BY id")]
    assert outcomes == ["A", "B", "tie"]


def test_prompt_html_is_shown_as_text_not_run(tmp_path, browser):
    from arena.catalog import PromptSpec, add_image, add_prompts
    from conftest import build_small_arena, make_image

    arena = build_small_arena(tmp_path)
    hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> **not bold**'
    prompt_id = add_prompts(arena.db, [PromptSpec("xss", "1", hostile)]).ids[0]
    for m, model_id in enumerate(arena.model_ids.values()):
        add_image(arena.db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(m, 9)))
    with running_app(arena.settings) as url:
        page = browser.new_page()
        page.goto(url)
        page.fill("#signin-name textarea, #signin-name input", "xss-user")
        page.fill("#signin-token input", "token-1")
        page.click("#signin-button")
        page.wait_for_selector("#image-a img", timeout=20000)
        page.click("#suite-filter input")
        page.get_by_role("option", name="xss").click()
        page.wait_for_function("() => document.querySelector('#prompt').innerText.includes('window.__pwned')",
                               timeout=20000)
        page.wait_for_timeout(500)
        assert page.evaluate("() => window.__pwned") is None
        text = page.inner_text("#prompt")
        assert "<script>" in text and "**not bold**" in text
        assert page.locator("#prompt script, #prompt img").count() == 0


def test_leaderboard_and_admin_tabs_in_the_browser(tmp_path, browser):
    from arena import session as sessions
    from conftest import build_small_arena

    arena = build_small_arena(tmp_path, admin_password="letmein")
    s = sessions.start(arena.db, "voter", "token-1", open_signup=True)
    import random

    for i in range(6):
        s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), s), "A")
    with running_app(arena.settings) as url:
        page = browser.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        page.wait_for_function("() => document.querySelector('#lb-summary').innerText.includes('6 human votes')",
                               timeout=30000)
        table = page.inner_text("#lb-table")
        assert all(name in table for name in arena.model_ids)
        page.wait_for_selector("#lb-chart .plotly, #lb-chart .js-plotly-plot", timeout=20000)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", "wrong")
        page.click("#admin-unlock")
        page.wait_for_selector("text=Wrong admin password", timeout=20000)
        assert not page.is_visible("#annotator-stats")
        page.fill("#admin-password input", "letmein")
        page.click("#admin-unlock")
        page.wait_for_selector("#annotator-stats", timeout=20000)
        assert "voter" in page.inner_text("#annotator-stats")
        assert all(name in page.inner_text("#votes-per-model") for name in arena.model_ids)
        with page.expect_download(timeout=20000) as download:
            page.click("#export-csv")
            page.wait_for_selector("#export-file a", timeout=20000)
            page.click("#export-file a")
        lines = open(download.value.path()).read().splitlines()
        assert lines[0].startswith("vote_id,battle_id") and len(lines) == 7
