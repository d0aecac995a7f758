"""SemVarBench statistics computed from the data alone: Table 7 (items per category), the category distribution of
Appendix C.3, and Table 14 (edit distances between the sentences of an item).

Pure functions over :class:`Item` s (one per test-set row: the three sentences and the categories), built with
:func:`items_from_prompts` from the prompts of suite ``semvarbench`` (``PromptSpec`` s or database rows: anything
with ``item_key``, ``role``, ``text`` and ``metadata``).

- Table 7, "Test" column: the number of test items in each category. Categories overlap, so the column adds up to
  the category rows (819) and "Total(deduplication)" is the number of items (684).
- Appendix C.3 "Distribution": the share of items in exactly 1, 2, 3, ... categories (82.75 %, 14.77 %, 2.49 %).
- Table 14: the mean Levenshtein distance, in characters, between T_a and T_pv, T_a and T_pi, and T_a and
  T_random, over the items of each category; the "Average" row is the mean over the items themselves (each item
  once). The distance is nltk's ``edit_distance`` (insertions, deletions and substitutions of one character each;
  no transpositions), which reproduces every printed (T_a, T_pv) value. The paper does not say how T_random was
  drawn: here it is the anchor of another item, drawn for each item with ``numpy.random.default_rng(seed)``, so that
  column is the project's reconstruction and does not reproduce the printed one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from suites.common import SuiteError
from suites.semvarbench import CATEGORIES, ROLES


@dataclass(frozen=True)
class Item:
    key: str
    anchor: str
    permutation: str
    paraphrase: str
    categories: tuple[str, ...]


def _field(prompt: Any, name: str) -> Any:
    return prompt[name] if isinstance(prompt, Mapping) else getattr(prompt, name)


def items_from_prompts(prompts: Iterable[Any]) -> list[Item]:
    """One :class:`Item` per ``item_key`` of ``prompts``, in first-seen order; an item lacking a role is an error."""
    texts: dict[str, dict[str, str]] = {}
    categories: dict[str, tuple[str, ...]] = {}
    for prompt in prompts:
        key, role = str(_field(prompt, "item_key")), _field(prompt, "role")
        texts.setdefault(key, {})[role] = _field(prompt, "text")
        metadata = _field(prompt, "metadata") or {}
        if role == "anchor":
            categories[key] = tuple(metadata.get("categories") or ())
    items = []
    for key, by_role in texts.items():
        missing = [role for role in ROLES if role not in by_role]
        if missing:
            raise SuiteError(f"SemVarBench item {key!r} has no {', '.join(missing)} prompt. Import the test set again "
                             "(python -m arena suites import semvarbench ...).")
        items.append(Item(key, by_role["anchor"], by_role["permutation"], by_role["paraphrase"],
                          categories.get(key, ())))
    return items


def category_counts(items: Iterable[Item]) -> dict[str, int]:
    """Table 7's Test column: {category: items in it}, in the paper's category order (categories the paper does not
    name follow, sorted)."""
    counts = Counter(name for item in items for name in item.categories)
    order = [name for name in CATEGORIES if name in counts] + sorted(set(counts) - set(CATEGORIES))
    return {name: counts[name] for name in order}


def category_distribution(items: Iterable[Item]) -> dict[int, float]:
    """Appendix C.3: {number of categories: share of the items with exactly that many}, for items with any."""
    per_item = Counter(len(item.categories) for item in items if item.categories)
    total = sum(per_item.values())
    return {count: per_item[count] / total for count in sorted(per_item)} if total else {}


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance in characters (nltk's ``edit_distance``: unit costs, no transpositions)."""
    from nltk.metrics.distance import edit_distance as levenshtein

    return levenshtein(a, b)


def random_partners(items: list[Item], seed: int = 0) -> list[str]:
    """For each item, the anchor of another item drawn uniformly with ``numpy.random.default_rng(seed)``."""
    import numpy as np

    if len(items) < 2:
        return [item.anchor for item in items]
    rng = np.random.default_rng(seed)
    partners = []
    for index in range(len(items)):
        other = int(rng.integers(len(items) - 1))
        partners.append(items[other + (other >= index)].anchor)
    return partners


def item_distances(items: list[Item], seed: int = 0) -> dict[str, tuple[int, int, int]]:
    """{item key: (d(T_a, T_pv), d(T_a, T_pi), d(T_a, T_random))}."""
    return {item.key: (edit_distance(item.anchor, item.permutation), edit_distance(item.anchor, item.paraphrase),
                       edit_distance(item.anchor, partner))
            for item, partner in zip(items, random_partners(items, seed))}


def edit_distance_table(items: list[Item], seed: int = 0) -> dict[str, tuple[float, float, float]]:
    """Table 14: {category: mean distances (T_pv, T_pi, T_random)} in the paper's order, then ``"Average"``, the
    mean over the items (each once)."""
    distances = item_distances(items, seed)

    def mean(keys: list[str]) -> tuple[float, float, float]:
        return tuple(sum(distances[key][k] for key in keys) / len(keys) for k in range(3))  # type: ignore[return-value]

    table = {name: mean([item.key for item in items if name in item.categories]) for name in category_counts(items)}
    if items:
        table["Average"] = mean([item.key for item in items])
    return table
