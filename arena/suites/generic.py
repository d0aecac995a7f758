"""Any prompt list: a CSV (header row) or JSONL file, one prompt per row.

Columns: ``text`` and ``key`` (or ``item_key``) are required; ``suite`` (else the one passed), ``subset``,
``variant``, ``role`` and ``metadata`` (a JSON object, or a string holding one) are optional; any other column is
kept in metadata under its own name. This is the prompts-file format of ``python -m arena import-images`` too, so
one file can describe both the prompts and the images made for them.
"""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from arena.catalog import PromptImport, PromptSpec
from arena.suites.common import Row, SuiteError, json_object, read_table, write_specs

STANDARD_COLUMNS = ("suite", "key", "item_key", "text", "subset", "variant", "role", "metadata")


def spec_from_row(path: str | Path, line: int, row: dict, suite: str | None) -> PromptSpec:
    where = f"{path}:{line}"
    key = next((str(row[name]).strip() for name in ("key", "item_key") if row.get(name) not in (None, "")), "")
    if not key:
        raise SuiteError(f"{where}: empty or missing 'key'. Give every row a key (or item_key) naming its item.")
    row_suite = str(row.get("suite") or suite or "").strip()
    if not row_suite:
        raise SuiteError(f"{where}: no suite. Add a suite column or pass --suite.")
    metadata = {k: v for k, v in row.items() if k not in STANDARD_COLUMNS and k and v not in (None, "")}
    metadata.update(json_object(row.get("metadata"), where))
    return PromptSpec(
        row_suite, key, row["text"], subset=str(row.get("subset") or "").strip(),
        variant=str(row.get("variant") or "").strip(), role=str(row.get("role") or "").strip(),
        metadata=metadata, source=where,
    )


def specs_from_rows(path: str | Path, rows: list[Row], suite: str | None = None) -> list[PromptSpec]:
    return [spec_from_row(path, line, row, suite) for line, row in rows]


def load_prompt_list(path: str | Path, *, suite: str | None = None) -> list[PromptSpec]:
    return specs_from_rows(path, read_table(path, ["text"]), suite)


def import_prompt_list(db: sqlite_utils.Database, path: str | Path, *, suite: str | None = None) -> PromptImport:
    return write_specs(db, load_prompt_list(path, suite=suite))
