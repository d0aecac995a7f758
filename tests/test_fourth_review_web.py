"""The fourth security review (issue 37), its findings on the running web app, each driven over HTTP on 127.0.0.1 as a
voter, an outsider or a fault would. Each test failed before its fix; the docstrings give the reviewer's figures."""

from __future__ import annotations

import json
import logging
import threading
import time

import httpx
import pytest

from support.arena import build_small_arena
from support.webapp import Page, gradio_app, running_app

TOKEN = "token-for-the-tests-1"


def _concurrently(calls) -> list:
    """Run the callables at once on threads (started together); their results in order."""
    results = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i, call):
        start.wait()
        try:
            results[i] = call()
        except Exception as error:  # noqa: BLE001 - the test reads what each call met
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return results


@pytest.fixture(scope="module")
def plain_app(tmp_path_factory):
    """One app with the default settings for the tests below that sign in under their own names and record no
    vote."""
    arena = build_small_arena(tmp_path_factory.mktemp("plain"))
    with running_app(arena.settings) as url:
        yield arena, url
    arena.db.close()


def _sign_in(page: Page, name: str, token: str = TOKEN):
    ok, outputs = page.queued("sign_in", [name, token, None, "All suites", False])
    assert ok, outputs
    return outputs


# --- finding 15: HEAD / ----------------------------------------------------------------------------------------------


def test_head_reports_the_length_get_sends(plain_app):
    """Before: HEAD / reported a Content-Length 987 bytes shorter than GET / sent (the early script is added to GET
    only)."""
    _, url = plain_app
    with httpx.Client(timeout=30) as http:
        got, head = http.get(url), http.head(url)
    assert got.status_code == head.status_code == 200
    assert int(head.headers["content-length"]) == len(got.content) == int(got.headers["content-length"])
    assert head.content == b""
