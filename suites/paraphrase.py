"""T5: consistency over paraphrases, abstract vs realistic objects (protocols.md, T5).

The TSV has a header ``prompt_id, variation, prompt, category`` (category ``abstract`` or ``realistic``). The
variations of one prompt form a group: suite ``paraphrase``, ``item_key`` = prompt_id, ``role`` = variation,
``subset`` = category (also ``metadata["category"]``). The score is the spread of alignment over a group.
"""

from __future__ import annotations

from pathlib import Path

from datamodel.catalog import PromptImport, PromptSpec
from datamodel.database import Database
from suites.common import SuiteError, read_table, write_specs
from suites.registry import SUITES, ImportFormat, Suite

SUITE = "paraphrase"
CATEGORIES = ("abstract", "realistic")
COLUMNS = ("prompt_id", "variation", "prompt", "category")


def load_paraphrases(path: str | Path) -> list[PromptSpec]:
    specs, group_category = [], {}
    for line, row in read_table(path, COLUMNS, delimiter="\t"):
        prompt_id, category = row["prompt_id"], row["category"]
        if category not in CATEGORIES:
            raise SuiteError(f"{path}:{line}: category {category!r} is not abstract or realistic. Fix the row.")
        first = group_category.setdefault(prompt_id, (category, line))
        if first[0] != category:
            raise SuiteError(f"{path}:{line}: prompt_id {prompt_id} is {category} here but {first[0]} at line "
                             f"{first[1]}. All variations of a prompt share one category.")
        specs.append(PromptSpec(SUITE, prompt_id, row["prompt"], subset=category, role=row["variation"],
                                metadata={"category": category}, source=f"{path}:{line}"))
    return specs


def import_paraphrases(db: Database, path: str | Path) -> PromptImport:
    return write_specs(db, load_paraphrases(path))


SUITES.register(Suite(
    name=SUITE,
    title="Paraphrase consistency",
    criteria="Pick the image that shows what the prompt describes, however it is worded; then image quality.",
    imports=(ImportFormat("paraphrase", "paraphrase TSV (prompt_id, variation, prompt, category)",
                          run=lambda db, args, context: import_paraphrases(db, args.path)),),
))
