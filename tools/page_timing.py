"""How fast the voting page answers a person, measured in a real browser: ``python -m tools.page_timing``.

Starts the app (uvicorn on 127.0.0.1, a free port) on a throwaway arena of its own (``--prompts`` prompts, four
models, 256 px images), opens Debian chromium through playwright at 1280×800 and 390×844, signs in, and for
``--votes`` battles times, inside the page (``performance.now()``):

- **vote → names**: from the click on "A is better" until the reveal shows the two model names;
- **Next → images**: from the click on "Next battle" until both new images have loaded and the vote is open again.

With ``--four-image`` it also times the four-image page (the Four images tab, its suite turned on for the run) for
``--votes`` sets per size:

- **four: vote → names**: from the click on the first image's Best until the four names are shown;
- **four: Next → images**: from the click on Next until the four new images have loaded.

With ``--open-prompts N`` it also times N open prompts per size (the arena then serves them with the demo's
painter and its tiny diffusers pipeline on the CPU, built in ``--cache-dir``):

- **Generate → images**: from the click on Generate until both images of the new battle have loaded and the vote
  is open again (both models' generation included; the progress indicator shows meanwhile).

Prints the median, the 90th percentile and the largest of each, per size. Rate limits and the fast-vote rule are
lifted for the run (a person votes slower). The fixture uses only the data model's functions, so the same command
times an older checkout too: ``python -c "import runpy, sys; sys.path.insert(0, '.');
runpy.run_path('PATH/tools/page_timing.py', run_name='__main__')"`` from that checkout's root.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]
SIZES = {"1280x800": {"width": 1280, "height": 800}, "390x844": {"width": 390, "height": 844}}
MODEL_NAMES = ("model-red", "model-green", "model-blue", "model-grey")

# Clicks a button and waits (polling every millisecond) until a condition holds; returns the milliseconds taken.
CLICK_UNTIL = """async ([selector, condition]) => {
  const holds = new Function('return (' + condition + ')();');
  const start = performance.now();
  document.querySelector(selector).click();
  while (!holds()) await new Promise(resolve => setTimeout(resolve, 1));
  return performance.now() - start;
}"""
NAMES_SHOWN = "() => document.querySelector('#reveal .voted') !== null"
IMAGES = "[...document.querySelectorAll('#image-a img, #image-b img')]"
NEW_BATTLE_READY = ("() => document.querySelector('#reveal .voted') === null && " + IMAGES + ".length === 2 && "
                    + IMAGES + ".every(img => img.complete && img.naturalWidth > 0) && "
                    "!document.querySelector('#vote-a').disabled && "
                    + IMAGES + ".map(img => img.src).join() !== window.__previous")


def build_arena(root: Path, prompts: int):
    """A fresh arena under ``root``: ``prompts`` taxonomy prompts, each drawn by the four models (256 px)."""
    from datamodel.catalog import PromptSpec

    specs = [PromptSpec("taxonomy", f"concept{p}.n.01", f"An image of concept {p}", subset="Easy",
                        variant="without_definition", metadata={"lemma": f"concept {p}"}) for p in range(prompts)]
    return throwaway_arena(root, specs)


def throwaway_arena(root: Path, specs: list):
    """A fresh arena under ``root`` with the prompts ``specs``, each drawn by the four models (256 px), its rate
    limits and fast-vote rule lifted; its settings."""
    from PIL import Image, ImageDraw

    from core.settings import Settings
    from datamodel.catalog import add_image, add_model, add_prompts
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    lifted: dict[str, Any] = {"rate_limit_annotator_per_minute": 0, "rate_limit_client_per_minute": 0,
                              "rate_limit_skips_per_minute": 0, "rate_limit_pages_per_minute": 0,
                              # those this checkout has; the rating tasks' own paces (RatingTask.pace)
                              "quality_fast_seconds": 0.0,
                              "quality_fast_streak": 10**9}  # flag no run
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=root / "cache", demo=False,
                        **{name: value for name, value in lifted.items() if name in Settings.__dataclass_fields__})
    db = connect(settings.db_path)
    media = MediaStore(settings.media_dir)
    prompt_ids = add_prompts(db, specs).ids
    for m, name in enumerate(MODEL_NAMES):
        model_id = add_model(db, name)
        for p, prompt_id in enumerate(prompt_ids):
            image = Image.new("RGB", (256, 256), (60 * m % 256, 7 * p % 256, 128))
            ImageDraw.Draw(image).ellipse([20 + m * 10, 20 + p % 50, 200, 220], fill=(250, 240, 230))
            add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(image))
    db.close()
    return settings


def serve(settings):
    """Start the app as ``arena serve`` runs it, in a thread; return (url, server)."""
    import uvicorn

    from arena.web.app import server_config
    from tools.load import free_port

    settings = settings.replace(host="127.0.0.1", port=free_port())
    server = uvicorn.Server(server_config(settings))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("The app did not start within 60 s.")
        time.sleep(0.05)
    return f"http://127.0.0.1:{settings.port}/", server


def signed_in_page(browser, url: str, viewport: dict, name: str):
    """A new page at ``url`` of ``viewport``, the sign-in sent as ``name`` (the caller waits for what it needs)."""
    page = browser.new_page(viewport=viewport)
    page.goto(url)
    page.fill("#signin-name textarea, #signin-name input", name)
    page.fill("#signin-token input", "timing-token-1")
    page.click("#signin-button")
    return page


def time_page(browser, url: str, viewport: dict, name: str, votes: int) -> tuple[list[float], list[float]]:
    """Sign in as ``name`` and time ``votes`` battles; return (vote → names, Next → images) in milliseconds."""
    page = signed_in_page(browser, url, viewport, name)
    page.wait_for_function("() => " + IMAGES + ".length === 2 && " + IMAGES
                           + ".every(img => img.complete && img.naturalWidth > 0)", timeout=30000)
    page.wait_for_function("() => !document.querySelector('#vote-a').disabled", timeout=30000)
    to_names, to_images = [], []
    for _ in range(votes):
        to_names.append(page.evaluate(CLICK_UNTIL, ["#vote-a", NAMES_SHOWN]))
        page.evaluate("() => { window.__previous = " + IMAGES + ".map(img => img.src).join(); }")
        to_images.append(page.evaluate(CLICK_UNTIL, ["#next-battle", NEW_BATTLE_READY]))
        page.wait_for_timeout(50)
    page.close()
    return to_names, to_images


OPEN_BATTLE_READY = ("() => !document.documentElement.classList.contains('open-generating') && " + IMAGES
                     + ".length === 2 && " + IMAGES + ".every(img => img.complete && img.naturalWidth > 0) && "
                     + IMAGES + ".map(img => img.src).join() !== window.__previous")


def time_open_prompts(browser, url: str, viewport: dict, name: str, prompts: int) -> list[float]:
    """Sign in as ``name`` and time ``prompts`` open prompts (Generate → both images loaded), in milliseconds."""
    page = signed_in_page(browser, url, viewport, name)
    page.wait_for_selector("#open-prompt textarea", timeout=30000)
    timings = []
    for number in range(prompts + 1):  # the first one loads the models: not counted
        page.fill("#open-prompt textarea", f"a paper lantern on a river, number {number}")
        page.evaluate("() => { window.__previous = " + IMAGES + ".map(img => img.src).join(); }")
        took = page.evaluate(CLICK_UNTIL, ["#open-generate", OPEN_BATTLE_READY])
        if number:
            timings.append(took)
        page.wait_for_timeout(50)
    page.close()
    return timings


FOUR_IMAGES = "[...document.querySelectorAll('#four-grid img')]"
FOUR_NAMES_SHOWN = "() => document.querySelector('#four-grid .four-grid.voted') !== null"
FOUR_READY = ("() => document.querySelector('#four-grid .four-grid:not(.voted)') !== null && " + FOUR_IMAGES
              + ".length === 4 && " + FOUR_IMAGES + ".every(img => img.complete && img.naturalWidth > 0) && "
              "document.querySelector('#four-grid .four-grid').dataset.token !== window.__previous")


def time_four_image(browser, url: str, viewport: dict, name: str, votes: int) -> tuple[list[float], list[float]]:
    """Sign in as ``name``, open the Four images tab and time ``votes`` sets; (vote → names, Next → images) in ms."""
    page = signed_in_page(browser, url, viewport, name)
    page.wait_for_selector("#image-a img", timeout=30000)
    page.get_by_role("tab", name="Four images").click()
    page.evaluate("() => { window.__previous = ''; }")
    page.wait_for_function(FOUR_READY, timeout=30000)
    to_names, to_images = [], []
    for _ in range(votes):
        to_names.append(page.evaluate(CLICK_UNTIL, ["#four-grid .four-tile[data-slot='1'] .four-best",
                                                    FOUR_NAMES_SHOWN]))
        page.evaluate("() => { window.__previous = document.querySelector('#four-grid .four-grid').dataset.token; }")
        to_images.append(page.evaluate(CLICK_UNTIL, ["#four-next", FOUR_READY]))
        page.wait_for_timeout(50)
    page.close()
    return to_names, to_images


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {statistics.median(ordered):6.1f} ms · p90 {p90:6.1f} ms · max {ordered[-1]:6.1f} ms"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.page_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=20, help="battles timed per screen size (default 20)")
    parser.add_argument("--prompts", type=int, default=60, help="prompts in the throwaway arena (default 60)")
    parser.add_argument("--open-prompts", type=int, default=0, help="open prompts timed per screen size (default 0)")
    parser.add_argument("--four-image", action="store_true", help="also time the four-image page (--votes sets)")
    parser.add_argument("--cache-dir", type=Path, default=Path(".cache"), help="where the tiny pipelines are built")
    args = parser.parse_args(argv)
    if args.prompts < args.votes + 2:
        parser.error("--prompts must exceed --votes: an annotator never sees a prompt twice")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="page-timing-") as root:
        settings = build_arena(Path(root), args.prompts)
        if args.four_image:
            settings = settings.replace(four_image_suites="taxonomy")
        if args.open_prompts:
            settings = settings.replace(open_prompts="on", open_prompt_models="demo-painter,demo-tiny-unet",
                                        cache_dir=args.cache_dir.resolve(), rate_limit_open_prompts_per_minute=0)
        url, server = serve(settings)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
                for index, (size, viewport) in enumerate(SIZES.items()):
                    to_names, to_images = time_page(browser, url, viewport, f"timing-{index}", args.votes)
                    print(f"{size}  vote → names:  {summary(to_names)}")
                    print(f"{size}  Next → images: {summary(to_images)}")
                    if args.four_image:
                        to_names, to_images = time_four_image(browser, url, viewport, f"four-{index}", args.votes)
                        print(f"{size}  four: vote → names:  {summary(to_names)}")
                        print(f"{size}  four: Next → images: {summary(to_images)}")
                    if args.open_prompts:
                        generated = time_open_prompts(browser, url, viewport, f"open-{index}", args.open_prompts)
                        print(f"{size}  Generate → images: {summary(generated)}")
                browser.close()
        finally:
            server.should_exit = True


if __name__ == "__main__":
    main()
