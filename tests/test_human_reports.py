"""The reports' Human columns from the Ratings tab (issue 27): Commonsense-T2I Table 2, SemVarBench Tables 11 and 12
and SANEval Table 4 hold
what :mod:`judges.human_stats` computes from the stored ratings; their published values are the paper's."""

import random

import numpy as np
import pytest
from support.ratings import build_rating_arena
from support.shared import SHARED

from arena.reports import REPORTS, make_report, read_published
from core.presets import get_preset
from datamodel.annotators import sign_in
from datamodel.human_ratings import ratings_frame, record_rating, record_serving
from datamodel.judgments import Judgment, save_judgment
from judges import human_stats
from judges.human_compare import CEILING, HumanCompareOptions, compare_with_humans
from judges.rating_tasks import COMMONSENSE, SANEVAL, SANEVAL_TENTHS, SEMVAR


def store(db, rater, task, answer_of):
    annotator = sign_in(db, rater, "token-0001", open_signup=True)
    with db.conn:
        for unit in task.units(db):
            for question in unit.questions:
                serving = record_serving(db, task=task.name, unit=unit.key, subject=question.subject,
                                         image_id=question.image_id, text_prompt_id=question.text_prompt_id,
                                         shown_text=question.shown_text, annotator_id=annotator.id, session_id=rater)
                record_rating(db, serving.id, answer_of(question), scale=task.scale, session_id=rater, rules=None)


@pytest.fixture(scope="module")
def rated(tmp_path_factory):
    arena = build_rating_arena(tmp_path_factory.mktemp("reports"), items=4)
    db = arena.db
    rng = random.Random(12)
    for rater in ("ann", "ben"):
        store(db, rater, SEMVAR, lambda q: {"object_accuracy": rng.randrange(51), "relevance": rng.randrange(51)})
        store(db, rater, SANEVAL, lambda q: {"likert": rng.randint(1, 5)})
        store(db, rater, COMMONSENSE, lambda q: {"fit": rng.randint(0, 1)})
    humans = human_stats.semvar_item_effects(ratings_frame(db, task="semvar_alignment"))
    noise = np.random.default_rng(1)
    with db.conn:
        for judge in ("gpt-judge:gpt-4o-2024-05-13", "gpt-judge:gemini-1.5-pro-001"):
            for unit, kappa in zip(humans["unit"], humans["kappa"]):
                save_judgment(db, Judgment(judge, "semvar_item", unit, "ok",
                                           verdict={"kappa": float(kappa + noise.normal(0, 0.1))}))
    yield arena
    db.close()


def test_semvarbench_table_11_is_the_human_scores(rated):
    report = make_report(rated.db, "semvarbench")
    table = report.table("11")
    human = human_stats.semvar_human(rated.db)
    overall = human[human["subset"] == ""]
    assert set(table.row_labels()) == set(overall["model"])
    for row in overall.to_dict("records"):
        assert table.cell(row["model"], "S").value == pytest.approx(row["mean"])
        assert table.cell(row["model"], "kappa").value == pytest.approx(row["kappa"])
        assert table.cell(row["model"], "kappa").text == f"{row['kappa']:.2f}"


def test_semvarbench_table_12_holds_each_judge_against_the_humans(rated):
    table = make_report(rated.db, "semvarbench").table("12")
    assert table.row_labels() == [CEILING, "GPT-4o", "Gemini-Pro-1.5"]  # the paper's labels, best first
    rows = compare_with_humans(rated.db, HumanCompareOptions(task="semvar_alignment", min_shared=3)).set_index("judge")
    assert table.cell("GPT-4o", "pearson").value == pytest.approx(rows.loc["gpt-judge:gpt-4o-2024-05-13", "pearson"])
    assert table.cell("GPT-4o", "spearman").value == pytest.approx(
        rows.loc["gpt-judge:gpt-4o-2024-05-13", "spearman"])
    assert "over every rated item" in table.title  # no CogView3-Plus here


def test_saneval_table_4_is_the_human_ratings(rated):
    """Under the project's preset Table 4 reads the five-point Likert task."""
    table = make_report(rated.db, "saneval", preset=get_preset("arena")).table("4")
    human = human_stats.saneval_human(rated.db).set_index("model")
    for model in human.index:
        assert table.cell(model, "numeracy").value == pytest.approx(human.loc[model, "numeracy"])
        assert table.cell(model, "Total").value == pytest.approx(human.loc[model, "total"])
        assert table.cell(model, "shape").missing.startswith("no shape image of this model rated")


def test_an_arena_without_ratings_says_how_to_get_them(tmp_path):
    arena = build_rating_arena(tmp_path)
    table = make_report(arena.db, "semvarbench").table("11")
    assert "python -m arena ratings assign semvar_alignment" in table.cell("(no model)", "kappa").missing


def test_the_published_tables_11_and_12_are_the_papers():
    paper = SHARED / "reference" / "papers" / "semvarbench.txt"
    if not paper.is_file():
        pytest.skip(f"{paper} (the SemVarBench paper's text in ../shared) is missing")
    text = paper.read_text(encoding="utf-8")
    published = read_published(REPORTS["semvarbench"].published_path)
    # Table 11, Appendix E.2: each model's row as printed
    for model in ("Midjourney V6", "DALL-E 3", "CogView3-Plus", "Ideogram 2"):
        values = [published.table("11")[(model, key)] for key in ("S", "gamma_w", "gamma_wo", "kappa")]
        assert f"{model}\t" + "\t".join(values) in text
    # Table 12: each evaluator's row as printed (GPT-40 in the text is the OCR of GPT-4o)
    for label, printed in (("GPT-4o", "GPT-40"), ("GPT-4v", "GPT-4v"), ("Claude-3.5-Sonnet", "Claude-3.5-Sonnet"),
                           ("Gemini-Pro-1.5", "Gemini-Pro-1.5")):
        values = [published.table("12")[(label, key)] for key in ("pearson", "spearman", "kappa")]
        assert f"{printed}\t" + "\t".join(values) in text


def test_commonsense_table_2_human_column_is_the_raters_accuracy(rated):
    table = make_report(rated.db, "commonsense").table("2")
    human = human_stats.commonsense_human(rated.db)
    overall = human[human["category"] == ""]
    assert len(overall) == 4  # every model of the small arena was rated
    for row in overall.to_dict("records"):
        cell = table.cell(row["model"], "human")
        assert cell.value == pytest.approx(100 * row["accuracy"]) and cell.text == f"{100 * row['accuracy']:.2f}"
    assert any(note.startswith("Human: the Ratings tab's fit judgments, 2 rater(s)") for note in table.notes)


def test_saneval_table_4_under_the_preset_reads_the_answers_in_tenths(tmp_path):
    """saneval-paper's Table 4 is the 0-10 task's (report.human_task): its means move in thousandths like the paper's
    (0.8160 is reachable; no five-point mean is), and the table says which scale it reads."""
    arena = build_rating_arena(tmp_path, items=4)
    answers = iter([8, 9, 7, 10, 7, 8, 9, 9, 6, 10] * 10)
    store(arena.db, "ann", SANEVAL_TENTHS, lambda q: {"tenths": next(answers)})
    table = make_report(arena.db, "saneval").table("4")
    human = human_stats.saneval_human(arena.db, task="saneval_adherence_10").set_index("model")
    assert len(human) >= 1
    for model in human.index:
        for category in ("spatial", "numeracy", "color", "shape", "texture"):
            value = human.loc[model, category]
            if value == value:
                assert table.cell(model, category).value == pytest.approx(value)
                assert (value * 1000) == pytest.approx(round(value * 1000))
    assert any("saneval_adherence_10" in note and "0 (poor) to 10 (perfect)" in note for note in table.notes)
    likert = make_report(arena.db, "saneval", preset=get_preset("arena")).table("4")
    assert any("saneval_adherence " in note or "saneval_adherence:" in note for note in likert.notes)
    arena.db.close()


def test_saneval_table_4_refuses_a_task_answered_with_scores(rated):
    """A preset whose report.human_task names a scored task (not a choice scale on [0, 1]) stops with the fix instead
    of an AttributeError on the scale's points."""
    from arena.reports.saneval import table_4

    with pytest.raises(ValueError, match="answered with scores.*name a task such as"):
        table_4(rated.db, [], "semvar_alignment")
