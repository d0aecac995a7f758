"""A local OpenAI-compatible chat-completions server that answers from a script (tests and the benchmark).

:class:`FakeServer` runs FastAPI + uvicorn on 127.0.0.1 in a thread and records every request it receives
(:class:`Received`: the JSON body, a digest of it, when). A *responder* decides each answer from the body and how
often the same body was received before: :class:`Scripted` gives the text, an HTTP status (429, 500, ...), a delay
(slow replies), a refusal or a finish reason. ``python -m tools.fake_openai`` serves the benchmark's responder in a
process of its own and prints its base URL; ``GET /stats`` counts requests and repeats, ``POST /reset`` forgets them.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import json
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.requests import ClientDisconnect

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
class Received:
    body: dict
    digest: str
    at: float
    attempt: int  # how many times this exact body was received before (0: first time)
    headers: dict = field(default_factory=dict, repr=False)

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


def completion_json(model: str, reply: Scripted) -> dict:
    return {
        "id": f"chatcmpl-{int(time.time() * 1e6)}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": reply.finish_reason, "logprobs": None,
                     "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal}}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }


def build_app(responder: Responder, log: list[Received], lock: threading.Lock, *, latency: float = 0.0):
    app = FastAPI()
    counts: dict[str, int] = {}

    async def chat(request: Request):
        try:
            raw = await request.body()
        except ClientDisconnect:  # the judge died while sending (the benchmark's SIGKILL)
            return Response(status_code=499)
        body = json.loads(raw)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            attempt = counts.get(digest, 0)
            counts[digest] = attempt + 1
            received = Received(body, digest, time.time(), attempt, dict(request.headers))
            log.append(received)
        reply = responder(received)
        delay = latency + reply.delay
        if delay:
            await asyncio.sleep(delay)
        if reply.status != 200:
            return JSONResponse({"error": {"message": reply.content or f"scripted {reply.status}", "type": "scripted",
                                           "code": None, "param": None}}, status_code=reply.status,
                                headers=reply.headers)
        content = reply.raw_body if reply.raw_body is not None else completion_json(body.get("model", ""), reply)
        return JSONResponse(content, headers=reply.headers)

    app.post("/v1/chat/completions")(chat)
    app.post("/chat/completions")(chat)

    @app.get("/stats")
    async def stats():
        with lock:
            return {"requests": len(log), "distinct": len(counts), "repeated": len(log) - len(counts)}

    @app.post("/reset")
    async def reset():
        with lock:
            log.clear()
            counts.clear()
        return {}

    return app


class FakeServer:
    """``with FakeServer(responder) as server:`` ... ``server.base_url`` ... ``server.received``."""

    def __init__(self, responder: Responder, *, latency: float = 0.0, host: str = "127.0.0.1", port: int = 0):
        import uvicorn

        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        self.port = self._socket.getsockname()[1]
        self.base_url = f"http://{host}:{self.port}/v1"
        app = build_app(responder, self.received, self._lock, latency=latency)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=30)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)

    def start(self) -> "FakeServer":
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

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self.received)


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
