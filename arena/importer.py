"""Importing your own images: a folder laid out ``<model>/<prompt key>.<png|jpg|jpeg|webp>`` plus a prompts file.

The prompts file is a prompt list as :mod:`suites.generic` reads it: CSV (header row) or JSONL with at least
``key`` and ``text``; optional ``suite``, ``subset``, ``variant``, ``role`` and ``metadata`` (a JSON object).

Every file is checked before anything is stored: a bad prompts row, an image whose key is not in the prompts file,
two images of one model for one key (``cat.png`` and ``cat.jpg``), an unknown file type, a file larger than the
``max_image_bytes`` setting (told from its size, before it is read), an unreadable or animated image, or one of more
pixels than the ``max_image_pixels`` setting allows (read from its header: a decompression bomb is never decoded)
raises :class:`ImageImportError` naming the file(s), and nothing is imported: no row and no media file. Files are
checked one at a time and staged on disk (:meth:`datamodel.media.MediaStore.staging`), so the import holds one image
in memory whatever the folder's size. Images are stored without their metadata (PNG text chunks, EXIF, XMP, ...: see
:func:`datamodel.media.clean_image`), which often names the model. Importing the same folder again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from datamodel.catalog import CatalogError, PromptSpec, add_image, add_model, add_prompts
from datamodel.media import MediaError, MediaStore, Staging, StoredImage, clean_image
from datamodel.renditions import Renditions
from suites.common import SuiteError
from suites.generic import load_prompt_list

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


class ImageImportError(ValueError):
    """The import was refused and nothing was written; the message names the file and the fix."""


@dataclass(frozen=True)
class ImageImport:
    models: int
    prompts: int
    images: int
    new_images: int


def read_prompts_file(path: Path, suite: str) -> dict[str, PromptSpec]:
    """{key: PromptSpec} from a prompt list (the generic suite format: CSV or JSONL with key and text)."""
    if not path.exists():
        raise ImageImportError(f"{path}: prompts file not found. Pass --prompts with a CSV or JSONL file.")
    try:
        specs = load_prompt_list(path, suite=suite)
    except SuiteError as error:
        raise ImageImportError(str(error)) from None
    by_key: dict[str, PromptSpec] = {}
    for spec in specs:
        if spec.item_key in by_key:
            raise ImageImportError(
                f"{spec.source}: duplicate key {spec.item_key!r}. Keys name image files, so each must be unique."
            )
        by_key[spec.item_key] = spec
    return by_key


def import_images(
    db: sqlite_utils.Database, media: MediaStore, folder: str | Path, prompts_file: str | Path, *,
    suite: str = "imported", renditions: Renditions | None = None,
) -> ImageImport:
    """Import ``<folder>/<model>/<prompt key>.<ext>`` with the prompts of ``prompts_file``; all or nothing.

    Everything is read, checked, stripped of metadata and staged first; the rows and the media files are stored last,
    in one transaction (a media file of a transaction that then fails is unreferenced, content-addressed and
    harmless). With ``renditions``, every image lacking its display rendition is rendered after the import
    (:meth:`datamodel.renditions.Renditions.render_missing`); battles draw only rendered images.
    """
    folder, prompts_file = Path(folder), Path(prompts_file)
    specs = read_prompts_file(prompts_file, suite)
    if not folder.is_dir():
        raise ImageImportError(f"{folder}: not a folder. Lay images out as <folder>/<model>/<prompt key>.png.")
    before = db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
    with media.staging() as staging:  # deleted at the end, with any file not stored
        planned = _check_and_stage(folder, prompts_file, specs, media, staging)
        try:
            with db.conn:  # rows first: a refused prompt (CatalogError) leaves no media file behind
                ids = dict(zip(specs, add_prompts(db, specs.values()).ids))
                model_ids = {name: add_model(db, name, source="imported")
                             for name in sorted({m for m, _ in planned})}
                for (model, key), (stored, file) in planned.items():
                    staging.store(stored)
                    add_image(db, prompt_id=ids[key], model_id=model_ids[model], stored=stored,
                              params={"imported_from": file.name})
        except CatalogError as error:
            raise ImageImportError(str(error)) from None
    if renditions is not None:
        renditions.render_missing(db)
    after = db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
    return ImageImport(models=len(model_ids), prompts=len(specs), images=len(planned), new_images=after - before)


def _check_and_stage(folder: Path, prompts_file: Path, specs: dict[str, PromptSpec], media: MediaStore,
                     staging: Staging) -> dict[tuple[str, str], tuple[StoredImage, Path]]:
    """{(model, prompt key): (the image as it will be stored, its file)} of every image in ``folder``, each checked,
    stripped of its metadata and staged one at a time (at most ``media.max_bytes`` read at once); raises
    ImageImportError naming the first file refused."""
    planned: dict[tuple[str, str], tuple[StoredImage, Path]] = {}
    for model_dir in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        if not model_dir.is_dir():
            raise ImageImportError(f"{model_dir}: expected only model folders in {folder} (<model>/<prompt key>.png).")
        for file in sorted(p for p in model_dir.iterdir() if not p.name.startswith(".")):
            if file.suffix.lower() not in IMAGE_SUFFIXES:
                raise ImageImportError(f"{file}: not an image file name; use .png, .jpg, .jpeg or .webp.")
            if file.stem not in specs:
                raise ImageImportError(f"{file}: no prompt with key {file.stem!r} in {prompts_file}. Add it there.")
            slot = (model_dir.name.strip(), file.stem)
            if slot in planned:
                raise ImageImportError(
                    f"{planned[slot][1]} and {file}: two images of model {slot[0]!r} for prompt key {slot[1]!r}. "
                    "Keep one of them (one image per model and prompt)."
                )
            try:  # validated (at most media.max_pixels, from the header) and stripped, then staged
                planned[slot] = (staging.put(clean_image(media.read_file(file), str(file),
                                                         max_pixels=media.max_pixels)), file)
            except MediaError as error:
                raise ImageImportError(str(error)) from None
    if not planned:
        raise ImageImportError(f"{folder}: no images found. Lay them out as <model>/<prompt key>.png.")
    return planned
