"""``python -m arena report semvarbench``: SemVarBench's tables (Zhu et al., ICLR 2025) from the database.

- Table 2: S̄, γ_w, γ_wo and κ per model, one column group per evaluator (the paper's four, then any other judge
  that scored the suite);
- Table 7: the test items per category (the Train and Total columns need the training set's categories, which the
  release does not divide: "—"), with Appendix C.3's share of items by number of categories;
- Tables 9 and 10: κ per category, and the aspects of §4.3 (Relation, Attribute Comparison, Attribute Value), for
  one evaluator: the preset's judge model when it scored the suite (the paper's GPT-4 Turbo), else the first judge;
- Table 14: the edit distances between an item's sentences (:mod:`suites.semvarbench_stats`);
- Tables 11 and 12 (Appendix E.2): the human evaluation from the Ratings tab's scores (:mod:`judges.human_stats`), and
  each judge's SemVarEffect against the humans' (:func:`judges.human_compare.compare_with_humans`).

Models are printed under the paper's names where the registry model is the paper's (``sd-v1-5`` as "SD 1.5");
imported API models under their own names, or the paper's when named so (``DALL-E 3``).
"""

from __future__ import annotations

from arena.reports import REPORTS, Cell, Column, Report, ReportOptions, ReportSpec, Table
from datamodel.catalog import suite_prompts
from datamodel.metrics import metric_scorers, model_metric_values
from datamodel.models import sorted_model_names
from suites.semvarbench import ASPECTS, CATEGORIES, CATEGORY_TITLES, SUITE

# registry name -> the paper's row label (Table 2 spelling); Tables 9 and 10 print longer names for the same rows
# (the paper's SD XL 1.0 is base and refiner, its footnote 5: sdxl-base-refiner; the base alone is another system)
PAPER_NAMES = {"sd-v1-5": "SD 1.5", "sd-2-1": "SD 2.1", "sdxl-base-refiner": "SD XL 1.0",
               "sdxl": "SD XL 1.0 (base only)", "stable-cascade": "SD CA",
               "deepfloyd-if": "DeepFloyd", "pixart-alpha": "PixArt", "kolors": "Kolors", "sd3": "SD 3",
               "flux-dev": "FLUX.1"}
# the paper's evaluators (Table 2's column groups): label and the text their judge model names contain
EVALUATORS = (("Gemini 1.5 Pro", "gemini-1.5-pro"), ("Claude 3.5 Sonnet", "claude-3-5-sonnet"),
              ("GPT-4o", "gpt-4o-2024"), ("GPT-4 Turbo", "gpt-4-turbo"))
METRICS = (("S", "S̄ (↑)", "semvar_score"), ("gamma_w", "γ_w (↑)", "semvar_gamma_w"),
           ("gamma_wo", "γ_wo (↓)", "semvar_gamma_wo"), ("kappa", "κ (↑)", "semvar_kappa"))
JUDGE_HINT = "run python -m judges semvar --preset semvarbench-paper"


def paper_name(model: str) -> str:
    return PAPER_NAMES.get(model, model)


def evaluator_of(judge: str, evaluators: dict[str, str] | None = None) -> str:
    """The paper's evaluator a judge name (``name:model``) stands for, or the judge name itself. With the preset's
    ``report.evaluators`` ({label: dated model}), only that exact model is the paper's evaluator (gpt-4o-2024-08-06
    is not the paper's GPT-4o); without, any model of the family is."""
    model = judge.split(":", 1)[-1].lower()
    if evaluators:
        return next((label for label, dated in evaluators.items() if model == dated.lower()), judge)
    return next((label for label, part in EVALUATORS if part in model), judge)


def preset_evaluators(options: ReportOptions) -> dict[str, str] | None:
    """The preset's {Table 2 column group: dated judge model} (``report.evaluators``), or None."""
    return dict(options.preset.get("report.evaluators") or {}) or None


def chosen_judge(judges: list[str], options: ReportOptions) -> str | None:
    wanted = str(options.preset.get("judge.model") or "")
    return next((judge for judge in judges if wanted and judge.endswith(":" + wanted)), judges[0] if judges else None)


def table_2(db, judges: list[str], models: list[str], evaluators: dict[str, str] | None = None) -> Table:
    groups = [label for label, _ in EVALUATORS] + [j for j in judges if evaluator_of(j, evaluators) == j]
    columns = [Column(f"{group}|{key}", label, group) for group in groups for key, label, _ in METRICS]
    table = Table("2", "Evaluations on T2I models using semantic variations under multiple MLLM scores", columns)
    values = {(evaluator_of(judge, evaluators), key): model_metric_values(db, name, scorer=judge, suite=SUITE)
              for judge in judges for key, _, name in METRICS}
    for model in models:
        cells = {}
        for group in groups:
            for key, _, _ in METRICS:
                found = values.get((group, key), {}).get((model, ""))
                reason = (f"no {group} judgments of this model: {JUDGE_HINT} --judge-model <{group}'s model>"
                          if (group, key) in values else f"no {group} judge has scored the suite: {JUDGE_HINT} "
                          f"--judge-model <{group}'s model>")
                cells[f"{group}|{key}"] = Cell.number(found, "{:.2f}", reason)
        table.add_row(paper_name(model), cells)
    table.notes.append("S̄: mean of S(T_a,I_a), S(T_pv,I_pv), S(T_pi,I_pi); κ = γ_w − γ_wo (eqs. 2-4), means over "
                       "the items a model has all three images of.")
    if evaluators:
        table.notes.append("The paper's evaluators are these dated models (Appendix D.2): " + "; ".join(
            f"{label} {model}" for label, model in evaluators.items()) + ". A judge of another version has a column "
            "group of its own.")
    return table


def table_7(items) -> tuple[Table, Table]:
    from suites.semvarbench_stats import category_counts, category_distribution

    counts = category_counts(items)
    columns = [Column("Train"), Column("Test"), Column("Total")]
    table = Table("7", "Statistics of SemVarBench", columns, row_header="Category")
    train = Cell.absent("the released training set (benchmark/trainingset/training_data.txt) is not divided into "
                        "categories, and the database holds the test set only")
    empty = Cell.absent("no SemVarBench items: python -m arena suites import semvarbench <the released benchmark/>")
    for names in ASPECTS.values():
        for name in names:
            table.add_row(name, Train=train, Test=Cell.number(counts.get(name), "{:d}", empty.missing
                          if not items else "no item of this category in the imported test set"), Total=train)
    table.add_row("Total", Train=train, Test=Cell.number(sum(counts.values()) if items else None, "{:d}",
                                                         empty.missing), Total=train)
    table.add_row("Total(deduplication)", Train=train, Test=Cell.number(len(items) or None, "{:d}", empty.missing),
                  Total=train)
    table.notes.append("Rows are the category files' names; aspects: " + "; ".join(
        f"{aspect}: {', '.join(CATEGORY_TITLES[n] for n in names)}" for aspect, names in ASPECTS.items()) + ".")
    shares = category_distribution(items)
    distribution = Table("C.3", "Distribution: test items by number of categories", [
        Column("1 category"), Column("2 categories"), Column("3 categories")], row_header="Set")
    distribution.add_row("test set", {f"{n} categor{'y' if n == 1 else 'ies'}":
                                      Cell.number(100 * shares[n] if n in shares else None, "{:.2f}%",
                                                  empty.missing if not items else "no item in that many categories")
                                      for n in (1, 2, 3)})
    return table, distribution


def category_tables(db, judge: str | None, models: list[str],
                    evaluators: dict[str, str] | None = None) -> tuple[Table, Table, Table]:
    from judges.semvar import aspect_scores

    kappas = model_metric_values(db, "semvar_kappa", scorer=judge, suite=SUITE) if judge else {}
    evaluator = evaluator_of(judge, evaluators) if judge else "the evaluator"
    reason = f"no judgments: {JUDGE_HINT}" if judge else f"no judge has scored the suite: {JUDGE_HINT}"
    relation_cmp = [n for aspect in ("Relation", "Attribute Comparison") for n in ASPECTS[aspect]]
    nine = Table("9", f"SemVarEffect κ on aspects Relation and Attribute Comparison ({evaluator})",
                 [Column(n, CATEGORY_TITLES[n], aspect) for aspect in ("Relation", "Attribute Comparison")
                  for n in ASPECTS[aspect]])
    ten = Table("10", f"SemVarEffect κ on aspect Attribute Value; AVG over all items ({evaluator})",
                [Column(n, CATEGORY_TITLES[n], "Attribute Value") for n in ASPECTS["Attribute Value"]]
                + [Column("AVG")])
    for model in models:
        row = {n: Cell.number(kappas.get((model, n)), "{:.2f}", reason if not kappas else
                              "no item of this category judged for this model") for n in CATEGORIES}
        nine.add_row(paper_name(model), {n: row[n] for n in relation_cmp})
        ten.add_row(paper_name(model), {**{n: row[n] for n in ASPECTS["Attribute Value"]},
                                        "AVG": Cell.number(kappas.get((model, "")), "{:.2f}", reason)})
    ten.notes.append("AVG: κ over all judged items (each once), Table 2's κ of this evaluator; the paper's AVG column "
                     "differs from its own Table 2 κ, and is not reproduced by weighting Tables 9-10 by category size.")
    aspects = Table("aspects", f"SemVarEffect κ per aspect (§4.3, Fig. 8; {evaluator})",
                    [Column(aspect) for aspect in ASPECTS])
    rows = {(r["model"], r["aspect"]): r["kappa"] for r in (aspect_scores(db, judge) if judge else [])}
    for model in models:
        aspects.add_row(paper_name(model), {aspect: Cell.number(rows.get((model, aspect)), "{:.2f}", reason)
                                            for aspect in ASPECTS})
    aspects.notes.append("An aspect's κ is the mean over the items with a category of that aspect, each once (the "
                         "paper does not say how its 0.07 / 0.13 / 0.19 for Ideogram 2 were averaged).")
    return nine, ten, aspects


def table_14(items) -> Table:
    from suites.semvarbench_stats import edit_distance_table

    table = Table("14", "The average edit distance between sentences in different categories",
                  [Column("T_pv", "(T_a, T_pv)"), Column("T_pi", "(T_a, T_pi)"),
                   Column("T_random", "(T_a, T_random)")], row_header="Category")
    distances = edit_distance_table(items) if items else {}
    empty = "no SemVarBench items: python -m arena suites import semvarbench <the released benchmark/>"
    for name in [*CATEGORIES, "Average"]:
        values = distances.get(name)
        table.add_row(name, {key: Cell.number(values[k] if values else None, "{:.2f}", empty if not items else
                                              "no item of this category") for k, key in
                             enumerate(("T_pv", "T_pi", "T_random"))})
    table.notes.append("Character edit distance (Levenshtein, nltk). T_random: the anchor of another item drawn with "
                       "numpy's default_rng(0); the paper does not say how it drew its random sentences.")
    return table


# Table 12's rows: the paper's evaluator labels as Table 12 prints them
TABLE_12_NAMES = {"GPT-4o": "GPT-4o", "GPT-4 Turbo": "GPT-4v", "Claude 3.5 Sonnet": "Claude-3.5-Sonnet",
                  "Gemini 1.5 Pro": "Gemini-Pro-1.5"}
TABLE_12_MODEL = "CogView3-Plus"  # the model whose items Table 12 correlates
RATE_HINT = "open the task (python -m arena ratings assign semvar_alignment) and rate on the Ratings tab"


def table_11(db) -> Table:
    """Appendix E.2, Table 11: S̄, γ_w, γ_wo and κ per model from the human scores of the Ratings tab (task
    ``semvar_alignment``: :func:`judges.human_stats.semvar_human`, SemVarEffect from the raters' mean scores)."""
    from judges.human_stats import semvar_human

    table = Table("11", "Human evaluation results of different T2I models in understanding semantic variations",
                  [Column(key, label) for key, label, _ in METRICS])
    rows = [row for row in semvar_human(db).to_dict("records") if row["subset"] == ""]
    for row in rows:
        table.add_row(paper_name(row["model"]), {key: Cell.number(row["mean" if key == "S" else key], "{:.2f}")
                                                 for key, _, _ in METRICS})
    if not rows:
        table.add_row("(no model)", {key: Cell.absent(f"no item with all seven questions rated: {RATE_HINT}")
                                     for key, _, _ in METRICS})
    table.notes.append("Per question S(T, I) = (Relevance + Object Accuracy) / 100, the mean over its raters; per item "
                       "with all seven (text, image) pairs rated, S̄, γ_w, γ_wo and κ = γ_w − γ_wo; per model the "
                       "means over its rated items.")
    return table


def table_12(db, evaluators: dict[str, str] | None = None) -> Table:
    """Appendix E.2, Table 12: each judge's SemVarEffect per item against the humans' (from their mean scores):
    Pearson's ρ, Spearman's φ and Cohen's κ (of the sign of SemVarEffect), on CogView3-Plus's items where it was
    rated, else on every rated item (:func:`judges.human_compare.compare_with_humans`)."""
    from datamodel.human_ratings import ratings_frame
    from judges.human_compare import CEILING, HumanCompareOptions, compare_with_humans

    rated = set(ratings_frame(db, task="semvar_alignment")["model"])
    model = next((m for m in rated if paper_name(m) == TABLE_12_MODEL), None)
    rows = compare_with_humans(db, HumanCompareOptions(task="semvar_alignment", model=model, min_shared=3))
    table = Table("12", f"Correlation coefficients between the judges and human evaluations of the SemVarEffect "
                        f"({'for ' + TABLE_12_MODEL if model else 'over every rated item'})",
                  [Column("pearson", "ρ (↑)"), Column("spearman", "φ (↑)"), Column("kappa", "κ_cohen (↑)")],
                  row_header="Judge")
    for row in rows.to_dict("records"):
        label = row["judge"] if row["judge"] == CEILING else TABLE_12_NAMES.get(evaluator_of(row["judge"], evaluators),
                                                                                 row["judge"])
        reason = (f"fewer than 3 items shared ({row['items']})" if row["insufficient"] else "a side is constant")
        table.add_row(label, {key: Cell.number(row[key], "{:.2f}", reason) for key in ("pearson", "spearman",
                                                                                        "kappa")})
    if rows.empty:
        table.add_row("(no judge)", {key: Cell.absent(f"no human scores yet: {RATE_HINT}; and {JUDGE_HINT}")
                                     for key in ("pearson", "spearman", "kappa")})
    table.notes.append("Cohen's κ of the sign of SemVarEffect (negative, zero, positive): the paper does not say how "
                       "it made the continuous SemVarEffect categorical. The human ceiling is rater against rater, "
                       "each rater's SemVarEffect from their own seven scores.")
    return table


# --- Table 4 (token accuracy), Figures 6 and 14 (the text encoders) -------------------------------------------------

TOKEN_CATEGORIES = ("absolute_location", "height")  # Table 4's categories
ROLE_COLUMNS = (("anchor", "T_a"), ("permutation", "T_pv"), ("paraphrase", "T_pi"))
TOKENS_HINT = "run python -m judges semvar_tokens --judge-model gpt-4o-2024-05-13 (Table 4's evaluator is GPT-4o)"
ENCODERS_HINT = ("run python -m judges metrics --metrics text_encoders --suite semvarbench (each model's own text "
                 "encoders)")


def _item_categories(db) -> dict[str, list[str]]:
    categories: dict[str, list[str]] = {}
    for row in suite_prompts(db, SUITE):
        if row["role"] == "anchor":
            meta = row["metadata"] or {}
            categories[row["item_key"]] = list(meta.get("categories") or ([meta["category"]] if meta.get("category")
                                                                          else []))
    return categories


def _prefer(scorers: list[str], evaluators: dict[str, str] | None, label: str = "GPT-4o") -> str | None:
    """The scorer whose judge model is the paper's ``label`` evaluator, else the first."""
    wanted = (evaluators or {}).get(label, "gpt-4o")
    return next((s for s in scorers if s.split(":", 1)[-1] == wanted), scorers[0] if scorers else None)


def table_4_tokens(db, evaluators: dict[str, str] | None = None) -> Table:
    """Table 4: token accuracy (:mod:`judges.semvar_tokens`) per model of T_a, T_pv and T_pi: the mean over the
    images of the items of Absolute Location and Height (the paper's two categories), and over all items."""
    from datamodel.metrics import image_metric_frame

    frame = image_metric_frame(db, "semvar_token_accuracy", suite=SUITE)
    judge = _prefer(list(dict.fromkeys(frame["scorer"])), evaluators)
    frame = frame[frame["scorer"] == judge] if judge else frame
    categories = _item_categories(db)
    table = Table("4", "Token accuracy of T_a, T_pv and T_pi", [Column(label, label) for _, label in ROLE_COLUMNS],
                  row_header="Category: Model")
    models = [m for m in sorted_model_names(db) if m in set(frame["model"])]
    for category in (*TOKEN_CATEGORIES, ""):
        title = CATEGORY_TITLES.get(category, "All categories")
        for model in models or ["(no model)"]:
            in_category = frame["item_key"].map(  # category bound now: map calls it at once
                lambda k, category=category: category == "" or category in categories.get(k, []))
            part = frame[(frame["model"] == model) & in_category.astype(bool)]
            cells = {}
            for role, key in ROLE_COLUMNS:
                values = part[part["role"] == role]["value"]
                cells[key] = Cell.number(float(values.mean()) if len(values) else None, "{:.3f}",
                                         f"no token judgments: {TOKENS_HINT}" if frame.empty else
                                         f"no {title} item of this model judged")
            table.add_row(f"{title}: {paper_name(model)}", cells)
    table.notes.append("Per image, the share of the sentence's meaningful words (nouns, verbs, adjectives, adverbs, "
                       "relation prepositions) the judge says the image shows; per cell the mean over the images. "
                       + (f"Judge: {judge}." if judge else "") + " The paper's +sft-unet rows need the fine-tuned "
                       "model (out of scope: docs/methods/semvarbench.md).")
    return table


def _similarities(db):
    from datamodel.metrics import image_metric_frame

    return image_metric_frame(db, "semvar_text_similarity", suite=SUITE)


def figure_14(db) -> Table:
    """Fig. 14 (Appendix F.1): per model, 1 − cos(T_a, T_pv) under its own text encoders, over the items."""
    frame = _similarities(db)
    frame = frame[frame["role"] == "permutation"]
    table = Table("F14", "Figure 14: the semantic discrimination of each model's text encoders, 1 − cos(T_a, T_pv)",
                  [Column("mean", "Mean"), Column("median", "Median"), Column("items", "Items")])
    distances: dict[str, list[float]] = {}
    for model, value in zip(frame["model"], frame["value"]):
        distances.setdefault(model, []).append(1.0 - float(value))
    for model in [m for m in sorted_model_names(db) if m in distances] or ["(no model)"]:
        values = sorted(distances.get(model, []))
        middle = (values[(len(values) - 1) // 2] + values[len(values) // 2]) / 2 if values else None
        table.add_row(paper_name(model), mean=Cell.number(sum(values) / len(values) if values else None, "{:.4f}",
                                                          ENCODERS_HINT),
                      median=Cell.number(middle, "{:.4f}", ENCODERS_HINT),
                      items=Cell.number(len(values) or None, "{:d}", ENCODERS_HINT))
    table.notes.append("Higher: the text encoder tells the two sentences apart more (the paper's measure). Each "
                       "model's own text encoders (judges/metrics/text_encoders.py says how a sentence becomes one "
                       "vector).")

    def plot():
        if not distances:
            return None
        import plotly.graph_objects as go

        figure = go.Figure([go.Box(y=distances[m], name=paper_name(m), boxmean=True) for m in distances])
        figure.update_layout(title="SemVarBench Fig. 14: 1 − cos(T_a, T_pv) by text encoder",
                             yaxis_title="1 − cos(T_a, T_pv)")
        return figure

    table.plot = plot
    return table


def figure_6(db, judges: list[str], evaluators: dict[str, str] | None = None) -> Table:
    """Fig. 6 (§4.3): per model, the mean text similarity cos(T_a, T_p*) under its own encoders against (a) the
    judge's S(T_p*, I_a) and (b) γ_w (T_pv, squares) or γ_wo (T_pi, triangles); the evaluator is GPT-4o."""
    from datamodel.judgments import judgments

    frame = _similarities(db)
    judge = _prefer(judges, evaluators)
    items = [row for row in judgments(db, judge, "semvar_item") if row["status"] == "ok"] if judge else []
    from datamodel.models import model_names

    names = model_names(db)
    columns = [Column("sim_pv", "cos(T_a, T_pv)", "T_pv (squares)"), Column("S_pv_a", "S(T_pv, I_a)", "T_pv (squares)"),
               Column("gamma_w", "γ_w", "T_pv (squares)"), Column("sim_pi", "cos(T_a, T_pi)", "T_pi (triangles)"),
               Column("S_pi_a", "S(T_pi, I_a)", "T_pi (triangles)"), Column("gamma_wo", "γ_wo", "T_pi (triangles)")]
    table = Table("F6", "Figure 6: text embedding similarity of the anchor and the permuted text against the "
                  "alignment score and the visual semantic variation "
                  f"({evaluator_of(judge, evaluators) if judge else 'GPT-4o'})",
                  columns)
    points: dict[str, dict[str, float]] = {}
    for model in set(frame["model"]) if len(frame) else set():
        for role, key in (("permutation", "sim_pv"), ("paraphrase", "sim_pi")):
            values = frame[(frame["model"] == model) & (frame["role"] == role)]["value"]
            if len(values):
                points.setdefault(model, {})[key] = float(values.mean())
    by_model: dict[str, list[dict]] = {}
    for row in items:
        by_model.setdefault(names.get(row["model_id"], str(row["model_id"])), []).append(row["verdict"])
    for model, verdicts in by_model.items():
        scores = points.setdefault(model, {})
        scores["S_pv_a"] = sum(v["scores"]["S(T_permutation,I_anchor)"] for v in verdicts) / len(verdicts)
        scores["S_pi_a"] = sum(v["scores"]["S(T_paraphrase,I_anchor)"] for v in verdicts) / len(verdicts)
        scores["gamma_w"] = sum(v["gamma_w"] for v in verdicts) / len(verdicts)
        scores["gamma_wo"] = sum(v["gamma_wo"] for v in verdicts) / len(verdicts)
    for model in [m for m in sorted_model_names(db) if m in points] or ["(no model)"]:
        values = points.get(model, {})
        table.add_row(paper_name(model), {column.key: Cell.number(
            values.get(column.key), "{:.3f}", ENCODERS_HINT if column.key.startswith("sim") else
            f"no item scores: {JUDGE_HINT} --judge-model {(evaluators or {}).get('GPT-4o', 'gpt-4o-2024-05-13')}")
            for column in columns})
    table.notes.append("cos: the mean over items of the cosine of T_a and T_p* under the model's own text encoders; "
                       "S(T_p*, I_a), γ_w and γ_wo: the judge's means over the model's items" +
                       (f" ({judge})." if judge else "."))

    def plot():
        complete = {m: v for m, v in points.items() if {"sim_pv", "S_pv_a", "gamma_w"} <= set(v)}
        if not complete:
            return None
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        figure = make_subplots(rows=1, cols=2, subplot_titles=("(a) alignment S(T_p*, I_a)", "(b) variation γ"))
        for column, y_pv, y_pi in ((1, "S_pv_a", "S_pi_a"), (2, "gamma_w", "gamma_wo")):
            for symbol, x_key, y_key, label in (("square", "sim_pv", y_pv, "T_pv"), ("triangle-up", "sim_pi", y_pi,
                                                                                      "T_pi")):
                shown = [m for m in complete if x_key in complete[m] and y_key in complete[m]]
                figure.add_trace(go.Scatter(
                    x=[complete[m][x_key] for m in shown], y=[complete[m][y_key] for m in shown],
                    mode="markers+text", text=[paper_name(m) for m in shown], textposition="top center",
                    marker={"symbol": symbol, "size": 10}, name=f"{label} ({'a' if column == 1 else 'b'})"),
                    row=1, col=column)
            figure.update_xaxes(title_text="cos(T_a, T_p*)", row=1, col=column)
        figure.update_layout(title="SemVarBench Fig. 6: text similarity against S(T_p*, I_a) and γ")
        return figure

    table.plot = plot
    return table


def build(db, options: ReportOptions) -> Report:
    from suites.semvarbench_stats import items_from_prompts

    items = items_from_prompts(suite_prompts(db, SUITE))
    judges = metric_scorers(db, "semvar_kappa", SUITE)
    scored = {model for judge in judges for model, _ in model_metric_values(db, "semvar_kappa", scorer=judge,
                                                                              suite=SUITE)}
    models = [model for model in sorted_model_names(db) if model in scored]
    judge = chosen_judge(judges, options)
    evaluators = preset_evaluators(options)
    nine, ten, aspects = category_tables(db, judge, models, evaluators)
    seven, distribution = table_7(items)
    return Report("semvarbench", "SemVarBench (Zhu et al., ICLR 2025)",
                  [table_2(db, judges, models, evaluators), seven, distribution, nine, ten, aspects, table_14(items),
                   table_11(db), table_12(db, evaluators), table_4_tokens(db, evaluators),
                   figure_6(db, judges, evaluators), figure_14(db)],
                  provenance=[f"Data: {len(items)} SemVarBench items in the database.",
                              "Judges: " + (", ".join(f"{j} ({evaluator_of(j, evaluators)})" for j in judges)
                                            or "none yet")
                              + (f"; Tables 9, 10 and the aspects use {judge}." if judge else ".")])


REPORTS.register(ReportSpec("semvarbench", "SemVarBench Tables 2, 4, 7, 9, 10, 11, 12, 14, Appendix C.3, the "
                    "aspects of §4.3 and Figures 6 and 14", build, preset="semvarbench-paper"))
