"""Drawing battles: a prompt and two images from two different models, in a random left/right order.

The ``uniform`` strategy is the published protocol (T1): a prompt uniformly among those with images from at least two
models (optionally within a suite), then two distinct models uniformly among those with an image for it, then one of
each model's images for that prompt, then a fair coin for which one is shown on the left (A).

A battle row records to whom it was served (an annotator or a judge), in which session, when and by which strategy.
Its id is an unguessable token: the vote handler checks it against the session (see :mod:`arena.votes`).
"""

from __future__ import annotations

import json
import random
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import sqlite_utils

class NoBattleAvailable(LookupError):
    """No prompt has images from two models (within the filter); the message says what to add."""


@dataclass(frozen=True)
class ShownImage:
    image_id: int
    media_hash: str
    media_ext: str


@dataclass(frozen=True)
class Battle:
    id: str
    prompt_id: int
    suite: str
    subset: str
    variant: str
    text: str
    metadata: dict[str, Any]
    left: ShownImage
    right: ShownImage
    served_at: float
    media_token: str  # the images are served at /battle-media/<media_token>/a and /b


@dataclass(frozen=True)
class Pairing:
    prompt_id: int
    left_image_id: int
    right_image_id: int


def eligible_prompts(db: sqlite_utils.Database, suite: str | None = None) -> list[int]:
    """Ids of prompts (of ``suite``, if given) with images from at least two models."""
    where, params = ("WHERE p.suite = ?", [suite]) if suite else ("", [])
    rows = db.execute(
        f"""
        SELECT i.prompt_id FROM images i JOIN prompts p ON p.id = i.prompt_id {where}
        GROUP BY i.prompt_id HAVING COUNT(DISTINCT i.model_id) >= 2 ORDER BY i.prompt_id
        """,
        params,
    ).fetchall()
    return [row[0] for row in rows]


class PromptPool:
    """:func:`eligible_prompts` per suite and :func:`suites_with_battles`, computed again only when the catalog
    (models, prompts, images) has changed.

    The query groups every image (13 ms at 40,000 images); a server keeps one pool (thread-safe) and reads the
    catalog's change counter (``data_versions``, one row) per draw instead.
    Only suites that have battles are kept, so a client naming made-up suites can neither grow the pool nor make it
    run the grouping query.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._version: tuple | None = None
        self._suites: list[str] = []
        self._by_suite: dict[str | None, list[int]] = {}

    def _refresh(self, db: sqlite_utils.Database) -> None:
        """Forget everything if the images changed (call with the lock held)."""
        version = db.execute("SELECT version FROM data_versions WHERE name = 'catalog'").fetchone()
        if version != self._version:
            self._version, self._by_suite, self._suites = version, {}, suites_with_battles(db)

    def suites(self, db: sqlite_utils.Database) -> list[str]:
        """The suites that have at least one battle to show, as :func:`suites_with_battles`."""
        with self._lock:
            self._refresh(db)
            return list(self._suites)

    def eligible(self, db: sqlite_utils.Database, suite: str | None = None) -> list[int]:
        with self._lock:
            self._refresh(db)
            if suite is not None and suite not in self._suites:
                return []
            if suite not in self._by_suite:
                self._by_suite[suite] = eligible_prompts(db, suite)
            return self._by_suite[suite]


def draw_uniform(
    db: sqlite_utils.Database, rng: random.Random, *, suite: str | None = None, pool: PromptPool | None = None
) -> Pairing:
    """The published protocol: uniform prompt, two distinct uniform models, uniform image each, random sides."""
    prompt_ids = pool.eligible(db, suite) if pool is not None else eligible_prompts(db, suite)
    if not prompt_ids:
        scope = f"suite {suite!r}" if suite else "any suite"
        raise NoBattleAvailable(
            f"No prompt of {scope} has images from two models yet. Generate or import images "
            "(python -m generators run, python -m arena import-images)."
        )
    prompt_id = rng.choice(prompt_ids)
    images_by_model: dict[int, list[int]] = {}
    for image_id, model_id in db.execute(
        "SELECT id, model_id FROM images WHERE prompt_id = ? ORDER BY model_id, idx", [prompt_id]
    ):
        images_by_model.setdefault(model_id, []).append(image_id)
    model_a, model_b = rng.sample(sorted(images_by_model), 2)  # random order = random sides
    return Pairing(prompt_id, rng.choice(images_by_model[model_a]), rng.choice(images_by_model[model_b]))


def serve_battle(
    db: sqlite_utils.Database,
    rng: random.Random,
    *,
    session_id: str,
    annotator_id: int | None = None,
    judge: str | None = None,
    suite: str | None = None,
    strategy: str = "uniform",
    pairing: Pairing | None = None,
    pool: PromptPool | None = None,
    now: float | None = None,
) -> Battle:
    """Draw a battle (or use ``pairing``), record it as served to an annotator or a judge, and return it."""
    if (annotator_id is None) == (judge is None):
        raise ValueError("serve_battle needs exactly one of annotator_id (a person) or judge (a judge's name).")
    from arena.sampling import check_strategy  # sampling builds on this module

    check_strategy(strategy)
    pairing = pairing or draw_uniform(db, rng, suite=suite, pool=pool)
    battle_id, media_token = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    served_at = time.time() if now is None else now
    with db.conn:
        db.execute(
            "INSERT INTO battles (id, prompt_id, left_image_id, right_image_id, served_to_kind, annotator_id, judge, "
            "session_id, media_token, strategy, served_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [battle_id, pairing.prompt_id, pairing.left_image_id, pairing.right_image_id,
             "judge" if judge else "human", annotator_id, judge, session_id, media_token, strategy, served_at],
        )
    return load_battle(db, battle_id)


def load_battle(db: sqlite_utils.Database, battle_id: str) -> Battle:
    row = db.execute(
        """
        SELECT b.id, b.prompt_id, p.suite, p.subset, p.variant, p.text, p.metadata, b.served_at,
               l.id, l.media_hash, l.media_ext, r.id, r.media_hash, r.media_ext, b.media_token
        FROM battles b JOIN prompts p ON p.id = b.prompt_id
        JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id
        WHERE b.id = ?
        """,
        [battle_id],
    ).fetchone()
    if row is None:
        raise LookupError(f"no battle {battle_id!r}")
    return Battle(
        id=row[0], prompt_id=row[1], suite=row[2], subset=row[3], variant=row[4], text=row[5],
        metadata=json.loads(row[6]), served_at=row[7],
        left=ShownImage(row[8], row[9], row[10]), right=ShownImage(row[11], row[12], row[13]), media_token=row[14],
    )


def battle_image(db: sqlite_utils.Database, media_token: str, side: str) -> ShownImage | None:
    """The image shown on ``side`` ("a" or "b") of the battle with ``media_token``, or None."""
    column = {"a": "left_image_id", "b": "right_image_id"}.get(side)
    if column is None:
        return None
    row = db.execute(
        f"SELECT i.id, i.media_hash, i.media_ext FROM battles b JOIN images i ON i.id = b.{column} "
        "WHERE b.media_token = ?",
        [media_token],
    ).fetchone()
    return ShownImage(*row) if row else None


def suites_with_battles(db: sqlite_utils.Database) -> list[str]:
    """Suites that have at least one prompt with images from two models (the arena's suite filter)."""
    rows = db.execute(
        """
        SELECT DISTINCT p.suite FROM prompts p WHERE p.id IN (
            SELECT prompt_id FROM images GROUP BY prompt_id HAVING COUNT(DISTINCT model_id) >= 2)
        ORDER BY p.suite
        """
    ).fetchall()
    return [row[0] for row in rows]
