"""The judge engine: async chat-completion requests with a concurrency limit, retries and the persistent cache.

Every judge asks its questions through :meth:`Engine.ask`, which

1. answers from the cache (:mod:`datamodel.judge_requests`) when the same request (endpoint, model, prompt text,
image hashes,
   parameters) was answered before, and shares one request between identical questions asked at the same time;
2. otherwise waits for one of ``concurrency`` slots and sends it to ``/chat/completions`` with the ``openai``
   client (``AsyncOpenAI``, any OpenAI-compatible ``base_url``; its own retries off), retrying 429s, 408/409s, 5xx,
   timeouts and lost connections up to ``max_retries`` times with exponential backoff and jitter
   (:func:`retry_delay`: before retry n = 1, 2, ... wait min(``retry_max_s``, ``retry_base_s`` · 2^(n−1)) · u with
   u uniform in [0.5, 1) from the engine's ``rng``; a longer wait asked by the server (``retry-after-ms``, or
   ``retry-after`` in seconds or as an HTTP date) is honoured up to ``retry_max_s``; this policy and the key lookup
   are :mod:`core.openai_http`, shared with the image API generator);
3. stores the answer with its token usage and estimated cost in the same step it returns it, so an answer is never
   paid for twice, even after a crash.

A request that still fails comes back as a :class:`Reply` with status ``error`` and the reason; it is not cached and
the caller records a failed judgment. :meth:`Engine.stop` (Ctrl-C) lets requests in flight finish and be stored, and
answers everything not yet sent with status ``stopped``. In dry-run mode nothing is sent: uncached requests are
counted with an estimated cost.

The API key comes from ``OPENAI_API_KEY`` in the environment, is handed to the client and to nothing else, and is
blanked out of every error message.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping

from datamodel import judge_requests as cache
from core.openai_http import (
    LOCAL_KEY_PLACEHOLDER,
    RETRY_MAX_S,
    RETRY_STATUS,
    MissingAPIKey,
    api_key,
    retry_after,
    retry_delay,
    retryable,
)
from datamodel.database import Database
from judges.pricing import Prices, estimate_cost
from judges.request import ChatRequest, normalize_endpoint

log = logging.getLogger(__name__)

__all__ = ["Engine", "EngineConfig", "JudgeConfigError", "Reply", "resolve_api_key", "retry_delay",
           "LOCAL_KEY_PLACEHOLDER", "RETRY_MAX_S", "RETRY_STATUS"]


class JudgeConfigError(ValueError):
    """The judge cannot start; the message says what to set."""


@dataclass(frozen=True)
class EngineConfig:
    base_url: str = ""
    model: str = "gpt-4o-mini"
    concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 5
    retry_base_s: float = 1.0
    retry_max_s: float = RETRY_MAX_S
    image_detail: str = "high"
    prices: Prices = Prices()

    @property
    def endpoint(self) -> str:
        return normalize_endpoint(self.base_url)

    @classmethod
    def from_settings(cls, settings, **overrides) -> "EngineConfig":
        """The engine configuration of :class:`core.settings.Settings`; ``None`` overrides are ignored."""
        values = dict(
            base_url=settings.judge_base_url, model=settings.judge_model, concurrency=settings.judge_concurrency,
            timeout_s=settings.judge_timeout_s, max_retries=settings.judge_max_retries,
            retry_base_s=settings.judge_retry_base_s, image_detail=settings.judge_image_detail,
            prices=Prices(settings.judge_price_input_per_mtok, settings.judge_price_output_per_mtok),
        )
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def resolve_api_key(env: Mapping[str, str], base_url: str) -> str:
    """``OPENAI_API_KEY``; a placeholder for a local endpoint that needs none; an error for api.openai.com."""
    try:
        return api_key(env, base_url, base_url_variable="ARENA_JUDGE_BASE_URL", what="the judges")
    except MissingAPIKey as error:
        raise JudgeConfigError(str(error)) from None


@dataclass(frozen=True)
class Reply:
    status: str  # ok | error | stopped | dry_run
    key: str
    text: str = ""
    refusal: str = ""
    finish_reason: str = ""
    reason: str = ""  # why it is not ok
    cached: bool = False
    attempts: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class EngineStats:
    sent: int = 0          # requests answered by the API in this run
    cached: int = 0        # answered from the cache (or by an identical request in flight)
    failed: int = 0        # requests that failed after the last retry
    retries: int = 0
    stopped: int = 0       # not sent because the run was stopped
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    planned: int = 0        # dry run: requests that would be sent
    planned_cost_usd: float = 0.0


class Engine:
    """Sends :class:`ChatRequest` values; one per judge run (use ``async with``).

    ``rng`` draws the backoff jitter; ``wait(seconds)`` waits before a retry and returns True when the run was
    stopped meanwhile (default: sleep until the delay passes or :meth:`stop` is called). Tests pass both.
    """

    def __init__(
        self, db: Database, config: EngineConfig, *, env: Mapping[str, str] | None = None,
        rng: random.Random | None = None, dry_run: bool = False, client: Any = None,
        wait: Callable[[float], Awaitable[bool]] | None = None,
    ):
        self.db = db
        self.config = config
        self.dry_run = dry_run
        self.stats = EngineStats()
        self._env = os.environ if env is None else env
        self._rng = rng or random.Random(0)
        self._client = client
        self._secret = ""
        self._semaphore = asyncio.Semaphore(config.concurrency)
        self._inflight: dict[str, asyncio.Future] = {}
        self._planned: set[str] = set()
        self._stop = asyncio.Event()
        self._wait = wait or self._wait_or_stop
        if not dry_run and client is None:
            self._secret = resolve_api_key(self._env, config.base_url)  # fail before any work, with the fix

    async def __aenter__(self) -> "Engine":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None and self._secret:
            await self._client.close()
        self._client = None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        """Send nothing new; requests in flight finish and are stored."""
        self._stop.set()

    async def _wait_or_stop(self, seconds: float) -> bool:
        """Sleep ``seconds``; True (at once) if the run is stopped meanwhile."""
        try:
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            return False
        return True

    def redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret and len(self._secret) > 3 else text

    def _get_client(self):
        if self._client is None:
            import openai  # on first use: the library takes about 0.4 s to import, and most commands never call it

            self._client = openai.AsyncOpenAI(
                api_key=self._secret, base_url=self.config.base_url or None, max_retries=0,
                timeout=self.config.timeout_s,
            )
        return self._client

    def expect(self, request: ChatRequest) -> None:
        """Dry run: count a request a later step would send (its exact inputs are not known without answers)."""
        if self.dry_run:
            self.stats.planned += 1
            self.stats.planned_cost_usd += estimate_cost(request, self.config.model, self.config.prices)

    def key(self, request: ChatRequest) -> str:
        return request.cache_key(self.config.endpoint, self.config.model)

    async def ask(self, request: ChatRequest) -> Reply:
        key = self.key(request)
        hit = cache.get(self.db, key)
        if hit is not None:
            self.stats.cached += 1
            return Reply("ok", key, hit.reply, hit.refusal, hit.finish_reason, cached=True,
                         prompt_tokens=hit.prompt_tokens, completion_tokens=hit.completion_tokens, cost_usd=0.0)
        if self.dry_run:
            if key not in self._planned:
                self._planned.add(key)
                self.stats.planned += 1
                self.stats.planned_cost_usd += estimate_cost(request, self.config.model, self.config.prices)
            return Reply("dry_run", key, reason="dry run: not sent")
        shared = self._inflight.get(key)
        if shared is not None:
            reply = await asyncio.shield(shared)
            if reply.ok:
                self.stats.cached += 1
                return Reply(**{**reply.__dict__, "cached": True, "cost_usd": 0.0})
            return reply
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            reply = await self._send(key, request)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when nobody shares it
            raise
        finally:
            self._inflight.pop(key, None)
        future.set_result(reply)
        return reply

    async def _send(self, key: str, request: ChatRequest) -> Reply:
        import httpx2  # here, not at the top: importing openai takes about 0.4 s that commands without requests skip
        import openai

        if self.stopping:
            self.stats.stopped += 1
            return Reply("stopped", key, reason="run stopped before this request was sent")
        async with self._semaphore:
            if self.stopping:
                self.stats.stopped += 1
                return Reply("stopped", key, reason="run stopped before this request was sent")
            try:
                messages = request.openai_messages()
            except OSError as error:
                self.stats.failed += 1
                return Reply("error", key, reason=f"cannot read an image: {error}")
            attempt = 0
            while True:
                attempt += 1
                started = time.monotonic()
                try:
                    # The chat-completions endpoint through the client's documented generic ``post``: the same
                    # auth, errors, status checks and timeout as ``chat.completions.create``, without its walk of
                    # the typed parameters and of the typed reply, which cost a few ms of CPU per request and
                    # bounded throughput at 32 requests in flight (see python -m tools.judges_bench).
                    response = await self._get_client().post(
                        "/chat/completions", cast_to=httpx2.Response,
                        body={"model": self.config.model, "messages": messages, **request.params()},
                    )
                    break
                except openai.OpenAIError as error:
                    reason = self.redact(f"{type(error).__name__}: {error}")
                    if not retryable(error) or attempt > self.config.max_retries:
                        self.stats.failed += 1
                        tries = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
                        log.warning("judge request %s failed %s: %s", key[:12], tries, reason)
                        return Reply("error", key, reason=f"API error {tries}: {reason}", attempts=attempt)
                    delay = retry_delay(attempt, self.config.retry_base_s, self.config.retry_max_s, self._rng,
                                        retry_after(error))
                    self.stats.retries += 1
                    log.info("judge request %s: %s; retry %d in %.2fs", key[:12], reason, attempt, delay)
                    if not await self._wait(delay):
                        continue
                    self.stats.stopped += 1
                    return Reply("stopped", key, reason=f"run stopped while waiting to retry ({reason})")
            latency = time.monotonic() - started
        return self._store(key, request, response, latency, attempt)

    def _store(self, key: str, request: ChatRequest, response: Any, latency: float, attempts: int) -> Reply:
        try:
            text, refusal, finish_reason, usage = read_completion(response.json())
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
            self.stats.failed += 1
            return Reply("error", key, reason=f"the API's answer is not a chat completion ({error})",
                         attempts=attempts)
        prompt_tokens, completion_tokens, total_tokens = usage
        cost = self.config.prices.cost(prompt_tokens, completion_tokens) if prompt_tokens is not None else None
        cache.put(
            self.db, key, endpoint=self.config.endpoint, model=self.config.model, request=request.describe(),
            reply=text, refusal=refusal, finish_reason=finish_reason, prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens, total_tokens=total_tokens, cost_usd=cost, latency_s=latency,
            attempts=attempts,
        )
        self.stats.sent += 1
        self.stats.prompt_tokens += prompt_tokens or 0
        self.stats.completion_tokens += completion_tokens or 0
        self.stats.cost_usd += cost or 0.0
        return Reply("ok", key, text, refusal, finish_reason, attempts=attempts, prompt_tokens=prompt_tokens,
                     completion_tokens=completion_tokens, cost_usd=cost)


def read_completion(data: dict) -> tuple[str, str, str, tuple[int | None, int | None, int | None]]:
    """(text, refusal, finish reason, (prompt, completion, total tokens)) of a chat-completion JSON body."""
    choices = data.get("choices")
    if not choices:
        raise ValueError("no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    usage = data.get("usage") or {}
    return (message.get("content") or "", message.get("refusal") or "", choice.get("finish_reason") or "",
            (usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")))
