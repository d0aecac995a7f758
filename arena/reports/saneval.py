"""``python -m arena report saneval``: the SANEval paper's tables from the database.

- Table 1: spatial, numeracy, color, shape and texture per model and their average (the unweighted mean of the five);
- Table 2: attribute binding per object-count stratum (1, 2, 3-5, 6-10, >10 objects) and averaged
  (:func:`judges.saneval.cardinality_scores`);
- Table 3: Spearman p-values against CompBench++ per model and category, from CompBench++ scores of the same images
  that the user brings (:mod:`judges.metrics.compbench`), with ρ beside it (table "3-rho");
- Table 4: the human adherence ratings of the Ratings tab (:mod:`judges.human_stats`), per model and category;
- Table 5: one scored example per category, with its score and conformity feedback.

The scores are one judge's (``saneval_*`` metrics): the preset's judge model when it scored the suite, else the first
judge that did; with the published preset, the published protocol's scores (version ``t4p:``) are preferred.
"""

from __future__ import annotations

from arena.reports import REPORTS, Cell, Column, Report, ReportOptions, ReportSpec, Table
from datamodel.judgments import judgments
from datamodel.metrics import metric_scorers, model_metric_values
from datamodel.models import model_names, sorted_model_names

SUITE = "saneval"
CATEGORIES = ("spatial", "numeracy", "color", "shape", "texture")
BINDING = ("color", "shape", "texture")
STRATA = (("1", "1 Obj"), ("2", "2 Obj"), ("3-5", "3–5 Obj"), ("6-10", "6–10 Obj"), ("11-15", ">10 Obj"))
JUDGE_HINT = "run python -m judges saneval --preset saneval-paper --detector <folder>"
EXAMPLE_ROWS = (("spatial", "Spatial"), ("numeracy", "Numeracy"), ("color", "Color Binding"),
                ("shape", "Shape Binding"), ("texture", "Texture Binding"))


def chosen_judge(judges: list[str], options: ReportOptions) -> str | None:
    wanted = str(options.preset.get("judge.model") or "")
    return next((judge for judge in judges if wanted and judge.endswith(":" + wanted)), judges[0] if judges else None)


def table_1(db, judge: str | None, models: list[str]) -> Table:
    columns = [Column("spatial", "Spatial"), Column("numeracy", "Numeracy"),
               *(Column(c, c.capitalize(), "Attribute Binding") for c in BINDING), Column("Averaged")]
    table = Table("1", "Combined results for SANEval benchmarks", columns)
    values = {c: model_metric_values(db, f"saneval_{c}", scorer=judge, suite=SUITE) if judge else {}
              for c in CATEGORIES}
    reason = f"no scores: {JUDGE_HINT}" if judge else f"no judge has scored the suite: {JUDGE_HINT}"
    for model in models:
        row = {c: Cell.number(values[c].get((model, "")), "{:.4f}",
                              reason if not values[c] else f"no {c} prompt scored for this model") for c in CATEGORIES}
        known = [value for c in CATEGORIES if (value := values[c].get((model, ""))) is not None]
        average = sum(known) / 5 if len(known) == len(CATEGORIES) else None
        row["Averaged"] = Cell.number(average, "{:.4f}", "the average needs all five benchmarks")
        table.add_row(model, row)
    table.notes.append("Averaged: the unweighted mean of the five benchmarks (as Table 1 prints it).")
    return table


def table_2(db, judge: str | None) -> Table:
    from judges.saneval import cardinality_scores

    table = Table("2", "Results for SANEval Attribute Binding across Color, Shape, and Texture",
                  [Column("Averaged"), *(Column(key, label) for key, label in STRATA)], row_header="Attribute: Model")
    reason = f"no binding scores: {JUDGE_HINT}"
    for row in cardinality_scores(db, judge) if judge else []:
        cells = {"Averaged": Cell.number(row["averaged"], "{:.4f}", reason)}
        cells.update({key: Cell.number(row[key], "{:.4f}", f"no prompt with {label.lower()} scored")
                      for key, label in STRATA})
        table.add_row(f"{row['category'].capitalize()}: {row['model']}", cells)
    table.notes.append("Strata: the prompt's metadata (the published strata builder sets it), else its object "
                       "count; Averaged: the mean over all its scored images (Table 1's value).")
    return table


COMPBENCH_HINT = ("give CompBench++'s scores of the same images: python -m judges metrics --metrics compbench "
                  "--suite saneval --compbench-scores FILE (columns model, item_key, score; "
                  "judges/metrics/compbench.py)")


def p_value_text(value: float) -> str:
    """A p-value as Table 3 prints it, to four significant digits: ``2.639e-55``, ``1.434e-1``."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.3e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def table_3(db, judge: str | None, models: list[str]) -> tuple[Table, Table]:
    """Table 3 (§4.3): per model and category, the p-value of Spearman's rank correlation (scipy's ``spearmanr``,
    two-sided) between SANEval's score of each image (``saneval_image_score`` of ``judge``) and CompBench++'s
    (``compbench_score``, :mod:`judges.metrics.compbench`); "Averaged" the mean of the models' p-values, as the
    printed row is (on four of its five columns; see tests/test_saneval_published.py). With it, ρ and the number of
    images of each cell (the paper prints only the p-values)."""
    from scipy.stats import spearmanr

    from datamodel.metrics import image_metric_frame

    columns = [Column(c, c.capitalize(), "Attribute-Binding" if c in BINDING else "") for c in CATEGORIES]
    table = Table("3", "Spearman correlation p-values comparing SANEval and CompBench++ methods", columns)
    rho = Table("3-rho", "Spearman's ρ (and images) of the same pairs", columns)
    theirs = image_metric_frame(db, "compbench_score", suite=SUITE)
    compbench = theirs["scorer"].iloc[0] if len(theirs) else None
    pairs = None
    if judge and compbench:
        ours = image_metric_frame(db, "saneval_image_score", scorer=judge, suite=SUITE)
        theirs = theirs[theirs["scorer"] == compbench]
        pairs = ours[["image_id", "model", "subset", "value"]].merge(
            theirs[["image_id", "value"]], on="image_id", suffixes=("_saneval", "_compbench"))
    reason = (COMPBENCH_HINT if not compbench else f"no SANEval scores: {JUDGE_HINT}")
    p_values: dict[str, list[float]] = {c: [] for c in CATEGORIES}
    for model in models:
        cells, rho_cells = {}, {}
        for category in CATEGORIES:
            if pairs is None:
                cells[category] = rho_cells[category] = Cell.absent(reason)
                continue
            part = pairs[(pairs["model"] == model) & (pairs["subset"] == category)]
            if len(part) < 3 or part["value_saneval"].nunique() < 2 or part["value_compbench"].nunique() < 2:
                why = (f"{len(part)} images scored by both (at least 3 needed)" if len(part) < 3
                       else "a side gives every image the same score: no rank correlation")
                cells[category] = rho_cells[category] = Cell.absent(why)
                continue
            result = spearmanr(part["value_saneval"], part["value_compbench"])
            p_values[category].append(float(result.pvalue))
            cells[category] = Cell(p_value_text(float(result.pvalue)), float(result.pvalue))
            rho_cells[category] = Cell(f"{result.statistic:.3f} ({len(part)})", float(result.statistic))
        table.add_row(model, cells)
        rho.add_row(model, rho_cells)
    table.add_row("Averaged", {c: Cell(p_value_text(sum(v) / len(v)), sum(v) / len(v)) if v else
                               Cell.absent(reason if pairs is None else "no model's p-value") for c, v in
                               p_values.items()})
    table.notes.append("Per model and category: the p-value of Spearman's rank correlation between SANEval's and "
                       "CompBench++'s scores of the same images (scipy.stats.spearmanr, two-sided); Averaged: the mean "
                       "of the models' p-values." + (f" CompBench++ scores: {compbench}." if compbench else ""))
    return table, rho


HUMAN_TASK = "saneval_adherence"  # the human task of Table 4 when the preset names none (report.human_task)


def table_4(db, models: list[str], task_name: str = HUMAN_TASK) -> Table:
    """The human adherence ratings of the Ratings tab (task ``task_name``, the preset's ``report.human_task``:
    :func:`judges.human_stats.saneval_human`): per model the raters' mean answer on [0, 1] per category, and Total
    the unweighted mean of the categories present, as the paper's Total."""
    from datamodel.rating_scales import ChoiceScale
    from judges.human_stats import saneval_human
    from judges.rating_tasks import RATING_TASKS

    task = RATING_TASKS[task_name]
    if not isinstance(task.scale, ChoiceScale):
        raise ValueError(f"report.human_task {task_name!r} is answered with scores; Table 4 reads the answers of a "
                         f"choice scale on [0, 1]: name a task such as {HUMAN_TASK}.")
    columns = [Column("spatial", "Spatial"), Column("numeracy", "Numeracy"),
               *(Column(c, c.capitalize(), "Attribute Binding") for c in BINDING), Column("Total")]
    table = Table("4", "Human evaluation results", columns)
    human = {row["model"]: row for row in saneval_human(db, task=task_name).to_dict("records")}
    none = (f"no human ratings yet: open the task (python -m arena ratings assign {task_name}) and rate on the "
            "Ratings tab")
    for model in [*human, *(m for m in models if m not in human)]:
        row = human.get(model)
        cells = {c: Cell.number(row[c] if row else None, "{:.4f}", none if row is None else
                                f"no {c} image of this model rated") for c in CATEGORIES}
        cells["Total"] = Cell.number(row["total"] if row else None, "{:.4f}", none)
        table.add_row(model, cells)
    points = task.scale.points
    low, high = points[0], points[-1]
    table.notes.append(
        f"Task {task_name}: per image the raters' mean answer on [0, 1], from {low.value} "
        f"({low.label.split(' · ')[-1].lower()}) "
        f"to {high.value} ({high.label.split(' · ')[-1].lower()}) in {len(points)} points; per category the mean over "
        "the rated images; Total the unweighted mean of the categories rated (the paper's Total is that mean). "
        + ("Answers in tenths move a mean of 100 in steps of 0.001, as every cell of the paper's Table 4 does."
           if len(points) == 11 else "The paper's cells move in steps of 0.001, which a five-point scale's means of "
           "100 answers (steps of 0.0025) cannot: the saneval-paper preset reads saneval_adherence_10 (0-10)."))
    return table


def table_5(db, judge: str | None) -> Table:
    table = Table("5", "Sample prompts, scores, and diagnostic feedback",
                  [Column("Prompt"), Column("Model"), Column("Score"), Column("Feedback", "Conformity Feedback")],
                  row_header="Evaluation")
    rows = [row for row in judgments(db, judge, "saneval") if row["status"] == "ok"] if judge else []
    from datamodel.catalog import prompt_row

    names = model_names(db)
    for category, label in EXAMPLE_ROWS:
        example = next((row for row in rows if row["verdict"].get("category") == category), None)
        if example is None:
            reason = f"no scored {category} image: {JUDGE_HINT}"
            table.add_row(label, {key: Cell.absent(reason) for key in ("Prompt", "Model", "Score", "Feedback")})
            continue
        verdict = example["verdict"]
        table.add_row(label, Prompt=Cell(f'"{prompt_row(db, example["prompt_id"])["text"]}"'),
                      Model=Cell(names.get(example["model_id"], "")),
                      Score=Cell.number(verdict["score"], "{:.1f}"),
                      Feedback=Cell("; ".join(verdict.get("feedback") or []) or "None"))
    return table


def build(db, options: ReportOptions) -> Report:
    judges = metric_scorers(db, "saneval_overall", SUITE)
    judge = chosen_judge(judges, options)
    scored = {model for judge_name in judges for model, _ in
              model_metric_values(db, "saneval_overall", scorer=judge_name, suite=SUITE)}
    models = [model for model in sorted_model_names(db) if model in scored]
    return Report("saneval", "SANEval: open-vocabulary compositional benchmarks",
                  [table_1(db, judge, models), table_2(db, judge), *table_3(db, judge, models),
                   table_4(db, models, options.preset.get("report.human_task", HUMAN_TASK)),
                   table_5(db, judge)],
                  provenance=["Judges: " + (", ".join(judges) or "none yet")
                              + (f"; the tables use {judge}." if judge else ".")])


REPORTS.register(ReportSpec("saneval", "SANEval Tables 1-5", build, preset="saneval-paper"))
