"""T3: SemVarBench, word-order semantic variation (protocols.md, T3).

``test_data.tsv`` has no header; each row is ``id, T_a, T_pv, T_pi``: the anchor, a permutation of its words that
changes the meaning, and a paraphrase that keeps it. An item becomes three prompts of suite ``semvarbench`` sharing
``item_key`` = id, with roles ``anchor``, ``permutation`` and ``paraphrase`` (the scores S(T_a, I_pv) and so on pair
a text of one role with the image of another). ``categories/<name>.tsv`` repeat rows of the test file, one file per
category; an item may be in several, all kept in ``metadata["categories"]`` (sorted), and ``metadata["category"]``
is set when there is exactly one. The vote table's category slice (:func:`datamodel.vote_table.votes_frame`) reads
both, so an item is found under each of its categories.
"""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from datamodel.catalog import PromptImport, PromptSpec
from suites.common import SuiteError, existing_file, read_text, write_specs
from suites.registry import ImportFormat, Suite, register

SUITE = "semvarbench"
ROLES = ("anchor", "permutation", "paraphrase")


def read_rows(path: str | Path) -> list[tuple[int, list[str]]]:
    """(line, [id, T_a, T_pv, T_pi]) for each non-empty line of a headerless SemVarBench TSV file."""
    path = existing_file(path, "SemVarBench TSV file")
    rows, seen = [], {}
    for line, text in enumerate(read_text(path).splitlines(), start=1):
        if not text.strip():
            continue
        fields = [field.strip() for field in text.split("\t")]
        if len(fields) != 4 or not all(fields):
            raise SuiteError(
                f"{path}:{line}: malformed row with {len(fields)} fields. Each row is id, T_a, T_pv, T_pi, "
                "separated by tabs, none empty, no header."
            )
        if fields[0] in seen:
            raise SuiteError(f"{path}:{line}: duplicate id {fields[0]!r}, first at line {seen[fields[0]]}. "
                             "Remove the repeat or give it its own id.")
        seen[fields[0]] = line
        rows.append((line, fields))
    return rows


def read_categories(folder: str | Path, items: dict[str, list[str]], items_file: Path) -> dict[str, list[str]]:
    """{id: sorted category names} from ``folder/*.tsv``; rows must repeat rows of ``items`` ({id: fields})."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SuiteError(f"{folder}: categories folder not found. Pass the folder of <category>.tsv files, or none.")
    categories: dict[str, set[str]] = {}
    for path in sorted(folder.glob("*.tsv")):
        for line, fields in read_rows(path):
            if fields[0] not in items:
                raise SuiteError(f"{path}:{line}: id {fields[0]!r} is not in {items_file}. "
                                 "Category files may only list items of the test file.")
            if fields != items[fields[0]]:
                raise SuiteError(f"{path}:{line}: the texts of {fields[0]!r} differ from {items_file}. "
                                 "Make the category file repeat the test file's row.")
            categories.setdefault(fields[0], set()).add(path.stem)
    return {item_id: sorted(names) for item_id, names in categories.items()}


def load_semvarbench(path: str | Path, categories_dir: str | Path | None = None) -> list[PromptSpec]:
    """The three prompts of every item. ``categories_dir`` defaults to ``categories/`` beside the file, if any."""
    path = Path(path)
    rows = read_rows(path)
    if categories_dir is None and (path.parent / "categories").is_dir():
        categories_dir = path.parent / "categories"
    categories = read_categories(categories_dir, {f[0]: f for _, f in rows}, path) if categories_dir else {}
    specs = []
    for line, (item_id, *texts) in rows:
        names = categories.get(item_id, [])
        metadata = {"categories": names, **({"category": names[0]} if len(names) == 1 else {})}
        specs.extend(PromptSpec(SUITE, item_id, text, role=role, metadata=metadata, source=f"{path}:{line}")
                     for role, text in zip(ROLES, texts))
    return specs


def import_semvarbench(
    db: sqlite_utils.Database, path: str | Path, categories_dir: str | Path | None = None
) -> PromptImport:
    return write_specs(db, load_semvarbench(path, categories_dir))


def _add_import_arguments(parser) -> None:
    parser.add_argument("--categories", type=Path, help="folder of <category>.tsv (default: beside the file)")


register(Suite(
    name=SUITE,
    title="SemVarBench",
    criteria="Pick the image whose objects, attributes and relations follow the prompt's exact wording: a change "
             "of word order changes the meaning (a dog chasing a cat is not a cat chasing a dog).",
    imports=(ImportFormat("semvarbench", "SemVarBench test_data.tsv (id, T_a, T_pv, T_pi; categories/ beside it)",
                          run=lambda db, args, context: import_semvarbench(db, args.path, args.categories),
                          add_arguments=_add_import_arguments),),
))
