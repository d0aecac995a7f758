"""The content-addressed media folder.

An image file is stored once under its SHA-256: ``<media_dir>/<h[:2]>/<h>.<ext>``. The name says nothing about the
model that made it, so a file name or URL can reach the browser without revealing the model. Files are written to a
temporary name, flushed to disk and renamed, so a crash never leaves a half-written image under a real name.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

EXTENSIONS = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}
_HASH = re.compile(r"^[0-9a-f]{64}$")


class MediaError(ValueError):
    """An image cannot be stored or found; the message names the file."""


@dataclass(frozen=True)
class StoredImage:
    media_hash: str
    media_ext: str
    width: int
    height: int


def inspect_image(data: bytes, source: str = "image") -> tuple[str, int, int]:
    """Return (extension, width, height) of encoded image bytes, or raise MediaError naming ``source``."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.verify()
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            kind, (width, height) = image.format, image.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise MediaError(f"{source}: not a readable image ({error}). Re-export it as PNG, JPEG or WebP.") from None
    if kind not in EXTENSIONS:
        raise MediaError(f"{source}: {kind} images are not supported. Convert it to PNG, JPEG or WebP.")
    return EXTENSIONS[kind], width, height


def encode_png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


class MediaStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, media_hash: str, media_ext: str) -> Path:
        if not _HASH.match(media_hash) or media_ext not in EXTENSIONS.values():
            raise MediaError(f"{media_hash!r}.{media_ext!r} is not a media file name.")
        return self.root / media_hash[:2] / f"{media_hash}.{media_ext}"

    def put(self, data: bytes, source: str = "image") -> StoredImage:
        """Store encoded image bytes (idempotent) and return where they are."""
        ext, width, height = inspect_image(data, source)
        media_hash = hashlib.sha256(data).hexdigest()
        target = self.path(media_hash, ext)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            with open(temporary, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        return StoredImage(media_hash, ext, width, height)

    def put_image(self, image: Image.Image) -> StoredImage:
        return self.put(encode_png(image))
