"""One judge request as a value: the text and images of a user message, and the sampling parameters.

A :class:`ChatRequest` is built by the pure message builders of :mod:`judges.prompts`; it names its images by their
SHA-256 (:class:`ImageInput`), so its cache key — the SHA-256 of (endpoint, model, prompt text, image hashes,
parameters) — is computed without reading any file. Only :meth:`ChatRequest.openai_messages`, called by the engine
right before sending, reads the image bytes and turns them into data URLs.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_ENDPOINT = "https://api.openai.com/v1"
MIME = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"}


def normalize_endpoint(base_url: str | None) -> str:
    """The endpoint as it enters cache keys: empty means api.openai.com; no trailing slash."""
    return (base_url or DEFAULT_ENDPOINT).strip().rstrip("/")


@dataclass(frozen=True)
class ImageInput:
    """An image sent to the judge: a media file (``path``) or encoded bytes (``data``, e.g. a crop)."""

    sha256: str
    mime: str
    width: int
    height: int
    path: Path | None = field(default=None, compare=False)
    data: bytes | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_media(cls, media, media_hash: str, media_ext: str, width: int, height: int) -> ImageInput:
        """An image of the media folder (``media`` is an :class:`datamodel.media.MediaStore`)."""
        return cls(media_hash, MIME[media_ext], width, height, path=media.path(media_hash, media_ext))

    @classmethod
    def from_pil(cls, image) -> ImageInput:
        """A PIL image (e.g. a crop), encoded as PNG."""
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
        return cls(hashlib.sha256(data).hexdigest(), "image/png", image.width, image.height, data=data)

    def as_jpeg(self, quality: int) -> ImageInput:
        """The image as a JPEG of Pillow's ``quality``, as a script that saves ``image.save('x.jpg')`` wrote it
        (Pillow's default quality is 75; Commonsense-T2I's generate_images.py); a JPEG already is sent as it is."""
        if self.mime == "image/jpeg":
            return self
        from PIL import Image

        buffer = io.BytesIO()
        with Image.open(io.BytesIO(self.read())) as image:
            image.convert("RGB").save(buffer, format="JPEG", quality=quality)
        data = buffer.getvalue()
        return ImageInput(hashlib.sha256(data).hexdigest(), "image/jpeg", self.width, self.height, data=data)

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        if self.path is None:
            raise ValueError(f"image {self.sha256[:12]} has neither bytes nor a file.")
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(
                f"image file {self.path} is missing from the media folder. Re-import the image or check "
                "ARENA_MEDIA_DIR."
            ) from None

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.read()).decode('ascii')}"


Part = str | ImageInput


@dataclass(frozen=True)
class ChatRequest:
    """One user message (text and images in order) and the parameters of the completion.

    ``expected_output_tokens`` only feeds the dry-run cost estimate; it is not part of the request or its key.
    """

    parts: tuple[Part, ...]
    detail: str = "high"
    max_tokens: int = 1024
    temperature: float = 0.0
    expected_output_tokens: int = field(default=200, compare=False)

    @property
    def images(self) -> tuple[ImageInput, ...]:
        return tuple(part for part in self.parts if isinstance(part, ImageInput))

    @property
    def text(self) -> str:
        """The text of the message with ``<image sha256>`` where the images go (for logs and the cache row)."""
        return "".join(part if isinstance(part, str) else f"<image {part.sha256}>" for part in self.parts)

    def params(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}

    def describe(self) -> dict[str, Any]:
        """The request without image data: what the cache row stores and the key hashes."""
        content = [
            {"type": "text", "text": part} if isinstance(part, str)
            else {"type": "image", "sha256": part.sha256, "detail": self.detail}
            for part in self.parts
        ]
        return {"messages": [{"role": "user", "content": content}], "params": self.params()}

    def cache_key(self, endpoint: str, model: str) -> str:
        """SHA-256 of (endpoint, model, prompt text, image hashes, parameters)."""
        payload = {"endpoint": normalize_endpoint(endpoint), "model": model, **self.describe()}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def openai_messages(self) -> list[dict[str, Any]]:
        """The chat messages with the images as data URLs (reads the image files)."""
        content: list[dict[str, Any]] = []
        for part in self.parts:
            if isinstance(part, str):
                if part:
                    content.append({"type": "text", "text": part})
            else:
                content.append({"type": "image_url", "image_url": {"url": part.data_url(), "detail": self.detail}})
        return [{"role": "user", "content": content}]
