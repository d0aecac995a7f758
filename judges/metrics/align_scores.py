"""The ALIGN score of an image with its own prompt: the consistency paper's v_ij (protocols.md, T5).

For image I generated from prompt wording L (Hollinger, §2, eq. 1; ALIGN: Jia et al. 2021, as in Saxon et al.'s
T2IScoreScore)::

    align_score(I, L) = logits_per_image(I, L) = cos(f(I), g(L)) / τ

with f the EfficientNet image tower's pooled output, g the BERT text tower's [CLS] state through the text
projection, and τ the model's learned temperature: exactly what transformers' ``AlignModel`` returns as
``logits_per_image`` for one image and one text, the authors' ``ALIGNScore.calculate_score`` (``AlignProcessor``
with ``padding=True``, ``kakaobrain/align-base``). Images and texts are encoded in batches here (a text's [CLS] state
does not depend on the padding of the others: the attention mask hides it), each distinct text once.

Written per image: ``align_score`` (scorer ``align:<model>``). The consistency metric takes its spreads with
``--consistency-source align_score`` (:mod:`judges.metrics.consistency`).

``--align-model`` is a hub id (downloaded on machines with network) or a local folder in the ``save_pretrained``
layout (model and processor); in tests and the offline demo a tiny random ALIGN built from a config
(:func:`build_tiny_align`, scorer ``align:align-tiny``) goes through the same ``from_pretrained``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, scored_image_ids, write_metrics
from judges.metrics.registry import METRICS, Metric, MetricRun, ScorerContext
from judges.selection import image_rows

DEFAULT_MODEL = "kakaobrain/align-base"
TINY_NAME = "align-tiny"


class AlignScorer:
    """An ALIGN model and its processor; scores (image, text) pairs as ``logits_per_image``."""

    def __init__(self, model, processor, *, name: str, version: str, device: str = "cpu", batch_size: int = 32):
        self.model = model.eval().to(device)
        self.processor = processor
        self.name = name  # scorer name stored with each metric row
        self.version = version
        self.device = device
        self.batch_size = batch_size
        self._texts: dict[str, object] = {}

    def _normalised(self, features):
        import torch

        return torch.nn.functional.normalize(features.float(), dim=-1).cpu()

    def encode_texts(self, texts: Sequence[str]):
        """(len(texts), d) unit vectors g(L) / |g(L)|; each distinct text through the model once."""
        import torch

        new = [t for t in dict.fromkeys(texts) if t not in self._texts]
        for start in range(0, len(new), self.batch_size):
            chunk = new[start : start + self.batch_size]
            inputs = self.processor(text=chunk, return_tensors="pt", padding=True).to(self.device)
            with torch.inference_mode():
                features = self.model.get_text_features(**inputs).pooler_output
            self._texts.update(zip(chunk, self._normalised(features)))
        return torch.stack([self._texts[t] for t in texts])

    def encode_images(self, images):
        """(len(images), d) unit vectors f(I) / |f(I)|."""
        import torch

        inputs = self.processor(images=list(images), return_tensors="pt").to(self.device)
        with torch.inference_mode():
            features = self.model.get_image_features(pixel_values=inputs["pixel_values"]).pooler_output
        return self._normalised(features)

    def scores(self, images, texts: Sequence[str]) -> list[float]:
        """logits_per_image of each (image, text) pair, in order."""
        image_vectors, text_vectors = self.encode_images(images), self.encode_texts(texts)
        temperature = float(self.model.temperature.detach().cpu())
        return ((image_vectors * text_vectors).sum(dim=-1) / temperature).tolist()


def load_align(model: str = DEFAULT_MODEL, *, device: str = "cpu", batch_size: int = 32) -> AlignScorer:
    """``AlignModel`` and ``AlignProcessor`` from a hub id or a local folder; a missing download says what to do."""
    import transformers
    from transformers import AlignModel, AlignProcessor

    try:
        align = AlignModel.from_pretrained(model)
        processor = AlignProcessor.from_pretrained(model)
    except OSError as error:
        raise OSError(
            f"ALIGN model {model!r} could not be loaded ({' '.join(str(error).split())[:200]}). Without network, "
            f"download it where there is one (hf download {DEFAULT_MODEL} --local-dir FOLDER) and pass "
            "--align-model FOLDER."
        ) from None
    label = Path(model).name if Path(model).is_dir() else model
    return AlignScorer(align, processor, name=f"align:{label}",
                       version=f"transformers {transformers.__version__}; {model}", device=device,
                       batch_size=batch_size)


def tiny_align_configs():
    """(AlignConfig, image size) of a tiny ALIGN: a two-block EfficientNet (24 channels out) and a two-layer BERT
    (width 32) on the project's WordPiece vocabulary, projected to 24."""
    from transformers import AlignConfig, AlignTextConfig, AlignVisionConfig

    from generators.tiny import make_wordpiece_tokenizer

    tokenizer = make_wordpiece_tokenizer()
    vision = AlignVisionConfig(image_size=32, kernel_sizes=[3, 3], in_channels=[32, 16], out_channels=[16, 24],
                               hidden_dim=64, strides=[1, 2], num_block_repeats=[1, 1], expand_ratios=[1, 6],
                               width_coefficient=1.0, depth_coefficient=1.0, depthwise_padding=[])
    text = AlignTextConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=37, max_position_embeddings=77, pad_token_id=tokenizer.pad_token_id)
    return AlignConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=24), tokenizer


def build_tiny_align(folder: str | Path, seed: int = 0) -> Path:
    """A tiny random-weight ALIGN (model and processor) saved with ``save_pretrained`` into ``folder``, once."""
    import torch
    from transformers import AlignModel, AlignProcessor, EfficientNetImageProcessor

    folder = Path(folder)
    if (folder / "config.json").exists() and (folder / "processor_config.json").exists():
        return folder
    config, tokenizer = tiny_align_configs()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AlignModel(config)
    processor = AlignProcessor(image_processor=EfficientNetImageProcessor(size={"height": 32, "width": 32},
                                                                          do_center_crop=False),
                               tokenizer=tokenizer)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


@dataclass
class AlignReport:
    images: int = 0
    skipped: int = 0
    rows: int = 0


def score_align(db: Database, media: MediaStore, scorer: AlignScorer, suite: str, *,
                models: Sequence[str] | None = None, skip_existing: bool = True,
                progress: bool = False) -> AlignReport:
    """Write ``align_score`` for every image of ``suite`` with its own prompt text."""
    from judges.metrics.progress import progress_bar

    rows = image_rows(db, suite, models=models)
    done = scored_image_ids(db, "align_score", scorer.name) if skip_existing else set()
    todo = [row for row in rows if row.image_id not in done]
    report = AlignReport(images=len(todo), skipped=len(rows) - len(todo))
    with progress_bar(len(todo), f"align {suite}", progress=progress) as bar:
        for start in range(0, len(todo), scorer.batch_size):
            chunk = todo[start : start + scorer.batch_size]
            values = scorer.scores([row.load(media) for row in chunk], [row.text for row in chunk])
            report.rows += write_metrics(db, [
                MetricRow(row.model_id, "align_score", value, scorer.name, image_id=row.image_id, suite=suite,
                          subset=row.subset, scorer_version=scorer.version) for row, value in zip(chunk, values)])
            bar.update(len(chunk))
    return report


# --- the declaration ------------------------------------------------------------------------------------------------


def align_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--align-model", default=DEFAULT_MODEL,
                        help=f"ALIGN model: a hub id or a save_pretrained folder (default {DEFAULT_MODEL})")


def align_scorer(context: ScorerContext) -> AlignScorer:
    """The real ALIGN of ``--align-model``, or with ``context.tiny`` the tiny random one built in the cache."""
    options = context.options
    if context.tiny:
        folder = build_tiny_align(context.tiny_dir(TINY_NAME))
        return load_align(str(folder), device=options.device, batch_size=options.batch_size)
    return load_align(options.align_model, device=options.device, batch_size=options.batch_size)


def _score(run: MetricRun, scorer: AlignScorer) -> dict:
    report = score_align(run.db, run.media, scorer, run.suite, models=run.models, progress=run.progress)
    return {"align": {"images": report.images, "skipped": report.skipped, "rows": report.rows}}


METRICS.register(Metric(
    name="align", title="ALIGN score of each image with its own prompt (logits_per_image; T5's v_ij): align_score",
    stored=("align_score",), make_scorer=align_scorer, options=(align_options,), score=_score, default=False,
))
