"""CLIP similarities with open_clip: prompt alignment for every suite, and the taxonomy metrics of T1.

With C(·) a CLIP embedding and sim the cosine (protocols.md, T1), for a concept v depicted by image x, its
hypernyms A(v) and cohyponyms N(v) (the other hyponyms of v's hypernyms)::

    clip_lemma(v, x)       = sim(C(v), C(x))
    clip_hypernym(v, x)    = mean_{a in A(v)} sim(C(a), C(x))
    clip_cohyponym(v, x)   = mean_{n in N(v)} sim(C(n), C(x))
    clip_specificity(v, x) = clip_lemma / clip_cohyponym

and for every image ``clip_score`` = sim(C(prompt text), C(x)) (the raw cosine, not CLIPScore's 2.5·max(cos, 0)).
Concepts are the lemma texts (``cigar_lighter.n.01`` → "cigar lighter") of the prompt metadata's synset ids.

Every distinct text is encoded once per :class:`ClipEncoder` (cached), images are encoded in batches once each:
``counts`` reports these against the naive one-encoder-call-per-(image, text) count.

The model is the benchmark's ViT-B-32 by default. ``pretrained`` is an open_clip tag (downloads on machines with
network) or a local checkpoint file; ``model="local-dir:/folder"`` loads an open_clip folder (open_clip_config.json
+ weights), which is how the tiny random model of the tests and the demo is loaded (:func:`build_tiny_clip`).
"""

from __future__ import annotations

import json
import argparse
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

from PIL import Image

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, scored_image_ids, write_metrics
from judges.metrics.registry import METRICS, Metric, MetricRun, ScorerContext
from judges.selection import ImageRow, image_rows

TAXONOMY_METRICS = ("clip_lemma", "clip_hypernym", "clip_cohyponym", "clip_specificity")


def tiny_clip_config() -> dict:
    """A tiny open_clip ViT config with CLIP's real vocabulary (49,408 tokens, context 77)."""
    return {
        "embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "head_width": 16, "patch_size": 8},
        "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
    }


def lemma_text(synset_or_lemma: str) -> str:
    """'cigar_lighter.n.01' → 'cigar lighter'; a plain lemma is returned with underscores as spaces."""
    parts = synset_or_lemma.rsplit(".", 2)
    word = parts[0] if len(parts) == 3 and parts[1] in ("n", "v", "a", "r", "s") else synset_or_lemma
    return word.replace("_", " ").strip()


@dataclass
class EncoderCounts:
    texts_encoded: int = 0  # distinct texts sent through the text tower
    text_batches: int = 0  # text-tower forward calls
    images_encoded: int = 0
    image_batches: int = 0
    text_lookups: int = 0  # (image, text) pairs scored: what a naive scorer would encode one by one

    def summary(self) -> str:
        ours = self.texts_encoded + self.images_encoded
        return (f"encoded {self.texts_encoded} distinct texts in {self.text_batches} batches and "
                f"{self.images_encoded} images in {self.image_batches} batches: {ours} encoder inputs "
                f"vs {2 * self.text_lookups} for one text and one image encoding per (image, text) pair "
                f"({self.text_lookups} pairs)")


class ClipEncoder:
    """An open_clip model with its preprocessing and tokenizer; normalised embeddings, texts cached by string."""

    def __init__(self, model, preprocess: Callable, tokenizer: Callable, *, name: str, version: str,
                 device: str = "cpu", batch_size: int = 32):
        self.model = model.eval().to(device)
        self.preprocess = preprocess
        self.tokenizer = tokenizer
        self.name = name  # scorer name stored with each metric row
        self.version = version
        self.device = device
        self.batch_size = batch_size
        self.counts = EncoderCounts()
        self._texts: dict[str, object] = {}
        self._images: dict[str, object] = {}

    def encode_texts(self, texts: Sequence[str]):
        """(len(texts), d) unit vectors; only texts never seen by this encoder go through the model."""
        import torch

        new = [t for t in dict.fromkeys(texts) if t not in self._texts]
        for start in range(0, len(new), self.batch_size):
            chunk = new[start : start + self.batch_size]
            with torch.inference_mode():
                features = self.model.encode_text(self.tokenizer(chunk).to(self.device)).float()
            features = torch.nn.functional.normalize(features, dim=-1).cpu()
            self._texts.update(zip(chunk, features))
            self.counts.texts_encoded += len(chunk)
            self.counts.text_batches += 1
        if not texts:
            return torch.zeros((0, 0))
        return torch.stack([self._texts[t] for t in texts])

    def encode_images(self, images: Sequence[Image.Image]):
        """(len(images), d) unit vectors, in batches of ``batch_size``."""
        import torch

        parts = []
        for start in range(0, len(images), self.batch_size):
            chunk = images[start : start + self.batch_size]
            pixels = torch.stack([self.preprocess(image) for image in chunk]).to(self.device)
            with torch.inference_mode():
                features = self.model.encode_image(pixels).float()
            parts.append(torch.nn.functional.normalize(features, dim=-1).cpu())
            self.counts.images_encoded += len(chunk)
            self.counts.image_batches += 1
        return torch.cat(parts) if parts else torch.zeros((0, 0))

    def encode_stored(self, media: MediaStore, rows: Sequence[ImageRow]):
        """Embeddings of stored images (``image_rows`` rows), each file encoded once per encoder (cached by hash)."""
        import torch

        new = list({row.media_hash: row for row in rows if row.media_hash not in self._images}.values())
        for start in range(0, len(new), self.batch_size):
            chunk = new[start : start + self.batch_size]
            vectors = self.encode_images([row.load(media) for row in chunk])
            self._images.update(zip((row.media_hash for row in chunk), vectors))
        if not rows:
            return torch.zeros((0, 0))
        return torch.stack([self._images[row.media_hash] for row in rows])


def load_clip(model: str = "ViT-B-32", pretrained: str | None = "openai", *, device: str = "cpu",
              batch_size: int = 32) -> ClipEncoder:
    """An open_clip model: ``model`` a built-in architecture (with ``pretrained`` a tag or a checkpoint file), or
    ``local-dir:/folder``. The scorer name records both, e.g. ``open_clip:ViT-B-32:openai``."""
    import open_clip

    if model.startswith("local-dir:") and not Path(model.removeprefix("local-dir:")).is_dir():
        raise FileNotFoundError(f"{model}: no such open_clip folder (open_clip_config.json + weights).")
    local = model.startswith(("local-dir:", "hf-hub:"))
    if pretrained and not local and Path(pretrained).suffix and not Path(pretrained).exists():
        raise FileNotFoundError(f"CLIP weights file {pretrained} does not exist. Set --clip-pretrained to a local "
                                "checkpoint or to an open_clip tag such as 'openai' on a machine with network.")
    try:
        clip, _, preprocess = open_clip.create_model_and_transforms(
            model, pretrained=None if local else pretrained, device=device)
    except RuntimeError as error:
        raise RuntimeError(f"{error}. Without network, point --clip-pretrained at a local {model} checkpoint "
                           "(e.g. open_clip_pytorch_model.bin) or use --clip-model local-dir:/folder.") from None
    source = pretrained if pretrained and not local else ""
    label = Path(source).name if source and Path(source).suffix else source
    folder = model.removeprefix("local-dir:").rstrip("/").rsplit("/", 1)[-1]
    name = f"open_clip:{folder if model.startswith('local-dir:') else model}"
    name += f":{label}" if label else ""
    version = f"open_clip {open_clip.__version__}; {model}" + (f"; {source}" if source else "")
    return ClipEncoder(clip, preprocess, open_clip.get_tokenizer(model), name=name, version=version, device=device,
                       batch_size=batch_size)


def build_tiny_clip(folder: str | Path, seed: int = 0) -> Path:
    """A tiny random open_clip model (CLIP's real tokenizer and vocabulary) saved as a ``local-dir:`` folder."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    if (folder / "open_clip_config.json").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = open_clip.CLIP(**tiny_clip_config())
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    config = {"model_cfg": tiny_clip_config(), "preprocess_cfg": {"mean": [0.48145466, 0.4578275, 0.40821073],
                                                                "std": [0.26862954, 0.26130258, 0.27577711]}}
    (folder / "open_clip_config.json").write_text(json.dumps(config, indent=1))
    return folder


def concept_texts(metadata: dict) -> tuple[str, list[str], list[str]] | None:
    """(lemma, hypernym lemmas, cohyponym lemmas) of a taxonomy prompt's metadata, or None without a lemma."""
    lemma = metadata.get("lemma") or (lemma_text(metadata["synset"]) if metadata.get("synset") else "")
    if not lemma:
        return None
    hypernyms = [lemma_text(h) for h in metadata.get("hypernyms", []) if h]
    cohyponyms = [lemma_text(c) for c in metadata.get("cohyponyms", []) if c]
    return lemma_text(lemma), hypernyms, cohyponyms


def texts_for(text: str, metadata: dict) -> list[str]:
    """The texts one image is compared with: its prompt, then (taxonomy) lemma, hypernyms, cohyponyms."""
    concept = concept_texts(metadata)
    return [text] + ([concept[0], *concept[1], *concept[2]] if concept else [])


def similarity_metrics(image_vector, encoder: ClipEncoder, text: str, metadata: dict) -> dict[str, float | None]:
    """The per-image CLIP metrics for one image embedding (see the module docstring)."""
    texts = texts_for(text, metadata)
    sims = (encoder.encode_texts(texts) @ image_vector).tolist()
    encoder.counts.text_lookups += len(texts)
    values: dict[str, float | None] = {"clip_score": sims[0]}
    concept = concept_texts(metadata)
    if concept:
        n_hyper = len(concept[1])
        lemma_sim = sims[1]
        hyper = sims[2 : 2 + n_hyper]
        cohypo = sims[2 + n_hyper :]
        cohyponym = sum(cohypo) / len(cohypo) if cohypo else None
        values.update({
            "clip_lemma": lemma_sim,
            "clip_hypernym": sum(hyper) / len(hyper) if hyper else None,
            "clip_cohyponym": cohyponym,
            "clip_specificity": lemma_sim / cohyponym if cohyponym else None,
        })
    return values


@dataclass
class ClipReport:
    images: int = 0
    skipped: int = 0
    rows: int = 0
    counts: EncoderCounts | None = None

    def as_dict(self) -> dict:
        return {**asdict(self), "counts": asdict(self.counts) if self.counts else None}


def score_clip(db: Database, media: MediaStore, encoder: ClipEncoder, suite: str, *,
               models: Sequence[str] | None = None, skip_existing: bool = True, progress: bool = False) -> ClipReport:
    """Write ``clip_score`` for every image of ``suite`` and the taxonomy metrics where the prompt has a concept."""
    from judges.metrics.progress import progress_bar

    rows = image_rows(db, suite, models=models)
    done = scored_image_ids(db, "clip_score", encoder.name) if skip_existing else set()
    todo = [row for row in rows if row.image_id not in done]
    report = ClipReport(images=len(todo), skipped=len(rows) - len(todo), counts=encoder.counts)
    encoder.encode_texts([t for row in todo for t in texts_for(row.text, row.metadata)])  # each once
    with progress_bar(len(todo), f"clip {suite}", progress=progress) as bar:
        for start in range(0, len(todo), encoder.batch_size):
            chunk = todo[start : start + encoder.batch_size]
            vectors = encoder.encode_stored(media, chunk)
            metrics = []
            for row, vector in zip(chunk, vectors):
                for name, value in similarity_metrics(vector, encoder, row.text, row.metadata).items():
                    metrics.append(MetricRow(row.model_id, name, value, encoder.name, image_id=row.image_id,
                                             suite=suite, subset=row.subset, scorer_version=encoder.version))
            report.rows += write_metrics(db, metrics)
            bar.update(len(chunk))
    return report


# --- the declaration ------------------------------------------------------------------------------------------------


def clip_options(parser: argparse.ArgumentParser) -> None:
    """The CLIP model's options (clip, commonsense and the reward stand-in share them)."""
    parser.add_argument("--clip-model", default="ViT-B-32", help="open_clip architecture or local-dir:/folder")
    parser.add_argument("--clip-pretrained", default="openai", help="open_clip tag or a local checkpoint file")


def clip_encoder(context: ScorerContext) -> ClipEncoder:
    """The run's one CLIP encoder, shared by every metric that asks for it: ``--clip-model`` / ``--clip-pretrained``,
    or with ``context.tiny`` a tiny random open_clip model built in the cache (scorer ``open_clip:open-clip-tiny``)
    unless ``--clip-model`` names a ``local-dir:`` folder (the offline demo's trained model, :mod:`.demo_clip`)."""
    options = context.options

    def make() -> ClipEncoder:
        if context.tiny and not options.clip_model.startswith("local-dir:"):
            folder = build_tiny_clip(context.tiny_dir("open-clip-tiny"))
            return load_clip(f"local-dir:{folder}", None, device=options.device, batch_size=options.batch_size)
        return load_clip(options.clip_model, options.clip_pretrained, device=options.device,
                         batch_size=options.batch_size)

    return context.shared("clip", make)


def encoder_calls(run: MetricRun, encoder, *, start: bool = False) -> dict:
    """The ``clip_encoder_calls`` summary: what ``encoder`` encoded since the first CLIP metric of ``run`` started
    (call with ``start=True`` before scoring); empty when it scored no (image, text) pair."""
    key = ("clip_encoder_counts", id(encoder))
    if start:
        run.state.setdefault(key, replace(encoder.counts))
        return {}
    before, now = run.state[key], encoder.counts
    if now.text_lookups <= before.text_lookups:
        return {}
    return {"clip_encoder_calls": EncoderCounts(**{
        name: getattr(now, name) - getattr(before, name) for name in vars(now)}).summary()}


def _score(run: MetricRun, encoder: ClipEncoder) -> dict:
    encoder_calls(run, encoder, start=True)
    report = score_clip(run.db, run.media, encoder, run.suite, models=run.models, progress=run.progress)
    return {"clip": {"images": report.images, "skipped": report.skipped, "rows": report.rows},
            **encoder_calls(run, encoder)}


METRICS.register(Metric(
    name="clip", title="CLIP similarities (T1): clip_score for every image; clip_lemma, clip_hypernym, "
    "clip_cohyponym, clip_specificity for taxonomy concepts; on the commonsense suite also the commonsense metric",
    stored=("clip_score", *TAXONOMY_METRICS), directions={"clip_cohyponym": "none"}, make_scorer=clip_encoder,
    options=(clip_options,), score=_score, companions={"commonsense": ("commonsense",)},
))
