"""Commonsense-T2I as the authors' code ran it: the judges and CLIP see the JPEG that generate_images.py saved
(``image.save('....jpg')``: Pillow's quality 75), the fit judge asks with ``max_tokens=10`` as evaluate.py does, and
Fig. 5 (the CLIP similarity of P1 and P2 against the human score) comes out of the report."""

from __future__ import annotations

import asyncio
import io

import pytest
import torch
from PIL import Image

from datamodel.presets import get_preset
from judges.commonsense import run_commonsense
from judges.selection import Selection
from openai_stub import engine_config
from tools.fake_openai import FakeServer, Scripted


def authors_jpeg(path) -> bytes:
    """What generate_images.py wrote: the image saved as .jpg by Pillow with its defaults (quality 75)."""
    buffer = io.BytesIO()
    with Image.open(path) as image:
        image.convert("RGB").save(buffer, format="JPEG", quality=75)
    return buffer.getvalue()


def stored_paths(arena) -> dict[str, object]:
    """{sha256 of the image sent as PNG: its media path} of every commonsense image."""
    return {h: arena.media.path(h, ext) for h, ext in arena.db.execute(
        "SELECT i.media_hash, i.media_ext FROM images i JOIN prompts p ON p.id = i.prompt_id "
        "WHERE p.suite = 'commonsense'")}


def test_under_the_preset_the_fit_judge_sees_the_jpeg_and_asks_for_ten_tokens(small_arena):
    options = get_preset("commonsense-paper").get("judge.options")
    assert options["jpeg_quality"] == 75 and options["max_tokens"] == 10
    expected = {authors_jpeg(path) for path in stored_paths(small_arena).values()}
    with FakeServer(lambda received: Scripted("1")) as server:
        asyncio.run(run_commonsense(small_arena.db, small_arena.media, engine_config(server), Selection(), env={},
                                    progress=False, handle_signals=False, jpeg_quality=75, max_tokens=10,
                                    name="paper-judge"))
        bodies = list(server.received)
    assert bodies and all(r.body["max_tokens"] == 10 for r in bodies)
    assert all(r.image_urls[0].startswith("data:image/jpeg;base64,") for r in bodies)
    assert {r.images()[0] for r in bodies} <= expected and len({r.images()[0] for r in bodies}) == len(expected)
    versions = {v for v, in small_arena.db.execute(
        "SELECT DISTINCT scorer_version FROM metrics WHERE name = 'commonsense_fit' AND scorer LIKE 'paper-judge%'")}
    assert len(versions) == 1 and next(iter(versions)).endswith("+jpeg75")
    with FakeServer(lambda received: Scripted("1")) as server:  # the project's default: the stored PNG, 20 tokens
        asyncio.run(run_commonsense(small_arena.db, small_arena.media, engine_config(server), Selection(), env={},
                                    progress=False, handle_signals=False))
        assert all(r.image_urls[0].startswith("data:image/png") and r.body["max_tokens"] == 20
                   for r in server.received)


class RecordingEncoder:
    """Embeds texts by the word 'unlit' and images by their mean colour, recording every image it is shown."""

    name, version = "recording", "1"

    def __init__(self):
        from judges.metrics.clip_scores import EncoderCounts

        self.counts, self.seen, self.batch_size = EncoderCounts(), [], 8

    def encode_texts(self, texts):
        return torch.tensor([[1.0, 0.0] if "unlit" in t else [0.0, 1.0] for t in texts])

    def encode_images(self, images):
        self.seen += [image.tobytes() for image in images]
        return torch.nn.functional.normalize(torch.tensor(
            [[float(sum(image.convert("RGB").resize((1, 1)).getpixel((0, 0)))) + 1.0, 1.0] for image in images]),
            dim=-1)

    def encode_stored(self, media, rows):
        return self.encode_images([row.load(media) for row in rows])


def test_under_the_preset_the_clip_evaluator_sees_the_jpeg(small_arena):
    from judges.metrics.commonsense_clip import score_commonsense

    assert get_preset("commonsense-paper").get("metrics.option.commonsense_jpeg_quality") == 75
    encoder = RecordingEncoder()
    score_commonsense(small_arena.db, small_arena.media, encoder, jpeg_quality=75)
    decoded = {Image.open(io.BytesIO(authors_jpeg(path))).convert("RGB").tobytes()
               for path in stored_paths(small_arena).values()}
    assert encoder.seen and set(encoder.seen) == decoded
    versions = {v for v, in small_arena.db.execute(
        "SELECT DISTINCT scorer_version FROM metrics WHERE name = 'commonsense_clip_fit'")}
    assert versions == {"1+jpeg75"}
    stored = RecordingEncoder()
    score_commonsense(small_arena.db, small_arena.media, stored)
    assert set(stored.seen).isdisjoint(decoded)  # without the option: the stored images as they are
