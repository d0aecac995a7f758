"""``python -m arena report commonsense``: Commonsense-T2I's Tables 1 and 2 and Figure 5 (Fu et al.,
commonsense-t2i.txt).

- **Table 1** (commonsense categories): the share of the suite's items in each category, in %, from the prompts in
  the database (the paper: 150 items; Physical Laws 32.7 %, ...).
- **Table 2** (main results): per system (rows, the paper's labels for the registry models it ran, the model name
  for any other) and evaluator (columns), the accuracy in % (§2.3): the mean over items of score_n averaged over the
  generations, stored by the fit judge (``commonsense_accuracy``, scorer ``<judge name>:<judge model>``) and the CLIP
  evaluator (``commonsense_clip_accuracy``, scorer ``open_clip:<architecture>:<weights>``). The paper's columns are
  the evaluators it used: CLIP ViT-L/14, Gemini 1.0 Pro Vision, gpt-4-vision-preview, gpt-4-turbo, gpt-4o and the
  two experts. The evaluators the preset names fill them (its judge name, its CLIP model); every other judge model or
  CLIP scorer in the database gets a column of its own under "Other evaluators", so nothing is shown under a
  column it does not belong to. The Human column is the raters' accuracy from the Ratings tab's fit task
  (``commonsense_fit``: :func:`judges.human_stats.commonsense_human`, the pair rule on their fit(I, D) answers
  averaged over generations, as §3.1's two experts), "—" for a model nobody has rated.
- **Figure 5** (§3.3) as its data and a plot: the CLIP similarity of each item's P1 and P2 (stored by the CLIP
  evaluator, ``commonsense_clip_prompt_similarity``), min-max normalised and binned, against the human score of the
  rated systems (:func:`figure_5_points`).
"""

from __future__ import annotations

from arena.reports import REPORTS, Cell, Column, Report, ReportOptions, ReportSpec, Table
from datamodel.catalog import items_per_subset, models_with_images
from datamodel.metrics import model_level_rows
from suites.commonsense import CATEGORIES, SUITE

# registry model -> the row label of Table 2 (§3.1's systems (1)-(12))
PAPER_ROWS = {
    "sd-2-1": "SD-21", "sdxl": "SD-XL", "sdxl-partner-negative": "SD-XL w/ negative prompt",
    "openjourney-v4": "Openjourney v4", "playground-v2.5": "Playground v2.5", "lcm-dreamshaper-v7": "LCMs",
    "sd3": "SD-3", "sd3-partner-negative": "SD-3 w/ negative prompt", "flux-dev": "Flux Dev",
    "flux-schnell": "Flux Schenel", "dall-e-3": "DALL-E 3", "dall-e-3-no-revision": "DALL-E 3 w/o revision",
}
# judge model -> Table 2's column (§3.1: the GPT-4V checkpoints and Gemini 1.0 Pro Vision)
JUDGE_COLUMNS = {"gemini-1.0-pro-vision": "gemini_pro", "gemini-pro-vision": "gemini_pro",
                 "gpt-4-vision-preview": "gpt4_preview", "gpt-4-turbo": "gpt4_turbo", "gpt-4o": "gpt4o"}
PAPER_COLUMNS = [Column("clip", "CLIP", "Evaluator"), Column("gemini_pro", "Gemini Pro", "Evaluator"),
                 Column("gpt4_preview", "GPT-4 preview", "Evaluator"), Column("gpt4_turbo", "GPT-4 Turbo", "Evaluator"),
                 Column("gpt4o", "GPT-4o", "Evaluator"), Column("human", "Human", "Evaluator")]
HUMAN = ("no human fit judgments of this model yet: open the task (python -m arena ratings assign commonsense_fit) "
         "and rate on the Ratings tab (docs/human-ratings.md)")
JUDGE_METRIC, CLIP_METRIC = "commonsense_accuracy", "commonsense_clip_accuracy"


def clip_scorer(options: ReportOptions) -> str:
    """The CLIP evaluator's scorer name under the chosen preset (the commonsense metric's ``--clip-model`` and
    ``--clip-pretrained``)."""
    preset = options.preset
    return (f"open_clip:{preset.get('metrics.option.clip_model', 'ViT-B-32')}:"
            f"{preset.get('metrics.option.clip_pretrained', 'openai')}")


def judge_name(options: ReportOptions) -> str:
    return options.preset.get("judge.name", "gpt-judge")


def category_table(db) -> Table:
    counts = items_per_subset(db, SUITE)
    total = sum(counts.values())
    table = Table("1", "Commonsense knowledge categories and percentage of data samples",
                  [Column("items", "Items"), Column("percent", "Percent")], row_header="Category")
    for category in [*CATEGORIES, *sorted(set(counts) - set(CATEGORIES))]:
        items = counts.get(category, 0)
        reason = "no Commonsense-T2I items in the database: python -m arena suites import commonsense data.json"
        table.add_row(category, items=Cell.number(items if total else None, "{:d}", reason),
                      percent=Cell.number(100 * items / total if total else None, "{:.1f}", reason))
    table.notes.append(f"{total} items in the database (the paper: 150).")
    return table


def results_table(db, options: ReportOptions) -> Table:
    rows = model_level_rows(db, [JUDGE_METRIC, CLIP_METRIC], suite=SUITE)
    overall = [row for row in rows if row["subset"] == ""]
    clip_wanted, judge_wanted = clip_scorer(options), judge_name(options)
    columns = list(PAPER_COLUMNS)
    # which stored scorer fills which column
    column_of: dict[tuple[str, str], str] = {}
    for metric, scorer in sorted({(row["name"], row["scorer"]) for row in overall}):
        name, _, model = scorer.rpartition(":") if metric == JUDGE_METRIC else ("", "", "")
        if metric == CLIP_METRIC and scorer == clip_wanted:
            column_of[(metric, scorer)] = "clip"
        elif metric == JUDGE_METRIC and name == judge_wanted and model in JUDGE_COLUMNS:
            column_of[(metric, scorer)] = JUDGE_COLUMNS[model]
        else:
            key = f"{'CLIP' if metric == CLIP_METRIC else 'judge'} {scorer}"
            column_of[(metric, scorer)] = key
            columns.append(Column(key, f"CLIP [{scorer}]" if metric == CLIP_METRIC else f"judge [{scorer}]",
                                  "Other evaluators (not in the paper)"))
    values: dict[tuple[str, str], dict] = {}
    for row in overall:
        values[(row["model"], column_of[(row["name"], row["scorer"])])] = row
    table = Table("2", "Main results on the Commonsense-T2I challenge set (accuracy, %)", columns)
    human = human_accuracy(db)
    models = list(dict.fromkeys([*models_with_images(db, SUITE), *(row["model"] for row in overall), *human]))
    ordered = [m for m in PAPER_ROWS if m in models] + [m for m in models if m not in PAPER_ROWS]
    for model in ordered:
        cells = {"human": Cell.number(100 * human[model]["accuracy"], "{:.2f}") if model in human
                 else Cell.absent(HUMAN)}
        for column in columns:
            if column.key == "human":
                continue
            found = values.get((model, column.key))
            cells[column.key] = (Cell.number(100 * found["value"], "{:.2f}") if found else
                                 Cell.absent(missing_reason(column.key, model, clip_wanted, judge_wanted, options)))
        table.add_row(PAPER_ROWS.get(model, model), cells)
    items = sorted({row["details"].get("items") for row in overall if row["details"].get("items") is not None})
    if items:
        table.notes.append(f"Accuracies over {items[0]}" + (f" to {items[-1]}" if items[-1] != items[0] else "")
                           + " items per cell here (the paper: 150 items, 4 generations each).")
    table.notes.append(f"Judge columns: judge name {judge_wanted!r} with the paper's judge models; CLIP column: "
                       f"{clip_wanted}.")
    if human:
        raters = sorted({row["raters"] for row in human.values()})
        table.notes.append(f"Human: the Ratings tab's fit judgments, {raters[0]}"
                           + (f" to {raters[-1]}" if raters[-1] != raters[0] else "")
                           + " rater(s) per model (the paper: two experts).")
    return table


def human_accuracy(db) -> dict[str, dict]:
    """{model: its overall row of :func:`judges.human_stats.commonsense_human`} (models somebody has rated)."""
    from judges.human_stats import commonsense_human

    frame = commonsense_human(db)
    return {row["model"]: row for row in frame[frame["category"] == ""].to_dict("records")}


def missing_reason(column: str, model: str, clip_wanted: str, judge_wanted: str, options: ReportOptions) -> str:
    preset = options.preset.name
    if column == "clip":
        return (f"no commonsense_clip_accuracy from {clip_wanted}: python -m judges metrics --suite commonsense "
                f"--preset {preset}")
    judge_model = next((m for m, key in JUDGE_COLUMNS.items() if key == column), None)
    if judge_model:
        return (f"no accuracy from judge {judge_wanted}:{judge_model}: python -m judges commonsense --preset "
                f"{preset} --judge-model {judge_model}")
    return "this evaluator did not score this model"


FIGURE_5_BINS = 7  # the figure's points: the normalised similarity in seven equal bins (centres 1/14 ... 13/14)
SIMILARITY_HINT = ("no CLIP similarity of the items' prompts yet: python -m judges metrics --suite commonsense "
                   "--preset commonsense-paper (the CLIP evaluator stores it)")


def figure_5_points(similarity: dict[str, float], human: dict[tuple[str, str], float],
                    bins: int = FIGURE_5_BINS) -> dict[str, dict[int, tuple[float, int]]]:
    """Fig. 5 (§3.3): each item's CLIP similarity of P1 and P2 min-max normalised over the items to [0, 1] ("we
    adopt min-max normalization"), put in one of ``bins`` equal bins; per model the mean human score of its items in
    each bin. ``similarity``: {item key: cos}; ``human``: {(model, item key): the item's human score, the mean over
    its generations and raters}. Returns {model: {bin: (mean, items)}}."""
    if not similarity:
        return {}
    low, high = min(similarity.values()), max(similarity.values())
    spread = high - low

    def bin_of(item: str) -> int:
        normalised = (similarity[item] - low) / spread if spread > 0 else 0.5
        return min(int(normalised * bins), bins - 1)

    points: dict[str, dict[int, list[float]]] = {}
    for (model, item), score in human.items():
        if item in similarity:
            points.setdefault(model, {}).setdefault(bin_of(item), []).append(score)
    return {model: {b: (sum(v) / len(v), len(v)) for b, v in sorted(by_bin.items())}
            for model, by_bin in points.items()}


def figure_5(db, options: ReportOptions) -> Table:
    """Fig. 5 as its data: rows the human-rated systems, columns the bins' centres, cells the mean human score of
    the items in the bin (and how many); the plot draws one line per system, as the paper's."""
    from datamodel.human_ratings import ratings_frame
    from datamodel.metrics import image_metric_frame
    from judges.human_stats import commonsense_pair_scores
    from judges.metrics.commonsense_clip import PROMPT_SIMILARITY

    wanted = clip_scorer(options)
    frame = image_metric_frame(db, PROMPT_SIMILARITY, suite=SUITE)
    scorer = wanted if (frame["scorer"] == wanted).any() else (frame["scorer"].iloc[0] if len(frame) else None)
    similarity = ({key: float(v) for key, v in frame[frame["scorer"] == scorer].groupby("item_key")["value"].mean()
                   .items()} if scorer else {})
    pairs = commonsense_pair_scores(ratings_frame(db, task="commonsense_fit"))
    human = {}
    if not pairs.empty:
        per_unit = pairs.groupby(["model", "item_key", "unit"], as_index=False)["score"].mean()
        human = {(m, i): float(v) for (m, i), v in per_unit.groupby(["model", "item_key"])["score"].mean().items()}
    points = figure_5_points(similarity, human)
    centres = [(2 * k + 1) / (2 * FIGURE_5_BINS) for k in range(FIGURE_5_BINS)]
    columns = [Column(f"bin{k}", f"{centre:.2f}", "CLIP_Similarity(P1, P2), normalised") for k, centre in
               enumerate(centres)]
    table = Table("F5", "Figure 5: CLIP embedding similarity of the prompts P1, P2 against the human evaluated score",
                  columns, row_header="System")
    reason = (SIMILARITY_HINT if not similarity else HUMAN if not human else "no rated item of this system in the bin")
    models = [m for m in PAPER_ROWS if m in points] + sorted(m for m in points if m not in PAPER_ROWS) or ["(none)"]
    for model in models:
        cells = {}
        for k in range(FIGURE_5_BINS):
            found = points.get(model, {}).get(k)
            cells[f"bin{k}"] = (Cell(f"{found[0]:.3f} ({found[1]})", found[0]) if found
                                else Cell.absent(reason))
        table.add_row(PAPER_ROWS.get(model, model), cells)
    table.notes.append(
        f"Each item's cosine of the CLIP text embeddings of P1 and P2 ({scorer or wanted}), min-max normalised over "
        f"the {len(similarity)} items to [0, 1] and cut into {FIGURE_5_BINS} equal bins (the paper's points); a cell "
        "is the mean human score (the Ratings tab's fit task: the pair rule, averaged over generations and raters) "
        "of the system's items in the bin, with how many.")

    def plot():
        if not points:
            return None
        import plotly.graph_objects as go

        figure = go.Figure()
        for model in models:
            xs = [centres[k] for k in points.get(model, {})]
            ys = [value for value, _ in points.get(model, {}).values()]
            figure.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=PAPER_ROWS.get(model, model)))
        figure.update_layout(title="Commonsense-T2I Fig. 5: CLIP similarity of P1, P2 against the human score",
                             xaxis_title="CLIP_Similarity(P1, P2), min-max normalised", yaxis_title="score",
                             xaxis_range=[0, 1])
        return figure

    table.plot = plot
    return table


def build(db, options: ReportOptions) -> Report:
    tables = [category_table(db), results_table(db, options), figure_5(db, options)]
    return Report("commonsense", "Commonsense-T2I (Fu et al.): Tables 1 and 2, Figure 5", tables,
                  provenance=["data: the commonsense suite of this database"])


REPORTS.register(ReportSpec("commonsense", "Commonsense-T2I Tables 1 (categories) and 2 (accuracy per system and "
                    "evaluator), Figure 5 (prompt similarity against the human score)",
                    build, preset="commonsense-paper"))
