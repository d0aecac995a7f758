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
        summary, table, _chart = client.predict("All", "All", "All", api_name="/leaderboard")
    assert summary.startswith("3 human votes")
    assert sorted(row[0] for row in table["data"]) == sorted(MODELS)
