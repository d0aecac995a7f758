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

The taxonomy paper's settings (its released ``fid_is.py``; the taxonomy-paper preset sets them):

- ``--fid-is-slices paper``: instead of one pooled value per model, one per model on the full set of each prompt
  variant (subset '', variant ``with_definition`` / ``without_definition``: Tables 7 and 8) and on every subset of
  each variant (Tables 9 and 10); the reference model gets an Inception Score too (the tables list Retrieval), no FID.
- ``--fid-is-dedup-seed 42``: concepts deduplicated by lemma first: for each core lemma, in the order the prompts
  were imported, one of its concepts drawn with Python's ``random.Random(seed)`` (``random.shuffle`` of the lemma's
  concepts, the first kept), as the script does over ``main_bench.csv``; a subset is deduplicated on its own.
- ``--fid-is-input float01``: each image at its own size as a float tensor in [0, 1] (torchvision's ``ToTensor``)
  turned into uint8 as torchmetrics' ``normalize=True`` does (:func:`normalized_uint8`), in batches of 3 (the
  reference images one at a time), so the network resizes them; ``resized`` (default) resizes them to
  ``--image-size`` first, as uint8.
- ``--is-seed 42``: ``torch.manual_seed(seed)`` before each Inception Score (it permutes the images before its 10
  splits). The script seeds once and scores the models in its own order, so its k-th model's split depends on
  the models before it; seeding before each model keeps a model's score independent of the others in the run.
- ``--fid-subset-reference full`` (default): FID's real set for every slice of a variant is the reference model's
  images of that variant's deduplicated full set, as the authors' per-subset script (``fid_is/fid_is_subsets.py``
  in the development repository VityaVitalich/TaxoGen) loads ``real_images_no_duble_tensors.pkl``, the full set
  ``fid_is.py`` saved; only the generated side is the subset's (Table 10). ``subset``: the reference model's images
  of the subset's own deduplicated concepts (a reference that follows the subset, on far fewer images). Either way
  a reference image is the one in the same variant when the reference model has one there, else in the other
  (retrieved images do not depend on the variant).

The script also leaves out the last ``n mod 3`` images of each model (its loop runs ``n // 3`` batches of 3), in
an order it does not fix (``os.listdir``); every image is scored here.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from PIL import Image

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.progress import progress_bar
from judges.metrics.registry import METRICS, Metric, MetricRun, ScorerContext, Skip
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


INPUTS = ("resized", "float01")
SLICES = ("pooled", "paper")
SUBSET_REFERENCES = ("full", "subset")  # a subset's FID real set: its variant's full set (fid_is_subsets.py), or its own
PAPER_BATCH = 3  # BIGT fid_is.py: gen_image_paths[i*3:i*3+3]


def to_float01(image: Image.Image):
    """(3, H, W) float tensor in [0, 1] at the image's own size: torchvision's ``ToTensor`` of an RGB image."""
    import numpy as np
    import torch

    return torch.from_numpy(np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0).permute(2, 0, 1).contiguous()


def normalized_uint8(images):
    """What torchmetrics' ``normalize=True`` feeds its built-in Inception network: ``(imgs * 255).byte()`` of float
    images in [0, 1] (a float just below an integer truncates down). torchmetrics skips that step for a network
    passed in as a module, as the project's are, so it is done here."""
    return (images * 255).byte()


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


def reference_images(db: Database, media: MediaStore, suite: str, *, reference_model: str | None = None,
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


def score_fid_is(db: Database, media: MediaStore, suite: str, *, fid_network=None, is_network=None,
                 scorer: str, scorer_version: str = "", reference_model: str | None = "retrieval",
                 reference_folder: str | Path | None = None, pooled_reference: bool = False,
                 models: Sequence[str] | None = None, image_size: int = 299, batch_size: int = 32,
                 splits: int = 10, progress: bool = False, input_mode: str = "resized",
                 is_seed: int | None = None) -> FidIsReport:
    """FID of each model against the reference set (if ``fid_network``) and IS (if ``is_network``).

    The reference model itself gets no FID. ``pooled_reference``: the reference is every model's images of the suite
    (the offline demo's choice, having no retrieval images; such FIDs only compare models with each other).
    ``input_mode`` and ``is_seed``: see the module docstring.
    """
    if input_mode not in INPUTS:
        raise ValueError(f"unknown FID/IS input {input_mode!r}; choose one of {', '.join(INPUTS)}.")
    normalize = input_mode == "float01"
    batch_size = PAPER_BATCH if normalize else batch_size
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

        def features(metric, images, size=batch_size, **update) -> None:  # ``images`` through the network
            _feed(metric, images, input_mode=input_mode, image_size=image_size, batch_size=size, bar=bar, **update)

        if reference:
            fid = FrechetInceptionDistance(feature=fid_network, reset_real_features=False)
            features(fid, reference, size=1 if normalize else batch_size, real=True)
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
                    with _seeded(is_seed), torch.inference_mode():
                        mean, std = (float(v) for v in score.compute())
                std = None if split_count < 2 or math.isnan(std) else std
                report.inception_score[model] = mean
                metrics.append(MetricRow(model_id, "inception_score", mean, scorer, suite=suite,
                                         scorer_version=scorer_version,
                                         details={"images": len(images), "std": std, "splits": split_count}))
    write_metrics(db, metrics)
    return report


def dedup_by_lemma(items: Sequence[tuple[tuple[str, str], str]], seed: int) -> set[tuple[str, str]]:
    """The items kept when ``items`` ((item, core lemma) in import order) are deduplicated by lemma as the taxonomy
    paper's ``fid_is.py`` does: lemmas in order of first appearance, each lemma's items shuffled with one
    ``random.Random(seed)`` and the first kept."""
    import random

    groups: dict[str, list[tuple[str, str]]] = {}
    for item, lemma in items:
        members = groups.setdefault(lemma, [])
        if item not in members:
            members.append(item)
    rng = random.Random(seed)
    kept = set()
    for members in groups.values():
        rng.shuffle(members)
        kept.add(members[0])
    return kept


def _feed(metric, images: list[Image.Image], *, input_mode: str, image_size: int, batch_size: int, bar,
          **update) -> None:
    """Feed ``images`` through ``metric``'s network: resized uint8 batches, or float [0, 1] images at their own size
    in batches of consecutive images of one size (``normalize=True`` metrics)."""
    import torch

    with torch.inference_mode():
        if input_mode == "resized":
            for chunk in _batches(images, batch_size):
                metric.update(to_uint8_batch(chunk, image_size), **update)
                bar.update(len(chunk))
            return
        start = 0
        while start < len(images):
            size = images[start].size
            end = start + 1
            while end < len(images) and end - start < batch_size and images[end].size == size:
                end += 1
            metric.update(normalized_uint8(torch.stack([to_float01(image) for image in images[start:end]])), **update)
            bar.update(end - start)
            start = end


@contextlib.contextmanager
def _seeded(seed: int | None):
    """``torch.manual_seed(seed)`` for the block, the global random state restored after it; nothing when None."""
    if seed is None:
        yield
        return
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def paper_slices(rows: Sequence[ImageRow]) -> list[tuple[str, str]]:
    """(subset, variant) of every slice the paper's tables give: each variant's full set (subset ''), then each of
    its subsets."""
    slices = []
    for variant in sorted({row.variant for row in rows}):
        slices.append(("", variant))
        slices += [(subset, variant) for subset in sorted({r.subset for r in rows if r.variant == variant})]
    return slices


@dataclass
class SliceReport:
    fid: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (model, subset, variant) -> value
    inception_score: dict[tuple[str, str, str], float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def score_fid_is_slices(db: Database, media: MediaStore, suite: str, *, fid_network=None,
                        is_network=None, scorer: str, scorer_version: str = "", reference_model: str = "retrieval",
                        models: Sequence[str] | None = None, input_mode: str = "float01", image_size: int = 299,
                        dedup_seed: int | None = 42, is_seed: int | None = 42, splits: int = 10,
                        subset_reference: str = "full", progress: bool = False) -> SliceReport:
    """FID and IS per model on every slice of :func:`paper_slices` (see the module docstring), written with the
    slice's ``subset`` and ``variant``; the pooled rows (subset and variant '') are left alone. ``subset_reference``:
    a subset's FID real set is its variant's deduplicated full set (``full``, the authors' script) or the subset's
    own concepts (``subset``)."""
    import torch
    from torchmetrics.image.fid import FrechetInceptionDistance
    from torchmetrics.image.inception import InceptionScore

    if input_mode not in INPUTS:
        raise ValueError(f"unknown FID/IS input {input_mode!r}; choose one of {', '.join(INPUTS)}.")
    if subset_reference not in SUBSET_REFERENCES:
        raise ValueError(f"unknown FID subset reference {subset_reference!r}; choose one of "
                         f"{', '.join(SUBSET_REFERENCES)}.")
    normalize = input_mode == "float01"
    batch = PAPER_BATCH if normalize else 32
    everything = image_rows(db, suite)
    wanted = set(models) | {reference_model} if models else None
    rows = [row for row in everything if wanted is None or row.model in wanted]
    report = SliceReport()
    metrics: list[MetricRow] = []

    def kept_of(subset: str, variant: str) -> tuple[list[ImageRow], set]:
        """The slice's rows and its concepts deduplicated by lemma (all of them without a seed)."""
        in_slice = [row for row in rows if row.variant == variant and (not subset or row.subset == subset)]
        order = [((row.subset, row.item_key), core_lemma_of(row.metadata)) for row in
                 sorted(in_slice, key=lambda row: row.prompt_id)]
        return in_slice, (dedup_by_lemma(order, dedup_seed) if dedup_seed is not None else {item for item, _ in order})

    references: dict[tuple[str, str], Any] = {}  # (variant, subset or '' for the full set) -> FID with its real set
    with progress_bar(len(rows) * 3, f"fid/is slices {suite}", progress=progress) as bar:
        for subset, variant in paper_slices(rows):
            in_slice, kept = kept_of(subset, variant)
            real = kept if subset_reference == "subset" or not subset else kept_of("", variant)[1]
            by_model: dict[str, list[ImageRow]] = {}
            for row in sorted(in_slice, key=lambda row: (row.prompt_id, row.idx)):
                if (row.subset, row.item_key) in kept:
                    by_model.setdefault(row.model, []).append(row)
            label = f"{subset or 'full set'} / {variant or 'no variant'}"
            fid = None
            shared = (variant, subset if real is kept else "")  # the full set's real features serve every subset
            if fid_network is not None and shared in references:
                fid = references[shared]
                if fid is None:
                    report.skipped[f"* {label}"] = report.skipped[f"* full set / {variant or 'no variant'}"]
            elif fid_network is not None:
                reference = _slice_reference(rows, reference_model, real, variant)
                if len(reference) >= 2:
                    fid = FrechetInceptionDistance(feature=fid_network, reset_real_features=False)
                    _feed(fid, [row.load(media) for row in reference], input_mode=input_mode, image_size=image_size,
                          batch_size=1 if normalize else batch, bar=bar, real=True)
                references[shared] = fid
                if fid is None:
                    of = label if real is kept else f"full set / {variant or 'no variant'}"
                    report.skipped[f"* {label}"] = (
                        f"FID needs at least 2 reference images; {reference_model} has {len(reference)} of the "
                        f"{len(real)} concepts of {of}. Import the retrieval images (python -m arena import-images).")
            for model, model_rows in sorted(by_model.items()):
                if len(model_rows) < 2:
                    report.skipped[f"{model} {label}"] = f"{len(model_rows)} image(s); FID and IS need at least 2"
                    continue
                images = [row.load(media) for row in model_rows]
                details = {"images": len(images), "concepts": len(kept), "dedup_seed": dedup_seed,
                           "input": input_mode}
                key = (model, subset, variant)
                common = dict(suite=suite, subset=subset, variant=variant, scorer_version=scorer_version)
                if fid is not None and model != reference_model:
                    fid.reset()
                    _feed(fid, images, input_mode=input_mode, image_size=image_size, batch_size=batch, bar=bar,
                          real=False)
                    with torch.inference_mode():
                        report.fid[key] = float(fid.compute())
                    metrics.append(MetricRow(model_rows[0].model_id, "fid", report.fid[key], scorer, **common,
                                             details={**details, "reference": reference_model,
                                                      "reference_set": "subset" if real is kept and subset else "full",
                                                      "reference_images": int(fid.real_features_num_samples)}))
                if is_network is not None:
                    with warnings.catch_warnings():  # "saves all features" is the point; one split has no std
                        warnings.simplefilter("ignore", UserWarning)
                        score = InceptionScore(feature=is_network, splits=splits)
                        _feed(score, images, input_mode=input_mode, image_size=image_size, batch_size=batch, bar=bar)
                        with _seeded(is_seed), torch.inference_mode():
                            mean, std = (float(v) for v in score.compute())
                    report.inception_score[key] = mean
                    metrics.append(MetricRow(model_rows[0].model_id, "inception_score", mean, scorer, **common,
                                             details={**details, "std": None if math.isnan(std) else std,
                                                      "splits": splits, "is_seed": is_seed}))
    write_metrics(db, metrics)
    return report


def core_lemma_of(metadata: dict) -> str:
    """The concept's lemma as the benchmark file writes it (:func:`judges.metrics.clipscore.core_lemma`)."""
    from judges.metrics.clipscore import core_lemma

    return core_lemma(metadata)


def _slice_reference(rows: Sequence[ImageRow], reference_model: str, kept: set, variant: str) -> list[ImageRow]:
    """One reference image per kept concept: in ``variant`` when the reference model has one there, else its first
    image of the concept in another variant."""
    best: dict[tuple[str, str], ImageRow] = {}
    for row in sorted(rows, key=lambda row: (row.variant != variant, row.prompt_id, row.idx)):
        item = (row.subset, row.item_key)
        if row.model == reference_model and item in kept and item not in best:
            best[item] = row
    return sorted(best.values(), key=lambda row: row.prompt_id)


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
    """The FID reference set's options, and how FID/IS slice and feed the images (the taxonomy paper's settings)."""
    parser.add_argument("--fid-reference", default="retrieval",
                        help="model whose images are the FID reference (default retrieval; * pools all models)")
    parser.add_argument("--fid-reference-folder", help="folder of reference images instead of a model")
    parser.add_argument("--fid-is-slices", choices=SLICES, default="pooled",
                        help="pooled: one FID/IS per model over the suite (default); paper: per variant on the full "
                             "set and on every subset (the taxonomy paper's Tables 7-10)")
    parser.add_argument("--fid-is-input", choices=INPUTS, default="resized",
                        help="resized: images resized to --image-size as uint8 (default); float01: float images in "
                             "[0, 1] at their own size, torchmetrics normalize=True, batches of 3 (the paper's code)")
    parser.add_argument("--fid-subset-reference", choices=SUBSET_REFERENCES, default="full",
                        help="with --fid-is-slices paper, FID's real set on a subset: full, the variant's whole "
                             "deduplicated reference set (default; the paper's fid_is_subsets.py), or subset, the "
                             "reference images of the subset's own concepts")
    parser.add_argument("--fid-is-dedup-seed", type=int,
                        help="with --fid-is-slices paper: one concept per lemma, drawn with this seed (the paper: 42)")
    parser.add_argument("--is-seed", type=int,
                        help="torch seed before each Inception Score's random split (the paper: 42; default unseeded)")


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


def _run_fid_is(run: MetricRun, scorer: FeatureScorer, network: str) -> FidIsReport | SliceReport:
    """:func:`score_fid_is` (or with ``--fid-is-slices paper`` :func:`score_fid_is_slices`) with one network
    (``fid_network`` or ``is_network``) and the run's reference options."""
    options = run.options
    if options.fid_is_slices == "paper":
        if options.fid_reference == "*" or options.fid_reference_folder:
            raise Skip("--fid-is-slices paper takes its reference from a model's images of the same concepts: "
                       "pass --fid-reference MODEL (the paper: retrieval), not * or a folder.")
        version = (f"{scorer.version}; input {options.fid_is_input}; dedup seed {options.fid_is_dedup_seed}; "
                   f"IS seed {options.is_seed}")
        if network == "fid_network":
            version += f"; subset reference {options.fid_subset_reference}"
        return score_fid_is_slices(
            run.db, run.media, run.suite, **{network: scorer.network}, scorer=scorer.name, scorer_version=version,
            reference_model=options.fid_reference, models=run.models, input_mode=options.fid_is_input,
            image_size=scorer.image_size, dedup_seed=options.fid_is_dedup_seed, is_seed=options.is_seed,
            subset_reference=options.fid_subset_reference, progress=run.progress)
    pooled = run.options.fid_reference == "*"
    return score_fid_is(
        run.db, run.media, run.suite, **{network: scorer.network}, scorer=scorer.name,
        scorer_version=scorer.version, reference_model=None if pooled else run.options.fid_reference,
        reference_folder=run.options.fid_reference_folder, pooled_reference=pooled, models=run.models,
        image_size=scorer.image_size, progress=run.progress, input_mode=run.options.fid_is_input,
        is_seed=run.options.is_seed,
    )


def _shown(values: dict) -> dict:
    """Slice keys (model, subset, variant) as one text each, for the printed summary."""
    return {(" / ".join(part or "full set" for part in key) if isinstance(key, tuple) else key): value
            for key, value in values.items()}


def _score_fid(run: MetricRun, scorer: FeatureScorer) -> dict:
    report = _run_fid_is(run, scorer, "fid_network")
    return {"fid": _shown(report.fid), "fid_is_skipped": {**run.summary.get("fid_is_skipped", {}), **report.skipped}}


def _score_is(run: MetricRun, scorer: FeatureScorer) -> dict:
    report = _run_fid_is(run, scorer, "is_network")
    return {"is": _shown(report.inception_score),
            "fid_is_skipped": {**run.summary.get("fid_is_skipped", {}), **report.skipped}}


METRICS.register(Metric(
    name="fid", title="FID of each model against the reference images (--fid-reference)", direction="lower",
    make_scorer=_feature_scorer("2048", dict(num_outputs=16, seed=1)), extra=EXTRA,
    options=(inception_options, reference_options), score=_score_fid,
))
METRICS.register(Metric(
    name="is", title="Inception Score of each model (stored as inception_score)", stored=("inception_score",),
    make_scorer=_feature_scorer("logits_unbiased", dict(num_outputs=10, seed=2, scale=4.0)), extra=EXTRA,
    options=(inception_options, reference_options), score=_score_is,
))
