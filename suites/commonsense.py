"""T2: Commonsense-T2I adversarial prompt pairs (protocols.md, T2).

The published ``data.json`` is one JSON list of items with ``prompt1``, ``prompt2`` (same action words, a minimal
difference), ``description1``, ``description2`` (the expected pictures, which cannot co-exist), ``category`` and
``likelihood`` (1-10). Each item becomes two prompts of suite ``commonsense`` sharing one ``item_key``, roles ``p1``
and ``p2``, subset = category. Each prompt's metadata holds its own ``description``, the ``partner_description``,
``partner_role``, ``category`` and ``likelihood``, so the pairwise score fit(I1,D1)+fit(I2,D2)-fit(I1,D2)-fit(I2,D1)
needs nothing but the two rows of the item.

The item key is the item's ``id`` field if it has one, else a slug of prompt1 with a short hash of both prompts, so
it does not depend on the item's position in the file.

The file is one JSON list of items, or JSON Lines (one item per line, as a dataset hub may export it). A description
written on several lines is kept as one line with its lines joined by ", ", as the authors' ``evaluate.py`` joins
them before asking the judge (and before CLIP encodes them), so both evaluators read the published text.

``data/commonsense_sample.json`` is a sample of 14 items in the published format, written by this project from the
examples quoted in the protocol (the partner prompts and the likelihoods other than the birthday cake's 9 are ours);
the demo and the tests use it.
"""

from __future__ import annotations

from numbers import Real
from pathlib import Path

from datamodel.catalog import PromptImport, PromptSpec
from datamodel.database import Database
from suites.common import SuiteError, content_key, existing_file, read_json_list, read_json_lines, write_specs
from suites.registry import SUITES, ImportFormat, Suite

SUITE = "commonsense"
CATEGORIES = ("Physical Laws", "Human Practices", "Biological Laws", "Daily Items", "Animal Behaviors")
ROLES = ("p1", "p2")
FIELDS = ("prompt1", "prompt2", "description1", "description2", "category", "likelihood")
SAMPLE_FILE = Path(__file__).parent / "data" / "commonsense_sample.json"


def item_specs(item: dict, source: str) -> list[PromptSpec]:
    """The two linked prompts of one published item (checked; :class:`SuiteError` names ``source``)."""
    missing = [name for name in FIELDS if item.get(name) in (None, "")]
    if missing:
        raise SuiteError(f"{source}: item lacks {', '.join(missing)}. Each item needs {', '.join(FIELDS)}.")
    texts = {name: item[name] for name in FIELDS[:5]}
    for name, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            raise SuiteError(f"{source}: {name} must be a non-empty string, got {value!r}.")
    likelihood = item["likelihood"]
    if isinstance(likelihood, bool) or not isinstance(likelihood, Real) or not 1 <= likelihood <= 10:
        raise SuiteError(f"{source}: likelihood must be a number from 1 to 10, got {likelihood!r}.")
    prompts = [texts["prompt1"].strip(), texts["prompt2"].strip()]
    descriptions = [published_description(texts["description1"]), published_description(texts["description2"])]
    category = texts["category"].strip()
    item_key = str(item.get("id") or "").strip() or content_key(*prompts)
    return [
        PromptSpec(
            SUITE, item_key, prompts[i], subset=category, role=ROLES[i], source=source,
            metadata={"description": descriptions[i], "partner_description": descriptions[1 - i],
                      "partner_role": ROLES[1 - i], "category": category, "likelihood": likelihood},
        )
        for i in (0, 1)
    ]


def published_description(text: str) -> str:
    """An expected description as the published evaluation reads it: its lines joined by ", " (``evaluate.py``:
    ``description.replace("\n", ", ")``), surrounding spaces removed."""
    return text.strip().replace("\n", ", ")


def load_commonsense(path: str | Path) -> list[PromptSpec]:
    """Both prompts of every item of a ``data.json``-format file (a JSON list, or JSON Lines)."""
    return [spec for line, item in read_json_records(path) for spec in item_specs(item, f"{path}:{line}")]


def read_json_records(path: str | Path):
    """(line, item) of a JSON list file, or of a JSON Lines file (its first line an item: an object with a field
    of :data:`FIELDS`)."""
    import json

    text = existing_file(path, "JSON file").read_text(encoding="utf-8")
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        lines = isinstance(item := json.loads(first), dict) and any(name in item for name in FIELDS)
    except json.JSONDecodeError:
        lines = False
    return read_json_lines(path) if lines else read_json_list(path)


def import_commonsense(db: Database, path: str | Path) -> PromptImport:
    return write_specs(db, load_commonsense(path))


def sample_specs() -> list[PromptSpec]:
    """The bundled sample's prompts (no network, no WordNet)."""
    return load_commonsense(SAMPLE_FILE)


SUITES.register(Suite(
    name=SUITE,
    title="Commonsense-T2I",
    criteria="Pick the image that shows what commonsense makes of the prompt: the expected outcome, not the "
             "literal words (a lightbulb without electricity is dark). Then image quality.",
    imports=(ImportFormat("commonsense", "Commonsense-T2I data.json (prompt1, prompt2, description1, ...)",
                          run=lambda db, args, context: import_commonsense(db, args.path)),),
))
