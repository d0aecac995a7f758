"""FID against a reference image set and Inception Score, per model, with torchmetrics (protocols.md, T1).

The reference set is another model's images for the same suite (the retrieval baseline, imported as a model named
``retrieval`` by default) or a folder of images. Both metrics take their feature network as an argument:

- the real one, :func:`inception_network`, is torchmetrics' InceptionV3 (torch-fidelity's FID port, an optional
  extra: ``pip install torch-fidelity``) whose weights file (``weights-inception-2015-12-05-6726825d.pth``) is a
  local path (``--inception-weights``) or torch-fidelity's download, made only when asked (``--inception-download``);
- tests and the offline demo pass :func:`tiny_feature_network`, a small random conv net, and record it as the
  scorer so its numbers never mix with real FIDs.

Written (model level, subset ''): ``fid`` (lower is better; details: image counts and reference) and
``inception_score`` (details: std over splits).
"""

from __future__ import annotations

import argparse
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import sqlite_utils
from PIL import Image

from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.progress import progress_bar
from judges.metrics.registry import Metric, MetricRun, ScorerContext, register
from judges.selection import ImageRow, SelectionError, image_rows

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")

INCEPTION_WEIGHTS_FILE = "weights-inception-2015-12-05-6726825d.pth"
INCEPTION_WEIGHTS_URL = ("https://github.com/toshas/torch-fidelity/releases/download/v0.2.0/"
                         + INCEPTION_WEIGHTS_FILE)


def cached_inception_weights() -> Path:
    """Where torch-fidelity's own download puts the weights (torch hub's checkpoint folder, ``$TORCH_HOME``)."""
    import torch

    return Path(torch.hub.get_dir()) / "checkpoints" / INCEPTION_WEIGHTS_FILE


def inception_network(feature: str = "2048", weights_path: str | Path | None = None, *, allow_download: bool = False):
    """torchmetrics' InceptionV3 feature extractor: ``"2048"`` pool features for FID, ``"logits_unbiased"`` for IS.

    The weights are ``weights_path`` (``--inception-weights``), else torch-fidelity's download in torch hub's cache
    if present there. Nothing is downloaded unless ``allow_download`` (``--inception-download``): a missing file
    raises FileNotFoundError naming the flags.
    """
    from torchmetrics.utilities.imports import _TORCH_FIDELITY_AVAILABLE

    if not _TORCH_FIDELITY_AVAILABLE:
        raise ModuleNotFoundError(
            "the real Inception network needs torch-fidelity: pip install torch-fidelity==0.4.0 (and, without "
            f"network, pass --inception-weights with a local {INCEPTION_WEIGHTS_FILE})."
        )
    from torchmetrics.image.fid import NoTrainInceptionV3

    if weights_path:
        if not Path(weights_path).is_file():
            raise FileNotFoundError(
                f"Inception weights {weights_path} do not exist; fix --inception-weights (torch-fidelity's "
                f"{INCEPTION_WEIGHTS_FILE}, from {INCEPTION_WEIGHTS_URL})."
            )
        source: str | None = str(weights_path)
    elif cached_inception_weights().is_file():
        source = str(cached_inception_weights())
    elif allow_download:
        source = None  # torch-fidelity downloads into cached_inception_weights()
    else:
        raise FileNotFoundError(
            f"the Inception weights are not on this machine ({cached_inception_weights()}): pass --inception-weights "
            f"/path/to/{INCEPTION_WEIGHTS_FILE} (download it from {INCEPTION_WEIGHTS_URL}), or --inception-download "
            "to let torch-fidelity fetch it."
        )
    return NoTrainInceptionV3(name="inception-v3-compat", features_list=[feature],
                              feature_extractor_weights_path=source)


def tiny_feature_network(num_outputs: int = 16, seed: int = 0, scale: float = 1.0):
    """A small random net (8×8 pooling, one conv, a projection) taking uint8 (N, 3, H, W) images: FID features or
    IS logits in tests and the demo
    (``scale`` sharpens the logits so a random net's class probabilities, hence its IS, vary between images)."""
    import torch
    from torch import nn

    class TinyFeatures(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.AdaptiveAvgPool2d(8), nn.Conv2d(3, 8, 3, padding=1), nn.Tanh(), nn.Flatten(),
                                      nn.Linear(8 * 8 * 8, num_outputs))
            self.num_features = num_outputs

        def forward(self, images):
            return self.body(images.float() / 127.5 - 1.0) * scale

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyFeatures().eval()


def to_uint8_batch(images: Sequence[Image.Image], size: int):
    """(N, 3, size, size) uint8 tensor from PIL images (bilinear resize)."""
    import numpy as np
    import torch

    arrays = [np.asarray(image.convert("RGB").resize((size, size), Image.BILINEAR)) for image in images]
    return torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()


@dataclass
class FidIsReport:
    fid: dict[str, float] = field(default_factory=dict)
    inception_score: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # model -> why


def _batches(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def reference_images(db: sqlite_utils.Database, media: MediaStore, suite: str, *, reference_model: str | None = None,
                     reference_folder: str | Path | None = None, pooled: bool = False) -> list[Image.Image]:
    """The reference set: a folder's images, ``reference_model``'s images of ``suite``, or (``pooled``) all
    models' images of ``suite``."""
    if reference_folder:
        folder = Path(reference_folder)
        files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES) if folder.is_dir() else []
        if not files:
            raise FileNotFoundError(f"{folder}: no reference images (.png, .jpg, .webp) found for FID.")
        return [Image.open(p).convert("RGB") for p in files]
    if pooled:
        return [row.load(media) for row in image_rows(db, suite)]
    try:
        rows = image_rows(db, suite, models=[reference_model]) if reference_model else []
    except SelectionError:  # no such model: no reference images (the caller says how to add them)
        rows = []
    return [row.load(media) for row in rows]


def score_fid_is(db: sqlite_utils.Database, media: MediaStore, suite: str, *, fid_network=None, is_network=None,
                 scorer: str, scorer_version: str = "", reference_model: str | None = "retrieval",
                 reference_folder: str | Path | None = None, pooled_reference: bool = False,
                 models: Sequence[str] | None = None, image_size: int = 299, batch_size: int = 32,
                 splits: int = 10, progress: bool = False) -> FidIsReport:
    """FID of each model against the reference set (if ``fid_network``) and IS (if ``is_network``).

    The reference model itself gets no FID. ``pooled_reference``: the reference is every model's images of the suite
    (the offline demo's choice, having no retrieval images; such FIDs only compare models with each other).
    """
    import torch
    from torchmetrics.image.fid import FrechetInceptionDistance
    from torchmetrics.image.inception import InceptionScore

    report = FidIsReport()
    rows = image_rows(db, suite, models=models)
    by_model: dict[str, list[ImageRow]] = {}
    for row in rows:
        by_model.setdefault(row.model, []).append(row)
    fid = None
    reference_label = (str(reference_folder) if reference_folder else
                       f"all models' {suite} images" if pooled_reference else reference_model or "")
    reference: list[Image.Image] = []
    if fid_network is not None:
        reference = reference_images(db, media, suite, reference_model=reference_model,
                                     reference_folder=reference_folder, pooled=pooled_reference)
        if len(reference) < 2:
            report.skipped["*"] = (f"FID needs at least 2 reference images; {reference_label or 'no reference'} has "
                                   f"{len(reference)} in suite {suite!r}. Import the retrieval images "
                                   "(python -m arena import-images) or pass --fid-reference-folder.")
            reference = []
    scored = {model: model_rows for model, model_rows in sorted(by_model.items())
              if not (model == reference_model and not reference_folder)}
    networks = (fid_network is not None and bool(reference)) + (is_network is not None)
    total = len(reference) + networks * sum(len(r) for r in scored.values() if len(r) >= 2)
    metrics = []
    with progress_bar(total, f"fid/is {suite}", progress=progress) as bar:

        def features(metric, images, **update) -> None:  # feed ``images`` through ``metric``'s network in batches
            with torch.inference_mode():
                for chunk in _batches(images, batch_size):
                    metric.update(to_uint8_batch(chunk, image_size), **update)
                    bar.update(len(chunk))

        if reference:
            fid = FrechetInceptionDistance(feature=fid_network, reset_real_features=False)
            features(fid, reference, real=True)
        for model, model_rows in scored.items():
            model_id = model_rows[0].model_id
            if len(model_rows) < 2:
                report.skipped[model] = f"{len(model_rows)} image(s); FID and IS need at least 2"
                continue
            images = [row.load(media) for row in model_rows]
            if fid is not None:
                fid.reset()
                features(fid, images, real=False)
                with torch.inference_mode():
                    value = float(fid.compute())
                report.fid[model] = value
                metrics.append(MetricRow(model_id, "fid", value, scorer, suite=suite, scorer_version=scorer_version,
                                         details={"images": len(images), "reference": reference_label,
                                                  "reference_images": int(fid.real_features_num_samples)}))
            if is_network is not None:
                split_count = max(1, min(splits, len(images) // 2))
                with warnings.catch_warnings():  # "saves all features" is the point; one split has no std
                    warnings.simplefilter("ignore", UserWarning)
                    score = InceptionScore(feature=is_network, splits=split_count)
                    features(score, images)
                    with torch.inference_mode():
                        mean, std = (float(v) for v in score.compute())
                std = None if split_count < 2 or math.isnan(std) else std
                report.inception_score[model] = mean
                metrics.append(MetricRow(model_id, "inception_score", mean, scorer, suite=suite,
                                         scorer_version=scorer_version,
                                         details={"images": len(images), "std": std, "splits": split_count}))
    write_metrics(db, metrics)
    return report


# --- the declarations -----------------------------------------------------------------------------------------------

EXTRA = f"torch-fidelity==0.4.0 and its Inception weights ({INCEPTION_WEIGHTS_FILE}, --inception-weights)"


@dataclass(frozen=True)
class FeatureScorer:
    """A feature network with the scorer name and version its rows record and the side images are resized to."""

    network: Any
    name: str
    version: str
    image_size: int


def inception_options(parser: argparse.ArgumentParser) -> None:
    """The feature network's options (fid and is share them)."""
    parser.add_argument("--inception-weights",
                        help=f"local {INCEPTION_WEIGHTS_FILE} for FID/IS (needs torch-fidelity)")
    parser.add_argument("--inception-download", action="store_true",
                        help="let torch-fidelity download the Inception weights when no local file is found")
    parser.add_argument("--image-size", type=int, default=299, help="side images are resized to for FID/IS")


def reference_options(parser: argparse.ArgumentParser) -> None:
    """The FID reference set's options."""
    parser.add_argument("--fid-reference", default="retrieval",
                        help="model whose images are the FID reference (default retrieval; * pools all models)")
    parser.add_argument("--fid-reference-folder", help="folder of reference images instead of a model")


def _feature_scorer(feature: str, tiny: dict) -> Any:
    """make_scorer of a metric on ``feature`` of the real InceptionV3, or with ``context.tiny`` a tiny random conv
    net (``tiny``: its :func:`tiny_feature_network` arguments), recorded as ``tiny-random-features``."""

    def make(context: ScorerContext) -> FeatureScorer:
        if context.tiny:
            return FeatureScorer(tiny_feature_network(**tiny), "tiny-random-features", "random conv net, seeds 1 and 2",
                                 64)
        import torchmetrics

        options = context.options
        network = inception_network(feature, options.inception_weights, allow_download=options.inception_download)
        return FeatureScorer(network, "inception-v3", f"torchmetrics {torchmetrics.__version__}; "
                             f"{options.inception_weights or 'torch-fidelity weights'}", options.image_size)

    return make


def _run_fid_is(run: MetricRun, scorer: FeatureScorer, network: str) -> FidIsReport:
    """:func:`score_fid_is` with one network (``fid_network`` or ``is_network``) and the run's reference options."""
    pooled = run.options.fid_reference == "*"
    return score_fid_is(
        run.db, run.media, run.suite, **{network: scorer.network}, scorer=scorer.name,
        scorer_version=scorer.version, reference_model=None if pooled else run.options.fid_reference,
        reference_folder=run.options.fid_reference_folder, pooled_reference=pooled, models=run.models,
        image_size=scorer.image_size, progress=run.progress,
    )


def _score_fid(run: MetricRun, scorer: FeatureScorer) -> dict:
    report = _run_fid_is(run, scorer, "fid_network")
    return {"fid": report.fid, "fid_is_skipped": {**run.summary.get("fid_is_skipped", {}), **report.skipped}}


def _score_is(run: MetricRun, scorer: FeatureScorer) -> dict:
    report = _run_fid_is(run, scorer, "is_network")
    return {"is": report.inception_score,
            "fid_is_skipped": {**run.summary.get("fid_is_skipped", {}), **report.skipped}}


register(Metric(
    name="fid", title="FID of each model against the reference images (--fid-reference)", direction="lower",
    make_scorer=_feature_scorer("2048", dict(num_outputs=16, seed=1)), extra=EXTRA,
    options=(inception_options, reference_options), score=_score_fid,
))
register(Metric(
    name="is", title="Inception Score of each model (stored as inception_score)", stored=("inception_score",),
    make_scorer=_feature_scorer("logits_unbiased", dict(num_outputs=10, seed=2, scale=4.0)), extra=EXTRA,
    options=(inception_options, reference_options), score=_score_is,
))
