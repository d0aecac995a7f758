"""The commonsense and consistency reports place each stored accuracy or spread under the column of the evaluator
that made it: the paper's columns take only the preset's judge and scorer, every other one gets its own column."""

from __future__ import annotations

import pytest

from arena.reports import make_report, missing_cells, render
from datamodel.catalog import add_model
from datamodel.metrics import MetricRow, write_metrics


def accuracy(db, model, scorer, value, name="commonsense_accuracy", items=14, suite="commonsense"):
    model_id = add_model(db, model)
    write_metrics(db, [MetricRow(model_id, name, value, scorer, suite=suite, details={"items": items})])


def test_table_2_takes_the_papers_judges_and_clip_and_keeps_the_others_apart(small_arena):
    db = small_arena.db
    accuracy(db, "sdxl", "gpt-judge:gpt-4o", 0.2517)
    accuracy(db, "sdxl", "gpt-judge:gpt-4-turbo", 0.2667)
    accuracy(db, "sdxl", "gpt-judge:gpt-4o-mini", 0.5)  # the project's default judge: not a paper column
    accuracy(db, "sdxl", "my-judge:gpt-4o", 0.9)  # another judge name with the paper's model: not the preset's
    accuracy(db, "sdxl", "open_clip:ViT-L-14:openai", 0.26, name="commonsense_clip_accuracy")
    accuracy(db, "sdxl", "open_clip:ViT-B-32:openai", 0.31, name="commonsense_clip_accuracy")
    accuracy(db, "alpha-model", "gpt-judge:gpt-4o", 0.5, items=1)
    report = make_report(db, "commonsense", compare_published=True)
    table = report.table("2")
    cell = lambda row, column: table.cell(row, column).text  # noqa: E731
    assert cell("SD-XL", "gpt4o") == "25.17 (paper 25.17)" and cell("SD-XL", "gpt4_turbo") == "26.67 (paper 26.67)"
    assert cell("SD-XL", "clip") == "26.00 (paper 26.00)"
    assert cell("SD-XL", "judge gpt-judge:gpt-4o-mini") == "50.00" and cell("SD-XL", "judge my-judge:gpt-4o") == "90.00"
    assert cell("SD-XL", "CLIP open_clip:ViT-B-32:openai") == "31.00"
    assert table.cell("SD-XL", "human").missing.startswith("no human fit judgments of this model yet")
    assert cell("alpha-model", "gpt4o") == "50.00"
    assert table.row_labels()[:1] == ["SD-XL"] and "DALL-E 3" in table.row_labels()  # the paper's rows listed too
    assert ("2", "SD-XL", "gemini_pro", "no accuracy from judge gpt-judge:gemini-1.0-pro-vision: python -m judges "
            "commonsense --preset commonsense-paper --judge-model gemini-1.0-pro-vision") in missing_cells(report)
    text = render(report)
    assert "Accuracies over 1 to 14 items per cell here" in text
    csv_text = render(report, "csv")
    assert "SD-XL,—[1] (paper 26.00)" not in csv_text and "SD-XL,26.00 (paper 26.00)" in csv_text


def test_table_1_of_the_consistency_report_takes_the_papers_align_score(small_arena):
    db = small_arena.db
    for stat, value in (("std", -0.86), ("min", -2.1), ("median", -3.19)):
        accuracy(db, "sd3", "align:kakaobrain/align-base/align_score", value, name=f"consistency_{stat}_S_final",
                 suite="paraphrase")
        accuracy(db, "sd3", "open_clip:ViT-B-32:openai/clip_score", value / 10, name=f"consistency_{stat}_S_final",
                 suite="paraphrase")
    accuracy(db, "sd3", "align:kakaobrain/align-base/align_score", 1.5, name="consistency_std_S_a", suite="paraphrase")
    report = make_report(db, "consistency", compare_published=True)
    table = report.table("1")
    assert [table.cell("SD3-medium", c).text for c in ("std", "min", "median")] == [
        "-0.86 (paper -0.86)", "-2.10 (paper -2.10)", "-3.19 (paper -3.19)"]
    assert table.cell("SD3-medium", "std open_clip:ViT-B-32:openai/clip_score").text == "-0.09"
    assert table.cell("DALL-E 3", "std").missing == "not in this database"
    figure = report.table("F3")
    assert figure.cell("SD3-medium", "S_a").text == "1.50" and figure.cell("SD3-medium", "S_r").is_missing
    with pytest.raises(KeyError):
        report.table("2")
