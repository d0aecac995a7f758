"""Judge retries honour the server's wait (issue 19): ``retry-after-ms`` (OpenAI), ``retry-after`` in seconds or as an
HTTP date, and the engine never waits past ``retry_max_s``."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest

from core.openai_http import retry_after, retry_delay

NOW = datetime(2026, 11, 24, 2, 0, 0, tzinfo=UTC)


class Failed(Exception):
    """An error as the openai client raises it: with the HTTP response."""

    def __init__(self, headers: dict):
        super().__init__("429")
        self.response = httpx.Response(429, headers=headers)


class Fixed(random.Random):
    def random(self):
        return 0.0


@pytest.mark.parametrize("headers,seconds", [
    ({"retry-after": "7"}, 7.0),
    ({"retry-after": "0.25"}, 0.25),
    ({"retry-after-ms": "1500"}, 1.5),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),  # the precise one first, as the OpenAI client does
    ({"retry-after": format_datetime(datetime(2026, 11, 24, 2, 0, 12, tzinfo=UTC), usegmt=True)}, 12.0),
    ({"retry-after": "Tue, 24 Nov 2026 01:59:00 GMT"}, 0.0),  # a date already past: no wait asked
    ({"retry-after-ms": "soon", "retry-after": "3"}, 3.0),  # an unreadable header is skipped
    ({"retry-after": "next week"}, None),
    ({"retry-after": "-5"}, None),
    ({"retry-after": "nan"}, None),
    ({}, None),
])
def test_the_servers_wait_is_read_from_every_header_form(headers, seconds):
    assert retry_after(Failed(headers), now=NOW.timestamp()) == (None if seconds is None else pytest.approx(seconds))


def test_an_error_without_a_response_asks_no_wait():
    assert retry_after(ValueError("connection reset")) is None


def test_the_wait_is_capped_at_retry_max_s():
    huge = retry_after(Failed({"retry-after": "Fri, 01 Jan 2100 00:00:00 GMT"}), now=NOW.timestamp())
    assert huge > 1e9
    assert retry_delay(1, 1.0, 30.0, Fixed(0), huge) == 30.0
    assert retry_delay(1, 1.0, 30.0, Fixed(0), retry_after(Failed({"retry-after-ms": "2500"}))) == 2.5
