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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from datamodel.catalog import CatalogError, PromptSpec, add_image, add_model, add_prompts, image_count, prompt_items
from datamodel.database import Database
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


def existing_prompts(db: Database, suite: str, variant: str | None = None) -> dict[str, list[int]]:
    """{item key: prompt ids} of the prompts of ``suite`` already in the database (of ``variant``, or every variant).
    An item key that names prompts of two subsets is refused: a file name could not say which one it is."""
    keys: dict[str, list[int]] = {}
    subsets: dict[str, set[str]] = {}
    for key, subset, prompt_id in prompt_items(db, suite, variant):
        keys.setdefault(key, []).append(prompt_id)
        subsets.setdefault(key, set()).add(subset)
    clash = sorted(key for key, found in subsets.items() if len(found) > 1)
    if clash:
        raise ImageImportError(f"item key {clash[0]!r} of suite {suite!r} is in subsets "
                               f"{', '.join(sorted(subsets[clash[0]]))}: a file name cannot say which. Import with a "
                               "prompts file (--prompts) instead.")
    if not keys:
        raise ImageImportError(f"suite {suite!r} has no prompts{f' of variant {variant!r}' if variant else ''} in the "
                               "database: build or import the suite first, or pass --prompts.")
    return keys


def import_images(
    db: Database, media: MediaStore, folder: str | Path, prompts_file: str | Path | None, *,
    suite: str = "imported", renditions: Renditions | None = None, variant: str | None = None,
) -> ImageImport:
    """Import ``<folder>/<model>/<prompt key>.<ext>`` with the prompts of ``prompts_file``; all or nothing.

    Without a prompts file the images are for ``suite``'s prompts already in the database, a file's name being a
    prompt's item key (the taxonomy paper's retrieval images, ``<wordnet_id>.png``, for its imported benchmark): each
    image goes to every variant of its item (or to ``variant`` only), and no prompt is written or changed.

    Everything is read, checked, stripped of metadata and staged first; the rows and the media files are stored last,
    in one transaction (a media file of a transaction that then fails is unreferenced, content-addressed and
    harmless). With ``renditions``, every image lacking its display rendition is rendered after the import
    (:meth:`datamodel.renditions.Renditions.render_missing`); battles draw only rendered images.
    """
    folder = Path(folder)
    if prompts_file is not None and variant is not None:
        raise ImageImportError("--variant picks among the prompts already in the database: drop --prompts, or give "
                               "the variant in the prompts file's variant column.")
    from_file: dict[str, PromptSpec] = {}  # the prompts file's prompts (none: the database's are the targets)
    specs: Mapping[str, PromptSpec | None]
    if prompts_file is None:
        targets = existing_prompts(db, suite, variant)
        specs = dict.fromkeys(targets)
        prompts_file = Path(f"the {suite} prompts in the database")
    else:
        prompts_file = Path(prompts_file)
        specs = from_file = read_prompts_file(prompts_file, suite)
        targets = None
    if not folder.is_dir():
        raise ImageImportError(f"{folder}: not a folder. Lay images out as <folder>/<model>/<prompt key>.png.")
    before = image_count(db)
    with media.staging() as staging:  # deleted at the end, with any file not stored
        planned = _check_and_stage(folder, prompts_file, specs, media, staging, suite=suite,
                                   in_database=targets is not None)
        try:
            with db.conn:  # rows first: a refused prompt (CatalogError) leaves no media file behind
                ids = ({key: targets[key] for key in specs} if targets is not None else
                       {key: [prompt_id] for key, prompt_id in zip(specs, add_prompts(db, from_file.values()).ids)})
                model_ids = {name: add_model(db, name, source="imported")
                             for name in sorted({m for m, _ in planned})}
                for (model, key), (stored, file) in planned.items():
                    staging.store(stored)
                    for prompt_id in ids[key]:
                        add_image(db, prompt_id=prompt_id, model_id=model_ids[model], stored=stored,
                                  params={"imported_from": file.name})
        except CatalogError as error:
            raise ImageImportError(str(error)) from None
    if renditions is not None:
        renditions.render_missing(db)
    after = image_count(db)
    return ImageImport(models=len(model_ids), prompts=len(specs), images=len(planned), new_images=after - before)


def _check_and_stage(folder: Path, prompts_file: Path, specs: Mapping[str, PromptSpec | None], media: MediaStore,
                     staging: Staging, *, suite: str, in_database: bool,
                     ) -> dict[tuple[str, str], tuple[StoredImage, Path]]:
    """{(model, prompt key): (the image as it will be stored, its file)} of every image in ``folder``, each checked,
    stripped of its metadata and staged one at a time (at most ``media.max_bytes`` read at once); raises
    ImageImportError naming the first file refused. ``in_database``: the keys are item keys of ``suite``'s prompts
    already in the database (no prompts file)."""
    planned: dict[tuple[str, str], tuple[StoredImage, Path]] = {}
    for model_dir in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        if not model_dir.is_dir():
            raise ImageImportError(f"{model_dir}: expected only model folders in {folder} (<model>/<prompt key>.png).")
        for file in sorted(p for p in model_dir.iterdir() if not p.name.startswith(".")):
            if file.suffix.lower() not in IMAGE_SUFFIXES:
                raise ImageImportError(f"{file}: not an image file name; use .png, .jpg, .jpeg or .webp.")
            if file.stem not in specs:
                raise ImageImportError(f"{file}: no prompt with key {file.stem!r} in {prompts_file}. Add it there."
                                       if not in_database else
                                       f"{file}: no prompt of suite {suite!r} has the item key {file.stem!r}. Name the "
                                       "file after one (its item key: the wordnet_id of an imported benchmark).")
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
