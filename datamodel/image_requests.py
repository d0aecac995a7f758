"""The image API's answer cache: the ``image_requests`` table.

A row is written (and committed) as soon as an image API's image is in the media folder, so a generation run
restarted after a crash or an interruption finds every image it already paid for. Only answers are cached: a
request that failed after its last retry (or was refused) is not, so the next run asks again. Rows hold the
request body and where the image is, never image data or an API key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from datamodel.database import Database
from datamodel.media import StoredImage


@dataclass(frozen=True)
class CachedImage:
    key: str
    stored: StoredImage
    revised_prompt: str
    cost_usd: float | None


def get(db: Database, key: str) -> CachedImage | None:
    row = db.execute(
        "SELECT key, media_hash, media_ext, width, height, revised_prompt, cost_usd FROM image_requests WHERE key = ?",
        [key],
    ).fetchone()
    return CachedImage(row[0], StoredImage(*row[1:5]), row[5], row[6]) if row else None


def put(
    db: Database, key: str, *, endpoint: str, model: str, request: dict, stored: StoredImage,
    revised_prompt: str = "", usage: dict | None = None, cost_usd: float | None = None,
    latency_s: float | None = None, attempts: int = 1,
) -> None:
    """Store an answer (a second answer for the same key keeps the first)."""
    with db.conn:
        db.execute(
            "INSERT INTO image_requests (key, endpoint, model, request, media_hash, media_ext, width, height, "
            "revised_prompt, usage, cost_usd, latency_s, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            [key, endpoint, model, json.dumps(request, ensure_ascii=False, sort_keys=True), stored.media_hash,
             stored.media_ext, stored.width, stored.height, revised_prompt or "", json.dumps(usage or {}), cost_usd,
             latency_s, attempts],
        )


def usage(db: Database, model: str | None = None) -> dict:
    """Images and estimated cost of everything in the cache (of one API model)."""
    sql, args = "SELECT COUNT(*), SUM(cost_usd) FROM image_requests", []
    if model is not None:
        sql, args = sql + " WHERE model = ?", [model]
    images, cost = db.execute(sql, args).fetchone()
    return {"images": images, "cost_usd": cost or 0.0}
