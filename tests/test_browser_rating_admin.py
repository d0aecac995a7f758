"""The admin tab's Human ratings section in a real browser (issue 41), at 1280×800 and 390×844: the votes admin's
tools for ratings (a row click picks a rating, an action on one rating or on all of a rater's with a reason, a
confirmation line), the rule's reason kept through the admin's decisions, task titles and answers in words, a 0 in
"Raters per item" refused in words, id boxes that start empty, and a used export link that says so. Screenshots go to
``.cache/screenshots-issue41``.
"""

import os
import random
from pathlib import Path

import pytest
from support.ratings import build_rating_arena
from support.touch import SIZES, open_page
from support.webapp import running_app

from arena import rating_session as raters
from datamodel.human_ratings import set_assignment
from datamodel.quality import QualityRules
from judges.rating_tasks import SANEVAL

SCREENSHOTS = Path(os.environ.get("ARENA_ISSUE41_SCREENSHOTS", ".cache/screenshots-issue41"))
PASSWORD = "admin-password-1"


def shoot(page, size: str, name: str) -> None:
    (SCREENSHOTS / size).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / size / f"{name}.png"))


def rate_fives(arena, name: str, answers: int) -> None:
    """``answers`` answers of 5 · Perfect by ``name``, 10 s apart: the bias rule (from 6 here) sets them aside."""
    db, pool, rng = arena.db, raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, raters.start(db, name, "token-0001", open_signup=True), pool=pool,
                                   now=1000.0)
    for k in range(answers):
        session = raters.answer(db, session, {"likert": 5}, pool=pool, rng=rng, now=1010.0 + 10 * k,
                                rules=QualityRules(bias_min_votes=6))


def reasons(arena) -> list:
    return [tuple(row) for row in arena.db.execute("SELECT id, excluded, excluded_reason FROM ratings ORDER BY id")]


def unlock(browser, url: str, size: str):
    page = open_page(browser, url, size)
    page.get_by_role("tab", name="Admin").click()
    page.fill("#admin-password input", PASSWORD)
    page.click("#admin-unlock")
    page.wait_for_selector("#flagged-ratings", timeout=20000)
    page.wait_for_function("() => document.querySelector('#rating-study')?.innerText.includes('SANEval')",
                           timeout=20000)
    return page


def wait_text(page, selector: str, text: str) -> None:
    page.wait_for_function("([s, t]) => document.querySelector(s)?.innerText.includes(t)", arg=[selector, text],
                           timeout=20000)


@pytest.mark.parametrize("size", SIZES)
def test_the_ratings_admin_reviews_ratings_and_raters_as_the_votes_admin(tmp_path, browser, size):
    arena = build_rating_arena(tmp_path, admin_password=PASSWORD)
    set_assignment(arena.db, SANEVAL.name, raters_per_item=1)
    rate_fives(arena, "straight", 6)
    assert [excluded for _, excluded, _ in reasons(arena)] == [1] * 6
    rule_reason = reasons(arena)[0][2]
    with running_app(arena.settings) as url:
        page = unlock(browser, url, size)
        page.locator("#rating-study").scroll_into_view_if_needed()
        shoot(page, size, "admin-01-study")
        study, flagged = page.inner_text("#rating-study"), page.inner_text("#flagged-ratings")
        assert SANEVAL.title in study and "saneval_adherence" not in study
        assert "5 · Perfect" in flagged and "likert" not in flagged and "saneval_adherence" not in flagged
        # the id boxes start empty, not at 0
        assert page.input_value("#review-rating-id input, #review-rating-id textarea") == ""
        assert page.input_value("#review-vote-id input, #review-vote-id textarea") == ""
        # a 0 in Raters per item: said in words, the study table stays
        page.click("#rating-admin-task input")
        page.get_by_role("option", name=SANEVAL.title, exact=True).click()
        page.fill("#rating-admin-raters input", "0")
        page.click("#rating-admin-save")
        wait_text(page, "#rating-admin-message", "1 to")
        shoot(page, size, "admin-02-zero-raters")
        assert page.locator(".toast-body:visible").count() == 0 and "Error" not in page.inner_text("body")
        assert SANEVAL.title in page.inner_text("#rating-study")
        # a row click picks the rating; counted again with a reason, confirmed; the rule's reason stays
        page.locator("#flagged-ratings [role=row]:has([role=gridcell])").first.locator("[role=gridcell]").nth(2).click()
        newest = max(rating_id for rating_id, _, _ in reasons(arena))
        page.wait_for_function("(id) => document.querySelector('#review-rating-id :is(input, textarea)').value "
                               "=== String(id)",
                               arg=newest, timeout=20000)
        page.fill("#review-rating-reason input, #review-rating-reason textarea", "checked by hand")
        page.click("#review-rating-include")
        wait_text(page, "#rating-review-message", "✓")
        shoot(page, size, "admin-03-one-included")
        page.click("#review-rating-exclude")
        wait_text(page, "#rating-review-message", "Excluded")
        page.click("#review-rating-include")
        wait_text(page, "#rating-review-message", "Included")
        final = dict((rating_id, (excluded, reason)) for rating_id, excluded, reason in reasons(arena))[newest]
        assert final[0] == 0 and "checked by hand" in final[1] and final[1].count(rule_reason) == 1
        assert "excluded by an admin" not in final[1]
        # all of one rater's ratings, with a reason
        page.click("#rating-review-rater input")
        page.get_by_role("option", name="straight", exact=True).click()
        page.fill("#rating-review-rater-reason input, #rating-review-rater-reason textarea", "a known careful rater")
        page.click("#rating-review-rater-include")
        wait_text(page, "#rating-review-message", "6 ratings")
        shoot(page, size, "admin-04-rater-included")
        assert [excluded for _, excluded, _ in reasons(arena)] == [0] * 6
        assert all(rule_reason in reason for _, _, reason in reasons(arena))
        # a used export link says so
        page.click("#rating-export-csv")
        page.wait_for_selector("#rating-export-file a", timeout=20000)
        with page.expect_download():
            page.click("#rating-export-file a")
        page.wait_for_selector("#rating-export-file .export-used", timeout=5000)
        shoot(page, size, "admin-05-export-used")
        assert page.locator("#rating-export-file a[href]").count() == 0
