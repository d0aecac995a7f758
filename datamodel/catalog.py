"""Models, prompts and images: the rows battles are drawn from.

Suites describe prompts as :class:`PromptSpec` values and write them with :func:`add_prompts`; generators and
importers store image bytes in the media folder and register them with :func:`add_image`. Every function takes the
database first; every write that belongs together runs in one transaction.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

import sqlite_utils

from datamodel.media import StoredImage


class CatalogError(ValueError):
    """A prompt, model or image cannot be written; the message says which and what to do."""


@dataclass(frozen=True)
class PromptSpec:
    """One prompt as a suite describes it. ``(suite, subset, item_key, variant, role)`` identifies it."""

    suite: str
    item_key: str
    text: str
    subset: str = ""
    variant: str = ""
    role: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # where it came from, e.g. "data.json line 12", for error messages

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.suite, self.subset, self.item_key, self.variant, self.role)


@dataclass
class PromptImport:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    ids: list[int] = field(default_factory=list)


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def add_model(
    db: sqlite_utils.Database, name: str, *, source: str = "imported", description: str = "", config: dict | None = None
) -> int:
    """Insert a model if its name is new; return its id either way."""
    name = name.strip()
    if not name:
        raise CatalogError("a model needs a non-empty name.")
    with db.conn:
        db.execute(
            "INSERT INTO models (name, source, description, config) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
            [name, source, description, _dumps(config or {})],
        )
        return db.execute("SELECT id FROM models WHERE name = ?", [name]).fetchone()[0]


def add_prompts(db: sqlite_utils.Database, specs: Iterable[PromptSpec]) -> PromptImport:
    """Write prompts in one transaction: new ones are inserted, known ones with new metadata updated.

    Re-adding the same prompts changes nothing. A spec repeated in ``specs``, or a known key whose text differs,
    raises :class:`CatalogError` and writes nothing.
    """
    specs = list(specs)
    seen: dict[tuple, PromptSpec] = {}
    for spec in specs:
        if not spec.text.strip() or not spec.item_key.strip() or not spec.suite.strip():
            raise CatalogError(f"{spec.source or spec.key}: a prompt needs a suite, an item key and a text.")
        if spec.key in seen:
            first = seen[spec.key]
            raise CatalogError(
                f"{spec.source or 'input'}: duplicate prompt key {spec.key} (first at {first.source or 'an earlier row'}). "
                "Give each prompt its own item key, or role/variant."
            )
        seen[spec.key] = spec
    result = PromptImport()
    with db.conn:
        for spec in specs:
            row = db.execute(
                "SELECT id, text, metadata FROM prompts WHERE suite = ? AND subset = ? AND item_key = ? "
                "AND variant = ? AND role = ?",
                list(spec.key),
            ).fetchone()
            metadata = _dumps(spec.metadata)
            if row is None:
                cursor = db.execute(
                    "INSERT INTO prompts (suite, subset, variant, item_key, role, text, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [spec.suite, spec.subset, spec.variant, spec.item_key, spec.role, spec.text, metadata],
                )
                result.inserted += 1
                result.ids.append(cursor.lastrowid)
                continue
            prompt_id, text, old_metadata = row
            if text != spec.text:
                raise CatalogError(
                    f"{spec.source or spec.key}: prompt {spec.key} already exists with the text {text!r}, "
                    f"not {spec.text!r}. Images were made for the old text: import it under a new item key."
                )
            if old_metadata != metadata:
                db.execute("UPDATE prompts SET metadata = ? WHERE id = ?", [metadata, prompt_id])
                result.updated += 1
            else:
                result.unchanged += 1
            result.ids.append(prompt_id)
    return result


def add_image(
    db: sqlite_utils.Database,
    *,
    prompt_id: int,
    model_id: int,
    stored: StoredImage,
    idx: int = 0,
    seed: int | None = None,
    params: dict | None = None,
) -> int:
    """Register a stored image as ``model``'s ``idx``-th image for ``prompt``; an existing row is kept."""
    with db.conn:
        db.execute(
            "INSERT INTO images (prompt_id, model_id, idx, seed, media_hash, media_ext, width, height, params) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (prompt_id, model_id, idx) DO NOTHING",
            [prompt_id, model_id, idx, seed, stored.media_hash, stored.media_ext, stored.width, stored.height,
             _dumps(params or {})],
        )
        return db.execute(
            "SELECT id FROM images WHERE prompt_id = ? AND model_id = ? AND idx = ?", [prompt_id, model_id, idx]
        ).fetchone()[0]


def prompt_row(db: sqlite_utils.Database, prompt_id: int) -> dict:
    row = next(db.query("SELECT * FROM prompts WHERE id = ?", [prompt_id]), None)
    if row is None:
        raise CatalogError(f"no prompt with id {prompt_id}.")
    row["metadata"] = json.loads(row["metadata"])
    return row


def suites_summary(db: sqlite_utils.Database) -> list[dict]:
    """Prompt and image counts per (suite, subset, variant)."""
    return list(
        db.query(
            """
            SELECT p.suite, p.subset, p.variant, COUNT(DISTINCT p.id) AS prompts,
                   COUNT(i.id) AS images, COUNT(DISTINCT i.model_id) AS models
            FROM prompts p LEFT JOIN images i ON i.prompt_id = p.id
            GROUP BY p.suite, p.subset, p.variant ORDER BY p.suite, p.subset, p.variant
            """
        )
    )


def publish_images(db: sqlite_utils.Database, through_vote: int, *, withhold: bool = True,
                   now: float | None = None) -> int:
    """Record that the images of the counted votes up to ``through_vote`` were published with their models' names
    (``images.published_at``; a Hugging Face export) and, unless ``withhold`` is false, leave them out of battles
    (``images.withheld = 'published'``): anyone holding the export can render them as the arena does and name them in a
    battle before the vote. Returns the images newly withheld."""
    now = time.time() if now is None else now
    shown = ("id IN (SELECT left_image_id FROM votes WHERE NOT excluded AND id <= :vote UNION "
             "SELECT right_image_id FROM votes WHERE NOT excluded AND id <= :vote)")
    with db.conn:
        db.execute(f"UPDATE images SET published_at = :now WHERE published_at IS NULL AND {shown}",
                   {"now": now, "vote": through_vote})
        if not withhold:
            return 0
        return db.execute(f"UPDATE images SET withheld = 'published' WHERE withheld IS NULL AND {shown}",
                          {"vote": through_vote}).rowcount


def withheld_images(db: sqlite_utils.Database) -> dict[str, int]:
    """{reason: images} of the images left out of battles (``images.withheld``)."""
    return dict(db.execute("SELECT withheld, COUNT(*) FROM images WHERE withheld IS NOT NULL GROUP BY withheld"))


def release_withheld(db: sqlite_utils.Database, reason: str = "published") -> int:
    """Let battles draw the images withheld for ``reason`` again (the admin's decision); returns how many."""
    with db.conn:
        return db.execute("UPDATE images SET withheld = NULL WHERE withheld = ?", [reason]).rowcount
