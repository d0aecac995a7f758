"""T1 taxonomy suite on the real WordNet 3.0 (Debian wordnet-base), predicted concepts and the definition client."""

from __future__ import annotations

import gzip
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from support.arena import prompt_count
from support.cache import build_once

from arena.suite_commands import main
from core.settings import Settings
from datamodel.connection import connect
from judges import definitions
from suites import taxonomy
from suites.common import SuiteError, write_specs
from suites.wordnet import DEBIAN_WORDNET_DIR, LEXNAMES, WORDNET_DIR_ENV, load_wordnet, prepare_wordnet
from tools.fake_openai import FakeServer, Scripted

# the prepared WordNet copy (about 30 s to make) lives in the test artefact cache, once per version of its code
CACHE_DIR = Path(os.environ.get("ARENA_CACHE_DIR")
                 or build_once("wordnet", ("suites/wordnet.py",), lambda folder: None))
WORDNET_DIR = Path(os.environ.get(WORDNET_DIR_ENV) or DEBIAN_WORDNET_DIR)



@pytest.fixture(scope="session")
def wordnet_installed():
    """Fails (never skips) without WordNet: `make test` installs it, so a missing copy is a broken set-up."""
    if not (WORDNET_DIR / "data.noun").is_file():
        pytest.fail(f"WordNet 3.0 is missing from {WORDNET_DIR}: run `make test` (it installs it) or "
                    f"`sudo apt-get install wordnet-base`, or set {WORDNET_DIR_ENV} to a WordNet 3.0 dict folder.")


needs_wordnet = pytest.mark.usefixtures("wordnet_installed")


@pytest.fixture(scope="session")
def wn(wordnet_installed):
    return load_wordnet(CACHE_DIR, WORDNET_DIR)


# --- WordNet set-up ----------------------------------------------------------------------------------------------


@needs_wordnet
def test_prepared_corpus_holds_copies_and_generated_index_files(wn):
    import nltk

    root = prepare_wordnet(CACHE_DIR, WORDNET_DIR)
    corpus = root / "corpora" / "wordnet"
    assert root == CACHE_DIR.resolve() / "nltk_data" and str(root) in nltk.data.path
    for name in ("data.noun", "index.noun", "noun.exc", "lexnames", "index.sense"):
        assert (corpus / name).is_file() and not (corpus / name).is_symlink(), name
    assert (corpus / "lexnames").read_text().splitlines()[6] == "06\tnoun.artifact\t1"
    lines = (corpus / "index.sense").read_text().splitlines()
    assert lines == sorted(lines) and len(lines) > 200_000
    assert "dog%1:05:00:: 02084071 1 42" in lines  # sense 1 of dog, tagged 42 times in cntlist.rev
    assert wn.lemma_from_key("coin%1:21:02::").synset().name() == "coin.n.01"
    assert wn.synset("coin.n.01").lexname() == "noun.possession"  # lexicographer file 21, as in the sense key


@needs_wordnet
def test_lexnames_match_the_manual_page_when_installed():
    page = Path("/usr/share/man/man5/lexnames.5WN.gz")
    if not page.is_file():
        pytest.skip("lexnames(5WN) manual page not installed")
    rows = [line.split("\t") for line in gzip.open(page, "rt") if line[:2].isdigit() and "\t" in line]
    assert [name.strip() for _, name, *_ in rows] == LEXNAMES


def test_missing_wordnet_says_what_to_install(tmp_path):
    with pytest.raises(SuiteError, match=rf"{tmp_path}: no WordNet 3.0 database here \(missing data.noun.*"
                                         r"Install Debian's wordnet-base .* or set ARENA_WORDNET_DIR"):
        prepare_wordnet(tmp_path / "cache", tmp_path)


# --- Easy and the random split -------------------------------------------------------------------------------------


@needs_wordnet
def test_easy_subset_is_roots_plus_direct_hyponyms(wn, db):
    concepts, result = taxonomy.build_easy(db, wn)
    assert len(taxonomy.EASY_ROOTS) == 22
    assert {"coin.n.01", "chromatic_color.n.01", "makeup.n.01", "furniture.n.01"} <= set(taxonomy.EASY_ROOTS)
    assert len(concepts) == len({c.synset for c in concepts}) == taxonomy.PUBLISHED_EASY_ENTITIES == 483
    assert result.inserted == prompt_count(db) == 2 * 483
    by_id = {c.synset: c for c in concepts}
    blue = by_id["blue.n.01"]
    assert blue.hypernyms == ("chromatic_color.n.01",) and "red.n.01" in blue.cohyponyms
    # the authors' Easy rows list a concept among its own cohyponyms (coin.n.01 -> ['coin.n.01'])
    assert blue.cohyponyms == tuple(sorted(s.name() for s in wn.synset("chromatic_color.n.01").hyponyms()))
    assert by_id["coin.n.01"].cohyponyms == ("coin.n.01",)
    assert by_id["chest_of_drawers.n.01"].lemma == "chest of drawers"
    rows = {r["variant"]: r for r in db.query("SELECT * FROM prompts WHERE item_key = 'lipstick.n.01'")}
    assert rows["with_definition"]["text"] == "An image of lipstick (makeup that is used to color the lips)"
    assert rows["without_definition"]["text"] == "An image of lipstick"
    metadata = json.loads(rows["without_definition"]["metadata"])
    assert metadata == {"synset": "lipstick.n.01", "lemma": "lipstick",
                        "definition": "makeup that is used to color the lips",
                        "hypernyms": ["makeup.n.01"], "cohyponyms": metadata["cohyponyms"], "subset": "Easy"}
    assert "mascara.n.01" in metadata["cohyponyms"]
    assert taxonomy.build_easy(db, wn)[1].unchanged == 966 and prompt_count(db) == 966


@needs_wordnet
def test_random_split_types_follow_the_protocol(wn):
    concepts = taxonomy.random_split_concepts(wn, {"Hypernymy": 30, "Hyponymy": 20, "Synset-Mixing": 10}, seed=3)
    assert Counter(c.subset for c in concepts) == {"Hypernymy": 30, "Hyponymy": 20, "Synset-Mixing": 10}
    for concept in concepts:
        synset = wn.synset(concept.synset)
        assert synset.pos() == "n" and not synset.instance_hypernyms()
        if concept.subset == "Synset-Mixing":
            assert len(synset.hypernyms()) >= 2
        else:
            assert len(synset.hypernyms()) == 1 and bool(taxonomy.children(synset)) == (concept.subset == "Hyponymy")
    again = taxonomy.random_split_concepts(wn, {"Hypernymy": 30, "Hyponymy": 5, "Synset-Mixing": 10}, seed=3)
    assert [c.synset for c in again if c.subset != "Hyponymy"] == [c.synset for c in concepts if c.subset != "Hyponymy"]
    other = taxonomy.random_split_concepts(wn, {"Hypernymy": 30}, seed=4)
    assert {c.synset for c in other} != {c.synset for c in concepts if c.subset == "Hypernymy"}
    pools = taxonomy.split_pools(wn)
    for subset, example in (("Hypernymy", "cappuccino.n.01"), ("Hyponymy", "working_dog.n.01"),
                            ("Synset-Mixing", "milk.n.01")):
        assert wn.synset(example).offset() in pools[subset], example
    # the sizes nltk gives when walking every noun synset (read from data.noun directly here)
    assert {name: len(pool) for name, pool in pools.items()} == {"Hypernymy": 56320, "Hyponymy": 16642,
                                                                 "Synset-Mixing": 1422}


@needs_wordnet
def test_random_split_default_counts_are_the_published_ones(wn, db):
    concepts, result = taxonomy.build_random_split(db, wn)
    assert Counter(c.subset for c in concepts) == {"Hypernymy": 828, "Hyponymy": 204, "Synset-Mixing": 170}
    assert result.inserted == 2 * 1202


@needs_wordnet
def test_a_database_holds_one_random_split(wn, db):
    small = {"Hypernymy": 20, "Hyponymy": 10, "Synset-Mixing": 5}
    taxonomy.build_random_split(db, wn, small, seed=1)
    before = prompt_count(db)
    _, again = taxonomy.build_random_split(db, wn, small, seed=1)  # the same split: nothing changes
    assert prompt_count(db) == before and again.unchanged == before
    with pytest.raises(SuiteError, match=r"already holds a random split with \d+ node.*another database \(ARENA_DB\)"):
        taxonomy.build_random_split(db, wn, small, seed=2)
    with pytest.raises(SuiteError, match="seed 1, Hypernymy 5"):
        taxonomy.build_random_split(db, wn, {"Hypernymy": 5, "Hyponymy": 10, "Synset-Mixing": 5}, seed=1)
    assert prompt_count(db) == before  # refused builds wrote nothing


def test_random_split_refuses_more_nodes_than_wordnet_has(wn):
    with pytest.raises(SuiteError, match=r"Synset-Mixing: asked for 99999 nodes, WordNet has \d+\. Ask for fewer\."):
        taxonomy.random_split_concepts(wn, {"Synset-Mixing": 99999})
    with pytest.raises(SuiteError, match="unknown random-split type Hypo. Use Hypernymy, Hyponymy, Synset-Mixing"):
        taxonomy.random_split_concepts(wn, {"Hypo": 1})


@needs_wordnet
def test_unknown_root_names_file_and_line(wn, db, tmp_path):
    roots = tmp_path / "roots.txt"
    roots.write_text("# my roots\ncoin.n.01\nfurniture.n.01  # chairs and tables\nunicorn_lamp.n.01\n")
    with pytest.raises(SuiteError, match=rf"{roots}:4: unknown synset id 'unicorn_lamp.n.01'\. Use a WordNet 3.0"):
        taxonomy.read_roots(wn, roots)
    roots.write_text("coin.n.01\nfurniture.n.01 # chairs and tables\n")
    assert taxonomy.read_roots(wn, roots) == ["coin.n.01", "furniture.n.01"]
    with pytest.raises(SuiteError, match="Easy roots: unknown synset id 'coin.n.99'"):
        taxonomy.build_easy(db, wn, ["coin.n.01", "coin.n.99"])
    assert prompt_count(db) == 0


@needs_wordnet
def test_cohyponyms_are_the_authors_lists(wn):
    """N(v) as the authors' data lists it, for the 130 concepts of tests/data/taxonomy/repeated_concepts.csv (their
    rows as released): each hypernym's hyponyms, concatenated (a synset under two of them twice); the Easy rows
    keep the concept itself (coin.n.01 -> ['coin.n.01']), every other subset drops its first occurrence, so a
    concept with two hypernyms keeps itself once; no instance links (plain.n.01's land.n.04 has america.n.02)."""
    import ast
    import csv

    path = Path(__file__).parent / "data" / "taxonomy" / "repeated_concepts.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = {(row["subset"], row["wordnet_id"]): row for row in csv.DictReader(handle)}
    assert len(rows) == 130
    kinds = Counter()
    for row in rows.values():
        listed = ast.literal_eval(row["cohyponym_synsets"])
        subset = taxonomy.published_subset(row["subset"], "test")
        synset = wn.synset(row["core_synset"])
        if subset in taxonomy.PREDICTED_SUBSETS:  # the predicted concept carries its gold hypernym's synset
            concept = taxonomy._predicted_concept("p.csv", 2, {"concept": row["core_lemma"], "subset": subset,
                                                                 "synset": row["core_synset"]}, None, lambda: wn)
        else:
            concept = taxonomy.concept_from_synset(synset, subset)
        assert list(concept.cohyponyms) == listed, (row["subset"], row["core_synset"])
        kinds[(subset, synset.name() in listed)] += 1
    assert kinds[("Easy", True)] == 21 and not kinds[("Easy", False)]
    assert kinds[("Synset-Mixing", True)] == 8 and kinds[("Hyponymy", False)] == 9
    plain = taxonomy.concept_from_synset(wn.synset("plain.n.01"), "Hypernymy")
    assert "america.n.02" in {s.name() for s in wn.synset("land.n.04").instance_hyponyms()}
    assert "america.n.02" not in plain.cohyponyms and "plain.n.01" not in plain.cohyponyms


# --- the demo concepts -----------------------------------------------------------------------------------------------


@needs_wordnet
def test_demo_file_matches_wordnet(wn):
    bundled = taxonomy.demo_concepts()
    assert [c.record() for c in bundled] == [c.record() for c in taxonomy.demo_concepts_from_wordnet(wn)], (
        "demo_taxonomy.json is out of date: run .venv/bin/python scripts/make_demo_taxonomy.py"
    )
    roots = {wn.synset(r).name() for r in taxonomy.EASY_ROOTS}
    for concept in bundled:
        synset = wn.synset(concept.synset)
        assert {p.name() for p in taxonomy.parents(synset)} & roots, concept.synset
        assert list(concept.cohyponyms) == taxonomy.cohyponyms(synset, keep_self=True), concept.synset
    by_id = {c.synset: c for c in bundled}  # all of N(v), the concept too (an Easy concept, as the authors list it)
    assert len(by_id["poodle.n.01"].cohyponyms) == len(wn.synset("dog.n.01").hyponyms()) > 5
    assert "poodle.n.01" in by_id["poodle.n.01"].cohyponyms
    assert {"pug.n.01", "corgi.n.01", "dalmatian.n.02"} <= set(by_id["poodle.n.01"].cohyponyms)


def test_demo_specs_need_no_wordnet():
    specs = taxonomy.demo_specs()
    assert len(specs) == 2 * len(taxonomy.DEMO_SYNSETS) >= 48
    assert {s.variant for s in specs} == set(taxonomy.VARIANTS) and {s.subset for s in specs} == {"Easy"}
    assert specs[0].text.startswith("An image of red (") and specs[1].text == "An image of red"
    assert all(s.metadata["hypernyms"] and s.metadata["definition"] for s in specs)
    db = connect(":memory:")
    assert write_specs(db, specs).inserted == len(specs)
    assert write_specs(db, taxonomy.demo_specs()).unchanged == len(specs)
    assert [taxonomy.lemma_of(h) for h in specs[0].metadata["hypernyms"]] == ["chromatic color"]


# --- CLI ------------------------------------------------------------------------------------------------------------


def _settings(tmp_path) -> Settings:
    return Settings(db_path=tmp_path / "arena.db", cache_dir=CACHE_DIR, demo=False)


@needs_wordnet
def test_cli_build_easy_and_random_print_counts(tmp_path, capsys, wn):
    settings = _settings(tmp_path)
    argv = ["suites", "build", "easy", "--wordnet-dir", str(WORDNET_DIR)]
    assert main(argv, lambda: settings) == 0
    out = capsys.readouterr().out
    assert "Easy: 22 root synsets, 483 entities (the paper had 483), 2 prompts each" in out
    assert "966 prompts written (966 new, 0 updated, 0 unchanged)" in out
    assert main(["suites", "build", "random", "--hypernymy", "8", "--hyponymy", "4", "--mixing", "2",
                 "--wordnet-dir", str(WORDNET_DIR)], lambda: settings) == 0
    out = capsys.readouterr().out
    assert ("Random split (seed 0): Hypernymy 8, Hyponymy 4, Synset-Mixing 2; 14 nodes (published 828 / 204 / 170)"
            in out)
    assert "taxonomy     Synset-Mixing      without_definition          2" in out
    roots = tmp_path / "roots.txt"
    roots.write_text("coin.n.01\nnot_a_synset\n")
    assert main(["suites", "build", "easy", "--roots-file", str(roots)], lambda: settings) == 2
    assert f"error: {roots}:2: unknown synset id 'not_a_synset'" in capsys.readouterr().err


# --- predicted concepts ----------------------------------------------------------------------------------------------


def test_definition_prompt_is_the_protocols():
    assert definitions.definition_prompt("cigar lighter") == (
        "Write a definition for the word/phrase in one sentence.\n"
        "Word: caddle\nDefinition: act as a caddie and carry clubs for a player\n"
        "Word: cigar lighter\nDefinition:"
    )
    assert (definitions.parse_definition("Definition: a lighter for cigars or cigarettes\n")
            == "a lighter for cigars or cigarettes")
    assert definitions.parse_definition('\n"a small dog"\nWord: x') == "a small dog"


def _predicted_csv(tmp_path, rows: str) -> Path:
    path = tmp_path / "predicted.csv"
    path.write_text("concept,subset,definition,source_node\n" + rows)
    return path


def test_predicted_import_with_definitions_and_idempotent_reimport(tmp_path, db):
    path = _predicted_csv(tmp_path, "cigar lighter,P-Hyper,a lighter for cigars or cigarettes,cigar_cutter.n.01\n"
                                    "espresso,P-Easy,strong black coffee,\n")
    result = definitions.import_predicted(db, path)
    assert result.inserted == 4
    row = next(db.query("SELECT * FROM prompts WHERE item_key = 'cigar lighter' AND variant = 'with_definition'"))
    assert row["text"] == "An image of cigar lighter (a lighter for cigars or cigarettes)"
    assert row["subset"] == "P-Hyper"
    assert json.loads(row["metadata"])["source_node"] == "cigar_cutter.n.01"
    assert json.loads(row["metadata"])["definition_source"] == "file"
    assert definitions.import_predicted(db, path).unchanged == 4 and prompt_count(db) == 4


def test_predicted_without_definition_or_endpoint_says_what_to_set(tmp_path, db, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = _predicted_csv(tmp_path, "espresso,P-Easy,strong black coffee,\nhusky,P-Hypo,,\nlatte,P-Hypo,,\n")
    with pytest.raises(SuiteError, match=rf"{path}:3: no definition for 'husky' \(2 concepts lack one\)\. "
                                         "Set OPENAI_API_KEY or ARENA_JUDGE_BASE_URL so the judge model writes them, "
                                         "or add a definition column\\."):
        definitions.import_predicted(db, path, settings=Settings())
    assert prompt_count(db) == 0


def test_predicted_bad_rows_name_the_line(tmp_path, db):
    path = _predicted_csv(tmp_path, "espresso,P-Easy,strong black coffee,\nhusky,P-Hypos,a dog,\n")
    with pytest.raises(SuiteError, match=rf"{path}:3: subset 'P-Hypos' is not one of P-Easy, P-Hypo, P-Hyper, P-Mix"):
        definitions.import_predicted(db, path)
    path = _predicted_csv(tmp_path, "espresso,P-Easy,strong black coffee,\nespresso,P-Easy,coffee,\n")
    with pytest.raises(SuiteError, match=rf"{path}:3: duplicate key 'espresso' \(subset 'P-Easy', variant "
                                         rf"'with_definition'\) in suite 'taxonomy', first at {path}:2"):
        definitions.import_predicted(db, path)
    (tmp_path / "nocolumn.csv").write_text("word,subset\nespresso,P-Easy\n")
    with pytest.raises(SuiteError, match=r"nocolumn.csv:1: missing column 'concept' \(the header has word, subset\)"):
        definitions.import_predicted(db, tmp_path / "nocolumn.csv")
    assert prompt_count(db) == 0


def test_predicted_definitions_come_from_the_injected_definer_once(tmp_path, db):
    asked = []

    def define(concepts):
        asked.append(list(concepts))
        return {concept: f"a thing called {concept}" for concept in concepts}

    path = tmp_path / "p.jsonl"
    path.write_text('{"concept": "husky"}\n{"concept": "latte", "definition": "coffee with milk"}\n'
                    '{"concept": "pug"}\n')
    assert definitions.import_predicted(db, path, subset="P-Hypo", define=define).inserted == 6
    assert asked == [["husky", "pug"]]
    text = db.execute("SELECT text FROM prompts WHERE item_key = 'pug' AND variant = 'with_definition'").fetchone()[0]
    assert text == "An image of pug (a thing called pug)"
    assert definitions.import_predicted(db, path, subset="P-Hypo", define=define).unchanged == 6
    assert asked == [["husky", "pug"]]  # stored definitions are reused; the model is not asked again
    sources = {json.loads(m)["definition_source"] for m, in db.execute("SELECT metadata FROM prompts")}
    assert sources == {"llm", "file"}


def _word(received) -> str:
    """The concept a definition request asks about."""
    return received.text.rsplit("Word: ", 1)[1].split("\n")[0]


def _judge_settings(server, **overrides) -> Settings:
    return Settings(judge_base_url=server.base_url, judge_model="tiny-judge", judge_retry_base_s=0.01,
                    judge_max_retries=2, judge_timeout_s=5.0, **overrides)


@pytest.fixture
def local_endpoint(monkeypatch):
    """No API key and no proxy: requests go to the fake server on 127.0.0.1 only."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def test_definitions_come_through_the_judge_engine_and_are_cached(tmp_path, db, local_endpoint):
    path = _predicted_csv(tmp_path, "husky,P-Hypo,,\nlatte,P-Hypo,coffee with milk,\npug,P-Hypo,,\n")
    with FakeServer(lambda r: Scripted(f"Definition: the {_word(r)} of the test")) as server:
        settings = _judge_settings(server)
        assert definitions.import_predicted(db, path, settings=settings, progress=False).inserted == 6
        first = server.snapshot()
        assert sorted(_word(r) for r in first) == ["husky", "pug"]
        for received in first:
            assert received.body["model"] == "tiny-judge" and received.body["temperature"] == 0
            assert received.body["max_tokens"] == definitions.DEFINITION_MAX_TOKENS
            assert received.body["messages"] == [
                {"role": "user", "content": [{"type": "text", "text": definitions.definition_prompt(_word(received))}]}]
        rows = {(r["item_key"], r["variant"]): r for r in db.query("SELECT * FROM prompts")}
        assert rows[("pug", "with_definition")]["text"] == "An image of pug (the pug of the test)"
        assert rows[("pug", "without_definition")]["text"] == "An image of pug"
        assert json.loads(rows[("husky", "with_definition")]["metadata"])["definition_source"] == "llm:tiny-judge"
        assert json.loads(rows[("latte", "with_definition")]["metadata"])["definition_source"] == "file"
        assert db.execute("SELECT COUNT(*) FROM judge_requests WHERE model = 'tiny-judge'").fetchone()[0] == 2
        before = list(db.query("SELECT * FROM prompts ORDER BY id"))

        assert definitions.import_predicted(db, path, settings=settings, progress=False).unchanged == 6
        assert list(db.query("SELECT * FROM prompts ORDER BY id")) == before
        assert len(server.snapshot()) == 2  # the stored definitions were reused: no new request

        db.execute("DELETE FROM prompts")
        db.conn.commit()
        assert definitions.import_predicted(db, path, settings=settings, progress=False).inserted == 6
        assert len(server.snapshot()) == 2  # the engine's cache answered: still no new request
        assert [r["text"] for r in db.query("SELECT text FROM prompts ORDER BY id")] == [r["text"] for r in before]


def test_a_failing_definition_endpoint_names_the_row_and_imports_nothing(tmp_path, db, local_endpoint, capsys):
    path = _predicted_csv(tmp_path, "husky,P-Hypo,,\nlatte,P-Hypo,coffee with milk,\npug,P-Hypo,,\n")
    broken = {"pug"}

    def respond(received):
        if _word(received) in broken:
            return Scripted("the server is overloaded", status=500)
        return Scripted(f"Definition: the {_word(received)} of the test")

    with FakeServer(respond) as server:
        settings = _judge_settings(server)
        with pytest.raises(SuiteError) as caught:
            definitions.import_predicted(db, path, settings=settings, progress=False)
        message = str(caught.value)
        assert message.startswith(f"{path}:4: the judge model wrote no definition for 'pug': API error after 3 "
                                  "attempts: InternalServerError")
        assert "the server is overloaded" in message
        assert message.endswith("(1 of 2 definitions failed; nothing was imported). Check the judge endpoint "
                                "(ARENA_JUDGE_BASE_URL, OPENAI_API_KEY, ARENA_JUDGE_MODEL) and run the import again: "
                                "definitions already written are cached and not asked for again. "
                                "Or add a definition column.")
        assert prompt_count(db) == 0
        assert sorted(_word(r) for r in server.snapshot()) == ["husky", "pug", "pug", "pug"]  # 2 retries of pug

        capsys.readouterr()
        code = main(["suites", "import", "predicted", str(path)],
                    lambda: _judge_settings(server, db_path=tmp_path / "cli.db", demo=False))
        assert code == 2 and capsys.readouterr().err.splitlines()[-1] == f"error: {message}"  # no traceback

        broken.clear()  # the endpoint recovers: only the failed concept is asked again, husky's answer is cached
        sent = len(server.snapshot())
        assert definitions.import_predicted(db, path, settings=settings, progress=False).inserted == 6
        assert [_word(r) for r in server.snapshot()[sent:]] == ["pug"]
        assert db.execute("SELECT text FROM prompts WHERE item_key = 'pug' AND variant = 'with_definition'"
                          ).fetchone()[0] == "An image of pug (the pug of the test)"


def test_definer_without_an_endpoint_says_what_to_set(db):
    from judges.client import EngineConfig

    with pytest.raises(SuiteError, match="set OPENAI_API_KEY or ARENA_JUDGE_BASE_URL, or add a definition column"):
        definitions.judge_definer(db, EngineConfig(), env={})


# --- predicted concepts with a synset ---------------------------------------------------------------------------------


def test_predicted_synsets_are_checked_and_get_wordnet_relations(tmp_path, db, wn):
    path = tmp_path / "p.csv"
    path.write_text("concept,subset,definition,synset\n"
                    "cappuccino,P-Hyper,equal parts of espresso and steamed milk,cappuccino.n.01\n"
                    "milk,P-Mix,a white drink,milk.n.01\n"
                    "snow globe,P-Easy,a sphere with a scene inside,\n")
    assert definitions.import_predicted(db, path, wn=wn).inserted == 6
    meta = {r["item_key"]: json.loads(r["metadata"]) for r in db.query("SELECT * FROM prompts WHERE variant = ?",
                                                                      ["with_definition"])}
    assert set(meta) == {"cappuccino.n.01", "milk.n.01", "snow globe"}
    cappuccino = meta["cappuccino.n.01"]
    assert cappuccino["synset"] == "cappuccino.n.01" and cappuccino["hypernyms"] == ["coffee.n.01"]
    assert cappuccino["cohyponyms"] == taxonomy.cohyponyms(wn.synset("cappuccino.n.01"))
    assert "espresso.n.01" in cappuccino["cohyponyms"] and "cappuccino.n.01" not in cappuccino["cohyponyms"]
    assert meta["milk.n.01"]["cohyponyms"].count("milk.n.01") == 1  # under both hypernyms, dropped once
    assert cappuccino["definition"] == "equal parts of espresso and steamed milk"  # the file's, not WordNet's
    assert meta["milk.n.01"]["hypernyms"] == ["beverage.n.01", "dairy_product.n.01"]
    assert meta["snow globe"]["synset"] == "" and meta["snow globe"]["hypernyms"] == []


def test_an_unknown_predicted_synset_names_file_and_line(tmp_path, db, wn):
    path = tmp_path / "p.csv"
    path.write_text("concept,subset,definition,synset\n"
                    "cappuccino,P-Hyper,coffee with foam,cappuccino.n.01\n"
                    "cappucino,P-Hyper,coffee with foam,cappucino.n.01\n")
    with pytest.raises(SuiteError, match=rf"{path}:3: unknown synset id 'cappucino.n.01'\. Use a WordNet 3\.0 noun id"):
        definitions.import_predicted(db, path, wn=wn)
    assert prompt_count(db) == 0


def test_wordnet_is_loaded_only_for_rows_with_a_synset(tmp_path):
    path = _predicted_csv(tmp_path, "espresso,P-Easy,strong black coffee,\n")
    loads = []
    taxonomy.load_predicted(path, wordnet=lambda: loads.append(1))
    assert loads == []
    path.write_text("concept,subset,definition,synset\nespresso,P-Easy,coffee,espresso.n.01\n")
    with pytest.raises(SuiteError, match=rf"{path}:2: the synset column needs WordNet 3\.0: .*no WordNet"):
        taxonomy.load_predicted(path, wordnet=lambda: load_wordnet(tmp_path / "cache", tmp_path))


def test_predicted_json_values_must_be_strings(tmp_path, db):
    path = tmp_path / "p.jsonl"
    path.write_text('{"concept": "husky", "subset": "P-Hypo", "definition": "a dog"}\n'
                    '{"concept": "pug", "subset": "P-Hypo", "definition": ["a", "dog"]}\n')
    with pytest.raises(SuiteError, match=rf"{path}:2: 'definition' must be a string, got list \[\"a\", \"dog\"\]\. "
                                         "Write it as a JSON string"):
        definitions.import_predicted(db, path)
    path.write_text('{"concept": ["husky"], "subset": "P-Hypo", "definition": "a dog"}\n')
    with pytest.raises(SuiteError, match=rf"{path}:1: 'concept' must be a string, got list"):
        definitions.import_predicted(db, path)
    assert prompt_count(db) == 0
