"""T3: SemVarBench, word-order semantic variation (protocols.md, T3; the paper's Appendix C.3 and Table 7).

A test-set file has no header; each row is ``id, T_a, T_pv, T_pi``: the anchor, a permutation of its words that
changes the meaning, and a paraphrase that keeps it. An item becomes three prompts of suite ``semvarbench`` sharing
``item_key`` = id, with roles ``anchor``, ``permutation`` and ``paraphrase`` (the scores S(T_a, I_pv) and so on pair
a text of one role with the image of another). Category files repeat rows of the test file, one file per category
(its name is the file's stem); an item may be in several, all kept in ``metadata["categories"]`` (sorted), and
``metadata["category"]`` is set when there is exactly one. The vote table's category slice
(:func:`datamodel.vote_table.votes_frame`) reads both, so an item is found under each of its categories.

Two layouts are read, with ``.txt`` or ``.tsv`` names:

- the released repository's (zhuxiangru/SemVarBench): ``benchmark/testset/test_data.txt`` and the category folder
  ``benchmark/testset_divided_category/<category>.txt`` (pass the file, ``benchmark/``, or the repository root);
- ../shared's: ``test_data.tsv`` with ``categories/<category>.tsv`` beside it.

Every file of the category folder is read: a file that is not a ``.txt`` / ``.tsv`` table, a folder inside it, or a
file that cannot be read as UTF-8 stops the import with its name (nothing is skipped, nothing is written).

The 20 categories fall into the paper's three aspects (Appendix C.3; Tables 9 and 10): :data:`ASPECTS`.

``data/semvarbench_sample/`` is a sample of 6 items in ../shared's layout (``test_data.tsv``, ``categories/``),
written by this project (its own sentences, one category each, ids ``demo_<n>``) so that the demo has SemVarBench
prompts to battle over and rate (:func:`sample_specs`); the real benchmark is imported by the user.
"""

from __future__ import annotations

from pathlib import Path

from datamodel.catalog import PromptImport, PromptSpec
from datamodel.database import Database
from suites.common import SuiteError, existing_file, read_text, write_specs
from suites.registry import SUITES, ImportFormat, Suite

SUITE = "semvarbench"
ROLES = ("anchor", "permutation", "paraphrase")
TABLE_SUFFIXES = (".txt", ".tsv")
TEST_FILES = ("benchmark/testset/test_data.txt", "testset/test_data.txt", "test_data.txt", "test_data.tsv")
SAMPLE_DIR = Path(__file__).parent / "data" / "semvarbench_sample"
CATEGORY_FOLDERS = ("categories", "../testset_divided_category")  # beside the test file: ../shared's, the release's
# Appendix C.3: "Relation aspect includes six categories ..., Attribute Contrast includes four ..., Attribute Value
# includes ten"; the category files' names, in the column order of Tables 9 and 10.
ASPECTS = {
    "Relation": ("absolute_location", "relative_location", "action", "interaction", "direction", "spatio_temporal"),
    "Attribute Comparison": ("size", "weight", "vague_amount", "height"),
    "Attribute Value": ("color", "material", "appearance", "age", "shape", "temperature", "texture", "sentiment",
                        "manner", "counting"),
}
CATEGORIES = tuple(name for names in ASPECTS.values() for name in names)
ASPECT_OF = {name: aspect for aspect, names in ASPECTS.items() for name in names}
# How Tables 9, 10 and 14 print the categories (the paper's spelling: "Spatial -Temporal" in Table 9,
# "Spatio-temporal" in Table 14).
CATEGORY_TITLES = {
    "absolute_location": "Absolute Location", "relative_location": "Relative Location", "action": "Action",
    "interaction": "Interaction", "direction": "Direction", "spatio_temporal": "Spatio-temporal", "size": "Size",
    "weight": "Weight", "vague_amount": "Vague Amount", "height": "Height", "color": "Color", "material": "Material",
    "appearance": "Appearance", "age": "Age", "shape": "Shape", "temperature": "Temperature", "texture": "Texture",
    "sentiment": "Sentiment", "manner": "Manner", "counting": "Counting",
}


def read_rows(path: str | Path) -> list[tuple[int, list[str]]]:
    """(line, [id, T_a, T_pv, T_pi]) for each non-empty line of a headerless, tab-separated SemVarBench file."""
    path = existing_file(path, "SemVarBench file")
    try:
        content = read_text(path)  # a byte-order mark dropped; not UTF-8: a SuiteError naming the line
    except OSError as error:
        raise SuiteError(f"{path}: cannot be read ({error}). Replace it with the released file.") from None
    rows, seen = [], {}
    for line, text in enumerate(content.splitlines(), start=1):
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


def category_files(folder: str | Path) -> list[Path]:
    """Every file of the category folder, sorted; anything but a ``.txt`` / ``.tsv`` file is an error naming it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SuiteError(f"{folder}: categories folder not found. Pass the folder of <category>.txt (or .tsv) files, "
                         "or none.")
    paths = sorted(folder.iterdir())
    for path in paths:
        if not path.is_file() or path.suffix.lower() not in TABLE_SUFFIXES:
            raise SuiteError(f"{path}: not a SemVarBench category file (a <category>.txt or .tsv table). Move it out "
                             f"of {folder}; nothing was imported.")
    if not paths:
        raise SuiteError(f"{folder}: the categories folder is empty. Pass the folder of <category>.txt files, or none.")
    return paths


def read_categories(folder: str | Path, items: dict[str, list[str]], items_file: Path) -> dict[str, list[str]]:
    """{id: sorted category names} from every file of ``folder``; rows must repeat rows of ``items`` ({id: fields})."""
    categories: dict[str, set[str]] = {}
    for path in category_files(folder):
        for line, fields in read_rows(path):
            if fields[0] not in items:
                raise SuiteError(f"{path}:{line}: id {fields[0]!r} is not in {items_file}. "
                                 "Category files may only list items of the test file.")
            if fields != items[fields[0]]:
                raise SuiteError(f"{path}:{line}: the texts of {fields[0]!r} differ from {items_file}. "
                                 "Make the category file repeat the test file's row.")
            categories.setdefault(fields[0], set()).add(path.stem)
    return {item_id: sorted(names) for item_id, names in categories.items()}


def test_file(path: str | Path) -> Path:
    """The test-set file of ``path``: the file itself, or the first of :data:`TEST_FILES` inside a folder."""
    path = Path(path)
    if path.is_dir():
        for name in TEST_FILES:
            if (path / name).is_file():
                return path / name
        raise SuiteError(f"{path}: no SemVarBench test set in this folder (looked for {', '.join(TEST_FILES)}). "
                         "Pass the test_data file itself.")
    return existing_file(path, "SemVarBench test set")


def default_categories(path: Path) -> Path | None:
    """The category folder beside a test file: ``categories/``, or the release's ``../testset_divided_category``."""
    return next((path.parent / name for name in CATEGORY_FOLDERS if (path.parent / name).is_dir()), None)


def load_semvarbench(path: str | Path, categories_dir: str | Path | None = None) -> list[PromptSpec]:
    """The three prompts of every item of the test set at ``path`` (a file, or a folder holding the released or
    ../shared layout). ``categories_dir`` defaults to :func:`default_categories`."""
    path = test_file(path)
    rows = read_rows(path)
    if categories_dir is None:
        categories_dir = default_categories(path)
    categories = read_categories(categories_dir, {f[0]: f for _, f in rows}, path) if categories_dir else {}
    specs = []
    for line, (item_id, *texts) in rows:
        names = categories.get(item_id, [])
        metadata = {"categories": names, **({"category": names[0]} if len(names) == 1 else {})}
        specs.extend(PromptSpec(SUITE, item_id, text, role=role, metadata=metadata, source=f"{path}:{line}")
                     for role, text in zip(ROLES, texts))
    return specs


def sample_specs() -> list[PromptSpec]:
    """The bundled sample's prompts (module docstring): three per item, with its category."""
    return load_semvarbench(SAMPLE_DIR)


def import_semvarbench(
    db: Database, path: str | Path, categories_dir: str | Path | None = None
) -> PromptImport:
    return write_specs(db, load_semvarbench(path, categories_dir))


def _add_import_arguments(parser) -> None:
    parser.add_argument("--categories", type=Path, help="folder of <category>.txt or .tsv files (default: categories/ "
                        "beside the file, or the release's ../testset_divided_category)")


SUITES.register(Suite(
    name=SUITE,
    title="SemVarBench",
    criteria="Pick the image whose objects, attributes and relations follow the prompt's exact wording: a change "
             "of word order changes the meaning (a dog chasing a cat is not a cat chasing a dog).",
    imports=(ImportFormat("semvarbench", "SemVarBench test set (id, T_a, T_pv, T_pi): the release's benchmark/ "
                          "folder or its testset/test_data.txt, or ../shared's test_data.tsv (categories/ beside it)",
                          run=lambda db, args, context: import_semvarbench(db, args.path, args.categories),
                          add_arguments=_add_import_arguments),),
))
