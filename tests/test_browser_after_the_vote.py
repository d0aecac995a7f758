"""After the vote, and the leaderboard over time (issue 29), in a real browser at 1280×800 and 390×844 (touch).

Peers show what this lacked: the model's details after the vote (our registry has descriptions the reveal never
showed), a personal leaderboard after a batch of votes (ours was in the Voter menu and nothing said so), and the
leaderboard over time (past boards, a rating-history chart).
"""

import contextlib
import json
import random
import time

import pytest
from support.arena import build_small_arena
from support.browser import open_leaderboard_filters
from support.touch import SIZES, TOUCH, next_battle, open_page, press, shoot, sign_in, vote
from support.webapp import running_app

from arena import session as sessions
from arena.leaderboard.compute import leaderboard_options
from arena.leaderboard.service import rebuild_history
from datamodel.quality import QualityRules
from datamodel.rating_history import day_of, end_of_day

EVERY = 3  # the page offers the voter's own leaderboard every this many votes


def _describe(arena, about: str = "{title} from the test lab, trained on test pictures. Settings: test card.") -> None:
    """Give each model a description (``about`` with its title) and a model card (its hub id)."""
    for name in arena.model_ids:
        arena.db.execute("UPDATE models SET description = ?, config = ? WHERE name = ?",
                         [about.format(title=name.title()), json.dumps({"hub_id": f"test-lab/{name}"}), name])


@pytest.mark.parametrize("size", SIZES)
def test_the_reveal_describes_the_models_and_offers_the_voter_s_own_leaderboard(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, personal_board_votes=EVERY)
    _describe(arena)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "curious")
        for number in range(1, EVERY + 1):
            vote(page, size)
            page.wait_for_timeout(200)
            abouts = page.evaluate("() => [...document.querySelectorAll('#battle-images figcaption')].map(e => "
                                   "[e.querySelector('.model-about').textContent, "
                                   "(e.querySelector('a') || {}).href || ''])")
            assert len(abouts) == 2, abouts
            for text, link in abouts:
                assert "from the test lab, trained on test pictures." in text and "Settings" not in text, text
                assert link.startswith("https://huggingface.co/test-lab/"), link
            offered = page.locator("#reveal .your-board").count()
            if number == 1:
                shoot(page, size, "after-01-model-details")
            if number < EVERY:
                assert offered == 0, f"the leaderboard is offered after {number} votes"
                next_battle(page, size)
        assert offered == 1, "no offer of the voter's own leaderboard after the batch of votes"
        assert f"You have cast {EVERY} votes" in page.inner_text("#reveal")
        shoot(page, size, "after-02-own-leaderboard-offered")
        press(page, size, "#reveal .your-board")
        # the folded filters say the voter (issue 41), and unfolded, the Voter menu shows it
        page.wait_for_function("() => document.querySelector('#lb-filters')?.innerText.includes('Voter: curious')",
                               timeout=20000)
        open_leaderboard_filters(page)
        page.wait_for_function("() => document.querySelector('#lb-voter input')?.value === 'curious'", timeout=20000)
        page.wait_for_function(f"() => document.querySelector('#lb-summary')?.innerText"
                               f".includes('{EVERY} human votes')",
                               timeout=30000)
        shoot(page, size, "after-03-own-leaderboard")
        assert page.locator("button[role=tab][aria-selected=true]", has_text="Leaderboard").count() == 1


DAY = 86400.0


@pytest.mark.parametrize("size", SIZES)
def test_the_leaderboard_over_time_in_the_page(tmp_path, browser, size):
    # the server's filters and fit settings are the kept boards' key: the same rounds here and there; 4 votes make a
    # model rated, so each day from the first has rated models
    arena = build_small_arena(tmp_path, bootstrap_rounds=50, min_votes=4)
    now = time.time()
    lax = QualityRules(max_per_hour=10_000, max_per_3_hours=10_000, fast_streak=10_000, bias_min_votes=10_000)
    s = sessions.start(arena.db, "historian", "token-001", open_signup=True)
    for back in (3, 2, 1):  # twelve votes a day, alpha-model first on every day but the last
        noon = end_of_day(day_of(now - back * DAY)) - 12 * 3600
        for i in range(12):
            s = sessions.next_battle(arena.db, random.Random(back * 100 + i), s, now=noon + 60 * i - 5)
            winner = "A" if (s.battle.left.image_id % 2 == 0) == (back > 1) else "B"
            s = sessions.vote(arena.db, s, winner, rules=lax, now=noon + 60 * i)
    kept = rebuild_history(arena.db, leaderboard_options(arena.settings), 3, history_days=365, now=now)
    assert len(kept) == 3
    two_days_ago = day_of(now - 2 * DAY)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        page.get_by_role("tab", name="Leaderboard").click()
        page.wait_for_function("() => document.querySelector('#lb-summary')?.innerText.includes('36 human votes')",
                               timeout=30000)
        page.wait_for_function("() => (document.querySelector('#lb-history .js-plotly-plot')?.data || [])"
                               ".some(trace => (trace.x || []).length >= 4)", timeout=30000)
        page.locator("#lb-history").scroll_into_view_if_needed()
        shoot(page, size, "history-01-chart")
        traces = page.evaluate("() => document.querySelector('#lb-history .js-plotly-plot').data.map(t => "
                               "[t.name, t.x.length])")
        assert {name for name, _ in traces} <= set(arena.model_ids) and max(n for _, n in traces) == 4, traces
        # the board as of a chosen day
        page.click("#lb-summary")
        open_leaderboard_filters(page)
        page.click("#lb-as-of input")
        options = page.evaluate("() => [...document.querySelectorAll('ul[role=listbox] li[role=option]')]"
                                ".map(li => li.innerText.replace('✓', '').trim())")  # the chosen one has a tick
        assert options[0] == "Now" and two_days_ago in options, options
        page.locator("ul[role=listbox] li[role=option]", has_text=two_days_ago).first.click()
        page.wait_for_function(f"() => document.querySelector('#lb-summary')?.innerText"
                               f".includes('As of {two_days_ago}')",
                               timeout=30000)
        shoot(page, size, "history-02-as-of", full_page=size == "desktop")
        assert "24 human votes" in page.inner_text("#lb-summary")  # the votes cast by the end of that day
        assert f"The board as kept on {two_days_ago}" in page.inner_text("#lb-table-note")
        if TOUCH[size]:
            assert page.evaluate("() => [...document.querySelectorAll('.modebar-container')]"
                                 ".filter(m => m.getClientRects().length > 0).length") == 0


# A description as long as the registry's real ones (generators/registry.py), whose first sentence is what the reveal
# shows: on a phone the caption over each image cut it after ~40 characters and pushed the link out of sight.
LONG_ABOUT = ("{title} from the test lab: guidance-distilled, so no negative prompt, and trained on test pictures at "
              "1024 px. Settings: test card.")


@contextlib.contextmanager
def _voted_page(tmp_path, browser, size: str, voter: str):
    """A page of a small arena whose models have descriptions as long as the registry's (``LONG_ABOUT``) and model
    cards, signed in as ``voter``, just after a vote on the first battle."""
    arena = build_small_arena(tmp_path)
    _describe(arena, LONG_ABOUT)
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, voter)
        vote(page, size)
        page.wait_for_timeout(300)  # the layout settles (a frame)
        yield page


# Whether an element is seen whole: in the window, not cut by its own overflow or an ancestor's, not under another
# element (the fixed vote bar or reveal) at its centre.
SEEN_WHOLE = """(element) => {
  const box = element.getBoundingClientRect();
  if (!box.width || !box.height || box.top < 0 || box.left < 0 || box.bottom > innerHeight + 0.5
      || box.right > innerWidth + 0.5) return 'outside the window ' + JSON.stringify(box);
  // a line clamped off at the bottom (a glyph's descent past its line box is not one)
  const line = parseFloat(getComputedStyle(element).lineHeight) || 16;
  if (element.scrollHeight > element.clientHeight + line / 2 && getComputedStyle(element).overflowY !== 'visible')
    return 'cut at the bottom: ' + element.scrollHeight + ' > ' + element.clientHeight;
  for (let node = element; node && node !== document.body; node = node.parentElement) {
    if (node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).overflowX !== 'visible')
      return 'cut at the right by ' + node.className;
    const outer = node.getBoundingClientRect();
    if (node !== element && getComputedStyle(node).overflow !== 'visible' && (box.right > outer.right + 0.5
        || box.bottom > outer.bottom + 0.5 || box.left < outer.left - 0.5 || box.top < outer.top - 0.5))
      return 'cut by ' + node.className;
  }
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return hit && (hit === element || element.contains(hit)) ? 'seen' : 'covered by ' + (hit && hit.className);
}"""


@pytest.mark.parametrize("size", SIZES)
def test_after_a_vote_each_model_s_whole_description_and_link_are_in_view(tmp_path, browser, size):
    with _voted_page(tmp_path, browser, size, "reader") as page:
        if TOUCH[size]:  # on a phone the descriptions are folded under the reveal's line: a tap opens them
            assert not page.evaluate("() => document.querySelector('#reveal details.reveal-about').open")
            press(page, size, "#reveal summary")
            page.wait_for_function("() => document.querySelector('#reveal details.reveal-about').open", timeout=5000)
            page.wait_for_timeout(300)
        shoot(page, size, "after-04-whole-description")
        names = page.evaluate("() => [...document.querySelectorAll('#reveal .voted b')].slice(1, 3)"
                              ".map(b => b.textContent)")
        assert len(names) == 2, names
        for name in names:
            about = LONG_ABOUT.format(title=name.title()).split(". Settings")[0] + "."
            link = f"https://huggingface.co/test-lab/{name}"
            seen = page.evaluate(f"""([about, link]) => {{
              const seenWhole = {SEEN_WHOLE};
              const texts = [...document.querySelectorAll('#arena-box *')].filter(e => e.textContent.includes(about)
                && ![...e.children].some(child => child.textContent.includes(about)));  // the innermost holders
              const links = [...document.querySelectorAll('#arena-box a')].filter(a => a.href === link);
              return {{text: texts.map(seenWhole), link: links.map(seenWhole)}};
            }}""", [about, link])
            assert "seen" in seen["text"], f"{name}'s description is never seen whole on the {size}: {seen['text']}"
            assert "seen" in seen["link"], f"{name}'s model card link is never in view on the {size}: {seen['link']}"


# The share of image B's box under the reveal's box (the reveal is fixed over the bottom of a phone's screen, on the
# vote bar; image B is the lower image there).
REVEAL_OVER_B = """() => {
  const reveal = document.getElementById('reveal').getBoundingClientRect();
  const image = document.querySelector('#image-b img').getBoundingClientRect();
  const width = Math.max(0, Math.min(reveal.right, image.right) - Math.max(reveal.left, image.left));
  const height = Math.max(0, Math.min(reveal.bottom, image.bottom) - Math.max(reveal.top, image.top));
  return width * height / (image.width * image.height);
}"""


# Whether each model's name in the reveal's line (on a phone, the line of its fold) is in view: in the window, not
# cut off at the right (the desktop's line ends in an ellipsis when too long), not under another element.
NAMES_IN_VIEW = """() => [...document.querySelectorAll('#reveal .reveal-line b, #reveal summary b')]
    .filter((b) => b.getClientRects().length > 0).slice(1, 3).map((name) => {
  const line = name.closest('.reveal-line, summary').getBoundingClientRect();
  for (const box of name.getClientRects()) {  // a name may wrap onto a second line: each of its pieces
    if (!box.width || box.top < 0 || box.bottom > innerHeight + 0.5
        || box.right > Math.min(innerWidth, line.right) + 0.5) return 'out of view ' + JSON.stringify(box);
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    if (!hit || !(hit === name || name.contains(hit))) return 'covered by ' + (hit && hit.className);
  }
  return 'seen';
})"""


@pytest.mark.parametrize("size", SIZES)
def test_the_reveal_covers_little_of_the_images(tmp_path, browser, size):
    """The reveal after a vote (the vote, both names, each model's description) covered about half of image B on a
    phone (issue 41): it may cover at most a fifth of it, with the names in it still in view."""
    with _voted_page(tmp_path, browser, size, "looker") as page:
        shoot(page, size, "after-05-reveal-over-the-images")
        covered = page.evaluate(REVEAL_OVER_B)
        assert covered <= 0.20, f"the reveal covers {covered:.0%} of image B on the {size}"
        names = page.evaluate(NAMES_IN_VIEW)
        assert names == ["seen", "seen"], f"the names in the reveal on the {size}: {names}"
