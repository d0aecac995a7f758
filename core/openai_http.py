"""What every request to an OpenAI-compatible API shares: the API key, which failures are retried, and how long to
wait before the next try.

Two callers send such requests, the judges (:mod:`judges.client`, chat completions) and the image API generator
(:mod:`generators.api_images`, ``/images/generations``); the judges sit above the generators, so the common part
lives here, where both can import it.

- :func:`api_key`: ``OPENAI_API_KEY`` from the environment; a placeholder for a local endpoint (a vLLM, the test
  server), which accepts any key; without either, an error that says what to export or which setting to set.
- :func:`retryable`: 429, 408, 409, every 5xx, timeouts and lost connections are tried again; other errors (a bad
  request, a refused key, a content-policy refusal) are not.
- :func:`retry_delay`: before retry n = 1, 2, ... wait min(max_s, base_s · 2^(n−1)) · u, u uniform in [0.5, 1)
  (exponential backoff with jitter), or longer when the server asks for it (:func:`retry_after`), never more than
  ``max_s``.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import random
import time
from collections.abc import Mapping

RETRY_STATUS = (408, 409, 429)
RETRY_MAX_S = 60.0
LOCAL_KEY_PLACEHOLDER = "not-needed"  # OpenAI-compatible local servers accept any key


class MissingAPIKey(ValueError):
    """No API key for api.openai.com; the message says what to export or set."""


def api_key(env: Mapping[str, str], base_url: str, *, base_url_variable: str, what: str) -> str:
    """``OPENAI_API_KEY``; a placeholder for a local endpoint (``base_url`` set) that needs none; else
    :class:`MissingAPIKey` naming the variable to export and ``base_url_variable``, the setting of ``what``'s
    endpoint."""
    key = env.get("OPENAI_API_KEY", "").strip()
    if key:
        return key
    if base_url:
        return LOCAL_KEY_PLACEHOLDER
    raise MissingAPIKey(
        f"OPENAI_API_KEY is not set. Export it (export OPENAI_API_KEY=...) to use api.openai.com for {what}, "
        f"or set {base_url_variable} to an OpenAI-compatible server (e.g. a local vLLM)."
    )


def _seconds(value: str | None, scale: float = 1.0) -> float | None:
    try:
        seconds = float(value) * scale if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def retry_after(error: Exception, *, now: float | None = None) -> float | None:
    """The wait in seconds the server asked for in the error's response, or None: ``retry-after-ms`` (milliseconds,
    sent by the OpenAI API), else ``retry-after`` as seconds or as an HTTP date (RFC 9110 §10.2.3; a date already
    past asks for 0). Unreadable, negative or non-finite values are ignored; :func:`retry_delay` caps the wait."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    from_ms = _seconds(headers.get("retry-after-ms"), 0.001)
    if from_ms is not None:
        return from_ms
    value = headers.get("retry-after")
    seconds = _seconds(value)
    if seconds is not None or value is None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_delay(attempt: int, base_s: float, max_s: float, rng: random.Random,
                retry_after: float | None = None) -> float:
    """Seconds to wait before retry ``attempt`` (1: the first retry):
    min(max_s, base_s · 2^(attempt−1)) · u with u = 0.5 + 0.5 · rng.random() in [0.5, 1), or ``retry_after`` (the
    server's Retry-After) when that is longer, never more than ``max_s``."""
    delay = min(max_s, base_s * 2 ** (attempt - 1)) * (0.5 + 0.5 * rng.random())
    if retry_after is not None:
        delay = min(max_s, max(delay, retry_after))
    return delay


def retryable(error: Exception) -> bool:
    """Whether an ``openai`` client error is worth another try (see the module docstring)."""
    import openai

    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    status = getattr(error, "status_code", None)
    return isinstance(error, openai.APIStatusError) and (status in RETRY_STATUS or (status or 0) >= 500)
