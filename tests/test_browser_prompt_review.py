"""The admin tab's prompt check in a real browser at 1280×800 and 390×844: the SANEval prompts an LLM wrote wait as
candidates; the admin accepts one (it becomes a prompt), rejects one with a reason, and accepts the rest. Each state
is photographed into ``ARENA_SCREENSHOTS`` (default ``.cache/screenshots``), one folder per size."""

import pytest
from support import browser as browsers
from support.arena import build_small_arena
from support.browser import SIZES
from support.webapp import running_app

from datamodel.catalog import suite_prompts
from datamodel.prompt_candidates import add_candidates, candidates
from suites import saneval

SCREENSHOTS = browsers.screenshot_folder("ARENA_SCREENSHOTS", ".cache/screenshots")
ROW = "#prompt-candidates [role=row]:has([role=gridcell])"  # Gradio draws a table's rows as [role=row] of gridcells


def wait_text(page, selector: str, text: str) -> None:
    page.wait_for_function("([selector, text]) => document.querySelector(selector)?.innerText.includes(text)",
                           arg=[selector, text], timeout=20000)


def llm_candidates(count: int = 4):
    """Pending candidates as the LLM writer stores them (the scripted grammar stands in for its answers)."""
    specs = saneval.published_category_specs("color", count, seed=7)
    return [type(spec)(spec.suite, spec.item_key.replace("-p7-", "-g7-"), spec.text, subset=spec.subset,
                       metadata={**spec.metadata, "generator": "llm:gemini-2.5-flash"}, source="test")
            for spec in specs]


@pytest.mark.parametrize("size", SIZES)
def test_the_admin_accepts_and_rejects_the_prompts_an_llm_wrote(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, admin_password="admin-password-1")
    add_candidates(arena.db, llm_candidates())
    first, second, *rest = (row["id"] for row in candidates(arena.db, "saneval"))
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport=SIZES[size])
        page.goto(url)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", "admin-password-1")
        page.click("#admin-unlock")
        wait_text(page, "#prompt-review-counts", "4 pending")
        page.locator("#prompt-candidates").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "prompt-review-1-pending")
        page.locator(ROW).first.locator("[role=gridcell]").nth(2).click()
        page.wait_for_function(f"() => document.querySelector('#prompt-review-id input').value === '{first}'",
                               timeout=10000)
        page.click("#prompt-review-accept")
        wait_text(page, "#prompt-review-message", "Accepted 1")
        page.fill("#prompt-review-id input", str(second))
        page.fill("#prompt-review-reason input, #prompt-review-reason textarea", "the two objects look alike")
        page.click("#prompt-review-reject")
        wait_text(page, "#prompt-review-counts", "1 rejected")
        page.locator("#prompt-review-message").scroll_into_view_if_needed()
        browsers.shoot(page, SCREENSHOTS, size, "prompt-review-2-decided")
        page.click("#prompt-review-accept-all")
        wait_text(page, "#prompt-review-counts", "0 pending, 3 accepted, 1 rejected")
        browsers.shoot(page, SCREENSHOTS, size, "prompt-review-3-done")
        page.close()
    prompts = suite_prompts(arena.db, "saneval")
    written = {p["item_key"] for p in prompts if p["metadata"].get("validated_by") == "admin"}
    assert len(written) == 3 and all(key.startswith("color-g7-") for key in written)
    (rejected,) = candidates(arena.db, "saneval", status="rejected")
    assert (rejected["id"], rejected["reason"], rejected["reviewer"]) == (second, "the two objects look alike", "admin")
    assert {row["id"] for row in candidates(arena.db, "saneval", status="accepted")} == {first, *rest}
