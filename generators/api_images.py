"""API image models: a generator that asks an OpenAI-compatible ``/images/generations`` endpoint (DALL-E 3,
gpt-image-1, or any server that speaks the same protocol) for each image.

A registry model of kind ``api`` (:mod:`generators.registry`) becomes an :class:`ImageAPIGenerator`; the runner
drives it like a diffusers pipeline (:func:`generators.runner.run`: plan, skip what exists, store), so its images are
stored, listed, judged and scored like any generated image. One request per image::

    POST {base_url}/images/generations
    {"model": api_model, "prompt": prompt_template.format(prompt=...), "n": 1, "size": "<width>x<height>",
     **call_kwargs}                      # quality, style, response_format, ... (DALL-E 3: standard, vivid)

The answer's ``data[0]`` carries the image as ``b64_json`` or as a ``url`` (fetched at once: OpenAI's URLs expire
after an hour) and, for DALL-E 3, the ``revised_prompt`` the API drew instead of the prompt it was sent, which is
recorded with the image (``images.params.revised_prompt``).

It behaves as the judges' engine does (:mod:`judges.client`, sharing :mod:`core.openai_http`):

- **key**: ``OPENAI_API_KEY``, checked before any work (a clear error without it; a local ``base_url`` needs none),
  handed to the client only and blanked out of every error message;
- **concurrency**: at most ``concurrency`` requests in flight (the runner hands it batches of that size);
- **retries**: 429, 408, 409, 5xx, timeouts and lost connections are retried up to ``max_retries`` times with
  exponential backoff and jitter, honouring the server's Retry-After; other errors (a refused prompt, a bad size)
  are not, and that image is reported as failed and left for a later run;
- **resume and cost**: each image is written to the media folder and recorded in ``image_requests`` (with its price,
  ``price_usd`` of the model, or the token usage the API reports) the moment it arrives, keyed by (endpoint, request
  body, the image's generation seed): a run killed half-way, started again, pays for nothing twice, and the seed keeps
  the four generations of one prompt apart.

The API takes no seed: ``seed`` only names which generation an image is; two runs make different pictures.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.openai_http import RETRY_MAX_S, api_key, retry_after, retry_delay, retryable
from datamodel import image_requests as cache
from datamodel.database import Database
from datamodel.media import MediaError, MediaStore
from generators.registry import ModelSpec

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ImageAPIConfig:
    """Where and how the image requests go (the ``image_api_*`` settings)."""

    base_url: str = ""
    concurrency: int = 4
    timeout_s: float = 180.0
    max_retries: int = 5
    retry_base_s: float = 2.0
    retry_max_s: float = RETRY_MAX_S

    @property
    def endpoint(self) -> str:
        return (self.base_url or DEFAULT_ENDPOINT).strip().rstrip("/")

    @classmethod
    def from_settings(cls, settings, **overrides) -> ImageAPIConfig:
        values = dict(base_url=settings.image_api_base_url, concurrency=settings.image_api_concurrency,
                      timeout_s=settings.image_api_timeout_s, max_retries=settings.image_api_max_retries,
                      retry_base_s=settings.image_api_retry_base_s)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


def check_keys(specs, config: ImageAPIConfig, env: Mapping[str, str] | None = None) -> None:
    """Before a run writes anything: the key the API models of ``specs`` need (:class:`MissingAPIKey` if absent)."""
    env = os.environ if env is None else env
    for spec in specs:
        if spec.kind == "api":
            api_key(env, config.base_url, base_url_variable="ARENA_IMAGE_API_BASE_URL",
                    what=f"the image model {spec.name}")


@dataclass
class ImageAPIStats:
    sent: int = 0  # images the API answered in this run
    cached: int = 0  # images found in image_requests (paid for by an earlier run)
    failed: int = 0  # requests that failed after the last retry, or were refused
    retries: int = 0
    cost_usd: float = 0.0  # of the images sent in this run
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"image API: {self.sent} images made (${self.cost_usd:.3f}), {self.cached} from the cache of "
                f"earlier runs, {self.failed} failed, {self.retries} retries")


@dataclass(frozen=True)
class GeneratedImage:
    """An image already in the media folder, with what to record beside the generator's parameters."""

    stored: Any  # datamodel.media.StoredImage
    params: dict


class ImageAPIGenerator:
    """A registry model of kind ``api`` as a :class:`generators.pipelines.Generator` (see the module docstring).

    ``client`` (tests), ``rng`` (backoff jitter) and ``wait`` (the pause before a retry) may be passed in.
    """

    def __init__(self, spec: ModelSpec, config: ImageAPIConfig, *, db: Database, media: MediaStore,
                 env: Mapping[str, str] | None = None, client: Any = None, rng: random.Random | None = None,
                 wait: Callable[[float], Awaitable[None]] | None = None):
        self.spec = spec
        self.name = spec.name
        self.config = config
        self.db = db
        self.media = media
        self.stats = ImageAPIStats()
        self.batch_size = config.concurrency  # the runner's batches: one request per slot
        self._client = client
        self._rng = rng or random.Random(0)
        self._wait = wait or asyncio.sleep
        env = os.environ if env is None else env
        self._secret = "" if client is not None else api_key(
            env, config.base_url, base_url_variable="ARENA_IMAGE_API_BASE_URL", what=f"the image model {spec.name}")
        width, height = spec.resolution
        self.params = {"api": config.endpoint, "api_model": spec.api_model, "size": f"{width}x{height}",
                       "prompt_template": spec.prompt_template, **spec.call_kwargs}

    def body(self, prompt: str) -> dict:
        """The request body for one image of ``prompt``."""
        width, height = self.spec.resolution
        return {"model": self.spec.api_model, "prompt": self.spec.prompt_template.format(prompt=prompt), "n": 1,
                "size": f"{width}x{height}", **self.spec.call_kwargs}

    def key(self, body: dict, seed: int) -> str:
        """SHA-256 of (endpoint, request body, generation seed): the cache key of one image."""
        payload = {"endpoint": self.config.endpoint, "body": body, "generation": int(seed)}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def redact(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret and len(self._secret) > 3 else text

    def generate(self, prompts: list[str], seeds: list[int],
                 negative_prompts: list[str] | None = None) -> list[GeneratedImage | None]:
        """One image per (prompt, seed), None for a request that failed (its reason is in ``stats.errors``)."""
        if len(prompts) != len(seeds):
            raise ValueError(f"generate needs one seed per prompt, got {len(prompts)} prompts and {len(seeds)} seeds.")
        return asyncio.run(self._generate_all(prompts, seeds))

    async def _generate_all(self, prompts: list[str], seeds: list[int]) -> list[GeneratedImage | None]:
        semaphore = asyncio.Semaphore(self.config.concurrency)
        try:
            return list(await asyncio.gather(*(self._one(semaphore, p, s) for p, s in zip(prompts, seeds))))
        finally:
            if self._secret and self._client is not None:  # our own client: closed with this event loop
                await self._client.close()
                self._client = None

    def _get_client(self):
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(api_key=self._secret, base_url=self.config.base_url or None,
                                              max_retries=0, timeout=self.config.timeout_s)
        return self._client

    async def _one(self, semaphore: asyncio.Semaphore, prompt: str, seed: int) -> GeneratedImage | None:
        body = self.body(prompt)
        key = self.key(body, seed)
        hit = cache.get(self.db, key)
        if hit is not None:
            self.stats.cached += 1
            return GeneratedImage(hit.stored, {"revised_prompt": hit.revised_prompt, "request_key": key})
        async with semaphore:
            started = time.monotonic()
            reply, attempts = await self._send(body)
            if reply is None:
                return None
            try:
                data, usage = reply["data"][0], reply.get("usage") or {}
                raw = await self._image_bytes(data)
                stored = self.media.put(raw, source=f"{self.name} image for {prompt[:60]!r}")
            except (KeyError, IndexError, TypeError, ValueError, MediaError) as error:
                self._failed(f"{self.name}: the API's answer holds no readable image ({error}).")
                return None
            latency = time.monotonic() - started
        revised = str(data.get("revised_prompt") or "")
        cost = self.spec.price_usd
        cache.put(self.db, key, endpoint=self.config.endpoint, model=self.spec.api_model, request=body, stored=stored,
                  revised_prompt=revised, usage=usage, cost_usd=cost, latency_s=latency, attempts=attempts)
        self.stats.sent += 1
        self.stats.cost_usd += cost or 0.0
        return GeneratedImage(stored, {"revised_prompt": revised, "request_key": key})

    def _failed(self, reason: str) -> None:
        self.stats.failed += 1
        self.stats.errors.append(self.redact(reason))
        log.warning("%s", self.redact(reason))

    async def _send(self, body: dict) -> tuple[dict | None, int]:
        import httpx2
        import openai

        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._get_client().post("/images/generations", cast_to=httpx2.Response, body=body)
                return response.json(), attempt
            except openai.OpenAIError as error:
                reason = self.redact(f"{type(error).__name__}: {error}")
                if not retryable(error) or attempt > self.config.max_retries:
                    tries = f"after {attempt} attempt{'s' if attempt > 1 else ''}"
                    self._failed(f"{self.name}: image request failed {tries}: {reason}")
                    return None, attempt
                delay = retry_delay(attempt, self.config.retry_base_s, self.config.retry_max_s, self._rng,
                                    retry_after(error))
                self.stats.retries += 1
                log.info("%s: %s; retry %d in %.2fs", self.name, reason, attempt, delay)
                await self._wait(delay)
            except ValueError as error:  # the body is not JSON
                self._failed(f"{self.name}: the API's answer is not JSON ({error}).")
                return None, attempt

    async def _image_bytes(self, data: dict) -> bytes:
        if data.get("b64_json"):
            return base64.b64decode(data["b64_json"], validate=True)
        url = data.get("url")
        if not url:
            raise ValueError("neither b64_json nor url")
        import httpx2

        try:
            async with httpx2.AsyncClient(timeout=self.config.timeout_s, follow_redirects=True) as http:
                response = await http.get(url)
                response.raise_for_status()
                return response.content
        except httpx2.HTTPError as error:
            raise ValueError(f"its url could not be fetched: {error}") from None
