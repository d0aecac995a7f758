"""The Ratings tab's layout in a real browser at 1280×800 with a mouse and 390×844 with a touch screen
(:mod:`support.touch`): the guidelines of the question on screen (not every open task's at once), the image above the
phone's answer bar whatever warnings the status shows, and a choice scale's answers in even rows. Screenshots go to
``.cache/screenshots-ratings-layout`` for a person to look at.
"""

import os
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.rating_page import shown_src, submit_rating_sign_in, wait_question
from support.ratings import build_rating_arena
from support.touch import SIZES
from support.touch import open_page as open_touch_page
from support.webapp import running_app

from datamodel.human_ratings import set_assignment
from judges.rating_tasks import COMMONSENSE, RATING_TASKS, SANEVAL, SANEVAL_TENTHS, SEMVAR

SCREENSHOTS = Path(os.environ.get("ARENA_RATINGS_LAYOUT_SCREENSHOTS", ".cache/screenshots-ratings-layout"))
QUESTION_TASK = "() => document.querySelector('#rating-item [data-task]')?.dataset.task"


def shoot(page, size: str, name: str, *, full_page: bool = False) -> None:
    (SCREENSHOTS / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / size / f"{name}.png"), full_page=full_page)


@contextmanager
def rating(tmp_path, browser, size: str, tasks: tuple, **settings):
    """A rating arena with ``settings`` and ``tasks`` open (one rater per item), served, and a rater signed in on the
    Ratings tab at ``size`` with the task menu on "All open tasks": (arena, page)."""
    arena = build_rating_arena(tmp_path, **settings)
    for task in tasks:
        set_assignment(arena.db, task, raters_per_item=1)
    with running_app(arena.settings) as url:
        page = open_touch_page(browser, url, size)
        page.get_by_role("tab", name="Ratings").click()
        submit_rating_sign_in(page, "rater", "token-0001")
        wait_question(page)
        yield arena, page


def answer_key(page, key: str) -> None:
    before = shown_src(page)
    page.locator("body").press(key)
    wait_question(page, before)


def guidelines_shown(page) -> str:
    """The guidelines panel's text as the rater reads it (what CSS hides is not in ``innerText``), unfolded."""
    if not page.is_visible("#rating-guidelines-text"):
        page.locator("#rating-guidelines > button, #rating-guidelines .label-wrap").first.click()
        page.wait_for_selector("#rating-guidelines-text", state="visible", timeout=5000)
    return page.inner_text("#rating-guidelines-text")


@pytest.mark.parametrize("size", SIZES)
def test_the_guidelines_follow_the_question_on_screen(tmp_path, browser, size):
    """With every open task in the menu ("All open tasks"), the panel showed every task's guidelines one after the
    other: a wall of text in which the question's own were hard to find. It shows the question's task's."""
    opened = (COMMONSENSE, SEMVAR, SANEVAL)
    with rating(tmp_path, browser, size, tasks=tuple(task.name for task in opened)) as (arena, page):
        seen = set()
        for _ in range(12):  # answers until questions of two tasks at least were on screen
            task = RATING_TASKS[page.evaluate(QUESTION_TASK)]
            text = guidelines_shown(page)
            if task.name not in seen:
                shoot(page, size, f"guidelines-{len(seen) + 1}-{task.name}", full_page=True)
            seen.add(task.name)
            assert task.title in text, (task.name, text[:300])
            others = [other.title for other in opened if other is not task and other.title in text]
            assert not others, f"a {task.name} question shows the guidelines of {others}"
            if len(seen) >= 2:
                break
            answer_key(page, {COMMONSENSE.name: "y", SEMVAR.name: "s", SANEVAL.name: "3"}[task.name])
        assert len(seen) >= 2, seen


# the page's observers have laid the question out: the image's room is set and the image keeps to it
LAID_OUT = ("() => { const img = document.querySelector('#rating-image img.rating-shown'); "
            "const room = parseFloat(getComputedStyle(document.documentElement)"
            ".getPropertyValue('--rating-image-room')); "
            "return !!img && room > 0 && img.getBoundingClientRect().height <= Math.max(room, 160) + 1; }")


def settle(page) -> None:
    """Wait until the page's observers have given the image the room left (they run after each change of the
    status, the question or the bar), then two frames more."""
    page.wait_for_function(LAID_OUT, timeout=10000)
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")


def image_and_bar(page) -> tuple[dict, dict]:
    return (page.locator("#rating-image img.rating-shown").bounding_box(), page.locator("#rating-bar").bounding_box())


@pytest.mark.parametrize("size", SIZES)
def test_the_image_stays_above_the_answer_bar_whatever_warnings_show(tmp_path, browser, size):
    """On the phone two warnings on the status line (the bias rule near, answers fast) pushed the image down under
    the fixed answer bar. The whole image stays above the bar, at a size one can judge."""
    with rating(tmp_path, browser, size, tasks=(SANEVAL.name,), quality_bias_min_votes=6,
                rate_limit_annotator_per_minute=3) as (arena, page):
        for _ in range(3):  # the same answer, fast: warned twice
            answer_key(page, "5")
        assert page.locator("#rating-status .rating-warning").count() == 2, page.inner_text("#rating-status")
        settle(page)
        shoot(page, size, "warnings-01-two")
        assert_image_in_view(page, size)
        if size == "phone":  # each warning in two lines; a tap shows it whole
            folded = "(w) => w.scrollHeight > w.clientHeight + 1"
            warning = page.locator("#rating-status .rating-warning").first
            assert warning.evaluate(folded)
            warning.tap()
            page.wait_for_function(f"() => !({folded})(document.querySelector('#rating-status .rating-warning'))",
                                   timeout=5000)
            warning.tap()
            page.wait_for_function(f"() => ({folded})(document.querySelector('#rating-status .rating-warning'))",
                                   timeout=5000)
        page.locator("body").press("5")  # a fourth answer in a minute: refused, the wait counts down in a warning
        page.wait_for_function("() => document.querySelector('#rating-status')?.innerText.includes('again in')",
                               timeout=20000)
        assert page.locator("#rating-status .rating-warning").count() == 2, page.inner_text("#rating-status")
        settle(page)
        shoot(page, size, "warnings-02-refused")
        countdown = page.locator("#rating-status .countdown").bounding_box()  # the wait's seconds are not cut off
        status = page.locator("#rating-status").bounding_box()
        assert countdown and countdown["width"] > 0, countdown
        assert countdown["y"] + countdown["height"] <= status["y"] + status["height"] + 1, (countdown, status)
        assert page.evaluate("() => { const warning = document.querySelector('#rating-status .rating-refusal'); "
                             "return warning.scrollHeight <= warning.clientHeight + 1; }"), "the refusal is cut off"
        assert_image_in_view(page, size)


def assert_image_in_view(page, size: str) -> None:
    """The whole image on screen without scrolling, above the answer bar on the phone, at a size one can judge."""
    image, bar = image_and_bar(page)
    assert image["y"] >= 0 and image["height"] >= 160, image
    if size == "phone":  # the answer bar is fixed at the bottom
        assert image["y"] + image["height"] <= bar["y"] + 1, (image, bar)
    else:
        assert image["y"] + image["height"] <= SIZES[size]["height"], image


def button_rows(page, task: str) -> list[int]:
    """How many of ``task``'s answer buttons sit on each line of the answer bar, top to bottom."""
    tops = page.eval_on_selector_all(
        f"#rate-{task.replace('_', '-')}-row > button",
        "(buttons) => buttons.filter((b) => b.offsetParent !== null)"
        ".map((b) => Math.round(b.getBoundingClientRect().top))")
    rows: dict[int, int] = {}
    for top in tops:
        line = next((known for known in rows if abs(known - top) <= 4), top)
        rows[line] = rows.get(line, 0) + 1
    return [rows[line] for line in sorted(rows)]


def labels_fit(page, task: str) -> list[str]:
    """The labels of ``task``'s buttons that do not fit their button (cut off or overflowing)."""
    return page.eval_on_selector_all(
        f"#rate-{task.replace('_', '-')}-row > button",
        "(buttons) => buttons.filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)"
        ".map((b) => b.innerText)")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("task", [COMMONSENSE, SANEVAL, SANEVAL_TENTHS], ids=lambda task: task.name)
def test_a_choice_scales_answers_lie_in_even_rows(tmp_path, browser, size, task):
    """At 1280×800 SANEval's five answers wrapped four and one. A choice scale's answers lie in one row when they
    fit, else in rows that differ by one button at most, each label whole."""
    with rating(tmp_path, browser, size, tasks=(task.name,)) as (arena, page):
        page.wait_for_function("() => [...document.querySelectorAll('.rating-choices')]"
                               ".some((row) => row.offsetParent !== null && row.dataset.laidOut)", timeout=10000)
        settle(page)
        shoot(page, size, f"answers-{task.name}")
        rows = button_rows(page, task.name)
        assert sum(rows) == len(task.scale.points), rows
        assert max(rows) - min(rows) <= 1, f"{task.name}'s answers lie in rows of {rows}"
        assert not labels_fit(page, task.name), labels_fit(page, task.name)
