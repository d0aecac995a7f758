"""Battles: a prompt and two images from two different models, shown left (A) and right (B).

How they are drawn is :mod:`sampling`'s business; this module records them and reads them back. A battle row records to whom it was served (an annotator or a judge), in which session, when and by which strategy.
Its id is an unguessable token: the vote handler checks it against the session (see :mod:`datamodel.votes`).
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from datamodel.database import Database
from datamodel.dialect import is_postgres


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


def record_battle(
    db: Database,
    pairing: Pairing,
    *,
    session_id: str,
    annotator_id: int | None = None,
    judge: str | None = None,
    strategy: str = "uniform",
    now: float | None = None,
) -> Battle:
    """Record ``pairing`` as a battle served to an annotator or a judge, drawn by ``strategy``; return it.

    (:func:`sampling.draws.serve_battle` draws one and records it.)"""
    if (annotator_id is None) == (judge is None):
        raise ValueError("serve_battle needs exactly one of annotator_id (a person) or judge (a judge's name).")
    battle_id, media_token = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    served_at = time.time() if now is None else now
    insert = ("INSERT INTO battles (id, prompt_id, left_image_id, right_image_id, served_to_kind, annotator_id, judge, "
              "session_id, media_token, strategy, served_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    values = [battle_id, pairing.prompt_id, pairing.left_image_id, pairing.right_image_id,
              "judge" if judge else "human", annotator_id, judge, session_id, media_token, strategy, served_at]
    with db.conn:
        if is_postgres(db):  # written and read back in one statement (one round trip to the server, not two)
            return _battle(db.execute(f"WITH written AS ({insert} RETURNING *) "
                                      + _SHOWN.format(battles="written"), values).fetchone())
        db.execute(insert, values)
    return load_battle(db, battle_id)


# a battle as the page shows it, with its prompt and its two images; ``battles``: the table, or the rows just written
_SHOWN = """
    SELECT b.id, b.prompt_id, p.suite, p.subset, p.variant, p.text, p.metadata, b.served_at,
           l.id, l.media_hash, l.media_ext, r.id, r.media_hash, r.media_ext, b.media_token
    FROM {battles} b JOIN prompts p ON p.id = b.prompt_id
    JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id
"""


def load_battle(db: Database, battle_id: str) -> Battle:
    row = db.execute(_SHOWN.format(battles="battles") + " WHERE b.id = ?", [battle_id]).fetchone()
    if row is None:
        raise LookupError(f"no battle {battle_id!r}")
    return _battle(row)


def _battle(row) -> Battle:
    return Battle(
        id=row[0], prompt_id=row[1], suite=row[2], subset=row[3], variant=row[4], text=row[5],
        metadata=json.loads(row[6]), served_at=row[7],
        left=ShownImage(row[8], row[9], row[10]), right=ShownImage(row[11], row[12], row[13]), media_token=row[14],
    )


def battle_pair(db: Database, media_token: str) -> tuple[ShownImage, ShownImage] | None:
    """The images shown on sides A and B of the battle with ``media_token`` (one read), or None."""
    row = db.execute(
        "SELECT l.id, l.media_hash, l.media_ext, r.id, r.media_hash, r.media_ext FROM battles b "
        "JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id WHERE b.media_token = ?",
        [media_token],
    ).fetchone()
    return (ShownImage(*row[:3]), ShownImage(*row[3:])) if row else None



def _both_images_of(model_ids) -> tuple[str, list]:
    """The SQL condition (on images ``l`` and ``r``) that both images are of ``model_ids`` (None: any), and its
    parameters."""
    if model_ids is None:
        return "", []
    model_ids = list(model_ids)
    marks = ",".join("?" * len(model_ids)) or "NULL"
    return f"AND l.model_id IN ({marks}) AND r.model_id IN ({marks})", [*model_ids, *model_ids]


def imported_human_battles(db: Database, *, suite: str | None = None, subset: str | None = None,
                           variant: str | None = None, model_ids=None) -> list[tuple]:
    """The imported human votes whose file carried the two images (:mod:`arena.vote_images`), in import order, as
    :func:`voted_human_battles` gives its rows, with ``imported:<source>:<id>`` (the imported vote's row) in place
    of the battle id: the same images can be judged and their judges' votes meet the imported one."""
    from datamodel.catalog import prompt_clause

    where, params = prompt_clause(suite, subset, variant)
    models_clause, model_params = _both_images_of(model_ids)
    params += model_params
    return db.execute(
        f"""
        SELECT 'imported:' || iv.source || ':' || iv.id, l.prompt_id, p.text, l.id, l.media_hash, l.media_ext,
               l.width, l.height, r.id, r.media_hash, r.media_ext, r.width, r.height, p.metadata, p.variant
        FROM imported_votes iv JOIN images l ON l.id = iv.left_image_id JOIN images r ON r.id = iv.right_image_id
        JOIN prompts p ON p.id = l.prompt_id
        WHERE iv.voter_kind = 'human' AND {where} {models_clause}
        ORDER BY iv.id
        """,
        params,
    ).fetchall()


def voted_human_battles(db: Database, *, suite: str | None = None, subset: str | None = None,
                        variant: str | None = None, model_ids=None, include_excluded: bool = False) -> list[tuple]:
    """The human battles with a vote (of the selected prompts; both images of ``model_ids`` when given; counted
    votes unless ``include_excluded``), oldest first: (battle id, prompt id, prompt text, then id, media hash, ext,
    width, height of the left image and of the right, prompt metadata text, variant)."""
    from datamodel.catalog import prompt_clause

    where, params = prompt_clause(suite, subset, variant)
    models_clause, model_params = _both_images_of(model_ids)
    params += model_params
    return db.execute(
        f"""
        SELECT b.id, b.prompt_id, p.text, l.id, l.media_hash, l.media_ext, l.width, l.height,
               r.id, r.media_hash, r.media_ext, r.width, r.height, p.metadata, p.variant
        FROM battles b JOIN votes v ON v.battle_id = b.id JOIN prompts p ON p.id = b.prompt_id
        JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id
        WHERE b.served_to_kind = 'human' AND {where} {models_clause} {'' if include_excluded else 'AND v.excluded = 0'}
        ORDER BY b.served_at, b.id
        """,
        params,
    ).fetchall()
