"""Peers' published human preferences over image pairs, as ``import-votes`` formats: GenAI-Bench and Pick-a-Pic.

Both are Hugging Face parquet files with the two images inside each record. They are read a record batch at a time
(pyarrow's ``iter_batches``), only the columns the import needs: without the images a million pairs stream in well
under a minute and a few hundred MB (``python -m tools.import_bench --format pick-a-pic``).

``genai-bench``
    GenAI-Bench's image-generation preferences (Jiang et al. 2024, GenAI-Arena; dataset TIGER-Lab/GenAI-Bench, config
    ``image_generation``): ``prompt``, ``left_model``, ``left_image``, ``right_model``, ``right_image``,
    ``vote_type`` in ``leftvote`` (A better), ``rightvote`` (B better), ``tievote`` (tie), ``bothbad_vote`` (both
    bad); the images as the datasets library writes an Image column (``{"bytes", "path"}``). Human votes, one per
    record, the record number its id. Anomaly: ``self_battle`` (both sides one model), kept by default as the
    dataset keeps it.
``pick-a-pic``
    Pick-a-Pic v2 (Kirstain et al. 2023; yuvalkirstain/pickapic_v2): ``caption``, ``jpg_0``, ``jpg_1`` (image
    bytes), ``model_0``, ``model_1``, ``label_0``, ``label_1`` (1/0: image 0 preferred, 0/1: image 1, 0.5/0.5: no
    preference, a tie), ``user_id`` (the voter), optional ``created_at`` (the time), ``ranking_id`` (the pair's id),
    ``has_label``, ``are_different``. Anomalies, each kept by default as PickScore's training code keeps them
    (``keep_only_different`` and ``keep_only_with_label`` are off): ``self_battle`` (two images of one model: a
    preference between two of its images, which says nothing about the model's rating), ``identical_images``
    (``are_different`` false) and ``no_label`` (``has_label`` false; stored as a tie).

A record's images are imported too when the import is given the media folder (``import-votes`` does; ``--no-images``
leaves them out): each is checked and stripped of its metadata like any imported image
(:func:`datamodel.media.clean_image`), its prompt becomes a prompt of the suite named after the format (item key: a
slug and hash of the text), and the vote points at both images, so the battle can be shown to annotators, judged
(``python -m judges pairwise --source human`` includes imported battles with images) and ``python -m judges compare``
pairs the judges' votes on the same two images with the imported human vote. Battles draw the images only once they
are rendered (the import renders them, anonymised like any image).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from arena.vote_import import VoteImportError, VoteRecord

BATCH_ROWS = 65_536  # records read at a time
GENAI_VOTES = {"leftvote": "A", "rightvote": "B", "tievote": "tie", "bothbad_vote": "both_bad"}
PICK_LABELS = {(1.0, 0.0): "A", (0.0, 1.0): "B", (0.5, 0.5): "tie"}


def _fail(path: Path, where: str, problem: str) -> VoteImportError:
    return VoteImportError(f"{path}: {where}: {problem}. Nothing was imported.")


def parquet_batches(path: Path, required: tuple[str, ...], optional: tuple[str, ...], what: str,
                    progress: Callable[[int], None] | None) -> Iterator[tuple[int, dict[str, list]]]:
    """(number of the batch's first record, {column: values}) of ``path``'s columns ``required`` (each must be there)
    and ``optional`` (read when present), a batch at a time; ``progress`` is told the bytes of the file read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise _fail(path, "file",
                    f"not a parquet file ({error}); the {what} format is the dataset's parquet file") from None
    names = set(handle.schema_arrow.names)
    missing = [column for column in required if column not in names]
    if missing:
        raise _fail(path, "header", f"column(s) {', '.join(missing)} missing; the {what} format needs "
                                    f"{', '.join(required)}")
    columns = [*required, *(column for column in optional if column in names)]
    total_rows = max(1, handle.metadata.num_rows)
    size = path.stat().st_size
    first = 1
    for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=columns):
        yield first, {name: _values(batch.column(name)) for name in columns}
        first += batch.num_rows
        if progress is not None:
            progress(int(size * batch.num_rows / total_rows))


def _values(column) -> list:
    """A column's values as Python objects; a timestamp column as unix seconds (floats, None where null), converted
    by Arrow rather than one datetime at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_timestamp(column.type):
        nanoseconds = pc.cast(pc.cast(column, pa.timestamp("ns", column.type.tz)), pa.int64())
        return [None if v is None else v / 1e9 for v in nanoseconds.to_pylist()]
    return column.to_pylist()


def _json_cells(values: list) -> list[str]:
    """Each value as JSON text (numbers, booleans and null without json.dumps: the usual cells of these files)."""
    out = []
    for value in values:
        if value is None:
            out.append("null")
        elif value is True or value is False:
            out.append("true" if value else "false")
        elif type(value) is int:
            out.append(str(value))
        else:
            out.append(json.dumps(value, default=str))
    return out


def _text(path: Path, number: int, column: str, value) -> str:
    if type(value) is str and value and not value[0].isspace() and not value[-1].isspace():
        return value  # the usual case, checked first
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, f"record {number}", f"column {column!r} is {value!r:.40}: every record needs it as text")
    return value.strip()


def _image(path: Path, number: int, column: str, value) -> bytes:
    """An image cell's bytes: raw bytes (Pick-a-Pic), or the datasets library's ``{"bytes", "path"}``."""
    data = value.get("bytes") if isinstance(value, dict) else value
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise _fail(path, f"record {number}", f"column {column!r} holds no image bytes; import without the images "
                                              "(--no-images) or use the dataset's file with its images")
    return bytes(data)


def _prompt_key(text: str) -> str:
    from suites.common import content_key

    return content_key(text)


def read_genai_bench(path: Path, progress: Callable[[int], None] | None = None, *,
                     images: bool = True) -> Iterator[VoteRecord]:
    required = ("prompt", "left_model", "right_model", "vote_type")
    pictures = ("left_image", "right_image") if images else ()
    for first, columns in parquet_batches(path, required + pictures, ("tstamp", "judge"), "genai-bench", progress):
        stamps, voters = columns.get("tstamp"), columns.get("judge")
        for k in range(len(columns["prompt"])):
            number = first + k
            kind = columns["vote_type"][k]
            if kind not in GENAI_VOTES:
                raise _fail(path, f"record {number}", f"column 'vote_type' is {kind!r:.40}: GenAI-Bench's votes are "
                                                      f"{', '.join(GENAI_VOTES)}")
            prompt = _text(path, number, "prompt", columns["prompt"][k])
            model_a = _text(path, number, "left_model", columns["left_model"][k])
            model_b = _text(path, number, "right_model", columns["right_model"][k])
            stamp = stamps[k] if stamps is not None else None
            yield VoteRecord(
                number, f"row {number}", f"row {number}", model_a, model_b, GENAI_VOTES[kind],
                voter=str(voters[k] or "") if voters is not None else "", voter_kind="human",
                voted_at=float(stamp) if isinstance(stamp, (int, float)) else None, suite="genai-bench",
                item_key=_prompt_key(prompt), prompt=prompt, record=json.dumps({"vote_type": kind}),
                flag="self_battle" if model_a == model_b else "",
                images=(_image(path, number, "left_image", columns["left_image"][k]),
                        _image(path, number, "right_image", columns["right_image"][k])) if images else None)


def _times(values: list | None, count: int) -> list:
    """Unix seconds of a batch's ``created_at`` cells (datetimes, numbers or ISO text; None where unknown)."""
    if values is None:
        return [None] * count
    out: list[float | None] = []
    for value in values:
        if isinstance(value, datetime):
            out.append(value.replace(tzinfo=value.tzinfo or UTC).timestamp())
        elif isinstance(value, (int, float)):
            out.append(float(value))
        else:
            try:
                out.append(datetime.fromisoformat(str(value)).timestamp() if value is not None else None)
            except ValueError:
                out.append(None)
    return out


def _outcomes(path: Path, first: int, label_0: list, label_1: list, has_label: list) -> list[str | None]:
    """A batch's outcomes from Pick-a-Pic's labels (None: no preference on an unlabelled pair, stored as a tie)."""
    import numpy as np

    zero = np.array([np.nan if v is None else v for v in label_0], dtype=np.float64)
    one = np.array([np.nan if v is None else v for v in label_1], dtype=np.float64)
    code = np.select([(zero == 1) & (one == 0), (zero == 0) & (one == 1), (zero == 0.5) & (one == 0.5)], [0, 1, 2], -1)
    bad = np.flatnonzero((code < 0) & np.asarray(has_label, dtype=bool))
    if len(bad):
        k = int(bad[0])
        raise _fail(path, f"record {first + k}", f"columns 'label_0', 'label_1' are {label_0[k]!r}, {label_1[k]!r}: "
                                                 "Pick-a-Pic's labels are 1 and 0 (image 0 preferred), 0 and 1 (image "
                                                 "1) or 0.5 and 0.5 (no preference)")
    names = ("A", "B", "tie")
    return [names[c] if c >= 0 else None for c in code.tolist()]


def read_pick_a_pic(path: Path, progress: Callable[[int], None] | None = None, *,
                    images: bool = True) -> Iterator[VoteRecord]:
    required = ("caption", "model_0", "model_1", "label_0", "label_1", "user_id")
    pictures = ("jpg_0", "jpg_1") if images else ()
    optional = ("created_at", "ranking_id", "has_label", "are_different", "image_0_uid", "image_1_uid")
    kept = ("ranking_id", "has_label", "are_different", "image_0_uid", "image_1_uid")  # into each vote's record
    keys: dict[str, str] = {}  # caption -> item key (prompts repeat across pairs)
    for first, columns in parquet_batches(path, required + pictures, optional, "pick-a-pic", progress):
        count = len(columns["caption"])
        has_label = columns.get("has_label") or [True] * count
        different = columns.get("are_different")
        outcomes = _outcomes(path, first, columns["label_0"], columns["label_1"], has_label)
        times = _times(columns.get("created_at"), count)
        rankings = columns.get("ranking_id")
        extra = [name for name in kept if name in columns]
        cells = [[f'"{name}": {text}' for text in _json_cells(columns[name])] for name in extra]
        records = ["{" + ", ".join(parts) + "}" for parts in zip(*cells)] if extra else ["{}"] * count
        for k in range(count):
            number = first + k
            model_a = _text(path, number, "model_0", columns["model_0"][k])
            model_b = _text(path, number, "model_1", columns["model_1"][k])
            caption = _text(path, number, "caption", columns["caption"][k])
            key = keys.get(caption)
            if key is None:
                key = keys[caption] = _prompt_key(caption)
            flag = ("self_battle" if model_a == model_b else
                    "identical_images" if different is not None and not different[k] else
                    "no_label" if not has_label[k] else "")
            ranking = "" if rankings is None or rankings[k] is None else str(rankings[k])
            yield VoteRecord(
                number, ranking, ranking or f"row {number}", model_a, model_b, outcomes[k] or "tie",
                voter=f"pick-a-pic user {columns['user_id'][k]}", voter_kind="human", voted_at=times[k],
                suite="pick-a-pic", item_key=key, prompt=caption, record=records[k], flag=flag,
                images=(_image(path, number, "jpg_0", columns["jpg_0"][k]),
                        _image(path, number, "jpg_1", columns["jpg_1"][k])) if images else None)
