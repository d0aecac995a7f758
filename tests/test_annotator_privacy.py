"""Annotators' names and per-annotator results are private: an annotator's leaderboard (the Voter filter) is shown
to that annotator, signed in on the same page, and to the admin; judges' stay public. No annotator name reaches the
page's configuration, its API description or the public inter-annotator table."""

import asyncio
import json
import re

import httpx
import pytest
from gradio_client import Client
from support.arena import build_small_arena
from support.votes import JUDGE, add_votes
from support.webapp import page_session, running_app

ADMIN_PASSWORD = "correct horse"
CONFIGURED = "yusuf-configured-3"  # an account of ARENA_ANNOTATORS (besides the signed-up ones, which then stay)
SIGNED_UP = "zelda-signed-up-7"  # an account made by signing up
FILTERS = ["All", "All", "All", "All"]  # suite, subset, prompt variant, category


def _private_arena(root):
    """The small arena with open sign-up, alice and bob (signed up, with votes), two judges and one more signed-up
    account, all made before the server starts."""
    from arena import session as sessions

    arena = build_small_arena(root, admin_password=ADMIN_PASSWORD)
    add_votes(arena)
    sessions.start(arena.db, SIGNED_UP, "token-zelda", open_signup=True)
    return arena


@pytest.fixture
def private_arena(tmp_path):
    arena = _private_arena(tmp_path)
    yield arena
    arena.db.close()


@pytest.fixture(scope="module")
def private_app(tmp_path_factory):
    """One app on :func:`_private_arena` for the tests that only sign in, unlock the admin tab and read leaderboards
    (no vote, no account or setting changed): an app each cost ~0.7 s of CPU. Yields (arena, url)."""
    arena = _private_arena(tmp_path_factory.mktemp("private"))
    with running_app(arena.settings) as url:
        yield arena, url
    arena.db.close()


def annotator_names(arena) -> list[str]:
    return [name for name, in arena.db.execute("SELECT name FROM annotators")]


def leaks(text: str, names: list[str]) -> list[str]:
    """The names found in ``text`` as a JSON string or as a word."""
    return [name for name in names if f'"{name}"' in text or re.search(rf"\b{re.escape(name)}\b", text)]


@pytest.mark.parametrize("configured", [False, True])
def test_no_annotator_name_is_in_the_page_config_or_the_api_description(private_arena, configured):
    from datamodel.annotators import sync_accounts

    settings = private_arena.settings.replace(annotators=f"{CONFIGURED}:tok-yusuf" if configured else "")
    sync_accounts(private_arena.db, settings.annotator_accounts)  # as the server does when it starts
    names = annotator_names(private_arena)
    assert {"alice", "bob", SIGNED_UP} | ({CONFIGURED} if configured else set()) <= set(names)
    with running_app(settings) as url:
        config = httpx.get(url + "config").text
        info = httpx.get(url + "gradio_api/info").text
    assert JUDGE in config  # the judges stay in the Voter menu, for everyone
    assert leaks(config, names) == [] and leaks(info, names) == []


def call(url: str, steps: list[tuple[str, list]]) -> list:
    """Run events of one page (one session) in order, as the page does; return the last one's outputs."""
    async def run():
        async with page_session(url) as session:
            for api_name, inputs in steps:
                outputs = await session.call(api_name, inputs)
            return outputs

    return asyncio.run(run())


def voter_choices(outputs: list) -> list[str]:
    """The Voter menu's choices in the answer of the tab's menu refresh (the suite, subset, variant and category
    menus come first)."""
    update = outputs[4]
    return [choice[0] if isinstance(choice, list) else choice for choice in update["choices"]]


def test_the_voter_menu_lists_the_judges_and_only_the_viewers_own_name(private_app):
    private_arena, url = private_app
    anonymous = call(url, [("resume", ["", "", ""]), ("leaderboard_menus", [None, None])])  # a page: load first
    alice = call(url, [("sign_in", ["alice", "alice-token", None, "All suites", False]),
                       ("leaderboard_menus", [None, None])])
    admin = call(url, [("admin_unlock", [ADMIN_PASSWORD, None]), ("leaderboard_menus", [None, None])])
    judges = sorted(voter for voter, in private_arena.db.execute(
        "SELECT DISTINCT voter FROM votes WHERE voter_kind = 'judge'"))
    assert voter_choices(anonymous) == ["All", *judges]
    assert voter_choices(alice) == ["All", "alice", *judges]
    assert set(voter_choices(admin)) == {"All", *judges, *annotator_names(private_arena)}


@pytest.mark.slow
def test_an_annotators_leaderboard_is_only_for_that_annotator_and_the_admin(private_app):
    refused = "Unknown voter 'bob': pick one from the Voter menu"
    _, url = private_app
    anonymous = Client(url, verbose=False)
    judged = anonymous.predict(*FILTERS, JUDGE, "drop", False, api_name="/leaderboard")
    for name in ("bob", "alice", "nobody-at-all"):  # a made-up name gets the same answer as a real one
        with pytest.raises(Exception, match=f"Unknown voter '{name}': pick one from the Voter menu"):
            anonymous.predict(*FILTERS, name, "drop", False, api_name="/leaderboard")
        with pytest.raises(Exception, match="pick one from the Voter menu"):
            anonymous.predict(*FILTERS, name, "drop", False, api_name="/leaderboard_refresh")
    alice = Client(url, verbose=False)
    alice.predict("alice", "alice-token", api_name="/sign_in")
    own = alice.predict(*FILTERS, "alice", "drop", False, api_name="/leaderboard")
    with pytest.raises(Exception, match=refused):
        alice.predict(*FILTERS, "bob", "drop", False, api_name="/leaderboard")
    inputs = [*FILTERS, "bob", "drop", False, "The one with the most votes", "arena", "All", False, "Now", "rating",
              "human", None, None]
    forged = [*inputs[:-2], {"annotator": {"name": "bob"}}, True]  # the page's state is the server's, not sent
    with pytest.raises(Exception, match=refused):
        call(url, [("leaderboard", forged)])
    admin = call(url, [("admin_unlock", [ADMIN_PASSWORD, None]), ("leaderboard", inputs)])
    assert judged[0].startswith("**0 human votes")  # the one-line headline, then when it was computed
    assert own[0].startswith("**18 human votes")  # alice's own
    assert admin[0].startswith("**18 human votes")  # bob's, for the admin


@pytest.mark.slow  # 4.8 s on the quiet machine (make check, 2026-11-26)
def test_the_inter_annotator_table_names_annotators_only_for_the_admin(private_app):
    everything = [*FILTERS, "All", "drop", False, "The one with the most votes", "arena", "All", False, "Now",
                  "rating", "human", None, None]
    private_arena, url = private_app
    public = call(url, [("leaderboard", everything)])[-1]
    alice = call(url, [("sign_in", ["alice", "alice-token", None, "All suites", False]),
                       ("leaderboard", everything)])[-1]
    admin = call(url, [("admin_unlock", [ADMIN_PASSWORD, None]), ("leaderboard", everything)])[-1]
    pair = lambda table: sorted(map(str, table["data"][0][:2]))  # noqa: E731
    assert len(public["data"]) == 1 and pair(public) == ["Annotator #1", "Annotator #2"]
    assert leaks(json.dumps(public), annotator_names(private_arena)) == []
    assert pair(alice) == ["Annotator #1", "alice"]  # her own name, the other one hidden
    assert pair(admin) == ["alice", "bob"]
    assert public["data"][0][2:] == admin["data"][0][2:]  # the same figures


def test_the_leaderboards_admin_check_does_not_keep_an_admin_session_alive():
    """The leaderboard asks whether its page is the admin's at every timer tick: that must not count as admin use."""
    from arena.web.admin_session import AdminSessions, Holder

    now = [0.0]
    admins = AdminSessions(idle_s=10, clock=lambda: now[0])
    holder = Holder("127.0.0.1", "browser-1")
    session_id = admins.open(holder)
    for now[0] in (4.0, 8.0):
        assert admins.live(session_id, holder, touch=False)
    now[0] = 10.5
    assert not admins.live(session_id, holder, touch=False) and not admins.live(session_id, holder)
    admins.close()
