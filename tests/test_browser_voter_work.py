"""Nothing a voter does is discarded silently (issue 29), in a real browser at 1280×800 and 390×844 (touch).

A careful phone voter had votes 31 to 40 set aside by the hourly cap while the page said "40 votes so far". Here the
hourly cap is lowered to 5 so that a test reaches it: the page counts the votes cast and those that count, warns
before the cap, says on the reveal why the vote past it does not count, and keeps saying so on the status line.
"""

import pytest
from support.arena import build_small_arena
from support.touch import SIZES, box, next_battle, open_page, shoot, sign_in, vote
from support.webapp import running_app

CAP = 5


def status(page) -> str:
    return page.inner_text("#status")


def reveal(page) -> str:
    return page.inner_text("#reveal")


@pytest.mark.parametrize("size", SIZES)
def test_the_page_counts_cast_and_counted_votes_warns_before_the_cap_and_says_why_a_vote_does_not_count(
        tmp_path, browser, size):
    arena = build_small_arena(tmp_path, quality_max_per_hour=CAP, quality_max_per_3_hours=100)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "careful")
        seen = []
        for number in range(1, CAP + 2):
            vote(page, size)
            page.wait_for_function(f"() => document.querySelector('#status')?.innerText.includes('{number} vote')",
                                   timeout=20000)
            seen.append((status(page), reveal(page)))
            if number == CAP - 2:
                shoot(page, size, "voter-01-warned-before-the-cap")
            if number == CAP + 1:
                shoot(page, size, "voter-02-a-vote-that-does-not-count")
            else:
                next_battle(page, size)
        excluded = arena.db.execute("SELECT COUNT(*) FROM votes WHERE excluded = 1").fetchone()[0]
        assert excluded == 1, "the test expects the vote past the cap, and only it, to be set aside"
        first_status, first_reveal = seen[0]
        assert "1 vote cast" in first_status and "counts" in first_status, first_status
        assert "does not count" not in first_reveal
        # warned before the cap: from a tenth of it (at least 3 votes) before, with how many still count
        warned_at = [i + 1 for i, (text, _) in enumerate(seen) if "do not count" in text and "more count" in text]
        assert warned_at and warned_at[0] <= CAP - 2, [text for text, _ in seen]
        at_cap_status, at_cap_reveal = seen[CAP - 1]
        assert "Your next votes do not count" in at_cap_status, at_cap_status
        # the vote past the cap: the reveal says why, the status counts it apart and says why
        last_status, last_reveal = seen[CAP]
        assert f"This vote does not count: more than {CAP} votes in an hour" in last_reveal, last_reveal
        assert f"{CAP + 1} votes cast, {CAP} count" in last_status, last_status
        assert f"1 of your votes does not count: 1 past {CAP} votes in an hour" in last_status, last_status
        # and the reason is on screen, not under the phone's vote bar
        warning = box(page, "#reveal .arena-warning")
        bar = box(page, "#vote-bar")
        assert warning["y"] >= 0 and warning["y"] + warning["height"] <= SIZES[size]["height"]
        if size == "phone":
            assert warning["y"] + warning["height"] <= bar["y"] + 1, (warning, bar)
        # a warning looks like one (not like the status line's plain text)
        colour = page.evaluate("() => getComputedStyle(document.querySelector('#reveal .arena-warning'))"
                               ".backgroundColor")
        assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), colour
