"""What every suite loader shares: the error class, reading tables with line numbers, writing specs.

Loaders read a whole file and return :class:`~datamodel.catalog.PromptSpec` values (pure); ``import_*`` / ``build_*``
functions hand them to :func:`datamodel.catalog.add_prompts`, which writes them in one transaction and changes nothing
when the same prompts are written again. A loader checks every row before it returns, so a bad row means nothing
from that file is written. Each spec's ``source`` is ``"<file>:<line>"`` so later errors can point back to the row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from datamodel.catalog import PromptImport, PromptSpec, add_prompts, prompts_of, suites_of  # noqa: F401 (the suites' API)
from datamodel.database import Database


class SuiteError(ValueError):
    """A suite file or builder argument cannot be used; the message names ``file:line`` and the fix."""


Row = tuple[int, dict[str, Any]]  # (line number, the row's fields)
_WHITESPACE = re.compile(r"\s*")
MAX_FIELD_CHARS = 16 * 1024 * 1024  # a CSV field may be this long (Python's csv module stops at 131,072 by default)


def read_text(path: Path) -> str:
    """The text of a UTF-8 file (a byte-order mark, as spreadsheet programs write, is dropped); a file that is not
    UTF-8 is a :class:`SuiteError` naming the line of the first bad byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SuiteError(f"{path}:{line}: not UTF-8 text (byte {data[error.start]:#04x}). Save the file as UTF-8 "
                         "(in a spreadsheet: CSV UTF-8).") from None


def load_json(text: str, where: str):
    """``json.loads`` of ``text``; a value nested too deeply for the parser is a :class:`SuiteError` naming ``where``
    (JSONDecodeError is left to the caller, which words it for its format)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise SuiteError(f"{where}: nested too deeply (lists or objects inside each other thousands of levels deep). "
                         "Write plain values.") from None


def existing_file(path: str | Path, what: str) -> Path:
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"{path}: {what} not found. Check the path.")
    return path


def read_table(path: str | Path, required: Sequence[str], *, delimiter: str | None = None) -> list[Row]:
    """Rows of a CSV/TSV file with a header, or of a JSONL file, with their line numbers.

    The format follows the suffix (``.jsonl``/``.ndjson``: one JSON object per line; ``.tsv``: tab-separated;
    otherwise comma-separated) unless ``delimiter`` is given. Raises :class:`SuiteError` for a missing file, a
    missing ``required`` column or field, a row with more or fewer fields than the header, a quote left open or text
    after a closing quote (CSV is read strictly, so a stray quote never swallows the rest of the file into one
    field), a line that is not a JSON object, or a required field that is not a string (a JSON number, list or
    object is refused rather than turned into text). Values of ``required`` columns are stripped strings.
    """
    path = existing_file(path, "file")
    if path.suffix.lower() in (".jsonl", ".ndjson") and delimiter is None:
        rows = _read_jsonl(path)
    else:
        rows = _read_delimited(path, delimiter or ("\t" if path.suffix.lower() == ".tsv" else ","), required)
    for line, row in rows:
        for name in required:
            value = text_field(row, name, f"{path}:{line}")
            if not value:
                raise SuiteError(f"{path}:{line}: empty or missing {name!r}. Every row needs {', '.join(required)}.")
            row[name] = value
    return rows


def text_field(row: dict[str, Any], name: str, where: str) -> str:
    """``row[name]`` stripped; '' when absent or null; :class:`SuiteError` naming ``where`` when not a string.

    CSV fields are always strings; a JSONL value such as ``[1, 2]`` or ``3`` is refused, so it never becomes prompt
    text by accident.
    """
    value = row.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SuiteError(
            f"{where}: {name!r} must be a string, got {type(value).__name__} {json.dumps(value)[:60]}. "
            "Write it as a JSON string (in double quotes)."
        )
    return value.strip()


def _read_delimited(path: Path, delimiter: str, required: Sequence[str]) -> list[Row]:
    start = 1  # the first line of the record being read
    with io.StringIO(read_text(path), newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, strict=True)
        limit = csv.field_size_limit(MAX_FIELD_CHARS)
        try:
            header = next(reader, None)
            if header is None:
                raise SuiteError(
                    f"{path}:1: the file is empty. Start it with a header row: {delimiter.join(required)}."
                )
            header = [name.strip() for name in header]
            missing = [name for name in required if name not in header]
            if missing:
                raise SuiteError(
                    f"{path}:1: missing column {', '.join(map(repr, missing))} (the header has {', '.join(header)}). "
                    f"Add a header row with at least {delimiter.join(required)}."
                )
            rows: list[Row] = []
            start = reader.line_num + 1
            for fields in reader:
                line, start = start, reader.line_num + 1
                if not any(field.strip() for field in fields):
                    continue
                if len(fields) != len(header):
                    raise SuiteError(
                        f"{path}:{line}: malformed row with {len(fields)} fields, the header has {len(header)}. "
                        "Quote fields that contain the delimiter."
                    )
                rows.append((line, dict(zip(header, fields))))
        except csv.Error as error:  # strict: a quote left open, or text after a closing quote
            raise SuiteError(
                f"{path}:{start}: malformed quoting ({error}). Close every quoted field with a quote, write a quote "
                'inside a quoted field as two (""), and put nothing but the delimiter after a closing quote.'
            ) from None
        finally:
            csv.field_size_limit(limit)
    return rows


def _read_jsonl(path: Path) -> list[Row]:
    rows: list[Row] = []
    for line, text in enumerate(read_text(path).splitlines(), start=1):
        if not text.strip():
            continue
        try:
            row = load_json(text, f"{path}:{line}")
        except json.JSONDecodeError as error:
            raise SuiteError(f"{path}:{line}: not valid JSON ({error.msg}). Write one JSON object per line.") from None
        if not isinstance(row, dict):
            raise SuiteError(f"{path}:{line}: expected a JSON object, got {type(row).__name__}. Write one object per line.")
        rows.append((line, row))
    return rows


def read_json_list(path: str | Path) -> list[Row]:
    """The objects of a file holding one JSON list of objects, each with the line it starts on."""
    path = existing_file(path, "JSON file")
    text = read_text(path)
    decoder = json.JSONDecoder()

    def fail(position: int, problem: str):
        raise SuiteError(f"{path}:{text.count(chr(10), 0, position) + 1}: {problem}. The file must be one JSON list of objects.")

    def skip(position: int) -> int:
        return _WHITESPACE.match(text, position).end()

    position = skip(0)
    if not text.startswith("[", position):
        fail(position, "expected '['")
    position, rows = skip(position + 1), []
    if text.startswith("]", position):
        return rows
    while True:
        try:
            item, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            fail(error.pos, f"not valid JSON ({error.msg})")
        except RecursionError:
            fail(position, "nested too deeply")
        if not isinstance(item, dict):
            fail(position, f"expected an object, got {type(item).__name__}")
        rows.append((text.count("\n", 0, position) + 1, item))
        position = skip(end)
        if text.startswith("]", position):
            break
        if not text.startswith(",", position):
            fail(position, "expected ',' or ']'")
        position = skip(position + 1)
    if skip(position + 1) != len(text):
        fail(skip(position + 1), "unexpected text after the list")
    return rows


def json_object(value: Any, where: str, name: str = "metadata") -> dict:
    """A metadata value given as a JSON object or a string holding one ('' means {})."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = load_json(value, where)
        except json.JSONDecodeError as error:
            raise SuiteError(f"{where}: {name} is not valid JSON ({error.msg}). Write it as a JSON object.") from None
    if not isinstance(value, dict):
        raise SuiteError(f"{where}: {name} must be a JSON object, got {type(value).__name__}.")
    return value


def check_unique(specs: Iterable[PromptSpec]) -> list[PromptSpec]:
    """``specs`` as a list; two specs with one key raise :class:`SuiteError` naming both rows."""
    specs = list(specs)
    first: dict[tuple, PromptSpec] = {}
    for spec in specs:
        if spec.key in first:
            suite, subset, item_key, variant, role = spec.key
            parts = ", ".join(f"{k} {v!r}" for k, v in (("subset", subset), ("variant", variant), ("role", role)) if v)
            raise SuiteError(
                f"{spec.source}: duplicate key {item_key!r}{' (' + parts + ')' if parts else ''} in suite {suite!r}, "
                f"first at {first[spec.key].source}. Give each prompt its own item key, or remove the repeat."
            )
        first[spec.key] = spec
    return specs


def write_specs(db: Database, specs: Iterable[PromptSpec]) -> PromptImport:
    """Check keys are unique, then write all specs in one transaction (see :func:`datamodel.catalog.add_prompts`)."""
    return add_prompts(db, check_unique(specs))


def slug(text: str, max_length: int = 48) -> str:
    """'A lightbulb without electricity' -> 'a-lightbulb-without-electricity' (ASCII letters and digits)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:max_length].rstrip("-")


def content_key(*texts: str) -> str:
    """A stable item key from an item's texts: a slug of the first and a short hash of all of them."""
    digest = hashlib.sha1("\n".join(texts).encode("utf-8")).hexdigest()[:6]
    return f"{slug(texts[0])}-{digest}"


def read_json_lines(path: str | Path) -> list[Row]:
    """The objects of a JSON Lines file (one object per line; blank lines skipped), each with its line number."""
    return _read_jsonl(existing_file(path, "JSON Lines file"))
