"""A Hugging Face dataset of the votes with their two images (``python -m arena export DIR --format hf``).

The folder ``DIR`` holds ``data/train-00000-of-00001.parquet`` and a dataset card ``README.md`` whose YAML front
matter declares the licence, the ``default`` config and the features, so ``datasets.load_dataset(DIR)`` (or
``load_dataset("parquet", data_files=...)``, which reads the same features from the Parquet schema's
``huggingface`` metadata) gives the images as ``datasets.Image`` values. One row per counted vote (excluded votes
are left out, as by the leaderboard), oldest first, in the Pick-a-Pic style: the prompt, the two images as shown
(the original bytes from the media store, never re-encoded), the models, ``winner`` with FastChat's meanings
(``model_a | model_b | tie | tie (bothbad)``), the voter kind and the suite fields. Rows are written a chunk at a
time, so memory holds one chunk's images, into a temporary file renamed into place at the end: an export that fails
(a full disk, a missing image) leaves no truncated Parquet file, and an earlier export in the folder stays whole.

:func:`push_to_hub` uploads such a folder with ``huggingface_hub`` (its own token discovery: ``HF_TOKEN`` or a
cached login) when a token and the network exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from datamodel.catalog import publish_images
from datamodel.database import Database
from datamodel.media import MediaStore

HF_CHUNK_ROWS = 256  # votes (two images each) held at a time
DATA_FILE = "data/train-00000-of-00001.parquet"
DEFAULT_LICENSE = "cc-by-4.0"
IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])  # datasets' Image storage

# name: (Arrow type, datasets feature, meaning). The card's schema table and the Parquet schema come from here.
FIELDS = {
    "vote_id": (pa.int64(), {"dtype": "int64"}, "the vote's id in the arena database"),
    "battle_id": (pa.string(), {"dtype": "string"}, "the battle (one pair of images shown once)"),
    "prompt": (pa.string(), {"dtype": "string"}, "the text prompt of both images"),
    "image_a": (IMAGE, {"dtype": "image"}, "the image shown on the left (original bytes)"),
    "image_b": (IMAGE, {"dtype": "image"}, "the image shown on the right (original bytes)"),
    "model_a": (pa.string(), {"dtype": "string"}, "the model of image_a"),
    "model_b": (pa.string(), {"dtype": "string"}, "the model of image_b"),
    "winner": (pa.string(), {"dtype": "string"}, "model_a, model_b, tie or tie (bothbad), as in FastChat"),
    "voter_kind": (pa.string(), {"dtype": "string"}, "human or judge"),
    "suite": (pa.string(), {"dtype": "string"}, "the prompt suite, e.g. taxonomy"),
    "subset": (pa.string(), {"dtype": "string"}, "the suite's subset, e.g. Easy"),
    "variant": (pa.string(), {"dtype": "string"}, "the prompt variant, e.g. with_definition"),
    "item_key": (pa.string(), {"dtype": "string"}, "the prompt's key within its suite"),
    "category": (pa.string(), {"dtype": "string"}, "the prompt's category (metadata), if any"),
    "tstamp": (pa.float64(), {"dtype": "float64"}, "when the vote was cast, unix seconds"),
}


def arrow_schema(fields: dict) -> pa.Schema:
    """The Parquet schema of ``fields`` (name: (Arrow type, datasets feature, meaning)), with the ``huggingface``
    metadata that gives ``datasets`` the features."""
    return pa.schema([(name, arrow) for name, (arrow, _, _) in fields.items()]).with_metadata(
        {"huggingface": json.dumps({"info": {"features": {
            name: {**feature, "_type": "Image"} if feature["dtype"] == "image" else {**feature, "_type": "Value"}
            for name, (_, feature, _) in fields.items()}}})})


SCHEMA = arrow_schema(FIELDS)
VOTES_SUMMARY = ("Pairwise human and judge preferences between text-to-image models, exported from a text-to-image "
                 "arena\n(`python -m arena export DIR --format hf`): {rows} votes, one row per vote, oldest first. "
                 "Votes an administrator\nexcluded are left out. `winner` follows FastChat's battle format.")

_ROWS_SQL = """
SELECT v.id, v.battle_id, p.text, ia.media_hash, ia.media_ext, ib.media_hash, ib.media_ext, ml.name, mr.name,
       CASE v.outcome WHEN 'A' THEN 'model_a' WHEN 'B' THEN 'model_b' WHEN 'tie' THEN 'tie' ELSE 'tie (bothbad)' END,
       v.voter_kind, p.suite, p.subset, p.variant, p.item_key, json_extract(p.metadata, '$.category'),
       v.voted_at
FROM votes v JOIN prompts p ON p.id = v.prompt_id
JOIN images ia ON ia.id = v.left_image_id JOIN images ib ON ib.id = v.right_image_id
JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id
WHERE v.excluded = 0 ORDER BY v.id
"""


def _image(media: MediaStore, media_hash: str, media_ext: str) -> dict:
    path = media.path(media_hash, media_ext)
    try:
        return {"bytes": path.read_bytes(), "path": f"{media_hash}.{media_ext}"}
    except FileNotFoundError:
        raise FileNotFoundError(f"Image {path} of the database is missing from the media folder: restore the media "
                                f"folder (MEDIA_DIR) that belongs to this database, then export again.") from None


def _batch(rows: list[tuple], media: MediaStore) -> pa.RecordBatch:
    columns = list(zip(*rows))
    values = {"vote_id": columns[0], "battle_id": columns[1], "prompt": columns[2],
              "image_a": [_image(media, h, e) for h, e in zip(columns[3], columns[4])],
              "image_b": [_image(media, h, e) for h, e in zip(columns[5], columns[6])]}
    for name, column in zip(list(FIELDS)[5:], columns[7:]):
        values[name] = column
    return pa.RecordBatch.from_arrays([pa.array(values[name], FIELDS[name][0]) for name in FIELDS], schema=SCHEMA)


def dataset_card(rows: int, *, license_id: str = DEFAULT_LICENSE, pretty_name: str = "Text-to-image arena votes",
                 fields: dict = FIELDS, summary: str = VOTES_SUMMARY, tags: tuple[str, ...] = ("preference", "arena"),
                 what: str = "votes") -> str:
    """The dataset card (README.md): YAML front matter (licence, config, features) and the schema as a table;
    ``summary`` (with ``{rows}``) opens the text, ``what`` names the rows in the licence note."""
    features = "\n".join(f"  - name: {name}\n    dtype: {feature['dtype']}" for name, (_, feature, _) in fields.items())
    table = "\n".join(f"| `{name}` | {feature['dtype']} | {meaning} |" for name, (_, feature, meaning) in fields.items())
    tag_lines = "\n".join(f"- {tag}" for tag in tags)
    return f"""---
license: {license_id}
pretty_name: {pretty_name}
task_categories:
- text-to-image
tags:
{tag_lines}
configs:
- config_name: default
  data_files:
  - split: train
    path: {DATA_FILE}
dataset_info:
  features:
{features}
  splits:
  - name: train
    num_examples: {rows}
---

# {pretty_name}

{summary.format(rows=rows)}

| Column | Type | Meaning |
|---|---|---|
{table}

Load it with `datasets.load_dataset("path/to/this/folder")`.

## Licence

{license_id}: set the licence of your images and {what} before publishing (`license:` above).
"""


def write_folder(folder: str | Path, schema: pa.Schema, batches, card) -> int:
    """Write ``batches`` (Arrow record batches of ``schema``) as a dataset folder's one Parquet file and the card
    ``card(rows)`` as its README.md; return the rows. The folder is made; a file in its place is a ValueError. The
    Parquet file is written under a temporary name and renamed into place once whole, so a failed export leaves no
    truncated file."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file: the hf format writes a folder; give a folder path.")
    target = folder / DATA_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")  # renamed into place once whole
    rows = 0
    try:
        with pq.ParquetWriter(partial, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
                rows += batch.num_rows
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    (folder / "README.md").write_text(card(rows), encoding="utf-8")
    return rows


def write_published_folder(folder: str | Path, schema: pa.Schema, cursor, chunk_rows: int, to_batch, card,
                           publish) -> int:
    """:func:`write_folder` over the rows of ``cursor`` (the row's id first, oldest first), ``chunk_rows`` at a time
    through ``to_batch(chunk)``; once the folder is whole, ``publish(last id written)`` records its images as
    published (:mod:`datamodel.catalog`). Returns the rows."""
    last_id = 0

    def batches():
        nonlocal last_id
        while chunk := cursor.fetchmany(chunk_rows):
            yield to_batch(chunk)
            last_id = chunk[-1][0]

    rows = write_folder(folder, schema, batches(), card)
    publish(last_id)
    return rows


def write_hf_dataset(db: Database, media: MediaStore, folder: str | Path, *,
                     chunk_rows: int = HF_CHUNK_ROWS, license_id: str = DEFAULT_LICENSE,
                     keep_in_battles: bool = False) -> int:
    """Write the counted votes with their images as a Hugging Face dataset folder (module docstring); the rows.

    The images written are recorded as published (:func:`datamodel.catalog.publish_images`) and, unless
    ``keep_in_battles``, withheld from battles from now on: anyone holding the dataset could render them as the arena
    does and name them in a battle before the vote."""
    return write_published_folder(
        folder, SCHEMA, db.execute(_ROWS_SQL), chunk_rows, lambda chunk: _batch(chunk, media),
        lambda rows: dataset_card(rows, license_id=license_id),
        lambda last_vote: publish_images(db, last_vote, withhold=not keep_in_battles))


def push_to_hub(folder: str | Path, repo_id: str, *, token: str | None = None, private: bool = True) -> str:
    """Upload a folder written by :func:`write_hf_dataset` to the dataset repository ``repo_id``; its URL.

    ``huggingface_hub`` finds the token itself (``HF_TOKEN`` or ``huggingface-cli login``) unless one is given.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, LocalTokenNotFoundError

    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                          commit_message="Arena votes export")
    except LocalTokenNotFoundError:
        raise ValueError("No Hugging Face token: set HF_TOKEN (a write token) or run `huggingface-cli login`, "
                         "then push again.") from None
    except (HfHubHTTPError, OSError) as error:
        raise ValueError(f"Pushing {folder} to {repo_id} failed ({error}); check the network and the token's "
                         f"write access, or upload the folder by hand.") from None
    return f"https://huggingface.co/datasets/{repo_id}"
