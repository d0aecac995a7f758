"""The content-addressed media folder.

An image file is stored once under its SHA-256: ``<media_dir>/<h[:2]>/<h>.<ext>``. The name says nothing about the
model that made it, so a file name or URL can reach the browser without revealing the model. Files are written to a
temporary name, flushed to disk and renamed, so a crash never leaves a half-written image under a real name.

Nor do the bytes name the model: every image is stored without its metadata (:func:`clean_image`), since PNG text
chunks, EXIF, XMP and C2PA manifests often record the generator (Automatic1111's ``parameters``, ``Software``).
The browser never sees these originals either: it is served display renditions (:mod:`datamodel.renditions`), one
size and format for every model; originals are kept as they are for metrics, exports and judges.

An image's size is read from its header before anything is decoded, and images of more than the ``max_image_pixels``
setting are refused (a PNG of a few kilobytes may declare 30000×30000 pixels and decode to gigabytes).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from PIL import Image, ImageOps, JpegImagePlugin, PngImagePlugin, UnidentifiedImageError, WebPImagePlugin

from core.settings import Settings

DEFAULT_MAX_PIXELS: int = Settings.max_image_pixels  # the setting's default
DEFAULT_MAX_BYTES: int = Settings.max_image_bytes
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


def _too_large(source: str, size: tuple[int, int] | None, max_pixels: int) -> MediaError:
    declared = f"{size[0]}×{size[1]} pixels ({size[0] * size[1]:,})" if size else "more pixels than Pillow accepts"
    return MediaError(f"{source}: {declared}, more than max_image_pixels ({max_pixels:,}) allows. Resize the image, "
                      "or raise ARENA_MAX_IMAGE_PIXELS if images this large are expected.")


def _declared_size(data: bytes) -> tuple[int, int] | None:
    """The width and height a PNG, JPEG or WebP header declares (read without Pillow's bomb check), or None."""
    for plugin in (PngImagePlugin.PngImageFile, JpegImagePlugin.JpegImageFile, WebPImagePlugin.WebPImageFile):
        try:
            with plugin(io.BytesIO(data)) as image:
                return image.size
        except (SyntaxError, OSError, ValueError, EOFError):
            continue
    return None


@contextlib.contextmanager
def open_image(data: bytes, source: str = "image", max_pixels: int = DEFAULT_MAX_PIXELS) -> Iterator[Image.Image]:
    """``Image.open`` of encoded bytes, refused with a MediaError naming ``source`` when the header declares more than
    ``max_pixels`` pixels; nothing is decoded before that check (Pillow reads only the header when it opens)."""
    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError:
        raise _too_large(source, _declared_size(data), max_pixels) from None
    with image:
        if image.width * image.height > max_pixels:
            raise _too_large(source, image.size, max_pixels)
        yield image


def inspect_image(data: bytes, source: str = "image", *, max_pixels: int = DEFAULT_MAX_PIXELS) -> tuple[str, int, int]:
    """Return (extension, width, height) of encoded image bytes, or raise MediaError naming ``source``.

    An image of more than ``max_pixels`` pixels is refused from its header, before it is decoded.
    """
    try:
        with open_image(data, source, max_pixels) as image:
            image.verify()
        with open_image(data, source, max_pixels) as image:
            image.load()
            kind, (width, height) = image.format, image.size
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        if isinstance(error, MediaError):
            raise
        raise MediaError(f"{source}: not a readable image ({error}). Re-export it as PNG, JPEG or WebP.") from None
    if kind not in EXTENSIONS:
        raise MediaError(f"{source}: {kind} images are not supported. Convert it to PNG, JPEG or WebP.")
    return EXTENSIONS[kind], width, height


# What an image may carry besides its pixels and colour space; anything else (text, EXIF, XMP, C2PA, private
# chunks, bytes after the end of the image) is metadata and is stripped.
_PNG_KEEP = {b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"cHRM", b"gAMA", b"iCCP", b"sBIT", b"sRGB", b"cICP",
             b"pHYs", b"bKGD"}
_WEBP_KEEP = {b"VP8 ", b"VP8L", b"VP8X", b"ALPH", b"ICCP"}
_JPEG_KEEP = {("APP0", b"JFIF\0"), ("APP14", b"Adobe"), ("APP2", b"ICC_PROFILE\0")}
_ORIENTATION = 0x0112


def _png_has_metadata(data: bytes) -> bool:
    pos = 8
    while pos + 8 <= len(data):
        length, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        if kind not in _PNG_KEEP:
            return True
        pos += 12 + length
        if kind == b"IEND":
            return pos < len(data)
    return True


def _webp_has_metadata(data: bytes) -> bool:
    pos, end = 12, 8 + int.from_bytes(data[4:8], "little")
    while pos + 8 <= min(end, len(data)):
        kind, length = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        if kind not in _WEBP_KEEP:
            return True
        pos += 8 + length + (length & 1)
    return end < len(data)


def _jpeg_has_metadata(data: bytes, image: Image.Image) -> bool:
    kept = lambda marker, payload: any(marker == m and payload.startswith(p) for m, p in _JPEG_KEEP)  # noqa: E731
    return (not all(kept(marker, payload) for marker, payload in getattr(image, "applist", []))
            or not data.rstrip(b"\0").endswith(b"\xff\xd9"))


def has_metadata(data: bytes, image: Image.Image) -> bool:
    """Whether the encoded ``data`` (opened as ``image``) carries anything but pixels and a colour profile."""
    if image.format == "PNG":
        return _png_has_metadata(data)
    if image.format == "WEBP":
        return _webp_has_metadata(data)
    return _jpeg_has_metadata(data, image)


def clean_image(data: bytes, source: str = "image", *, max_pixels: int = DEFAULT_MAX_PIXELS
                ) -> tuple[bytes, str, int, int]:
    """Encoded image bytes without metadata, with their (extension, width, height); raise MediaError naming ``source``.

    An image without metadata is returned byte for byte. Otherwise Pillow writes it again, keeping the pixels, the
    transparency and the ICC colour profile and nothing else: PNG and WebP losslessly (a lossy WebP becomes a
    lossless one with the same pixels; a PNG with 16 bits per colour channel is read, and so kept, at 8 bits), and
    JPEG re-encoded with the original's quantisation tables and chroma subsampling (no well-kept Python library
    removes JPEG segments without re-encoding; with the same tables the change is one rounding step). An EXIF
    orientation is applied to the pixels first, so the image still shows upright. Animated images are refused, and
    so are images of more than ``max_pixels`` pixels (from the header, before decoding).
    """
    ext, width, height = inspect_image(data, source, max_pixels=max_pixels)
    with Image.open(io.BytesIO(data)) as image:
        if getattr(image, "n_frames", 1) > 1:
            raise MediaError(f"{source}: animated images are not supported. Export a single frame as PNG.")
        if not has_metadata(data, image):  # the headers tell; inspect_image has already decoded the pixels once
            return data, ext, width, height
        image.load()
        upright = ImageOps.exif_transpose(image) if image.getexif().get(_ORIENTATION, 1) != 1 else image.copy()
        # Pillow's writers take some metadata (a JPEG comment, ...) from ``info``: keep only the transparency.
        upright.info = {key: image.info[key] for key in ("transparency",) if key in image.info}
        options: dict = {"icc_profile": image.info.get("icc_profile") or None}
        if image.format == "WEBP":
            options.update(lossless=True, exact=True, icc_profile=options["icc_profile"] or "")
        elif image.format == "JPEG":
            sampling = JpegImagePlugin.get_sampling(image)
            # a JPEG file opens as a JpegImageFile, which holds the quantization tables
            qtables = cast(JpegImagePlugin.JpegImageFile, image).quantization
            options.update(qtables=qtables, progressive=bool(image.info.get("progressive")),
                           **({"subsampling": sampling} if sampling != -1 else {}))
        if options["icc_profile"] is None:
            del options["icc_profile"]
        buffer = io.BytesIO()
        upright.save(buffer, format=image.format, **options)
    cleaned = buffer.getvalue()
    ext, width, height = inspect_image(cleaned, source, max_pixels=max_pixels)
    with Image.open(io.BytesIO(cleaned)) as image:
        if has_metadata(cleaned, image):  # cannot happen with Pillow's writers; never store a leaking file
            raise MediaError(f"{source}: its metadata could not be removed. Re-export it as a plain PNG.")
    return cleaned, ext, width, height


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` through a temporary file in the same folder, flushed to disk and renamed, so a
    crash never leaves a half-written file under the real name (one temporary name per writer: threads may race)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(temporary, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def encode_png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


class MediaStore:
    """The media folder at ``root``; images put into it may have at most ``max_pixels`` pixels, and files read into it
    at most ``max_bytes`` bytes (:meth:`read_file`)."""

    def __init__(self, root: str | Path, *, max_pixels: int = DEFAULT_MAX_PIXELS, max_bytes: int = DEFAULT_MAX_BYTES):
        self.root, self.max_pixels, self.max_bytes = Path(root), max_pixels, max_bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> MediaStore:
        return cls(settings.media_dir, max_pixels=settings.max_image_pixels, max_bytes=settings.max_image_bytes)

    def read_file(self, path: Path) -> bytes:
        """The bytes of the image file ``path``; MediaError naming it when it is larger than ``max_bytes`` (told from
        its size, before anything is read)."""
        size = path.stat().st_size
        if size > self.max_bytes:
            raise MediaError(f"{path}: {size:,} bytes, more than max_image_bytes ({self.max_bytes:,}) allows. Check "
                             "that it is an image, or raise ARENA_MAX_IMAGE_BYTES if images this large are expected.")
        return path.read_bytes()

    @contextlib.contextmanager
    def staging(self) -> Iterator[Staging]:
        """A private folder inside the media folder for files that are not stored yet (:class:`Staging`); it is
        deleted with whatever it still holds when the block ends, an error included."""
        created = not self.root.exists()
        self.root.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
        try:
            yield Staging(self, folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            if created:
                with contextlib.suppress(OSError):  # a media folder made for nothing goes too
                    self.root.rmdir()

    def path(self, media_hash: str, media_ext: str) -> Path:
        if not _HASH.match(media_hash) or media_ext not in EXTENSIONS.values():
            raise MediaError(f"{media_hash!r}.{media_ext!r} is not a media file name.")
        return self.root / media_hash[:2] / f"{media_hash}.{media_ext}"

    def put(self, data: bytes, source: str = "image") -> StoredImage:
        """Store encoded image bytes without their metadata (:func:`clean_image`; idempotent), return where they are."""
        return self.put_cleaned(clean_image(data, source, max_pixels=self.max_pixels))

    def put_cleaned(self, cleaned: tuple[bytes, str, int, int]) -> StoredImage:
        """Store what :func:`clean_image` returned (bytes, extension, width, height) without cleaning it again."""
        data, ext, width, height = cleaned
        media_hash = hashlib.sha256(data).hexdigest()
        target = self.path(media_hash, ext)
        if not target.exists():
            write_atomically(target, data)
        return StoredImage(media_hash, ext, width, height)

    def put_image(self, image: Image.Image) -> StoredImage:
        return self.put(encode_png(image))


class Staging:
    """Files checked and written to disk one at a time (:meth:`MediaStore.staging`), stored only when :meth:`store`
    says so: an import holds one image in memory, and stores nothing if any of its files is refused."""

    def __init__(self, media: MediaStore, folder: Path):
        self.media, self.folder = media, folder

    def put(self, cleaned: tuple[bytes, str, int, int]) -> StoredImage:
        """Write what :func:`clean_image` returned into the staging folder; where it will be stored."""
        data, ext, width, height = cleaned
        media_hash = hashlib.sha256(data).hexdigest()
        staged = self.folder / f"{media_hash}.{ext}"
        if not staged.exists():
            staged.write_bytes(data)
        return StoredImage(media_hash, ext, width, height)

    def store(self, stored: StoredImage) -> None:
        """Move a staged file to its place in the media folder (unless that file is there already)."""
        target = self.media.path(stored.media_hash, stored.media_ext)
        staged = self.folder / target.name
        if target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(staged, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(staged, target)
