"""Open prompts in a real browser at 1280×800 and 390×844 (touch) on the demo's tiny models (issue 43): type a
prompt, watch the progress, get both images at once, vote, see the reveal; a refused prompt says why. Screenshots
under .cache/screenshots-issue29/<size>/open-*.png."""

import io

import pytest
from PIL import Image
from support.arena import demo_arena
from support.touch import BATTLE_SHOWN, SIZES, open_page, press, shoot, sign_in, vote, wait_images
from support.webapp import running_app

MODELS = "demo-painter,demo-tiny-unet"  # a painter and the tiny diffusers pipeline: every battle holds both
PROMPT = "a red kite over the sea · красный воздушный змей над морем"

# every change of a battle image is logged with the number of the observer's call that saw it: both images of a
# battle must arrive in the same change of the page, never one before the other
WATCH_JS = """
() => {
  window.openArrivals = [];
  let call = 0;
  new MutationObserver(() => {
    call += 1;
    for (const side of ['a', 'b']) {
      const img = document.querySelector(`#image-${side} img`);
      const src = img ? img.getAttribute('src') : '';
      const seen = window.openArrivals.filter((a) => a.side === side).pop();
      if (src && (!seen || seen.src !== src)) window.openArrivals.push({side, src, call});
    }
  }).observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ['src']});
}
"""


def spinner_pixels(page) -> tuple[int, int]:
    """(pixels of the progress spinner that differ from the page behind it, of them in the accent colour), the
    spinner shown and still (a ring in the border colour with an accent arc)."""
    page.evaluate("() => { document.getElementById('open-progress').style.display = 'block'; }")
    try:
        shot = Image.open(io.BytesIO(page.locator("#open-progress .open-spinner").screenshot(animations="disabled")))
    finally:
        page.evaluate("() => { document.getElementById('open-progress').style.display = 'none'; }")
    pixels = list(shot.convert("RGB").getdata())
    behind = pixels[0]  # a corner, outside the ring
    drawn = [p for p in pixels if max(abs(a - b) for a, b in zip(p, behind)) > 24]
    return len(drawn), sum(1 for r, g, b in drawn if r - b > 80)


@pytest.mark.parametrize("size", SIZES)
def test_a_typed_prompt_is_drawn_live_voted_on_and_revealed(tmp_path, browser, size, artefact_cache):
    arena = demo_arena(tmp_path)
    settings = arena.settings.replace(cache_dir=artefact_cache, open_prompt_models=MODELS)
    with running_app(settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "typist")
        before = page.get_attribute("#image-a img", "src")
        first = before.rsplit("/", 2)[-2]  # the media token of the battle shown at sign-in
        page.fill("#open-prompt textarea", PROMPT)
        page.locator("#open-prompt textarea").scroll_into_view_if_needed()
        shoot(page, size, "open-01-typed")
        page.evaluate(WATCH_JS)
        press(page, size, "#open-generate")
        page.wait_for_function("() => document.documentElement.classList.contains('open-generating')", timeout=5000)
        assert page.is_visible("#open-progress .open-spinner")  # laid out (its pixels: spinner_pixels, below)
        shoot(page, size, "open-02-generating")
        page.wait_for_function(f"() => document.querySelector('#image-a img')?.getAttribute('src') !== '{before}' "
                               "&& !document.documentElement.classList.contains('open-generating')", timeout=120000)
        page.wait_for_function(BATTLE_SHOWN, timeout=20000)
        wait_images(page)
        assert "красный воздушный змей" in page.inner_text("#prompt") and "Open prompts" in page.inner_text("#prompt")
        arrivals = page.evaluate("() => window.openArrivals")
        new = [a for a in arrivals if "battle-media/" in a["src"] and first not in a["src"]]
        assert {a["side"] for a in new} == {"a", "b"} and len({a["call"] for a in new}) == 1, arrivals
        assert new[0]["src"].rsplit("/", 2)[-2] == new[1]["src"].rsplit("/", 2)[-2]  # one battle's two images
        page.evaluate("() => window.scrollTo(0, 0)")
        shoot(page, size, "open-03-battle")
        vote(page, size)
        revealed = page.inner_text("#reveal")
        assert "demo-painter" in revealed and "demo-tiny-unet" in revealed, revealed
        shoot(page, size, "open-04-reveal")
        page.fill("#open-prompt textarea", "a gory battlefield")
        press(page, size, "#open-generate")
        page.wait_for_function("() => (document.querySelector('#open-message')?.innerText || '')"
                               ".includes('refused')", timeout=20000)
        assert "it asks for graphic violence" in page.inner_text("#open-message")
        page.locator("#open-message").scroll_into_view_if_needed()
        shoot(page, size, "open-05-refused")
        ring, accent = spinner_pixels(page)
        assert ring >= 40 and accent >= 5, (ring, accent)  # the spinner draws its ring and arc
