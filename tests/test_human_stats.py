"""The papers' statistics from human ratings and the agreement between raters (issue 27), each checked against an
independent computation (scipy, scikit-learn, or the formula written out here), and against the papers' printed
tables where a formula can be checked on them."""

import itertools
import random

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from sklearn.metrics import cohen_kappa_score
from support.ratings import build_rating_arena

from datamodel.annotators import sign_in
from datamodel.human_ratings import ratings_frame, record_rating, record_serving
from judges import human_stats
from judges.rating_tasks import COMMONSENSE, SANEVAL, SEMVAR
from judges.saneval_rules import category_scores
from judges.semvar import CALLS
from ratings.rater_agreement import (
    agreement_figures,
    correlation_figures,
    fleiss,
    krippendorff_alpha,
    pairwise_cohen,
    rater_ceiling,
)

# --- independent computations ---------------------------------------------------------------------------------------

def alpha_by_hand(units: dict, metric: str) -> float:
    """Krippendorff's α from the coincidence matrix, written out (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability", sections A-C): ``units`` {unit: [values]}."""
    pairable = {u: v for u, v in units.items() if len(v) >= 2}
    values = sorted({x for v in pairable.values() for x in v})
    o = {(c, k): 0.0 for c in values for k in values}
    for v in pairable.values():
        for i, j in itertools.permutations(range(len(v)), 2):
            o[(v[i], v[j])] += 1 / (len(v) - 1)
    n_c = {c: sum(o[(c, k)] for k in values) for c in values}
    n = sum(n_c.values())

    def delta(c, k):
        if metric == "nominal":
            return float(c != k)
        if metric == "interval":
            return (c - k) ** 2
        low, high = sorted((c, k))
        between = [g for g in values if low <= g <= high]
        return (sum(n_c[g] for g in between) - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(o[(c, k)] * delta(c, k) for c in values for k in values) / n
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values) / (n * (n - 1))
    return 1 - observed / expected


def fleiss_by_hand(units: dict, categories) -> float:
    """Fleiss' κ written out per item (Fleiss 1971), items with two ratings or more."""
    rows = [[v.count(c) for c in categories] for v in units.values() if len(v) >= 2]
    p_items = [sum(x * (x - 1) for x in row) / (sum(row) * (sum(row) - 1)) for row in rows]
    total = sum(sum(row) for row in rows)
    p_cat = [sum(row[k] for row in rows) / total for k in range(len(categories))]
    p_e = sum(p * p for p in p_cat)
    return (np.mean(p_items) - p_e) / (1 - p_e)


def as_raters(units: dict) -> dict:
    """{unit: [values]} as {rater: {unit: value}} (the k-th value of a unit from rater k)."""
    raters: dict = {}
    for unit, values in units.items():
        for k, value in enumerate(values):
            raters.setdefault(f"r{k}", {})[unit] = value
    return raters


# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", section C: four observers, twelve units, missing
# values; the paper prints alpha = 0.743 (nominal), 0.815 (ordinal), 0.849 (interval).
KRIPPENDORFF_2011 = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
                     "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
                     "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
                     "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}


@pytest.mark.parametrize("level, printed", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorffs_alpha_matches_the_2011_worked_example_and_the_formula(level, printed):
    raters = {name: {u: v for u, v in enumerate(values) if v is not None}
              for name, values in KRIPPENDORFF_2011.items()}
    units = {}
    for given in raters.values():
        for unit, value in given.items():
            units.setdefault(unit, []).append(value)
    ours = krippendorff_alpha(raters, level)
    assert round(ours, 3) == printed
    assert ours == pytest.approx(alpha_by_hand(units, level), abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorffs_alpha_on_random_ratings(level):
    rng = random.Random(7)
    units = {u: [rng.choice([1, 2, 3, 4, 5]) for _ in range(rng.choice([1, 2, 3]))] for u in range(60)}
    assert krippendorff_alpha(as_raters(units), level, value_domain=[1, 2, 3, 4, 5]) == pytest.approx(
        alpha_by_hand(units, level), abs=1e-12)


def test_fleiss_kappa_matches_the_formula_written_out():
    rng = random.Random(3)
    units = {u: [rng.choice([0, 1, 2]) for _ in range(rng.choice([2, 3, 4]))] for u in range(50)}
    counted = fleiss(as_raters(units), categories=[0, 1, 2])
    assert counted["items"] == 50
    assert counted["kappa"] == pytest.approx(fleiss_by_hand(units, [0, 1, 2]), abs=1e-12)


def test_cohens_kappa_and_correlations_match_sklearn_and_scipy():
    rng = np.random.default_rng(11)
    first = rng.integers(0, 2, 200)
    second = np.where(rng.random(200) < 0.7, first, 1 - first)
    figures = agreement_figures(first, second)
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
    assert figures["accuracy"] == pytest.approx(np.mean(first == second))
    pairs = pairwise_cohen({"a": dict(enumerate(first)), "b": dict(enumerate(second))})
    assert pairs[0]["kappa"] == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
    x = rng.normal(size=100)
    y = x + rng.normal(size=100)
    corr = correlation_figures(x, y, human_stats.sign_classes)
    assert corr["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1], abs=1e-12)
    ranks = np.corrcoef(scipy.stats.rankdata(x), scipy.stats.rankdata(y))[0, 1]
    assert corr["spearman"] == pytest.approx(ranks, abs=1e-12)
    assert corr["kappa"] == pytest.approx(cohen_kappa_score(np.sign(x), np.sign(y)), abs=1e-12)
    assert np.isnan(correlation_figures([1, 1, 1], [1, 2, 3])["pearson"])  # a constant side: no figure


def test_the_ceiling_counts_every_ordered_pair_of_raters():
    raters = {"a": {1: 1, 2: 0, 3: 1}, "b": {1: 1, 2: 1}, "c": {1: 0, 3: 1}}
    ceiling = rater_ceiling(raters, "agreement")
    # pairs on item 1: (a,b) (a,c) (b,c) both ways; item 2: (a,b); item 3: (a,c)
    first = [1, 1, 1, 1, 0, 0, 0, 1, 1, 1]
    second = [1, 1, 0, 0, 1, 1, 1, 0, 1, 1]
    assert ceiling["n"] == 10 and ceiling["items"] == 3
    assert ceiling["kappa"] == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)


# --- the papers' statistics from ratings stored the way the page stores them ----------------------------------------

@pytest.fixture
def arena(tmp_path):
    built = build_rating_arena(tmp_path, generations=2)
    yield built
    built.db.close()


def store(db, rater: str, task, answer_of, units=None) -> None:
    """Serve every question of ``task`` (or of ``units``) to ``rater`` and store ``answer_of(question, unit)``."""
    annotator = sign_in(db, rater, "token-0001", open_signup=True)
    for unit in units if units is not None else task.units(db):
        for question in unit.questions:
            given = answer_of(question, unit)
            if given is None:
                continue
            serving = record_serving(db, task=task.name, unit=unit.key, subject=question.subject,
                                     image_id=question.image_id, text_prompt_id=question.text_prompt_id,
                                     shown_text=question.shown_text, annotator_id=annotator.id, session_id=rater)
            record_rating(db, serving.id, given, scale=task.scale, session_id=rater, rules=None)


def test_commonsense_human_accuracy_follows_the_pair_rule_averaged_over_generations(arena):
    db = arena.db
    rng = random.Random(5)
    truth = {}
    for unit in COMMONSENSE.units(db):
        for question in unit.questions:
            truth[question.subject] = rng.random() < 0.5
    noise = {name: random.Random(name) for name in ("ann", "ben")}
    store(db, "ann", COMMONSENSE, lambda q, u: {"fit": int(truth[q.subject] ^ (noise["ann"].random() < 0.1))})
    store(db, "ben", COMMONSENSE, lambda q, u: {"fit": int(truth[q.subject] ^ (noise["ben"].random() < 0.3))})
    frame = ratings_frame(db, task="commonsense_fit")
    table = human_stats.commonsense_human_accuracy(frame, fits_both="strict")

    # the same by hand: per rater and pair the rule, mean over raters, then over generations, then over items
    fits = {(r, s): v for r, s, v in zip(frame["rater"], frame["subject"], frame["value"])}
    expected = {}
    for unit in COMMONSENSE.units(db):
        i1, i2 = (int(x) for x in unit.key.split(":")[1:])
        scores = [int(fits[(r, f"image:{i1}:d1")] + fits[(r, f"image:{i2}:d2")] - fits[(r, f"image:{i1}:d2")]
                      - fits[(r, f"image:{i2}:d1")] == 2) for r in ("ann", "ben")]
        item = db.execute("SELECT m.name, p.item_key FROM images i JOIN prompts p ON p.id = i.prompt_id JOIN models "
                          "m ON m.id = i.model_id WHERE i.id = ?", [i1]).fetchone()
        expected.setdefault(item[0], {}).setdefault(item[1], []).append(np.mean(scores))
    overall = table[table["category"] == ""].set_index("model")
    for model, items in expected.items():
        assert overall.loc[model, "accuracy"] == pytest.approx(np.mean([np.mean(v) for v in items.values()]))
        assert overall.loc[model, "items"] == 2 and overall.loc[model, "pairs"] == 4
        assert overall.loc[model, "raters"] == 2
    assert set(table["category"]) == {"", "Physical Laws", "Biological Laws"}
    # the paper's pick for an image said to fit both is seeded: the same seed, the same table
    picked = human_stats.commonsense_human_accuracy(frame, fits_both="pick", seed=3)
    pd.testing.assert_frame_equal(picked, human_stats.commonsense_human_accuracy(frame, fits_both="pick", seed=3))
    with pytest.raises(ValueError, match="fits_both must be one of pick, strict"):
        human_stats.commonsense_human_accuracy(frame, fits_both="never")


def test_an_image_said_to_fit_both_descriptions_keeps_one_at_random(arena):
    db = arena.db
    unit = COMMONSENSE.units(db)[0]
    i1 = int(unit.key.split(":")[1])
    # I1 fits both descriptions, I2 only its own: strict scores 0, the pick scores 1 half of the time
    store(db, "ann", COMMONSENSE, lambda q, u: {"fit": 1 if q.subject.startswith(f"image:{i1}:") or
                                                q.subject.endswith(":d2") else 0}, units=[unit])
    frame = ratings_frame(db, task="commonsense_fit")
    assert human_stats.commonsense_pair_scores(frame, fits_both="strict")["score"].tolist() == [0]
    picks = [human_stats.commonsense_pair_scores(frame, seed=seed)["score"].iloc[0] for seed in range(200)]
    assert 0.35 < np.mean(picks) < 0.65


def test_semvar_effect_from_the_raters_mean_scores(arena):
    db = arena.db
    rng = random.Random(2)
    scores = {}
    for rater in ("r1", "r2", "r3"):
        answers = {}

        def answer(question, unit, answers=answers):
            given = {"object_accuracy": rng.randrange(0, 51), "relevance": rng.randrange(0, 51)}
            answers[question.subject] = given
            return given

        store(db, rater, SEMVAR, answer)
        scores[rater] = answers
    frame = ratings_frame(db, task="semvar_alignment")
    effects = human_stats.semvar_item_effects(frame).set_index("unit")
    for unit in SEMVAR.units(db):
        s = [np.mean([(scores[r][q.subject]["object_accuracy"] + scores[r][q.subject]["relevance"]) / 100
                      for r in scores]) for q in unit.questions]  # questions come in CALLS order
        s_a_a, s_pv_pv, s_pi_pi, s_pv_a, s_a_pv, s_pi_a, s_a_pi = s
        gamma_w = abs(s_a_pv - s_a_a) + abs(s_pv_pv - s_pv_a)
        gamma_wo = abs(s_a_pi - s_a_a) + abs(s_pi_pi - s_pi_a)
        assert effects.loc[unit.key, "kappa"] == pytest.approx(gamma_w - gamma_wo)
        assert effects.loc[unit.key, "mean"] == pytest.approx((s_a_a + s_pv_pv + s_pi_pi) / 3)
        assert effects.loc[unit.key, "raters"] == 3
    table = human_stats.semvar_human_scores(frame)
    overall = table[table["subset"] == ""].set_index("model")
    for model, part in effects.groupby("model"):
        assert overall.loc[model, "kappa"] == pytest.approx(part["kappa"].mean())
    assert set(table["subset"]) == {"", "Action", "Color"}
    assert len(CALLS) == 7


def test_an_item_without_all_seven_scores_gets_no_semvar_effect(arena):
    db = arena.db
    unit = SEMVAR.units(db)[0]
    skipped = unit.questions[3].subject
    store(db, "r1", SEMVAR, lambda q, u: None if q.subject == skipped else {"object_accuracy": 10, "relevance": 10},
          units=[unit])
    assert human_stats.semvar_item_effects(ratings_frame(db, task="semvar_alignment")).empty


# SemVarBench Table 11 (Appendix E.2): kappa = gamma_w - gamma_wo on every printed row.
TABLE_11 = {"Midjourney V6": (0.59, 0.37, 0.49, -0.12), "DALL-E 3": (0.63, 0.53, 0.50, 0.03),
            "CogView3-Plus": (0.69, 0.52, 0.33, 0.19), "Ideogram 2": (0.74, 0.50, 0.31, 0.19)}


@pytest.mark.parametrize("model", TABLE_11)
def test_semvarbench_table_11_kappa_is_gamma_w_minus_gamma_wo(model):
    _, gamma_w, gamma_wo, kappa = TABLE_11[model]
    assert round(gamma_w - gamma_wo, 2) == kappa


# SANEval Table 4 (Appendix D): Total is the unweighted mean of the five categories, on every printed row.
TABLE_4 = {"Imagen 3.0": (0.8160, 0.7720, 0.8400, 0.5000, 0.7240, 0.7304),
           "Imagen 4.0": (0.7800, 0.6380, 0.7990, 0.5170, 0.7410, 0.6950),
           "Imagen 4.0 Ultra": (0.9390, 0.8870, 0.9680, 0.8110, 0.9190, 0.9048),
           "Nano Banana": (0.9220, 0.8680, 0.9050, 0.6810, 0.8150, 0.8382),
           "Seedream 3.0": (0.9070, 0.7430, 0.9170, 0.4310, 0.6540, 0.7304),
           "GPT Image 1": (0.9250, 0.8940, 0.9680, 0.8530, 0.8430, 0.8966)}


@pytest.mark.parametrize("model", TABLE_4)
def test_saneval_table_4_total_is_the_mean_of_the_categories(model):
    spatial, numeracy, color, shape, texture, total = TABLE_4[model]
    scores = category_scores([("spatial", spatial), ("numeracy", numeracy), ("color", color), ("shape", shape),
                              ("texture", texture)])
    assert round(scores["overall"], 4) == total


def test_saneval_human_scores_per_model_and_category(arena):
    db = arena.db
    rng = random.Random(9)
    store(db, "ann", SANEVAL, lambda q, u: {"likert": rng.randint(1, 5)})
    store(db, "ben", SANEVAL, lambda q, u: {"likert": rng.randint(1, 5)})
    frame = ratings_frame(db, task="saneval_adherence")
    table = human_stats.saneval_human_scores(frame).set_index("model")
    frame["category"] = [m["category"] for m in frame["metadata"]]
    per_image = frame.groupby(["model", "category", "image_id"])["value"].mean().reset_index()
    for model, part in per_image.groupby("model"):
        means = part.groupby("category")["value"].mean()
        for category, value in means.items():
            assert table.loc[model, category] == pytest.approx(value)
        assert table.loc[model, "total"] == pytest.approx(means.mean())
        assert np.isnan(table.loc[model, "shape"])  # no shape prompt here: no figure, not a zero
    assert (frame["value"] == (frame["answer"].map(lambda a: a["likert"]) - 1) / 4).all()


def test_rater_agreement_of_stored_ratings(arena):
    db = arena.db
    rng = random.Random(4)
    truth = {}
    for unit in SANEVAL.units(db):
        truth[unit.questions[0].subject] = rng.randint(1, 5)
    for rater, accuracy in (("ann", 0.9), ("ben", 0.6), ("cal", 0.4)):
        noise = random.Random(rater)
        store(db, rater, SANEVAL, lambda q, u, noise=noise, accuracy=accuracy: {
            "likert": truth[q.subject] if noise.random() < accuracy else noise.randint(1, 5)})
    frame = ratings_frame(db, task="saneval_adherence")
    result = human_stats.rater_agreement(frame, SANEVAL.scale)
    units = frame.groupby("subject")["answer"].apply(lambda a: [x["likert"] for x in a]).to_dict()
    assert (result["raters"], result["ratings"], result["questions"], result["shared"]) == (3, 72, 24, 24)
    assert result["alpha"] == pytest.approx(alpha_by_hand(units, "ordinal"), abs=1e-12)
    assert result["fleiss_kappa"] == pytest.approx(fleiss_by_hand(units, [1, 2, 3, 4, 5]), abs=1e-12)
    by_pair = {(p["rater_1"], p["rater_2"]): p["kappa"] for p in result["pairs"]}
    answers = {r: frame[frame["rater"] == r].set_index("subject")["answer"].map(lambda a: a["likert"])
               for r in ("ann", "ben")}
    shared = sorted(answers["ann"].index)
    assert by_pair[("ann", "ben")] == pytest.approx(
        cohen_kappa_score(answers["ann"][shared], answers["ben"][shared]), abs=1e-12)
