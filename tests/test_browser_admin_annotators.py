"""Admin actions per annotator (issue 29), in a real browser at 1280×800 and 390×844 (touch).

What an admin met before: the only action was to include or exclude one vote by typing its id (restoring 10 votes
took 10 rounds, a spammer's 500 votes 500), with no action or filter per annotator; a wrong or empty id replaced the
flagged-votes table with "Error" until the next unlock; a successful action gave no confirmation and the other tables
did not refresh; the coverage table hid its votes column behind the prompt text; a "Wrong admin password" toast
outlived the successful unlock.
"""

import random
import time

import pytest
from support.arena import build_small_arena
from support.touch import SIZES, open_page, press, shoot
from support.webapp import running_app

from arena import session as sessions
from datamodel.quality import QualityRules

PASSWORD = "letmein-admin"


def _cast(db, name: str, votes: int, *, rules: QualityRules, start: float, every: float, outcome: str = "A") -> None:
    s = sessions.start(db, name, f"{name}-token", open_signup=True)
    for i in range(votes):
        at = start + i * every
        s = sessions.vote(db, sessions.next_battle(db, random.Random(i), s, now=at - 1), outcome, rules=rules, now=at)


ROW = "#annotator-stats [role=row]:has([role=gridcell])"  # Gradio draws a table's rows as [role=row] of gridcells


def _row(page, name: str) -> dict:
    """The annotators table's row of ``name`` as {header: cell}."""
    return page.evaluate(f"""() => {{
      const heads = [...document.querySelectorAll('#annotator-stats thead th')]
        .map(th => (th.querySelector('.header-content') || th).innerText.trim());
      for (const row of document.querySelectorAll({ROW!r})) {{
        const cells = [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.innerText.trim());
        if (cells[heads.indexOf('Annotator')] === {name!r})
          return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
      }}
      return null;
    }}""")


def _wait_row(page, name: str, header: str, value: str) -> dict:
    """Wait until the annotators table (read again after an action) shows ``value`` under ``header`` for ``name``."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        row = _row(page, name)
        if row and row.get(header) == value:
            return row
        page.wait_for_timeout(200)
    raise AssertionError(f"{name}'s {header} is not {value}: {_row(page, name)}")


def _message(page, selector: str, text: str) -> str:
    page.wait_for_function(f"() => document.querySelector({selector!r})?.innerText.includes({text!r})", timeout=20000)
    return page.inner_text(selector)


@pytest.mark.parametrize("size", SIZES)
def test_the_admin_reviews_all_of_an_annotator_s_votes_or_a_rule_s_in_one_action(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, admin_password=PASSWORD, quality_max_per_hour=5,
                              quality_max_per_3_hours=100)
    rules = arena.settings.quality_rules
    now = time.time()
    _cast(arena.db, "spammer", 24, rules=QualityRules(max_per_hour=1000, max_per_3_hours=1000, bias_min_votes=1000),
          start=now - 20000, every=400)
    _cast(arena.db, "careful", 8, rules=rules, start=now - 3000, every=60, outcome="tie")  # votes 6-8: rate rule
    flagged_by_rate = arena.db.execute("SELECT COUNT(*) FROM votes WHERE voter = 'careful' AND excluded = 1")
    assert flagged_by_rate.fetchone()[0] == 3
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", "wrong-password")
        press(page, size, "#admin-unlock")
        page.wait_for_function("() => [...document.querySelectorAll('.toast-body')].some(t => "
                               "t.innerText.includes('Wrong admin password'))", timeout=20000)
        page.fill("#admin-password input", PASSWORD)
        press(page, size, "#admin-unlock")
        page.wait_for_selector("#annotator-stats", timeout=20000)
        page.wait_for_timeout(500)
        assert "Wrong admin password" not in page.inner_text("body"), "the failed unlock's message outlived the unlock"
        # flags and counts per annotator
        careful = _row(page, "careful")
        assert careful and (careful["Votes"], careful["Counted"], careful["Rate rule"]) == ("8", "5", "3"), careful
        assert _row(page, "spammer")["Counted"] == "24"
        shoot(page, size, "admin-01-annotators", full_page=True)
        # a click on a row chooses the annotator; one action excludes every vote, with a reason
        page.locator(ROW, has_text="spammer").first.locator("[role=gridcell]").nth(1).click()
        page.wait_for_function("() => document.querySelector('#review-annotator input').value === 'spammer'",
                               timeout=10000)
        press(page, size, "#review-exclude-all")  # no reason yet: refused, nothing changes
        _message(page, "#review-message", "Give a reason")
        assert arena.db.execute("SELECT COUNT(*) FROM votes WHERE excluded = 1").fetchone()[0] == 3
        page.fill("#review-reason textarea, #review-reason input", "one side every time, every 7 minutes")
        press(page, size, "#review-exclude-all")
        confirmed = _message(page, "#review-message", "Excluded 24 votes")
        assert "every vote of spammer" in confirmed and "one side every time" in confirmed, confirmed
        page.wait_for_function("() => document.querySelectorAll('#admin-actions [role=gridcell]').length >= 8",
                               timeout=20000)
        spammer = _wait_row(page, "spammer", "Counted", "0")  # the tables refreshed
        assert spammer["Excluded by admin"] == "24", spammer
        shoot(page, size, "admin-02-spammer-excluded", full_page=True)
        # a rule's votes of one annotator back in, in one action
        page.locator(ROW, has_text="careful").first.locator("[role=gridcell]").nth(1).click()
        page.wait_for_function("() => document.querySelector('#review-annotator input').value === 'careful'",
                               timeout=10000)
        page.click("#review-rule input")
        page.locator("ul[role=listbox] li[role=option]", has_text="rate rule").first.click()
        page.fill("#review-reason textarea, #review-reason input", "a careful voter before the caps were raised")
        press(page, size, "#review-include-all")
        confirmed = _message(page, "#review-message", "Included 3 votes")
        assert "careful" in confirmed and "rate rule" in confirmed, confirmed
        page.wait_for_function("() => document.querySelectorAll('#admin-actions [role=row]:has([role=gridcell])')"
                               ".length >= 2", timeout=20000)
        _wait_row(page, "careful", "Counted", "8")
        assert arena.db.execute("SELECT COUNT(*) FROM votes WHERE voter = 'careful' AND excluded = 1"
                                ).fetchone()[0] == 0
        # a wrong vote id is told in words; the flagged votes stay a table
        page.fill("#review-vote-id input, #review-vote-id textarea", "999999")
        press(page, size, "#review-exclude")
        _message(page, "#vote-review-message", "No vote with id 999999")
        page.wait_for_timeout(300)
        assert page.locator("#flagged-votes [role=gridcell]").count() >= 1, "the flagged votes table is gone"
        assert "Error" not in page.inner_text("#flagged-votes")
        shoot(page, size, "admin-03-wrong-vote-id", full_page=True)
        # the coverage table shows its votes first
        page.get_by_role("tab", name="Per prompt").click()
        page.wait_for_timeout(500)
        first = page.evaluate("() => [...document.querySelectorAll('#votes-per-prompt thead th')]"
                              ".map(th => th.innerText.trim()).filter(t => t)[0]")
        assert first == "Votes", first
        box = page.locator("#votes-per-prompt thead th", has_text="Votes").first.bounding_box()
        assert box and box["x"] + box["width"] <= SIZES[size]["width"]
