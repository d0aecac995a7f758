"""Loaders and builders of T2-T5 and generic prompt lists, on the shared data files and the bundled sample."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.arena import prompt_count
from support.shared import HOLLINGER, SEMVARBENCH, shared_file

from suites import commonsense, generic, paraphrase, saneval, semvarbench
from suites.common import SuiteError, read_json_list, write_specs

DATA = Path(__file__).parent / "data" / "suites"




def rows_of(db, **where) -> list[dict]:
    sql = " AND ".join(f"{column} = ?" for column in where) or "1"
    return [{**r, "metadata": json.loads(r["metadata"])}
            for r in db.query(f"SELECT * FROM prompts WHERE {sql} ORDER BY id", list(where.values()))]


# --- T2 Commonsense-T2I ---------------------------------------------------------------------------------------------


def test_sample_pairs_are_linked_with_descriptions_and_category(db):
    specs = commonsense.sample_specs()
    assert len(specs) == 2 * 14 and {s.subset for s in specs} == set(commonsense.CATEGORIES)
    assert commonsense.import_commonsense(db, commonsense.SAMPLE_FILE).inserted == 28
    cake = rows_of(db, item_key=specs[2].item_key)
    assert [(r["role"], r["text"]) for r in cake] == [("p1", "A birthday cake after making a wish"),
                                                     ("p2", "A birthday cake before making a wish")]
    assert cake[0]["subset"] == "Human Practices"
    assert cake[0]["metadata"] == {"description": "The candles are extinguished",
                                   "partner_description": "The candles on the cake are lit", "partner_role": "p2",
                                   "category": "Human Practices", "likelihood": 9}
    assert cake[1]["metadata"]["description"] == cake[0]["metadata"]["partner_description"]
    assert commonsense.import_commonsense(db, commonsense.SAMPLE_FILE).unchanged == 28 and prompt_count(db) == 28


def test_item_keys_do_not_depend_on_position_and_ids_win(tmp_path):
    items = json.loads(commonsense.SAMPLE_FILE.read_text())
    (tmp_path / "reversed.json").write_text(json.dumps(items[::-1]))
    forward = {(s.item_key, s.text) for s in commonsense.sample_specs()}
    assert {(s.item_key, s.text) for s in commonsense.load_commonsense(tmp_path / "reversed.json")} == forward
    (tmp_path / "ids.json").write_text(json.dumps([{**items[0], "id": 17}]))
    assert {s.item_key for s in commonsense.load_commonsense(tmp_path / "ids.json")} == {"17"}


GOOD = {"prompt1": "A lightbulb without electricity", "prompt2": "A lightbulb with electricity",
        "description1": "The lightbulb is unlit", "description2": "The lightbulb is lit",
        "category": "Physical Laws", "likelihood": 9}


@pytest.mark.parametrize(
    "text, message",
    [
        ("[\n" + json.dumps(GOOD) + ",\n" + json.dumps({**GOOD, "description2": ""}) + "\n]",
         r":3: item lacks description2\. Each item needs prompt1, prompt2, description1, description2, category, "
         r"likelihood"),
        ("[\n" + json.dumps(GOOD) + ",\n" + json.dumps({**GOOD, "prompt2": "x", "likelihood": 11}) + "\n]",
         r":3: likelihood must be a number from 1 to 10, got 11\."),
        ("[\n" + json.dumps(GOOD) + ",\n" + json.dumps(GOOD) + "\n]",
         r":3: duplicate key 'a-lightbulb-without-electricity-ae320a' \(subset 'Physical Laws', role 'p1'\) in suite "
         r"'commonsense', first at .*:2\. Give each prompt its own item key, or remove the repeat\."),
        ("[\n" + json.dumps(GOOD) + ",\n  {\"prompt1\": \"x\",, }\n]",
         r":3: not valid JSON \(Expecting property name enclosed in double quotes\)\. The file must be one JSON list"),
        ('{"items": []}', r":1: expected '\['\. The file must be one JSON list of objects\."),
        ("[\n" + json.dumps(GOOD) + ",\n 3]", r":3: expected an object, got int\."),
    ],
)
def test_bad_commonsense_items_name_file_and_line_and_import_nothing(tmp_path, db, text, message):
    path = tmp_path / "data.json"
    path.write_text(text)
    with pytest.raises(SuiteError, match=re.escape(str(path)) + message):
        commonsense.import_commonsense(db, path)
    assert prompt_count(db) == 0


def test_json_list_reader_gives_each_object_its_line(tmp_path):
    path = tmp_path / "list.json"
    path.write_text('  [ {"a": 1},\n\n {"b": [1,\n 2]}, {"c": 3}\n]\n')
    assert read_json_list(path) == [(1, {"a": 1}), (3, {"b": [1, 2]}), (4, {"c": 3})]
    path.write_text("[]")
    assert read_json_list(path) == []
    path.write_text('[{"a": 1}] x')
    with pytest.raises(SuiteError, match=r"list.json:1: unexpected text after the list"):
        read_json_list(path)


# --- T3 SemVarBench -------------------------------------------------------------------------------------------------


def test_semvarbench_items_link_three_roles_and_keep_every_category(db):
    result = semvarbench.import_semvarbench(db, shared_file(SEMVARBENCH))
    assert result.inserted == 3 * 684
    cat = rows_of(db, item_key="0_61_326")
    assert [(r["role"], r["text"]) for r in cat] == [
        ("anchor", "The cat chases the mouse."), ("permutation", "The mouse chases the cat."),
        ("paraphrase", "The mouse is chased by the cat."),
    ]
    assert cat[0]["metadata"] == {"categories": ["interaction"], "category": "interaction"}
    both = rows_of(db, item_key="183_263_136", role="anchor")[0]["metadata"]
    assert both == {"categories": ["absolute_location", "height"]}
    per_item = Counter(len(r["metadata"]["categories"]) for r in rows_of(db, role="anchor"))
    assert per_item == {1: 566, 2: 101, 3: 17}
    assert semvarbench.import_semvarbench(db, shared_file(SEMVARBENCH)).unchanged == 3 * 684


def test_semvarbench_without_categories(tmp_path):
    path = tmp_path / "test_data.tsv"
    path.write_text("a1\tThe cat chases the mouse.\tThe mouse chases the cat.\tThe mouse is chased by the cat.\n")
    specs = semvarbench.load_semvarbench(path)
    assert [s.role for s in specs] == list(semvarbench.ROLES) and specs[0].metadata == {"categories": []}


def _semvar_copy(folder: Path, rows: list[str], category_rows: Sequence[str] = ()) -> Path:
    (folder / "categories").mkdir(parents=True)
    (folder / "test_data.tsv").write_text("\n".join(rows) + "\n")
    (folder / "categories" / "color.tsv").write_text("".join(row + "\n" for row in category_rows))
    return folder / "test_data.tsv"


def test_bad_semvarbench_rows_name_file_and_line_and_import_nothing(tmp_path, db):
    real = shared_file(SEMVARBENCH).read_text().splitlines()[:3]
    path = _semvar_copy(tmp_path / "a", [real[0], "x1\tonly\ttwo fields"])
    with pytest.raises(SuiteError, match=rf"{path}:2: malformed row with 3 fields\. Each row is id, T_a, T_pv, T_pi"):
        semvarbench.import_semvarbench(db, path)
    path = _semvar_copy(tmp_path / "b", [real[0], real[1], real[0]])
    with pytest.raises(SuiteError, match=r"test_data.tsv:3: duplicate id '0_224_341', first at line 1\."):
        semvarbench.import_semvarbench(db, path)
    path = _semvar_copy(tmp_path / "c", real[:2], [real[1], real[2]])
    with pytest.raises(SuiteError, match=r"color.tsv:2: id '100_v1_396_319' is not in .*test_data.tsv\. "
                                         "Category files may only list items of the test file\\."):
        semvarbench.import_semvarbench(db, path)
    assert prompt_count(db) == 0


# --- T5 paraphrase consistency --------------------------------------------------------------------------------------


def test_paraphrase_groups_by_prompt_id(db):
    assert paraphrase.import_paraphrases(db, shared_file(HOLLINGER)).inserted == 400
    group = rows_of(db, item_key="40")
    assert [r["role"] for r in group] == ["0", "1", "2", "3", "4"] and {r["subset"] for r in group} == {"realistic"}
    assert group[0]["text"] == "A car in front of a brick wall." and group[0]["metadata"] == {"category": "realistic"}
    counts = Counter(r["subset"] for r in rows_of(db))
    assert counts == {"abstract": 200, "realistic": 200}
    assert len({r["item_key"] for r in rows_of(db)}) == 80
    assert paraphrase.import_paraphrases(db, shared_file(HOLLINGER)).unchanged == 400


@pytest.mark.parametrize(
    "text, message",
    [
        ("prompt_id\tvariation\tprompt\n0\t0\tA cube\n",
         r":1: missing column 'category' \(the header has prompt_id, variation, prompt\)\. Add a header row"),
        ("prompt_id\tvariation\tprompt\tcategory\n0\t0\tA cube\tabstract\n0\t1\tA box\tsurreal\n",
         r":3: category 'surreal' is not abstract or realistic\."),
        ("prompt_id\tvariation\tprompt\tcategory\n0\t0\tA cube\tabstract\n0\t1\tA box\trealistic\n",
         r":3: prompt_id 0 is realistic here but abstract at line 2\. All variations of a prompt share one category\."),
        ("prompt_id\tvariation\tprompt\tcategory\n0\t0\tA cube\tabstract\n0\t0\tA box\tabstract\n",
         r":3: duplicate key '0' \(subset 'abstract', role '0'\) in suite 'paraphrase', first at .*:2\."),
        ("prompt_id\tvariation\tprompt\tcategory\n0\t0\tA cube\tabstract\textra\n",
         r":2: malformed row with 5 fields, the header has 4\."),
        ("prompt_id\tvariation\tprompt\tcategory\n0\t0\t \tabstract\n",
         r":2: empty or missing 'prompt'\. Every row needs prompt_id, variation, prompt, category\."),
    ],
)
def test_bad_paraphrase_rows_name_file_and_line(tmp_path, db, text, message):
    path = tmp_path / "para.tsv"
    path.write_text(text)
    with pytest.raises(SuiteError, match=re.escape(str(path)) + message):
        paraphrase.import_paraphrases(db, path)
    assert prompt_count(db) == 0


# --- generic prompt lists ------------------------------------------------------------------------------------------


def test_prompt_list_csv_and_jsonl(db):
    specs = generic.load_prompt_list(DATA / "prompts.csv", suite="mine")
    assert [(s.suite, s.item_key, s.role, s.text) for s in specs] == [
        ("mine", "cat-1", "", "A cat on a mat"), ("mine", "cat-1", "paraphrase", "A mat under a cat"),
        ("mine", "dog-1", "", "A dog, a ball and a bench"),
    ]
    assert specs[0].metadata == {"category": "pets", "source_url": "https://example.org/cats"}
    assert specs[0].source == f"{DATA / 'prompts.csv'}:2"
    kites = generic.load_prompt_list(DATA / "prompts.jsonl")
    assert [(s.suite, s.item_key, s.subset, s.metadata) for s in kites] == [
        ("kites", "k1", "", {"category": "color"}), ("kites", "7", "numeracy", {})]
    assert kites[1].source.endswith("prompts.jsonl:3")
    assert generic.import_prompt_list(db, DATA / "prompts.csv", suite="mine").inserted == 3
    assert generic.import_prompt_list(db, DATA / "prompts.csv", suite="mine").unchanged == 3


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("p.csv", "key,prompt\nk,A cat\n", r"p.csv:1: missing column 'text' \(the header has key, prompt\)"),
        ("p.csv", "key,text\nk,A cat,extra\n",
         r"p.csv:2: malformed row with 3 fields, the header has 2\. Quote fields"),
        ("p.csv", "key,text,metadata\nk,A cat,{oops}\n",
         r"p.csv:2: metadata is not valid JSON .*Write it as a JSON object"),
        ("p.csv", "key,text\nk,A cat\nk,A dog\n", r"p.csv:3: duplicate key 'k' in suite 'mine', first at .*p.csv:2\."),
        ("p.csv", "text\nA cat\n", r"p.csv:2: empty or missing 'key'\. Give every row a key"),
        ("p.jsonl", '{"key": "k", "text": "A cat"}\n{"key": "j", "text": "A dog"\n', r"p.jsonl:2: not valid JSON"),
        ("p.jsonl", '["k", "A cat"]\n', r"p.jsonl:1: expected a JSON object, got list"),
        ("p.jsonl", '{"key": "k", "text": "A cat", "metadata": [1]}\n', r"p.jsonl:1: metadata must be a JSON object"),
        # a JSON value that is not a string is refused, never turned into prompt text such as "[1, 2]"
        ("p.jsonl", '{"key": "k", "text": "A cat"}\n{"key": "j", "text": [1, 2]}\n',
         r"p.jsonl:2: 'text' must be a string, got list \[1, 2\]\. Write it as a JSON string \(in double quotes\)\."),
        ("p.jsonl", '{"key": "k", "text": 3}\n', r"p.jsonl:1: 'text' must be a string, got int 3\."),
        ("p.jsonl", '{"key": "k", "text": {"en": "A cat"}}\n', r"p.jsonl:1: 'text' must be a string, got dict"),
        ("p.jsonl", '{"key": ["k"], "text": "A cat"}\n', r"p.jsonl:1: 'key' must be a string, got list"),
        ("p.jsonl", '{"key": true, "text": "A cat"}\n', r"p.jsonl:1: 'key' must be a string, got bool true"),
        ("p.jsonl", '{"key": "k", "text": "A cat", "variant": ["a"]}\n', r"p.jsonl:1: 'variant' must be a string"),
    ],
)
def test_bad_prompt_lists_name_file_and_line(tmp_path, db, name, text, message):
    (tmp_path / name).write_text(text)
    with pytest.raises(SuiteError, match=message):
        generic.import_prompt_list(db, tmp_path / name, suite="mine")
    assert prompt_count(db) == 0


def test_prompt_list_needs_a_suite_and_an_existing_file(tmp_path, db):
    (tmp_path / "p.csv").write_text("key,text\nk,A cat\n")
    with pytest.raises(SuiteError, match=r"p.csv:2: no suite\. Add a suite column or pass --suite\."):
        generic.import_prompt_list(db, tmp_path / "p.csv")
    with pytest.raises(SuiteError, match=r"nothing.csv: file not found\. Check the path\."):
        generic.import_prompt_list(db, tmp_path / "nothing.csv", suite="mine")


# --- T4 SANEval -------------------------------------------------------------------------------------------------------

NUMBERS = {word: n for n, word in enumerate(saneval.NUMBER_WORDS)}


def test_saneval_builder_tags_category_stratum_and_structure():
    specs = saneval.saneval_specs(100, seed=1)
    assert Counter(s.subset for s in specs) == {c: 100 for c in saneval.CATEGORIES}
    for spec in specs:
        m = spec.metadata
        assert m["category"] == spec.subset and m["stratum"] == saneval.stratum_of(m["object_count"])
        assert all(name in spec.text for name in m["objects"])
        if spec.subset in saneval.BINDING_CATEGORIES:
            assert m["attribute_kind"] == spec.subset and list(m["attributes"]) == m["objects"]
            assert len(m["objects"]) == m["object_count"]
            assert all(f"{a} {o}" in spec.text for o, a in m["attributes"].items())
        elif spec.subset == "spatial":
            r = m["relation"]
            assert m["stratum"] == "2" and r["relation"] in ("left of", "right of", "above", "below")
            assert spec.text.lower().startswith(f"a{'n' if r['subject'][0] in 'aeiou' else ''} {r['subject']}")
        else:
            assert sum(m["counts"].values()) == m["object_count"]
            words = [w.strip(",") for w in spec.text.lower().split()]
            assert sum(NUMBERS[w] for w in words if w in NUMBERS) == m["object_count"]
    strata = Counter(s.metadata["stratum"] for s in specs if s.subset == "color")
    assert strata == {stratum: 20 for stratum in saneval.STRATA}
    assert specs[0].text == specs[0].text[0].upper() + specs[0].text[1:]
    assert len({s.text for s in specs}) == len(specs) and len({s.key for s in specs}) == len(specs)


def test_saneval_builder_is_seeded_and_prefix_stable():
    assert saneval.saneval_specs(30, seed=5) == saneval.saneval_specs(30, seed=5)
    assert saneval.saneval_specs(30, seed=5) != saneval.saneval_specs(30, seed=6)
    longer = saneval.category_specs("numeracy", 300, seed=5)
    assert saneval.category_specs("numeracy", 120, seed=5) == longer[:120]


def test_saneval_published_size_and_exhausted_strata(db):
    specs, result = saneval.build_saneval(db)
    assert len(specs) == result.inserted == 5 * 1000
    numeracy = Counter(s.metadata["stratum"] for s in specs if s.subset == "numeracy")
    assert numeracy["1"] == len(saneval.WORDS.objects) and sum(numeracy.values()) == 1000
    with pytest.raises(SuiteError, match=r"spatial: the word lists give only \d+ distinct prompts, not 100000\. "
                                         r"Ask for fewer or add words\."):
        saneval.category_specs("spatial", 100_000)
    with pytest.raises(SuiteError, match=r"unknown SANEval category 'colour'\. Use color, shape, texture"):
        saneval.saneval_specs(1, categories=["colour"])
    assert saneval.build_saneval(db)[1].unchanged == 5000


def test_stratum_boundaries():
    assert [saneval.stratum_of(n) for n in (1, 2, 3, 5, 6, 10, 11, 15)] == [
        "1", "2", "3-5", "3-5", "6-10", "6-10", "11-15", "11-15"]
    with pytest.raises(SuiteError, match="object count 16 is outside the strata 1 to 15"):
        saneval.stratum_of(16)


def test_saneval_external_list(db, tmp_path):
    specs = saneval.load_saneval_list(DATA / "saneval_external.csv")
    assert [(s.item_key, s.subset, s.metadata.get("stratum")) for s in specs] == [
        ("ext-1", "color", "2"), ("ext-2", "numeracy", "3-5"), ("saneval_external-4", "spatial", None)]
    assert specs[0].metadata["attributes"] == {"dress": "beige", "suitcase": "gray"}
    assert specs[1].metadata["category"] == "numeracy" and specs[1].metadata["object_count"] == 5
    assert saneval.import_saneval_list(db, DATA / "saneval_external.csv").inserted == 3
    assert saneval.import_saneval_list(db, DATA / "saneval_external.csv").unchanged == 3
    bad = tmp_path / "bad.csv"
    bad.write_text("text,category,stratum,object_count\nA cat,color,1,1\nTwo cats,numeracy,1,2\n")
    with pytest.raises(SuiteError, match=r"bad.csv:3: stratum '1' does not hold 2 objects; it is '2'\."):
        saneval.load_saneval_list(bad)
    bad.write_text("text,category\nA cat,colour\n")
    with pytest.raises(SuiteError, match=r"bad.csv:2: category 'colour' is not one of color, shape, texture, spatial"):
        saneval.load_saneval_list(bad)
    bad.write_text("text,category,object_count\nMany cats,numeracy,20\n")
    with pytest.raises(SuiteError, match=r"bad.csv:2: object_count '20' is not a whole number from 1 to 15\."):
        saneval.load_saneval_list(bad)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": ["A", "red", "car"], "category": "color"}\n')
    with pytest.raises(SuiteError, match=r"bad.jsonl:1: 'text' must be a string, got list \[\"A\", \"red\""):
        saneval.load_saneval_list(bad)


def test_write_specs_is_all_or_nothing_across_suites(db):
    good = commonsense.sample_specs()
    bad = [*good, *saneval.saneval_specs(2), saneval.saneval_specs(1)[0]]
    with pytest.raises(SuiteError, match="duplicate key 'color-s0-0000'"):
        write_specs(db, bad)
    assert prompt_count(db) == 0
