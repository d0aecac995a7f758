"""The Admin tab's four-image export in a real browser at 1280×800 and 390×844 (touch): the export row's four buttons
fit the screen, Export four-image JSONL answers a one-time link, and following it downloads what ``python -m arena
export FILE --format four-image`` writes. Screenshots go to ``.cache/screenshots-admin-four-image``."""

import pytest
from support.arena import build_small_arena, command_line_env
from support.browser import screenshot_folder, shoot
from support.touch import SIZES, open_page, press
from support.votes import four_image_votes
from support.webapp import running_app

from arena import session as sessions
from arena.commands import main

PASSWORD = "four-image-admin"
SCREENSHOTS = screenshot_folder("ARENA_ADMIN_FOUR_IMAGE_SCREENSHOTS", ".cache/screenshots-admin-four-image")
EXPORT_BUTTONS = ("#export-csv", "#export-jsonl", "#export-parquet", "#export-four-image")


@pytest.mark.parametrize("size", SIZES)
def test_the_admin_exports_the_four_image_votes_from_the_admin_tab(tmp_path, browser, monkeypatch, size):
    arena = build_small_arena(tmp_path, admin_password=PASSWORD, four_image_suites="taxonomy")
    kim = sessions.start(arena.db, "kim", "a-long-token-1", open_signup=True)
    four_image_votes(arena.db, kim, 4, start=1000.0, every=30.0)
    (tmp_path / "command").mkdir()
    with monkeypatch.context() as patched:
        command_line_env(arena, patched, tmp_path / "command")
        assert main(["export", str(tmp_path / "command" / "four.jsonl"), "--format", "four-image"]) == 0
    command = (tmp_path / "command" / "four.jsonl").read_bytes()
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", PASSWORD)
        press(page, size, "#admin-unlock")
        page.wait_for_selector("#export-four-image", state="visible", timeout=30000)
        page.locator("#export-four-image").scroll_into_view_if_needed()
        width = SIZES[size]["width"]
        boxes = {button: page.locator(button).bounding_box() for button in EXPORT_BUTTONS}
        assert all(box and box["x"] >= 0 and box["x"] + box["width"] <= width for box in boxes.values()), boxes
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # nothing overflows sideways
        assert page.inner_text("#export-four-image").strip() == "Export four-image JSONL"
        shoot(page, SCREENSHOTS, size, "admin-four-image-01-buttons")
        press(page, size, "#export-four-image")
        page.wait_for_selector("#export-file a.export-link", timeout=30000)
        line = page.inner_text("#export-file")
        assert "(4 four-image votes" in line and "works once" in line, line
        shoot(page, SCREENSHOTS, size, "admin-four-image-02-link")
        with page.expect_download(timeout=30000) as download:
            page.click("#export-file a.export-link")
        assert download.value.suggested_filename.startswith("four-image-votes-")
        assert download.value.suggested_filename.endswith(".jsonl")
        assert download.value.failure() is None
        assert open(download.value.path(), "rb").read() == command
        page.wait_for_selector("#export-file .export-used", timeout=20000)  # the used link says so
        assert page.locator("#export-file a[href]").count() == 0
        shoot(page, SCREENSHOTS, size, "admin-four-image-03-downloaded")
