"""Pure parts of the judges: parsers, templates, pricing, and the scoring arithmetic of T1-T4."""

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.shared import shared_file

from judges import commonsense, semvar
from judges.pairwise import Answer, decide, position_bias
from judges.parsing import (
    CountsReply,
    ParseError,
    RatingReply,
    SpatialReply,
    parse_fit,
    parse_json_reply,
    parse_pairwise,
    parse_semvar,
    refusal_reason,
)
from judges.pricing import Prices, estimate_prompt_tokens, image_tokens
from judges.prompts import (
    PAIRWISE,
    TemplateError,
    Templates,
    check_templates,
    fit_request,
    load_templates,
    pairwise_request,
)
from judges.request import ChatRequest, ImageInput
from judges.saneval_rules import (
    AttributeRating,
    Box,
    Expected,
    StructureError,
    category_scores,
    check_expected,
    crop_box,
    expected_from_metadata,
    group_detections,
    plural,
    score_attributes,
    score_numeracy,
    score_spatial,
    synonym_groups,
)

IMAGE_A = ImageInput("a" * 64, "image/png", 512, 512, data=b"A")
IMAGE_B = ImageInput("b" * 64, "image/png", 512, 512, data=b"B")


# --- T1 ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, label, explanation", [
    ("Image A is sharper.\n\n[[A]]", "A", "Image A is sharper."),
    ('Format: "[[A]]" if A is better ... My verdict: [[B]]', "B", 'Format: "[[A]]" if A is better ... My verdict:'),
    ("Both are equally good. [[ c ]]", "C", "Both are equally good."),
    ("Neither shows a cigar lighter.\n[[D]]", "D", "Neither shows a cigar lighter."),
])
def test_parse_pairwise_takes_the_final_verdict_and_keeps_the_explanation(text, label, explanation):
    verdict = parse_pairwise(text)
    assert (verdict.label, verdict.explanation) == (label, explanation)
    assert verdict.outcome == {"A": "A", "B": "B", "C": "tie", "D": "both_bad"}[label]


@pytest.mark.parametrize("text", ["", "A is better.", "[[E]]", "[[A or B]]"])
def test_parse_pairwise_without_a_verdict_says_what_was_expected(text):
    with pytest.raises(ParseError, match=r"no final verdict \[\[A\]\], \[\[B\]\], \[\[C\]\] or \[\[D\]\]"):
        parse_pairwise(text)


def test_refusals_are_told_apart_from_unparseable_replies():
    assert refusal_reason("I'm sorry, but I can't help with that.").startswith("refusal:")
    assert refusal_reason("", refusal="I cannot evaluate these images.") == "refusal: I cannot evaluate these images."
    assert refusal_reason("anything", finish_reason="content_filter").startswith("refusal: the reply was stopped")
    assert refusal_reason("Image A is better") is None


def test_decide_agreeing_orders_give_the_vote():
    decision = decide([Answer("A"), Answer("B")])  # swapped: B as shown = the battle's A
    assert (decision.status, decision.outcome) == ("ok", "A")
    assert decide([Answer("D"), Answer("D")]).outcome == "both_bad"
    assert decide([Answer("C"), Answer("C")]).outcome == "tie"


def test_decide_disagreeing_orders_give_a_tie_and_keep_both_verdicts():
    decision = decide([Answer("A"), Answer("A")])  # first position wins both times
    assert (decision.status, decision.outcome) == ("inconsistent", "tie")
    assert [o["label"] for o in decision.verdict["orders"]] == ["A", "A"]
    assert [o["label_as_battle"] for o in decision.verdict["orders"]] == ["A", "B"]
    assert "disagree" in decision.reason


def test_decide_single_order_is_the_verdict_and_a_failed_answer_is_no_vote():
    assert decide([Answer("B")]).outcome == "B"
    failed = decide([Answer("A"), Answer(None, "unparseable reply: no final verdict")])
    assert (failed.status, failed.outcome) == ("failed", None)
    assert failed.reason == "swapped order: unparseable reply: no final verdict"


@given(st.sampled_from("ABCD"), st.sampled_from("ABCD"))
def test_decide_is_symmetric_under_swapping_the_battle(first, second):
    """Judging the mirrored battle gives the mirrored outcome (ties stay ties)."""
    mirror = {"A": "B", "B": "A", "tie": "tie", "both_bad": "both_bad"}
    assert decide([Answer(second), Answer(first)]).outcome == mirror[decide([Answer(first), Answer(second)]).outcome]


def test_position_bias_before_and_after():
    always_a = [decide([Answer("A"), Answer("A")]).verdict for _ in range(4)]
    assert position_bias(always_a) == {"before": 1.0, "before_n": 8, "after": None, "after_n": 0}
    fair = [decide([Answer("A"), Answer("B")]).verdict, decide([Answer("B"), Answer("A")]).verdict]
    assert position_bias(fair) == {"before": 0.5, "before_n": 4, "after": 0.5, "after_n": 2}


# --- templates and requests --------------------------------------------------------------------------------------

def _paper_words(name: str) -> str:
    """The paper's text as one line of words, without the four-digit line numbers of its margins."""
    path = shared_file(f"reference/papers/{name}")
    return " ".join(word for word in path.read_text(encoding="utf-8").split()
                    if not (word.isdigit() and len(word) == 4))


def test_default_templates_are_the_papers_texts():
    """SemVarBench's judge prompt (Appendix, Fig. "prompt for the evaluation") and Commonsense-T2I's fit prompt (§2.3)
    word for word; the project's pairwise template is the taxonomy paper's Figure 7 with the second image's labels
    corrected ("second" where the figure says "first" twice), line for line."""
    templates = Templates()
    semvar = _paper_words("semvarbench.txt")
    for line in templates.semvar.split("\n"):
        words = " ".join(line.replace("{prompt}", "").split())
        assert words in semvar, words
    assert " ".join(templates.commonsense_fit.split()) in _paper_words("commonsense-t2i.txt")
    figure = _paper_words("taxonomy-image-generation.txt")
    figure = figure[figure.index("Please act as an impartial judge"):figure.index("Figure 7:")]
    assert templates.pairwise.count("second image") == 2
    for line in templates.pairwise.replace("second image", "first image").split("\n"):
        words = " ".join(line.replace("{prompt}", "").replace("<image A>", "").replace("<image B>", "").split())
        if words.startswith('"[[A]]"'):  # Figure 7 prints a stray quote before "[[D]]" on its next line
            words = words.replace(' and "[[D]]"', ' and " "[[D]]"')
        assert words in figure, words


def test_pairwise_request_puts_the_images_where_the_protocol_says():
    request = pairwise_request(Templates(), "An image of coin", IMAGE_A, IMAGE_B)
    assert request.images == (IMAGE_A, IMAGE_B)
    assert request.text.index("[Start of the first image]") < request.text.index(f"<image {'a' * 64}>") \
        < request.text.index("[Start of the second image]") < request.text.index(f"<image {'b' * 64}>")
    assert "[User Prompt]\nAn image of coin\n" in request.text
    swapped = pairwise_request(Templates(), "An image of coin", IMAGE_B, IMAGE_A)
    assert swapped.images == (IMAGE_B, IMAGE_A)
    assert request.cache_key("", "m") != swapped.cache_key("", "m")


def test_cache_key_covers_endpoint_model_text_images_and_parameters():
    request = fit_request(Templates(), "The lightbulb is lit", IMAGE_A)
    key = request.cache_key("http://x/v1", "m")
    assert key == fit_request(Templates(), "The lightbulb is lit", IMAGE_A).cache_key("http://x/v1/", "m")
    assert key != request.cache_key("http://y/v1", "m")
    assert key != request.cache_key("http://x/v1", "other")
    assert key != fit_request(Templates(), "The lightbulb is unlit", IMAGE_A).cache_key("http://x/v1", "m")
    assert key != fit_request(Templates(), "The lightbulb is lit", IMAGE_B).cache_key("http://x/v1", "m")
    assert key != fit_request(Templates(), "The lightbulb is lit", IMAGE_A, detail="low").cache_key("http://x/v1", "m")
    assert "base64" not in json.dumps(request.describe())


def test_template_overrides_are_checked(tmp_path):
    path = tmp_path / "templates.toml"
    path.write_text('commonsense_fit = "Does the image show {description}? Answer 1 or 0."\n')
    assert load_templates(path).commonsense_fit == "Does the image show {description}? Answer 1 or 0."
    assert load_templates(path).pairwise == PAIRWISE
    with pytest.raises(TemplateError, match=r"template 'semvar' lacks \{prompt\}"):
        check_templates({"semvar": "Rate the image."})
    with pytest.raises(TemplateError, match="unknown template 'pairwize'; choices: pairwise"):
        check_templates({"pairwize": "x"})
    with pytest.raises(TemplateError, match="does not exist. Create it or unset ARENA_JUDGE_TEMPLATES"):
        load_templates(tmp_path / "missing.toml")


def test_image_tokens_follow_the_tile_rule():
    assert image_tokens(1024, 1024, "high", "gpt-4o") == 85 + 170 * 4   # 768 x 768: 2 x 2 tiles
    assert image_tokens(1024, 1024, "low", "gpt-4o") == 85
    assert image_tokens(4096, 2048, "high", "gpt-4o") == 85 + 170 * 6   # 2048 x 1024 -> 1536 x 768: 3 x 2
    assert image_tokens(512, 512, "high", "gpt-4o-mini") == 2833 + 5667
    request = ChatRequest(("x" * 400, IMAGE_A))
    assert estimate_prompt_tokens(request, "gpt-4o") == 10 + 100 + 255
    assert Prices(0.15, 0.60).cost(1_000_000, 1_000_000) == pytest.approx(0.75)


# --- T2 ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [("1", 1), ("0", 0), ("1.", 1), ("**0**", 0), ("The answer is 1", 1)])
def test_parse_fit(text, value):
    assert parse_fit(text) == value


@pytest.mark.parametrize("text", ["", "yes", "1 or 0", "10", "0.5"])
def test_parse_fit_rejects_anything_but_one_digit(text):
    with pytest.raises(ParseError, match="expected the number 1 or 0"):
        parse_fit(text)


def test_pair_score_rule():
    assert commonsense.pair_score(1, 1, 0, 0) == 1
    assert commonsense.pair_score(1, 0, 0, 0) == 0
    assert commonsense.pair_score(1, 1, 0, 1) == 0


def test_fits_both_keeps_one_at_random_with_a_seeded_generator():
    picks = {commonsense.resolve_fits(1, 1, commonsense.image_rng(0, image_id))[:2] for image_id in range(40)}
    assert picks == {(1, 0), (0, 1)}
    assert commonsense.resolve_fits(1, 1, commonsense.image_rng(3, 7)) == commonsense.resolve_fits(
        1, 1, commonsense.image_rng(3, 7))
    assert commonsense.resolve_fits(1, 0, random.Random(0)) == (1, 0, False)
    assert commonsense.resolve_fits(0, 0, random.Random(0)) == (0, 0, False)


def test_accuracy_is_the_mean_over_items_of_the_mean_over_generations():
    scores = [{"item": "a", "value": 1}, {"item": "a", "value": 0}, {"item": "b", "value": 1}]
    assert commonsense.accuracy(scores) == (0.75, 2)


# --- T3 ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scores, expected", [
    ((0.98, 0.95, 0.98, 0.45, 0.55, 0.98, 0.95), (0.97, 0.93, 0.03, 0.90)),
    ((0.65, 0.45, 1.00, 0.35, 0.45, 0.30, 0.95), (0.70, 0.30, 1.00, -0.70)),
])
def test_semvar_worked_examples(scores, expected):
    result = semvar.item_scores(*scores)
    assert (result["mean"], result["gamma_w"], result["gamma_wo"], result["kappa"]) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("text, score", [
    ("The image shows ... Relevance (0-50 points): [[35]], Object Accuracy (0-50 points): [[30]]", 0.65),
    ('Format like "[[35]]" and "[[30]]". Relevance: [[50]]\nObject Accuracy: [[48]]', 0.98),
    ("Scores: [[20]] and [[25]]", 0.45),
])
def test_parse_semvar(text, score):
    assert parse_semvar(text).score == pytest.approx(score)


@pytest.mark.parametrize("text, message", [
    ("Relevance: 35, Object Accuracy: 30", "expected two ratings"),
    ("Relevance: [[60]], Object Accuracy: [[30]]", "outside 0-50"),
])
def test_parse_semvar_failures(text, message):
    with pytest.raises(ParseError, match=message):
        parse_semvar(text)


# --- T4 ----------------------------------------------------------------------------------------------------------

def test_json_replies_are_validated_against_their_schema():
    assert parse_json_reply('```json\n{"score": 0.8, "detected": "red"}\n```', RatingReply).score == 0.8
    assert parse_json_reply('Sure: {"counts": {"apple": 3}}', CountsReply).counts == {"apple": 3}
    with pytest.raises(ParseError, match="does not match RatingReply"):
        parse_json_reply('{"score": 1.5}', RatingReply)
    with pytest.raises(ParseError, match="does not match SpatialReply"):
        parse_json_reply('{"subject": "dog", "relation": "near", "object": "cat"}', SpatialReply)
    with pytest.raises(ParseError, match="expected a JSON object"):
        parse_json_reply("no json here", RatingReply)


def test_expected_structure_from_builder_metadata():
    binding = expected_from_metadata({"objects": ["apple", "car"], "attribute_kind": "color",
                                      "attributes": {"apple": "red", "car": "blue"}}, "color")
    assert binding.attributes == {"apple": "red", "car": "blue"}
    spatial = expected_from_metadata({"objects": ["dog", "chair"], "relation": {
        "subject": "dog", "relation": "left of", "object": "chair"}}, "spatial")
    assert spatial.relation == ("dog", "left of", "chair")
    assert expected_from_metadata({"objects": ["apple"], "counts": {"apple": 3}}, "numeracy").counts == {"apple": 3}
    assert expected_from_metadata({}, "color") is None
    with pytest.raises(StructureError, match="must join two listed objects"):
        check_expected(Expected("spatial", ("dog",), relation=("dog", "left of", "cat")))


def box(label, x, y, w=10, h=10, score=0.9):
    return Box(label, score, (x, y, x + w, y + h))


def test_numeracy_scores_and_feedback():
    expected = Expected("numeracy", ("suitcase", "person", "apple"), counts={"suitcase": 1, "person": 3, "apple": 2})
    found = {"suitcase": [box("suitcase", 0, 0), box("suitcase", 50, 0), box("suitcase", 100, 0)],
             "person": [box("person", 0, 50), box("person", 50, 50)], "apple": []}
    scored = score_numeracy(expected, found)
    assert scored.score == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert scored.feedback == ("two extra suitcases detected; one person missing; Missing object: apple",)
    exact = score_numeracy(Expected("numeracy", ("apple",), counts={"apple": 1}), {"apple": [box("apple", 0, 0)]})
    assert (exact.score, exact.feedback) == (1.0, ())


def test_spatial_uses_centroids():
    expected = Expected("spatial", ("dog", "chair"), relation=("dog", "left of", "chair"))
    assert score_spatial(expected, {"dog": [box("dog", 0, 0)], "chair": [box("chair", 40, 0)]}).score == 1.0
    wrong = score_spatial(expected, {"dog": [box("dog", 40, 0)], "chair": [box("chair", 0, 0)]})
    assert wrong.score == 0.0
    assert wrong.feedback == ("Wrong spatial relation: expected dog left of chair, but detected dog right of chair",)
    missing = score_spatial(expected, {"dog": [box("dog", 0, 0)], "chair": []})
    assert (missing.score, missing.feedback) == (0.0, ("Missing object: chair",))
    above = Expected("spatial", ("kite", "car"), relation=("kite", "above", "car"))
    assert score_spatial(above, {"kite": [box("kite", 0, 0)], "car": [box("car", 5, 40)]}).score == 1.0


def test_attribute_binding_mean_missing_zero_and_flags():
    expected = Expected("color", ("dress", "ceiling", "hat"), attributes={"dress": "beige", "ceiling": "white",
                                                                          "hat": "red"})
    ratings = [AttributeRating("dress", "beige", 0.2, "gray", "It is gray."), AttributeRating("ceiling", "white", None),
               AttributeRating("hat", "red", 0.9, "red", "Red.")]
    scored = score_attributes(expected, ratings)
    assert scored.score == pytest.approx((0.2 + 0.0 + 0.9) / 3)
    assert scored.feedback == ("Poor attribute binding: expected beige dress, but detected gray dress",
                               "Missing object: ceiling")
    assert scored.details["flagged"] == ["dress"]


def test_detections_map_back_to_synonym_groups_and_duplicates_merge():
    groups = synonym_groups(["dog", "cup"], {"dog": ["puppy", "Dog"], "cup": ["mug", "puppy"]})
    assert groups == {"dog": ["dog", "puppy"], "cup": ["cup", "mug"]}
    found = group_detections([box("puppy", 0, 0, score=0.8), box("dog", 1, 1, score=0.9), box("mug", 50, 50),
                              box("cat", 0, 0), box("mug", 80, 80, score=0.1)], groups, min_score=0.2)
    assert [b.label for b in found["dog"]] == ["dog"]  # the puppy box overlaps the better dog box
    assert [b.label for b in found["cup"]] == ["mug"]


def test_category_scores_and_overall_are_unweighted_means():
    result = category_scores([("color", 1.0), ("color", 0.0), ("spatial", 1.0)])
    assert result == {"color": 0.5, "spatial": 1.0, "overall": 0.75}


def test_plural_and_crop_box():
    assert [plural(w) for w in ("suitcase", "box", "person", "teddy bear", "sheep", "cherry")] == [
        "suitcases", "boxes", "people", "teddy bears", "sheep", "cherries"]
    assert crop_box((10, 10, 20, 20), 32, 32) == (9, 9, 20, 20)
    assert crop_box((0, 0, 0.2, 0.2), 32, 32) == (0, 0, 1, 1)


def test_every_prompt_of_the_saneval_builder_has_a_usable_structure():
    from judges.saneval_rules import category_of, scored_objects
    from suites.saneval import saneval_specs

    specs = saneval_specs(30, seed=1)
    for spec in specs:
        category = category_of(spec.metadata, spec.subset)
        expected = expected_from_metadata(spec.metadata, category)
        assert expected is not None, spec
        assert all(obj.split(" ")[-1] in spec.text.lower() or obj in spec.text.lower()
                   for obj in scored_objects(expected)), spec
