"""Reward-model scores per image and Mann-Whitney U comparisons between models (protocols.md, T1).

The taxonomy benchmark scores images with ImageReward. Its package (``image-reward`` 1.5 on PyPI) pins
``timm==0.6.13`` while open_clip_torch 3.3 needs ``timm>=1.0.17``, and its BLIP code imports transformers 4
internals removed in transformers 5, so it cannot share this project's pinned environment. It is an optional extra,
installed in a separate virtualenv that holds only what this module needs::

    python -m venv .venv-reward
    .venv-reward/bin/pip install image-reward==1.5 "transformers<4.40" sqlite-utils pillow tqdm scipy pandas
    .venv-reward/bin/python -m judges.metrics.commands --suite taxonomy --metrics reward \
        --reward-checkpoint /weights/ImageReward.pt --reward-med-config /weights/med_config.json

Everything here works with any object implementing :class:`RewardModel` (tests use a tiny stand-in; the offline
demo uses :class:`ClipRewardStandIn`, recorded under its own scorer name). Scores are written as the image-level
metric ``reward`` with the reward model as scorer.

The Mann-Whitney comparisons are stored too (:func:`store_comparisons`): one model-level row per pair of models,
on the first model of the pair (alphabetical), named ``reward_mann_whitney_p`` with the p-value as value, subset
``vs <other model>`` (so the leaderboard's overall columns, subset '', never show it) and the test's numbers in
details; :func:`stored_comparisons` reads them back as the printed table.
"""

from __future__ import annotations

import argparse
from itertools import combinations
from typing import Protocol, Sequence, runtime_checkable

from PIL import Image

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, image_metric_frame, scored_image_ids, write_metrics
from datamodel.models import model_ids as models_by_name
from judges.metrics.clip_scores import clip_encoder, clip_options
from judges.metrics.registry import METRICS, Metric, MetricRun, ScorerContext
from judges.selection import ImageRow, image_rows

EXTRA_HELP = (
    "ImageReward is not installed. It cannot share this environment (it pins timm==0.6.13 and needs transformers 4); "
    "install it in a separate virtualenv as described in judges/metrics/reward.py, or use --reward-model clip."
)


@runtime_checkable
class RewardModel(Protocol):
    name: str  # stored as the metric's scorer
    version: str

    def score(self, prompt: str, images: Sequence[Image.Image]) -> list[float]: ...


class ImageRewardModel:
    """ImageReward (Xu et al., 2023) through its package: ``checkpoint`` a name such as ``ImageReward-v1.0`` (downloads)
    or a local ``ImageReward.pt``; ``med_config`` the local ``med_config.json`` on machines without network."""

    def __init__(self, checkpoint: str = "ImageReward-v1.0", *, med_config: str | None = None, device: str = "cpu",
                 download_root: str | None = None):
        try:
            import ImageReward as reward_package
        except ImportError:
            raise ModuleNotFoundError(EXTRA_HELP) from None
        self.model = reward_package.load(checkpoint, device=device, download_root=download_root, med_config=med_config)
        self.name = ("ImageReward-v1.0" if checkpoint == "ImageReward-v1.0"
                     else f"ImageReward:{checkpoint.rsplit('/', 1)[-1]}")
        self.version = f"image-reward {getattr(reward_package, '__version__', '1.5')}"

    def score(self, prompt: str, images: Sequence[Image.Image]) -> list[float]:
        import torch

        with torch.inference_mode():
            return [float(self.model.score(prompt, image)) for image in images]


class ClipRewardStandIn:
    """A stand-in reward: the cosine of image and prompt under a CLIP encoder (for the offline demo only)."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.name = f"stand-in:{encoder.name}"
        self.version = encoder.version

    def score(self, prompt: str, images: Sequence[Image.Image]) -> list[float]:
        text = self.encoder.encode_texts([prompt])[0]
        return (self.encoder.encode_images(list(images)) @ text).tolist()


PROMPTS = ("text", "lemma")


def reward_scorer(model: RewardModel, prompt: str = "text") -> str:
    """The scorer name of rows scored against ``prompt``: the model's, plus ``:lemma-prompt`` when the text is the
    concept's lemma (the taxonomy paper's reward.py), so the two never mix."""
    return model.name if prompt == "text" else f"{model.name}:lemma-prompt"


def reward_text(row: ImageRow, prompt: str = "text") -> str:
    """What the reward model reads for an image: its prompt, or (``lemma``) the concept's lemma as the benchmark file
    writes it (BIGT reward.py: ``model.score(item['core_lemma'], image)``; prompts without a concept keep their
    text)."""
    if prompt == "lemma":
        from judges.metrics.clipscore import core_lemma

        return core_lemma(row.metadata) or row.text
    return row.text


def score_rewards(db: Database, media: MediaStore, model: RewardModel, suite: str, *,
                  models: Sequence[str] | None = None, skip_existing: bool = True, progress: bool = False,
                  prompt: str = "text") -> int:
    """Write ``reward`` for the suite's images not yet scored by ``model``; one call per text (the prompt, or with
    ``prompt="lemma"`` the concept's lemma: :func:`reward_text`); return the count."""
    from judges.metrics.progress import progress_bar

    if prompt not in PROMPTS:
        raise ValueError(f"unknown reward prompt {prompt!r}; choose one of {', '.join(PROMPTS)}.")
    scorer = reward_scorer(model, prompt)
    done = scored_image_ids(db, "reward", scorer) if skip_existing else set()
    by_prompt: dict[str, list[ImageRow]] = {}
    for row in image_rows(db, suite, models=models):
        if row.image_id not in done:
            by_prompt.setdefault(reward_text(row, prompt), []).append(row)
    written = 0
    with progress_bar(sum(map(len, by_prompt.values())), f"reward {suite}", progress=progress) as bar:
        for prompt, rows in by_prompt.items():
            values = model.score(prompt, [row.load(media) for row in rows])
            if len(values) != len(rows):
                raise RuntimeError(f"reward model {model.name} returned {len(values)} scores for {len(rows)} images.")
            written += write_metrics(db, [
                MetricRow(row.model_id, "reward", value, scorer, image_id=row.image_id, suite=suite,
                          subset=row.subset, scorer_version=model.version)
                for row, value in zip(rows, values)
            ])
            bar.update(len(rows))
    return written


def mann_whitney_table(scores: dict[str, Sequence[float]], alternative: str = "two-sided"):
    """Pairwise two-sample Mann-Whitney U tests between models' score samples (scipy.stats.mannwhitneyu).

    Rows: model_a, model_b, n_a, n_b, median_a, median_b, U (of model_a), p_value. A small p-value says the two
    models' reward distributions differ; ``alternative="greater"`` tests whether model_a's rewards tend to be higher.
    """
    import numpy as np
    import pandas as pd
    from scipy.stats import mannwhitneyu

    rows = []
    for a, b in combinations(sorted(scores), 2):
        x, y = np.asarray(scores[a], dtype=float), np.asarray(scores[b], dtype=float)
        if len(x) == 0 or len(y) == 0:
            continue
        result = mannwhitneyu(x, y, alternative=alternative)
        rows.append({"model_a": a, "model_b": b, "n_a": len(x), "n_b": len(y), "median_a": float(np.median(x)),
                     "median_b": float(np.median(y)), "U": float(result.statistic), "p_value": float(result.pvalue)})
    return pd.DataFrame(rows, columns=["model_a", "model_b", "n_a", "n_b", "median_a", "median_b", "U", "p_value"])


def reward_comparisons(db: Database, *, scorer: str | None = None, suite: str | None = None,
                       name: str = "reward", alternative: str = "two-sided"):
    """:func:`mann_whitney_table` over the stored per-image ``name`` scores (one scorer: the most used if None)."""
    frame = image_metric_frame(db, name, scorer=scorer, suite=suite).dropna(subset=["value"])
    if scorer is None and not frame.empty:
        frame = frame[frame["scorer"] == frame["scorer"].value_counts().idxmax()]
    return mann_whitney_table({model: group["value"].tolist() for model, group in frame.groupby("model")}, alternative)


COMPARISON_METRIC = "reward_mann_whitney_p"
COMPARISON_SUBSET = "vs "  # + the other model's name


def store_comparisons(db: Database, table, *, scorer: str, suite: str = "", version: str = "",
                      name: str = "reward", alternative: str = "two-sided") -> int:
    """Write a :func:`mann_whitney_table` as ``reward_mann_whitney_p`` rows (module docstring); return the count."""
    model_ids = models_by_name(db)
    rows = [
        MetricRow(model_ids[record["model_a"]], COMPARISON_METRIC, record["p_value"], scorer, suite=suite,
                  subset=COMPARISON_SUBSET + record["model_b"], scorer_version=version,
                  details={"model_b": record["model_b"], "n_a": int(record["n_a"]), "n_b": int(record["n_b"]),
                           "median_a": record["median_a"], "median_b": record["median_b"], "U": record["U"],
                           "alternative": alternative, "source": name})
        for record in table.to_dict("records")
    ]
    return write_metrics(db, rows)


def stored_comparisons(db: Database, *, suite: str = "", scorer: str | None = None):
    """The stored comparisons of ``suite`` (one ``scorer``, or all) as a :func:`mann_whitney_table` frame, with a
    ``scorer`` column."""
    import pandas as pd

    from datamodel.metrics import model_level_values

    records = []
    for model_a, p_value, row_scorer, d in model_level_values(db, COMPARISON_METRIC, suite, scorer):
        records.append({"model_a": model_a, "model_b": d["model_b"], "n_a": d["n_a"], "n_b": d["n_b"],
                        "median_a": d["median_a"], "median_b": d["median_b"], "U": d["U"], "p_value": p_value,
                        "scorer": row_scorer})
    columns = ["model_a", "model_b", "n_a", "n_b", "median_a", "median_b", "U", "p_value", "scorer"]
    return pd.DataFrame(records, columns=columns).sort_values(["scorer", "model_a", "model_b"], ignore_index=True)


# --- the declaration ------------------------------------------------------------------------------------------------


def reward_options(parser: argparse.ArgumentParser) -> None:
    """The reward model's options."""
    parser.add_argument("--reward-model", choices=["imagereward", "clip"], default="imagereward",
                        help="imagereward (optional extra, see judges/metrics/reward.py) or clip (a stand-in)")
    parser.add_argument("--reward-checkpoint", default="ImageReward-v1.0", help="ImageReward name or local .pt file")
    parser.add_argument("--reward-med-config", help="ImageReward med_config.json (local, for offline machines)")
    parser.add_argument("--reward-prompt", choices=PROMPTS, default="text",
                        help="what the reward model reads: the image's prompt (default) or the concept's lemma (the "
                             "taxonomy paper's reward.py; scorer NAME:lemma-prompt)")


def reward_model(context: ScorerContext) -> RewardModel:
    """ImageReward, or the CLIP stand-in (``--reward-model clip``, and always with ``context.tiny``)."""
    options = context.options
    if context.tiny or options.reward_model == "clip":
        return ClipRewardStandIn(clip_encoder(context))
    return ImageRewardModel(options.reward_checkpoint, med_config=options.reward_med_config, device=options.device)


def _score(run: MetricRun, model: RewardModel) -> dict:
    prompt = run.options.reward_prompt
    images = score_rewards(run.db, run.media, model, run.suite, models=run.models, progress=run.progress,
                           prompt=prompt)
    scorer = reward_scorer(model, prompt)
    table = reward_comparisons(run.db, scorer=scorer, suite=run.suite)
    store_comparisons(run.db, table, scorer=scorer, suite=run.suite, version=model.version)
    return {"reward": {"images": images}, "reward_mann_whitney": table}


METRICS.register(Metric(
    name="reward", title="reward-model score per image (ImageReward) and Mann-Whitney U comparisons between models",
    stored=("reward", COMPARISON_METRIC), directions={COMPARISON_METRIC: "none"}, make_scorer=reward_model,
    extra="ImageReward in a separate virtualenv (see judges/metrics/reward.py), or --reward-model clip",
    options=(reward_options, clip_options), score=_score,
))
