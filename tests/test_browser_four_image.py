"""The four-image mode in a real browser at 1280×800 (mouse, keys) and 390×844 (touch): four anonymous images of one
prompt in a 2×2 grid, the best (and the worst) picked with keys or clicks or taps, the names only after the vote, the
next set preloaded with the vote and shown by Next without a request.
Screenshots go to ``.cache/screenshots-issue29/<size>/four-*.png``."""

import pytest
from support.arena import MODELS, build_small_arena
from support.browser import leaderboard_summary, open_leaderboard_filters
from support.touch import SIZES, TOUCH, box, open_page, press, shoot, sign_in, vote
from support.webapp import running_app

FOUR_LOADED = ("() => { const imgs = [...document.querySelectorAll('#four-grid .four-grid:not(.voted) img')]; "
               "return imgs.length === 4 && imgs.every(img => img.complete && img.naturalWidth > 0); }")


def _grid_token(page) -> str:
    return page.get_attribute("#four-grid .four-grid", "data-token")


def _wait_new_set(page, before: str | None) -> str:
    page.wait_for_function(FOUR_LOADED, timeout=20000)
    token = _grid_token(page)
    assert token and token != before
    return token


def _check_anonymous(page, token: str) -> None:
    text = page.inner_text("#four-box")
    assert not any(model in text for model in MODELS), text  # no name before the vote
    sources = page.eval_on_selector_all("#four-grid img", "imgs => imgs.map(img => img.getAttribute('src'))")
    assert sources == [f"kwise-media/{token}/{slot}" for slot in range(1, 5)]
    sizes = page.eval_on_selector_all("#four-grid img",
                                      "imgs => imgs.map(img => [img.naturalWidth, img.naturalHeight])")
    assert len({tuple(size) for size in sizes}) == 1  # one rendition size for the four models


def _stored(arena):
    return [tuple(row) for row in arena.db.execute(
        "SELECT v.best, v.worst, b.media_token FROM kwise_votes v JOIN kwise_battles b ON b.id = v.battle_id "
        "ORDER BY v.id").fetchall()]


def _revealed(page, arena, best_slot: int) -> None:
    page.wait_for_selector("#four-grid .four-grid.voted", timeout=20000)
    token = _grid_token(page)
    names = [page.inner_text(f"#four-grid .four-tile[data-slot='{slot}'] .four-name") for slot in range(1, 5)]
    assert all(any(model in name for model in MODELS) for name in names), names
    best_model = names[best_slot - 1].split(": ", 1)[1]
    assert best_model in page.inner_text("#four-reveal")
    assert _stored(arena)[-1][2] == token


@pytest.mark.parametrize("size", SIZES)
def test_four_images_are_voted_with_keys_clicks_and_taps_and_named_after_the_vote(tmp_path, browser, size):
    arena = build_small_arena(tmp_path, four_image_suites="taxonomy")
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "four-voter")
        vote(page, size)  # one pairwise vote, between two of the four models
        page.get_by_role("tab", name="Four images").click()
        token = _wait_new_set(page, None)
        _check_anonymous(page, token)
        tiles = [box(page, f"#four-grid .four-tile[data-slot='{slot}']") for slot in range(1, 5)]
        assert abs(tiles[0]["y"] - tiles[1]["y"]) < 2 and tiles[1]["x"] > tiles[0]["x"]  # 2×2 at both sizes
        assert abs(tiles[2]["y"] - tiles[3]["y"]) < 2 and tiles[2]["y"] > tiles[0]["y"]
        assert all(t["x"] >= 0 and t["x"] + t["width"] <= SIZES[size]["width"] + 1 for t in tiles)
        shoot(page, size, "four-01-four-images")
        if TOUCH[size]:  # a tap on Worst under image 2, then on Best under image 3
            press(page, size, "#four-grid .four-tile[data-slot='2'] .four-worst")
            press(page, size, "#four-grid .four-tile[data-slot='3'] .four-best")
        else:  # Shift+2 marks the worst, 3 picks the best
            page.keyboard.press("Shift+Digit2")
            assert page.locator("#four-grid .four-tile.worst").get_attribute("data-slot") == "2"
            page.keyboard.press("Digit3")
        _revealed(page, arena, 3)
        assert _stored(arena) == [(3, 2, token)]
        shoot(page, size, "four-02-names-after-the-vote")
        assert ("(N)" in page.inner_text("#four-reveal")) == (not TOUCH[size])  # the key where there is a keyboard
        preloaded = page.eval_on_selector_all("#four-reveal img[hidden]",
                                              "imgs => imgs.map(i => i.getAttribute('src'))")
        following = preloaded[0].split("/")[1]
        assert following != token and preloaded == [f"kwise-media/{following}/{slot}" for slot in range(1, 5)]
        assert page.is_visible("#four-next") and not page.is_visible("#four-load")
        page.keyboard.press("Digit1")  # a second vote on the revealed set is ignored
        page.wait_for_timeout(300)
        assert len(_stored(arena)) == 1
        requests: list[tuple[str, str | None]] = []
        page.on("request", lambda request: requests.append((request.url, request.post_data)))
        if TOUCH[size]:
            press(page, size, "#four-next")
        else:
            page.keyboard.press("n")
        token = _wait_new_set(page, token)
        assert token == following  # the set preloaded with the vote
        page.wait_for_timeout(200)
        assert [u for u, _ in requests if "gradio_api" in u] == []  # it came with the vote: no request
        _check_anonymous(page, token)
        assert page.is_visible("#four-load") and not page.is_visible("#four-next")
        press(page, size, "#four-grid .four-tile[data-slot='1'] .four-best")  # the best alone, by click or tap
        _revealed(page, arena, 1)
        assert _stored(arena)[-1] == (1, None, token)
        sent = [body for u, body in requests if "/gradio_api/run/" in u]
        assert len(sent) == 1 and f'"{token}@' in sent[0]  # the vote names the set on screen and its seconds shown
        assert arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 1  # the pairwise vote alone
        shoot(page, size, "four-03-best-only")
        # the leaderboard: the arena protocol rates the one pairwise vote's two models; kwise-rank-breaking all four
        page.get_by_role("tab", name="Leaderboard").click()
        leaderboard_summary(page, "1 human vote")
        open_leaderboard_filters(page)
        page.click("#lb-protocol input")
        page.locator("ul[role=listbox] li[role=option][aria-label^='kwise-rank-breaking']").first.click()
        leaderboard_summary(page, "the kwise-rank-breaking protocol")
        table = page.inner_text("#lb-table")
        assert all(model in table for model in MODELS), table
        shoot(page, size, "four-04-leaderboard-kwise-protocol", full_page=True)


@pytest.mark.parametrize("size", SIZES)
def test_the_reveal_says_when_a_four_image_vote_does_not_count(tmp_path, browser, size):
    """Ten sets voted within seconds: a run of fast votes, which the quality rules set aside; the reveal says so, on
    screen at both sizes."""
    arena = build_small_arena(tmp_path, four_image_suites="taxonomy")
    with running_app(arena.settings) as url:
        page = open_page(browser, url, size)
        sign_in(page, "four-hurried")
        page.get_by_role("tab", name="Four images").click()
        token = None
        for number in range(10):
            token = _wait_new_set(page, token)
            press(page, size, f"#four-grid .four-tile[data-slot='{1 + number % 4}'] .four-best")
            page.wait_for_selector("#four-grid .four-grid.voted", timeout=20000)
            if number < 9:
                press(page, size, "#four-next")
        warning = page.locator("#four-reveal .arena-warning")
        warning.wait_for(timeout=20000)
        assert "does not count" in warning.inner_text() and "5 s apart" in warning.inner_text()
        shoot(page, size, "four-05-vote-does-not-count")
        line, bar = warning.bounding_box(), box(page, "#four-bar")
        assert line["y"] >= 0 and line["y"] + line["height"] <= SIZES[size]["height"]  # on screen, no scrolling
        if TOUCH[size]:  # and not under the Next bar fixed at the foot of a phone's screen
            assert line["y"] + line["height"] <= bar["y"], (line, bar)
        following = box(page, "#four-next")  # Next too, with both warnings (the status line's and the reveal's)
        assert following["y"] >= 0 and following["y"] + following["height"] <= SIZES[size]["height"], following
        assert arena.db.execute("SELECT COUNT(*) FROM kwise_votes WHERE excluded = 1").fetchone()[0] == 10
