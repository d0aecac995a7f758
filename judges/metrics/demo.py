"""The offline demo's metrics: every metric computed with tiny random stand-in scorers.

Nothing can be downloaded on the demo machines, so the demo's metric columns come from a tiny random open_clip model
(real CLIP tokenizer), tiny random feature networks for FID/IS and a CLIP-similarity stand-in for the reward model.
Every row's scorer says so (``open_clip:open-clip-tiny``, ``tiny-random-features``, ``stand-in:...``): the numbers
exercise the pipeline and fill the leaderboard columns; they measure nothing. FID uses all demo models' images of a
suite as its reference (there are no retrieval images offline).
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping, Sequence

import sqlite_utils

from datamodel.media import MediaStore

DEMO_SUITE_METRICS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "taxonomy": ("clip", "fid", "is", "reward", "consistency"),
    "commonsense": ("clip", "fid", "is", "reward"),  # p1/p2 are opposites, not paraphrases: no consistency
})


def compute_demo_metrics(db: sqlite_utils.Database, media: MediaStore, *, cache_dir: str | Path,
                         suites: Sequence[str] = tuple(DEMO_SUITE_METRICS), progress: bool = False) -> dict:
    """Compute the demo suites' metrics with tiny stand-ins (idempotent: rows are replaced); return summaries."""
    from judges.metrics.commands import compute_metrics
    from judges.metrics.registry import Scorers, metric_options

    scorers = Scorers(metric_options(fid_reference="*"), tiny=True, cache_dir=cache_dir)
    present = {row[0] for row in db.execute(
        "SELECT DISTINCT p.suite FROM images i JOIN prompts p ON p.id = i.prompt_id")}
    return {
        suite: compute_metrics(db, media, suite, DEMO_SUITE_METRICS.get(suite, ("clip", "fid", "is", "reward")),
                               scorers, progress=progress)
        for suite in suites if suite in present
    }
