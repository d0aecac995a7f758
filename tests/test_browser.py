"""A real browser (Debian chromium driven by playwright) votes on three battles.

Checks that no model name reaches the page or any network response before each vote (a response whose body cannot
be read fails the test, unless it is one that has no body), that both names appear after it, that a keyboard
shortcut votes, and that the votes land in the database.
"""

import contextlib
import json

from support.arena import MODELS
from support.browser import sign_in, submit_sign_in
from support.webapp import running_app


def _names_in(text: str) -> list[str]:
    return [name for name in MODELS if name in text]


# Chromium keeps no copy of a streamed body (Gradio's queue answers arrive as a text/event-stream read by fetch), so
# the page keeps one: every event stream it opens is also read into window.__streams.
STREAM_COPY = """
window.__streams = [];
const pageFetch = window.fetch;
window.fetch = async (...args) => {
  const response = await pageFetch(...args);
  if ((response.headers.get('content-type') || '').includes('text/event-stream')) {
    const copy = {url: response.url, text: ''};
    window.__streams.push(copy);
    const reader = response.clone().body.getReader();
    const decoder = new TextDecoder();
    (async () => { for (;;) { const {done, value} = await reader.read(); if (done) break;
                               copy.text += decoder.decode(value, {stream: true}); } })();
  }
  return response;
};
"""


def _is_event_stream(response) -> bool:
    return "text/event-stream" in (response.headers.get("content-type") or "")


def _has_no_body(response) -> bool:
    """Responses that carry no body by definition: redirects, 204 No Content, 304 Not Modified, answers to HEAD."""
    return 300 <= response.status < 400 or response.status == 204 or response.request.method == "HEAD"


def test_three_votes_in_a_real_browser(small_arena, browser):
    bodies: list[tuple[str, str]] = []
    unreadable: list[tuple[str, int, str]] = []

    streams: list[str] = []

    def keep(response):
        if _has_no_body(response):
            return
        if _is_event_stream(response):  # read by the page's copy (STREAM_COPY), checked below
            streams.append(response.url)
            return
        try:
            bodies.append((response.url, response.body().decode("utf-8", "replace")))
        except Exception as error:  # a body we cannot check could hold a name: that fails the test
            unreadable.append((response.url, response.status, str(error).splitlines()[0]))

    requests: list[tuple[str, str | None]] = []  # (url, body) of every request the page sends

    with running_app(small_arena.settings) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.add_init_script(STREAM_COPY)
        page.on("response", keep)
        page.on("request", lambda request: requests.append((request.url, request.post_data)))
        page.goto(url)
        submit_sign_in(page, "browser-user", "token-001")
        for step, how in enumerate(["click:#vote-a", "key:b", "click:#vote-tie"]):
            page.wait_for_selector("#image-a img", timeout=20000)
            page.wait_for_function("() => document.querySelector('#reveal .reveal') !== null && "
                                   "document.querySelector('#reveal .voted') === null", timeout=20000)
            page.wait_for_timeout(300)  # let every response of this step arrive
            buttons = page.locator("#vote-both-bad").bounding_box()
            assert buttons["y"] + buttons["height"] <= 800, "the vote buttons are below the fold: scroll needed"
            assert _names_in(page.content()) == [], f"model name in the page before vote {step + 1}"
            leaks = [(u, _names_in(b)) for u, b in bodies if _names_in(b)]
            assert leaks == [], f"model name in a response before vote {step + 1}: {leaks}"
            assert unreadable == [], f"responses whose body could not be checked before vote {step + 1}: {unreadable}"
            copies = page.evaluate("() => window.__streams.map(s => [s.url, s.text])")
            assert sorted(set(streams)) == sorted({u for u, _ in copies})  # every event stream was copied
            if step == 0:  # the sign-in's answer (the first battle) came through a stream: the copy holds it
                assert any("battle-media/" in text for _, text in copies), copies
            stream_leaks = [(u, _names_in(text)) for u, text in copies if _names_in(text)]
            assert stream_leaks == [], f"model name in an event stream before vote {step + 1}: {stream_leaks}"
            assert page.is_visible("#skip-battle") and not page.is_visible("#next-battle")
            on_screen = page.get_attribute("#image-a img", "src").split("/")[-2]
            requests.clear()
            if how.startswith("click:"):
                page.click(how[6:])
            else:
                page.locator("body").press(how[4:])
            page.wait_for_selector("#reveal .voted", timeout=20000)
            revealed = page.inner_text("#reveal")
            shown = small_arena.db.execute(
                "SELECT ml.name, mr.name FROM votes v JOIN battles b ON b.id = v.battle_id "
                "JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id "
                "JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id "
                "ORDER BY v.id DESC LIMIT 1").fetchone()
            assert f"A was {shown[0]}, B was {shown[1]}" in revealed, revealed  # both names, each on its side
            assert sorted(_names_in(revealed)) == sorted(shown)
            sent = [json.loads(body)["data"] for u, body in requests if "/gradio_api/run/" in u]
            assert len(sent) == 1 and sent[0][3].split("@")[0] == on_screen  # one request, naming the battle on screen
            if step > 0:  # shown by Next battle in the browser: the page says for how long
                assert 0 <= float(sent[0][3].split("@")[1]) < 60, sent
            assert page.is_visible("#next-battle") and not page.is_visible("#skip-battle")
            page.locator("body").press("a")  # a second vote on the revealed battle is ignored
            page.wait_for_timeout(300)
            assert small_arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == step + 1
            page.wait_for_timeout(300)  # the vote's own response (with the names) has fully arrived
            bodies.clear()
            page.evaluate("() => window.__streams.forEach(s => { s.text = ''; })")
            requests.clear()
            page.click("#next-battle")
            page.wait_for_function("() => document.querySelector('#reveal')?.innerText.trim() === ''", timeout=20000)
            page.wait_for_selector("#image-a img", timeout=20000)
            assert page.get_attribute("#image-a img", "src").split("/")[-2] != on_screen  # the next battle
            page.wait_for_timeout(200)
            assert [u for u, _ in requests if "gradio_api" in u] == []  # it came with the vote: no request
    rows = small_arena.db.execute(
        "SELECT outcome, seconds_to_vote FROM votes WHERE voter = 'browser-user' ORDER BY id").fetchall()
    assert [outcome for outcome, _ in rows] == ["A", "B", "tie"]
    assert all(0 <= seconds < 60 for _, seconds in rows)


@contextlib.contextmanager
def prompt_on_screen(tmp_path, browser, suite: str, text: str, shows: str):
    """A signed-in page of a small arena showing the one prompt of ``suite``, ``text`` (waits until the prompt panel
    shows ``shows``); yields the page while the app runs."""
    from support.arena import build_small_arena, make_image, render_all

    from datamodel.catalog import PromptSpec, add_image, add_prompts

    arena = build_small_arena(tmp_path)
    prompt_id = add_prompts(arena.db, [PromptSpec(suite, "1", text)]).ids[0]
    for m, model_id in enumerate(arena.model_ids.values()):
        add_image(arena.db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(m, 9)))
    render_all(arena.db, arena.media)
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        sign_in(page, f"{suite}-user", "token-001")
        page.click("#suite-filter input")
        page.get_by_role("option", name=suite).click()
        page.wait_for_function(f"() => document.querySelector('#prompt')?.innerText.includes({json.dumps(shows)})",
                               timeout=20000)
        yield page


def test_prompt_html_is_shown_as_text_not_run(tmp_path, browser):
    hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> **not bold**'
    with prompt_on_screen(tmp_path, browser, "xss", hostile, "window.__pwned") as page:
        page.wait_for_timeout(500)
        assert page.evaluate("() => window.__pwned") is None
        text = page.inner_text("#prompt")
        assert "<script>" in text and "**not bold**" in text
        assert page.locator("#prompt script, #prompt img").count() == 0


def test_urls_in_a_prompt_are_shown_as_written_and_not_linked(tmp_path, browser):
    """Before: a URL in a prompt became a link, and its escaped dots reached the address (``127%5C.0``)."""
    text = "A poster reading http://127.0.0.1:8080/a_b.png, www.example.com and mail@example.org"
    with prompt_on_screen(tmp_path, browser, "urls", text, "poster") as page:
        shown = page.inner_text("#prompt h3")
        links = page.locator("#prompt a").count()
    assert shown == text and links == 0, (shown, links)


def test_leaderboard_and_admin_tabs_in_the_browser(tmp_path, browser):
    from support.arena import build_small_arena

    from arena import session as sessions

    arena = build_small_arena(tmp_path, admin_password="letmein")
    s = sessions.start(arena.db, "voter", "token-001", open_signup=True)
    import random

    for i in range(6):
        s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), s), "A")
    with running_app(arena.settings) as url:
        page = browser.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        page.wait_for_function("() => document.querySelector('#lb-summary')?.innerText.includes('6 human votes')",
                               timeout=30000)
        table = page.inner_text("#lb-table")
        assert all(name in table for name in arena.model_ids)
        page.wait_for_selector("#lb-chart .plotly, #lb-chart .js-plotly-plot", timeout=20000)
        page.get_by_role("tab", name="Admin").click()
        page.fill("#admin-password input", "wrong")
        page.click("#admin-unlock")
        page.wait_for_selector("text=Wrong admin password", timeout=20000)
        assert not page.is_visible("#annotator-stats")
        page.fill("#admin-password input", "letmein")
        page.click("#admin-unlock")
        page.wait_for_selector("#annotator-stats", timeout=20000)
        assert "voter" in page.inner_text("#annotator-stats")
        assert all(name in page.inner_text("#votes-per-model") for name in arena.model_ids)
        # The export answers a one-time link to the file (admin-export/<token>), which the browser downloads.
        with page.expect_download(timeout=20000) as download:
            page.click("#export-csv")
            page.wait_for_selector("#export-file a", timeout=20000)
            assert "6 votes" in page.inner_text("#export-file")
            href = page.get_attribute("#export-file a", "href")
            page.click("#export-file a")
        import csv
        import re

        rows = list(csv.reader(open(download.value.path(), newline="")))
        assert rows[0][:2] == ["vote_id", "battle_id"] and len(rows) == 7
        assert re.fullmatch(r"votes-\d{8}-\d{6}\.csv", download.value.suggested_filename)
        assert re.fullmatch(r"admin-export/[A-Za-z0-9_-]{43}", href)
        assert page.request.get(url + href).status == 404  # used: the link served the file once
        # and the page says so: no live-looking link is left (issue 41)
        page.wait_for_function("() => !document.querySelector('#export-file a') && "
                               "document.querySelector('#export-file').innerText.includes('Downloaded')", timeout=5000)


def test_the_expected_outcome_follows_the_battle_on_screen(tmp_path, browser):
    """The expected outcome shows only after the vote (issue 29): ticked before it, nothing of the answer shows; once
    voted on, the box re-renders the voted battle's prompt with or without it and the reveal carries it; the battle
    Next battle swaps in (which came with the vote) shows without it."""
    from support.arena import build_small_arena, make_image

    from datamodel.catalog import PromptSpec, add_image, add_prompts

    arena = build_small_arena(tmp_path)
    extra = [PromptSpec("commonsense", str(i), f"A kettle number {i}", subset="Physical Laws", role="p1",
                        metadata={"description": f"Kettle {i} is boiling"}) for i in range(1, 7)]
    for p, prompt_id in enumerate(add_prompts(arena.db, extra).ids):
        for m, model_id in enumerate(arena.model_ids.values()):
            add_image(arena.db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(m, p)))
    newest_prompt = lambda: arena.db.execute(  # noqa: E731
        "SELECT p.text FROM battles b JOIN prompts p ON p.id = b.prompt_id ORDER BY b.served_at DESC LIMIT 1"
    ).fetchone()[0]
    has_expected = "() => document.querySelector('#prompt')?.innerText.includes('Expected outcome')"
    with running_app(arena.settings) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        sign_in(page, "expected-user", "token-001")
        first = page.get_attribute("#image-a img", "src")
        battles = lambda: arena.db.execute("SELECT COUNT(*) FROM battles").fetchone()[0]  # noqa: E731
        before = battles()
        page.click("#suite-filter input")
        page.get_by_role("option", name="Commonsense-T2I").click()  # the menu names suites by their titles
        page.wait_for_function(f"() => document.querySelector('#image-a img').getAttribute('src') !== '{first}'",
                               timeout=20000)  # the suite's first battle is on screen
        page.wait_for_timeout(300)
        assert battles() == before + 1  # one pick, one battle (two would leave the session on the other one)
        prompt = lambda: page.inner_text("#prompt")  # noqa: E731
        assert "Physical Laws" in prompt()
        page.click("#show-expected input")
        page.wait_for_timeout(500)
        assert not page.evaluate(has_expected), "the expected outcome shows before the vote"
        for _ in range(10):  # vote until the battle that comes with the vote has another prompt
            voted_text, voted_token = prompt(), page.get_attribute("#image-a img", "src").split("/")[-2]
            page.click("#vote-a")
            page.wait_for_selector("#reveal .voted", timeout=20000)
            following = newest_prompt()
            if following not in voted_text:
                break
            page.click("#next-battle")
            page.wait_for_function("() => document.querySelector('#reveal')?.innerText.trim() === ''", timeout=20000)
        assert following not in voted_text
        assert "Expected outcome" in page.inner_text("#reveal")  # ticked when voting: the reveal carries it
        page.click("#show-expected input")  # off, while the voted battle is on screen with its names
        page.wait_for_timeout(300)
        assert prompt() == voted_text and not page.evaluate(has_expected)
        page.click("#show-expected input")  # on again: the voted battle's prompt, with its expected outcome
        page.wait_for_function(has_expected, timeout=20000)
        assert prompt().startswith(voted_text.strip())
        page.click("#next-battle")
        page.wait_for_function("() => document.querySelector('#reveal')?.innerText.trim() === ''", timeout=20000)
        assert page.get_attribute("#image-a img", "src").split("/")[-2] != voted_token
        assert following in prompt() and "Expected outcome" not in prompt()  # swapped in, not voted on yet
