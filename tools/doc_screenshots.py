"""The screenshots of the README and the docs, taken from the running demo: ``python -m tools.doc_screenshots``.

Loads the shipped demo into a throwaway arena, opens SANEval's rating task for one rater per item, starts the app
(uvicorn on 127.0.0.1, a free port, as :mod:`tools.page_timing` does) and photographs it in Debian chromium through
playwright: the battle page, then the leaderboard after ``--votes`` votes cast on that page, at 1280×800
(``docs/images/battle.png``, ``leaderboard.png``: the README and docs/annotating.md), and the Ratings tab at 1280×800
and, with touch, at 390×844 (``ratings.png``, ``ratings-phone.png``: docs/human-ratings.md and docs/annotating.md).
Run it after a change to what these pages show, and look at the files before committing them.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from tools.page_timing import CHROMIUM, FLAGS, serve

IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"
DESKTOP, PHONE = {"width": 1280, "height": 800}, {"width": 390, "height": 844}
LOADED = ("(selector) => [...document.querySelectorAll(selector)].length > 0 && [...document.querySelectorAll("
          "selector)].every((img) => img.complete && img.naturalWidth > 0)")


def demo_settings(root: Path):
    """A throwaway arena under ``root`` holding the shipped demo, SANEval's rating task open; its settings."""
    from arena.demo.seeding import ensure_demo
    from core.settings import Settings
    from datamodel.connection import connect
    from datamodel.human_ratings import set_assignment
    from datamodel.media import MediaStore

    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=True,
                        rate_limit_annotator_per_minute=0, rate_limit_client_per_minute=0,
                        quality_fast_streak=10**9)  # the votes cast for the leaderboard's picture all count
    db = connect(settings.db_path)
    ensure_demo(db, MediaStore(settings.media_dir), settings, progress=False)
    set_assignment(db, "saneval_adherence", raters_per_item=1)
    db.close()
    return settings


def sign_in(page, tab_prefix: str) -> None:
    page.fill(f"#{tab_prefix}signin-name textarea, #{tab_prefix}signin-name input", "reader")
    page.fill(f"#{tab_prefix}signin-token input", "token-0001")
    page.click(f"#{tab_prefix}signin-button")


def battle_and_board(browser, url: str, out: Path, votes: int) -> None:
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.goto(url)
    sign_in(page, "")
    page.wait_for_function(LOADED, arg="#image-a img, #image-b img", timeout=60000)
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / "battle.png"))
    for k in range(votes):  # a person's votes, so that the leaderboard has ratings to show
        page.locator("body").press("ab"[k % 3 == 2])
        page.wait_for_selector("#reveal .voted", timeout=60000)
        page.locator("body").press("n")
        page.wait_for_function("() => document.querySelector('#reveal .voted') === null", timeout=60000)
        page.wait_for_function(LOADED, arg="#image-a img, #image-b img", timeout=60000)
    page.get_by_role("tab", name="Leaderboard").click()
    page.wait_for_selector("#lb-table [role=gridcell]", timeout=60000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(out / "leaderboard.png"))


def ratings(browser, url: str, out: Path) -> None:
    for name, viewport, touch in (("ratings.png", DESKTOP, False), ("ratings-phone.png", PHONE, True)):
        page = browser.new_context(viewport=viewport, has_touch=touch, is_mobile=touch).new_page()
        page.goto(url)
        page.get_by_role("tab", name="Ratings").click()
        sign_in(page, "rating-")
        page.wait_for_function(LOADED, arg="#rating-image img.rating-shown", timeout=60000)
        page.locator("#rating-guidelines > button, #rating-guidelines .label-wrap").first.click()  # fold it
        page.wait_for_timeout(500)
        page.screenshot(path=str(out / name))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.doc_screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=IMAGES, help="where the PNG files go (default docs/images)")
    parser.add_argument("--votes", type=int, default=60,
                        help="votes cast before the leaderboard's picture (default 60)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        url, server = serve(demo_settings(Path(folder)))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
                battle_and_board(browser, url, args.out, args.votes)
                ratings(browser, url, args.out)
                browser.close()
        finally:
            server.should_exit = True
    print(f"Wrote battle.png, leaderboard.png, ratings.png and ratings-phone.png to {args.out}")


if __name__ == "__main__":
    main()
