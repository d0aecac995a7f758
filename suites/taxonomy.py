"""T1: taxonomy image generation over WordNet concepts (protocols.md, T1).

Each concept v becomes two prompts of suite ``taxonomy`` with ``item_key`` = its synset id (``coin.n.01``):
variant ``with_definition`` (``An image of <CONCEPT> (<DEFINITION>)``) and ``without_definition``
(``An image of <CONCEPT>``). Both carry the same metadata: ``synset``, ``lemma`` (underscores as spaces),
``definition``, ``hypernyms`` A(v) and ``cohyponyms`` N(v) (the hyponyms of v's hypernyms, listed as the authors'
data lists them: :func:`cohyponyms`) as synset ids (:func:`lemma_of` turns one into its text), and ``subset``.
Instance links count as hypernym/hyponym links in A(v) and the subsets' membership, not in N(v) (as in the authors'
code).

Subsets:

- **Easy**: common-sense root synsets plus their direct hyponyms (:data:`EASY_ROOTS`, 22 roots; the protocol names
  coin.n.01, chromatic_color.n.01, makeup.n.01 and furniture.n.01, the other 18 are this project's choice).
- **Random split** of noun synsets that are not instances, sampled with a seed: *Hypernymy* (a specific word with
  one hypernym and no hyponyms, e.g. cappuccino.n.01 under coffee.n.01), *Hyponymy* (a broader word with one
  hypernym and hyponyms, e.g. working_dog.n.01 above husky.n.01), *Synset-Mixing* (two or more hypernyms, e.g.
  milk.n.01, a beverage.n.01 and a dairy_product.n.01). Default counts are the published 828 / 204 / 170.
- **The published benchmark**: the authors' ``main_bench.csv`` (:func:`load_benchmark`), every subset with the
  concepts the paper used. The Easy and random-split builders below are a reconstruction (the paper names 4 of the
  22 Easy roots and samples its split with its own code); ``python -m arena suites list`` says so.
- **Predicted** (P-Easy, P-Hypo, P-Hyper, P-Mix): LLM-predicted concepts from a CSV; a missing definition is written
  by the judge model with the protocol's definition prompt (:mod:`judges.definitions`, sent through the judges'
  engine: cache, retries, concurrency). A concept whose row names a synset is checked against
  WordNet and gets its hypernyms and cohyponyms from there.

Every concept built from a synset (the demo's included) stores all of N(v), as the protocol's cohyponym similarity
needs: an Easy concept is among its own cohyponyms (so coin.n.01, its hypernym's only hyponym, has specificity 1), as
in the authors' Easy rows; the other subsets' concepts are not, unless they sit under two hypernyms.
"""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from datamodel.catalog import PromptImport, PromptSpec, item_keys, item_metadata, subsets_with_metadata
from datamodel.database import Database
from suites.common import SuiteError, existing_file, read_table, read_text, text_field, write_specs
from suites.registry import SUITES, Builder, ImportContext, ImportFormat, Suite

SUITE = "taxonomy"
VARIANTS = ("with_definition", "without_definition")
EASY = "Easy"
SPLIT_SUBSETS = ("Hypernymy", "Hyponymy", "Synset-Mixing")
PREDICTED_SUBSETS = ("P-Easy", "P-Hypo", "P-Hyper", "P-Mix")
SUBSETS = (EASY, *SPLIT_SUBSETS, *PREDICTED_SUBSETS)
PUBLISHED_EASY_ENTITIES = 483
RANDOM_SPLIT_COUNTS: Mapping[str, int] = {"Hypernymy": 828, "Hyponymy": 204, "Synset-Mixing": 170}
EASY_ROOTS = (
    # named by the protocol
    "coin.n.01", "chromatic_color.n.01", "makeup.n.01", "furniture.n.01",
    # this project's choice: everyday things one can photograph, with a few dozen children at most
    "dog.n.01", "hat.n.01", "shoe.n.01", "beverage.n.01", "lamp.n.01", "boat.n.01", "bread.n.01", "box.n.01",
    "chair.n.01", "bottle.n.01", "cheese.n.01", "flag.n.01", "window.n.01", "knife.n.01", "rug.n.01",
    "coat.n.01", "kitchen_utensil.n.01", "horse.n.01",
)
DEMO_FILE = Path(__file__).parent / "data" / "demo_taxonomy.json"
DEMO_SYNSETS = (  # children of six Easy roots, things a tiny demo model can hint at
    "red.n.01", "blue.n.01", "green.n.01", "yellow.n.01",
    "penny.n.02", "dime.n.01", "nickel.n.02",
    "lipstick.n.01", "mascara.n.01", "eyeshadow.n.01",
    "bookcase.n.01", "wardrobe.n.01", "chest_of_drawers.n.01", "table.n.02",
    "cowboy_hat.n.01", "fedora.n.01", "sombrero.n.02",
    "coffee.n.01", "tea.n.01", "milk.n.01",
    "poodle.n.01", "pug.n.01", "corgi.n.01", "dalmatian.n.02",
)

Define = Callable[[list[str]], dict[str, str]]


@dataclass(frozen=True)
class Concept:
    """One taxonomy concept. ``synset`` is empty for a predicted concept not tied to a synset."""

    lemma: str
    definition: str
    subset: str
    synset: str = ""
    hypernyms: tuple[str, ...] = ()
    cohyponyms: tuple[str, ...] = ()
    extra: Mapping[str, object] = field(default_factory=dict)  # more metadata, e.g. predicted-file columns
    key: str = ""  # item key when neither the synset nor the lemma should be

    @property
    def item_key(self) -> str:
        return self.key or self.synset or self.lemma

    def record(self) -> dict:
        """The concept as stored in prompt metadata and in ``demo_taxonomy.json``."""
        return {
            **self.extra,
            "synset": self.synset, "lemma": self.lemma, "definition": self.definition,
            "hypernyms": list(self.hypernyms), "cohyponyms": list(self.cohyponyms), "subset": self.subset,
        }

    @classmethod
    def from_record(cls, record: Mapping) -> "Concept":
        known = {"synset", "lemma", "definition", "hypernyms", "cohyponyms", "subset"}
        return cls(
            lemma=record["lemma"], definition=record["definition"], subset=record["subset"],
            synset=record.get("synset", ""), hypernyms=tuple(record.get("hypernyms", ())),
            cohyponyms=tuple(record.get("cohyponyms", ())), extra={k: v for k, v in record.items() if k not in known},
        )


def prompt_text(lemma: str, definition: str | None = None) -> str:
    """``An image of <CONCEPT> (<DEFINITION>)``, or ``An image of <CONCEPT>`` without a definition."""
    return f"An image of {lemma} ({definition})" if definition else f"An image of {lemma}"


def concept_specs(concept: Concept, source: str = "") -> list[PromptSpec]:
    """The two prompts of a concept: with and without its definition."""
    metadata = concept.record()
    return [
        PromptSpec(SUITE, concept.item_key, prompt_text(concept.lemma, definition), subset=concept.subset,
                   variant=variant, metadata=metadata, source=source or f"{concept.subset} {concept.item_key}")
        for variant, definition in zip(VARIANTS, (concept.definition, None))
    ]


def specs_for(concepts: Iterable[Concept]) -> list[PromptSpec]:
    return [spec for concept in concepts for spec in concept_specs(concept)]


def lemma_of(synset_id: str) -> str:
    """'cigar_lighter.n.01' -> 'cigar lighter': the text of a synset id's lemma."""
    return synset_id.rsplit(".", 2)[0].replace("_", " ")


# --- from WordNet -------------------------------------------------------------------------------------------------


def parents(synset) -> list:
    return synset.hypernyms() + synset.instance_hypernyms()


def children(synset) -> list:
    return synset.hyponyms() + synset.instance_hyponyms()


def cohyponyms(synset, *, keep_self: bool = False) -> list[str]:
    """N(v) as the authors' data lists it (TaxoGen ``create_dataset/taxo2img_clean.ipynb``, ``find_cohyponyms``):
    the hyponyms of each of v's hypernyms (both sorted by name), concatenated, so a synset under two of them is
    listed twice (the CLIP means weigh it so). v itself is among them; ``keep_self`` keeps it (the Easy rows:
    ``coin.n.01`` -> ``['coin.n.01']``), else its first occurrence is dropped (the random split's and the predicted
    rows: ``list.remove``), so a concept under two hypernyms keeps itself once. No instance links, as there (WordNet's
    ``hypernyms()`` and ``hyponyms()``); an instance, which has only an instance hypernym, gets that class's other
    instances."""
    by_name = lambda s: s.name()  # noqa: E731
    instance = not synset.hypernyms()
    above = synset.instance_hypernyms() if instance else synset.hypernyms()
    names = [c.name() for p in sorted(above, key=by_name)
             for c in sorted(p.instance_hyponyms() if instance else p.hyponyms(), key=by_name)]
    if not keep_self and synset.name() in names:
        names.remove(synset.name())
    return names


def find_synset(wn, synset_id: str, where: str):
    """The synset named ``synset_id``; :class:`SuiteError` naming ``where`` if WordNet has none."""
    from nltk.corpus.reader.wordnet import WordNetError

    try:
        return wn.synset(synset_id.strip())
    except (WordNetError, ValueError, KeyError):
        raise SuiteError(
            f"{where}: unknown synset id {synset_id!r}. Use a WordNet 3.0 noun id such as coin.n.01 "
            "(lemma.pos.sense number)."
        ) from None


def concept_from_synset(synset, subset: str) -> Concept:
    """A concept with WordNet's lemma and definition, A(v) and all of N(v) (:func:`cohyponyms`: an Easy concept
    among its own cohyponyms, as the authors' Easy rows list it; another subset's without its first occurrence)."""
    return Concept(
        lemma=synset.lemmas()[0].name().replace("_", " "), definition=synset.definition(), subset=subset,
        synset=synset.name(), hypernyms=tuple(sorted(p.name() for p in parents(synset))),
        cohyponyms=tuple(cohyponyms(synset, keep_self=subset == EASY)),
    )


def read_roots(wn, path: str | Path) -> list[str]:
    """Root synset ids from a file, one per line (``#`` starts a comment); unknown ids name their line."""
    path = existing_file(path, "roots file")
    roots = []
    for line, text in enumerate(read_text(path).splitlines(), start=1):
        text = text.split("#", 1)[0].strip()
        if text:
            roots.append(find_synset(wn, text, f"{path}:{line}").name())
    if not roots:
        raise SuiteError(f"{path}: no root synset ids. Write one id per line, e.g. coin.n.01.")
    return roots


def easy_concepts(wn, roots: Sequence[str] = EASY_ROOTS) -> list[Concept]:
    """The Easy subset: each root, then its direct hyponyms (sorted), each synset once."""
    seen: dict[str, Concept] = {}
    for root_id in roots:
        root = find_synset(wn, root_id, "Easy roots")
        for synset in [root, *sorted(children(root), key=lambda s: s.name())]:
            if synset.name() not in seen:
                seen[synset.name()] = concept_from_synset(synset, EASY)
    return list(seen.values())


_pools: dict[int, tuple[object, dict[str, list[int]]]] = {}  # id(reader) -> (reader, pools)


def split_pools(wn) -> dict[str, list[int]]:
    """Offsets (ascending) of every noun synset of each random-split type (see the module docstring).

    Read from ``data.noun``'s pointer symbols (``@`` hypernym, ``@i`` instance hypernym, ``~``/``~i`` hyponyms)
    rather than through nltk's synsets: one pass in about a second instead of eight. Cached per reader.
    """
    if id(wn) not in _pools:
        pools: dict[str, list[int]] = {name: [] for name in SPLIT_SUBSETS}
        with wn.open("data.noun") as lines:
            for line in lines:
                if line.startswith(" "):  # the licence at the top
                    continue
                fields = line.split("|", 1)[0].split()
                at = 4 + 2 * int(fields[3], 16)  # after the words: the pointer count, then 4 fields a pointer
                pointers = [fields[at + 1 + 4 * k] for k in range(int(fields[at])) if fields[at + 4 + 4 * k] == "0000"]
                hypernyms = pointers.count("@")
                if "@i" in pointers or not hypernyms:
                    continue
                if hypernyms >= 2:
                    pools["Synset-Mixing"].append(int(fields[0]))
                elif "~" in pointers or "~i" in pointers:
                    pools["Hyponymy"].append(int(fields[0]))
                else:
                    pools["Hypernymy"].append(int(fields[0]))
        _pools[id(wn)] = (wn, pools)
    return _pools[id(wn)][1]


def random_split_concepts(wn, counts: Mapping[str, int] = RANDOM_SPLIT_COUNTS, *, seed: int = 0) -> list[Concept]:
    """A seeded sample of ``counts[type]`` nodes of each type, drawn from the types' synsets in offset order;
    each type has its own generator, so changing one count leaves the other samples as they were."""
    unknown = set(counts) - set(SPLIT_SUBSETS)
    if unknown:
        raise SuiteError(f"unknown random-split type {', '.join(sorted(unknown))}. Use {', '.join(SPLIT_SUBSETS)}.")
    pools = split_pools(wn)
    concepts = []
    for subset in SPLIT_SUBSETS:
        count = counts.get(subset, 0)
        if not 0 <= count <= len(pools[subset]):
            raise SuiteError(f"{subset}: asked for {count} nodes, WordNet has {len(pools[subset])}. Ask for fewer.")
        for offset in random.Random(f"{seed}:{subset}").sample(pools[subset], count):
            concepts.append(concept_from_synset(wn.synset_from_pos_and_offset("n", offset), subset))
    return concepts


def build_easy(db: Database, wn, roots: Sequence[str] = EASY_ROOTS) -> tuple[list[Concept], PromptImport]:
    concepts = easy_concepts(wn, roots)
    return concepts, write_specs(db, specs_for(concepts))


def build_random_split(
    db: Database, wn, counts: Mapping[str, int] = RANDOM_SPLIT_COUNTS, *, seed: int = 0
) -> tuple[list[Concept], PromptImport]:
    """Write a seeded random split. A database holds one split: a build may add nodes to the split it holds (the
    same seed, as large or larger counts) but is refused when the split already there has nodes that this sample
    lacks (another seed, smaller counts), since the two would mix in the same subsets; nothing is written then."""
    concepts = random_split_concepts(wn, counts, seed=seed)
    keep = {(c.subset, c.item_key) for c in concepts}
    held = item_keys(db, SUITE, SPLIT_SUBSETS)
    foreign = [(subset, key) for subset, key in held if (subset, key) not in keep]
    if foreign:
        subset, key = foreign[0]
        raise SuiteError(
            f"the database already holds a random split with {len(foreign)} node(s) that this one (seed {seed}, "
            f"{', '.join(f'{k} {v}' for k, v in counts.items())}) does not have, e.g. {subset} {key}; the two would "
            "mix in the same subsets. Rebuild with the seed and counts used before, or build the new split into "
            "another database (ARENA_DB)."
        )
    return concepts, write_specs(db, specs_for(concepts))


# --- the demo concepts (no WordNet needed) ------------------------------------------------------------------------


def demo_concepts_from_wordnet(wn) -> list[Concept]:
    """The demo concepts as WordNet has them (scripts/make_demo_taxonomy.py writes these to :data:`DEMO_FILE`)."""
    return [concept_from_synset(find_synset(wn, synset_id, "DEMO_SYNSETS"), EASY) for synset_id in DEMO_SYNSETS]


def demo_concepts(path: str | Path = DEMO_FILE) -> list[Concept]:
    return [Concept.from_record(record) for record in json.loads(Path(path).read_text(encoding="utf-8"))]


def demo_specs() -> list[PromptSpec]:
    """Both variants of each bundled demo concept (generated from WordNet by scripts/make_demo_taxonomy.py)."""
    return specs_for(demo_concepts())


# --- predicted concepts -------------------------------------------------------------------------------------------


class DefinitionError(SuiteError):
    """The judge model wrote no definition for some concepts: ``failures`` maps each one to the reason."""

    def __init__(self, failures: Mapping[str, str], asked: int):
        self.failures, self.asked = dict(failures), asked
        concept, reason = next(iter(self.failures.items()))
        super().__init__(f"no definition for {concept!r}: {reason} ({len(self.failures)} of {asked} failed).")


def _predicted_concept(
    path, line: int, row: dict, subset: str | None, wordnet: Callable[[], Any] | None
) -> Concept:
    """One row of a predicted-concepts file as a concept (definition possibly still empty)."""
    where = f"{path}:{line}"
    row_subset = text_field(row, "subset", where) or (subset or "").strip()
    if row_subset not in PREDICTED_SUBSETS:
        raise SuiteError(
            f"{where}: subset {row_subset!r} is not one of {', '.join(PREDICTED_SUBSETS)}. "
            "Fix the subset column, or pass the subset for the whole file."
        )
    lemma = row["concept"]
    synset_id, key, definition = (text_field(row, name, where) for name in ("synset", "item_key", "definition"))
    extra = {k: v for k, v in row.items()
             if k and k not in ("concept", "subset", "synset", "item_key", "definition") and v not in (None, "")}
    concept = Concept(lemma=lemma, definition=definition, subset=row_subset, key=key, extra=extra)
    if synset_id:
        if wordnet is None:
            raise SuiteError(f"{where}: synset {synset_id!r} cannot be checked without WordNet. Pass a WordNet "
                             "reader, or leave the synset column empty.")
        try:
            wn = wordnet()
        except SuiteError as error:
            raise SuiteError(f"{where}: the synset column needs WordNet 3.0: {error}") from None
        synset = find_synset(wn, synset_id, where)
        concept = replace(concept, synset=synset.name(), hypernyms=tuple(sorted(p.name() for p in parents(synset))),
                          cohyponyms=tuple(cohyponyms(synset)))
    return concept


def load_predicted(
    path: str | Path,
    *,
    subset: str | None = None,
    define: Define | None = None,
    known: Mapping[tuple[str, str], tuple[str, str]] | None = None,
    model: str = "",
    wordnet: Callable[[], Any] | None = None,
) -> list[PromptSpec]:
    """Prompts of predicted concepts from a CSV/TSV/JSONL file.

    Columns: ``concept`` (required), ``subset`` (P-Easy, P-Hypo, P-Hyper or P-Mix; or pass ``subset``),
    ``definition``, ``synset`` and ``item_key`` (default: the synset, else the concept) optional; other columns
    are kept in metadata. A ``synset`` must be a WordNet 3.0 id (``wordnet()`` returns the reader; it is called
    only when a row names one); the concept then gets that synset's hypernyms A(v) and cohyponyms N(v). A row
    without a definition takes it from ``known`` ({(subset, item_key): (definition, definition_source)}, from an
    earlier import) or else from ``define``; with neither, or when ``define`` fails for it
    (:class:`DefinitionError`), :class:`SuiteError` names the row. Metadata ``definition_source`` says ``file`` or
    ``llm:<model>``.
    """
    rows = read_table(path, ["concept"])
    known = known or {}
    if wordnet is not None:
        wordnet = functools.cache(wordnet)  # loaded once, at the first row that names a synset
    concepts: list[tuple[int, Concept]] = []
    for line, row in rows:
        concept = _predicted_concept(path, line, row, subset, wordnet)
        if concept.definition:
            concept = replace(concept, extra={**concept.extra, "definition_source": "file"})
        elif (concept.subset, concept.item_key) in known:
            definition, source = known[(concept.subset, concept.item_key)]
            concept = replace(concept, definition=definition, extra={**concept.extra, "definition_source": source})
        concepts.append((line, concept))
    missing = [(line, concept) for line, concept in concepts if not concept.definition]
    if missing and define is None:
        line, concept = missing[0]
        raise SuiteError(
            f"{path}:{line}: no definition for {concept.lemma!r} ({len(missing)} concepts lack one). "
            "Set OPENAI_API_KEY or ARENA_JUDGE_BASE_URL so the judge model writes them, or add a definition column."
        )
    if missing:
        written = _written(path, missing, define)
        source = f"llm:{model}" if model else "llm"
        for index, (line, concept) in enumerate(concepts):
            if not concept.definition:
                definition = (written.get(concept.lemma) or "").strip()
                if not definition:
                    raise SuiteError(f"{path}:{line}: the model gave no definition for {concept.lemma!r}. "
                                     "Add one in a definition column.")
                concepts[index] = (line, replace(concept, definition=definition,
                                                 extra={**concept.extra, "definition_source": source}))
    return [spec for line, concept in concepts for spec in concept_specs(concept, source=f"{path}:{line}")]


def _written(path, missing: list[tuple[int, Concept]], define: Define) -> dict[str, str]:
    """``define`` over the missing concepts' lemmas; a :class:`DefinitionError` becomes one naming the first row."""
    lemmas = sorted({concept.lemma for _, concept in missing})
    try:
        return define(lemmas)
    except DefinitionError as error:
        line, lemma = next((line, c.lemma) for line, c in missing if c.lemma in error.failures)
        raise SuiteError(
            f"{path}:{line}: the judge model wrote no definition for {lemma!r}: {error.failures[lemma]} "
            f"({len(error.failures)} of {error.asked} definitions failed; nothing was imported). Check the judge "
            "endpoint (ARENA_JUDGE_BASE_URL, OPENAI_API_KEY, ARENA_JUDGE_MODEL) and run the import again: "
            "definitions already written are cached and not asked for again. Or add a definition column."
        ) from None


def stored_definitions(db: Database) -> dict[tuple[str, str], tuple[str, str]]:
    """{(subset, item_key): (definition, definition_source)} of the predicted concepts already in the database."""
    stored = {(subset, key): metadata for subset, key, metadata in item_metadata(db, SUITE, VARIANTS[0],
                                                                                  PREDICTED_SUBSETS)}
    return {key: (m["definition"], m.get("definition_source", "")) for key, m in stored.items() if m.get("definition")}


def import_predicted(
    db: Database, path: str | Path, *, settings=None, subset: str | None = None,
    define: Define | None = None, wn=None,
) -> PromptImport:
    """Import predicted concepts; definitions already stored are reused, so a re-import asks no model and changes
    nothing; missing ones come from ``define`` (:func:`judges.definitions.import_predicted` passes the judge model's
    definer, answers cached in ``db``). Synsets are checked against ``wn``, else the WordNet of
    ``settings`` (loaded only when a row names a synset)."""
    from core.settings import Settings

    wordnet_settings = settings if settings is not None else Settings()

    def wordnet():
        from suites.wordnet import load_wordnet, wordnet_dir_from

        return wn if wn is not None else load_wordnet(wordnet_settings.cache_dir, wordnet_dir_from(wordnet_settings))

    model = settings.judge_model if settings is not None else ""
    return write_specs(db, load_predicted(path, subset=subset, define=define, known=stored_definitions(db),
                                          model=model, wordnet=wordnet))


# --- the published benchmark file ----------------------------------------------------------------------------------

# the subset column of the authors' files (main_bench.csv, main_reproducing.csv) -> this suite's subsets
PUBLISHED_SUBSETS: Mapping[str, str] = {
    "appendix": EASY, "leafs_and_no_leafs": "Hyponymy", "predict_hypernym": "Hypernymy",
    "simple_triplet_2parent": "Synset-Mixing",
    "appendix_llama": "P-Easy", "leafs_and_no_leafs_llama": "P-Hypo", "predict_hypernym_llama": "P-Hyper",
    "simple_triplet_2parent_llama": "P-Mix",
}
BENCH_COLUMNS = ("wordnet_id", "core_lemma", "definition", "hypernym_synsets", "cohyponym_synsets", "subset")
PUBLISHED_FILE = "main_bench.csv"
# a labelled file's columns about its battle, not its concept: left out of the concept's metadata
BATTLE_COLUMNS = ("id", "model_a", "model_b", "result_human_def", "result_human_nodef", "result_gpt_def",
                  "result_gpt_nodef", "result")
REPEATS = ("keep", "skip", "refuse")  # a row repeating an earlier row's concept: merged and noted, merged, refused


def published_subset(value: str, where: str) -> str:
    """This suite's subset for a published file's subset value (or one of this suite's own subset names)."""
    if value in PUBLISHED_SUBSETS:
        return PUBLISHED_SUBSETS[value]
    if value in SUBSETS:
        return value
    raise SuiteError(f"{where}: subset {value!r} is not one of the benchmark's: "
                     f"{', '.join(PUBLISHED_SUBSETS)} (or {', '.join(SUBSETS)}). Fix the subset column.")


def synset_list(text: str, where: str, column: str) -> tuple[str, ...]:
    """A Python-literal list of synset names (``['coffee.n.01']``) as the authors' files write it."""
    import ast

    try:
        value = ast.literal_eval(text) if text.strip() else []
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise SuiteError(f"{where}: {column} must be a Python list of synset names such as ['coffee.n.01'], got "
                         f"{text[:60]!r}.")
    return tuple(item.strip() for item in value if item.strip())


def load_benchmark(path: str | Path, repeated: str = "keep") -> list[PromptSpec]:
    """The prompts of the authors' benchmark file (``main_bench.csv``: wordnet_id, core_lemma, definition,
    hypernym_synsets, cohyponym_synsets, subset; other columns, e.g. ``core_synset``, kept in the metadata).

    Each row is one concept, its item key the row's ``wordnet_id``, its subset mapped by :data:`PUBLISHED_SUBSETS`;
    the prompts are ``An image of <core_lemma, underscores as spaces> (<definition>)`` and the same without the
    parenthesis (BIGT dataset_sampler.py). The metadata keep ``core_lemma`` as written (the CLIP metrics read it so),
    ``wordnet_id`` and ``published`` (the file's name), which mark the concepts as the published ones. A bad row
    stops the import with its line; nothing is written. :func:`load_benchmark_rows` says what it merged.
    """
    return load_benchmark_rows(path, repeated)[0]


def load_benchmark_rows(path: str | Path, repeated: str = "keep") -> tuple[list[PromptSpec], list[str]]:
    """:func:`load_benchmark`'s prompts and notes on what it merged.

    The authors' files repeat concepts: a (subset, wordnet_id) battled again, with the same texts, when FLUX was
    added (the paper's "3,370 items / 20 concepts (32 dataset entities)"; 130 of the public rows). A repeated row is
    one concept with the same prompts: ``keep`` merges it into the first row's concept and lists its line in the
    metadata (``repeated_rows``), ``skip`` merges it without a trace, ``refuse`` stops the import at it. A repeat
    whose concept differs (another lemma, definition, synset lists) stops the import whatever ``repeated`` says,
    naming both lines. A labelled file's battle columns (id, model_a, model_b, result_*) are not the concept's and are
    left out of the metadata.
    """
    if repeated not in REPEATS:
        raise SuiteError(f"--invalid {repeated!r}: use {' | '.join(REPEATS)}.")
    rows = read_table(path, list(BENCH_COLUMNS[:3]) + ["subset"])
    concepts: dict[tuple[str, str], tuple[int, Concept]] = {}
    merged: dict[tuple[str, str], list[int]] = {}
    for line, row in rows:
        where = f"{path}:{line}"
        lemma = row["core_lemma"]
        synset = text_field(row, "core_synset", where) or text_field(row, "synset", where)
        extra = {key: value for key, value in row.items()
                 if key and key not in BENCH_COLUMNS and key not in ("core_synset", "synset") and value not in (None, "")
                 and key not in BATTLE_COLUMNS and not key.startswith("Unnamed")}
        concept = Concept(
            lemma=lemma.replace("_", " "), definition=row["definition"], subset=published_subset(row["subset"], where),
            synset=synset, key=row["wordnet_id"],
            hypernyms=synset_list(text_field(row, "hypernym_synsets", where), where, "hypernym_synsets"),
            cohyponyms=synset_list(text_field(row, "cohyponym_synsets", where), where, "cohyponym_synsets"),
            extra={**extra, "core_lemma": lemma, "wordnet_id": row["wordnet_id"], "published": Path(path).name,
                   "published_subset": row["subset"]})
        key = (concept.subset, concept.key)
        if key not in concepts:
            concepts[key] = (line, concept)
            continue
        first_line, first = concepts[key]
        named = f"{where}: subset {row['subset']}, wordnet_id {row['wordnet_id']}"
        differs = next((name for name, mine, theirs in (
            ("core_lemma", concept.lemma, first.lemma), ("definition", concept.definition, first.definition),
            ("core_synset", concept.synset, first.synset), ("hypernym_synsets", concept.hypernyms, first.hypernyms),
            ("cohyponym_synsets", concept.cohyponyms, first.cohyponyms)) if mine != theirs), None)
        if differs:
            raise SuiteError(f"{named} repeats the concept of line {first_line} with another {differs}. One concept "
                             "has one text: keep one of the two rows, or give one another wordnet_id.")
        if repeated == "refuse":
            raise SuiteError(f"{named} repeats the concept first at line {first_line}. --invalid keep merges a "
                             "repeated concept into the first (the authors' files repeat concepts), skip merges it "
                             "unnoted; or remove the row.")
        merged.setdefault(key, []).append(line)
    specs = []
    for key, (line, concept) in concepts.items():
        if repeated == "keep" and key in merged:
            concept = replace(concept, extra={**concept.extra, "repeated_rows": merged[key]})
        specs += concept_specs(concept, source=f"{path}:{line}")
    notes = []
    if merged:
        repeats = sum(len(lines) for lines in merged.values())
        notes.append(f"{repeats} rows repeat a concept of an earlier row (subset and wordnet_id): merged into it, one "
                     f"concept with the same prompts ({len(merged)} concepts"
                     + ("; their repeated rows are listed in the metadata, repeated_rows" if repeated == "keep" else "")
                     + ").")
    return specs, notes


def import_benchmark(db: Database, path: str | Path, repeated: str = "keep") -> PromptImport:
    specs, notes = load_benchmark_rows(path, repeated)
    result = write_specs(db, specs)
    result.notes.extend(notes)
    return result


def reconstructed_subsets(db: Database) -> list[str]:
    """The subsets of the database whose concepts were built by this project (from WordNet or the demo), not
    imported from the published file: a reconstruction of the paper's subsets, which the listings say."""
    rows = subsets_with_metadata(db, SUITE, present="synset", absent="published")
    return sorted(rows, key=lambda s: SUBSETS.index(s) if s in SUBSETS else len(SUBSETS))


def _notes(db: Database) -> list[str]:
    rebuilt = [subset for subset in reconstructed_subsets(db) if subset in (EASY, *SPLIT_SUBSETS)]
    if not rebuilt:
        return []
    return [f"taxonomy {', '.join(rebuilt)}: built from WordNet by this project, a reconstruction (the paper names 4 "
            "of its 22 Easy roots and samples its own split), not the published concepts. For those, import the "
            "authors' main_bench.csv: python -m arena suites import taxonomy-bench FILE"]


def _import_benchmark(db: Database, args, context: ImportContext) -> PromptImport:
    return import_benchmark(db, args.path, args.invalid)


def _benchmark_arguments(parser) -> None:
    parser.add_argument("--invalid", choices=REPEATS, default="keep",
                        help="a row repeating an earlier row's concept (subset and wordnet_id), as the authors' files "
                             "do: merge it into that concept and list it in the metadata (keep, the default), merge it "
                             "(skip), or refuse the file")


# --- the suite's declaration ---------------------------------------------------------------------------------------

WORDNET_HELP = "WordNet 3.0 folder (default: the wordnet_dir setting / ARENA_WORDNET_DIR, else /usr/share/wordnet)"


def _wordnet(args, settings):
    from suites.wordnet import load_wordnet, wordnet_dir_from

    return load_wordnet(settings.cache_dir, args.wordnet_dir or wordnet_dir_from(settings))


def _easy_arguments(parser) -> None:
    parser.add_argument("--roots", help="comma-separated root synset ids (default: the 22 built-in roots)")
    parser.add_argument("--roots-file", type=Path, help="file with one root synset id per line")
    parser.add_argument("--wordnet-dir", type=Path, help=WORDNET_HELP)


def _build_easy(db: Database, args, settings) -> tuple[PromptImport, str]:
    wn = _wordnet(args, settings)
    roots = read_roots(wn, args.roots_file) if args.roots_file else (
        [root.strip() for root in args.roots.split(",") if root.strip()] if args.roots else EASY_ROOTS)
    concepts, result = build_easy(db, wn, roots)
    return result, (f"Easy: {len(roots)} root synsets, {len(concepts)} entities "
                    f"(the paper had {PUBLISHED_EASY_ENTITIES}), 2 prompts each")


def _random_arguments(parser) -> None:
    for flag, subset in (("--hypernymy", "Hypernymy"), ("--hyponymy", "Hyponymy"), ("--mixing", "Synset-Mixing")):
        default = RANDOM_SPLIT_COUNTS[subset]
        parser.add_argument(flag, type=int, default=default, help=f"{subset} nodes (default {default}, as published)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--wordnet-dir", type=Path, help=WORDNET_HELP)


def _build_random(db: Database, args, settings) -> tuple[PromptImport, str]:
    wn = _wordnet(args, settings)
    counts = {"Hypernymy": args.hypernymy, "Hyponymy": args.hyponymy, "Synset-Mixing": args.mixing}
    concepts, result = build_random_split(db, wn, counts, seed=args.seed)
    made = {subset: sum(c.subset == subset for c in concepts) for subset in SPLIT_SUBSETS}
    published = " / ".join(str(n) for n in RANDOM_SPLIT_COUNTS.values())
    return result, (f"Random split (seed {args.seed}): " + ", ".join(f"{k} {v}" for k, v in made.items())
                    + f"; {len(concepts)} nodes (published {published})")


def _predicted_arguments(parser) -> None:
    parser.add_argument("--subset", choices=PREDICTED_SUBSETS, help="subset of rows without one")


def _import_predicted(db: Database, args, context: ImportContext) -> PromptImport:
    return import_predicted(db, args.path, settings=context.settings, subset=args.subset, define=context.define(db))


def _caption(metadata: Mapping[str, Any]) -> tuple[str, str] | None:
    if not metadata.get("lemma"):
        return None
    definition = metadata.get("definition")
    return "Concept", f"{metadata['lemma']} — {definition}" if definition else str(metadata["lemma"])


SUITES.register(Suite(
    name=SUITE,
    title="WordNet taxonomy",
    criteria="Pick the image that shows the named concept, as its definition describes it, rather than a broader, "
             "narrower or neighbouring one; then image quality.",
    imports=(ImportFormat("predicted", "LLM-predicted taxonomy concepts (CSV/JSONL: concept, subset[, definition])",
                          run=_import_predicted, add_arguments=_predicted_arguments),
             ImportFormat("taxonomy-bench", "the taxonomy paper's published benchmark, main_bench.csv (wordnet_id, "
                          "core_lemma, definition, hypernym_synsets, cohyponym_synsets, subset)",
                          run=_import_benchmark, add_arguments=_benchmark_arguments)),
    builders=(Builder("easy", "taxonomy Easy subset: root synsets and their direct hyponyms",
                      add_arguments=_easy_arguments, run=_build_easy),
              Builder("random", "taxonomy random split: Hypernymy, Hyponymy, Synset-Mixing nodes",
                      add_arguments=_random_arguments, run=_build_random)),
    caption=_caption,
    notes=_notes,
))
