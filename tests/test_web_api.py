"""The page's own HTTP API, driven through gradio_client as a program would."""

import json

import pytest
from gradio_client import Client

from conftest import MODELS
from webapp import running_app


def _contains_model_name(value) -> bool:
    text = json.dumps(value, default=str)
    return any(name in text for name in MODELS)


def test_sign_in_vote_reveal_and_next_through_the_api(small_arena):
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        shown = client.predict("api-user", "token-1", api_name="/sign_in")
        assert not _contains_model_name(shown)
        voted = client.predict(api_name="/vote_a")
        assert _contains_model_name(voted)  # names revealed after the vote
        with pytest.raises(Exception, match="already has your vote"):
            client.predict(api_name="/vote_b")
        nxt = client.predict(api_name="/next_battle")
        assert not _contains_model_name(nxt)
        client.predict(api_name="/vote_both_bad")
    rows = small_arena.db.execute("SELECT voter, outcome FROM votes ORDER BY id").fetchall()
    assert rows == [("api-user", "A"), ("api-user", "both_bad")]


def test_votes_need_a_signed_in_session(small_arena):
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        with pytest.raises(Exception, match="Sign in"):
            client.predict(api_name="/vote_a")
    assert small_arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 0


def test_leaderboard_endpoint_returns_the_table(small_arena):
    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        client.predict("lb-user", "token-1", api_name="/sign_in")
        for _ in range(3):
            client.predict(api_name="/vote_a")
            client.predict(api_name="/next_battle")
        everything = client.predict("All", "All", "All", "All", "All", "drop", False, api_name="/leaderboard")
        commonsense = client.predict("commonsense", "All", "All", "All", "All", "drop", False, api_name="/leaderboard")
    summary, table = everything[:2]
    assert summary.startswith("3 human votes")
    assert sorted(row[0] for row in table["data"]) == sorted(MODELS)
    stored = small_arena.db.execute(
        "SELECT COUNT(*) FROM votes v JOIN battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id "
        "WHERE p.suite = 'commonsense'").fetchone()[0]
    assert commonsense[0].startswith(f"{stored} human votes")


def test_battle_images_are_served_only_through_the_battle_token(small_arena):
    import re

    import httpx

    with running_app(small_arena.settings) as url:
        client = Client(url, verbose=False)
        shown = client.predict("img-user", "token-1", api_name="/sign_in")
        sources = re.findall(r'src="(battle-media/[^"]+)"', json.dumps(shown).replace('\\"', '"'))
        assert [s[-2:] for s in sources] == ["/a", "/b"]
        token = sources[0].split("/")[1]
        hashes = dict(small_arena.db.execute("SELECT media_token, media_hash FROM battles b JOIN images i "
                                             "ON i.id = b.left_image_id").fetchall())
        left = httpx.get(url + sources[0])
        assert left.status_code == 200 and left.headers["content-type"] == "image/png"
        assert left.content == small_arena.media.path(hashes[token], "png").read_bytes()
        for bad in [f"battle-media/{token}/c", "battle-media/not-a-real-token-123456/a",
                    "battle-media/..%2F..%2F..%2Fetc%2Fpasswd/a", f"battle-media/{token}/..%2F..%2Farena.db",
                    "gradio_api/file=" + str(small_arena.settings.media_dir.resolve() / "x.png"),
                    "gradio_api/file=" + str(small_arena.settings.db_path.resolve())]:
            response = httpx.get(url + bad)
            assert response.status_code in (403, 404), bad
            assert b"SQLite" not in response.content
