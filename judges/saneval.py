"""T4 SANEval scoring: the LLM and VLM steps around an open-vocabulary detector.

Per image of a ``saneval`` prompt (:func:`judge_saneval`):

1. The expected structure. Prompts built by the project's SANEval builder carry it in their metadata (``objects``
   and ``attributes`` / ``relation`` / ``counts``, see ``suites/saneval.py``), which is used as is. Otherwise
   the LLM extracts the objects, then the category's part (object -> attribute, the spatial triplet, or object ->
   count), each a JSON reply validated against a schema (:mod:`judges.parsing`).
2. Synonym groups: the LLM expands each object into other names a detector could use (skipped with
   ``synonyms=False`` or when the metadata has ``synonyms``).
3. Detection through the detector interface (``detect(image, labels) -> [Detection(label, score, box)]``, e.g.
   :class:`judges.metrics.detection.TransformersDetector`); detected labels map back to their synonym group.
   Detections are stored as a judgment of the detector, so a re-run crops the same boxes and asks the same
   (cached) questions.
4. Binding categories: each expected object's best box is cropped and the VLM is asked the neutral question ("What
   color is the object?"); the LLM rates the answer against the expected attribute from 0.0 to 1.0 (JSON).
5. The rules of :mod:`judges.saneval_rules` give the image score and the feedback strings.

The published protocol (``SanevalOptions(protocol="published")``, ``--protocol published``; the SANEval paper
with the authors' code where its text is silent, protocols.md T4) runs Appendix C's prompts instead
(:mod:`judges.saneval_paper_prompts`): prompt 1 for the objects and, by category, prompt 2 (the spatial triplet,
one of the eight :data:`judges.saneval_rules.PUBLISHED_RELATIONS`), 3 (object -> attributes) or 4 (object ->
count), whatever the prompt's metadata says; the detector is asked for the scored objects and prompt 1's objects;
detected labels that are not scored objects are grouped with them by prompt 5 and mapped by prompt 6 (the same
text; the engine's cache answers the second); binding asks prompt 7's neutral question about every detected box
of at least 32 px a side and prompt 8 rates the answer against each expected attribute; the scores and feedback
are :func:`~judges.saneval_rules.score_spatial_published`, :func:`~judges.saneval_rules.score_binding_published`
(flag under 0.75) and the numeracy rule, and an empty extraction (no relation, no attribute, no count) scores 0
as in the authors' code. Its scores carry the version ``t4p:<hash of those templates>``, so the two protocols'
scores never mix.

Any failed step (API error, refusal, a reply that does not validate) makes the image's judgment ``failed`` with the
reason, and it gets no score. Metrics (scorer = the judge name): per image ``saneval_image_score`` (subset =
category; details: feedback, structure, per-object results); per model ``saneval_<category>`` (``saneval_color``,
``saneval_shape``, ``saneval_texture``, ``saneval_spatial``, ``saneval_numeracy``: the mean over its images) and
``saneval_overall`` (the unweighted mean of the categories present), all with subset '', from the image scores of
the current template version only (``scorer_version``: images scored with other templates under the same judge
name are left out, and model scores only they gave are deleted).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any, Protocol, Sequence

from PIL import Image

from datamodel.database import Database
from datamodel.judgments import (
    Judgment,
    delete_other_versions,
    judgments,
    metric_rows,
    other_versions_notes,
    save_judgment,
    split_by_version,
    stored_verdict,
)
from datamodel.metrics import MetricRow, write_metrics
from datamodel.models import model_names
from core.settings import SettingsError
from judges.client import Engine, EngineConfig, Reply
from judges.parsing import (
    AttributesReply,
    CountsReply,
    ObjectsReply,
    ParseError,
    RatingReply,
    SpatialReply,
    SynonymsReply,
    parse_json_reply,
    read_reply,
)
from judges.prompts import (
    BUILT_IN_TEMPLATES,
    SANEVAL_ATTRIBUTES_TEMPLATE,
    SANEVAL_COUNTS_TEMPLATE,
    SANEVAL_OBJECTS_TEMPLATE,
    SANEVAL_QUESTION_TEMPLATES,
    SANEVAL_RATING_TEMPLATE,
    SANEVAL_SPATIAL_TEMPLATE,
    SANEVAL_SYNONYMS_TEMPLATE,
    Templates,
    saneval_attributes_request,
    saneval_counts_request,
    saneval_objects_request,
    saneval_question_request,
    saneval_rating_request,
    saneval_spatial_request,
    saneval_synonyms_request,
)
from judges.parsing import (
    parse_paper_attributes,
    parse_paper_counts,
    parse_paper_groups,
    parse_paper_objects,
    parse_paper_rating,
    parse_paper_spatial,
)
from judges.request import ImageInput
from judges.saneval_paper_prompts import (
    AVAILABLE_NUMBERS,
    PAPER_ATTRIBUTES_TEMPLATE,
    PAPER_COUNTS_TEMPLATE,
    PAPER_MAPPING_TEMPLATE,
    PAPER_OBJECTS_TEMPLATE,
    PAPER_RATING_TEMPLATE,
    PAPER_SPATIAL_TEMPLATE,
    PAPER_SYNONYMS_TEMPLATE,
    PAPER_TEMPLATES,
    object_names_text,
)
from judges.run import RunSummary, run_units
from judges.saneval_rules import (
    BINDING,
    CATEGORIES,
    FLAG_THRESHOLD,
    PUBLISHED_FLAG_THRESHOLD,
    PUBLISHED_MIN_CROP_PX,
    PUBLISHED_RELATIONS,
    AttributeRating,
    Box,
    Expected,
    Scored,
    StructureError,
    category_of,
    category_scores,
    check_expected,
    crop_box,
    expected_from_metadata,
    is_frame,
    group_detections,
    normalize,
    capitalized,
    score_attributes,
    score_binding_published,
    score_numeracy,
    score_spatial,
    score_spatial_published,
    scored_objects,
    synonym_groups,
    with_frame,
)
from judges.selection import ImageRow, Selection, SelectionError, image_rows
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask

SUITE = "saneval"
TASK = "saneval"
DETECTION_TASK = "saneval_detection"
PROTOCOLS = ("project", "published")


class DetectorLike(Protocol):
    """What the scorer needs of a detector (:class:`judges.metrics.detection.Detector` fits)."""

    name: str

    def detect(self, image: Image.Image, labels: Sequence[str]) -> list[Any]: ...


@dataclass(frozen=True)
class SanevalOptions:
    synonyms: bool = True
    min_score: float = 0.0        # detections below this confidence are ignored (the detector has its own cut-off)
    iou_threshold: float = 0.5    # boxes of one synonym group overlapping more than this count once
    flag_threshold: float = FLAG_THRESHOLD
    protocol: str = "project"     # project | published (Appendix C's prompts and the published rules)

    def __post_init__(self):
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"SANEval protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}.")


def template_version(templates: Templates, protocol: str = "project") -> str:
    """The version of the scores: a hash of every built-in template's text, as it has always been (stored scores keep
    their version; a template of another task does not change it); for the published protocol ``t4p:`` and a hash of
    Appendix C's templates and the three questions."""
    if protocol == "published":
        keys = [t.key for t in PAPER_TEMPLATES] + [f"saneval_question_{kind}" for kind in BINDING]
        texts = templates.texts(keys)
        return "t4p:" + hashlib.sha256(json.dumps(texts, sort_keys=True).encode()).hexdigest()[:8]
    texts = templates.texts(t.key for t in BUILT_IN_TEMPLATES)
    return "t4:" + hashlib.sha256(json.dumps(texts, sort_keys=True).encode()).hexdigest()[:8]


def plan_units(db: Database, selection: Selection) -> list[ImageRow]:
    """The images of the selected SANEval prompts (limit = prompts)."""
    rows = image_rows(db, replace(selection, suite=selection.suite or SUITE, limit=None))  # limit: items
    prompts = list(dict.fromkeys(row.prompt_id for row in rows))[: selection.limit]
    keep = set(prompts)
    return [row for row in rows if row.prompt_id in keep]


class _Halt(Exception):
    """A reply came back ``stopped`` or ``dry_run``: the unit ends without writing."""

    def __init__(self, status: str):
        self.status = status


class _StepFailed(Exception):
    """A step failed; the message is the judgment's reason."""


def _load_image(media, row: ImageRow) -> Image.Image:
    with Image.open(media.path(row.media_hash, row.media_ext)) as image:
        return image.convert("RGB")


def _placeholder_crop() -> ImageInput:
    return ImageInput("0" * 64, "image/png", 256, 256, data=b"")


def _parse_answer(text: str) -> str:
    answer = " ".join((text or "").split())
    if not answer:
        raise ParseError("the answer is empty")
    return answer


async def judge_saneval(
    db: Database, media, engine: Engine, units: Sequence[ImageRow], *, judge: str,
    detector: DetectorLike | None, templates: Templates = Templates(), options: SanevalOptions = SanevalOptions(),
    progress: bool = True, handle_signals: bool = True,
) -> RunSummary:
    """Score every image of ``units``; store judgments, detections and scores, then the model scores."""
    if detector is None and not engine.dry_run:
        raise ValueError("SANEval scoring needs a detector: pass --detector (a transformers OWLv2 or Grounding DINO "
                         "folder or hub id), e.g. --detector google/owlv2-base-patch16-ensemble.")
    summary = RunSummary(judge, TASK)
    detail = engine.config.image_detail
    detector_lock = asyncio.Lock()
    version = template_version(templates, options.protocol)

    async def worker(row: ImageRow) -> str:
        trace: list[tuple[str, Reply]] = []

        async def ask(step: str, request, parser):
            reply = await engine.ask(request)
            trace.append((step, reply))
            if reply.status in ("stopped", "dry_run"):
                raise _Halt(reply.status)
            parsed = read_reply(reply, parser)
            if not parsed.ok:
                raise _StepFailed(f"{step}: {parsed.reason}")
            return parsed.value

        def write_failure(reason: str) -> str:
            save_judgment(db, Judgment(judge, TASK, f"image:{row.image_id}", "failed", reason, {},
                                       raw=[{"step": s, "reply": r.text} for s, r in trace],
                                       request_keys=tuple(r.key for _, r in trace), prompt_id=row.prompt_id,
                                       image_id=row.image_id, model_id=row.model_id))
            return "failed"

        def write_scored(category: str, expected, scored: Scored, found: dict) -> str:
            verdict = {"score": scored.score, "category": category, "feedback": list(scored.feedback),
                       "expected": expected if isinstance(expected, dict) else expected.to_json(),
                       "details": scored.details, "protocol": options.protocol,
                       "detected": {obj: [list(b.box) for b in boxes] for obj, boxes in found.items()}}
            with db.conn:
                save_judgment(db, Judgment(judge, TASK, f"image:{row.image_id}", "ok", "", verdict,
                                           raw=[{"step": s, "reply": r.text} for s, r in trace],
                                           explanation="; ".join(scored.feedback),
                                           request_keys=tuple(r.key for _, r in trace), prompt_id=row.prompt_id,
                                           image_id=row.image_id, model_id=row.model_id))
                write_metrics(db, [MetricRow(
                    model_id=row.model_id, image_id=row.image_id, suite=row.suite, subset=category,
                    name="saneval_image_score", value=scored.score, scorer=judge, scorer_version=version,
                    details={"feedback": list(scored.feedback), "protocol": options.protocol,
                             "structure": expected["source"] if isinstance(expected, dict) else expected.source,
                             "detector": getattr(detector, "name", ""), **scored.details})])
            return "ok"

        if options.protocol == "published":
            try:
                category = category_of(row.metadata, row.subset)
                if engine.dry_run:
                    _expect_published(engine, templates, row.text, category)
                expected, scored, found = await _published(ask, db, media, detector, detector_lock, templates, row,
                                                           category, detail, options)
            except _Halt as halt:
                return halt.status
            except (_StepFailed, StructureError) as error:
                with db.conn:
                    return write_failure(str(error))
            return write_scored(category, expected, scored, found)
        try:
            category = category_of(row.metadata, row.subset)
            expected = expected_from_metadata(row.metadata, category)
            if expected is None:
                expected = await _extract(ask, templates, row.text, category, engine)
            objects = scored_objects(expected)
            synonyms = row.metadata.get("synonyms") if isinstance(row.metadata.get("synonyms"), dict) else None
            if synonyms is None and options.synonyms:
                try:
                    synonyms = (await ask("synonyms", saneval_synonyms_request(templates, objects),
                                          lambda t: parse_json_reply(t, SynonymsReply))).synonyms
                except _Halt as halt:
                    if halt.status == "dry_run":
                        _expect_followups(engine, templates, expected, detail)
                    raise
            groups = synonym_groups(objects, synonyms)
            if engine.dry_run:
                _expect_followups(engine, templates, expected, detail)
                return "dry_run"
            found = group_detections(await _detections(db, media, detector, detector_lock, row, groups), groups,
                                     min_score=options.min_score, iou_threshold=options.iou_threshold)
            if category == "spatial":  # a relation to the picture itself: the whole image is its box
                found = with_frame(found, expected.relation, row.width, row.height)
            if category in BINDING:
                scored = await _score_binding(ask, templates, media, row, expected, found, detail,
                                              options.flag_threshold)
            elif category == "spatial":
                scored = score_spatial(expected, found)
            else:
                scored = score_numeracy(expected, found)
        except _Halt as halt:
            return halt.status
        except (_StepFailed, StructureError) as error:
            with db.conn:
                return write_failure(str(error))
        return write_scored(category, expected, scored, found)

    await run_units(engine, units, worker, summary, progress=progress, handle_signals=handle_signals)
    if engine.dry_run:
        summary.notes.append("SANEval dry run: attribute questions are counted for prompts whose structure is in the "
                             "metadata, assuming each object is detected once; detection itself costs no API calls.")
    else:
        rows = aggregate(db, judge, version)
        summary.extra["model_scores"] = rows
        summary.notes.extend(
            f"SANEval of {row['model']}: overall {row['overall']:.3f} ("
            + ", ".join(f"{c} {row[c]:.3f}" for c in row if c not in ("model", "overall", "images", "other_versions"))
            + ")" for row in rows)
        summary.notes.extend(other_versions_notes(rows, "image scores", "score them again with these templates"))
    return summary


def _expect_published(engine: Engine, templates: Templates, prompt: str, category: str) -> None:
    """Dry run of the published protocol: prompt 1 and the category's prompt are counted (the rest depends on
    their replies and the detections)."""
    template = {"spatial": PAPER_SPATIAL_TEMPLATE, "numeracy": PAPER_COUNTS_TEMPLATE}.get(category,
                                                                                         PAPER_ATTRIBUTES_TEMPLATE)
    engine.expect(template.build(templates, prompt=prompt, available_relationships=", ".join(PUBLISHED_RELATIONS),
                                 available_numbers=", ".join(AVAILABLE_NUMBERS)))


def published_mapping(groups: dict[str, list[str]], scored: Sequence[str]) -> dict[str, str]:
    """{name: scored object} from prompt 6's groups, as the authors' code maps detections: a group whose key is a
    scored object maps its members to it; otherwise the first scored object among its members takes them."""
    mapping = {}
    for key, names in groups.items():
        target = key if key in scored else next((name for name in names if name in scored), None)
        if target is not None:
            mapping.update({name: target for name in [key, *names]})
    return mapping


async def _published(ask, db, media, detector, lock: asyncio.Lock, templates: Templates, row: ImageRow,
                     category: str, detail: str, options: SanevalOptions):
    """One image under the published protocol: (expected structure, :class:`Scored`, boxes per scored object)."""
    objects = await ask("prompt 1 objects", PAPER_OBJECTS_TEMPLATE.build(templates, prompt=row.text),
                        parse_paper_objects)
    structure: dict = {"category": category, "objects": objects, "source": "llm"}
    if category == "spatial":
        triplet = await ask("prompt 2 spatial", PAPER_SPATIAL_TEMPLATE.build(
            templates, prompt=row.text, available_relationships=", ".join(PUBLISHED_RELATIONS)), parse_paper_spatial)
        structure["relation"] = list(triplet) if triplet else None
        scored_names = [triplet[0], triplet[2]] if triplet else []
    elif category in BINDING:
        attributes = await ask("prompt 3 attributes", PAPER_ATTRIBUTES_TEMPLATE.build(templates, prompt=row.text),
                               parse_paper_attributes)
        structure["attributes"] = attributes
        scored_names = list(attributes)
    else:
        counts = await ask("prompt 4 counts", PAPER_COUNTS_TEMPLATE.build(
            templates, prompt=row.text, available_numbers=", ".join(AVAILABLE_NUMBERS)), parse_paper_counts)
        structure["counts"] = counts
        scored_names = list(counts)
    if not scored_names:  # the authors' code scores an empty extraction 0
        what = {"spatial": "spatial relationship", "numeracy": "counted object"}.get(category, "object attribute")
        return structure, Scored(0.0, (f"No {what} found in the prompt",), {"empty": True}), {}
    labels = [name for name in dict.fromkeys([*scored_names, *objects]) if not is_frame(name)]
    boxes = await _detections(db, media, detector, lock, row, {name: [name] for name in labels})
    names = sorted({box.label for box in boxes} | {name for name in scored_names if not is_frame(name)})
    mapping = {}
    if any(box.label not in scored_names for box in boxes) and len(names) > 1:
        await ask("prompt 5 synonyms", PAPER_SYNONYMS_TEMPLATE.build(templates, object_names=object_names_text(names)),
                  parse_paper_groups)
        groups = await ask("prompt 6 mapping", PAPER_MAPPING_TEMPLATE.build(
            templates, object_names=object_names_text(names)), parse_paper_groups)
        mapping = published_mapping(groups, scored_names)
    relabelled = [Box(mapping.get(box.label, box.label), box.score, box.box) for box in boxes]
    found = group_detections(relabelled, {name: [name] for name in scored_names}, min_score=options.min_score,
                             iou_threshold=options.iou_threshold)
    structure["mapping"] = mapping
    if category == "spatial":  # a relation to the picture itself: the whole image is its box
        found = with_frame(found, scored_names, row.width, row.height)
        scored = score_spatial_published(tuple(structure["relation"]), found)
    elif category in BINDING:
        scored = await _binding_published(ask, templates, media, row, category, structure["attributes"], found,
                                          detail)
    else:
        scored = capitalized(score_numeracy(Expected(category, tuple(scored_names), counts=structure["counts"],
                                                     source="llm"), found))
    return structure, scored, found


async def _binding_published(ask, templates: Templates, media, row: ImageRow, kind: str,
                             attributes: dict[str, list[str]], found: dict[str, list[Box]], detail: str) -> Scored:
    """Prompt 7's question about every box of at least 32 px a side, prompt 8's rating of the answer against each
    expected attribute; :func:`score_binding_published` averages them."""
    image = None
    jobs = []
    for obj, wanted in attributes.items():
        for index, found_box in enumerate(found.get(obj) or []):
            x0, y0, x1, y1 = (int(v) for v in found_box.box)
            if x1 - x0 < PUBLISHED_MIN_CROP_PX or y1 - y0 < PUBLISHED_MIN_CROP_PX:
                continue
            image = image or _load_image(media, row)
            crop = ImageInput.from_pil(image.crop((max(0, x0), max(0, y0), min(image.width, x1),
                                                   min(image.height, y1))))
            jobs.append((obj, wanted, ask(f"prompt 7 {obj} #{index}",
                                          saneval_question_request(templates, kind, crop, detail), _parse_answer)))
    answers = await asyncio.gather(*(job for *_, job in jobs))
    ratings = await asyncio.gather(*(
        ask(f"prompt 8 {obj} {attribute}", PAPER_RATING_TEMPLATE.build(templates, expected_attribute=attribute,
                                                                      response=answer), parse_paper_rating)
        for (obj, wanted, _), answer in zip(jobs, answers) for attribute in wanted))
    crop_scores: dict[str, list[float]] = {}
    position = 0
    for obj, wanted, _ in jobs:
        values = ratings[position:position + len(wanted)]
        position += len(wanted)
        crop_scores.setdefault(obj, []).append(sum(values) / len(values))
    return score_binding_published(attributes, crop_scores, PUBLISHED_FLAG_THRESHOLD)


async def _extract(ask, templates: Templates, prompt: str, category: str, engine: Engine) -> Expected:
    """The LLM steps: objects, then the category's structure."""
    try:
        objects = (await ask("objects", saneval_objects_request(templates, prompt),
                             lambda t: parse_json_reply(t, ObjectsReply))).objects
    except _Halt as halt:
        if halt.status == "dry_run":  # count the category step too; the objects are not known
            engine.expect(saneval_counts_request(templates, prompt, ["object"]))
            engine.expect(saneval_synonyms_request(templates, ["object"]))
        raise
    objects = [normalize(o) for o in objects if normalize(o)]
    if not objects:
        raise _StepFailed("objects: the LLM found no object in the prompt")
    if category in BINDING:
        reply = await ask("attributes", saneval_attributes_request(templates, prompt, objects, category),
                          lambda t: parse_json_reply(t, AttributesReply))
        expected = Expected(category, tuple(objects), source="llm",
                            attributes={normalize(k): normalize(v) for k, v in reply.attributes.items() if v})
    elif category == "spatial":
        reply = await ask("spatial", saneval_spatial_request(templates, prompt, objects),
                          lambda t: parse_json_reply(t, SpatialReply))
        if reply.relation is None:
            raise _StepFailed("spatial: the LLM found no spatial relation in the prompt")
        expected = Expected(category, tuple(objects), source="llm",
                            relation=(normalize(reply.subject or ""), reply.relation, normalize(reply.object or "")))
    else:
        reply = await ask("counts", saneval_counts_request(templates, prompt, objects),
                          lambda t: parse_json_reply(t, CountsReply))
        expected = Expected(category, tuple(objects), source="llm",
                            counts={normalize(k): v for k, v in reply.counts.items()})
    try:
        return check_expected(expected)
    except StructureError as error:
        raise _StepFailed(f"LLM structure: {error}") from None


def _expect_followups(engine: Engine, templates: Templates, expected: Expected, detail: str) -> None:
    if expected.category not in BINDING:
        return
    for obj, attribute in expected.attributes.items():
        engine.expect(saneval_question_request(templates, expected.category, _placeholder_crop(), detail))
        engine.expect(saneval_rating_request(templates, obj=obj, kind=expected.category,
                                             question=templates.question(expected.category), answer=attribute,
                                             expected=attribute))


async def _detections(db, media, detector: DetectorLike, lock: asyncio.Lock, row: ImageRow,
                      groups: dict[str, list[str]]) -> list[Box]:
    """The detector's boxes for ``groups``' labels on the image (stored; a re-run reads them back)."""
    labels = sorted({name for names in groups.values() for name in names})
    name = getattr(detector, "name", type(detector).__name__)
    owner = f"detector:{name}"
    subject = f"image:{row.image_id}:labels:{hashlib.sha256(json.dumps(labels).encode()).hexdigest()[:16]}"
    stored = stored_verdict(db, owner, DETECTION_TASK, subject)
    if stored:
        return [Box(label, score, tuple(box)) for label, score, box in stored["detections"]]
    image = _load_image(media, row)
    async with lock:  # one detection at a time, off the event loop
        found = await asyncio.to_thread(detector.detect, image, labels)
    boxes = [Box(str(d.label), float(d.score), tuple(float(v) for v in d.box)) for d in found]
    save_judgment(db, Judgment(owner, DETECTION_TASK, subject, "ok", verdict={
        "labels": labels, "detections": [[b.label, b.score, list(b.box)] for b in boxes]},
        prompt_id=row.prompt_id, image_id=row.image_id, model_id=row.model_id))
    return boxes


async def _score_binding(ask, templates: Templates, media, row: ImageRow, expected: Expected,
                         found: dict[str, list[Box]], detail: str, threshold: float) -> Scored:
    kind = expected.category
    question = templates.question(kind)
    image = None
    pending = []
    for obj, attribute in expected.attributes.items():
        boxes = found.get(obj) or []
        if not boxes:
            pending.append(None)
            continue
        image = image or _load_image(media, row)
        crop = ImageInput.from_pil(image.crop(crop_box(boxes[0].box, image.width, image.height)))
        pending.append(ask(f"question {obj}", saneval_question_request(templates, kind, crop, detail), _parse_answer))
    answers = await asyncio.gather(*(p for p in pending if p is not None))
    answer_of = iter(answers)
    ratings_needed = []
    for (obj, attribute), p in zip(expected.attributes.items(), pending):
        if p is None:
            ratings_needed.append((obj, attribute, None, None))
            continue
        answer = next(answer_of)
        rating = ask(f"rating {obj}", saneval_rating_request(templates, obj=obj, kind=kind, question=question,
                                                             answer=answer, expected=attribute),
                     lambda t: parse_json_reply(t, RatingReply))
        ratings_needed.append((obj, attribute, answer, rating))
    rated = await asyncio.gather(*(r for *_, r in ratings_needed if r is not None))
    rated_of = iter(rated)
    ratings = []
    for obj, attribute, answer, rating in ratings_needed:
        if rating is None:
            ratings.append(AttributeRating(obj, attribute, None))
        else:
            value = next(rated_of)
            ratings.append(AttributeRating(obj, attribute, value.score, normalize(value.detected), answer))
    return score_attributes(expected, ratings, threshold)


def aggregate(db: Database, judge: str, version: str = "") -> list[dict]:
    """Write ``saneval_<category>`` and ``saneval_overall`` per model from the stored image scores of ``judge``
    scored with templates ``version`` ('': every version); return one row per model (with ``other_versions``, the
    image scores of other versions left out). Model scores of ``judge`` written under another version are deleted."""
    names = model_names(db)
    by_model: dict[int, list[tuple[str, float]]] = {}
    rows, other_versions = split_by_version(metric_rows(db, scorer=judge, name="saneval_image_score", suite=SUITE),
                                            version, lambda row: row["scorer_version"])
    if version:
        delete_other_versions(db, scorer=judge, suite=SUITE, version=version,
                              names=["saneval_overall", *(f"saneval_{c}" for c in CATEGORIES)])
    for row in rows:
        by_model.setdefault(row["model_id"], []).append((row["subset"], row["value"]))
    written = []
    for model_id, scores in sorted(by_model.items()):
        result = category_scores(scores)
        counts = {c: sum(1 for cat, _ in scores if cat == c) for c in result if c != "overall"}
        for category, value in result.items():
            if category == "overall":
                write_metrics(db, [MetricRow(
                    model_id=model_id, suite=SUITE, name="saneval_overall", value=value, scorer=judge,
                    scorer_version=version, details={"categories": sorted(counts), "images": len(scores),
                                                     "rule": "unweighted mean of the category scores present"})])
            else:
                write_metrics(db, [MetricRow(model_id=model_id, suite=SUITE, name=f"saneval_{category}", value=value,
                                         scorer=judge, scorer_version=version, details={"images": counts[category]})])
        written.append({"model": names[model_id], **result, "images": len(scores), "other_versions": other_versions})
    return written


STRATUM_ORDER = ("1", "2", "3-5", "6-10", "11-15")


def cardinality_scores(db: Database, judge: str, version: str = "") -> list[dict]:
    """The per-cardinality table (the paper's Table 2): for each model and binding category, ``averaged`` (the mean
    over its scored images, Table 1's value) and the mean per object-count stratum (``1``, ``2``, ``3-5``, ``6-10``,
    ``11-15``; a prompt's ``metadata["stratum"]``, else the stratum of its number of objects; images of prompts
    with neither count in ``averaged`` only), with the image counts, from the image scores of ``judge`` with
    templates ``version`` ('': every version)."""
    from suites.saneval import stratum_of

    strata = {}
    for row in image_rows(db, Selection(SUITE)):
        stratum = row.metadata.get("stratum")
        if stratum is None and row.metadata.get("object_count"):
            stratum = stratum_of(int(row.metadata["object_count"]))
        strata[row.image_id] = stratum
    rows, _ = split_by_version(metric_rows(db, scorer=judge, name="saneval_image_score", suite=SUITE), version,
                               lambda row: row["scorer_version"])
    names = model_names(db)
    groups: dict[tuple[int, str], list[tuple[str | None, float]]] = {}
    for row in rows:
        if row["subset"] in BINDING:
            groups.setdefault((row["model_id"], row["subset"]), []).append((strata.get(row["image_id"]), row["value"]))
    table = []
    for (model_id, category), scores in sorted(groups.items(), key=lambda kv: (BINDING.index(kv[0][1]), kv[0][0])):
        entry = {"model": names[model_id], "category": category, "images": len(scores),
                 "averaged": sum(v for _, v in scores) / len(scores)}
        for stratum in STRATUM_ORDER:
            values = [v for s, v in scores if s == stratum]
            entry[stratum] = sum(values) / len(values) if values else None
            entry[f"images {stratum}"] = len(values)
        table.append(entry)
    return table


def feedback(db: Database, judge: str) -> list[dict]:
    """The feedback strings of every scored image of ``judge``."""
    return [{"image_id": row["image_id"], "score": row["verdict"].get("score"),
             "feedback": row["verdict"].get("feedback")} for row in judgments(db, judge, TASK) if row["status"] == "ok"]


async def run_saneval(
    db: Database, media, config: EngineConfig, selection: Selection = Selection(), *,
    detector: DetectorLike | None, name: str = "gpt-judge", templates: Templates = Templates(),
    options: SanevalOptions = SanevalOptions(), dry_run: bool = False, env=None, progress: bool = True,
    handle_signals: bool = True,
) -> RunSummary:
    """Score the images of the selected SANEval prompts (limit = prompts)."""
    units = plan_units(db, selection)
    if not units:
        raise SelectionError(f"No image of a {SUITE} prompt in {selection.describe()}. Build the suite "
                             "(python -m suites) and generate its images first.")
    async with Engine(db, config, env=env, dry_run=dry_run) as engine:
        return await judge_saneval(db, media, engine, units, judge=f"{name}:{config.model}", detector=detector,
                                   templates=templates, options=options, progress=progress,
                                   handle_signals=handle_signals)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--detector", help="transformers OWLv2 / Grounding DINO folder or hub id "
                                           "(e.g. google/owlv2-base-patch16-ensemble), or a YOLO-E weights file "
                                           "(.pt, the paper's detector)")
    parser.add_argument("--yoloe-text-encoder", help="YOLO-E only: a transformers CLIP text model folder for the "
                                                     "label embeddings (default: ultralytics' MobileCLIP)")
    parser.add_argument("--device", default="cpu", help="device of the detector (default cpu)")
    parser.add_argument("--detector-threshold", type=float, default=0.3, help="box confidence cut-off (default 0.3)")
    parser.add_argument("--no-synonyms", action="store_true", help="do not ask the LLM for synonyms")
    parser.add_argument("--flag-threshold", type=float, default=0.5,
                        help="flag attribute ratings below this (default 0.5; the published protocol flags under "
                             "0.75)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default="project",
                        help="project: the project's prompts and rules (default); published: the SANEval paper's "
                             "Appendix C prompts and scoring")


async def _run(job: JudgeJob, args: argparse.Namespace) -> RunSummary:
    detector = None
    if not job.dry_run:
        if not args.detector:
            raise SettingsError("saneval needs --detector: a transformers OWLv2 or Grounding DINO folder or hub id, "
                                "e.g. --detector google/owlv2-base-patch16-ensemble.")
        from judges.metrics.detection import TransformersDetector, YoloeDetector  # torch: only when scoring

        if str(args.detector).endswith(".pt"):
            detector = YoloeDetector(args.detector, device=args.device, threshold=args.detector_threshold,
                                     text_encoder=args.yoloe_text_encoder)
        else:
            detector = TransformersDetector(args.detector, device=args.device, threshold=args.detector_threshold)
    options = SanevalOptions(synonyms=not args.no_synonyms, flag_threshold=args.flag_threshold,
                             protocol=args.protocol)
    return await run_saneval(job.db, job.media, job.config, job.selection, detector=detector, options=options,
                             **job.common())


JUDGE_TASKS.register(JudgeTask(
    name=TASK, run=_run, add_arguments=_add_arguments, default_suite=SUITE,
    templates=(SANEVAL_OBJECTS_TEMPLATE, SANEVAL_ATTRIBUTES_TEMPLATE, SANEVAL_SPATIAL_TEMPLATE, SANEVAL_COUNTS_TEMPLATE,
               SANEVAL_SYNONYMS_TEMPLATE, *SANEVAL_QUESTION_TEMPLATES.values(), SANEVAL_RATING_TEMPLATE,
               *PAPER_TEMPLATES),
    limit_help="score the images of the first LIMIT prompts (default all)",
    description="SANEval scoring (T4): LLM structure and synonyms, a detector, VLM attribute questions.",
))
