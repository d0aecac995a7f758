"""The consistency benchmark as published (Hollinger, ../shared/reference/papers/hollinger-consistency.txt; issue 26):
its data (../shared/data/hollinger/abstract_vs_realistic.tsv) and every printed number that can be checked without
a GPU. Table 1's values themselves need the ALIGN scores of generated images, which the paper does not print.

Table 1 is kept as data in arena/reports/published/consistency.csv (table, row, column, value)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from support.shared import SHARED

from suites.paraphrase import load_paraphrases

PUBLISHED = Path(__file__).resolve().parents[1] / "arena" / "reports" / "published" / "consistency.csv"
DATA = SHARED / "data" / "hollinger" / "abstract_vs_realistic.tsv"


def table1() -> dict[str, dict[str, float]]:
    with PUBLISHED.open(newline="", encoding="utf-8") as handle:
        rows: dict[str, dict[str, float]] = {}
        for record in csv.DictReader(handle):
            assert record["table"] == "1"
            rows.setdefault(record["row"], {})[record["column"]] = float(record["value"])
    return rows


def shipped_data():
    if not DATA.is_file():
        pytest.skip(f"{DATA} is missing: the consistency benchmark's prompts (../shared/data/hollinger) are needed")
    return load_paraphrases(DATA)


def test_the_data_has_40_abstract_and_40_realistic_objects_of_5_wordings_in_the_papers_order():
    """§2: n_a = n_r = 40 objects, m = 5 variations each; "the first n_a objects belong to the abstract category and
    the next n_r belong to the realistic category"."""
    specs = shipped_data()
    objects: dict[str, list] = {}
    for spec in specs:
        objects.setdefault(spec.item_key, []).append(spec)
    assert len(specs) == 400 and len(objects) == 80
    assert all(len(group) == 5 and len({s.subset for s in group}) == 1 for group in objects.values())
    order = sorted(objects, key=int)
    assert [objects[key][0].subset for key in order] == ["abstract"] * 40 + ["realistic"] * 40


def test_figure_1_shows_object_1s_first_four_wordings():
    """Figure 1, captions (a)-(d): the four wordings of the blue cube, verbatim."""
    specs = {(s.item_key, s.role): s.text for s in shipped_data()}
    assert [specs[("1", str(v))] for v in range(4)] == [
        "A blue 3d-rendered cube.", "A 3D-rendered cube in blue.", "A cube rendered in 3D with a blue color.",
        "A blue cube created with 3D rendering."]


def test_table_1_and_what_section_3_reads_from_it():
    """Table 1 (lines SD3-medium and DALL-E 3; columns std, min, med): §3 "DALL-E 3 performs better on the
    standard benchmark as well as when using the median ... When using the minimum ... SD3-medium performs better"
    (a lower |S_final| is better, §2), and the caption's "the most pronounced difference in scores occurs when using
    the standard deviation"; §3's "the mean consistency score (mean of std score) is higher for abstract objects
    than for realistic objects" is S_final = S_r − S_a < 0 in the std column."""
    table = table1()
    sd3, dalle = table["SD3-medium"], table["DALL-E 3"]
    assert (sd3, dalle) == ({"std": -0.86, "min": -2.10, "median": -3.19},
                            {"std": -0.54, "min": -2.20, "median": -3.12})
    better = {stat: "DALL-E 3" if abs(dalle[stat]) < abs(sd3[stat]) else "SD3-medium" for stat in sd3}
    assert better == {"std": "DALL-E 3", "min": "SD3-medium", "median": "DALL-E 3"}
    gaps = {stat: round(abs(abs(dalle[stat]) - abs(sd3[stat])), 2) for stat in sd3}
    assert gaps == {"std": 0.32, "min": 0.10, "median": 0.07} and max(gaps, key=gaps.get) == "std"
    assert sd3["std"] < 0 and dalle["std"] < 0
