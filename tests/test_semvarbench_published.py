"""SemVarBench exactly as published: the released repository's layout, the paper's statistics (Tables 7 and 14, the
category distribution of Appendix C.3) and every worked SemVarEffect example printed in the paper."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from conftest import SHARED, prompt_count
from suites import semvarbench
from suites.common import SuiteError

SHARED_DATA = SHARED / "data" / "semvarbench"
MISSING = f"{SHARED_DATA} (the SemVarBench test set and its categories/ folder of ../shared) is missing"


def published_layout(root: Path) -> Path:
    """The released repository's layout (zhuxiangru/SemVarBench) built from ../shared's rows: ``benchmark/testset/
    test_data.txt`` and ``benchmark/testset_divided_category/<category>.txt``; returns ``benchmark``."""
    if not (SHARED_DATA / "test_data.tsv").is_file():
        pytest.skip(MISSING)
    (root / "benchmark" / "testset").mkdir(parents=True)
    (root / "benchmark" / "testset_divided_category").mkdir()
    shutil.copy(SHARED_DATA / "test_data.tsv", root / "benchmark" / "testset" / "test_data.txt")
    for path in sorted((SHARED_DATA / "categories").glob("*.tsv")):
        shutil.copy(path, root / "benchmark" / "testset_divided_category" / f"{path.stem}.txt")
    return root / "benchmark"


def category_rows(db) -> Counter:
    rows = db.execute("SELECT metadata FROM prompts WHERE suite = 'semvarbench' AND role = 'anchor'").fetchall()
    return Counter(name for (metadata,) in rows for name in json.loads(metadata)["categories"])


def test_the_published_layout_imports_684_items_in_all_20_categories(tmp_path, db):
    benchmark = published_layout(tmp_path)
    result = semvarbench.import_semvarbench(db, benchmark / "testset" / "test_data.txt")
    assert result.inserted == 3 * 684
    counts = category_rows(db)
    assert len(counts) == 20 and sum(counts.values()) == 819  # Table 7, Test column and its total


def test_an_explicit_folder_of_txt_category_files_is_read(tmp_path, db):
    benchmark = published_layout(tmp_path)
    semvarbench.import_semvarbench(db, benchmark / "testset" / "test_data.txt",
                                   benchmark / "testset_divided_category")
    assert sum(category_rows(db).values()) == 819


def test_the_release_folder_itself_can_be_passed(tmp_path, db):
    benchmark = published_layout(tmp_path)
    semvarbench.import_semvarbench(db, tmp_path)  # the repository root: benchmark/testset/test_data.txt
    assert prompt_count(db) == 3 * 684 and sum(category_rows(db).values()) == 819
    assert semvarbench.import_semvarbench(db, benchmark).unchanged == 3 * 684


@pytest.mark.parametrize("make, message", [
    (lambda folder: (folder / "README.md").write_text("categories\n"),
     r"README.md: not a SemVarBench category file \(a <category>.txt or .tsv table\)\. Move it out of "),
    (lambda folder: (folder / "extra").mkdir(),
     r"extra: not a SemVarBench category file"),
    (lambda folder: (folder / "color.txt").write_bytes(b"\xff\xfe not utf-8"),
     r"color.txt: cannot be read as UTF-8 text .*Replace it with the released file\."),
])
def test_an_unknown_or_unreadable_category_file_stops_the_import_with_its_name(tmp_path, db, make, message):
    benchmark = published_layout(tmp_path)
    make(benchmark / "testset_divided_category")
    with pytest.raises(SuiteError, match=message):
        semvarbench.import_semvarbench(db, benchmark / "testset" / "test_data.txt")
    assert prompt_count(db) == 0  # nothing written half-way


def test_a_folder_without_a_test_set_says_what_it_looked_for(tmp_path):
    with pytest.raises(SuiteError, match=r"no SemVarBench test set in this folder \(looked for benchmark/testset/"):
        semvarbench.load_semvarbench(tmp_path)


# --- the worked SemVarEffect examples of Appendix G (Figs. 19-27) ----------------------------------------------------

WORKED = json.loads((Path(__file__).parent / "data" / "semvarbench" / "worked_examples.json").read_text())
CALL_KEYS = ["S(T_a,I_a)", "S(T_pv,I_pv)", "S(T_pi,I_pi)", "S(T_pv,I_a)", "S(T_a,I_pv)", "S(T_pi,I_a)", "S(T_a,I_pi)"]


def computed(example: dict) -> dict[str, float]:
    """What eqs. 2-4 and S-bar (Section 4.1) give for the printed scores of one box (S-bar alone for a partial box)."""
    from judges.semvar import item_scores

    scores = example["scores"]
    if all(key in scores for key in CALL_KEYS):
        return item_scores(*(scores[key] for key in CALL_KEYS))
    return {"mean": sum(scores[key] for key in CALL_KEYS[:3]) / 3}


@pytest.mark.parametrize("example", WORKED["examples"], ids=lambda e: f"{e['figure']} #{e['position']}")
def test_semvar_effect_reproduces_each_worked_example_of_appendix_g(example):
    """Each printed S-bar, gamma_w, gamma_wo and kappa of the box, to the printed two decimals; the two boxes whose
    printed value is not the arithmetic of their own printed inputs are checked to differ by exactly what the data
    file's ``differences`` says."""
    got = computed(example)
    where = f"{example['figure']} #{example['position']}"
    for name, printed in example["printed"].items():
        if name not in got:
            continue
        expected = {"Fig. 22 #1": {"kappa": 0.46}, "Fig. 24 #4": {"mean": 0.95}}.get(where, {}).get(name, printed)
        if expected != printed:  # the paper's own arithmetic is off: the printed value is not reproduced
            assert got[name] != pytest.approx(printed, abs=0.005), f"{where} {name} now matches the printed value"
        assert got[name] == pytest.approx(expected, abs=0.005 + 1e-9), f"{where} {name}"


def test_the_worked_examples_cover_every_box_of_figs_19_to_27():
    full = [e for e in WORKED["examples"] if len(e["scores"]) == 7]
    assert len(WORKED["examples"]) == 37 and len(full) == 33
    assert {e["figure"] for e in WORKED["examples"]} == {f"Fig. {n}" for n in range(19, 28)}
