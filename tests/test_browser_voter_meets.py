"""What a voter still met after issue 29, in a real browser at 1280×800 and 390×844 (touch): a reload that put the
suite menu back to "All suites" and dropped the reveal of the battle just voted on, and "Show expected outcome",
which showed the benchmark's answer before the vote (a rater told the answer no longer judges the images alone)."""

import contextlib

import pytest
from support.arena import build_small_arena
from support.touch import BATTLE_SHOWN, next_battle, open_page, press, shoot, sign_in, vote, wait_images
from support.webapp import running_app

from suites.registry import suite_title

COMMONSENSE = suite_title("commonsense")
ANSWERS = ("The lightbulb is unlit", "The lightbulb is lit")  # the two commonsense prompts' expected outcomes


def _unfold(page, size: str) -> None:
    """On a phone the suite menu and the expected outcome fold behind the "Suite ▾" toggle: open it."""
    if size == "phone" and not page.evaluate("() => document.getElementById('arena-top').classList"
                                             ".contains('menu-open')"):
        press(page, size, ".arena-menu-toggle")
        page.wait_for_function("() => document.querySelector('#suite-filter').getClientRects().length > 0",
                               timeout=5000)


def _pick_suite(page, size: str, title: str) -> None:
    _unfold(page, size)
    page.click("#suite-filter input")
    page.get_by_role("option", name=title).click()
    page.wait_for_function(f"() => document.querySelector('#prompt')?.innerText.includes('{title}') && "
                           f"({BATTLE_SHOWN})()", timeout=20000)
    wait_images(page)


def _suite_shown(page) -> str:
    return page.input_value("#suite-filter input")


def _answers_on_page(page) -> list[str]:
    text = page.inner_text("#arena-box")
    return [answer for answer in ANSWERS if answer in text]


@contextlib.contextmanager
def _voting_in_commonsense(tmp_path, browser, size: str, name: str):
    """(arena, page): ``name`` signed in on a fresh small arena, Commonsense-T2I picked, its first battle shown."""
    arena = build_small_arena(tmp_path)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, name)
        _pick_suite(page, size, COMMONSENSE)
        yield arena, page


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_reload_comes_back_with_the_chosen_suite_and_the_reveal(tmp_path, browser, size):
    with _voting_in_commonsense(tmp_path, browser, size, "reloader") as (arena, page):
        vote(page, size)
        reveal = page.inner_text("#reveal .voted")
        voted_prompt = page.inner_text("#prompt")
        page.reload()
        page.wait_for_function("() => document.querySelector('#image-a img') && "
                               "document.querySelector('#status')?.innerText.includes('reloader')", timeout=20000)
        wait_images(page)
        page.wait_for_timeout(300)
        shoot(page, size, "meets-01-reloaded-on-the-reveal")
        lost = [what for what, kept in (("the suite (the menu says " + repr(_suite_shown(page)) + ")",
                                         _suite_shown(page) == COMMONSENSE),
                                        ("the reveal of the battle voted on", page.locator("#reveal .voted").count()))
                if not kept]
        assert not lost, "the reload lost " + " and ".join(lost)
        assert page.inner_text("#reveal .voted").split("Press")[0] == reveal.split("Press")[0]
        assert page.inner_text("#prompt") == voted_prompt
        assert "1 vote cast" in page.inner_text("#status")
        # Next still brings the battle that came with the vote, of the chosen suite; a reload on it (not voted on)
        # keeps it, unvoted, and the suite
        next_battle(page, size)
        assert COMMONSENSE in page.inner_text("#prompt")
        shown = page.get_attribute("#image-a img", "src")
        page.reload()
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        wait_images(page)
        shoot(page, size, "meets-02-reloaded-before-the-vote")
        assert page.get_attribute("#image-a img", "src") == shown
        assert _suite_shown(page) == COMMONSENSE
        vote(page, size, "#vote-b")  # and it can be voted on
        assert arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 2


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_the_expected_outcome_is_offered_only_after_the_vote(tmp_path, browser, size):
    with _voting_in_commonsense(tmp_path, browser, size, "careful") as (arena, page):
        _unfold(page, size)
        page.click("#show-expected input")  # ticked before the vote: nothing of the answer shows yet
        page.wait_for_timeout(500)
        shoot(page, size, "meets-03-expected-before-the-vote")
        assert _answers_on_page(page) == [], f"the answer shows before the vote: {_answers_on_page(page)}"
        label = page.inner_text("#show-expected")
        assert "after" in label.lower(), f"the switch does not say it is for after the vote: {label!r}"
        vote(page, size)
        page.wait_for_timeout(300)
        shoot(page, size, "meets-04-expected-after-the-vote")
        assert len(_answers_on_page(page)) == 1, "the ticked expected outcome is not shown after the vote"
        assert arena.db.execute("SELECT expected_shown FROM votes").fetchone()[0] == 0  # not seen while voting
        next_battle(page, size)
        assert _answers_on_page(page) == [], "the next battle shows its answer before the vote"
