"""The persistent request cache: the ``judge_requests`` table.

A row is written (and committed) as soon as an answer arrives, so a run restarted after a crash or an interruption
finds every answer it already paid for. Only answers are cached: a request that failed after its last retry is
not, so the next run tries it again. Rows never hold image data or an API key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from datamodel.database import Database


@dataclass(frozen=True)
class CachedReply:
    key: str
    reply: str
    refusal: str
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None


def get(db: Database, key: str) -> CachedReply | None:
    row = db.execute(
        "SELECT key, reply, refusal, finish_reason, prompt_tokens, completion_tokens, cost_usd "
        "FROM judge_requests WHERE key = ?",
        [key],
    ).fetchone()
    return CachedReply(*row) if row else None


def contains(db: Database, key: str) -> bool:
    return db.execute("SELECT 1 FROM judge_requests WHERE key = ?", [key]).fetchone() is not None


def put(
    db: Database, key: str, *, endpoint: str, model: str, request: dict, reply: str, refusal: str = "",
    finish_reason: str = "", prompt_tokens: int | None = None, completion_tokens: int | None = None,
    total_tokens: int | None = None, cost_usd: float | None = None, latency_s: float | None = None,
    attempts: int = 1,
) -> None:
    """Store an answer (a second answer for the same key keeps the first)."""
    with db.conn:
        db.execute(
            "INSERT INTO judge_requests (key, endpoint, model, request, reply, refusal, finish_reason, prompt_tokens, "
            "completion_tokens, total_tokens, cost_usd, latency_s, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key) DO NOTHING",
            [key, endpoint, model, json.dumps(request, ensure_ascii=False), reply, refusal or "", finish_reason or "",
             prompt_tokens, completion_tokens, total_tokens, cost_usd, latency_s, attempts],
        )


def usage(db: Database) -> dict:
    """Requests, tokens and estimated cost of everything in the cache."""
    row = db.execute(
        "SELECT COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost_usd) FROM judge_requests"
    ).fetchone()
    return {"requests": row[0], "prompt_tokens": row[1] or 0, "completion_tokens": row[2] or 0,
            "cost_usd": row[3] or 0.0}
