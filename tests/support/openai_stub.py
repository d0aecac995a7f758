"""Helpers for the judge tests: scripted responders for the fake OpenAI server, small suites, a fake detector.

The server itself is :class:`tools.fake_openai.FakeServer` (FastAPI + uvicorn on 127.0.0.1 in a thread); it
records every request it receives, so tests check what the judge really sent.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from PIL import Image, ImageDraw
from support.arena import render_all

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from judges.client import EngineConfig
from tools.fake_openai import Received, Scripted

FAST = dict(retry_base_s=0.01, retry_max_s=0.05, timeout_s=5.0)


def engine_config(server, **overrides) -> EngineConfig:
    """An engine configuration for the fake server with short backoffs (tests stay fast)."""
    return EngineConfig(**{"base_url": server.base_url, "model": "gpt-4o-mini", "concurrency": 4, **FAST, **overrides})


def hash_models(db) -> dict[str, str]:
    """{media SHA-256: model name} of every image."""
    return dict(db.execute("SELECT i.media_hash, m.name FROM images i JOIN models m ON m.id = i.model_id").fetchall())


def preference_judge(db, ranking: dict[str, int]) -> Callable[[Received], Scripted]:
    """A consistent T1 judge: the image of the better-ranked model wins (lower rank is better), whatever the order."""
    models = hash_models(db)

    def respond(received: Received) -> Scripted:
        first, second = (ranking[models[h]] for h in received.image_hashes())
        label = "A" if first < second else "B" if second < first else "C"
        return Scripted(f"Comparing the two images, one is clearly better.\n\n[[{label}]]")

    return respond


def first_position_judge(received: Received) -> Scripted:
    """A judge with a complete first-position bias: always [[A]]."""
    return Scripted("The first image is better. [[A]]")


@dataclass
class Book:
    """Replies keyed by a regular expression on the request text (first match wins); counts what it answered."""

    rules: list[tuple[str, Callable[[Received], Scripted] | Scripted]] = field(default_factory=list)
    default: Scripted = Scripted("I do not know.")

    def add(self, pattern: str, reply) -> Book:
        self.rules.append((pattern, reply))
        return self

    def __call__(self, received: Received) -> Scripted:
        for pattern, reply in self.rules:
            if re.search(pattern, received.text, re.S):
                return reply(received) if callable(reply) else reply
        return self.default


def colored(color: tuple[int, int, int], size: int = 32, box=None, box_color=(255, 255, 255)) -> Image.Image:
    image = Image.new("RGB", (size, size), color)
    if box:
        ImageDraw.Draw(image).rectangle(box, fill=box_color)
    return image


def add_item_images(db, media, specs: list[PromptSpec], images: dict[tuple[str, str], list[Image.Image]]) -> dict:
    """Add prompts and, for each (model, role) of ``images``, its generations; return {(model, role): [image ids]}."""
    ids = dict(zip([s.role or s.item_key for s in specs], add_prompts(db, specs).ids))
    out = {}
    for (model, role), pictures in images.items():
        model_id = add_model(db, model)
        out[(model, role)] = [add_image(db, prompt_id=ids[role], model_id=model_id, stored=media.put_image(p), idx=k)
                              for k, p in enumerate(pictures)]
    render_all(db, media)  # battles draw only rendered images
    return out


def pixels_key(image: Image.Image) -> str:
    return hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()


@dataclass
class FakeDetection:
    label: str
    score: float
    box: tuple[float, float, float, float]


class FakeDetector:
    """Answers ``detect`` from a table {pixels key: [FakeDetection]}; records the labels it was asked for."""

    name = "fake-detector"

    def __init__(self, table: dict[str, list[FakeDetection]]):
        self.table = table
        self.calls: list[list[str]] = []

    def detect(self, image, labels):
        self.calls.append(list(labels))
        return [d for d in self.table.get(pixels_key(image), []) if d.label in labels]
