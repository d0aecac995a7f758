"""``python -m arena report consistency``: the consistency benchmark's Table 1 and Figure 3 (Hollinger,
hollinger-consistency.txt).

From the consistency metrics the ``consistency`` metric stores per model (:mod:`judges.metrics.consistency`; scorer
``<source scorer>/<source metric>``):

- **Table 1**: S_final = S_r − S_a (realistic minus abstract mean of s_i; a small |S_final| is better) with s_i the
  sample standard deviation (std, eq. 2), the minimum (min) or the median (med) of an object's five scores, per model
  (rows: the paper's labels for the registry models it ran, the model name for any other).
- **Figure 3 as numbers**: S_a and S_r with s_i the std (the bars' means of the figure; the paper prints no numbers
  for it), and the objects counted.

The columns the paper has are filled from the score the preset names (``--consistency-source align_score`` of the
preset's ALIGN model: the paper's v_ij); the spreads of any other score (the project's CLIP variant, a tiny stand-in)
get columns of their own under "Other scores", so nothing is shown under a column it does not belong to.
"""

from __future__ import annotations

from arena.reports import REPORTS, Cell, Column, Report, ReportOptions, ReportSpec, Table
from datamodel.catalog import items_per_subset, models_with_images
from datamodel.metrics import model_level_rows

SUITE = "paraphrase"
PAPER_ROWS = {"sd-2": "SD2", "sd-2-1": "SD2.1", "sd3": "SD3-medium", "dall-e-3": "DALL-E 3"}  # Figure 3's labels
STATS = (("std", "std"), ("min", "min"), ("median", "med"))
PARTS = (("S_a", "S_a (abstract)"), ("S_r", "S_r (realistic)"))


def wanted_scorer(options: ReportOptions) -> str:
    """The consistency rows' scorer under the chosen preset: ``<ALIGN scorer>/align_score`` for the paper's."""
    preset = options.preset
    source = preset.get("metrics.option.consistency_source", "clip_score")
    if source == "align_score":
        return f"align:{preset.get('metrics.option.align_model', 'kakaobrain/align-base')}/align_score"
    model = preset.get("metrics.option.clip_model", "ViT-B-32")
    return f"open_clip:{model}:{preset.get('metrics.option.clip_pretrained', 'openai')}/{source}"


def _rows(db):
    names = [f"consistency_{stat}_{part}" for stat, _ in STATS for part in ("S_final", "S_a", "S_r")]
    return [row for row in model_level_rows(db, names, suite=SUITE) if row["subset"] == ""]


def _ordered_models(db, rows) -> list[str]:
    models = list(dict.fromkeys([*models_with_images(db, SUITE), *(row["model"] for row in rows)]))
    return [m for m in PAPER_ROWS if m in models] + [m for m in models if m not in PAPER_ROWS]


def _table(db, options: ReportOptions, number: str, title: str, metrics: list[tuple[str, str, str]],
           group: str = "") -> Table:
    """Rows: models; columns: ``metrics`` [(column key, stored name, label)] of the wanted scorer, then the same of
    every other scorer in the database."""
    rows, wanted = _rows(db), wanted_scorer(options)
    names = {name for _, name, _ in metrics}
    scorers = sorted({row["scorer"] for row in rows if row["name"] in names} - {wanted})
    columns = [Column(key, label, group) for key, _, label in metrics]
    for scorer in scorers:
        columns += [Column(f"{key} {scorer}", f"{label} [{scorer}]", "Other scores (not the paper's)")
                    for key, _, label in metrics]
    values = {(row["model"], row["name"], row["scorer"]): row for row in rows}
    table = Table(number, title, columns)
    fix = (f"no consistency metrics from {wanted}: python -m judges metrics --suite {SUITE} --preset "
           f"{options.preset.name}")
    for model in _ordered_models(db, rows):
        cells = {}
        for scorer, suffix in [(wanted, "")] + [(other, f" {other}") for other in scorers]:
            for key, name, _ in metrics:
                row = values.get((model, name, scorer))
                cells[key + suffix] = (Cell.number(round(row["value"], 2) + 0.0, "{:.2f}") if row else  # no "-0.00"
                                       Cell.absent(fix if scorer == wanted else "not computed with this score"))
        table.add_row(PAPER_ROWS.get(model, model), cells)
    table.notes.append(f"Score: {wanted} (the paper: ALIGN logits_per_image, kakaobrain/align-base).")
    return table


def build(db, options: ReportOptions) -> Report:
    table1 = _table(db, options, "1", "Benchmark score S_final = S_r − S_a with std, min and median as s_i "
                    "(a low absolute score is better)",
                    [(stat, f"consistency_{stat}_S_final", label) for stat, label in STATS], group="S_final")
    figure3 = _table(db, options, "F3", "Figure 3 as numbers: mean standard deviation per category",
                     [(part, f"consistency_std_{part}", label) for part, label in PARTS])
    counts = items_per_subset(db, SUITE)
    objects = ", ".join(f"{count} {category}" for category, count in counts.items()) or "no"
    return Report("consistency", "Consistency over paraphrases (Hollinger): Table 1 and Figure 3",
                  [table1, figure3],
                  provenance=[f"data: the paraphrase suite of this database ({objects} objects; the paper: 40 "
                              "abstract, 40 realistic, 5 wordings each)"])


REPORTS.register(ReportSpec("consistency",
                    "Consistency over paraphrases: Table 1 (S_final by std, min, median) and Figure 3", build,
                    preset="consistency-paper"))
