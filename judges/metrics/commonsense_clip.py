"""The Commonsense-T2I CLIP evaluator (protocols.md, T2).

An item has prompts P1, P2 (roles ``p1``, ``p2``, one ``item_key``) and expected descriptions D1, D2. With the CLIP
evaluator an image fits exactly one description: fit(I, D1) = 1 and fit(I, D2) = 0 iff cos(I, D1) > cos(I, D2),
and vice versa (a tie fits neither). The item scores 1 iff

    fit(I1, D1) + fit(I2, D2) − fit(I1, D2) − fit(I2, D1) = 2,

averaged over the generations (image index ``idx`` k of P1 pairs with index k of P2); accuracy = mean over items.

Written: ``commonsense_clip_fit`` per image (1 if the image is closer to its own description than to the partner's;
details hold both cosines) and ``commonsense_clip_accuracy`` per model (overall, subset '', and per category).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.clip_scores import ClipEncoder, clip_encoder, clip_options, encoder_calls
from judges.metrics.registry import METRICS, Metric, MetricRun
from judges.selection import ImageRow, image_rows

ROLES = ("p1", "p2")
PROMPT_SIMILARITY = "commonsense_clip_prompt_similarity"  # Fig. 5: cos of the CLIP text embeddings of P1 and P2


def fit(cos_own: float, cos_other: float) -> int:
    """1 if the image is closer to this description than to the other, else 0 (ties fit neither)."""
    return int(cos_own > cos_other)


def item_score(cos_i1_d1: float, cos_i1_d2: float, cos_i2_d1: float, cos_i2_d2: float) -> int:
    """1 iff fit(I1,D1) + fit(I2,D2) − fit(I1,D2) − fit(I2,D1) = 2 under the CLIP evaluator."""
    total = (fit(cos_i1_d1, cos_i1_d2) + fit(cos_i2_d2, cos_i2_d1)
             - fit(cos_i1_d2, cos_i1_d1) - fit(cos_i2_d1, cos_i2_d2))
    return int(total == 2)


@dataclass
class CommonsenseReport:
    images: int = 0
    items: dict[str, int] | None = None  # per model: items with both prompts' images
    incomplete: int = 0  # (model, item, idx) with only one of the two images
    accuracy: dict[str, float] | None = None


def jpeg_views(media: MediaStore, rows: Sequence[ImageRow], quality: int) -> list:
    """The images of ``rows`` as the authors' evaluate.py opened them: the JPEG their generate_images.py saved
    (Pillow, ``quality``; a stored JPEG as it is), decoded to RGB."""
    import io

    from PIL import Image

    views = []
    for row in rows:
        with Image.open(io.BytesIO(row.input(media).as_jpeg(quality).read())) as image:
            views.append(image.convert("RGB"))
    return views


def score_commonsense(db: Database, media: MediaStore, encoder: ClipEncoder, *,
                      suite: str = "commonsense", models: Sequence[str] | None = None,
                      progress: bool = False, jpeg_quality: int | None = None) -> CommonsenseReport:
    """Write ``commonsense_clip_fit`` for every p1/p2 image with both descriptions, and the accuracies per model;
    ``commonsense_clip_prompt_similarity`` (Fig. 5: the cosine of the CLIP text embeddings of the item's P1 and P2)
    on the same images. ``jpeg_quality``: CLIP sees each image as the JPEG the authors' script saved (their
    evaluate.py opened those files); the rows' version then ends ``+jpeg<quality>``."""
    import torch

    from judges.metrics.progress import progress_bar

    rows = image_rows(db, suite, models=models)
    description = {}  # (item_key, role) -> its description text
    for row in rows:
        if row.role in ROLES and row.metadata.get("description"):
            description[(row.item_key, row.role)] = row.metadata["description"]
    for row in rows:  # a partner description stored on the other prompt fills a gap
        partner = ROLES[1 - ROLES.index(row.role)] if row.role in ROLES else None
        if partner and (row.item_key, partner) not in description and row.metadata.get("partner_description"):
            description[(row.item_key, partner)] = row.metadata["partner_description"]
    usable = [r for r in rows if r.role in ROLES and all((r.item_key, role) in description for role in ROLES)]
    report = CommonsenseReport(images=len(usable))
    if not usable:
        return report
    encoder.encode_texts(list(description.values()))
    step = getattr(encoder, "batch_size", 32)
    parts = []
    with progress_bar(len(usable), f"commonsense {suite}", progress=progress) as bar:
        for start in range(0, len(usable), step):
            chunk = usable[start : start + step]
            parts.append(encoder.encode_images(jpeg_views(media, chunk, jpeg_quality)) if jpeg_quality
                         else encoder.encode_stored(media, chunk))
            bar.update(len(parts[-1]))
    version = encoder.version + (f"+jpeg{jpeg_quality}" if jpeg_quality else "")
    texts = {}  # (item_key, role) -> its prompt text
    for row in usable:
        texts[(row.item_key, row.role)] = row.text
    vectors = torch.cat(parts)
    cosines = {}  # image id -> (cos with D1, cos with D2)
    image_metrics = []
    for row, vector in zip(usable, vectors):
        d1, d2 = (description[(row.item_key, role)] for role in ROLES)
        c1, c2 = (encoder.encode_texts([d1, d2]) @ vector).tolist()
        encoder.counts.text_lookups += 2
        cosines[row.image_id] = (c1, c2)
        own, other = (c1, c2) if row.role == "p1" else (c2, c1)
        image_metrics.append(MetricRow(row.model_id, "commonsense_clip_fit", fit(own, other), encoder.name,
                                       image_id=row.image_id, suite=suite, subset=row.subset,
                                       scorer_version=version, details={"cos_d1": c1, "cos_d2": c2}))
        prompts = [texts.get((row.item_key, role)) for role in ROLES]
        if all(prompts):
            first, second = encoder.encode_texts(prompts)
            similarity = float(first @ second)
            image_metrics.append(MetricRow(row.model_id, PROMPT_SIMILARITY, similarity, encoder.name,
                                           image_id=row.image_id, suite=suite, subset=row.subset,
                                           scorer_version=encoder.version, details={"p1": prompts[0],
                                                                                    "p2": prompts[1]}))
    write_metrics(db, image_metrics)

    pairs: dict[tuple[int, str, int], dict[str, ImageRow]] = defaultdict(dict)
    for row in usable:
        pairs[(row.model_id, row.item_key, row.idx)][row.role] = row
    per_item: dict[tuple[int, str], list[int]] = defaultdict(list)
    category: dict[str, str] = {}
    for (model_id, item_key, _), roles in pairs.items():
        if len(roles) < 2:
            report.incomplete += 1
            continue
        (c11, c12), (c21, c22) = cosines[roles["p1"].image_id], cosines[roles["p2"].image_id]
        per_item[(model_id, item_key)].append(item_score(c11, c12, c21, c22))
        category[item_key] = roles["p1"].metadata.get("category") or roles["p1"].subset
    names = {row.model_id: row.model for row in usable}
    by_model: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (model_id, item_key), scores in per_item.items():
        mean = sum(scores) / len(scores)
        by_model[model_id][""].append(mean)
        by_model[model_id][category[item_key]].append(mean)
    model_metrics = []
    for model_id, groups in by_model.items():
        for subset, values in groups.items():
            model_metrics.append(MetricRow(model_id, "commonsense_clip_accuracy", sum(values) / len(values),
                                           encoder.name, suite=suite, subset=subset, scorer_version=version,
                                           details={"items": len(values)}))
    write_metrics(db, model_metrics)
    report.items = {names[m]: len(g[""]) for m, g in by_model.items()}
    report.accuracy = {names[m]: sum(g[""]) / len(g[""]) for m, g in by_model.items()}
    return report


def commonsense_options(parser) -> None:
    parser.add_argument("--commonsense-jpeg-quality", type=int, metavar="Q",
                        help="the Commonsense-T2I CLIP evaluator sees each image as a JPEG of Pillow quality Q, as the "
                             "authors' generate_images.py saved them (75; default: the stored image as it is)")


def _score(run: MetricRun, encoder: ClipEncoder) -> dict:
    encoder_calls(run, encoder, start=True)
    report = score_commonsense(run.db, run.media, encoder, suite=run.suite, models=run.models, progress=run.progress,
                               jpeg_quality=getattr(run.options, "commonsense_jpeg_quality", None))
    return {"commonsense": {"images": report.images, "items": report.items, "accuracy": report.accuracy,
                            "incomplete_pairs": report.incomplete}, **encoder_calls(run, encoder)}


METRICS.register(Metric(
    name="commonsense", title="the Commonsense-T2I CLIP evaluator (T2): commonsense_clip_fit per image and "
    "commonsense_clip_accuracy per model (run by clip on the commonsense suite)",
    stored=("commonsense_clip_fit", "commonsense_clip_accuracy", PROMPT_SIMILARITY),
    directions={PROMPT_SIMILARITY: "none"}, make_scorer=clip_encoder, options=(clip_options, commonsense_options),
    score=_score, default=False,
))
