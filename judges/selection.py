"""Which prompts, models and images a judge or metric run covers (suite / subset / variant / model filters).

:func:`image_rows` is the one query of images with their prompt and model, for the judges and the automatic metrics.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Sequence

from datamodel.catalog import selected_images
from datamodel.database import Database
from datamodel.models import model_ids as all_model_ids
from judges.request import ImageInput


class SelectionError(ValueError):
    """A filter matches nothing usable; the message says what to change."""


@dataclass(frozen=True)
class Selection:
    suite: str | None = None
    subset: str | None = None
    variant: str | None = None
    models: tuple[str, ...] = ()  # model names; empty: all models
    limit: int | None = None
    # only images a battle may show (the view ``battle_images``: rendered for the display, not withheld): what a
    # page puts before people (the rating questions); judges and metrics read every image
    shown_only: bool = False

    def describe(self) -> str:
        parts = [f"{name} {value!r}" for name, value in (("suite", self.suite), ("subset", self.subset),
                                                          ("variant", self.variant)) if value]
        if self.models:
            parts.append("models " + ", ".join(self.models))
        return ", ".join(parts) or "all prompts"

    def scope(self) -> str:
        """A stable text naming the filters (part of the subject of drawn battles)."""
        return "/".join([self.suite or "*", self.subset or "*", self.variant or "*",
                         "+".join(sorted(self.models)) or "*"])


@dataclass(frozen=True)
class ImageRow:
    image_id: int
    prompt_id: int
    model_id: int
    model: str
    idx: int
    media_hash: str
    media_ext: str
    width: int
    height: int
    suite: str
    subset: str
    variant: str
    item_key: str
    role: str
    text: str
    metadata: dict

    def input(self, media) -> ImageInput:
        return ImageInput.from_media(media, self.media_hash, self.media_ext, self.width, self.height)

    def load(self, media):
        """The RGB image (a PIL image) from the media folder."""
        from PIL import Image

        with Image.open(media.path(self.media_hash, self.media_ext)) as image:
            return image.convert("RGB")

    def __getitem__(self, column: str):
        """A field by name, ``row["id"]`` being the image id: rows also read like the query's mapping rows."""
        if column == "id":
            return self.image_id
        if column not in _IMAGE_ROW_FIELDS:
            raise KeyError(f"{column!r}: an image row has id, {', '.join(sorted(_IMAGE_ROW_FIELDS))}.")
        return getattr(self, column)


_IMAGE_ROW_FIELDS = frozenset(f.name for f in fields(ImageRow))


def model_ids(db: Database, names: tuple[str, ...]) -> dict[str, int]:
    """{name: id} of ``names`` (all models when empty); an unknown name raises with the known ones."""
    known = all_model_ids(db)
    if not names:
        return known
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SelectionError(f"unknown model {', '.join(map(repr, unknown))}. "
                             f"Known models: {', '.join(known) or 'none'}.")
    return {name: known[name] for name in names}


def image_rows(db: Database, selection: Selection | str | None = None, *,
               models: Sequence[str] | None = None) -> list[ImageRow]:
    """Images of the selected prompts and models, ordered by prompt, model name and generation index.

    ``selection`` is a :class:`Selection`, or a suite name with ``models`` (model names; None: all models), or None
    for every image. An unknown model name raises :class:`SelectionError` naming the known ones.
    """
    if not isinstance(selection, Selection):
        selection = Selection(selection, models=tuple(models or ()))
    elif models is not None:
        raise TypeError("image_rows: give the models in the Selection, not as models=.")
    ids = model_ids(db, selection.models)
    rows = selected_images(db, suite=selection.suite, subset=selection.subset, variant=selection.variant,
                           model_ids=ids.values() if selection.models else None, shown_only=selection.shown_only)
    return [ImageRow(*row[:15], json.loads(row[15] or "{}")) for row in rows]


ItemKey = tuple[str, str, str, str]  # suite, subset, variant, item_key


def items_by_model(rows: list[ImageRow], roles: tuple[str, ...]) -> dict[ItemKey, dict[int, dict[str, list[ImageRow]]]]:
    """{item: {model_id: {role: [images by idx]}}} for the items and models that have an image for every role.

    Items keep the order of their first prompt; images keep the order of their generation index.
    """
    items: dict[ItemKey, dict[int, dict[str, list[ImageRow]]]] = {}
    for row in rows:
        if row.role in roles:
            key = (row.suite, row.subset, row.variant, row.item_key)
            items.setdefault(key, {}).setdefault(row.model_id, {}).setdefault(row.role, []).append(row)
    complete = {}
    for key, models in items.items():
        kept = {model_id: by_role for model_id, by_role in sorted(models.items()) if all(r in by_role for r in roles)}
        if kept:
            complete[key] = kept
    return complete
