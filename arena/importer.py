"""Importing your own images: a folder laid out ``<model>/<prompt key>.<png|jpg|jpeg|webp>`` plus a prompts file.

The prompts file is a prompt list as :mod:`arena.suites.generic` reads it: CSV (header row) or JSONL with at least
``key`` and ``text``; optional ``suite``, ``subset``, ``variant``, ``role`` and ``metadata`` (a JSON object). Every file is checked before anything is written: a bad prompts row, an
image whose key is not in the prompts file, an unknown file type or an unreadable image raises
:class:`ImportError_` naming the file, and nothing is imported. Importing the same folder again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from arena.catalog import PromptSpec, add_image, add_model, add_prompts
from arena.media import MediaError, MediaStore, inspect_image
from arena.suites.common import SuiteError
from arena.suites.generic import load_prompt_list

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
    db: sqlite_utils.Database, media: MediaStore, folder: str | Path, prompts_file: str | Path, *, suite: str = "imported"
) -> ImageImport:
    folder, prompts_file = Path(folder), Path(prompts_file)
    specs = read_prompts_file(prompts_file, suite)
    if not folder.is_dir():
        raise ImageImportError(f"{folder}: not a folder. Lay images out as <folder>/<model>/<prompt key>.png.")
    planned: list[tuple[str, str, bytes, Path]] = []
    for model_dir in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        if not model_dir.is_dir():
            raise ImageImportError(f"{model_dir}: expected only model folders in {folder} (<model>/<prompt key>.png).")
        for file in sorted(p for p in model_dir.iterdir() if not p.name.startswith(".")):
            if file.suffix.lower() not in IMAGE_SUFFIXES:
                raise ImageImportError(f"{file}: not an image file name; use .png, .jpg, .jpeg or .webp.")
            if file.stem not in specs:
                raise ImageImportError(f"{file}: no prompt with key {file.stem!r} in {prompts_file}. Add it there.")
            data = file.read_bytes()
            try:
                inspect_image(data, str(file))
            except MediaError as error:
                raise ImageImportError(str(error)) from None
            planned.append((model_dir.name, file.stem, data, file))
    if not planned:
        raise ImageImportError(f"{folder}: no images found. Lay them out as <model>/<prompt key>.png.")
    stored = [(model, key, media.put(data, str(file)), file) for model, key, data, file in planned]
    before = db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
    with db.conn:
        ids = dict(zip(specs, add_prompts(db, specs.values()).ids))
        model_ids = {name: add_model(db, name, source="imported") for name in sorted({m for m, *_ in stored})}
        for model, key, image, file in stored:
            add_image(db, prompt_id=ids[key], model_id=model_ids[model], stored=image,
                      params={"imported_from": file.name})
    after = db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
    return ImageImport(models=len(model_ids), prompts=len(specs), images=len(stored), new_images=after - before)
