"""The rater's day on the Ratings tab in a real browser (issue 41), at 1280×800 with a mouse and 390×844 with a touch
screen (:mod:`support.touch`): answers about to be set aside are warned about and those set aside are counted and
explained, the phone shows the whole image above the answer bar, no key hints on a touch screen, the answers look
alike, each task's own pace rule, sign-in typos that lock nobody out, a reload that keeps the question, and a wait
that counts down. Screenshots go to ``.cache/screenshots-issue41`` for a person to look at.
"""

import json
import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.rating_page import shown_src, submit_rating_sign_in, wait_question
from support.ratings import build_rating_arena
from support.touch import SIZES, TOUCH
from support.touch import open_page as open_touch_page
from support.webapp import running_app

from datamodel.human_ratings import set_assignment
from judges.rating_tasks import SANEVAL

SCREENSHOTS = Path(os.environ.get("ARENA_ISSUE41_SCREENSHOTS", ".cache/screenshots-issue41"))


def shoot(page, size: str, name: str) -> None:
    (SCREENSHOTS / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / size / f"{name}.png"))


def open_ratings(browser, url: str, size: str, name: str = "rater", token: str = "token-0001"):
    page = open_touch_page(browser, url, size)
    page.get_by_role("tab", name="Ratings").click()
    submit_rating_sign_in(page, name, token)
    wait_question(page)
    return page


@contextmanager
def rating(tmp_path, browser, size: str, tasks: tuple = ("commonsense_fit",), **settings):
    """A rating arena with ``settings`` and ``tasks`` open (one rater per item), served, and a rater signed in on
    the Ratings tab at ``size``: (arena, page)."""
    arena = build_rating_arena(tmp_path, **settings)
    for task in tasks:
        set_assignment(arena.db, task, raters_per_item=1)
    with running_app(arena.settings) as url:
        yield arena, open_ratings(browser, url, size)


def answer_key(page, key: str) -> None:
    before = shown_src(page)
    page.locator("body").press(key)
    wait_question(page, before)


def on_buttons(page, selector: str, what: str) -> list:
    """``what`` (a JavaScript expression of a button ``b``) of each visible button matching ``selector``."""
    return page.eval_on_selector_all(selector, f"(buttons) => buttons.filter((b) => b.offsetParent !== null)"
                                               f".map((b) => {what})")


def assert_counts_down(page, countdown: str, size: str, name: str) -> None:
    """The wait's seconds (``countdown``) go down by about one a second."""
    page.wait_for_selector(countdown, timeout=20000)
    first = int(page.inner_text(countdown))
    page.wait_for_timeout(2300)
    shoot(page, size, name)
    later = int(page.inner_text(countdown))
    assert 1 <= first - later <= 3, (first, later)


def status(page) -> str:
    return page.inner_text("#rating-status")


def answers(arena) -> list:
    return [(json.loads(a), excluded) for a, excluded in arena.db.execute(
        "SELECT answer, excluded FROM ratings ORDER BY id")]


@pytest.mark.parametrize("size", SIZES)
def test_answers_near_the_bias_rule_are_warned_and_those_set_aside_are_counted(tmp_path, browser, size):
    # the bias rule from 6 answers (warned from 3), no speed rule in the way
    with rating(tmp_path, browser, size, tasks=("saneval_adherence",), quality_bias_min_votes=6,
                quality_fast_streak=1000) as (arena, page):
        for _ in range(3):
            answer_key(page, "5")
        shoot(page, size, "bias-01-warned")
        line = status(page)
        assert "3 answers so far, all count" in line
        assert "3 of your 3 SANEval" in line and "5 · Perfect" in line and "From 6 answers" in line
        for _ in range(3):
            answer_key(page, "5")
        shoot(page, size, "bias-02-set-aside")
        line = status(page)
        assert [excluded for _, excluded in answers(arena)] == [1] * 6
        assert "6 answers so far, 0 count" in line
        assert "6 of your answers do not count" in line and "5 · Perfect" in line
        assert page.locator("#rating-status .rating-warning").count() >= 1


@pytest.mark.parametrize("size", SIZES)
def test_the_phone_shows_the_whole_image_above_the_answer_bar(tmp_path, browser, size):
    with rating(tmp_path, browser, size) as (arena, page):
        answer_key(page, "y")  # a "Saved" line now
        shoot(page, size, "layout-01-question")
        image = page.locator("#rating-image img.rating-shown").bounding_box()
        bar = page.locator("#rating-bar").bounding_box()
        height = SIZES[size]["height"]
        assert image["y"] >= 0 and image["height"] >= 240
        if size == "phone":  # the whole image above the fixed answer bar, without scrolling
            assert image["y"] + image["height"] <= bar["y"] + 1, (image, bar)
        else:
            assert image["y"] + image["height"] <= height


@pytest.mark.parametrize("size", SIZES)
def test_key_hints_only_where_there_is_a_keyboard(tmp_path, browser, size):
    with rating(tmp_path, browser, size) as (arena, page):
        shoot(page, size, "keys-01-hints")
        # what the rater reads on the buttons: their text and what CSS adds after it
        texts = " ".join(on_buttons(page, "#rating-bar button", "b.innerText + getComputedStyle(b, '::after').content"))
        if TOUCH[size]:
            assert "(Y)" not in texts and "(S)" not in texts and "Enter" not in texts, texts
        else:
            assert "(Y)" in texts and "(N)" in texts and "(S)" in texts, texts


@pytest.mark.parametrize("size", SIZES)
def test_every_answer_looks_alike(tmp_path, browser, size):
    with rating(tmp_path, browser, size, tasks=("saneval_adherence",)) as (arena, page):
        shoot(page, size, "answers-01-alike")
        looks = on_buttons(page, "#rating-bar .rating-controls button",
                           "[getComputedStyle(b).backgroundColor, getComputedStyle(b).color, b.className]")
        assert len(looks) == 5
        assert len({(background, color) for background, color, _ in looks}) == 1, looks
        assert not any("primary" in classes for _, _, classes in looks)


@pytest.mark.parametrize("size", SIZES)
def test_sign_in_typos_do_not_lock_the_rater_out(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path)
    set_assignment(arena.db, "commonsense_fit", raters_per_item=1)
    with running_app(arena.settings) as url:
        page = open_touch_page(browser, url, size)
        page.get_by_role("tab", name="Ratings").click()
        for _attempt in range(7):
            submit_rating_sign_in(page, "typist", "abc")
            page.wait_for_function(
                "() => document.querySelector('#rating-signin-message')?.innerText.includes('at least')",
                timeout=20000)
            page.wait_for_timeout(500)  # this attempt's answer in (the words are the same each time)
            assert "Wait" not in page.inner_text("#rating-signin-message")
        shoot(page, size, "signin-01-typos")
        submit_rating_sign_in(page, "typist", "token-0001")
        wait_question(page)
        assert "typist" in status(page)


@pytest.mark.parametrize("size", SIZES)
def test_a_reload_shows_the_same_question(tmp_path, browser, size):
    with rating(tmp_path, browser, size) as (arena, page):
        for k in range(3):
            shown = shown_src(page)
            item = page.inner_text("#rating-item")
            page.reload()
            page.get_by_role("tab", name="Ratings").click()
            wait_question(page)
            assert shown_src(page) == shown and page.inner_text("#rating-item") == item
            answer_key(page, "yn"[k % 2])


@pytest.mark.parametrize("size", SIZES)
def test_a_wait_counts_down(tmp_path, browser, size):
    with rating(tmp_path, browser, size, tasks=("saneval_adherence",),
                rate_limit_annotator_per_minute=1) as (arena, page):
        answer_key(page, "3")
        page.locator("body").press("4")
        assert_counts_down(page, "#rating-status .countdown", size, "countdown-01")


def test_the_phone_menus_close_after_a_pick(tmp_path, browser):
    arena = build_rating_arena(tmp_path)
    set_assignment(arena.db, "commonsense_fit", raters_per_item=1)
    set_assignment(arena.db, "saneval_adherence", raters_per_item=1)
    with running_app(arena.settings) as url:
        page = open_ratings(browser, url, "phone")
        assert not page.is_visible("#rating-task") and not page.is_visible("#rating-sign-out")
        page.tap(".rating-menu-toggle")
        page.wait_for_selector("#rating-task", state="visible", timeout=5000)
        shoot(page, "phone", "menu-01-ratings-open")
        page.tap("#rating-task input")
        page.get_by_role("option", name=SANEVAL.title, exact=True).tap()
        page.wait_for_function("() => document.querySelector('#rating-item [data-task]')?.dataset.task "
                               "=== 'saneval_adherence'", timeout=20000)
        page.wait_for_selector("#rating-task", state="hidden", timeout=5000)
        shoot(page, "phone", "menu-02-ratings-picked")


def test_the_arena_suite_menu_closes_after_a_pick_on_the_phone(tmp_path, browser):
    arena = build_rating_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_touch_page(browser, url, "phone")
        page.fill("#signin-name textarea, #signin-name input", "rater")
        page.fill("#signin-token input", "token-0001")
        page.click("#signin-button")
        page.wait_for_selector("#image-a img", timeout=20000)
        page.tap(".arena-menu-toggle")
        page.wait_for_selector("#suite-filter", state="visible", timeout=5000)
        page.tap("#suite-filter input")
        option = page.locator("#suite-filter [role='option']").nth(1)
        option.tap()
        page.wait_for_selector("#suite-filter", state="hidden", timeout=5000)
        shoot(page, "phone", "menu-03-arena-picked")


@pytest.mark.parametrize("size", SIZES)
def test_careful_yes_no_answers_are_not_warned_as_fast(tmp_path, browser, size):
    # Commonsense-T2I's pace is 2 s (docs/human-ratings.md): answers 2.6 s apart are careful; 0.5 s apart are not
    with rating(tmp_path, browser, size) as (arena, page):
        for key in "yny":
            page.wait_for_timeout(2600)  # the rater's pace is what this test is about
            answer_key(page, key)
            assert "very fast" not in status(page)
        shoot(page, size, "pace-01-careful")
        answer_key(page, "n")
        answer_key(page, "y")
        shoot(page, size, "pace-02-fast")
        assert "less than 2 s apart" in status(page)


@pytest.mark.parametrize("size", SIZES)
def test_the_arena_guidelines_name_the_expected_outcome_box_as_it_is(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_touch_page(browser, url, size)
        page.fill("#signin-name textarea, #signin-name input", "reader")
        page.fill("#signin-token input", "token-0001")
        page.click("#signin-button")
        page.wait_for_selector("#image-a img", timeout=20000)
        label = page.locator("#show-expected").text_content().strip()
        text = page.locator("#arena-box").text_content()
        shoot(page, size, "guidelines-01-arena")
        assert "Show expected outcome" not in text
        assert f"tick {label}" in text, label


@pytest.mark.parametrize("size", SIZES)
def test_a_wait_counts_down_on_the_arena_tab(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path, rate_limit_annotator_per_minute=1)
    with running_app(arena.settings) as url:
        page = open_touch_page(browser, url, size)
        page.fill("#signin-name textarea, #signin-name input", "hasty")
        page.fill("#signin-token input", "token-0001")
        page.click("#signin-button")
        page.wait_for_function("() => [...document.querySelectorAll('#image-a img, #image-b img')]"
                               ".filter((img) => img.complete && img.naturalWidth > 0).length === 2", timeout=20000)
        page.locator("body").press("a")
        page.wait_for_selector("#reveal .voted", timeout=20000)
        page.locator("body").press("n")
        page.wait_for_function("() => document.querySelector('#reveal .voted') === null", timeout=20000)
        page.wait_for_function("() => [...document.querySelectorAll('#image-a img, #image-b img')]"
                               ".filter((img) => img.complete && img.naturalWidth > 0).length === 2", timeout=20000)
        page.wait_for_timeout(300)
        page.locator("body").press("b")
        assert_counts_down(page, "#status .countdown", size, "countdown-02-arena")

