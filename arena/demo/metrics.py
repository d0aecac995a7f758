"""The offline demo's metrics: every metric computed with tiny stand-in scorers made offline.

Nothing can be downloaded on the demo machines. The CLIP columns (``clip_score``, the taxonomy similarities, the
commonsense metric and the CLIP-cosine reward stand-in) come from a tiny open_clip model trained here on the demo
painters' emoji (:mod:`arena.demo.clip`, scorer ``open_clip:demo-emoji-clip``, trained once into the cache
folder): on the demo, whose right answer is known, they rank demo-painter above demo-lookalike above demo-scribble,
which shows the pipeline working; they are not a measurement of real models. FID and IS come from tiny random
feature networks (``tiny-random-features``) and measure nothing. FID uses all demo models' images of a suite as its
reference (there are no retrieval images offline).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from datamodel.catalog import suites_with_images
from datamodel.database import Database
from datamodel.media import MediaStore

DEMO_SUITE_METRICS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "taxonomy": ("clip", "fid", "is", "reward", "consistency"),
    "commonsense": ("clip", "fid", "is", "reward"),  # p1/p2 are opposites, not paraphrases: no consistency
    "semvarbench": ("clip", "fid", "is", "reward"),  # the SemVarBench judge needs a GPT-class model: not offline
    "saneval": ("clip", "fid", "is", "reward"),  # the SANEval scorer needs detector weights: not offline
})


def compute_demo_metrics(db: Database, media: MediaStore, *, cache_dir: str | Path,
                         suites: Sequence[str] = tuple(DEMO_SUITE_METRICS), progress: bool = False) -> dict:
    """Compute the demo suites' metrics with the stand-ins of the module docstring (idempotent: rows are replaced);
    return summaries. The first call on a cache folder trains the demo CLIP (40 s to 3 min on two cores)."""
    from arena.demo.clip import DEMO_CLIP_NAME, build_demo_clip
    from judges.metrics.commands import compute_metrics
    from judges.metrics.registry import Scorers, metric_options

    clip = build_demo_clip(Path(cache_dir) / "tiny" / DEMO_CLIP_NAME)  # trained once per cache folder
    options = metric_options(fid_reference="*", clip_model=f"local-dir:{clip}", clip_pretrained=None)
    scorers = Scorers(options, tiny=True, cache_dir=cache_dir)
    present = suites_with_images(db)
    return {
        suite: compute_metrics(db, media, suite, DEMO_SUITE_METRICS.get(suite, ("clip", "fid", "is", "reward")),
                               scorers, progress=progress)
        for suite in suites if suite in present
    }
