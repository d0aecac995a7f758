"""A local OpenAI-compatible server that answers from a script (tests and the benchmark): chat completions (the
judges), image generations (the API image models) and moderations (the open prompts' moderation model: by default
an input holding ``[flag:CATEGORY]`` is flagged in that category, :func:`keyword_moderation`).

:class:`FakeServer` runs FastAPI + uvicorn on 127.0.0.1 in a thread and records every request it receives
(:class:`Received`: the JSON body, a digest of it, when, and which endpoint). A *responder* decides each chat answer
from the body and how often the same body was received before: :class:`Scripted` gives the text, an HTTP status
(429, 500, ...), a delay (slow replies), a refusal or a finish reason. An *image responder* does the same for
``POST /images/generations`` (:class:`ScriptedImage`); by default every request gets a PNG of the requested size
drawn from the prompt (:func:`drawn_image`: the same prompt, the same picture; another generation of it, another
shade), as ``b64_json``, or as a ``url`` served by the server itself (``GET /files/<name>.png``) when the body asks
for ``response_format: url``, with a ``revised_prompt`` as DALL-E 3 sends one (the prompt with a sentence of detail
added, or the prompt as given behind the no-revision prefix). ``python -m tools.fake_openai`` serves the benchmark's
responders in a process of its own and prints its base URL; ``GET /stats`` counts requests and repeats,
``POST /reset`` forgets them.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import io
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

from generators.registry import NO_REVISION_PREFIX

_DATA_URL = re.compile(r"^data:(image/(?:png|jpeg|webp));base64,([A-Za-z0-9+/=]+)$")


@dataclass(frozen=True)
class Scripted:
    content: str = ""
    status: int = 200
    delay: float = 0.0
    refusal: str | None = None
    finish_reason: str = "stop"
    headers: dict = field(default_factory=dict)
    prompt_tokens: int = 100
    completion_tokens: int = 10
    raw_body: dict | None = None  # sent as is instead of a chat completion (a broken server)


@dataclass(frozen=True)
class ScriptedImage:
    """The answer to one image request: a drawn PNG (status 200), or an error status with its message."""

    status: int = 200
    delay: float = 0.0
    error: str = ""
    headers: dict = field(default_factory=dict)
    revised_prompt: str | None = None  # None: the fake's own revision (:func:`revise`)
    as_url: bool | None = None  # None: as the body's response_format asks (b64_json unless "url")
    raw_body: dict | None = None  # sent as is instead of an images response (a broken server)


@dataclass(frozen=True)
class ScriptedModeration:
    """The answer to one moderation request: flagged or not, with the categories flagged, or an error status."""

    flagged: bool = False
    categories: tuple[str, ...] = ()
    status: int = 200
    delay: float = 0.0
    error: str = ""
    headers: dict = field(default_factory=dict)
    raw_body: dict | None = None


MODERATION_CATEGORIES = ("harassment", "hate", "illicit", "self-harm", "sexual", "sexual/minors", "violence",
                         "violence/graphic")


def keyword_moderation(received: Received) -> ScriptedModeration:
    """The default moderation answer: an input holding ``[flag:CATEGORY]`` is flagged in CATEGORY, any other passes."""
    text = str(received.body.get("input", ""))
    named = tuple(sorted(set(re.findall(r"\[flag:([a-z/-]+)\]", text))))
    return ScriptedModeration(flagged=bool(named), categories=named)


@dataclass(frozen=True)
class Received:
    body: dict
    digest: str
    at: float
    attempt: int  # how many times this exact body was received before (0: first time)
    headers: dict = field(default_factory=dict, repr=False)
    endpoint: str = "chat"  # chat | images | moderations

    @property
    def texts(self) -> list[str]:
        return [part["text"] for message in self.body.get("messages", []) for part in _parts(message)
                if part.get("type") == "text"]

    @property
    def text(self) -> str:
        return "".join(self.texts)

    @property
    def image_urls(self) -> list[str]:
        return [part["image_url"]["url"] for message in self.body.get("messages", []) for part in _parts(message)
                if part.get("type") == "image_url"]

    @property
    def image_details(self) -> list[str]:
        return [part["image_url"].get("detail") for message in self.body.get("messages", [])
                for part in _parts(message) if part.get("type") == "image_url"]

    def images(self) -> list[bytes]:
        """The images as bytes, in order (raises ValueError when a URL is not a base64 image data URL)."""
        return [decode_data_url(url) for url in self.image_urls]

    def image_hashes(self) -> list[str]:
        return [hashlib.sha256(data).hexdigest() for data in self.images()]


def _parts(message: dict) -> list[dict]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def decode_data_url(url: str) -> bytes:
    match = _DATA_URL.match(url)
    if not match:
        raise ValueError(f"not a base64 image data URL: {url[:40]!r}")
    return base64.b64decode(match.group(2), validate=True)


Responder = Callable[[Received], Scripted]
ImageResponder = Callable[[Received], ScriptedImage]
ModerationResponder = Callable[[Received], ScriptedModeration]

def revise(prompt: str) -> str:
    """The fake's DALL-E 3 revision: the prompt behind the no-revision prefix as given, any other with a sentence of
    detail added (the real API rewrites it at length)."""
    if prompt.startswith(NO_REVISION_PREFIX):
        return prompt[len(NO_REVISION_PREFIX):].strip()
    return f"{prompt.rstrip('.')}. A detailed, photorealistic picture."


def fake_png(prompt: str, size: str, shade: int = 0) -> bytes:
    """A PNG of ``size`` ("WxH") drawn from the prompt: a background colour and a square from its hash, lighter for
    each further ``shade`` (another generation of the same prompt)."""
    from PIL import Image, ImageDraw

    try:
        width, height = (int(side) for side in size.lower().split("x"))
    except ValueError:
        raise ValueError(f"size {size!r} is not WIDTHxHEIGHT") from None
    digest = hashlib.sha256(prompt.encode()).digest()
    background = tuple(min(255, value + 24 * shade) for value in digest[:3])
    image = Image.new("RGB", (width, height), background)
    box = [width // 4, height // 4, 3 * width // 4, 3 * height // 4]
    ImageDraw.Draw(image).rectangle(box, fill=tuple(digest[3:6]))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def drawn_image(received: Received) -> ScriptedImage:
    """The default image responder: every request gets its picture."""
    return ScriptedImage()


def completion_json(model: str, reply: Scripted) -> dict:
    return {
        "id": f"chatcmpl-{int(time.time() * 1e6)}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": reply.finish_reason, "logprobs": None,
                     "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal}}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }


def build_app(responder: Responder, log: list[Received], lock: threading.Lock, *, latency: float = 0.0,
              image_responder: ImageResponder = drawn_image, base_url: Callable[[], str] = lambda: "",
              moderation_responder: ModerationResponder = keyword_moderation):
    app = FastAPI()
    counts: dict[str, int] = {}
    files: dict[str, bytes] = {}

    async def receive(request: Request, endpoint: str) -> Received | Response:
        try:
            raw = await request.body()
        except ClientDisconnect:  # the client died while sending (the benchmark's SIGKILL)
            return Response(status_code=499)
        body = json.loads(raw)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            attempt = counts.get(digest, 0)
            counts[digest] = attempt + 1
            received = Received(body, digest, time.time(), attempt, dict(request.headers), endpoint)
            log.append(received)
        return received

    def error(status: int, message: str, headers: dict) -> JSONResponse:
        return JSONResponse({"error": {"message": message or f"scripted {status}", "type": "scripted", "code": None,
                                       "param": None}}, status_code=status, headers=headers)

    async def answer(request: Request, endpoint: str, respond: Callable, message: Callable, success: Callable):
        """Record the request, let ``respond`` script the reply, wait its delay, then send the scripted error
        (``message(reply)`` its text) or ``success(body, reply)``."""
        received = await receive(request, endpoint)
        if isinstance(received, Response):
            return received
        reply = respond(received)
        delay = latency + reply.delay
        if delay:
            await asyncio.sleep(delay)
        if reply.status != 200:
            return error(reply.status, message(reply), reply.headers)
        if reply.raw_body is not None:
            return JSONResponse(reply.raw_body, headers=reply.headers)
        return success(received.body, reply)

    async def chat(request: Request):
        return await answer(request, "chat", responder, lambda reply: reply.content,
                            lambda body, reply: JSONResponse(completion_json(body.get("model", ""), reply),
                                                             headers=reply.headers))

    async def images(request: Request):
        return await answer(request, "images", image_responder, lambda reply: reply.error, drawn)

    async def moderations(request: Request):
        return await answer(request, "moderations", moderation_responder, lambda reply: reply.error, moderated)

    def moderated(body: dict, reply: ScriptedModeration) -> Response:
        """OpenAI's moderation answer: one result per input, every category named with a flag and a score."""
        inputs = body.get("input", "")
        results = []
        for _ in inputs if isinstance(inputs, list) else [inputs]:
            flags = {name: name in reply.categories for name in (*MODERATION_CATEGORIES, *reply.categories)}
            results.append({"flagged": reply.flagged, "categories": flags,
                            "category_scores": {name: 0.99 if flag else 0.001 for name, flag in flags.items()}})
        return JSONResponse({"id": f"modr-{int(time.time() * 1000)}", "model": body.get("model", ""),
                             "results": results}, headers=reply.headers)

    def drawn(body: dict, reply: ScriptedImage) -> Response:
        prompt, model = str(body.get("prompt", "")), str(body.get("model", ""))
        with lock:  # each request for the same prompt is another generation: another shade
            shade = sum(1 for r in log if r.endpoint == "images" and r.body.get("prompt") == prompt) - 1
        try:
            png = fake_png(prompt, str(body.get("size", "1024x1024")), shade)
        except ValueError as problem:
            return error(400, f"Invalid size: {problem}", {})
        as_url = reply.as_url if reply.as_url is not None else body.get("response_format") == "url"
        item: dict = {}
        if as_url:
            name = f"{hashlib.sha256(png).hexdigest()}.png"
            with lock:
                files[name] = png
            item["url"] = f"{base_url()}/files/{name}"
        else:
            item["b64_json"] = base64.b64encode(png).decode("ascii")
        if model.startswith("dall-e-3"):
            item["revised_prompt"] = reply.revised_prompt if reply.revised_prompt is not None else revise(prompt)
        generated: dict = {"created": int(time.time()), "data": [item]}
        if model.startswith("gpt-image"):
            generated["usage"] = {"input_tokens": len(prompt.split()), "output_tokens": 272, "total_tokens":
                                  len(prompt.split()) + 272}
        return JSONResponse(generated, headers=reply.headers)

    async def file(name: str):
        with lock:
            data = files.get(name)
        return Response(data, media_type="image/png") if data is not None else Response(status_code=404)

    app.post("/v1/chat/completions")(chat)
    app.post("/chat/completions")(chat)
    app.post("/v1/images/generations")(images)
    app.post("/images/generations")(images)
    app.post("/v1/moderations")(moderations)
    app.post("/moderations")(moderations)
    app.get("/v1/files/{name}")(file)

    @app.get("/stats")
    async def stats():
        with lock:
            return {"requests": len(log), "distinct": len(counts), "repeated": len(log) - len(counts)}

    @app.post("/reset")
    async def reset():
        with lock:
            log.clear()
            counts.clear()
            files.clear()
        return {}

    return app


class FakeServer:
    """``with FakeServer(responder) as server:`` ... ``server.base_url`` ... ``server.received``
    (``server.images()``: the image requests only)."""

    def __init__(self, responder: Responder = lambda received: Scripted("1"), *, latency: float = 0.0,
                 host: str = "127.0.0.1", port: int = 0, image_responder: ImageResponder = drawn_image,
                 moderation_responder: ModerationResponder = keyword_moderation):
        import uvicorn

        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port = self._socket.getsockname()[1]
        self.base_url = f"http://{host}:{self.port}/v1"
        app = build_app(responder, self.received, self._lock, latency=latency, image_responder=image_responder,
                        base_url=lambda: self.base_url, moderation_responder=moderation_responder)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    def start(self) -> FakeServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake OpenAI server did not start within 10 s.")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self.received)

    def images(self) -> list[Received]:
        """The image generation requests received so far."""
        return [received for received in self.snapshot() if received.endpoint == "images"]


# --- responders ---------------------------------------------------------------------------------------------------

def consistent_pairwise(received: Received) -> Scripted:
    """A position-consistent T1 judge: prefers the image whose data URL hashes lower, whatever the order."""
    urls = received.image_urls
    if len(urls) != 2:
        return Scripted("I need two images. [[D]]")
    first, second = (hashlib.sha256(url.encode()).hexdigest() for url in urls)
    return Scripted(f"The {'first' if first < second else 'second'} image follows the prompt better. "
                    f"[[{'A' if first < second else 'B'}]]", prompt_tokens=2 * 2900 + 300, completion_tokens=40)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fake_openai",
                                     description="Serve the benchmark's scripted OpenAI-compatible judge.")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds before each reply (default 0.3)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = parser.parse_args(argv)
    server = FakeServer(consistent_pairwise, latency=args.latency, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
