"""Importing another arena's votes: ``python -m arena import-votes FILE --format
fastchat|taxonomy|csv|genai-bench|pick-a-pic``.

Five formats, one declaration each in :data:`VOTE_FORMATS` (a reader yielding one :class:`VoteRecord` per vote; the
two parquet formats of peers' published preferences, with their images, are in :mod:`arena.peer_votes`):

``fastchat``
    FastChat's ``clean_battle`` records, as a JSON array (FastChat, GenAI-Arena, WildVision, and this arena's own
    ``export --format fastchat``) or as JSON Lines: ``model_a``, ``model_b``, ``winner`` (``model_a`` | ``model_b`` |
    ``tie`` | ``tie (bothbad)``), ``tstamp`` (unix seconds), optional ``judge`` (the voter), ``anony`` (whether the
    names were hidden), ``question_id`` (the battle's id), ``voter_kind`` (``human`` | ``judge``, as this arena
    exports; default human) and ``suite`` / ``subset`` / ``variant`` / ``item_key`` / ``prompt``. Votes of one battle
    share ``question_id``, or, in this arena's export, the two image ids (a judge's vote on a human's battle); every
    other field
    (``language``, ``turn``, ``category``, ...) is kept: the vote's ``record`` is the record's JSON as in the file.
``taxonomy``
    The taxonomy paper's labelled battles (CSV): ``[id,] subset, wordnet_id, core_synset, model_a, model_b,
    result_human_def, result_human_nodef, result_gpt_def, result_gpt_nodef``. Each labelled result column is one
    vote, codes 0 = A better, 1 = B better, 2 = tie, 3 = both bad (empty: not labelled): ``human`` columns by the
    voter ``taxonomy-paper:human`` (human), ``gpt`` columns by ``taxonomy-paper:gpt-4`` (judge); ``_def`` is the
    prompt variant ``with_definition``, ``_nodef`` ``without_definition``. Subsets ``appendix`` = Easy,
    ``leafs_and_no_leafs`` = Hyponymy, ``predict_hypernym`` = Hypernymy, ``simple_triplet_2parent`` = Synset-Mixing;
    a ``_llama`` suffix gives the predicted P-Easy, P-Hypo, P-Hyper, P-Mix. A vote is joined to the taxonomy suite's
    prompt (suite ``taxonomy``, that subset and variant, ``item_key`` = ``wordnet_id``) when the arena has it.
``csv``
    A generic CSV with a header: ``model_a``, ``model_b``, ``outcome`` (``A`` | ``B`` | ``tie`` | ``both_bad``,
    relative to the two as shown), ``voter``, ``time`` (ISO 8601, or unix seconds); optional ``id``, ``voter_kind``
    (``human`` | ``judge``), ``anonymous`` (true / false), ``prompt``, ``suite``, ``subset``, ``variant``,
    ``item_key``. Other columns are kept in the vote's ``record``.

Model names go through a preset's alias map (``--preset``; the taxonomy format's is ``taxonomy-paper``'s, the
authors' hub-folder names) and the optional alias file (``--aliases``: a CSV with columns ``alias,model`` or a JSON
object ``{"alias": "model"}``) onto the arena's models; a name still unknown becomes a new model (source
``imported``) and the summary lists it. Every record is checked; the first bad one stops the import with the file,
the record number and the field, and nothing is written (:mod:`datamodel.imported_votes` stages the votes first).
The file streams: a JSON array is decoded one record at a time, so memory does not grow with the log; a progress bar
follows the bytes.

A record a real file holds that is not a clean vote (:data:`ANOMALIES`: a model against itself, ...) is what
``--invalid`` decides: kept with its reason in ``imported_votes.flag`` (the default of a format whose source kept
it), skipped, or refused; the summary counts each reason, and each rating protocol treats a flagged vote as its
source's code did (:attr:`ratings.protocols.base.RatingProtocol.flagged_rule`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np

from core.registry import load
from datamodel.database import Database
from datamodel.imported_votes import ImportRecord, Staging, battle_hash, earlier_import, finish_import

CHUNK_VOTES = 20_000  # votes staged at a time
READ_CHARS = 1 << 20  # characters of a JSON file decoded at a time
MAX_RECORD_CHARS = 16 << 20  # one JSON record longer than this is refused (a vote record is a few hundred characters)
MAX_NEW_MODELS = 100  # model names new to the arena one import may add (--max-new-models)
MAX_MODEL_NAME = 200  # characters of a model name
FASTCHAT_WINNERS = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "both_bad"}
OUTCOME_CODES = {0: "A", 1: "B", 2: "tie", 3: "both_bad"}
TAXONOMY_SUBSETS = {"appendix": "Easy", "leafs_and_no_leafs": "Hyponymy", "predict_hypernym": "Hypernymy",
                    "simple_triplet_2parent": "Synset-Mixing", "appendix_llama": "P-Easy",
                    "leafs_and_no_leafs_llama": "P-Hypo", "predict_hypernym_llama": "P-Hyper",
                    "simple_triplet_2parent_llama": "P-Mix"}
TAXONOMY_COLUMNS = ("subset", "wordnet_id", "core_synset", "model_a", "model_b")  # and ``id`` when the file has one
TAXONOMY_LABELS = {  # result column -> (voter, voter kind, prompt variant)
    "result_human_def": ("taxonomy-paper:human", "human", "with_definition"),
    "result_human_nodef": ("taxonomy-paper:human", "human", "without_definition"),
    "result_gpt_def": ("taxonomy-paper:gpt-4", "judge", "with_definition"),
    "result_gpt_nodef": ("taxonomy-paper:gpt-4", "judge", "without_definition"),
}
CSV_REQUIRED = ("model_a", "model_b", "outcome", "voter", "time")
# What an import may find in a real file that is not a clean vote: reason -> what it is. A format flags a record with
# its reason; --invalid decides (keep: stored with the flag; skip: left out, counted; refuse: the import stops).
ANOMALIES = {
    "self_battle": "model_a and model_b are the same model",
    "identical_images": "the two images are the same (Pick-a-Pic's are_different is false)",
    "no_label": "no preference was recorded (Pick-a-Pic's has_label is false): stored as a tie",
}
INVALID_CHOICES = ("keep", "skip", "refuse")
CSV_OPTIONAL = ("id", "voter_kind", "anonymous", "prompt", "suite", "subset", "variant", "item_key")
VOTER_KINDS = ("human", "judge")


class VoteImportError(ValueError):
    """The import was refused and nothing was written; the message names the file, the record and the fix."""


class VoteRecord(NamedTuple):
    """One vote as a format reads it (models by their name in the file, before aliases)."""

    record_no: int  # 1-based record (or data row) number in the file
    record_id: str  # the file's own id for it, or "" (the record number is used)
    battle_key: str  # votes on one battle share it
    model_a: str
    model_b: str
    outcome: str  # A | B | tie | both_bad
    voter: str = ""
    voter_kind: str = "human"
    voted_at: float | None = None
    anonymous: bool | None = None
    suite: str = ""
    subset: str = ""
    variant: str = ""
    item_key: str = ""
    prompt: str = ""
    record: str = "{}"  # JSON: the record as in its file (FastChat), or its other columns (CSV)
    flag: str = ""  # why the record is anomalous (a key of ANOMALIES), "" when it is not
    images: tuple[bytes, bytes] | None = None  # the two images as shown (A, B), when the file carries them


@dataclass(frozen=True)
class VoteImport:
    """What an import did."""

    file: str
    source: str
    records: int  # records (rows) read
    votes: int  # votes they hold
    added: int  # votes added; the others were imported before
    new_models: tuple[str, ...]
    earlier: ImportRecord | None  # an earlier import of the same file into the source, if any
    flagged: tuple[tuple[str, int], ...] = ()  # (reason, records) of the anomalous records found
    invalid: str = "keep"  # what was done with them: kept (flagged), skipped, or (refuse) none was found
    aliases_from: str = ""  # where the alias map came from ("preset taxonomy-paper", a file), if any
    images: int = 0  # images the file carried that were imported (checked, stripped of metadata, stored)
    import_id: int = 0  # its number in vote_imports (import-votes --remove undoes it)

    def summary(self) -> str:
        text = (f"Imported {self.added} of {self.votes} votes ({self.records} records) from {self.file} into source "
                f"{self.source!r} as import #{self.import_id} (undo: import-votes --remove {self.import_id}).")
        if self.added < self.votes:
            text += f" {self.votes - self.added} were already imported"
            if self.earlier is not None:
                text += (f" (this file was imported before, as import #{self.earlier.id} on "
                         f"{datetime.fromtimestamp(self.earlier.imported_at).strftime('%Y-%m-%d %H:%M')})")
            text += ": nothing was added twice."
        if self.new_models:
            shown = ", ".join(self.new_models[:20]) + (", ..." if len(self.new_models) > 20 else "")
            text += (f" {len(self.new_models)} model names were new to the arena and were added: {shown} "
                     "(map names onto the arena's models with --aliases).")
        if self.aliases_from:
            text += f" Model names mapped with the aliases of {self.aliases_from}."
        if self.images:
            text += (f" {self.images} images imported with their prompts, rendered for battles: the imported battles "
                     "can be shown and judged (python -m judges pairwise --source human).")
        if self.flagged:
            done = ("kept, flagged (the arena protocol leaves them out; each published protocol counts them as its "
                    "source's code did: docs/importing-votes.md)" if self.invalid == "keep" else
                    "skipped: not imported")
            text += " Flagged: " + "; ".join(f"{count} record(s) {reason} ({ANOMALIES.get(reason, reason)})"
                                             for reason, count in self.flagged)
            text += f": {done} (--invalid {self.invalid})."
        return text


def _fail(path: Path, where: str, problem: str) -> VoteImportError:
    return VoteImportError(f"{path}: {where}: {problem}. Nothing was imported.")


# --- reading: JSON arrays or lines, one record at a time ---------------------------------------------------------

def iter_json_records(path: Path, progress: Callable[[int], None] | None = None) -> Iterator[tuple[int, dict, str]]:
    """(record number, object, its JSON text) for each object of a JSON array file or a JSON Lines file, decoded a
    piece at a time with the standard library's C decoder (``raw_decode``), so memory stays at one piece whatever the
    file's size.
    ``progress`` is told the characters consumed."""
    decoder = json.JSONDecoder()
    with open(path, encoding="utf-8") as handle:
        buffer, pos, eof, lines_before = "", 0, False, 0

        def refill() -> bool:
            nonlocal buffer, pos, eof, lines_before
            if eof:
                return False
            piece = handle.read(READ_CHARS)
            lines_before += buffer.count("\n", 0, pos)
            if progress is not None:
                progress(pos)
            buffer, pos = buffer[pos:] + piece, 0
            eof = not piece
            return bool(piece)

        def skip_space() -> str:
            nonlocal pos
            while True:
                while pos < len(buffer) and buffer[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buffer) or not refill():
                    return buffer[pos] if pos < len(buffer) else ""

        def where(number: int) -> str:
            return f"record {number} (line {lines_before + buffer.count(chr(10), 0, pos) + 1})"

        def held() -> tuple[str, int]:  # the buffer and read position as they are now: refill() replaces both
            return buffer, pos

        first = skip_space()
        if first == "":
            return
        array = first == "["
        if array:
            pos += 1
        number = 0
        while True:
            char = skip_space()
            if array and char == "]":
                pos += 1
                if skip_space() != "":
                    raise _fail(path, where(number), "text after the closing ] of the JSON array")
                break
            if char == "":
                if array:
                    raise _fail(path, where(number + 1), "the JSON array is not closed: the file is cut short")
                break
            number += 1
            value, end = _decode_record(decoder, path, number, held, refill, where)
            if not isinstance(value, dict):
                raise _fail(path, where(number), f"a record must be a JSON object, not {type(value).__name__}")
            text, pos = buffer[pos:end], end
            yield number, value, text
            char = skip_space()
            if array:
                if char == ",":
                    pos += 1
                elif char == "":
                    raise _fail(path, where(number), "the JSON array is not closed: the file is cut short")
                elif char != "]":
                    raise _fail(path, where(number), "expected , or ] after the record")
        if progress is not None:
            progress(pos)


def _decode_record(decoder: json.JSONDecoder, path: Path, number: int, held, refill, where) -> tuple[object, int]:
    """(value, end) of the record that starts at the read position (``held()``: the buffer and that position),
    reading on (``refill``) only while the record may be cut at the end of what was read: a decoding error at the same
    place of the record after more was read is the record's own (found at once, not after reading the rest of the
    file), a record longer than :data:`MAX_RECORD_CHARS` is refused, and so is one nested too deeply for the decoder
    (a RecursionError before)."""
    last = None
    while True:
        buffer, pos = held()
        try:
            return decoder.raw_decode(buffer, pos)
        except RecursionError:
            raise _fail(path, where(number), "the record is nested too deeply to be a vote; a vote record is one "
                                             "flat JSON object") from None
        except json.JSONDecodeError as error:
            place = (error.pos - pos, error.msg)
            if place == last and not error.msg.startswith("Unterminated string"):
                raise _fail(path, where(number), f"not valid JSON ({error.msg})") from None
            last = place
            if len(buffer) - pos > MAX_RECORD_CHARS:
                raise _fail(path, where(number), f"the record is longer than {MAX_RECORD_CHARS:,} characters; a vote "
                                                 "record is a few hundred") from None
            if not refill():
                raise _fail(path, where(number), f"not valid JSON ({error.msg})") from None


def _text(path: Path, number: int, record: dict, field: str, *, required: bool = True) -> str:
    value = record.get(field)
    if type(value) is str:  # the usual case, checked first
        value = value.strip()
        if value or not required:
            return value
    elif value is None and not required:
        return ""
    if value is None or value == "":
        raise _fail(path, f"record {number}", f"field {field!r} is missing or empty; every vote needs it")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _fail(path, f"record {number}", f"field {field!r} must be text, not {json.dumps(value)[:60]}")
    return str(value)


def _time(path: Path, where: str, field: str, value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            return float(text)
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return moment.timestamp()
    raise _fail(path, where, f"field {field!r} is {str(value)[:40]!r}: give unix seconds (e.g. 1718000000.5) or an "
                             "ISO 8601 time (e.g. 2024-06-10T08:00:00Z)")


def _flag(path: Path, where: str, field: str, value: object) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise _fail(path, where, f"field {field!r} is {str(value)[:40]!r}: use true or false")


def _kind(path: Path, where: str, value: object) -> str:
    kind = str(value or "human").strip()
    if kind not in VOTER_KINDS:
        raise _fail(path, where, f"field 'voter_kind' is {kind[:40]!r}: use human or judge")
    return kind


def _checked(path: Path, where: str, vote: VoteRecord) -> VoteRecord:
    """The vote, flagged ``self_battle`` when its two sides are one model (the import's --invalid decides)."""
    if vote.model_a == vote.model_b and not vote.flag:
        return vote._replace(flag="self_battle")
    return vote


def read_fastchat(path: Path, progress: Callable[[int], None] | None = None) -> Iterator[VoteRecord]:
    for number, record, text in iter_json_records(path, progress):
        winner = record.get("winner")
        if winner not in FASTCHAT_WINNERS:
            raise _fail(path, f"record {number}", f"field 'winner' is {json.dumps(winner)[:60]}: FastChat's winner "
                                                  f"is one of {', '.join(FASTCHAT_WINNERS)}")
        tstamp = record.get("tstamp")
        if tstamp is None:
            raise _fail(path, f"record {number}", "field 'tstamp' is missing: every FastChat battle has its unix time")
        if type(tstamp) is not float or tstamp != tstamp:
            tstamp = _time(path, f"record {number}", "tstamp", tstamp)
        anony = record.get("anony")
        if anony is not None and type(anony) is not bool:
            anony = _flag(path, f"record {number}", "anony", anony)
        kind = record.get("voter_kind")
        if kind is not None and kind not in VOTER_KINDS:
            kind = _kind(path, f"record {number}", kind)
        question = _text(path, number, record, "question_id", required=False)
        image_a, image_b = record.get("image_a_id"), record.get("image_b_id")
        if type(image_a) is int and type(image_b) is int:  # this arena's export names the battle by its images
            battle_key = f"images {min(image_a, image_b)} {max(image_a, image_b)}"
        else:
            battle_key = question
        model_a, model_b = _text(path, number, record, "model_a"), _text(path, number, record, "model_b")
        suite, subset, variant, item_key, prompt = (
            _text(path, number, record, field, required=False) if field in record else ""
            for field in ("suite", "subset", "variant", "item_key", "prompt"))
        yield VoteRecord(number, question, battle_key, model_a, model_b, FASTCHAT_WINNERS[winner],
                         _text(path, number, record, "judge", required=False), kind or "human", tstamp, anony,
                         suite, subset, variant, item_key, prompt, text, "self_battle" if model_a == model_b else "")


def _csv_rows(path: Path, required: tuple[str, ...], what: str,
              progress: Callable[[int], None] | None) -> Iterator[tuple[int, dict]]:
    consumed = 0

    def counted(lines):
        nonlocal consumed
        for line in lines:
            consumed += len(line)
            yield line

    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(counted(handle))
        header = reader.fieldnames or []
        missing = [column for column in required if column not in header]
        if missing:
            raise _fail(path, "header", f"column(s) {', '.join(missing)} missing; the {what} layout needs "
                                        f"{', '.join(required)}")
        for number, row in enumerate(reader, start=1):
            if None in row:
                raise _fail(path, f"row {number} (line {reader.line_num})", "more cells than header columns")
            if progress is not None and consumed >= 1 << 20:
                progress(consumed)
                consumed = 0
            yield number, row
        if progress is not None:
            progress(consumed)


def _code(path: Path, where: str, column: str, value: str) -> str | None:
    text = (value or "").strip()
    if text == "":
        return None
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if number in OUTCOME_CODES:  # pandas writes 1.0 for 1 in a column with empty cells
        return OUTCOME_CODES[int(number)]
    raise _fail(path, where, f"column {column!r} is {text[:40]!r}: use 0 (A better), 1 (B better), 2 (tie), "
                             "3 (both bad) or leave it empty (not labelled)")


def read_taxonomy(path: Path, progress: Callable[[int], None] | None = None) -> Iterator[VoteRecord]:
    for number, row in _csv_rows(path, (*TAXONOMY_COLUMNS, *TAXONOMY_LABELS), "taxonomy", progress):
        where = f"row {number}"  # a file without an id column (the authors' own) names its battles by row
        subset_name = (row["subset"] or "").strip()
        if subset_name not in TAXONOMY_SUBSETS:
            raise _fail(path, where, f"column 'subset' is {subset_name[:40]!r}: use one of "
                                     f"{', '.join(TAXONOMY_SUBSETS)}")
        battle = (row.get("id") or "").strip() or f"row {number}"
        model_a, model_b = (row[c].strip() for c in ("model_a", "model_b"))
        for column in ("model_a", "model_b", "wordnet_id"):
            if not (row[column] or "").strip():
                raise _fail(path, where, f"column {column!r} is empty; every battle needs it")
        rest = {key: value for key, value in row.items() if key not in ("id", *TAXONOMY_COLUMNS, *TAXONOMY_LABELS)}
        rest["core_synset"] = row["core_synset"]
        rest["taxonomy_subset"] = subset_name
        for column, (voter, kind, variant) in TAXONOMY_LABELS.items():
            outcome = _code(path, where, column, row[column])
            if outcome is None:
                continue
            yield _checked(path, where, VoteRecord(
                record_no=number, record_id=f"{battle}:{column}", battle_key=f"{battle}:{variant}",
                model_a=model_a, model_b=model_b, outcome=outcome, voter=voter, voter_kind=kind,
                suite="taxonomy", subset=TAXONOMY_SUBSETS[subset_name], variant=variant,
                item_key=row["wordnet_id"].strip(), record=json.dumps(rest, ensure_ascii=False, sort_keys=True),
            ))


CSV_OUTCOMES = ("A", "B", "tie", "both_bad")


def _cell(row: dict, column: str) -> str:
    """A CSV row's optional text column, stripped ("" when it is absent or empty)."""
    return (row.get(column) or "").strip()


def read_csv(path: Path, progress: Callable[[int], None] | None = None) -> Iterator[VoteRecord]:
    for number, row in _csv_rows(path, CSV_REQUIRED, "csv", progress):
        where = f"row {number}"
        outcome = (row["outcome"] or "").strip()
        if outcome not in CSV_OUTCOMES:
            raise _fail(path, where, f"column 'outcome' is {outcome[:40]!r}: use A, B, tie or both_bad (relative to "
                                     "model_a and model_b as shown)")
        for column in ("model_a", "model_b", "voter"):
            if not (row[column] or "").strip():
                raise _fail(path, where, f"column {column!r} is empty; every vote needs it")
        record_id = (row.get("id") or "").strip()
        rest = {key: value for key, value in row.items() if key not in (*CSV_REQUIRED, *CSV_OPTIONAL)}
        yield _checked(path, where, VoteRecord(
            record_no=number, record_id=record_id, battle_key=record_id or f"row {number}",
            model_a=row["model_a"].strip(), model_b=row["model_b"].strip(), outcome=outcome,
            voter=row["voter"].strip(), voter_kind=_kind(path, where, row.get("voter_kind")),
            voted_at=_time(path, where, "time", row["time"]),
            anonymous=_flag(path, where, "anonymous", row.get("anonymous")),
            suite=_cell(row, "suite"), subset=_cell(row, "subset"), variant=_cell(row, "variant"),
            item_key=_cell(row, "item_key"), prompt=_cell(row, "prompt"),
            record=json.dumps(rest, ensure_ascii=False, sort_keys=True),
        ))


@dataclass(frozen=True)
class VoteFormat:
    """One vote format: ``read(path, progress)`` yields its :class:`VoteRecord` s in file order; ``invalid`` is what
    its source's own pipeline did with an anomalous record (the default of ``--invalid``: ``keep`` when the source
    kept and counted it, ``refuse`` when nothing says it should be there); ``preset`` names the published preset
    whose alias map (``votes.aliases``) applies by default."""

    name: str
    read: Callable[..., Iterator[VoteRecord]] | str  # or "module:function", imported when first read
    invalid: str = "keep"
    preset: str | None = None
    why: str = ""  # why that default, for the docs and --help
    images: bool = False  # its records carry the two images (the reader takes ``images=``)

    def reader(self) -> Callable[..., Iterator[VoteRecord]]:
        if callable(self.read):
            return self.read
        return load(self.read)

    def __call__(self, path: Path, progress: Callable[[int], None] | None = None, *,
                 images: bool = True) -> Iterator[VoteRecord]:
        if self.images:
            return self.reader()(path, progress, images=images)
        return self.reader()(path, progress)


# Each format: one declaration.
VOTE_FORMATS: dict[str, VoteFormat] = {form.name: form for form in (
    VoteFormat("fastchat", read_fastchat, "keep",
               why="FastChat's clean_battle_data.py keeps a battle of a model with itself and its published boards "
                   "count it"),
    VoteFormat("taxonomy", read_taxonomy, "keep", preset="taxonomy-paper",
               why="the authors' subset_elo.py rates every row of the file"),
    VoteFormat("csv", read_csv, "refuse", why="a generic layout: nothing says an anomalous row belongs there"),
    VoteFormat("genai-bench", "arena.peer_votes:read_genai_bench", "keep", images=True,
               why="GenAI-Bench publishes every record and scores judges on all of them"),
    VoteFormat("pick-a-pic", "arena.peer_votes:read_pick_a_pic", "keep", images=True,
               why="PickScore's training code keeps them (keep_only_different and keep_only_with_label are off)"),
)}


# --- aliases and the import ------------------------------------------------------------------------------------

def read_aliases(path: str | Path | None) -> dict[str, str]:
    """{name in the imported file: arena model name} from a JSON object or a CSV with columns alias, model."""
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise VoteImportError(f"{path}: alias file not found. Pass a CSV (columns alias,model) or a JSON object.")
    if path.suffix.lower() == ".json":
        try:
            mapping = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise VoteImportError(
                f"{path}: not valid JSON ({error}). Write one object, {{\"alias\": \"model\"}}.") from None
        if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                    for k, v in mapping.items()):
            raise VoteImportError(f"{path}: the alias file must be one JSON object of names, {{\"alias\": \"model\"}}.")
        return {k.strip(): v.strip() for k, v in mapping.items()}
    aliases: dict[str, str] = {}
    for number, row in _csv_rows(path, ("alias", "model"), "alias", None):
        alias, model = (row["alias"] or "").strip(), (row["model"] or "").strip()
        if not alias or not model:
            raise VoteImportError(f"{path}: row {number}: alias and model must both be given.")
        if aliases.get(alias, model) != model:
            raise VoteImportError(f"{path}: row {number}: alias {alias!r} is mapped twice ({aliases[alias]!r} and "
                                  f"{model!r}); keep one.")
        aliases[alias] = model
    return aliases


def _vote_file(path: Path) -> Path:
    """``path`` if it is a regular file; else the refusal says what it is instead (a FIFO or a device would be read
    without end, and was called "not found" before)."""
    if path.is_file():
        return path
    if not path.exists():
        raise VoteImportError(f"{path}: file not found. Pass the vote log to import.")
    if path.is_dir():
        raise VoteImportError(f"{path}: is a folder, not a vote log. Pass the log file itself.")
    raise VoteImportError(f"{path}: not a regular file (a pipe, a device or a socket). Save the log to a file and "
                          "import that.")


def model_name_problem(name: str, looks: dict[str, str]) -> str | None:
    """What is wrong with ``name`` as the name of a new model, or None. ``looks`` maps the confusable skeletons
    (:func:`datamodel.annotators.skeletons`) of the names already taken to those names. A model name is shown on the
    leaderboard, in exports and in spreadsheets: no control or formatting characters (a right-to-left override
    reverses what follows), no ``<`` or ``>``, no leading ``=``, ``+``, ``-`` or ``@`` (a spreadsheet runs the cell as
    a formula), at most :data:`MAX_MODEL_NAME` characters, and no look-alike of a name taken ("SDXL" or "sdхl"
    with a Cyrillic х beside "sdxl")."""
    import unicodedata

    from datamodel.annotators import skeletons

    odd = next((c for c in name if unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")), None)
    if odd is not None:
        return f"holds a control or formatting character (U+{ord(odd):04X})"
    if "<" in name or ">" in name:
        return f"holds {'<' if '<' in name else '>'!r}, which a page would read as HTML"
    if name[0] in "=+-@":
        return f"starts with {name[0]!r}, which a spreadsheet runs as a formula"
    if len(name) > MAX_MODEL_NAME:
        return f"is longer than {MAX_MODEL_NAME} characters"
    taken = next((looks[key] for key in skeletons(name) if key in looks), None)
    if taken is not None:
        return f"looks like the arena's model {taken!r}"
    return None


class _NewModels:
    """The model names an import meets that the arena does not have: each checked (:func:`model_name_problem`) and
    counted against ``cap`` when first met, so a hostile file stops at its first bad name."""

    def __init__(self, db: Database, path: Path, cap: int, noun: str = "record"):
        from datamodel.annotators import skeletons

        self.path, self.cap, self.count, self.noun = path, cap, 0, noun
        from datamodel.models import model_ids

        self.known = set(model_ids(db))
        self.looks = {key: name for name in sorted(self.known) for key in skeletons(name)}

    def check(self, name: str, number: int) -> None:
        from datamodel.annotators import skeletons

        if name in self.known:
            return
        problem = model_name_problem(name, self.looks)
        if problem is not None:
            raise _fail(self.path, f"{self.noun} {number}", f"model name {name[:80]!r} {problem}; map it onto one of "
                                                       "the arena's models with --aliases, or drop the record")
        self.count += 1
        if self.count > self.cap:
            raise _fail(self.path, f"{self.noun} {number}", f"more than {self.cap} model names in the file are new to "
                                                       f"the arena ({name[:80]!r} is one more); map them onto the "
                                                       "arena's models with --aliases, or, if they are all new models, "
                                                       "raise --max-new-models")
        self.known.add(name)
        self.looks.update({key: name for key in skeletons(name)})


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _stage_images(path: Path, stage, vote: VoteRecord, model_a: str, model_b: str) -> tuple[str, str]:
    """Check and stage the two images of ``vote`` (:mod:`arena.vote_images`); their keys for the staged vote."""
    from arena.vote_images import ImageRefused

    keys = []
    assert vote.images is not None  # the caller stages the votes that carry images
    for side, model, data in (("A", model_a, vote.images[0]), ("B", model_b, vote.images[1])):
        try:
            keys.append(stage.add(f"{path}: record {vote.record_no} (image {side})", vote.suite, vote.item_key,
                                  vote.prompt, model, data))
        except ImageRefused as error:
            raise VoteImportError(f"{error}. Nothing was imported.") from None
    return keys[0], keys[1]


def preset_aliases(fmt: str, preset: str | None) -> tuple[dict[str, str], str]:
    """The alias map of ``preset`` (None: the format's own preset; "" or a preset without one: none) and where it
    came from ("preset NAME"), for :func:`import_votes`."""
    name = VOTE_FORMATS[fmt].preset if preset is None else preset
    if not name:
        return {}, ""
    from core.presets import get_preset

    mapping = dict(get_preset(name).get("votes.aliases") or {})
    return mapping, (f"preset {name}" if mapping else "")


def import_votes(db: Database, path: str | Path, fmt: str, *, source: str | None = None,
                 aliases: str | Path | dict[str, str] | None = None, progress: bool = False,
                 invalid: str | None = None, preset: str | None = None, media=None, renditions=None,
                 images: bool = True, max_new_models: int = MAX_NEW_MODELS) -> VoteImport:
    """Import the votes of ``path`` in format ``fmt`` (module docstring) under ``source`` (default: the format's
    name); all or nothing, and idempotent: votes whose (source, original id) are stored already are not added again.
    At most ``max_new_models`` model names new to the arena, each a proper name (:func:`model_name_problem`).
    ``progress`` shows a progress bar (tqdm, on standard error).

    ``invalid`` (default: the format's, :class:`VoteFormat`) decides an anomalous record (:data:`ANOMALIES`): ``keep``
    stores it flagged with its reason, ``skip`` leaves it out, ``refuse`` stops the import at the first one, naming
    the file, record and field; the summary counts each reason. Model names go through ``preset``'s alias map (None:
    the format's preset, e.g. taxonomy-paper for ``taxonomy``; "": none), then through ``aliases``, which wins.

    A format whose records carry their images (GenAI-Bench, Pick-a-Pic) imports them too when ``media`` (a
    :class:`datamodel.media.MediaStore`) is given and ``images`` is true (:mod:`arena.vote_images`); ``renditions``
    then renders them, so battles can show them. Without ``media`` or with ``images`` false only the votes are read
    (the image columns are not even decoded)."""
    path = Path(path)
    if fmt not in VOTE_FORMATS:
        raise VoteImportError(f"Unknown vote format {fmt!r}: use --format {' | '.join(VOTE_FORMATS)}.")
    invalid = invalid or VOTE_FORMATS[fmt].invalid
    if invalid not in INVALID_CHOICES:
        raise VoteImportError(f"--invalid {invalid!r}: use {' | '.join(INVALID_CHOICES)}.")
    _vote_file(path)
    source = (source or fmt).strip()
    if not source or source == "arena":
        raise VoteImportError("--source must name the imported votes, and 'arena' is this arena's own votes: pick "
                              "another name (e.g. genai-arena).")
    mapping, aliases_from = preset_aliases(fmt, preset)
    given = aliases if isinstance(aliases, dict) else read_aliases(aliases)
    if given:
        mapping = {**mapping, **given}
        aliases_from = " and ".join(part for part in (aliases_from, "the alias file" if not isinstance(aliases, dict)
                                                     else "the given aliases") if part)
    sha256 = file_sha256(path)
    from tqdm import tqdm

    bar = tqdm(total=path.stat().st_size, unit="B", unit_scale=True, desc=f"import {path.name}",
               disable=not progress, leave=False)

    def advance(characters: int) -> None:  # characters read since the last call (bytes, for an ASCII log)
        bar.update(max(0, min(characters, bar.total - bar.n)))

    records = votes = 0
    flagged: dict[str, int] = {}
    id_hashes = array("q")  # 8 bytes per vote: whether any id repeats, without holding the ids
    with_images = bool(VOTE_FORMATS[fmt].images and images and media is not None)
    from contextlib import nullcontext

    try:
        with Staging(db) as staging, (media.staging() if with_images else nullcontext()) as media_staging:
            stage = None
            if with_images:
                from arena.vote_images import ImageStage

                assert media is not None and media_staging is not None  # with_images: a media store, staging
                stage = ImageStage(media, media_staging, source, str(path))
            chunk: list[tuple] = []
            new_models = _NewModels(db, path, max_new_models, "record" if fmt == "fastchat" else "row")

            def index(name: str, number: int) -> int:
                if name not in staging.names:
                    new_models.check(name, number)
                return staging.model_index(name)

            reading = VOTE_FORMATS[fmt](path, advance if progress else None, images=with_images) \
                if VOTE_FORMATS[fmt].images else VOTE_FORMATS[fmt](path, advance if progress else None)
            for vote in reading:
                records = vote.record_no
                if vote.flag:
                    if invalid == "refuse":
                        raise _fail(path, f"record {vote.record_no}", f"{ANOMALIES.get(vote.flag, vote.flag)} "
                                    f"(model_a {vote.model_a!r}, model_b {vote.model_b!r}; {vote.flag}); keep it "
                                    "flagged with --invalid keep, leave it out with --invalid skip, or drop the "
                                    "record")
                    flagged[vote.flag] = flagged.get(vote.flag, 0) + 1
                    if invalid == "skip":
                        continue
                votes += 1
                record_id = vote.record_id or f"record {vote.record_no}"
                id_hashes.append(hash(record_id))
                battle = vote.battle_key or record_id
                model_a, model_b = mapping.get(vote.model_a, vote.model_a), mapping.get(vote.model_b, vote.model_b)
                shown = ("", "")
                if stage is not None and vote.images is not None:
                    shown = _stage_images(path, stage, vote, model_a, model_b)
                chunk.append((record_id, battle, battle_hash(source, battle), index(model_a, records),
                              index(model_b, records),
                              vote.outcome, vote.voter, vote.voter_kind, vote.voted_at,
                              None if vote.anonymous is None else int(vote.anonymous), vote.suite, vote.subset,
                              vote.variant, vote.item_key, vote.prompt, vote.record, vote.flag, *shown))
                if len(chunk) >= CHUNK_VOTES:
                    staging.add(chunk)
                    chunk = []
            staging.add(chunk)
            if votes == 0:
                raise VoteImportError(f"{path}: no votes in the file (format {fmt}). Nothing was imported.")
            hashes = np.sort(np.frombuffer(id_hashes, dtype=np.int64))
            del id_hashes
            if (hashes[1:] == hashes[:-1]).any():
                staging.number_repeats()
            earlier = earlier_import(db, source, sha256)
            stored, created = finish_import(db, staging, source=source, fmt=fmt, file=path.name, sha256=sha256,
                                            records=records, aliases=mapping,
                                            images=stage.write if stage is not None else None)
    finally:
        bar.close()
    if stage is not None and stage.images and renditions is not None:
        renditions.render_missing(db)
    return VoteImport(path.name, source, records, votes, stored.added, tuple(created), earlier,
                      tuple(sorted(flagged.items())), invalid, aliases_from, len(stage.images) if stage else 0,
                      import_id=stored.id)
