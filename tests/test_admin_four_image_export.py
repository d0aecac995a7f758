"""The Admin tab's four-image export, through the page's HTTP API (the browser half: test_browser_admin_four_image.py).

The four-image votes could be exported only from the command line (``python -m arena export FILE --format
four-image``). The Admin tab offers them as the vote exports are offered: one button, shown where the arena runs the
four-image mode or holds four-image votes, answered to the admin session that unlocked with a one-time link to a file
of mode 0600, byte for byte the command's file; a page that has not unlocked is refused as for every admin event.
"""

import json
import os
import random
import re
import stat

import httpx
from support.arena import build_small_arena, command_line_env
from support.votes import four_image_votes
from support.webapp import Page, running_app

from arena import session as sessions
from arena.commands import main

PASSWORD = "four-image-admin"
LINK = re.compile(r'href="(admin-export/[A-Za-z0-9_-]{43})"')


def _unlock(page: Page) -> list:
    ok, outputs = page.queued("admin_unlock", [PASSWORD, None])
    assert ok and isinstance(outputs, list), outputs
    return outputs


def _button_shown(page: Page, outputs: list) -> bool:
    """Whether the unlock's answer shows the Export four-image JSONL button."""
    config = page.http.get("config").json()
    (button,) = [c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == "export-four-image"]
    updates = [out for target, out in zip(page.events["admin_unlock"]["outputs"], outputs) if target == button]
    assert len(updates) == 1, "the unlock does not say whether the four-image export is offered"
    return updates[0]["visible"]


def _command_export(arena, monkeypatch, folder) -> bytes:
    """What ``python -m arena export four.jsonl --format four-image`` writes for the arena's database."""
    folder.mkdir()
    with monkeypatch.context() as patched:
        command_line_env(arena, patched, folder)
        assert main(["export", str(folder / "four.jsonl"), "--format", "four-image"]) == 0
    return (folder / "four.jsonl").read_bytes()


def test_the_admin_downloads_the_four_image_votes_once_as_the_command_writes_them(tmp_path, monkeypatch):
    from arena.web import admin_tab

    arena = build_small_arena(tmp_path, admin_password=PASSWORD, four_image_suites="taxonomy")
    kim = sessions.start(arena.db, "kim", "a-long-token-1", open_signup=True)
    four_image_votes(arena.db, kim, 5, start=1000.0, every=30.0)
    sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(0), kim), "A")  # a pairwise one
    written = []

    def spy(db, path, fmt=None, **kwargs):
        rows = real(db, path, fmt, **kwargs)
        written.append((path, fmt, oct(stat.S_IMODE(path.stat().st_mode)), path.stat().st_uid))
        return rows

    real = admin_tab.export_votes
    monkeypatch.setattr(admin_tab, "export_votes", spy)
    with running_app(arena.settings) as url:
        admin, bystander = Page(url), Page(url)
        assert bystander.queued("resume", ["", "", ""])[0]  # a page the server holds a session for, not unlocked
        refused = bystander.queued("admin_export_four_image", [PASSWORD][:bystander.inputs("admin_export_four_image")])
        assert refused[0] is False and "Unlock the admin tab first" in str(refused[1]), refused
        assert _button_shown(admin, _unlock(admin))
        ok, answer = admin.queued("admin_export_four_image", [None])
        assert ok, answer
        (path, fmt, mode, owner), = written
        assert (fmt, mode, owner) == ("four-image", "0o600", os.getuid())
        assert "5 four-image votes" in answer[0] and "image_id_1" not in answer[0]  # a link, not the votes
        (link,) = LINK.findall(answer[0])
        again = bystander.queued("admin_export_four_image", [None])  # unlocked elsewhere: still refused
        assert again[0] is False and "Unlock the admin tab first" in str(again[1]), again
        assert httpx.get(url + link, timeout=10).status_code == 404  # another browser (no cookie) with the link
        downloaded = admin.http.get(link)
        assert downloaded.status_code == 200, downloaded.text[:200]
        assert downloaded.headers["content-type"].startswith("application/x-ndjson")
        assert re.fullmatch(r'attachment; filename="four-image-votes-\d{8}-\d{6}\.jsonl"',
                            downloaded.headers["content-disposition"])
        assert admin.http.get(link).status_code == 404  # once
        assert not path.exists()
        admin.close(), bystander.close()
    command = _command_export(arena, monkeypatch, tmp_path / "command")
    assert downloaded.content == command
    lines = [json.loads(line) for line in command.decode().splitlines()]
    assert len(lines) == 5 and {line["annotator"] for line in lines} == {"kim"}


def test_the_four_image_export_is_offered_where_the_arena_has_four_image_votes(tmp_path):
    """Without the four-image mode the button is hidden until the database holds a four-image vote (one from an
    earlier run with the mode on); the unlock reads it then."""
    arena = build_small_arena(tmp_path, admin_password=PASSWORD)
    with running_app(arena.settings) as url:
        before = Page(url)
        assert not _button_shown(before, _unlock(before))
        kim = sessions.start(arena.db, "kim", "a-long-token-1", open_signup=True)
        four_image_votes(arena.db, kim, 1, start=1000.0, every=30.0)
        after = Page(url)
        assert _button_shown(after, _unlock(after))
        ok, answer = after.queued("admin_export_four_image", [None])
        assert ok and "(1 four-image vote" in answer[0], answer
        before.close(), after.close()
