"""Any prompt list: a CSV (header row) or JSONL file, one prompt per row.

Columns: ``text`` and ``key`` (or ``item_key``) are required; ``suite`` (else the one passed), ``subset``,
``variant``, ``role`` and ``metadata`` (a JSON object, or a string holding one) are optional; any other column is
kept in metadata under its own name. This is the prompts-file format of ``python -m arena import-images`` too, so
one file can describe both the prompts and the images made for them.
"""

from __future__ import annotations

from pathlib import Path

from datamodel.catalog import PromptImport, PromptSpec
from datamodel.database import Database
from suites.common import Row, SuiteError, json_object, read_table, text_field, write_specs

STANDARD_COLUMNS = ("suite", "key", "item_key", "text", "subset", "variant", "role", "metadata")


def item_key_of(row: dict, where: str) -> str:
    """The row's ``key`` (or ``item_key``): a string, or a whole JSON number such as 17; anything else is refused."""
    for name in ("key", "item_key"):
        value = row.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if text := text_field(row, name, where):
            return text
    raise SuiteError(f"{where}: empty or missing 'key'. Give every row a key (or item_key) naming its item.")


def spec_from_row(path: str | Path, line: int, row: dict, suite: str | None) -> PromptSpec:
    """One prompt from a row whose ``text`` :func:`~suites.common.read_table` already checked."""
    where = f"{path}:{line}"
    key = item_key_of(row, where)
    row_suite = text_field(row, "suite", where) or (suite or "").strip()
    if not row_suite:
        raise SuiteError(f"{where}: no suite. Add a suite column or pass --suite.")
    metadata = {k: v for k, v in row.items() if k not in STANDARD_COLUMNS and k and v not in (None, "")}
    metadata.update(json_object(row.get("metadata"), where))
    return PromptSpec(
        row_suite, key, row["text"], subset=text_field(row, "subset", where),
        variant=text_field(row, "variant", where), role=text_field(row, "role", where),
        metadata=metadata, source=where,
    )


def specs_from_rows(path: str | Path, rows: list[Row], suite: str | None = None) -> list[PromptSpec]:
    return [spec_from_row(path, line, row, suite) for line, row in rows]


def load_prompt_list(path: str | Path, *, suite: str | None = None) -> list[PromptSpec]:
    return specs_from_rows(path, read_table(path, ["text"]), suite)


def import_prompt_list(db: Database, path: str | Path, *, suite: str | None = None) -> PromptImport:
    return write_specs(db, load_prompt_list(path, suite=suite))
