"""Commonsense-T2I as published (Fu et al., ../shared/reference/papers/commonsense-t2i.txt; issue 26): the authors'
data.json format, and every printed number that can be recomputed without a GPU from the paper's own printed inputs.

The paper's printed numbers are kept as data in arena/reports/published/commonsense.csv (table, row, column, value);
the tests read them there, so the report's --compare-published and these checks use the same numbers."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter
from pathlib import Path

import pytest
from support.shared import SHARED

from generators.registry import NO_REVISION_PREFIX
from judges.prompts import COMMONSENSE_FIT
from suites.commonsense import CATEGORIES, load_commonsense, published_description, sample_specs

PUBLISHED = Path(__file__).resolve().parents[1] / "arena" / "reports" / "published" / "commonsense.csv"
PAPER = SHARED / "reference" / "papers" / "commonsense-t2i.txt"
TABLE1_COUNTS = {"Physical Laws": 49, "Human Practices": 45, "Biological Laws": 17, "Daily Items": 21,
                 "Animal Behaviors": 18}


def published(table: str) -> dict[tuple[str, str], str]:
    with PUBLISHED.open(newline="", encoding="utf-8") as handle:
        return {(r["row"], r["column"]): r["value"] for r in csv.DictReader(handle) if r["table"] == table}


def table2(column: str) -> dict[str, float]:
    return {row: float(value) for (row, col), value in published("2").items() if col == column}


def paper_text() -> str:
    if not PAPER.is_file():
        pytest.skip(f"{PAPER} is missing: the Commonsense-T2I paper's text (../shared/reference/papers) is needed")
    return PAPER.read_text(encoding="utf-8")


# --- the data: §2.1, Table 1, Appendix A.1 --------------------------------------------------------------------------


def write_data_json(path: Path, *, lines: bool = False) -> list[dict]:
    """150 items in the authors' format, in Table 1's category proportions; likelihoods 7-10 (§2.2 discards < 7)."""
    rng = random.Random(26)
    categories = [c for c, n in TABLE1_COUNTS.items() for _ in range(n)]
    rng.shuffle(categories)
    items = [{"prompt1": f"Object {i} in a first situation", "prompt2": f"Object {i} in a second situation",
              "description1": f"Object {i} shows the first outcome", "description2": f"Object {i} shows the second",
              "category": category, "likelihood": rng.randint(7, 10)} for i, category in enumerate(categories)]
    items[3]["description1"] = "A person is eating from a plate\nA person is eating a salmon fillet"  # two lines
    path.write_text("\n".join(json.dumps(item) for item in items) + "\n" if lines else json.dumps(items, indent=1))
    return items


@pytest.mark.parametrize("lines", [False, True], ids=["json-list", "json-lines"])
def test_the_authors_data_json_loads_150_items_as_300_linked_prompts(tmp_path, lines):
    items = write_data_json(tmp_path / "data.json", lines=lines)
    specs = load_commonsense(tmp_path / "data.json")
    assert len(specs) == 300 and len({s.item_key for s in specs}) == 150
    by_item = {}
    for spec in specs:
        by_item.setdefault(spec.item_key, {})[spec.role] = spec
    for item, key in zip(items, dict.fromkeys(s.item_key for s in specs)):
        p1, p2 = by_item[key]["p1"], by_item[key]["p2"]
        assert (p1.text, p2.text) == (item["prompt1"], item["prompt2"])
        assert p1.metadata["partner_description"] == p2.metadata["description"]
        assert p1.metadata["likelihood"] == item["likelihood"] and p1.subset == item["category"]
    # evaluate.py joins a description's lines with ", " before asking: the stored description is that text
    assert by_item[list(dict.fromkeys(s.item_key for s in specs))[3]]["p1"].metadata["description"] == (
        "A person is eating from a plate, A person is eating a salmon fillet")
    assert Counter(s.subset for s in specs if s.role == "p1") == TABLE1_COUNTS


def test_table_1_percentages_are_the_only_counts_of_150_items_that_print_so():
    """Table 1, column Percent, lines Physical Laws … Animal Behaviors, with §2.1's '150 manually curated
    examples': each printed percentage (one decimal) fits exactly one count of 150, and the counts add up to 150."""
    percents = {row: value for (row, column), value in published("1").items() if column == "percent"}
    assert list(percents) == list(CATEGORIES)
    counts = {}
    for category, printed in percents.items():
        fits = [n for n in range(151) if f"{100 * n / 150:.1f}" == printed]
        assert len(fits) == 1, (category, printed, fits)
        counts[category] = fits[0]
    assert counts == TABLE1_COUNTS and sum(counts.values()) == 150


def test_appendix_a1_example_loads_with_its_fields(tmp_path):
    """Appendix A.1: P1 'A birthday cake after making a wish', D1 'The candles are extinguished', category Human
    Practices, likelihood 9."""
    path = tmp_path / "a1.json"
    path.write_text(json.dumps([{"prompt1": "A birthday cake after making a wish",
                                 "prompt2": "A birthday cake before making a wish",
                                 "description1": "The candles are extinguished",
                                 "description2": "The candles on the cake are lit",
                                 "category": "Human Practices", "likelihood": 9}]))
    p1, p2 = load_commonsense(path)
    assert (p1.role, p1.subset, p1.metadata["likelihood"]) == ("p1", "Human Practices", 9)
    assert p2.metadata["description"] == "The candles on the cake are lit"
    sample = {s.text: s for s in sample_specs()}
    assert sample["A birthday cake after making a wish"].metadata["likelihood"] == 9  # the bundled sample has it
    assert published_description("  two\nlines ") == "two, lines"


# --- Table 2 -------------------------------------------------------------------------------------------------------


def test_table_2_every_evaluator_cell_is_an_accuracy_over_150_items_and_4_generations():
    """Table 2, every cell of the columns CLIP, Gemini Pro, GPT-4 preview, GPT-4 Turbo, GPT-4o: §3.1 generates 4
    images per prompt and averages score_n over them, so an accuracy over 150 items is k/600 for an integer k; each
    printed value (two decimals) is one. The Human column averages two experts (§3.1): k/1200, and SD-XL's 24.92 and
    DALL-E 3's 48.92 are not k/600."""
    cells = published("2")
    assert len(cells) == 59  # 12 rows × 6 columns, less the 13 '-' cells (Gemini deprecated; no human evaluation)
    for (row, column), printed in cells.items():
        denominator = 1200 if column == "human" else 600
        assert any(f"{100 * k / denominator:.2f}" == printed for k in range(denominator + 1)), (row, column)
    human = table2("human")
    off_600 = sorted(row for row, value in human.items()
                     if not any(f"{100 * k / 600:.2f}" == f"{value:.2f}" for k in range(601)))
    assert off_600 == ["DALL-E 3", "SD-XL"]


def test_the_numbers_the_text_derives_from_table_2():
    human, gemini = table2("human"), table2("gemini_pro")
    # §3.2: "the XL model achieving a 6.09% improvement over the v2.1 model" (Human column: SD-XL − SD-21)
    assert f"{human['SD-XL'] - human['SD-21']:.2f}" == "6.09"
    # §3.3: "DALL-E 3 achieving 14.92% improvement over DALL-E 3 w/o revision" (Human column, 48.92 − 34.00); §3.2
    # prints the same difference as "15.92% worse", which Table 2 does not give
    assert f"{human['DALL-E 3'] - human['DALL-E 3 w/o revision']:.2f}" == "14.92"
    # Abstract and §1: "DALL-E 3 model could only achieve 48.92%", "Stable Diffusion XL model only achieves 24.92%"
    assert (human["DALL-E 3"], human["SD-XL"]) == (48.92, 24.92)
    # §3.2: "the mean accuracy of open-source stable diffusion models hover below 25%" (SD-21 and SD-XL, humans)
    assert human["SD-21"] < 25 and human["SD-XL"] < 25
    # §3.2: "GPT-4V consistently rates lower than humans" (gpt-4-vision-preview, every human-evaluated row)
    preview = table2("gpt4_preview")
    assert all(preview[row] < human[row] for row in human)
    # §3.2: "Gemini Pro always rates higher than humans except on DALL-E 3 images"
    assert [row for row in human if gemini[row] <= human[row]] == ["DALL-E 3"]
    # §5: "current T2I models score between 15-50%": every cell of Table 2
    every = [float(v) for v in published("2").values()]
    assert 15 <= min(every) and max(every) <= 50 and min(every) == 15.83


def test_the_maximum_differences_to_humans_that_table_2_gives():
    """§3.2 says GPT-4o and Gemini Pro come within "5.09% and 5.25% respectively" of the humans. Over the four
    human-evaluated rows Table 2 gives 3.50 (GPT-4o) and 4.75 (Gemini Pro); 5.09 is GPT-4 preview's largest gap
    (DALL-E 3: 43.83 vs 48.92), and no column's largest gap is 5.25. The text's figures are not Table 2's."""
    human = table2("human")

    def largest(column: str) -> str:
        values = table2(column)
        return f"{max(abs(values[row] - human[row]) for row in human):.2f}"

    assert {column: largest(column) for column in ("gpt4o", "gemini_pro", "gpt4_preview", "gpt4_turbo", "clip")} == {
        "gpt4o": "3.50", "gemini_pro": "4.75", "gpt4_preview": "5.09", "gpt4_turbo": "3.09", "clip": "8.75"}


# --- prompts quoted verbatim -----------------------------------------------------------------------------------------


def test_the_fit_prompt_and_the_no_revision_prefix_are_the_papers_words():
    text = " ".join(paper_text().split())
    # §3.1, Automatic Evaluation: the fit(I, D) prompt
    assert " ".join(COMMONSENSE_FIT.split()) in text
    # §3.1, (12) DALL-E 3 w/o revision: "add the following to our prompts: I NEED to test ... AS-IS: {prompt}."
    assert f"add the following to our prompts: {NO_REVISION_PREFIX} {{prompt}}." in text
