"""CompBench++ scores a user brings, per image: what SANEval's Table 3 correlates its own scores with (§4.3).

The paper tests, per model and category, Spearman's rank correlation between SANEval's score of each image and the
score T2I-CompBench++ (Huang et al., 2025) gives the same image; the project does not run CompBench++ (its detectors
and BLIP-VQA are another benchmark's code), so its scores come from a file the user writes after running it on the
arena's images. ``python -m judges metrics --metrics compbench --suite saneval --compbench-scores FILE`` stores them
as the per-image metric ``compbench_score`` (scorer ``--compbench-name``, default ``compbench++``; subset: the
prompt's category), and ``python -m arena report saneval`` computes Table 3 from them.

The file (CSV with a header, or JSON Lines), one line per scored image:

- ``model``: the arena's model name of the image;
- ``item_key``: the prompt's item key in the suite (``color-p0-0007``; ``python -m arena suites show saneval``
  lists them), or ``prompt``: the prompt's text, exactly;
- ``score``: CompBench++'s score of that image (a number; its scale does not matter to a rank correlation);
- optional ``idx``: the image's generation index (default 0), ``category``: checked against the prompt's.

A line naming a model, prompt or image the database lacks, a score that is not a number, a category that is not the
prompt's or an image given twice stops the import with the file and line; nothing is written.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.registry import METRICS, Metric, MetricRun, Skip
from judges.selection import image_rows
from suites.common import SuiteError, read_table

NAME = "compbench_score"
DEFAULT_SCORER = "compbench++"


def compbench_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--compbench-scores", metavar="FILE",
                        help="CompBench++ scores of the suite's images, one line per image (CSV or JSONL: model, "
                             "item_key or prompt, score[, idx, category]); see judges/metrics/compbench.py")
    parser.add_argument("--compbench-name", default=DEFAULT_SCORER,
                        help=f"the scorer name the CompBench++ scores are stored under (default {DEFAULT_SCORER})")


def read_scores(db, path: str | Path, suite: str, *, scorer: str = DEFAULT_SCORER,
                models=None) -> list[MetricRow]:
    """The metric rows of a CompBench++ scores file (module docstring); :class:`SuiteError` naming the line."""
    rows = image_rows(db, suite, models=models)
    by_key = {(row.model, row.item_key, row.idx): row for row in rows}
    by_text = {(row.model, row.text, row.idx): row for row in rows}
    lines = read_table(path, ["model", "score"])
    metrics: list[MetricRow] = []
    seen: dict[int, int] = {}  # image id: the line that scored it
    for line, record in lines:
        where = f"{path}:{line}"
        key = str(record.get("item_key") or "").strip()
        text = str(record.get("prompt") or "").strip()
        if not key and not text:
            raise SuiteError(f"{where}: give the prompt's item_key (or its text in a prompt column).")
        try:
            idx = int(str(record.get("idx") or 0).strip())
            score = float(str(record["score"]).strip())
        except ValueError:
            raise SuiteError(f"{where}: score must be a number and idx a whole number, got score {record['score']!r}"
                             f" and idx {record.get('idx')!r}.") from None
        if not math.isfinite(score):
            raise SuiteError(f"{where}: score {record['score']!r} is not a finite number.")
        image = by_key.get((record["model"], key, idx)) if key else by_text.get((record["model"], text, idx))
        if image is None:
            raise SuiteError(f"{where}: no image of model {record['model']!r} for prompt {key or text!r} (generation "
                             f"{idx}) in suite {suite}. Check the model name and the item key "
                             f"(python -m arena suites show {suite}); nothing was written.")
        category = str(image.metadata.get("category") or image.subset)
        given = str(record.get("category") or "").strip().lower()
        if given and given != category:
            raise SuiteError(f"{where}: category {given!r}, but prompt {image.item_key!r} is {category!r}.")
        if image.image_id in seen:
            raise SuiteError(f"{where}: the image of {image.model} for {image.item_key!r} (generation {idx}) is "
                             f"already scored on line {seen[image.image_id]}. Keep one line per image.")
        seen[image.image_id] = line
        metrics.append(MetricRow(image.model_id, NAME, score, scorer, image_id=image.image_id, suite=suite,
                                 subset=category, details={"file": Path(path).name, "line": line}))
    return metrics


def _score(run: MetricRun, scorer) -> dict:
    path = getattr(run.options, "compbench_scores", None)
    if not path:
        raise Skip("give the CompBench++ scores file: --compbench-scores FILE (see judges/metrics/compbench.py "
                   "for its columns).")
    rows = read_scores(run.db, path, run.suite, scorer=run.options.compbench_name, models=run.models)
    write_metrics(run.db, rows)
    return {"compbench": {"images": len(rows), "scorer": run.options.compbench_name}}


METRICS.register(Metric(
    name="compbench", title="CompBench++ scores from a file, per image (SANEval Table 3 correlates them)",
    stored=(NAME,), options=(compbench_options,), score=_score, default=False,
))
