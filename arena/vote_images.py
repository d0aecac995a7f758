"""The images an imported vote file carries (GenAI-Bench, Pick-a-Pic: :mod:`arena.peer_votes`), checked and staged
while the file streams, written with the votes.

Each image is read from its record, checked (size, pixels, format) and stripped of its metadata as any imported image
(:func:`datamodel.media.clean_image`: metadata often names the model) and staged on disk one at a time, so the
import holds one image in memory. Its prompt is the record's prompt text in the suite the format names (item key: a
slug and hash of the text, :func:`suites.common.content_key`). Nothing is written until the votes are
(:meth:`ImageStage.write`, called inside :func:`datamodel.imported_votes.finish_import`'s one transaction): then the
prompts, the image rows (an image already stored for that prompt and model is reused; a new one gets the next
generation index) and the media files, so a refused file leaves no row and no image behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from datamodel.catalog import PromptSpec, add_image_once, add_prompts
from datamodel.database import Database
from datamodel.media import MediaError, MediaStore, Staging, StoredImage, clean_image


class ImageRefused(ValueError):
    """An image of the file was refused (too large, not an image, too many pixels); the message names it."""


@dataclass
class ImageStage:
    """The images staged so far; ``key`` of an image: what a staged vote names it by (model, prompt, content)."""

    media: MediaStore
    staging: Staging
    source: str
    file: str
    prompts: dict[tuple[str, str], PromptSpec] = field(default_factory=dict)  # (suite, item key) -> prompt
    images: dict[str, tuple[str, str, str, StoredImage]] = field(default_factory=dict)  # key -> suite, item, model

    def add(self, where: str, suite: str, item_key: str, prompt: str, model: str, data: bytes) -> str:
        """Check and stage one image of ``model`` for ``prompt``; return its key."""
        if len(data) > self.media.max_bytes:
            raise ImageRefused(f"{where}: {len(data):,} bytes, more than max_image_bytes ({self.media.max_bytes:,}) "
                               "allows; raise ARENA_MAX_IMAGE_BYTES if images this large are expected")
        try:
            stored = self.staging.put(clean_image(data, where, max_pixels=self.media.max_pixels))
        except MediaError as error:
            raise ImageRefused(str(error)) from None
        self.prompts.setdefault((suite, item_key), PromptSpec(suite, item_key, prompt,
                                                               metadata={"imported_from": self.source},
                                                               source=where))
        key = f"{model}\x1f{suite}\x1f{item_key}\x1f{stored.media_hash}"
        self.images.setdefault(key, (suite, item_key, model, stored))
        return key

    def write(self, db: Database, model_ids: dict[str, int]) -> dict[str, int]:
        """Write the prompts, image rows and media files (inside the caller's transaction); {key: image id}."""
        if not self.images:
            return {}
        order = list(self.prompts)
        prompt_ids = dict(zip(order, add_prompts(db, [self.prompts[key] for key in order]).ids))
        ids = {}
        for key, (suite, item_key, model, stored) in self.images.items():
            ids[key], new = add_image_once(db, prompt_id=prompt_ids[(suite, item_key)], model_id=model_ids[model],
                                           stored=stored, params={"imported_from": Path(self.file).name,
                                                                  "source": self.source})
            if new:
                self.staging.store(stored)
        return ids
