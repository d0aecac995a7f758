"""Drawing battles: which prompts can be shown, the uniform draw, and serving a drawn battle.

The ``uniform`` strategy is the published protocol (T1): a prompt uniformly among those with images from at least two
models (optionally within a suite), then two distinct models uniformly among those with an image for it, then one of
each model's images for that prompt, then a fair coin for which one is shown on the left (A). The other strategies
(:mod:`sampling.sampler`) draw the pair first and use the same prompt pool.
"""

from __future__ import annotations

import random
import threading

import sqlite_utils

from datamodel.battles import Battle, Pairing, record_battle
from sampling.strategies import UNIFORM, check_strategy


class NoBattleAvailable(LookupError):
    """No prompt has images from two models (within the filter); the message says what to add."""




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


def serve_battle(
    db: sqlite_utils.Database,
    rng: random.Random,
    *,
    session_id: str,
    annotator_id: int | None = None,
    judge: str | None = None,
    suite: str | None = None,
    strategy: str = UNIFORM.name,
    pairing: Pairing | None = None,
    pool: PromptPool | None = None,
    now: float | None = None,
) -> Battle:
    """Draw a battle uniformly (or use ``pairing``), record it as served to an annotator or a judge, and return it."""
    check_strategy(strategy)
    pairing = pairing or draw_uniform(db, rng, suite=suite, pool=pool)
    return record_battle(db, pairing, session_id=session_id, annotator_id=annotator_id, judge=judge,
                         strategy=strategy, now=now)
