"""How fast the rating page answers a rater, measured in a real browser: ``python -m tools.rating_timing``.

As :mod:`tools.page_timing` times the voting page: starts the app (uvicorn on 127.0.0.1, a free port) on a throwaway
arena of its own (``--items`` Commonsense-T2I items, SemVarBench items and SANEval prompts, four models, 256 px
images), opens Debian chromium through playwright at 1280×800 and 390×844, signs in on the Ratings tab and, for each
rating task in turn (only that task open), times ``--answers`` answers inside the page (``performance.now()``):
**answer → next item**, from the click on an answer (Fits; Send after picking both SemVarBench scores; a Likert
point) until the next question is on screen: its image loaded and the answer buttons open again. Each answer waits,
as a rater looking at the image would, until the next image (sent hidden with the answer before) has loaded. Prints
the median,
the 90th percentile and the largest per task and size. Rate limits and the fast-answer rule are lifted for the run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tools.page_timing import CHROMIUM, CLICK_UNTIL, FLAGS, SIZES, serve, summary, throwaway_arena

SHOWN = "[...document.querySelectorAll('#rating-image img.rating-shown')]"
REFUSED = "(document.querySelector('#rating-signin-message')?.innerText || '').includes('Enter a name')"
NEXT_READY = ("() => " + SHOWN + ".length === 1 && " + SHOWN + "[0].complete && " + SHOWN + "[0].naturalWidth > 0 && "
              "!document.documentElement.classList.contains('rating-image-pending') && "
              + SHOWN + "[0].getAttribute('src') !== window.__previous")
ANSWERS = {"commonsense_fit": "#rate-commonsense-fit-1", "semvar_alignment": "#rate-semvar-alignment-submit",
           "saneval_adherence": "#rate-saneval-adherence-4"}


def build_arena(root: Path, items: int):
    """A fresh arena under ``root``: ``items`` items of each rating task's suite, drawn by the four models."""
    from datamodel.catalog import PromptSpec

    specs = []
    for k in range(items):
        specs += [PromptSpec("commonsense", f"c{k}", f"A lamp {k} without power", role="p1",
                             metadata={"description": "The lamp is dark", "category": "Physical Laws"}),
                  PromptSpec("commonsense", f"c{k}", f"A lamp {k} with power", role="p2",
                             metadata={"description": "The lamp is lit", "category": "Physical Laws"})]
        specs += [PromptSpec("semvarbench", f"s{k}", text, role=role, metadata={"categories": ["Action"]})
                  for role, text in (("anchor", f"A dog {k} chasing a cat"),
                                     ("permutation", f"A cat {k} chasing a dog"),
                                     ("paraphrase", f"A cat {k} being chased by a dog"))]
        specs.append(PromptSpec("saneval", f"n{k}", f"{k % 5 + 2} apples", subset="numeracy",
                                metadata={"category": "numeracy", "objects": ["apple"],
                                          "counts": {"apple": k % 5 + 2}}))
    return throwaway_arena(root, specs)


def open_only(settings, task: str) -> None:
    """Open ``task`` (one rater per item) and close the others."""
    from datamodel.connection import connect
    from datamodel.human_ratings import set_assignment

    db = connect(settings.db_path)
    for name in ANSWERS:
        set_assignment(db, name, raters_per_item=1, active=name == task)
    db.close()


def time_task(browser, url: str, viewport: dict, name: str, task: str, answers: int) -> list[float]:
    """Sign in as ``name`` and time ``answers`` answers of ``task``; milliseconds, answer → next item."""
    page = browser.new_page(viewport=viewport)
    page.goto(url)
    page.get_by_role("tab", name="Ratings").click()
    first_item = NEXT_READY.replace(" && " + SHOWN + "[0].getAttribute('src') !== window.__previous", "")
    for attempt in (1, 2):
        page.fill("#rating-signin-name textarea, #rating-signin-name input", name)
        page.fill("#rating-signin-token input", "timing-token-1")
        page.click("#rating-signin-button")
        # the first item, or the form's refusal: on a loaded machine the page once sent the form before the name
        # typed into it had reached its state, and the server refused an empty name
        page.wait_for_function(f"() => ({first_item})() || {REFUSED}", timeout=30000)
        if page.evaluate(f"() => ({first_item})()"):
            break
        print(f"sign-in {attempt} of {name} refused: "
              f"{page.inner_text('#rating-signin-message').strip()[:200]}", file=sys.stderr)
    else:
        raise RuntimeError(f"{name} could not sign in twice: {page.inner_text('#rating-signin-message')[:200]}")
    times = []
    for _ in range(answers):
        # a rater looks at the image for seconds: the next one, sent hidden with the last answer, has loaded by then
        page.wait_for_function("() => [...document.querySelectorAll('#rating-image img[hidden]')].every("
                               "img => img.complete)", timeout=30000)
        page.wait_for_timeout(50)
        page.evaluate("() => { window.__previous = " + SHOWN + "[0].getAttribute('src'); }")
        if task == "semvar_alignment":
            page.click("#rate-semvar-alignment-object_accuracy input[value='30']")
            page.click("#rate-semvar-alignment-relevance input[value='40']")
        times.append(page.evaluate(CLICK_UNTIL, [ANSWERS[task], NEXT_READY]))
    page.close()
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.rating_timing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=20, help="answers timed per task and screen size (default 20)")
    parser.add_argument("--items", type=int, default=30, help="items of each suite in the throwaway arena (default 30)")
    args = parser.parse_args(argv)
    # One rater per item: the desktop's rater takes --answers items and holds two more (the one on screen, the next
    # one loading), then the phone's needs as many; the smallest pool is SANEval's, --items prompts by four models.
    if args.items * 4 < len(SIZES) * (args.answers + 2):
        parser.error(f"--items too small for --answers: the raters at the {len(SIZES)} screen sizes need "
                     f"{len(SIZES) * (args.answers + 2)} items of each task, and --items {args.items} makes "
                     f"{args.items * 4} (4 models); use --items {-(-len(SIZES) * (args.answers + 2) // 4)} or more")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="rating-timing-") as root:
        settings = build_arena(Path(root), args.items)
        url, server = serve(settings)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
                for task in ANSWERS:
                    open_only(settings, task)
                    for index, (size, viewport) in enumerate(SIZES.items()):
                        times = time_task(browser, url, viewport, f"timing-{task}-{index}", task, args.answers)
                        print(f"{size}  {task:18} answer → next item: {summary(times)}")
                browser.close()
        finally:
            server.should_exit = True


if __name__ == "__main__":
    main()
