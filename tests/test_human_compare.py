"""Every judge against the human ratings (issue 27): scripted raters and scripted judges of known, seeded accuracy
are ranked in their known order on the board (``python -m judges compare`` and the Judges sub-tab), with the human
ceiling (rater against rater) on top."""

import random

import numpy as np
import pytest
from support.ratings import build_rating_arena

from datamodel.annotators import sign_in
from datamodel.human_ratings import ratings_frame, record_rating, record_serving
from datamodel.judgments import Judgment, save_judgment
from datamodel.metrics import MetricRow, write_metrics
from judges import commands, human_stats
from judges.human_compare import CEILING, HumanCompareOptions, compare_with_humans, format_human_table
from judges.rating_tasks import COMMONSENSE, SANEVAL, SEMVAR

FIT_JUDGES = {"fit-judge-95": 0.95, "fit-judge-80": 0.80, "fit-judge-60": 0.60}
NOISY_JUDGES = {"judge-close": 0.02, "judge-medium": 0.15, "judge-far": 0.6}  # noise sd around the humans'


def store(db, rater, task, answer_of):
    annotator = sign_in(db, rater, "token-0001", open_signup=True)
    with db.conn:  # one transaction for all
        _store(db, rater, annotator, task, answer_of)


def _store(db, rater, annotator, task, answer_of):
    for unit in task.units(db):
        for question in unit.questions:
            serving = record_serving(db, task=task.name, unit=unit.key, subject=question.subject,
                                     image_id=question.image_id, text_prompt_id=question.text_prompt_id,
                                     shown_text=question.shown_text, annotator_id=annotator.id, session_id=rater)
            record_rating(db, serving.id, answer_of(question, unit), scale=task.scale, session_id=rater, rules=None)


def _commonsense_judges(db, truth):
    """Three fit judges of known accuracy, and a CLIP evaluator right 70% of the time."""
    for judge, accuracy in FIT_JUDGES.items():
        noise = random.Random(judge)
        for subject, fit in truth.items():
            image = int(subject.split(":")[1])
            save_judgment(db, Judgment(judge, "commonsense_fit", subject, "ok",
                                       verdict={"fit": int(fit ^ (noise.random() > accuracy))}, image_id=image))
    # the CLIP evaluator: each image closer to the description it truly fits, 70% of the time
    noise = random.Random("clip")
    for unit in COMMONSENSE.units(db):
        for image in {q.image_id for q in unit.questions}:
            fits_d1 = truth[f"image:{image}:d1"] if noise.random() < 0.7 else not truth[f"image:{image}:d1"]
            write_metrics(db, [MetricRow(unit.model_id, "commonsense_clip_fit", 1.0, "clip-test", image_id=image,
                                         suite="commonsense", details={"cos_d1": 0.3 if fits_d1 else 0.2,
                                                                       "cos_d2": 0.2 if fits_d1 else 0.3})])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two raters per task answering a seeded truth with known accuracy, and three judges per task."""
    arena = build_rating_arena(tmp_path_factory.mktemp("study"), generations=2, items=12)
    db = arena.db
    rng = random.Random(27)
    # Commonsense-T2I: a true fit per question; raters right 95% and 90% of the time; judges 95, 80, 60%
    truth = {q.subject: rng.random() < 0.5 for u in COMMONSENSE.units(db) for q in u.questions}
    for rater, accuracy in (("ann", 0.95), ("ben", 0.90)):
        noise = random.Random(rater)
        store(db, rater, COMMONSENSE,
              lambda q, u, noise=noise, accuracy=accuracy: {"fit": int(truth[q.subject] ^ (noise.random() > accuracy))})
    with db.conn:  # the judges' results in one transaction
        _commonsense_judges(db, truth)
    # SemVarBench: raters score a true S per question with small noise; judges' SemVarEffect per item near the
    # humans' with growing noise
    true_s = {q.subject: rng.randrange(0, 51) for u in SEMVAR.units(db) for q in u.questions}
    for rater in ("ann", "ben", "cal"):
        noise = random.Random(rater + "s")
        store(db, rater, SEMVAR,
              lambda q, u, noise=noise: {"object_accuracy": min(50, max(0, true_s[q.subject] + noise.randint(-3, 3))),
                                         "relevance": min(50, max(0, true_s[q.subject] + noise.randint(-3, 3)))})
    humans = human_stats.semvar_item_effects(ratings_frame(db, task="semvar_alignment"))
    for judge, sd in NOISY_JUDGES.items():
        noise = np.random.default_rng(len(judge))
        for unit, kappa in zip(humans["unit"], humans["kappa"]):
            save_judgment(db, Judgment(judge, "semvar_item", unit, "ok",
                                       verdict={"kappa": float(kappa + noise.normal(0, sd))}))
    # SANEval: a true Likert point per image; two raters; scorers' image scores near it with growing noise
    true_l = {u.questions[0].subject: rng.randint(1, 5) for u in SANEVAL.units(db)}
    for rater in ("ann", "ben"):
        noise = random.Random(rater + "l")
        store(db, rater, SANEVAL, lambda q, u, noise=noise: {"likert": true_l[q.subject] if noise.random() < 0.85
                                                             else noise.randint(1, 5)})
    for judge, sd in NOISY_JUDGES.items():
        noise = np.random.default_rng(len(judge) + 1)
        for unit in SANEVAL.units(db):
            subject = unit.questions[0].subject
            write_metrics(db, [MetricRow(unit.model_id, "saneval_image_score",
                                         (true_l[subject] - 1) / 4 + float(noise.normal(0, sd)), judge,
                                         image_id=unit.questions[0].image_id, suite="saneval")])
    yield arena
    db.close()


def rows_of(table, task):
    return table[table["task"] == task].reset_index(drop=True)


def test_fit_judges_are_ranked_in_their_known_order_below_the_ceiling(study):
    table = compare_with_humans(study.db, HumanCompareOptions(min_shared=30))
    rows = rows_of(table, "commonsense_fit")
    assert rows["judge"][0] == CEILING
    order = [name for name in rows["judge"][1:] if name in FIT_JUDGES]
    assert order == ["fit-judge-95", "fit-judge-80", "fit-judge-60"]
    kappas = rows.set_index("judge")["kappa"]
    assert kappas[CEILING] > kappas["fit-judge-80"] > kappas["fit-judge-60"]
    assert "CLIP evaluator clip-test" in set(rows["judge"])  # the CLIP evaluator on the same questions
    clip = rows.set_index("judge").loc["CLIP evaluator clip-test"]
    assert kappas["fit-judge-95"] > clip["kappa"] > kappas["fit-judge-60"]  # 70% sits between 95% and 60%
    questions = len({q.subject for u in COMMONSENSE.units(study.db) for q in u.questions})
    assert rows.set_index("judge").loc["fit-judge-95", "items"] == questions
    assert rows.set_index("judge").loc["fit-judge-95", "pairs"] == 2 * questions  # every rating, both raters


def test_semvarbench_judges_get_table_12s_columns_in_their_known_order(study):
    rows = rows_of(compare_with_humans(study.db, HumanCompareOptions(min_shared=30)), "semvar_alignment")
    assert list(rows["judge"]) == [CEILING, "judge-close", "judge-medium", "judge-far"]
    by = rows.set_index("judge")
    assert by.loc["judge-close", "pearson"] > by.loc["judge-medium", "pearson"] > by.loc["judge-far", "pearson"]
    assert by.loc["judge-close", "kappa"] > by.loc["judge-far", "kappa"]  # κ of the sign of SemVarEffect
    assert by.loc["judge-close", "items"] == len(SEMVAR.units(study.db))


def test_saneval_scorers_are_ranked_by_spearman(study):
    rows = rows_of(compare_with_humans(study.db, HumanCompareOptions(min_shared=30)), "saneval_adherence")
    assert list(rows["judge"]) == [CEILING, "judge-close", "judge-medium", "judge-far"]
    assert rows["spearman"].iloc[1] > rows["spearman"].iloc[2] > rows["spearman"].iloc[3]
    assert np.isnan(rows["kappa"].iloc[1])  # SANEval defines no classes: Spearman (and Pearson) only


def test_too_few_shared_items_say_insufficient(study):
    table = compare_with_humans(study.db, HumanCompareOptions(min_shared=10_000))
    assert table["insufficient"].all() and table[["accuracy", "kappa", "pearson", "spearman"]].isna().all().all()
    assert "insufficient" in format_human_table(table)
    with pytest.raises(ValueError, match="No rating task 'nope'"):
        compare_with_humans(study.db, HumanCompareOptions(task="nope"))
    assert set(compare_with_humans(study.db, HumanCompareOptions(suite="saneval"))["task"]) == {"saneval_adherence"}


def test_judges_compare_prints_the_rating_rows_after_the_pairwise_table(study, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("ARENA_DB", str(study.settings.db_path))
    out = tmp_path / "ratings.csv"
    assert commands.main(["compare", "--min-shared", "30", "--rounds", "0", "--ratings-csv", str(out)]) == 0
    text = capsys.readouterr().out
    assert "== commonsense_fit: judges against the human ratings (fit per question)" in text
    assert "== semvar_alignment: judges against the human ratings (SemVarEffect κ per item)" in text
    lines = text.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("== semvar_alignment")))
    assert [line.split()[0] for line in lines[start + 2:start + 6]] == ["human", "judge-close", "judge-medium",
                                                                         "judge-far"]
    assert out.read_text().splitlines()[0] == ("task,judge,compared,items,pairs,accuracy,kappa,pearson,spearman,"
                                               "insufficient")


def test_the_judges_sub_tab_shows_the_same_rows(study):
    from arena.web.judges_tab import human_rows_of  # the task by its title since issue 41

    rows = human_rows_of(compare_with_humans(study.db, HumanCompareOptions(min_shared=30)))
    fit = [row for row in rows if row[0] == "Commonsense-T2I"]
    assert [row[1] for row in fit] == [CEILING, "fit-judge-95", "fit-judge-80", "CLIP evaluator clip-test",
                                       "fit-judge-60"]  # 95%, 80%, 70% (CLIP), 60%
    assert all(isinstance(cell, str) for row in rows for cell in row[5:])  # rounded text cells


def test_a_comparison_is_declared_with_a_kind_the_board_knows_and_a_correlation_with_its_consensus():
    """A rating task's comparison of the correlation kind compares the judge with the raters' consensus: one declared
    without it is refused where it is declared, naming what is missing (not later, on the board, as a TypeError)."""
    def machines(db):
        return {}

    def raters(frame):
        return {}

    with pytest.raises(ValueError, match="needs consensus"):
        human_stats.Comparison("correlation", machines, raters, "score per image")
    with pytest.raises(ValueError, match="agreement or correlation"):
        human_stats.Comparison("ranking", machines, raters, "score per image")
    assert human_stats.Comparison("agreement", machines, raters, "fit per question").consensus is None
