"""The Ratings tab in a real browser (Debian chromium via playwright) at 1280×800 and 390×844 (issue 27).

Each test walks one part of the rating page: rating through every task type with keys and clicks, the model kept
from the page until the answer, a refused answer said in words, answers waiting for the image, a reload and signing
out, and the admin's assignment and export. Every state is photographed into ``ARENA_SCREENSHOTS`` (default
``.cache/screenshots``), one folder per size, for a person to look at.
"""

import json
from pathlib import Path

import pytest
from support import browser as browsers
from support.browser import SIZES
from support.rating_page import shown_src, submit_rating_sign_in, wait_question
from support.ratings import MODELS, build_rating_arena
from support.webapp import running_app

from datamodel.human_ratings import set_assignment
from judges.rating_tasks import COMMONSENSE, SANEVAL, SEMVAR

SCREENSHOTS = browsers.screenshot_folder("ARENA_SCREENSHOTS", ".cache/screenshots")


def shoot(page, size: str, name: str) -> None:
    """A screenshot of the page as it is now, kept for a person to look at."""
    browsers.shoot(page, SCREENSHOTS, size, name)


def open_ratings(browser, url: str, size: str, name: str = "rater", token: str = "token-0001"):
    page = browser.new_page(viewport=SIZES[size])
    page.goto(url)
    page.get_by_role("tab", name="Ratings").click()
    submit_rating_sign_in(page, name, token)
    wait_question(page)
    return page


def pick_task(page, title: str) -> None:
    if not page.is_visible("#rating-task"):  # a phone folds the menu behind Task ▾
        page.click(".rating-menu-toggle")
    page.click("#rating-task input")
    page.get_by_role("option", name=title, exact=True).click()
    page.wait_for_function("(title) => (document.querySelector('#rating-item .rating-title') || {}).innerText "
                           "=== title", arg=title, timeout=20000)
    wait_question(page)


def ratings(arena, task=None) -> list:
    where = "" if task is None else f"WHERE task = '{task}'"
    return [json.loads(a) for a, in arena.db.execute(f"SELECT answer FROM ratings {where} ORDER BY id")]


def open_all(arena, **assignment) -> None:
    for task in (COMMONSENSE, SEMVAR, SANEVAL):
        set_assignment(arena.db, task.name, **{"raters_per_item": 2, **assignment})


@pytest.mark.parametrize("size", SIZES)
def test_rate_through_each_task_type_with_keys_and_clicks(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path, generations=2)
    open_all(arena)
    height = SIZES[size]["height"]
    with running_app(arena.settings) as url:
        page = open_ratings(browser, url, size)
        shoot(page, size, "ratings-01-signed-in")
        assert "Guidelines" in page.inner_text("#rating-guidelines")
        # Commonsense-T2I: Y (fits), N (does not fit), then a click on Does not fit
        pick_task(page, COMMONSENSE.title)
        assert not any(name in page.content() for name in MODELS)  # no model on the page before the answer
        text = page.inner_text("#rating-item")
        assert COMMONSENSE.question in text and "Description:" in text and "Prompt:" in text
        shoot(page, size, "ratings-02-commonsense")
        if size == "desktop":  # on a phone the answer bar is fixed to the bottom of the screen
            assert page.locator("#rate-commonsense-fit-0").bounding_box()["y"] + 40 <= height
        for how in ("y", "n", "click"):
            before = shown_src(page)
            if how == "click":
                page.click("#rate-commonsense-fit-0")
            else:
                page.locator("body").press(how)
            wait_question(page, before)
        assert ratings(arena, "commonsense_fit") == [{"fit": 1}, {"fit": 0}, {"fit": 0}]
        status = page.text_content("#rating-status")  # the receipt too, which a phone does not show
        # no model in the receipt: three answers of a four-question unit (one model's), so its model is not told yet
        assert "Saved: Does not fit" in status and not any(name in status for name in MODELS)
        assert "3 answers so far" in status and "items of Commonsense-T2I" in status
        shoot(page, size, "ratings-03-commonsense-answered")
        # SemVarBench: digits pick the scores in tens, Enter sends; then clicks on the radios and Send
        pick_task(page, SEMVAR.title)
        text = page.inner_text("#rating-item")
        assert SEMVAR.question in text and "Text:" in text and "Prompt:" not in text
        if not page.is_visible("#rating-guidelines-text"):  # folded since the first answer
            page.locator("#rating-guidelines > button, #rating-guidelines .label-wrap").first.click()
        guide = page.inner_text("#rating-guidelines-text")  # the question's task's guidelines, the others hidden
        assert "Perfectly Accurate (All objects exist" in guide  # SemVarBench Table 13's criteria
        assert COMMONSENSE.title not in guide and SANEVAL.title not in guide
        before = shown_src(page)
        page.locator("body").press("3")
        page.locator("body").press("4")
        shoot(page, size, "ratings-04-semvar-scored")
        page.locator("body").press("Enter")
        wait_question(page, before)
        before = shown_src(page)
        page.click("#rate-semvar-alignment-object_accuracy input[value='50']")
        page.click("#rate-semvar-alignment-relevance input[value='0']")
        page.click("#rate-semvar-alignment-submit")
        wait_question(page, before)
        assert ratings(arena, "semvar_alignment") == [{"object_accuracy": 30, "relevance": 40},
                                                      {"object_accuracy": 50, "relevance": 0}]
        # a send without both scores is refused in words, and nothing is stored
        page.click("#rate-semvar-alignment-object_accuracy input[value='20']")
        page.click("#rate-semvar-alignment-submit")
        page.wait_for_function("() => document.querySelector('#rating-status')?.innerText.includes('Give Relevance')",
                               timeout=20000)
        shoot(page, size, "ratings-05-semvar-refused")
        assert len(ratings(arena, "semvar_alignment")) == 2 and page.locator(".error:visible").count() == 0
        # SANEval: the Likert keys and a click
        pick_task(page, SANEVAL.title)
        text = page.inner_text("#rating-item")
        assert SANEVAL.question in text and "Condition:" in text
        shoot(page, size, "ratings-06-saneval")
        before = shown_src(page)
        page.locator("body").press("5")
        wait_question(page, before)
        before = shown_src(page)
        page.click("#rate-saneval-adherence-2")
        wait_question(page, before)
        assert ratings(arena, "saneval_adherence") == [{"likert": 5}, {"likert": 2}]
        page.click("#rating-image img.rating-shown")  # a click enlarges the image
        page.wait_for_selector(".rating-figure.enlarged", timeout=5000)
        shoot(page, size, "ratings-07-enlarged")
        page.keyboard.press("Escape")
        page.wait_for_selector(".rating-figure.enlarged", state="detached", timeout=5000)
        # the image came as a display rendition through the question's media token
        response = page.request.get(url + shown_src(page))
        assert response.status == 200 and response.headers["content-type"] == "image/jpeg"
        # skipping shows another question of the task
        before = shown_src(page)
        page.locator("body").press("s")
        wait_question(page, before)
        assert arena.db.execute("SELECT COUNT(*) FROM rating_servings WHERE skipped_at IS NOT NULL").fetchone()[0] == 1


ARENA_QUESTION = "shows the prompt better"  # the Arena tab's question: two images, pick the better


def _visible_with(page, words: str) -> list[str]:
    """The visible elements whose own text holds ``words`` (their tag and id)."""
    return page.evaluate("""(words) => [...document.querySelectorAll('body *')].filter((e) =>
        [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.includes(words))
        && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden')
        .map((e) => `${e.tagName}#${e.closest('[id]')?.id}`)""", words)


@pytest.mark.parametrize("size", SIZES)
def test_each_tab_shows_its_own_words_and_only_the_arena_asks_for_the_better_image(tmp_path, browser, size):
    """The words over the tabs belonged to the Arena (two images, which is better) and showed on every tab: on the
    Ratings tab, which asks about one image, they were wrong and took room above the question on a phone. The Arena
    tab says it where it signs in; the Ratings tab starts with its own words under the page's name."""
    arena = build_rating_arena(tmp_path)
    open_all(arena)
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.wait_for_selector("#signin-button")
        shoot(page, size, "tab-words-01-arena")
        assert _visible_with(page, ARENA_QUESTION), "the Arena tab no longer says what to pick"
        for tab in ("Ratings", "Leaderboard", "Admin"):
            page.get_by_role("tab", name=tab).click()
            page.wait_for_function("(tab) => [...document.querySelectorAll('[role=tab][aria-selected=true]')]"
                                   ".some((e) => e.innerText.trim() === tab)", arg=tab, timeout=10000)
            page.wait_for_timeout(200)
            assert not _visible_with(page, ARENA_QUESTION), f"the {tab} tab shows the Arena's question"
        page.get_by_role("tab", name="Ratings").click()
        submit_rating_sign_in(page, "rater", "token-0001")
        wait_question(page)
        shoot(page, size, "tab-words-02-ratings")
        assert not _visible_with(page, ARENA_QUESTION)
        title = page.locator("#page-title").bounding_box()
        tabs = page.locator("[role=tablist]").first.bounding_box()
        assert tabs["y"] - title["y"] <= 60, (title, tabs)  # the page's name alone above the tabs


@pytest.mark.parametrize("size", SIZES)
def test_a_refused_answer_says_why_and_keeps_the_question(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path, rate_limit_annotator_per_minute=1)
    set_assignment(arena.db, "saneval_adherence", raters_per_item=1)
    with running_app(arena.settings) as url:
        page = open_ratings(browser, url, size)
        before = shown_src(page)
        page.locator("body").press("3")
        wait_question(page, before)
        shown = shown_src(page)
        page.locator("body").press("4")  # the second answer in a minute: refused in words
        page.wait_for_function("() => document.querySelector('#rating-status')?.innerText.includes('again in')",
                               timeout=20000)
        shoot(page, size, "ratings-08-refused")
        assert page.locator(".error:visible").count() == 0
        assert shown_src(page) == shown  # the question stays on screen
        assert ratings(arena) == [{"likert": 3}]


@pytest.mark.parametrize("size", SIZES)
def test_answers_wait_for_the_image(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path)
    set_assignment(arena.db, "saneval_adherence", raters_per_item=1)
    held, hold = [], {"on": True}

    def route(r):
        if hold["on"]:
            held.append(r)
        else:
            r.continue_()

    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.route("**/rating-media/**", route)
        page.goto(url)
        page.get_by_role("tab", name="Ratings").click()
        submit_rating_sign_in(page, "waiting", "token-0001")
        page.wait_for_selector("#rating-item [data-task]", timeout=20000)
        page.locator("body").press("4")
        box = page.locator("#rate-saneval-adherence-4").bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.wait_for_timeout(600)
        shoot(page, size, "ratings-09-image-loading")
        assert ratings(arena) == []  # neither the key nor the click counted while the image was loading
        hold["on"] = False
        for r in held:
            r.continue_()
        wait_question(page)
        page.locator("body").press("4")
        page.wait_for_function("() => document.querySelector('#rating-status')?.textContent.includes('Saved')",
                               timeout=20000)
        assert ratings(arena) == [{"likert": 4}]


@pytest.mark.parametrize("size", SIZES)
def test_a_reload_keeps_the_rater_and_signing_out_ends_it(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path)
    set_assignment(arena.db, "commonsense_fit", raters_per_item=1)
    with running_app(arena.settings) as url:
        page = open_ratings(browser, url, size, "stayer")
        before = shown_src(page)
        page.locator("body").press("y")
        wait_question(page, before)
        page.reload()
        page.get_by_role("tab", name="Ratings").click()
        wait_question(page)
        shoot(page, size, "ratings-10-after-reload")
        assert "stayer" in page.inner_text("#rating-status") and "1 answer so far" in page.inner_text("#rating-status")
        before = shown_src(page)
        page.locator("body").press("n")
        wait_question(page, before)
        assert ratings(arena) == [{"fit": 1}, {"fit": 0}]
        if not page.is_visible("#rating-sign-out"):  # a phone folds it behind Task ▾
            page.click(".rating-menu-toggle")
        page.click("#rating-sign-out")
        page.wait_for_selector("#rating-signin-button", timeout=20000)
        page.reload()
        page.get_by_role("tab", name="Ratings").click()
        page.wait_for_selector("#rating-signin-button", timeout=20000)
        page.wait_for_timeout(1500)
        shoot(page, size, "ratings-11-signed-out")
        assert not page.is_visible("#rating-image img")


def test_the_admin_opens_a_task_and_exports_the_ratings(tmp_path, browser):
    arena = build_rating_arena(tmp_path, admin_password="admin-password-1")
    with running_app(arena.settings) as url:
        admin = browser.new_page(viewport=SIZES["desktop"])
        admin.goto(url)
        admin.get_by_role("tab", name="Admin").click()
        admin.fill("#admin-password input", "admin-password-1")
        admin.click("#admin-unlock")
        admin.wait_for_function("(title) => document.querySelector('#rating-study')?.innerText.includes(title)",
                                arg=SANEVAL.title, timeout=20000)
        admin.click("#rating-admin-task input")
        admin.get_by_role("option", name=SANEVAL.title, exact=True).click()
        admin.fill("#rating-admin-raters input", "2")
        admin.click("#rating-admin-save")
        admin.wait_for_function("() => document.querySelector('#rating-admin-message')?.innerText.includes('open')",
                                timeout=20000)
        admin.locator("#rating-study").scroll_into_view_if_needed()
        shoot(admin, "desktop", "ratings-12-admin-assigned")
        assert "2 raters per item" in admin.inner_text("#rating-admin-message")
        page = open_ratings(browser, url, "desktop", "first")
        before = shown_src(page)
        page.locator("body").press("2")
        wait_question(page, before)
        admin.click("#rating-export-csv")
        admin.wait_for_selector("#rating-export-file a", timeout=20000)
        with admin.expect_download() as download:
            admin.click("#rating-export-file a")
        text = Path(download.value.path()).read_text()
        assert text.splitlines()[0].startswith('"rating_id","serving_id"') and len(text.splitlines()) == 2
        admin.click("#rating-admin-refresh")
        admin.wait_for_function("() => document.querySelector('#rating-study')?.innerText.includes('first') || true")
        shoot(admin, "desktop", "ratings-13-admin-exported")


@pytest.mark.parametrize("size", SIZES)
def test_the_shipped_demo_serves_semvarbench_and_saneval_questions(tmp_path, browser, size):
    """Issue 27 on the demo: the arena made from the shipped bundle serves a SemVarBench and a SANEval question, each
    with a demo prompt's words, and stores the answers."""
    from support.arena import demo_arena

    from arena.demo.seeding import demo_prompt_specs

    demo = demo_arena(tmp_path)  # the shipped bundle loaded, its images rendered
    settings, db = demo.settings, demo.db
    for task in (SEMVAR, SANEVAL):
        set_assignment(db, task.name, raters_per_item=2)
    texts = {suite: {spec.text for spec in demo_prompt_specs() if spec.suite == suite}
             for suite in ("semvarbench", "saneval")}
    try:
        with running_app(settings) as url:
            page = open_ratings(browser, url, size)
            pick_task(page, SEMVAR.title)
            text = page.inner_text("#rating-item")
            assert SEMVAR.question in text and any(f"Text: {t}" in text or t in text for t in texts["semvarbench"])
            shoot(page, size, "ratings-demo-01-semvar")
            before = shown_src(page)
            for key in ("4", "3", "Enter"):
                page.locator("body").press(key)
            wait_question(page, before)
            pick_task(page, SANEVAL.title)
            text = page.inner_text("#rating-item")
            assert SANEVAL.question in text and "Condition:" in text and any(t in text for t in texts["saneval"])
            shoot(page, size, "ratings-demo-02-saneval")
            before = shown_src(page)
            page.locator("body").press("4")
            wait_question(page, before)
            shoot(page, size, "ratings-demo-03-saneval-answered")
        stored = db.execute("SELECT r.task, p.suite, r.answer FROM ratings r JOIN rating_servings s "
                            "ON s.id = r.serving_id JOIN images i ON i.id = s.image_id "
                            "JOIN prompts p ON p.id = i.prompt_id ORDER BY r.id").fetchall()
        assert [(task, suite, json.loads(answer)) for task, suite, answer in stored] == [
            ("semvar_alignment", "semvarbench", {"object_accuracy": 40, "relevance": 30}),
            ("saneval_adherence", "saneval", {"likert": 4})]
    finally:
        db.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_0_to_10_scale_takes_its_keys_and_clicks(tmp_path, browser, size):
    """SANEval's 0-10 task (the scale of the paper's Table 4): key 1 is 1 (not the first point, 0), T is 10, and a
    click on 7; eleven buttons fit the page at both sizes."""
    from judges.rating_tasks import SANEVAL_TENTHS

    arena = build_rating_arena(tmp_path, generations=2)
    set_assignment(arena.db, SANEVAL_TENTHS.name, raters_per_item=2)
    with running_app(arena.settings) as url:
        page = open_ratings(browser, url, size)
        assert SANEVAL_TENTHS.question in page.inner_text("#rating-item")
        shoot(page, size, "ratings-14-saneval-tenths")
        for how in ("1", "t", "click"):
            before = shown_src(page)
            if how == "click":
                page.click("#rate-saneval-adherence-10-7")
            else:
                page.locator("body").press(how)
            wait_question(page, before)
        assert ratings(arena, "saneval_adherence_10") == [{"tenths": 1}, {"tenths": 10}, {"tenths": 7}]
        width = SIZES[size]["width"]
        for value in (0, 10):
            box = page.locator(f"#rate-saneval-adherence-10-{value}").bounding_box()
            assert box and 0 <= box["x"] and box["x"] + box["width"] <= width
        shoot(page, size, "ratings-15-saneval-tenths-answered")
