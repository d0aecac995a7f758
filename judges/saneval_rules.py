"""T4 SANEval scoring rules and feedback strings (pure: no model, no API, no database).

- The expected structure of a prompt (:class:`Expected`): its objects and, by category, the attribute of each object
  (color, shape, texture binding), one spatial triplet (subject, relation, object) or the count of each object.
- Detected labels map back to the synonym group of an expected object (:func:`group_detections`); within a group,
  boxes overlapping another of the group by IoU > 0.5 count once.
- Numeracy per object: 1.0 exact count, 0.5 present with a wrong count, 0.0 missing; the image score is the mean.
- Attribute binding: each object-attribute pair scores the 0.0-1.0 rating of the VLM's answer on the object's crop,
  0 when the object is missing; the image score is the mean; pairs below the flag threshold (0.5) are flagged.
- Spatial (the project's rules, :data:`RELATIONS`): the best-scoring box of subject and object (image y grows
  downwards), 1 or 0, a missing object 0. By centroids: "left of" iff x_subject < x_object, "right of" iff >, "above"
  iff y_subject < y_object, "below" iff >. "next to": the boxes' gap is at most the smaller box's width or height
  (whichever axis separates them) and the centroids differ more along x than along y. "on top of": the subject's
  centroid is higher and its box overlaps the object's horizontally, its bottom edge within the object's upper half.
  "in front of" / "behind" (depth from box size and overlap, there being no depth map): the boxes must overlap; the
  subject is in front when its bottom edge is lower in the image (nearer the camera on the ground plane), or, with
  bottom edges within 5 % of the image height of each other, when its box is the larger; "behind" is the converse.
- A category's score is the mean over its images; overall is the unweighted mean of the categories' scores.

The published protocol's rules (the SANEval paper, §3.4-3.6 and Appendix C, with the authors' released code where
the text is silent; protocols.md T4) are :func:`score_spatial_published` (its eight relations
:data:`PUBLISHED_RELATIONS`), :func:`score_binding_published` and the same numeracy rule; see their docstrings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

BINDING = ("color", "shape", "texture")
CATEGORIES = (*BINDING, "spatial", "numeracy")
RELATIONS = ("left of", "right of", "above", "below", "next to", "on top of", "in front of", "behind")
# The eight relations of the published protocol: the list the authors' code offers the LLM (prompt 2's
# {available_relationships}); the paper promises the list in its appendix but does not print it.
PUBLISHED_RELATIONS = ("on side of", "next to", "near", "on the left of", "on the right of", "on the bottom of",
                       "on the top of", "on top of")
FLAG_THRESHOLD = 0.5
PUBLISHED_FLAG_THRESHOLD = 0.75  # Table 5's feedback: "score = 0.20 < 0.75" (the authors' code: score_threshold)
PUBLISHED_IOU_THRESHOLD = 0.5  # the authors' spatial scorer: overlapping boxes lose position credit above this IoU
PUBLISHED_DISTANCE_PX = 150.0  # the authors' spatial scorer: "next to" / "near" / "on side of" centroid distance
PUBLISHED_MIN_CROP_PX = 32  # the authors' attribute scorer skips crops narrower or lower than this
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                "sixteen seventeen eighteen nineteen twenty").split()
IRREGULAR_PLURALS = {"person": "people", "man": "men", "woman": "women", "child": "children", "mouse": "mice",
                     "goose": "geese", "foot": "feet", "tooth": "teeth", "sheep": "sheep", "fish": "fish",
                     "deer": "deer", "knife": "knives", "leaf": "leaves", "wolf": "wolves", "shelf": "shelves"}


# A relation's object that is the picture itself: SANEval's one-object spatial prompts place their object in it ("a
# lamp on the left of the image", suites.saneval.FRAME); it is scored as a box over the whole image, never detected.
FRAME_WORDS = ("image", "picture", "frame", "photo", "scene")


def is_frame(name: str) -> bool:
    return normalize(name) in FRAME_WORDS


class StructureError(ValueError):
    """The expected structure of a prompt is unusable; the message says what is missing."""


@dataclass(frozen=True)
class Expected:
    category: str
    objects: tuple[str, ...]
    attributes: Mapping[str, str] = field(default_factory=dict)  # binding: object -> attribute
    relation: tuple[str, str, str] | None = None                 # spatial: (subject, relation, object)
    counts: Mapping[str, int] = field(default_factory=dict)      # numeracy: object -> count
    source: str = "metadata"                                      # metadata | llm

    @property
    def triplet(self) -> tuple[str, str, str]:
        """The spatial relation (subject, relation, object); :class:`StructureError` where there is none."""
        if self.relation is None:
            raise StructureError("no spatial relation.")
        return self.relation

    def to_json(self) -> dict:
        return {"category": self.category, "objects": list(self.objects), "attributes": dict(self.attributes),
                "relation": list(self.relation) if self.relation else None, "counts": dict(self.counts),
                "source": self.source}


def normalize(text: str) -> str:
    return " ".join(str(text).lower().replace("_", " ").split())


def category_of(metadata: Mapping[str, Any], subset: str = "") -> str:
    category = normalize(metadata.get("category") or subset or "")
    if category not in CATEGORIES:
        raise StructureError(f"category {category!r} is not one of {', '.join(CATEGORIES)}. Import the prompt with "
                             "python -m suites (saneval) or give it a category.")
    return category


def expected_from_metadata(metadata: Mapping[str, Any], category: str) -> Expected | None:
    """The structure written by the project's SANEval builder (``suites/saneval.py``), or None if absent."""
    objects = [normalize(o) for o in metadata.get("objects") or []]
    if not objects:
        return None
    if category in BINDING:
        attributes = metadata.get("attributes")
        if not isinstance(attributes, Mapping) or not attributes:
            return None
        return check_expected(Expected(category, tuple(objects),
                                       attributes={normalize(k): normalize(v) for k, v in attributes.items()}))
    if category == "spatial":
        relation = metadata.get("relation")
        if not isinstance(relation, Mapping) or not relation.get("relation"):
            return None
        triplet = (normalize(relation.get("subject", "")), normalize(relation["relation"]),
                   normalize(relation.get("object", "")))
        return check_expected(Expected(category, tuple(objects), relation=triplet))
    counts = metadata.get("counts")
    if not isinstance(counts, Mapping) or not counts:
        return None
    return check_expected(Expected(category, tuple(objects), counts={normalize(k): int(v) for k, v in counts.items()}))


def check_expected(expected: Expected) -> Expected:
    """Raise :class:`StructureError` unless the structure names its objects consistently."""
    objects = set(expected.objects)
    if expected.category in BINDING:
        if not expected.attributes:
            raise StructureError(f"no object has a {expected.category}.")
        stray = sorted(set(expected.attributes) - objects)
        if stray:
            raise StructureError(f"attributes name objects not in the list {sorted(objects)}: {stray}.")
    elif expected.category == "spatial":
        if expected.relation is None:
            raise StructureError("no spatial relation.")
        subject, relation, obj = expected.relation
        if relation not in RELATIONS:
            raise StructureError(f"relation {relation!r} is not one of {', '.join(RELATIONS)}.")
        if subject not in objects or (obj not in objects and not is_frame(obj)) or subject == obj:
            raise StructureError(f"the relation ({subject}, {relation}, {obj}) must join two listed objects "
                                 f"{sorted(objects)}.")
    elif expected.category == "numeracy":
        if not expected.counts or any(n < 1 for n in expected.counts.values()):
            raise StructureError(f"counts must give each object a number of 1 or more, got {dict(expected.counts)}.")
        stray = sorted(set(expected.counts) - objects)
        if stray:
            raise StructureError(f"counts name objects not in the list {sorted(objects)}: {stray}.")
    return expected


def scored_objects(expected: Expected) -> tuple[str, ...]:
    """The objects the category's score looks at (what the detector must find)."""
    if expected.category in BINDING:
        return tuple(o for o in expected.objects if o in expected.attributes)
    if expected.category == "spatial":
        return tuple(name for name in (expected.triplet[0], expected.triplet[2]) if not is_frame(name))
    return tuple(o for o in expected.objects if o in expected.counts)


def synonym_groups(objects: Iterable[str], synonyms: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """{object: [object, synonyms...]} (normalized, deduplicated; a synonym claimed by an earlier object is dropped)."""
    synonyms = {normalize(k): v for k, v in (synonyms or {}).items()}
    groups, taken = {}, set()
    for obj in objects:
        names = []
        for name in [obj, *synonyms.get(obj, [])]:
            name = normalize(name)
            if name and name not in taken:
                names.append(name)
                taken.add(name)
        groups[obj] = names
    return groups


@dataclass(frozen=True)
class Box:
    label: str
    score: float
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels

    @property
    def centroid(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.box
        return ((x0 + x1) / 2, (y0 + y1) / 2)


def with_frame(found: Mapping[str, Sequence[Box]], names: Iterable[str], width: float,
               height: float) -> dict[str, list[Box]]:
    """``found`` with a box over the whole image (confidence 1) for each of ``names`` that is the picture itself
    (:data:`FRAME_WORDS`): a relation to the picture is scored against it."""
    result = {name: list(boxes) for name, boxes in found.items()}
    for name in names:
        if is_frame(name):
            result[name] = [Box(name, 1.0, (0, 0, width, height))]
    return result


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def group_detections(detections: Iterable[Box], groups: Mapping[str, Sequence[str]], *, min_score: float = 0.0,
                     iou_threshold: float = 0.5) -> dict[str, list[Box]]:
    """{object: its boxes, best first}: labels mapped back to synonym groups, duplicates (IoU > threshold) merged."""
    owner = {normalize(name): obj for obj, names in groups.items() for name in names}
    grouped: dict[str, list[Box]] = {obj: [] for obj in groups}
    for det in sorted(detections, key=lambda d: -d.score):
        obj = owner.get(normalize(det.label))
        if obj is None or det.score < min_score:
            continue
        if all(iou(det.box, kept.box) <= iou_threshold for kept in grouped[obj]):
            grouped[obj].append(det)
    return grouped


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def plural(noun: str, n: int = 2) -> str:
    if n == 1:
        return noun
    *head, last = noun.split(" ")
    if last in IRREGULAR_PLURALS:
        last = IRREGULAR_PLURALS[last]
    elif last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join([*head, last])


@dataclass(frozen=True)
class Scored:
    score: float
    feedback: tuple[str, ...]
    details: dict


def score_numeracy(expected: Expected, found: Mapping[str, Sequence[Box]]) -> Scored:
    """1.0 per object with the exact count, 0.5 present with a wrong count, 0.0 missing; mean over objects."""
    per_object, feedback = {}, []
    for obj, want in expected.counts.items():
        got = len(found.get(obj, []))
        per_object[obj] = {"expected": want, "detected": got, "score": 1.0 if got == want else 0.5 if got else 0.0}
        if got == 0:
            feedback.append(f"Missing object: {obj}")
        elif got > want:
            feedback.append(f"{number_word(got - want)} extra {plural(obj, got - want)} detected")
        elif got < want:
            feedback.append(f"{number_word(want - got)} {plural(obj, want - got)} missing")
    scores = [entry["score"] for entry in per_object.values()]
    text = "; ".join(feedback)
    return Scored(sum(scores) / len(scores), (text,) if text else (), {"objects": per_object})


def actual_relation(subject: Box, obj: Box) -> str:
    """The relation along the axis where the centroids differ most."""
    (sx, sy), (ox, oy) = subject.centroid, obj.centroid
    if abs(sx - ox) >= abs(sy - oy):
        return "left of" if sx < ox else "right of"
    return "above" if sy < oy else "below"


def _area(box: Sequence[float]) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def _overlap(a: Sequence[float], b: Sequence[float]) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _in_front(subject: Box, obj: Box, image_height: float) -> bool:
    """The project's depth rule: overlapping boxes; the lower bottom edge is nearer, or, bottoms within 5 % of the
    image height, the larger box."""
    a, b = subject.box, obj.box
    if _overlap(a, b) <= 0:
        return False
    if abs(a[3] - b[3]) > 0.05 * image_height:
        return a[3] > b[3]
    return _area(a) > _area(b)


def relation_holds(relation: str, subject: Box, obj: Box, image_height: float | None = None) -> bool:
    """Whether the project's rule for ``relation`` holds (module docstring); ``image_height`` defaults to the lowest
    box edge (it scales the depth rule's tolerance)."""
    (sx, sy), (ox, oy) = subject.centroid, obj.centroid
    a, b = subject.box, obj.box
    height = image_height or max(a[3], b[3])
    if relation in ("left of", "right of", "above", "below"):
        return {"left of": sx < ox, "right of": sx > ox, "above": sy < oy, "below": sy > oy}[relation]
    if relation == "next to":
        gap_x = max(b[0] - a[2], a[0] - b[2], 0.0)
        gap_y = max(b[1] - a[3], a[1] - b[3], 0.0)
        side = min(a[2] - a[0], b[2] - b[0]) if abs(sx - ox) >= abs(sy - oy) else min(a[3] - a[1], b[3] - b[1])
        return abs(sx - ox) > abs(sy - oy) and max(gap_x, gap_y) <= side
    if relation == "on top of":
        horizontal = min(a[2], b[2]) - max(a[0], b[0]) > 0
        return sy < oy and horizontal and b[1] - 1e-9 <= a[3] <= (b[1] + b[3]) / 2
    if relation == "in front of":
        return _in_front(subject, obj, height)
    if relation == "behind":
        return _in_front(obj, subject, height)
    raise StructureError(f"relation {relation!r} is not one of {', '.join(RELATIONS)}.")


def score_spatial(expected: Expected, found: Mapping[str, Sequence[Box]]) -> Scored:
    subject, relation, obj = expected.triplet
    missing = [name for name in (subject, obj) if not found.get(name)]
    if missing:
        return Scored(0.0, tuple(f"Missing object: {name}" for name in missing), {"missing": missing})
    s, o = found[subject][0], found[obj][0]
    holds = relation_holds(relation, s, o)
    details = {"subject_centroid": s.centroid, "object_centroid": o.centroid, "detected": actual_relation(s, o)}
    if holds:
        return Scored(1.0, (), details)
    return Scored(0.0, (f"Wrong spatial relation: expected {subject} {relation} {obj}, but detected "
                        f"{subject} {actual_relation(s, o)} {obj}",), details)


@dataclass(frozen=True)
class AttributeRating:
    obj: str
    expected: str
    score: float | None  # None: the object is missing
    detected: str = ""
    answer: str = ""


def score_attributes(expected: Expected, ratings: Sequence[AttributeRating],
                     threshold: float = FLAG_THRESHOLD) -> Scored:
    """Mean over object-attribute pairs (missing = 0); pairs under ``threshold`` are flagged with feedback."""
    feedback: list[str] = []
    per_pair: list[dict[str, Any]] = []
    flagged: list[str] = []
    for r in ratings:
        score = r.score if r.score is not None else 0.0
        per_pair.append({"object": r.obj, "expected": r.expected, "score": score, "detected": r.detected,
                         "answer": r.answer, "missing": r.score is None})
        if r.score is None:
            feedback.append(f"Missing object: {r.obj}")
        elif score < threshold:
            flagged.append(r.obj)
            seen = r.detected or r.answer or "something else"
            feedback.append(f"Poor attribute binding: expected {r.expected} {r.obj}, but detected {seen} {r.obj}")
    scores = [pair["score"] for pair in per_pair]
    return Scored(sum(scores) / len(scores) if scores else 0.0, tuple(feedback),
                  {"pairs": per_pair, "flagged": flagged, "threshold": threshold})


def category_scores(image_scores: Iterable[tuple[str, float]]) -> dict[str, float]:
    """{category: mean image score} and ``overall`` = unweighted mean over the categories present."""
    by_category: dict[str, list[float]] = {}
    for category, score in image_scores:
        by_category.setdefault(category, []).append(score)
    result = {category: sum(v) / len(v) for category, v in by_category.items()}
    if result:
        result["overall"] = sum(result.values()) / len(result)
    return result


def crop_box(box: Sequence[float], width: int, height: int, margin: float = 0.05) -> tuple[int, int, int, int]:
    """The box grown by ``margin`` of its size on each side, clipped to the image, in whole pixels (at least 1)."""
    x0, y0, x1, y1 = box
    dx, dy = (x1 - x0) * margin, (y1 - y0) * margin
    left, top = max(0, int(x0 - dx)), max(0, int(y0 - dy))
    right, bottom = min(width, int(round(x1 + dx))), min(height, int(round(y1 + dy)))
    return left, top, max(right, left + 1), max(bottom, top + 1)


# --- the published protocol's rules -------------------------------------------------------------------------------

def published_position(relation: str, first: Sequence[float], second: Sequence[float], *,
                       iou_threshold: float = PUBLISHED_IOU_THRESHOLD,
                       distance: float = PUBLISHED_DISTANCE_PX) -> float:
    """The position credit in [0, 1] of "``first`` <relation> ``second``" (obj1 and obj2 of prompt 2) in the authors'
    spatial scorer. With d = centroid(second) - centroid(first) (pixels, y downwards) and their IoU:

    - "next to", "near", "on side of": 1 when |d_x| or |d_y| is under ``distance`` (150 px), else
      distance / max(|d_x|, |d_y|);
    - "on the left of" (d_x > 0), "on the right of" (d_x < 0), "on the top of" (d_y > 0), "on the bottom of"
      (d_y < 0): when the sign holds and the offset is mostly along that axis (|d_x| > |d_y| for left and right,
      |d_y| > |d_x| for top and bottom), 1 if IoU < ``iou_threshold`` (0.5), else iou_threshold / IoU; otherwise 0;
    - "on top of", the eighth relation of the list the LLM chooses from, has no rule in that code and gets 0
      (kept, as the published protocol; the project's own rules handle it, :func:`relation_holds`).
    """
    (x1, y1), (x2, y2) = ((first[0] + first[2]) / 2, (first[1] + first[3]) / 2), \
        ((second[0] + second[2]) / 2, (second[1] + second[3]) / 2)
    dx, dy = x2 - x1, y2 - y1
    overlap = iou(first, second)
    if relation in ("next to", "on side of", "near"):
        if abs(dx) < distance or abs(dy) < distance:
            return 1.0
        return distance / max(abs(dx), abs(dy))
    sign_and_axis = {"on the left of": dx > 0 and abs(dx) > abs(dy), "on the right of": dx < 0 and abs(dx) > abs(dy),
                     "on the top of": dy > 0 and abs(dy) > abs(dx), "on the bottom of": dy < 0 and abs(dy) > abs(dx)}
    if not sign_and_axis.get(relation, False):
        return 0.0
    return 1.0 if overlap < iou_threshold else iou_threshold / overlap


def score_spatial_published(relation: tuple[str, str, str], found: Mapping[str, Sequence[Box]], **position) -> Scored:
    """The published spatial score of one image (the authors' code; the paper's §3.5 names the centroid test):
    with c_1, c_2 the detector confidences of the best boxes of obj1 and obj2,

        score = 0.25 c_1 + 0.25 c_2 + position / 2    (both detected; :func:`published_position`)
        score = 0.25 c                                 (one detected)
        score = 0                                      (none), and any score under 0.5 counts as 0.

    Feedback names each missing object ("Missing object: painting", Table 5), or the relation that failed."""
    first, name, second = relation
    missing = [obj for obj in (first, second) if not found.get(obj)]
    boxes = {obj: found[obj][0] for obj in (first, second) if found.get(obj)}
    if not missing:
        credit = published_position(name, boxes[first].box, boxes[second].box, **position)
        score = 0.25 * boxes[first].score + 0.25 * boxes[second].score + credit / 2
    else:
        credit = None
        score = sum(0.25 * box.score for box in boxes.values())
    raw = score
    score = 0.0 if score < 0.5 else score
    feedback = [f"Missing object: {obj}" for obj in missing]
    if not missing and score == 0.0:
        feedback.append(f"Wrong spatial relation: expected {first} {name} {second}")
    return Scored(score, ("; ".join(feedback),) if feedback else (),
                  {"position": credit, "raw_score": raw, "missing": missing,
                   "confidences": {obj: box.score for obj, box in boxes.items()}})


def score_binding_published(attributes: Mapping[str, Sequence[str]], crop_scores: Mapping[str, Sequence[float]],
                            threshold: float = PUBLISHED_FLAG_THRESHOLD) -> Scored:
    """The published attribute-binding score of one image (§3.4, Fig. 3; the authors' code for the averaging):
    each detected box of an object is rated on all of the object's expected attributes (prompt 8's 0.0-1.0 for
    each, their mean); an object scores the mean over its boxes, a missing one 0; the image scores the mean over the
    objects of prompt 3. Feedback, as Table 5 prints it: "Missing object: shirt [brown]" and "Poor attribute
    binding for apple: expected [pink], score = 0.20 < 0.75" for an object under ``threshold``."""
    feedback: list[str] = []
    per_object: dict[str, float | None] = {}  # None: the object is missing
    for obj, wanted in attributes.items():
        listed = ", ".join(wanted)
        scores = list(crop_scores.get(obj) or ())
        if not scores:
            per_object[obj] = None
            feedback.append(f"Missing object: {obj} [{listed}]")
            continue
        score = per_object[obj] = sum(scores) / len(scores)
        if score < threshold:
            feedback.append(f"Poor attribute binding for {obj}: expected [{listed}], score = {score:.2f} "
                            f"< {threshold:g}")
    total = sum(value or 0.0 for value in per_object.values()) / len(attributes) if attributes else 0.0
    return Scored(total, ("; ".join(feedback),) if feedback else (),
                  {"objects": per_object, "threshold": threshold})


def capitalized(scored: Scored) -> Scored:
    """The published feedback starts with a capital ("Two trucks missing", Table 5)."""
    return Scored(scored.score, tuple(text[:1].upper() + text[1:] for text in scored.feedback), scored.details)
