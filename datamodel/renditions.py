"""Display renditions: what the browser is shown of a stored image.

Models draw at different sizes (DeepFloyd IF stage I 64 px, SD 1.5 512 px, SDXL, SD3 and FLUX 1024 px) and imported
images arrive as PNG, JPEG or WebP with their own colour profiles. Served as stored, the pixel size, the format, the
profile (whose name may be the model's) or the file's length would tell the models apart before the vote. So every
battle image is served as a rendition made the same way for all of them (GenAI-Arena resizes to 512×512 for the same
reason):

1. colours converted to sRGB through the image's ICC profile when it has one (16-bit grey and CMYK included; a broken
   profile is ignored), transparency flattened on neutral grey;
2. fitted to one display box (``display_size`` on the long side, ``display_aspect``): letterboxed on neutral grey, or
   centre-cropped (``display_fit``), resampled with a Lanczos filter;
3. encoded as ``display_format`` at ``display_quality`` with fixed encoder options and nothing else in the file: no
   ICC profile, no EXIF, no XMP, no comment; an encoding longer than ``display_pad_bytes`` (pure noise, at the default
   settings) is made again at lower qualities, ten less each time, until it fits, so that every rendition is one pad
   long (before, noise rendered to twice the length and was named by it);
4. padded with zero bytes to a multiple of ``display_pad_bytes``, so that the length does not tell either (a JPEG
   decoder stops at its end-of-image marker, a WebP one at the end of its RIFF chunk).

The default fit is the centre crop: letterboxing keeps the whole image, but its bands show the image's shape, and a
model whose images have another aspect ratio than the others' is then named by its bands (the fourth security review:
40 of 40 battles). :func:`band_warning` says so at start when an arena letterboxes images of several shapes.

Renditions are files in the media folder, ``renditions/<key>/<h[:2]>/<h>.<ext>`` by the original's hash, where the key
names every rendition setting (changing one starts a new folder; an old one can be deleted). They are written
atomically. Originals stay as they are, for metrics, exports and judges.

**Rendered before served.** A rendition takes longer to make of a large original than of a small one, so one made
while a voter waits would name the model by its timing (the third security review: the time to first byte named the
model of 91.3% of fresh images with four native sizes). So renditions are never made on request: every path that adds
images renders them (:meth:`Renditions.render_missing`: ``import-images``, the demo, ``python -m generators run``),
the server renders what is missing for its settings before it serves and whenever the catalog changes, and battles
draw only images whose rendition is recorded for the settings the arena serves (the table ``display``, the view
``battle_images``: :mod:`datamodel.schema`). An image whose original cannot be read gets no rendition and is never
drawn (``images.unshowable`` says why; the server's start tries it again); one whose rendition goes missing is
withdrawn (:func:`withdraw`) until rendered again.
"""

from __future__ import annotations

import functools
import io
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

from datamodel.database import Database
from datamodel.dialect import is_not
from datamodel.media import DEFAULT_MAX_PIXELS, MediaError, MediaStore, open_image, write_atomically
from core.settings import Settings

VERSION = 2  # of the rendering below: raise it when the rendering changes, so older renditions are not served
BACKGROUND = (128, 128, 128)  # letterbox bars and flattened transparency: neutral grey, on a light or a dark page
FORMATS = {"jpeg": ("JPEG", "jpg", "image/jpeg"), "webp": ("WEBP", "webp", "image/webp")}
_SIXTEEN_BIT = ("I;16", "I;16L", "I;16B", "I;16N", "I")
RENDER_BATCH = 64  # images rendered between two writes of their rows
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenditionSpec:
    """How every battle image is shown (the ``display_*`` settings)."""

    size: int = Settings.display_size
    fit: str = Settings.display_fit
    aspect: str = Settings.display_aspect
    format: str = Settings.display_format
    quality: int = Settings.display_quality
    pad_bytes: int = Settings.display_pad_bytes

    @classmethod
    def from_settings(cls, settings: Settings) -> "RenditionSpec":
        return cls(size=settings.display_size, fit=settings.display_fit, aspect=settings.display_aspect,
                   format=settings.display_format, quality=settings.display_quality,
                   pad_bytes=settings.display_pad_bytes)

    @property
    def box(self) -> tuple[int, int]:
        """(width, height) of every rendition: ``size`` on the long side, the other side from ``aspect``."""
        width, height = (int(part) for part in self.aspect.split(":"))
        if width >= height:
            return self.size, max(1, round(self.size * height / width))
        return max(1, round(self.size * width / height)), self.size

    @property
    def ext(self) -> str:
        return FORMATS[self.format][1]

    @property
    def media_type(self) -> str:
        return FORMATS[self.format][2]

    @property
    def key(self) -> str:
        """A folder name naming every setting, e.g. ``768x768-letterbox-jpeg-q85-pad262144-v1``."""
        width, height = self.box
        return f"{width}x{height}-{self.fit}-{self.format}-q{self.quality}-pad{self.pad_bytes}-v{VERSION}"


@functools.cache
def _srgb() -> ImageCms.ImageCmsProfile:
    return ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))


def _normal_mode(image: Image.Image) -> Image.Image:
    """The image in RGB, RGBA, L, LA or CMYK, whatever its PNG, JPEG or WebP mode (palette, 1-bit, 16-bit, tRNS)."""
    if image.mode in _SIXTEEN_BIT:  # 16-bit grey: Pillow's own conversion to 8 bits clips at 255 instead of scaling
        image = image.convert("I").point(lambda value: value / 257).convert("L")
    if image.mode not in ("RGB", "RGBA", "L", "LA", "CMYK") or "transparency" in image.info:
        has_alpha = "transparency" in image.info or image.mode in ("PA", "RGBa", "La")
        image = image.convert("RGBA" if has_alpha else "RGB")
    return image


def _to_srgb(image: Image.Image, icc: bytes | None) -> tuple[Image.Image, Image.Image | None]:
    """(RGB colours in sRGB, the alpha channel or None) of an image of a :func:`_normal_mode` mode.

    The colours go through the image's ICC profile when it has one; a broken profile, or one that does not fit the
    pixels, is ignored and the pixels taken as sRGB, as browsers do.
    """
    alpha = image.getchannel("A") if image.mode in ("RGBA", "LA") else None
    colours = image.convert({"RGBA": "RGB", "LA": "L"}.get(image.mode, image.mode))
    if icc:
        try:
            profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            return ImageCms.profileToProfile(colours, profile, _srgb(), outputMode="RGB"), alpha
        except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
            pass
    return colours.convert("RGB"), alpha


def _geometry(size: tuple[int, int], box: tuple[int, int], fit: str):
    """(content size, source box, offset): the part of the image shown, its size, and where it sits in the box."""
    (width, height), (box_width, box_height) = size, box
    if fit == "crop":
        scale = max(box_width / width, box_height / height)
        shown_width, shown_height = box_width / scale, box_height / scale
        left, top = (width - shown_width) / 2, (height - shown_height) / 2
        return box, (left, top, left + shown_width, top + shown_height), (0, 0)
    scale = min(box_width / width, box_height / height)
    content = (max(1, min(box_width, round(width * scale))), max(1, min(box_height, round(height * scale))))
    return content, (0, 0, width, height), ((box_width - content[0]) // 2, (box_height - content[1]) // 2)


def render(data: bytes, spec: RenditionSpec, source: str = "image", *, max_pixels: int = DEFAULT_MAX_PIXELS) -> bytes:
    """The display rendition of encoded image bytes (see the module docstring); MediaError naming ``source``.

    The colour conversion runs at the smaller of the two sizes: after resizing a large image, before enlarging a small
    one (the profile's transform costs about as much as the resize per pixel).
    """
    box = spec.box
    try:
        with open_image(data, source, max_pixels) as image:
            if image.format == "JPEG":  # decode a large JPEG at a reduced scale that still covers its part of the box
                content, crop, _ = _geometry(image.size, box, spec.fit)
                scale = content[0] / (crop[2] - crop[0])
                image.draft(image.mode, (max(1, int(image.width * scale)), max(1, int(image.height * scale))))
            image.load()
            icc = image.info.get("icc_profile")
            image = ImageOps.exif_transpose(image)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        if isinstance(error, MediaError):
            raise
        raise MediaError(f"{source}: not a readable image ({error}); it cannot be shown.") from None
    image = _normal_mode(image)
    content, crop, offset = _geometry(image.size, box, spec.fit)
    shrink = content[0] * content[1] < image.width * image.height
    if shrink:
        image = image.resize(content, Image.Resampling.LANCZOS, box=crop)
    colours, alpha = _to_srgb(image, icc)
    if alpha is not None:
        flat = Image.new("RGB", colours.size, BACKGROUND)
        flat.paste(colours, mask=alpha)
        colours = flat
    if not shrink:
        colours = colours.resize(content, Image.Resampling.LANCZOS, box=crop)
    shown = Image.new("RGB", box, BACKGROUND)  # a fresh image: nothing of the original's info reaches the writer
    shown.paste(colours, offset)
    body = _encoded(shown, spec, spec.quality)
    for quality in range(spec.quality - 10, 0, -10):  # too long for one pad: lower qualities until it fits
        if not spec.pad_bytes or len(body) <= spec.pad_bytes:
            break
        body = _encoded(shown, spec, quality)
    if spec.pad_bytes:
        body += b"\0" * (-len(body) % spec.pad_bytes)
    return body


def _encoded(shown: Image.Image, spec: RenditionSpec, quality: int) -> bytes:
    """``shown`` encoded as ``spec``'s format at ``quality``, with the fixed encoder options."""
    buffer = io.BytesIO()
    if spec.format == "jpeg":
        shown.save(buffer, format="JPEG", quality=quality, subsampling="4:2:0", optimize=False, progressive=False)
    else:
        shown.save(buffer, format="WEBP", quality=quality, method=4)
    return buffer.getvalue()


def band_warning(db: Database, spec: RenditionSpec) -> str | None:
    """What to tell the operator when ``spec`` letterboxes the images of models whose shapes differ (their bands
    would name them), else None: the models whose images have another aspect ratio than the display's."""
    if spec.fit != "letterbox":
        return None
    width, height = (int(part) for part in spec.aspect.split(":"))
    rows = db.execute("SELECT m.name, i.width, i.height FROM images i JOIN models m ON m.id = i.model_id "
                      "GROUP BY m.name, i.width, i.height").fetchall()
    shapes: dict[str, set[str]] = {}
    for name, w, h in rows:
        shape = "the display's" if abs(w * height - h * width) * 100 < max(w * height, 1) else f"{w}:{h}"
        shapes.setdefault(name, set()).add(shape)
    if len({frozenset(found) for found in shapes.values()}) <= 1:
        return None
    odd = sorted(name for name, found in shapes.items() if found != {"the display's"})
    return (f"ARENA_DISPLAY_FIT is letterbox and the images of {', '.join(odd[:10])} have another aspect ratio than "
            f"the display's ({spec.aspect}) or than other models': their grey bands name them in a battle. Set "
            "ARENA_DISPLAY_FIT=crop (the default), or make every model's images the same shape.")


class Renditions:
    """The display renditions of the images in ``media``, made as ``spec`` says, cached in the media folder."""

    def __init__(self, media: MediaStore, spec: RenditionSpec):
        self.media, self.spec = media, spec
        self.root = media.root / "renditions" / spec.key

    @classmethod
    def from_settings(cls, media: MediaStore, settings: Settings) -> "Renditions":
        return cls(media, RenditionSpec.from_settings(settings))

    def path(self, media_hash: str) -> Path:
        self.media.path(media_hash, "png")  # checks that it is a hash
        return self.root / media_hash[:2] / f"{media_hash}.{self.spec.ext}"

    def get(self, media_hash: str, media_ext: str) -> bytes:
        """The rendition of the stored image ``media_hash``: from the folder, or made from the original and saved.

        Raises OSError when neither the rendition nor the original can be read, MediaError when the original is not
        a showable image.
        """
        target = self.path(media_hash)
        try:
            return target.read_bytes()
        except FileNotFoundError:
            pass
        original = self.media.path(media_hash, media_ext)
        body = render(original.read_bytes(), self.spec, str(original), max_pixels=self.media.max_pixels)
        write_atomically(target, body)
        return body

    def warm(self, media_hash: str, media_ext: str) -> bool:
        """Make the rendition of a stored image unless it exists; True when it was made now."""
        if self.path(media_hash).exists():
            return False
        self.get(media_hash, media_ext)
        return True

    def render_missing(self, db: Database, *, retry_unshowable: bool = False, verify: bool = False,
                       workers: int | None = None,
                       progress: Callable[[int, int], None] | None = None) -> "RenderReport":
        """Render every image of ``db`` whose rendition for these settings is not recorded, and record it
        (``images.rendition``); an image whose original cannot be read is recorded as unshowable (with why) and left
        out of battles. Images already unshowable are tried again only with ``retry_unshowable``, and renditions
        recorded are checked to be in the folder only with ``verify`` (the server's start: a stat per file). An
        arena without a display key gets this one (:func:`claim_display` is the server's).

        Renders on ``workers`` threads (default: the CPUs; Pillow releases the interpreter while it decodes, resizes
        and encodes) and records them ``RENDER_BATCH`` at a time; ``progress(done, total)`` is told after each batch.
        A rendition already in the folder is recorded without being made again.
        """
        key = self.spec.key
        with db.conn:
            db.execute("INSERT INTO display (id, rendition, set_at) VALUES (1, ?, ?) ON CONFLICT (id) DO NOTHING",
                       [key, time.time()])
        rows = db.execute(f"SELECT media_hash, media_ext, COUNT(*) FROM images WHERE rendition {is_not(db)} ? "
                          + ("" if retry_unshowable else "AND unshowable IS NULL ") + "GROUP BY media_hash, media_ext",
                          [key]).fetchall()
        if verify:
            recorded = db.execute("SELECT media_hash, media_ext, COUNT(*) FROM images WHERE rendition = ? "
                                  "GROUP BY media_hash, media_ext", [key]).fetchall()
            lost = [row for row in recorded if not self.path(row[0]).is_file()]
            for media_hash, _, _ in lost:
                withdraw(db, media_hash)
            rows += lost
        report = RenderReport(total=sum(count for _, _, count in rows))
        if not rows:
            return report

        def make(row) -> tuple[str, str | None, bool]:
            media_hash, media_ext, _ = row
            try:
                return media_hash, None, self.warm(media_hash, media_ext)
            except (OSError, MediaError) as error:
                return media_hash, str(error), False

        done = 0
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            for start in range(0, len(rows), RENDER_BATCH):
                results = list(pool.map(make, rows[start:start + RENDER_BATCH]))
                with db.conn:
                    for media_hash, error, made in results:
                        if error is None:
                            changed = db.execute("UPDATE images SET rendition = ?, unshowable = NULL WHERE media_hash "
                                                 f"= ? AND rendition {is_not(db)} ?", [key, media_hash, key]).rowcount
                            report.rendered += changed
                            report.made += made
                        else:
                            report.unshowable += db.execute(
                                "UPDATE images SET rendition = NULL, unshowable = ? WHERE media_hash = ?",
                                [error, media_hash]).rowcount
                            log.error("image %s cannot be shown and is left out of battles: %s", media_hash, error)
                done += sum(count for _, _, count in rows[start:start + RENDER_BATCH])
                if progress is not None:
                    progress(done, report.total)
        return report


@dataclass
class RenderReport:
    """What :meth:`Renditions.render_missing` did: images found without a rendition (``total``), recorded as rendered
    (``rendered``), rendition files made now (``made``; others were in the folder), and images found unshowable."""

    total: int = 0
    rendered: int = 0
    made: int = 0
    unshowable: int = 0


def display_key(db: Database) -> str | None:
    """The rendition key battles are drawn for (the table ``display``), or None before any image was rendered."""
    row = db.execute("SELECT rendition FROM display WHERE id = 1").fetchone()
    return row[0] if row else None


def claim_display(db: Database, spec: RenditionSpec) -> None:
    """Draw battles for ``spec`` from now on (the server does this at start, with its settings): only images rendered
    this way are drawn until :meth:`Renditions.render_missing` records the others."""
    with db.conn:
        db.execute("INSERT INTO display (id, rendition, set_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                   "rendition = excluded.rendition, set_at = excluded.set_at "
                   "WHERE display.rendition != excluded.rendition",
                   [spec.key, time.time()])


def unrendered_count(db: Database, key: str) -> int:
    """How many images have no rendition recorded for the rendition ``key``."""
    return db.execute(f"SELECT COUNT(*) FROM images WHERE rendition {is_not(db)} ?", [key]).fetchone()[0]


def withdraw(db: Database, media_hash: str) -> int:
    """Leave the images of ``media_hash`` out of battles until :meth:`Renditions.render_missing` renders them again
    (their rendition file went missing); returns the images withdrawn."""
    with db.conn:
        return db.execute("UPDATE images SET rendition = NULL WHERE media_hash = ? AND rendition IS NOT NULL",
                          [media_hash]).rowcount
