"""The page's own HTTP API, driven through gradio_client as a program would."""

import json
import re

import pytest
from gradio_client import Client
from support.arena import MODELS
from support.webapp import running_app

from tools.load import shown_token


def _contains_model_name(value) -> bool:
    text = json.dumps(value, default=str)
    return any(name in text for name in MODELS)


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory):
    """One small arena's app for the tests that sign in, load battles and fetch images but count nothing they did not
    do themselves (an app built for each cost ~0.7 s of CPU); a test that counts all votes or battles, or deletes
    files, keeps its own ``small_arena``."""
    from support.arena import build_small_arena

    arena = build_small_arena(tmp_path_factory.mktemp("shared"))
    with running_app(arena.settings) as url:
        yield arena, url
    arena.db.close()


def test_sign_in_vote_reveal_and_next_through_the_api(small_arena):
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        shown = client.predict("api-user", "token-001", api_name="/sign_in")
        assert not _contains_model_name(shown)
        first = shown_token(shown)
        voted = client.predict("All suites", False, first, api_name="/vote_a")
        status, image_a, image_b, reveal, following = voted
        assert _contains_model_name([image_a, image_b, reveal])  # names revealed after the vote, on its images
        assert first in image_a and "Your vote: <b>A is better</b>" in reveal and "Vote #" not in reveal
        assert not _contains_model_name(following)  # the next battle comes along, anonymous
        assert following["token"] != first and f"battle-media/{following['token']}/a" in reveal  # preloaded
        # A refused vote is told on the status line (the page shows it in words), the rest left as it is.
        refused = client.predict("All suites", False, first, api_name="/vote_b")  # the voted battle, on screen
        assert "already has your vote" in refused[0]
        refused = client.predict("All suites", False, "not-a-token-on-this-page", api_name="/vote_b")  # never shown
        assert "no longer on your screen" in refused[0]
        client.predict("All suites", False, following["token"], api_name="/vote_tie")  # after Next battle
        skipped = client.predict(api_name="/next_battle")  # skip the battle that came with that vote
        assert not _contains_model_name(skipped)
        client.predict(api_name="/vote_both_bad")  # without a token: the session's current battle
    rows = small_arena.db.execute("SELECT voter, outcome FROM votes ORDER BY id").fetchall()
    assert rows == [("api-user", "A"), ("api-user", "tie"), ("api-user", "both_bad")]
    battles = small_arena.db.execute("SELECT COUNT(*) FROM battles").fetchone()[0]
    assert battles == 5  # sign-in, two drawn with votes, one skip, one drawn with the last vote


def test_votes_need_a_signed_in_session(shared_app):
    arena, url = shared_app
    votes = lambda: arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]  # noqa: E731
    before = votes()
    client = Client(url, verbose=False)
    with pytest.raises(Exception, match="409"):  # a page without a session: refused at the front door
        client.predict(api_name="/vote_a")
    assert votes() == before


def test_leaderboard_endpoint_returns_the_table(small_arena):
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        client.predict("lb-user", "token-001", api_name="/sign_in")
        for _ in range(3):
            client.predict(api_name="/vote_a")
        everything = client.predict("All", "All", "All", "All", "All", "drop", False, api_name="/leaderboard")
        commonsense = client.predict("commonsense", "All", "All", "All", "All", "drop", False, api_name="/leaderboard")
    headline, table = everything[0], everything[2]  # the one-line headline, the statistics folded under it, the table
    # how long ago depends on the machine's load (a loaded machine took 7 s here): the wording is test_age_text's
    assert headline.startswith("**3 human votes")
    assert re.search(r"\*Updated (just now|\d+ s ago) \(computed in", headline)
    assert table["headers"][:3] == ["Rank", "Rank range", "Model"]  # issue 17: rank first; 44: its range beside it
    assert sorted(row[2] for row in table["data"]) == sorted(MODELS)
    stored = small_arena.db.execute(
        "SELECT COUNT(*) FROM votes v JOIN battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id "
        "WHERE p.suite = 'commonsense'").fetchone()[0]
    assert commonsense[0].startswith(f"**{stored} human vote")  # "1 human vote", "2 human votes"


@pytest.mark.slow
def test_the_leaderboard_endpoint_takes_a_judge_and_shows_the_annotator_pairs(small_arena):
    from support.votes import JUDGE, SINGLE, add_votes

    add_votes(small_arena)  # two annotators and two judges on the same battles
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        default = client.predict("All", "All", "All", "All", "All", "drop", False, api_name="/leaderboard")
        chosen = client.predict("All", "All", "All", "All", "All", "drop", False, SINGLE, api_name="/leaderboard")
        with pytest.raises(Exception, match="No judge votes from 'nobody'"):
            client.predict("All", "All", "All", "All", "All", "drop", False, "nobody", api_name="/leaderboard")
    assert f"Judge column: {JUDGE} (18 votes, the judge with the most votes)" in default[1]  # the folded statistics
    assert f"Judge column: {SINGLE} (6 votes, chosen)" in chosen[1]
    pairs = chosen[-1]  # annotators' names are private: the public table numbers them (tests/test_annotator_privacy)
    assert len(pairs["data"]) == 1 and {"Annotator #1", "Annotator #2"} <= set(map(str, pairs["data"][0]))
    assert not {"alice", "bob"} & set(map(str, pairs["data"][0]))


def test_battle_images_are_served_only_through_the_battle_token(shared_app):
    import re

    import httpx

    small_arena, url = shared_app
    client = Client(url, verbose=False)
    shown = client.predict("img-user", "token-001", api_name="/sign_in")
    sources = re.findall(r'src="(battle-media/[^"]+)"', json.dumps(shown).replace('\\"', '"'))
    assert [s[-2:] for s in sources] == ["/a", "/b"]
    token = sources[0].split("/")[1]
    hashes = dict(small_arena.db.execute("SELECT media_token, media_hash FROM battles b JOIN images i "
                                         "ON i.id = b.left_image_id").fetchall())
    left = httpx.get(url + sources[0])  # the display rendition, never the stored original
    assert left.status_code == 200 and left.headers["content-type"] == "image/jpeg"
    assert left.content == _rendition(small_arena, hashes[token], "png")
    for bad in [f"battle-media/{token}/c", "battle-media/not-a-real-token-123456/a",
                "battle-media/..%2F..%2F..%2Fetc%2Fpasswd/a", f"battle-media/{token}/..%2F..%2Farena.db",
                "gradio_api/file=" + str(small_arena.settings.media_dir.resolve() / "x.png"),
                "gradio_api/file=" + str(small_arena.settings.db_path.resolve())]:
        response = httpx.get(url + bad)
        assert response.status_code in (403, 404), bad
        assert b"SQLite" not in response.content


# --- battle images: what a media token does and does not open ------------------------------------------------------


def _two_battles_with_different_images(arena):
    """Two battles served to one session, on different prompts (so no image is shared between them)."""
    import random

    from datamodel.battles import Pairing
    from sampling.draws import serve_battle

    images = {(p, m): i for i, p, m in arena.db.execute("SELECT id, prompt_id, model_id FROM images")}
    (m1, m2) = list(arena.model_ids.values())[:2]
    p1, p2 = arena.prompt_ids[0], arena.prompt_ids[2]
    session = "session-for-media-tests"
    x = serve_battle(arena.db, random.Random(0), session_id=session, annotator_id=None, judge="media-test",
                     pairing=Pairing(p1, images[p1, m1], images[p1, m2]))
    y = serve_battle(arena.db, random.Random(1), session_id=session, annotator_id=None, judge="media-test",
                     pairing=Pairing(p2, images[p2, m2], images[p2, m1]))
    return x, y


def _rendition(arena, media_hash: str, media_ext: str) -> bytes:
    """What the battle-media route answers for a stored image: its display rendition under the arena's settings."""
    from datamodel.renditions import RenditionSpec, render

    return render(arena.media.path(media_hash, media_ext).read_bytes(), RenditionSpec.from_settings(arena.settings))


def _raw_get(url: str, path: str) -> tuple[int, bytes]:
    import http.client
    from urllib.parse import urlparse

    address = urlparse(url)
    assert address.hostname is not None, url
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=20)
    try:
        connection.request("GET", "/" + path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_media_token_serves_its_own_battle_images_only(shared_app):
    import httpx

    from datamodel.votes import record_vote

    small_arena, url = shared_app
    x, y = _two_battles_with_different_images(small_arena)
    file = lambda shown: _rendition(small_arena, shown.media_hash, shown.media_ext)  # noqa: E731
    assert len({file(x.left), file(x.right), file(y.left), file(y.right)}) == 4
    get = lambda path: httpx.get(url + path)  # noqa: E731
    assert get(f"battle-media/{x.media_token}/a").content == file(x.left)
    assert get(f"battle-media/{x.media_token}/b").content == file(x.right)
    assert get(f"battle-media/{y.media_token}/a").content == file(y.left)
    # The battle id (the vote's secret) is not a media token, and a token opens no other path.
    refused = [f"battle-media/{x.id}/a", f"battle-media/{x.media_token}/c", f"battle-media/{x.media_token}/",
               f"battle-media/{x.media_token}/a/../../{y.media_token}/a", f"battle-media/{x.media_token[:-1]}/a",
               f"battle-media/{x.media_token}%2F..%2F{y.media_token}/a", f"battle-media/{x.left.media_hash}/a",
               f"battle-media/..%2F..%2Fmedia%2F{x.left.media_hash[:2]}%2F{x.left.media_hash}.png/a"]
    for path in refused:
        status, body = _raw_get(url, path)  # sent as written: no client-side removal of "..", no decoding
        assert status == 404, path
        assert body not in (file(x.left), file(x.right), file(y.left), file(y.right)), path
    assert httpx.post(url + f"battle-media/{x.media_token}/a").status_code == 404
    # A token does not expire with the vote: the page keeps showing the two images, now captioned.
    record_vote(small_arena.db, x.id, "A", session_id="session-for-media-tests")
    assert get(f"battle-media/{x.media_token}/a").content == file(x.left)


def test_a_missing_media_file_is_a_404_with_a_log_line(small_arena, caplog):
    import logging

    import httpx

    from datamodel.renditions import Renditions

    x, _ = _two_battles_with_different_images(small_arena)
    renditions = Renditions.from_settings(small_arena.media, small_arena.settings)
    small_arena.media.path(x.left.media_hash, x.left.media_ext).unlink()  # the original and its rendition
    renditions.path(x.left.media_hash).unlink()
    small_arena.media.path(x.right.media_hash, x.right.media_ext).unlink()  # the original only: shown all the same
    with caplog.at_level(logging.ERROR, logger="arena.web.app"), running_app(small_arena.settings) as url:
        missing = httpx.get(url + f"battle-media/{x.media_token}/a")
        present = httpx.get(url + f"battle-media/{x.media_token}/b")
    assert missing.status_code == 404 and missing.text == "Image not available."
    assert present.status_code == 200
    logged = [r.getMessage() for r in caplog.records if r.name == "arena.web.app"]
    assert len(logged) == 1 and x.left.media_hash in logged[0] and "rendered again" in logged[0]


def test_the_image_cache_is_bounded_by_bytes_and_drops_the_least_recently_used(tmp_path):
    from arena.web.app import MEDIA_CACHE_BYTES, ByteCache

    assert MEDIA_CACHE_BYTES == 64 * 1024 * 1024
    files = {}
    for name, size in (("a", 40), ("b", 40), ("c", 30), ("huge", 101)):
        files[name] = tmp_path / name
        files[name].write_bytes(name[0].encode() * size)
    cache = ByteCache(max_bytes=100)
    assert cache.read(files["a"]) == b"a" * 40 and cache.read(files["b"]) == b"b" * 40
    files["a"].write_bytes(b"changed")  # served from memory from now on (files are content-addressed)
    assert cache.read(files["a"]) == b"a" * 40  # a is now the most recently used
    cache.read(files["c"])  # 110 bytes > 100: b, the least recently used, goes
    assert cache.size == 70 and len(cache) == 2
    files["b"].write_bytes(b"re-read")
    assert cache.read(files["b"]) == b"re-read"  # b was dropped, so it is read again (and c goes)
    assert cache.read(files["huge"]) == b"h" * 101 and cache.size <= 100  # larger than the budget: never kept
    files["huge"].unlink()
    with pytest.raises(FileNotFoundError):
        cache.read(files["huge"])


# --- rate limit and admin review through the running app -------------------------------------------------------------


def test_the_annotator_rate_limit_refuses_the_third_vote_and_writes_nothing(tmp_path):
    from support.arena import build_small_arena

    arena = build_small_arena(tmp_path, rate_limit_annotator_per_minute=2, rate_limit_client_per_minute=0)
    with running_app(arena.settings) as url:
        client = Client(url, verbose=False)
        client.predict("fast-voter", "token-001", api_name="/sign_in")
        for _ in range(2):
            client.predict(api_name="/vote_a")  # each vote brings the next battle along: no request for it
        count = lambda table: arena.db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
        before = count("votes"), count("battles")
        refused = client.predict(api_name="/vote_b")[0].replace("\\", "")  # told on the status line (Markdown)
        refused = re.sub(r"<[^>]+>", "", refused)  # the wait is a span the page counts down
        assert re.search(r"Slow down: at most 2 votes per minute per annotator\. "
                         r"Look at the images a little longer and vote again in \d+ s\.", refused), refused
        assert (count("votes"), count("battles")) == before == (2, 3)  # no vote, and no next battle drawn
        other = Client(url, verbose=False)  # the limit is per annotator, not for everyone
        other.predict("calm-voter", "token-002", api_name="/sign_in")
        other.predict(api_name="/vote_tie")
    rows = arena.db.execute("SELECT voter, outcome FROM votes ORDER BY id").fetchall()
    assert rows == [("fast-voter", "A"), ("fast-voter", "A"), ("calm-voter", "tie")]
    arena.db.close()


def test_an_admin_excludes_and_includes_a_vote_through_the_admin_tab(tmp_path):
    import asyncio
    import random

    from support.arena import build_small_arena
    from support.webapp import call_event, page_session

    from arena import session as sessions
    from tools.load import LoadError

    arena = build_small_arena(tmp_path, admin_password="letmein")
    s = sessions.start(arena.db, "voter", "token-001", open_signup=True)
    s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(0), s), "A")
    vote_id = s.receipt.vote_id
    state = lambda: arena.db.execute(  # noqa: E731
        "SELECT excluded, reviewed, excluded_reason FROM votes WHERE id = ?", [vote_id]).fetchone()
    assert state()[:2] == (0, 0)
    async def review(url):
        """Unlock, then review, on one page: only unlock takes the password (tests/test_security_review.py)."""
        async with page_session(url) as session:
            await session.call("admin_unlock", ["letmein", None])
            # the answer: what was done, then every table read again (annotators, flagged votes, ...)
            excluded = await session.call("admin_review_exclude", [None, vote_id, "reviewed by an admin"])
            after_exclude = state()
            included = await session.call("admin_review_include", [None, vote_id, "reviewed by an admin"])
            # told in words; the tables stay
            wrong = await session.call("admin_review_exclude", [None, 999, "reviewed by an admin"])
            assert "No vote with id 999" in wrong[0] and all(output is None or "__type__" in str(output)
                                                             for output in wrong[1:]), wrong
            return excluded, after_exclude, included

    with running_app(arena.settings) as url:
        excluded, after_exclude, included = asyncio.run(review(url))
        assert after_exclude == (1, 1, "excluded by an admin: reviewed by an admin")
        assert "Excluded 1 vote" in excluded[0] and excluded[2]["data"][0][:3] == [f"pairwise {vote_id}", "voter", "A"]
        with pytest.raises(LoadError, match="Wrong admin password"):
            call_event(url, "admin_unlock", ["wrong", None])
        with pytest.raises(LoadError, match="409"):  # another page, without a session: refused at the front door
            call_event(url, "admin_review_exclude", ["letmein", vote_id, "letmein"])
    assert state() == (0, 1, "included by an admin: reviewed by an admin "
                             "(was: excluded by an admin: reviewed by an admin)")
    arena.db.close()


def test_the_vote_and_battle_routes_check_their_raw_inputs(small_arena):
    """The battle events skip Gradio's input processing (it cost more than the vote under load), so the handlers
    check the raw suite and checkbox values themselves: a suite that is not in the menu is refused and writes
    nothing; the checkbox counts as ticked only when it is ``true``."""
    import asyncio

    from support.webapp import page_session

    from tools.load import LoadError

    bad_suites = ["no-such-suite", "taxonomy ", "x" * 5000, 7, ["taxonomy"], {"suite": "taxonomy"}, True]

    async def drive(url):
        async with page_session(url) as session:
            await session.call("sign_in", ["raw-user", "token-001", None, "All suites", False])
            answers = []
            for suite in bad_suites:
                for api_name, inputs in (("vote_a", [None, suite, False, ""]), ("next_battle", [None, suite, False])):
                    with pytest.raises(LoadError, match="Unknown suite .*pick one from the Suite menu"):
                        await session.call(api_name, inputs)
            for expected in ("yes", 1, None, {"a": 1}):
                answers.append(await session.call("next_battle", [None, "taxonomy", expected]))
            voted = await session.call("vote_b", [None, "commonsense", "true", None])
            return answers, voted

    with running_app(small_arena.settings) as url:
        answers, voted = asyncio.run(drive(url))
    assert all("Suite:** WordNet taxonomy" in answer[2] for answer in answers)
    assert not any("Expected" in answer[2] for answer in answers)  # only a real ``true`` ticks the box
    assert "Your vote: <b>B is better</b>" in json.dumps(voted)
    rows = small_arena.db.execute("SELECT voter, outcome FROM votes").fetchall()
    assert rows == [("raw-user", "B")]  # the refused votes wrote nothing
    # sign-in, four battles loaded and the one drawn with the vote: the refused calls served none
    assert small_arena.db.execute("SELECT COUNT(*) FROM battles").fetchone()[0] == 6


def test_age_text_says_how_long_ago_the_shown_board_was_computed():
    import time

    from arena.web.leaderboard_tab import age_text
    from datamodel.snapshots import Snapshot

    def made(seconds_ago: float) -> Snapshot:
        return Snapshot(key="k", view={}, data_version=(1,), computed_at=time.time() - seconds_ago, seconds=0.25)

    assert age_text(made(0), "") == "*Updated just now (computed in 0.2 s).*\n\n"
    assert age_text(made(42), "").startswith("*Updated 42 s ago (computed in 0.2 s)")
    assert age_text(made(600), "updating").startswith("*Updated 10 min ago (computed in 0.2 s); newer votes are")
    assert "the last update failed (boom)" in age_text(made(5), "boom")
