"""The taxonomy metrics as the taxonomy paper computed them: Hessel et al.'s CLIPScore with the authors' texts.

For an image x of concept v with hypernyms A(v) and cohyponyms N(v) (paper §4.2, Appendix D; protocols.md T1; the
released ``clipscore.py``, which scores through Hessel et al.'s ``get_clip_score``)::

    CLIPScore(t, x)       = 2.5 · max(cos(C(prefix + t), C(x)), 0)        Hessel et al. (2021), eq. 1, w = 2.5
    clipscore_lemma       = CLIPScore("an image of " + core_lemma, x)                       eq. 1, Table 12
    clipscore_hypernym    = mean_{a in A(v)} CLIPScore("an image of " + name(a), x)          eq. 2, Table 11
    clipscore_cohyponym   = mean_{n in N(v)} CLIPScore("an image of " + name(n), x)          eq. 3, Table 15
    clipscore_specificity = clipscore_lemma / clipscore_cohyponym                        App. D.3, Tables 13-14

where ``name`` is a synset id before its first dot (``coffee.n.01`` → ``coffee``, underscores kept, as the code's
``i.split('.')[0]``), ``core_lemma`` the lemma as the benchmark file writes it (``cigar_lighter``: the prompt
metadata's ``core_lemma`` when imported from ``main_bench.csv``; for a concept built from a WordNet synset its
lemma with the underscores WordNet writes; otherwise the lemma as given), and ``prefix`` the text Hessel's caption
loader puts before every caption, ``"A photo depicts "`` (``--clipscore-caption-prefix``; empty: the texts alone).
That 2.5 scale is why the paper's CLIP tables read 0.55–0.76, and why these are new metric names beside the raw
cosines of :mod:`judges.metrics.clip_scores` (``clip_lemma``, ...), which stay as they are.

Each image row keeps, in its details, the lists of hypernym and cohyponym scores (as the authors' code keeps them).
A concept without hypernyms (or cohyponyms) gets no hypernym (cohyponym, specificity) value, and a cohyponym mean of
0 no specificity. The model is the shared CLIP encoder (``--clip-model`` / ``--clip-pretrained``; the paper's
OpenAI ViT-B/32 is ``ViT-B-32`` / ``openai``, or a local checkpoint file offline).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Sequence

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, scored_image_ids, write_metrics
from judges.metrics.clip_scores import ClipEncoder, clip_encoder, clip_options, encoder_calls
from judges.metrics.registry import METRICS, Metric, MetricRun
from judges.selection import image_rows

WEIGHT = 2.5  # Hessel et al.'s w
CAPTION_PREFIX = "A photo depicts "  # Hessel et al.'s caption loader (CLIPCapDataset's default prefix)
TEXT = "an image of "  # BIGT clipscore.py
NAMES = ("clipscore_lemma", "clipscore_hypernym", "clipscore_cohyponym", "clipscore_specificity")


def clipscore(cosine: float, weight: float = WEIGHT) -> float:
    """Hessel et al.'s CLIPScore of one (image, text) cosine: ``weight · max(cosine, 0)``."""
    return weight * max(float(cosine), 0.0)


def synset_name(synset_id: str) -> str:
    """A synset id's text as the authors' code takes it: everything before the first dot (``coffee.n.01`` →
    ``coffee``; ``working_dog.n.01`` → ``working_dog``)."""
    return synset_id.split(".")[0]


def core_lemma(metadata: dict) -> str:
    """The concept's lemma as the benchmark file writes it (see the module docstring); '' without a concept."""
    if metadata.get("core_lemma"):
        return str(metadata["core_lemma"])
    lemma = str(metadata.get("lemma") or "")
    return lemma.replace(" ", "_") if metadata.get("synset") else lemma


@dataclass(frozen=True)
class ConceptTexts:
    lemma: str
    hypernyms: tuple[str, ...]
    cohyponyms: tuple[str, ...]

    def all(self) -> list[str]:
        return [self.lemma, *self.hypernyms, *self.cohyponyms]


def concept_texts(metadata: dict, prefix: str = CAPTION_PREFIX) -> ConceptTexts | None:
    """The texts one image of a taxonomy concept is scored against, prefix included; None without a concept."""
    lemma = core_lemma(metadata)
    if not lemma:
        return None
    return ConceptTexts(prefix + TEXT + lemma,
                        tuple(prefix + TEXT + synset_name(h) for h in metadata.get("hypernyms", []) if h),
                        tuple(prefix + TEXT + synset_name(c) for c in metadata.get("cohyponyms", []) if c))


def scores_for(image_vector, encoder: ClipEncoder, texts: ConceptTexts) -> tuple[dict[str, float | None], dict]:
    """({stored name: value}, details with the per-text lists) of one image embedding."""
    cosines = (encoder.encode_texts(texts.all()) @ image_vector).tolist()
    encoder.counts.text_lookups += len(cosines)
    scores = [clipscore(c) for c in cosines]
    lemma, rest = scores[0], scores[1:]
    hypernyms, cohyponyms = rest[: len(texts.hypernyms)], rest[len(texts.hypernyms):]
    hypernym = sum(hypernyms) / len(hypernyms) if hypernyms else None
    cohyponym = sum(cohyponyms) / len(cohyponyms) if cohyponyms else None
    values = {"clipscore_lemma": lemma, "clipscore_hypernym": hypernym, "clipscore_cohyponym": cohyponym,
              "clipscore_specificity": lemma / cohyponym if cohyponym else None}
    return values, {"hypernyms": hypernyms, "cohyponyms": cohyponyms}


def scorer_name(encoder: ClipEncoder, prefix: str) -> str:
    """The encoder's name, with the caption prefix when it is not Hessel's (so rows of two prefixes never mix)."""
    return encoder.name if prefix == CAPTION_PREFIX else f"{encoder.name} [prefix {prefix.strip() or 'none'!r}]"


def score_clipscore(db: Database, media: MediaStore, encoder: ClipEncoder, suite: str, *,
                    models: Sequence[str] | None = None, prefix: str = CAPTION_PREFIX, skip_existing: bool = True,
                    progress: bool = False) -> dict:
    """Write the four CLIPScore metrics for every image of ``suite`` whose prompt names a concept; return counts."""
    from judges.metrics.progress import progress_bar

    scorer = scorer_name(encoder, prefix)
    version = f"{encoder.version}; CLIPScore w={WEIGHT}; caption prefix {prefix!r}"
    rows = [(row, texts) for row in image_rows(db, suite, models=models)
            if (texts := concept_texts(row.metadata, prefix)) is not None]
    done = scored_image_ids(db, "clipscore_lemma", scorer) if skip_existing else set()
    todo = [(row, texts) for row, texts in rows if row.image_id not in done]
    encoder.encode_texts([text for _, texts in todo for text in texts.all()])  # each distinct text once
    written = 0
    with progress_bar(len(todo), f"clipscore {suite}", progress=progress) as bar:
        for start in range(0, len(todo), encoder.batch_size):
            chunk = todo[start : start + encoder.batch_size]
            vectors = encoder.encode_stored(media, [row for row, _ in chunk])
            metrics = []
            for (row, texts), vector in zip(chunk, vectors):
                values, details = scores_for(vector, encoder, texts)
                for name, value in values.items():
                    metrics.append(MetricRow(row.model_id, name, value, scorer, image_id=row.image_id, suite=suite,
                                             subset=row.subset, scorer_version=version,
                                             details=details if name == "clipscore_lemma" else {}))
            written += write_metrics(db, metrics)
            bar.update(len(chunk))
    return {"images": len(todo), "skipped": len(rows) - len(todo), "rows": written, "scorer": scorer}


def clipscore_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clipscore-caption-prefix", default=CAPTION_PREFIX,
                        help=f"text before every CLIPScore caption (default {CAPTION_PREFIX!r}, Hessel et al.'s "
                             "caption loader, which the taxonomy paper's code used; '' for the texts alone)")


def _score(run: MetricRun, encoder: ClipEncoder) -> dict:
    encoder_calls(run, encoder, start=True)
    report = score_clipscore(run.db, run.media, encoder, run.suite, models=run.models,
                             prefix=run.options.clipscore_caption_prefix, progress=run.progress)
    return {"clipscore": report, **encoder_calls(run, encoder)}


METRICS.register(Metric(
    name="clipscore", title="the taxonomy paper's CLIP metrics (Tables 11-15): CLIPScore 2.5*max(cos, 0) of the "
    "lemma, hypernym and cohyponym texts and the specificity, as clipscore_lemma, clipscore_hypernym, "
    "clipscore_cohyponym, clipscore_specificity",
    stored=NAMES, directions={"clipscore_cohyponym": "none"}, make_scorer=clip_encoder,
    options=(clip_options, clipscore_options), score=_score, default=False,
))
