"""Files in the published schemas of peers' preference datasets (GenAI-Bench, Pick-a-Pic v2), written for tests:
tiny PNG images of known models, so a scripted judge can tell them apart (:func:`support.openai_stub.hash_models`)."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

RANK = {"alpha-xl": 0, "bravo-turbo": 1, "charlie-1.5": 2, "delta-mini": 3}  # lower is better
PROMPTS = [f"a {animal} reading a {thing}" for animal in ("cat", "fox", "owl", "bear")
           for thing in ("map", "book", "letter")]


def png(model: str, prompt: str, variant: int = 0) -> bytes:
    image = Image.new("RGB", (24, 24), (40 * RANK[model] + 20, len(prompt) * 7 % 256, 90 + 60 * variant))
    ImageDraw.Draw(image).text((2, 2), prompt[:3], fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def genai_bench_rows() -> list[dict]:
    """One vote per prompt between two models (the better one wins, every fourth a tie or a both-bad), then a
    self-battle: two images of one model."""
    models = list(RANK)
    rows = []
    for k, prompt in enumerate(PROMPTS):
        left, right = models[k % 4], models[(k + 1 + k // 4) % 4]
        vote = ("tievote" if k % 8 == 3 else "bothbad_vote" if k % 8 == 7 else
                "leftvote" if RANK[left] < RANK[right] else "rightvote")
        rows.append({"prompt": prompt, "left_model": left, "left_image": {"bytes": png(left, prompt), "path": None},
                     "right_model": right, "right_image": {"bytes": png(right, prompt), "path": None},
                     "vote_type": vote})
    rows.append({"prompt": PROMPTS[0], "left_model": "bravo-turbo",
                 "left_image": {"bytes": png("bravo-turbo", PROMPTS[0], 1), "path": None},
                 "right_model": "bravo-turbo",
                 "right_image": {"bytes": png("bravo-turbo", PROMPTS[0], 2), "path": None},
                 "vote_type": "leftvote"})
    return rows


GENAI_SCHEMA = pa.schema([("prompt", pa.string()), ("left_model", pa.string()),
                          ("left_image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                          ("right_model", pa.string()),
                          ("right_image", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
                          ("vote_type", pa.string())])


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path
