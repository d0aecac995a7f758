"""The admin reviews four-image votes beside the pairwise ones (issue 42), in a real browser at 1280×800 and 390×844
(touch): the annotators table counts them, the flagged votes list them with their kind, pick and models, and a click
on one and Include restores it. Screenshots: ``ARENA_FOUR_IMAGE_REVIEW_SCREENSHOTS`` (default
``.cache/screenshots-four-image-review``)."""


import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.touch import SIZES, open_page, press
from support.votes import four_image_votes
from support.webapp import running_app

from arena import session as sessions

PASSWORD = "letmein-admin"
SCREENSHOTS = browsers.screenshot_folder("ARENA_FOUR_IMAGE_REVIEW_SCREENSHOTS", ".cache/screenshots-four-image-review")
FLAGGED_ROWS = "#flagged-votes [role=row]:has([role=gridcell])"


def _cell_texts(page, table: str) -> list[dict]:
    """The rows of the table ``table`` (an elem_id) as {header: cell text}."""
    return page.evaluate(f"""() => {{
      const heads = [...document.querySelectorAll('#{table} thead th')]
        .map(th => (th.querySelector('.header-content') || th).innerText.trim());
      return [...document.querySelectorAll('#{table} [role=row]:has([role=gridcell])')].map(row => {{
        const cells = [...row.querySelectorAll('[role=gridcell]')].map(cell => cell.innerText.trim());
        return Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
      }});
    }}""")


@pytest.mark.parametrize("size", SIZES)
def test_the_admin_restores_a_four_image_vote_from_the_flagged_votes(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, admin_password=PASSWORD)
    db = arena.db
    kim = sessions.start(db, "kim", "kim-token-1", open_signup=True)
    newest = four_image_votes(db, kim, 10, start=1_700_000_000.0, every=2.0)[-1]  # the speed rule sets all aside
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", PASSWORD)
        press(page, size, "#admin-unlock")
        page.wait_for_function(f"() => document.querySelectorAll({FLAGGED_ROWS!r}).length >= 10", timeout=20000)
        (kim_row,) = [row for row in _cell_texts(page, "annotator-stats") if row["Annotator"] == "kim"]
        assert (kim_row["Votes"], kim_row["Four-image"], kim_row["Counted"], kim_row["Speed rule"]) == (
            "10", "10", "0", "10"), kim_row
        flagged = _cell_texts(page, "flagged-votes")
        first = flagged[0]
        assert (first["Vote"], first["Voter"], first["Excluded"]) == (f"four-image {newest}", "kim", "yes"), first
        assert first["Outcome"].startswith("best ") and first["Models"].startswith("1 ") and "4 " in first["Models"]
        page.locator("#flagged-votes").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "01-flagged-four-image-votes")
        # a click on the row chooses the vote by its reference; Include restores it
        page.locator(FLAGGED_ROWS).first.locator("[role=gridcell]").nth(2).click()
        page.wait_for_function("() => document.querySelector('#review-vote-id input, #review-vote-id textarea')"
                               f".value === 'four-image {newest}'", timeout=10000)
        press(page, size, "#review-include")
        page.wait_for_function("() => document.querySelector('#vote-review-message')?.innerText"
                               f".includes('Included 1 vote: four-image vote {newest}')", timeout=20000)
        page.wait_for_function("() => document.querySelectorAll('#admin-actions [role=gridcell]').length >= 8",
                               timeout=20000)
        assert db.execute("SELECT excluded, reviewed FROM kwise_votes WHERE id = ?", [newest]).fetchone() == (0, 1)
        (action,) = _cell_texts(page, "admin-actions")
        assert (action["Action"], action["Vote"]) == ("include", f"four-image {newest}"), action
        restored = next(row for row in _cell_texts(page, "flagged-votes") if row["Vote"] == f"four-image {newest}")
        assert (restored["Excluded"], restored["By an admin"]) == ("no", "yes"), restored
        page.locator("#vote-review-message").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "02-four-image-vote-restored")
        page.locator("#annotator-stats").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "03-annotators", full_page=True)
