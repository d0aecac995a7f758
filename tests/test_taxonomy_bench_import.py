"""The authors' benchmark file (main_bench.csv) imported into the taxonomy suite; built subsets said to be rebuilt."""

from __future__ import annotations

import json

import pytest

from datamodel.catalog import PromptSpec, add_prompts
from suites.common import SuiteError
from suites.taxonomy import PUBLISHED_SUBSETS, import_benchmark, load_benchmark, reconstructed_subsets

# the layout of BIGT data/main_bench.csv (pandas' unnamed index column first), written for the test
BENCH = '''\
,wordnet_id,core_lemma,definition,hypernym_synsets,cohyponym_synsets,subset,core_synset
0,17,cigar_lighter,a lighter for cigars or cigarettes,['lighter.n.02'],"['spill.n.04', 'igniter.n.01']",appendix,cigar_lighter.n.01
1,18,coffee,a beverage consisting of an infusion of ground coffee beans,['beverage.n.01'],[],predict_hypernym,coffee.n.01
2,19,inherited_disorder,"a genetic condition passed down from parents to their offspring, often resulting in physical or mental health problems",['disorder.n.01'],"[""st._john's_wort.n.01""]",simple_triplet_2parent_llama,
'''  # noqa: E501  (the published CSV's rows as they are)


def test_each_row_becomes_a_concept_with_both_prompts_its_published_subset_and_its_texts(tmp_path, db):
    path = tmp_path / "main_bench.csv"
    path.write_text(BENCH, encoding="utf-8")
    result = import_benchmark(db, path)
    assert (result.inserted, len(result.ids)) == (6, 6)
    rows = db.execute("SELECT item_key, subset, variant, text, metadata FROM prompts ORDER BY id").fetchall()
    assert [row[:4] for row in rows[:2]] == [
        ("17", "Easy", "with_definition", "An image of cigar lighter (a lighter for cigars or cigarettes)"),
        ("17", "Easy", "without_definition", "An image of cigar lighter")]
    assert [(row[0], row[1]) for row in rows[::2]] == [("17", "Easy"), ("18", "Hypernymy"), ("19", "P-Mix")]
    first = json.loads(rows[0][4])
    assert first["core_lemma"] == "cigar_lighter" and first["lemma"] == "cigar lighter"
    assert first["hypernyms"] == ["lighter.n.02"] and first["cohyponyms"] == ["spill.n.04", "igniter.n.01"]
    assert (first["synset"], first["wordnet_id"], first["published"]) == ("cigar_lighter.n.01", "17", "main_bench.csv")
    assert first["published_subset"] == "appendix"
    assert json.loads(rows[4][4])["cohyponyms"] == ["st._john's_wort.n.01"]
    again = import_benchmark(db, path)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, 6)
    assert reconstructed_subsets(db) == []  # every concept is the published one


def test_every_published_subset_name_maps_to_one_of_the_suites_subsets():
    assert sorted(set(PUBLISHED_SUBSETS.values())) == sorted(
        ["Easy", "Hyponymy", "Hypernymy", "Synset-Mixing", "P-Easy", "P-Hypo", "P-Hyper", "P-Mix"])
    assert all(name.endswith("_llama") == value.startswith("P-") for name, value in PUBLISHED_SUBSETS.items())


@pytest.mark.parametrize("bad_line, message", [
    ('3,20,tea,a drink,[\'beverage.n.01\'],[],appendix_gpt,tea.n.01', r"main_bench.csv:5: subset 'appendix_gpt' is"),
    ('3,20,tea,a drink,beverage.n.01,[],appendix,tea.n.01',
     r"main_bench.csv:5: hypernym_synsets must be a Python list"),
    ('3,20,tea,,[],[],appendix,tea.n.01', r"main_bench.csv:5: empty or missing 'definition'"),
    ('3,17,tea,a drink,[],[],appendix,tea.n.01',
     r"main_bench.csv:5: subset appendix, wordnet_id 17 repeats the concept of line 2 with another core_lemma"),
])
def test_a_bad_row_stops_the_import_with_its_line_and_writes_nothing(tmp_path, db, bad_line, message):
    path = tmp_path / "main_bench.csv"
    path.write_text(BENCH + bad_line + "\n", encoding="utf-8")
    with pytest.raises(Exception, match=message):
        import_benchmark(db, path)
    assert db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 0


def test_suites_list_says_the_built_subsets_are_a_reconstruction(tmp_path, capsys, monkeypatch):
    from arena.commands import main
    from datamodel.connection import connect
    from suites.taxonomy import concept_specs, demo_concepts

    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.db"))
    monkeypatch.setenv("ARENA_DEMO", "0")
    db = connect(tmp_path / "arena.db")
    add_prompts(db, concept_specs(demo_concepts()[0]))
    db.close()
    assert main(["suites", "list"]) == 0
    out = capsys.readouterr().out
    assert ("note: taxonomy Easy: built from WordNet by this project, a reconstruction (the paper names 4 of its 22 "
            "Easy roots and samples its own split), not the published concepts.") in out
    assert "python -m arena suites import taxonomy-bench FILE" in out
    path = tmp_path / "main_bench.csv"
    path.write_text(BENCH, encoding="utf-8")
    assert main(["suites", "import", "taxonomy-bench", str(path)]) == 0
    assert "6 prompts written (6 new" in capsys.readouterr().out


def test_load_benchmark_is_pure_and_names_the_file_when_missing(tmp_path):
    with pytest.raises(SuiteError, match="main_bench.csv: file not found"):
        load_benchmark(tmp_path / "main_bench.csv")
    path = tmp_path / "main_bench.csv"
    path.write_text(BENCH, encoding="utf-8")
    assert [spec.subset for spec in load_benchmark(path)][::2] == ["Easy", "Hypernymy", "P-Mix"]
    assert all(isinstance(spec, PromptSpec) for spec in load_benchmark(path))
