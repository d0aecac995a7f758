"""SANEval's prompts made the way the paper made them (§3.1): the published strata, the paper's own words, counts only
up to the number words prompt 4 knows, an LLM writer through the judges' client with a validation step, and the
scripted builder kept as the offline fallback."""

from __future__ import annotations

from collections import Counter

import pytest

from suites import saneval

# The example prompts the paper prints (Fig. 3, Table 5) and those of the authors' sample images
# (repository nielseni6/saneval, images/samples/*/<prompt>_00000N.png), with the structure each one names.
PAPER_EXAMPLES = [
    ("color", "a pink stop sign and a orange bird", {"attributes": {"stop sign": "pink", "bird": "orange"}}),
    ("color", "a yellow peach and a lime ceiling", {"attributes": {"peach": "yellow", "ceiling": "lime"}}),
    ("color", "a brown shirt and a pink apple", {"attributes": {"shirt": "brown", "apple": "pink"}}),
    ("shape", "a pentagonal spoon", {"attributes": {"spoon": "pentagonal"}}),
    ("texture", "a rubber grass", {"attributes": {"grass": "rubber"}}),
    ("numeracy", "four trucks", {"counts": {"truck": 4}}),
    ("spatial", "a mouse on the bottom of a painting", {"relation": ("mouse", "on the bottom of", "painting")}),
    ("color", "a cyan bus and a yellow bucket", {"attributes": {"bus": "cyan", "bucket": "yellow"}}),
    ("color", "a gold stool, a tan mirror, a gray pumpkin, and a green tablet",
     {"attributes": {"stool": "gold", "mirror": "tan", "pumpkin": "gray", "tablet": "green"}}),
    ("shape", "a oblong egg and a conical pen", {"attributes": {"egg": "oblong", "pen": "conical"}}),
    ("texture", "a plastic bathtub, a rubber cup, and a leather dove",
     {"attributes": {"bathtub": "plastic", "cup": "rubber", "dove": "leather"}}),
    ("numeracy", "three kites, two guitars and one truck", {"counts": {"kite": 3, "guitar": 2, "truck": 1}}),
    ("numeracy", "two sofas and four chickens", {"counts": {"sofa": 2, "chicken": 4}}),
    ("spatial", "a fish next to a bicycle", {"relation": ("fish", "next to", "bicycle")}),
    ("spatial", "a lamp on the top of a person", {"relation": ("lamp", "on the top of", "person")}),
    ("spatial", "a man on the right of a plate", {"relation": ("man", "on the right of", "plate")}),
]


@pytest.mark.parametrize("category, text, structure", PAPER_EXAMPLES, ids=[t for _, t, _ in PAPER_EXAMPLES])
def test_the_scripted_fallback_writes_the_papers_own_examples(category, text, structure):
    """Fig. 3 and Table 5 print these prompts, and the authors' sample images are named after more: the scripted
    builder's words hold every object and attribute, and its grammar writes each prompt letter for letter (lower
    case, "a" before every noun as printed: "a orange bird", "a oblong egg"; a serial comma before the last of
    three or more bound objects, none between counted ones)."""
    words = saneval.PUBLISHED_WORDS
    singular = {name for name, _ in words.objects}
    if "attributes" in structure:
        assert set(structure["attributes"]) <= singular
        assert set(structure["attributes"].values()) <= set(getattr(words, category))
        assert saneval.binding_text(structure["attributes"]) == text
    elif "counts" in structure:
        assert set(structure["counts"]) <= singular
        assert max(structure["counts"].values()) <= saneval.MAX_COUNT
        assert saneval.numeracy_text(structure["counts"], words) == text
    else:
        subject, relation, obj = structure["relation"]
        assert {subject, obj} <= singular and relation in saneval.PUBLISHED_RELATION_RULES
        assert saneval.spatial_text(subject, relation, obj) == text


def test_published_counts_stay_within_the_number_words_prompt_4_is_given():
    """Prompt 4 gets {available_numbers} = the authors' list "a, an, one ... eight": a count of nine or more could
    not be read back, so the published builder never writes one."""
    from judges.saneval_paper_prompts import AVAILABLE_NUMBERS

    assert saneval.COUNT_WORDS == tuple(AVAILABLE_NUMBERS[2:]) and saneval.MAX_COUNT == 8
    specs = saneval.published_category_specs("numeracy", 1000, seed=2)
    counts = [n for spec in specs for n in spec.metadata["counts"].values()]
    assert max(counts) == 8 and min(counts) == 1
    for spec in specs:
        assert not any(word in spec.text.split() for word in ("nine", "ten", "eleven", "twelve"))


def test_the_spatial_one_object_stratum_places_its_object_in_the_picture():
    """§3.1 gives every category 275 one-object prompts; a spatial prompt with one object places it in the picture
    ("a lamp on the left of the image"), with one of the four directions of the published relations, and its
    metadata says so (relation object: the image)."""
    specs = saneval.published_category_specs("spatial", 1000, seed=4)
    strata = Counter(spec.metadata["stratum"] for spec in specs)
    assert strata == {"1": 275, "2": 275, "3-5": 275, "6-10": 125, "11-15": 50}
    single = [spec for spec in specs if spec.metadata["stratum"] == "1"]
    for spec in single:
        relation = spec.metadata["relation"]
        assert spec.metadata["objects"] == [relation["subject"]] and relation["object"] == saneval.FRAME
        assert spec.metadata["published_relation"] in saneval.FRAME_RELATIONS
        assert spec.text == f"a {relation['subject']} {spec.metadata['published_relation']} the image"
    assert {spec.metadata["published_relation"] for spec in single} == set(saneval.FRAME_RELATIONS)


def test_a_relation_to_the_picture_is_scored_against_the_whole_image():
    """The one-object spatial prompts: the object's box against the picture's (the whole image, detected with
    confidence 1), by the project's rules and by the published ones; the detector is never asked for "image"."""
    from judges.saneval_rules import (
        Box,
        expected_from_metadata,
        score_spatial,
        score_spatial_published,
        scored_objects,
        with_frame,
    )

    (spec,) = [s for s in saneval.published_category_specs("spatial", 20, seed=1) if s.metadata["stratum"] == "1"
               and s.metadata["published_relation"] == "on the left of"][:1] or [None]
    assert spec is not None, "the seed gives a one-object 'on the left of' prompt"
    expected = expected_from_metadata(spec.metadata, "spatial")
    subject = spec.metadata["relation"]["subject"]
    assert expected.relation == (subject, "left of", "image") and scored_objects(expected) == (subject,)
    left, right = Box(subject, 0.8, (10, 40, 40, 70)), Box(subject, 0.8, (80, 40, 110, 70))
    for box, project, position in ((left, 1.0, 1.0), (right, 0.0, 0.0)):
        found = with_frame({subject: [box]}, expected.relation, 128, 128)
        assert found["image"][0].box == (0, 0, 128, 128) and found["image"][0].score == 1.0
        assert score_spatial(expected, found).score == project
        published = score_spatial_published((subject, "on the left of", "image"), found)
        assert published.details["position"] == position
        assert published.score == (pytest.approx(0.25 * 0.8 + 0.25 + 0.5) if position else 0.0)


# --- the LLM writer and the validation step -----------------------------------------------------------------------

SKILLS = {"colour": "color", "shape": "shape", "texture": "texture", "spatial relationships": "spatial",
          "numeracy": "numeracy"}


def writer_llm(received):
    """A stand-in for the writer LLM: reads what the request asks (how many prompts, which category, how many
    objects) and answers with prompts of the scripted grammar, plus in each first batch three it must not keep: a
    count of nine, an attribute the text lacks, and a repeat."""
    import json
    import random
    import re

    from tools.fake_openai import Scripted

    text = received.text
    count = int(re.match(r"Write (\d+) different prompts", text).group(1))
    binding = "attribute binding: each object has its own "
    category = next(c for key, c in SKILLS.items()
                    if f"tests {binding if c in saneval.BINDING_CATEGORIES else ''}{key}" in text)
    if "places one object in the picture" in text:
        low = high = 1
    else:
        found = re.search(r"names (?:exactly (\d+)|between (\d+) and (\d+))", text)
        low, high = (int(found.group(1)),) * 2 if found.group(1) else (int(found.group(2)), int(found.group(3)))
    batch = re.search(r"\(Batch ([\d.]+)\.\)", text).group(1)
    rng = random.Random(text)
    items = []
    for _ in range(count):
        prompt, structure = saneval._published_draw(rng, category, rng.randint(low, high), saneval.PUBLISHED_WORDS)
        item = {"text": prompt}
        if category in saneval.BINDING_CATEGORIES:
            item["attributes"] = structure["attributes"]
        elif category == "spatial":
            relation = structure["relation"]
            item["relation"] = {"obj1": relation["subject"], "relationship": structure["published_relation"],
                                "obj2": relation["object"]}
            item["objects"] = structure["objects"]
        else:
            item["counts"] = structure["counts"]
        items.append(item)
    if batch.endswith(".0.0"):
        items.append(dict(items[0]))  # a repeat
        if category == "numeracy":
            items.append({"text": "nine trucks", "counts": {"truck": 9}})
        if category == "color":
            items.append({"text": "a red apple", "attributes": {"apple": "blue"}})
    return Scripted("```json\n" + json.dumps(items) + "\n```")


@pytest.fixture
def writer_server():
    from tools.fake_openai import FakeServer

    with FakeServer(writer_llm) as server:
        yield server


@pytest.fixture
def writer_cli(tmp_path, capsys, writer_server):
    """``run(*argv)``: ``python -m arena suites <argv>`` with the judges' endpoint at the fake server."""
    from arena.suite_commands import main
    from core.settings import Settings

    settings = Settings(db_path=tmp_path / "arena.db", cache_dir=tmp_path / "cache", demo=False,
                        judge_base_url=writer_server.base_url, judge_retry_base_s=0.01)

    def run(*argv) -> tuple[int, str, str]:
        code = main(["suites", *map(str, argv)], lambda: settings)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_the_llm_writer_builds_the_published_strata_as_candidates(writer_cli, writer_server, tmp_path):
    """``suites build saneval --preset saneval-paper``: the preset's strata, generator and writer model become the
    defaults; the prompts are asked from the judges' OpenAI-compatible endpoint, checked (a count of nine, an
    attribute missing from its text and a repeat are left out, and counted) and stored as candidates, not prompts.
    A second build is answered from the cache and changes nothing."""
    from datamodel.connection import connect
    from datamodel.prompt_candidates import candidate_counts, candidates

    code, out, err = writer_cli("build", "saneval", "--preset", "saneval-paper", "--per-category", "20")
    assert code == 0, err
    assert "SANEval (LLM writer gemini-2.5-flash, seed 0, published strata; preset saneval-paper" in out
    assert "100 candidates in 5 categories (100 new" in out and "python -m arena suites review saneval" in out
    # each stratum's first answer holds one of each kind (5 strata; the repeat in every category)
    assert "a count outside 1-8 (prompt 4 knows the number words up to eight) (5)" in out
    assert "'blue' not in the text (5)" in out and "a repeat (25)" in out
    models = {r.body["model"] for r in writer_server.received}
    assert models == {"gemini-2.5-flash"}
    db = connect(tmp_path / "arena.db")
    assert candidate_counts(db) == {"saneval": {"pending": 100, "accepted": 0, "rejected": 0}}
    assert db.execute("SELECT COUNT(*) FROM prompts").fetchone()[0] == 0  # nothing is a prompt before the check
    rows = candidates(db, "saneval")
    for category in saneval.CATEGORIES:
        strata = Counter(r["metadata"]["stratum"] for r in rows if r["subset"] == category)
        assert strata == saneval.published_strata(20)
    assert all(r["metadata"]["generator"] == "llm:gemini-2.5-flash" for r in rows)
    sent = len(writer_server.received)
    code, out, _ = writer_cli("build", "saneval", "--preset", "saneval-paper", "--per-category", "20")
    assert code == 0 and "(0 new, 0 rewritten, 100 unchanged" in out and len(writer_server.received) == sent
    db.close()


def test_the_scripted_fallback_under_the_preset_and_the_writer_without_an_endpoint(suites_cli, monkeypatch):
    """``--generator script`` with the preset: the published strata at once, as prompts. The LLM writer without an
    endpoint says how to give one, or to use the fallback."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARENA_JUDGE_BASE_URL", raising=False)
    code, out, err = suites_cli("build", "saneval", "--preset", "saneval-paper", "--per-category", "20")
    assert code == 2 and "no endpoint for the LLM writer" in err and "--generator script" in err
    code, out, err = suites_cli("build", "saneval", "--preset", "saneval-paper", "--per-category", "20",
                                "--generator", "script")
    assert code == 0, err
    assert "SANEval (seed 0, published strata; preset saneval-paper (published protocol)): 100 prompts" in out
    code, out, err = suites_cli("build", "saneval", "--generator", "llm")
    assert code == 2 and "the LLM writer writes the published strata: add --strata published" in err


def test_a_person_accepts_or_rejects_the_candidates_on_the_command_line(writer_cli, tmp_path):
    """``suites review saneval``: lists the pending candidates; ``--accept`` writes their prompts (with who accepted
    them), ``--reject`` keeps the candidate with the reason; an accepted one cannot be rejected, an unknown id
    changes nothing."""
    from datamodel.catalog import suite_prompts
    from datamodel.connection import connect
    from datamodel.prompt_candidates import candidates

    assert writer_cli("build", "saneval", "--preset", "saneval-paper", "--per-category", "4",
                      "--categories", "color")[0] == 0
    code, out, _ = writer_cli("review", "saneval")
    db = connect(tmp_path / "arena.db")
    first, second, third, fourth = (row["id"] for row in candidates(db, "saneval"))
    assert code == 0 and f"{first:6d}  color-g0-0000  [color/1]  pending  a " in out
    assert out.rstrip().endswith("saneval: 4 pending, 0 accepted, 0 rejected")
    code, out, _ = writer_cli("review", "saneval", "--accept", f"{first},{second}", "--reviewer", "ana")
    assert code == 0 and "accepted 2 by ana (2 prompts written)" in out
    code, out, _ = writer_cli("review", "saneval", "--reject", str(third), "--reason", "two objects merge",
                              "--reviewer", "ana")
    assert code == 0 and "rejected 1 by ana" in out and "saneval: 1 pending, 2 accepted, 1 rejected" in out
    prompts = suite_prompts(db, "saneval")
    assert sorted(p["item_key"] for p in prompts) == ["color-g0-0000", "color-g0-0001"]
    assert all(p["metadata"]["validated_by"] == "ana" and p["metadata"]["stratum"] for p in prompts)
    rejected = candidates(db, "saneval", status="rejected")
    assert [(r["id"], r["reviewer"], r["reason"]) for r in rejected] == [(third, "ana", "two objects merge")]
    code, _, err = writer_cli("review", "saneval", "--reject", str(first))
    assert code == 2 and f"candidate {first} (color-g0-0000) is already a prompt" in err
    code, _, err = writer_cli("review", "saneval", "--accept", f"{fourth},99999")
    assert code == 2 and "no candidate 99999" in err
    assert candidates(db, "saneval", ids=[fourth])[0]["status"] == "pending"  # nothing decided
    code, out, _ = writer_cli("review", "saneval", "--accept-all", "--reviewer", "bo")
    assert "accepted 1 by bo (1 prompts written)" in out and "saneval: 0 pending, 3 accepted, 1 rejected" in out
    db.close()
