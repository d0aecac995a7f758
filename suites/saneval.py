"""T4: SANEval-style compositional prompts: attribute binding, spatial relations, numeracy (protocols.md, T4).

:func:`saneval_specs` scripts prompts from word lists with a seed, like the published benchmark: color, shape and
texture binding ("a red apple, a blue car and a green chair"), spatial ("a dog to the left of a chair") and numeracy
("three apples and two dogs"). Each prompt is tagged with its category (``subset`` and ``metadata["category"]``) and
its object-count stratum (``metadata["stratum"]``: ``1``, ``2``, ``3-5``, ``6-10`` or ``11-15``; the number of
objects in the picture), and its metadata holds the expected structure, so scoring never parses our own prompts:

- ``objects``: object names (singular), in prompt order; ``object_count``: how many objects the image should show;
- binding: ``attribute_kind`` (color, shape, texture) and ``attributes`` {object: attribute};
- spatial: ``relation`` {"subject", "relation" (left of, right of, above, below), "object"};
- numeracy: ``counts`` {object: count}.

Strata take turns. A stratum that runs out of new prompts (numeracy with one object has one prompt per object) drops
out and the others fill in. Prompts come one at a time from one generator per category, so the first n prompts are
the same whatever the total; item keys are ``<category>-s<seed>-<index>``.

Published strata (``strata="published"``, ``--strata published``; the paper's §3.1: "275 prompts with 1 object, 275
with 2 objects, 275 with 3-5 objects, 125 with 6-10 objects, and 50 with 11-15 objects" in each category) fix the
number of prompts per stratum instead of letting strata take turns: :func:`published_strata` scales 275/275/275/125/50
to ``per_category`` (largest remainders). What "objects" counts is not said for every category; here it is the
objects named in the prompt: the object-attribute pairs (binding), the kinds of objects counted (numeracy: "three
kites, two guitars and one truck" names 3, each with 1 to 8 instances: prompt 4 knows the number words up to
"eight"), and for spatial the related pair plus listed extra objects ("a dog next to a chair, a cup and a lamp": 4).
A one-object spatial prompt places its object in the picture ("a lamp on the left of the image", one of the four
directions :data:`FRAME_RELATIONS`; the relation's object is :data:`FRAME`). They are written in the paper's words
(:data:`PUBLISHED_WORDS`, which hold every object and attribute of its examples) and grammar (:func:`binding_text`,
:func:`numeracy_text`, :func:`spatial_text`: lower case, "a" before every noun as printed, "a orange bird"), with
the published relations' words (``on the left of``, ``next to``, ...; their project rule is kept in the metadata).
Item keys are ``<category>-p<seed>-<index>``. The paper's own prompts were written by an LLM and checked by people:
``--generator llm`` does that (:mod:`judges.saneval_writer`); these scripted ones are its offline fallback.

:func:`load_saneval_list` imports an external prompt list (CSV or JSONL with ``text`` and ``category``).

:func:`demo_specs` is the demo's small set: :data:`DEMO_PER_CATEGORY` prompts of each category from the word lists
with :data:`DEMO_SEED` (strata 1, 2 and 3-5 objects; spatial's all 2).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from datamodel.catalog import PromptImport, PromptSpec
from datamodel.database import Database
from suites.common import SuiteError, read_table, write_specs
from suites.generic import spec_from_row
from suites.registry import SUITES, Builder, ImportFormat, Suite

SUITE = "saneval"
BINDING_CATEGORIES = ("color", "shape", "texture")
CATEGORIES = (*BINDING_CATEGORIES, "spatial", "numeracy")
STRATA = {"1": (1, 1), "2": (2, 2), "3-5": (3, 5), "6-10": (6, 10), "11-15": (11, 15)}
CATEGORY_STRATA = {"spatial": ("2",)}  # two objects and a relation; the other categories use every stratum
PUBLISHED_PER_CATEGORY = 1000
PUBLISHED_STRATA = {"1": 275, "2": 275, "3-5": 275, "6-10": 125, "11-15": 50}  # §3.1, per 1,000 prompts
STRATA_MODES = ("even", "published")
# The published relations' words (judges.saneval_rules.PUBLISHED_RELATIONS) and the project rule each is kept under.
PUBLISHED_RELATION_RULES = {"on side of": "next to", "next to": "next to", "near": "next to",
                            "on the left of": "left of", "on the right of": "right of", "on the bottom of": "below",
                            "on the top of": "above", "on top of": "on top of"}
DEMO_PER_CATEGORY, DEMO_SEED = 3, 0  # the demo's SANEval prompts (demo_specs)
NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen").split()
_MAX_TRIES = 200  # draws that may repeat earlier prompts before a stratum counts as exhausted


@dataclass(frozen=True)
class WordLists:
    objects: tuple[tuple[str, str], ...]  # (singular, plural)
    color: tuple[str, ...]
    shape: tuple[str, ...]
    texture: tuple[str, ...]
    relations: tuple[tuple[str, str], ...]  # (relation name, phrase in the prompt)


WORDS = WordLists(
    objects=tuple(
        (word, plural or word + "s")
        for word, plural in (
            ("apple", ""), ("backpack", ""), ("ball", ""), ("banana", ""), ("bench", "benches"), ("bicycle", ""),
            ("bird", ""), ("book", ""), ("bottle", ""), ("bowl", ""), ("box", "boxes"), ("cake", ""), ("candle", ""),
            ("car", ""), ("cat", ""), ("chair", ""), ("clock", ""), ("cup", ""), ("dog", ""), ("donut", ""),
            ("elephant", ""), ("flower", ""), ("fork", ""), ("giraffe", ""), ("guitar", ""), ("hat", ""),
            ("horse", ""), ("kite", ""), ("lamp", ""), ("laptop", ""), ("pillow", ""), ("plate", ""),
            ("sheep", "sheep"), ("shoe", ""), ("spoon", ""), ("suitcase", ""), ("table", ""),
            ("teddy bear", ""), ("umbrella", ""), ("vase", ""),
        )
    ),
    color=("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown", "black", "white", "gray", "beige"),
    shape=("round", "square", "triangular", "rectangular", "oval", "hexagonal", "star-shaped", "heart-shaped",
           "diamond-shaped", "cylindrical"),
    texture=("wooden", "metallic", "glass", "plastic", "furry", "leather", "knitted", "fluffy", "rubber", "marble"),
    relations=(("left of", "to the left of"), ("right of", "to the right of"), ("above", "above"), ("below", "below")),
)

# The published strata's words: the word lists above and the objects and attributes of the paper's own examples
# (Fig. 3, Table 5: "a pink stop sign and a orange bird", "a yellow peach and a lime ceiling", "a mouse on the bottom
# of a painting", "four trucks", "a brown shirt and a pink apple", "a pentagonal spoon", "a rubber grass") and of the
# authors' sample images (nielseni6/saneval images/samples: "a cyan bus and a yellow bucket", "a oblong egg and a
# conical pen", ...), with rarer categories (§3.1: "including rare object categories"; §2.2 names the capybara and
# the albatross). The LLM writer (judges.saneval_writer) is the paper's way; these lists are its offline fallback.
PUBLISHED_WORDS = WordLists(
    objects=WORDS.objects + tuple(
        (word, plural or word + "s")
        for word, plural in (
            ("stop sign", ""), ("peach", "peaches"), ("ceiling", ""), ("mouse", "mice"), ("painting", ""),
            ("truck", ""), ("shirt", ""), ("grass", "grasses"), ("bus", "buses"), ("bucket", ""), ("stool", ""),
            ("mirror", ""), ("pumpkin", ""), ("tablet", ""), ("egg", ""), ("pen", ""), ("bathtub", ""),
            ("dove", ""), ("sofa", ""), ("chicken", ""), ("toy", ""), ("refrigerator", ""), ("fish", "fish"),
            ("person", "people"), ("man", "men"), ("capybara", ""), ("albatross", "albatrosses"),
            ("armadillo", ""), ("hedgehog", ""), ("flamingo", ""), ("iguana", ""), ("toucan", ""), ("walrus",
            "walruses"), ("yak", ""), ("axolotl", ""), ("pangolin", ""), ("okapi", ""), ("narwhal", ""),
            ("accordion", ""), ("anvil", ""), ("harp", ""), ("lantern", ""), ("saxophone", ""), ("telescope", ""),
            ("kettle", ""), ("metronome", ""), ("trombone", ""), ("wheelbarrow", ""), ("xylophone", ""),
            ("sundial", ""), ("gramophone", ""), ("abacus", "abacuses"), ("hourglass", "hourglasses"),
            ("compass", "compasses"), ("birdhouse", ""), ("canoe", ""), ("cactus", "cacti"), ("mushroom", ""),
            ("lighthouse", ""), ("windmill", ""), ("tractor", ""), ("helmet", ""), ("wallet", ""),
            ("microphone", ""), ("faucet", ""), ("teapot", ""), ("pineapple", ""), ("lemon", ""), ("coconut", ""),
            ("feather", ""), ("bell", ""), ("drum", ""), ("violin", ""), ("ladder", ""), ("rocket", ""),
        )
    ),
    color=WORDS.color + ("lime", "cyan", "gold", "tan", "magenta", "turquoise", "navy", "maroon", "teal", "silver",
                         "violet", "crimson", "olive", "indigo"),
    shape=WORDS.shape + ("pentagonal", "oblong", "conical", "spherical", "octagonal", "crescent-shaped", "spiral",
                         "cubic", "pyramidal"),
    texture=WORDS.texture + ("velvet", "woolen", "silk", "stone", "ceramic", "denim", "feathered", "scaly", "wicker",
                             "crocheted"),
    relations=WORDS.relations,
)
# Counts of the published strata: prompt 4 is given the authors' number words "a, an, one ... eight"
# (judges.saneval_paper_prompts.AVAILABLE_NUMBERS), so no count is larger than eight.
COUNT_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight")
MAX_COUNT = len(COUNT_WORDS)
# A one-object spatial prompt places its object in the picture ("a lamp on the left of the image"): the relation's
# second object is the picture itself, with one of the four directions of the published relations.
FRAME = "image"
FRAME_RELATIONS = ("on the left of", "on the right of", "on the top of", "on the bottom of")


def stratum_of(object_count: int) -> str:
    """The stratum ('1', '2', '3-5', '6-10', '11-15') of an object count."""
    for name, (low, high) in STRATA.items():
        if low <= object_count <= high:
            return name
    raise SuiteError(f"object count {object_count} is outside the strata 1 to 15.")


def _a(word: str) -> str:
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def binding_prompt(rng: random.Random, kind: str, count: int, words: WordLists = WORDS) -> tuple[str, dict]:
    """``count`` distinct objects, each with an attribute of ``kind`` (distinct while the list allows)."""
    attributes_list = getattr(words, kind)
    objects = rng.sample([singular for singular, _ in words.objects], count)
    attributes = (rng.sample(attributes_list, count) if count <= len(attributes_list)
                  else [rng.choice(attributes_list) for _ in range(count)])
    text = _join([_a(f"{attribute} {name}") for attribute, name in zip(attributes, objects)])
    return text, {"objects": objects, "attribute_kind": kind, "attributes": dict(zip(objects, attributes))}


def spatial_prompt(rng: random.Random, words: WordLists = WORDS) -> tuple[str, dict]:
    subject, obj = rng.sample([singular for singular, _ in words.objects], 2)
    relation, phrase = rng.choice(words.relations)
    return f"{_a(subject)} {phrase} {_a(obj)}", {
        "objects": [subject, obj], "relation": {"subject": subject, "relation": relation, "object": obj}
    }


def numeracy_prompt(rng: random.Random, total: int, words: WordLists = WORDS) -> tuple[str, dict]:
    """Up to three kinds of objects whose counts add up to ``total``."""
    kinds = rng.randint(1, min(3, total))
    cuts = sorted(rng.sample(range(1, total), kinds - 1))
    counts = [high - low for low, high in zip([0, *cuts], [*cuts, total])]
    chosen = rng.sample(list(words.objects), kinds)
    text = _join([f"{NUMBER_WORDS[n]} {plural if n > 1 else singular}" for n, (singular, plural) in zip(counts, chosen)])
    return text, {"objects": [singular for singular, _ in chosen],
                  "counts": {singular: n for n, (singular, _) in zip(counts, chosen)}}


def _draw(rng: random.Random, category: str, stratum: str, words: WordLists) -> tuple[str, dict]:
    low, high = STRATA[stratum]
    count = rng.randint(low, high)
    if category in BINDING_CATEGORIES:
        text, structure = binding_prompt(rng, category, count, words)
    elif category == "spatial":
        text, structure = spatial_prompt(rng, words)
    else:
        text, structure = numeracy_prompt(rng, count, words)
    return text, {"category": category, "stratum": stratum, "object_count": count, **structure}


def published_strata(count: int) -> dict[str, int]:
    """{stratum: prompts} of ``count`` prompts in the published proportions 275/275/275/125/50 (largest remainders;
    exactly those numbers for 1,000)."""
    shares = {name: count * n / PUBLISHED_PER_CATEGORY for name, n in PUBLISHED_STRATA.items()}
    result = {name: int(share) for name, share in shares.items()}
    for name in sorted(shares, key=lambda k: -(shares[k] - result[k]))[: count - sum(result.values())]:
        result[name] += 1
    return result


# --- the published strata's grammar: the paper's prompts letter for letter -----------------------------------------

def _listed(parts: Sequence[str], *, serial_comma: bool) -> str:
    if len(parts) < 3:
        return " and ".join(parts)
    return ", ".join(parts[:-1]) + ("," if serial_comma else "") + " and " + parts[-1]


def binding_text(attributes: dict[str, str]) -> str:
    """"a pink stop sign and a orange bird" (Fig. 3), "a plastic bathtub, a rubber cup, and a leather dove" (the
    authors' samples): "a" before every noun as the paper prints it, a serial comma from three objects on."""
    return _listed([f"a {attribute} {name}" for name, attribute in attributes.items()], serial_comma=True)


def numeracy_text(counts: dict[str, int], words: WordLists = None) -> str:
    """"four trucks" (Table 5), "three kites, two guitars and one truck" (the authors' samples): number words from
    :data:`COUNT_WORDS` only, no serial comma."""
    plurals = dict((words or PUBLISHED_WORDS).objects)
    return _listed([f"{COUNT_WORDS[n - 1]} {plurals.get(name, name + 's') if n > 1 else name}"
                    for name, n in counts.items()], serial_comma=False)


def spatial_text(subject: str, relation: str, obj: str, extra: Sequence[str] = ()) -> str:
    """"a mouse on the bottom of a painting" (Table 5); one object placed in the picture: "a lamp on the left of the
    image"; listed extra objects after a comma ("a dog next to a chair, a cup and a lamp")."""
    text = f"a {subject} {relation} {'the image' if obj == FRAME else 'a ' + obj}"
    return text + (", " + _listed([f"a {name}" for name in extra], serial_comma=False) if extra else "")


def _published_draw(rng: random.Random, category: str, count: int, words: WordLists) -> tuple[str, dict]:
    """A published-strata prompt naming ``count`` objects (module docstring)."""
    names = [name for name, _ in rng.sample(list(words.objects), max(count, 2))]
    if category in BINDING_CATEGORIES:
        pool = getattr(words, category)
        chosen = rng.sample(pool, count) if count <= len(pool) else [rng.choice(pool) for _ in range(count)]
        attributes = dict(zip(names[:count], chosen))
        return binding_text(attributes), {"objects": names[:count], "attribute_kind": category,
                                          "attributes": attributes}
    if category == "spatial":
        subject, obj, *extra = names if count > 1 else [names[0], FRAME]
        phrase = rng.choice(FRAME_RELATIONS if count == 1 else list(PUBLISHED_RELATION_RULES))
        return spatial_text(subject, phrase, obj, extra[: max(count - 2, 0)]), {
            "objects": [subject, *([obj] if count > 1 else []), *extra[: max(count - 2, 0)]],
            "published_relation": phrase,
            "relation": {"subject": subject, "relation": PUBLISHED_RELATION_RULES[phrase], "object": obj}}
    counts = {name: rng.randint(1, MAX_COUNT) for name in names[:count]}
    return numeracy_text(counts, words), {"objects": names[:count], "counts": counts}


def published_category_specs(category: str, count: int, *, seed: int = 0,
                             words: WordLists | None = None) -> list[PromptSpec]:
    """``count`` prompts of ``category`` in the published strata (:func:`published_strata`), stratum by stratum,
    in the paper's words (:data:`PUBLISHED_WORDS`) and grammar."""
    if category not in CATEGORIES:
        raise SuiteError(f"unknown SANEval category {category!r}. Use {', '.join(CATEGORIES)}.")
    words = words or PUBLISHED_WORDS
    rng = random.Random(f"{seed}:{category}:published")
    seen: set[str] = set()
    specs = []
    for stratum, n in published_strata(count).items():
        low, high = STRATA[stratum]
        made = 0
        while made < n:
            for _ in range(_MAX_TRIES):
                objects = rng.randint(low, high)
                text, structure = _published_draw(rng, category, objects, words)
                if text not in seen:
                    break
            else:
                raise SuiteError(f"{category}, stratum {stratum}: the word lists give only {made} distinct prompts, "
                                 f"not {n}. Ask for fewer (--per-category) or add words.")
            seen.add(text)
            made += 1
            index = len(specs)
            specs.append(PromptSpec(
                SUITE, f"{category}-p{seed}-{index:04d}", text, subset=category,
                metadata={"category": category, "stratum": stratum, "object_count": objects, "strata": "published",
                          **structure},
                source=f"saneval published strata, seed {seed} {category} #{index}"))
    return specs


# --- prompts an LLM wrote: checked, then written as candidates for a person to accept -----------------------------

def _word_in(word: str, text: str) -> bool:
    return f" {word.lower()} " in f" {' '.join(text.lower().replace(',', ' ').split())} "


def written_structure(category: str, stratum: str, item) -> tuple[str, dict]:
    """(text, metadata structure) of one prompt an LLM wrote for ``category`` and ``stratum`` (the JSON object
    :mod:`judges.saneval_writer` asks for), checked as the published strata's own: its objects count falls in the
    stratum, every object and attribute appears in the text, the relation is one of the published ones (one of the
    four directions in the picture for a one-object prompt), each count is one to eight with its number word in the
    text. A prompt that fails raises :class:`SuiteError` with the reason."""
    low, high = STRATA[stratum]
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"].strip():
        raise SuiteError("no text")
    text = " ".join(item["text"].split())
    if category in BINDING_CATEGORIES:
        attributes = item.get("attributes")
        if not isinstance(attributes, dict) or not all(isinstance(k, str) and isinstance(v, str) and k.strip()
                                                       and v.strip() for k, v in attributes.items()):
            raise SuiteError("no attributes {object: attribute}")
        attributes = {" ".join(k.lower().split()): " ".join(v.lower().split()) for k, v in attributes.items()}
        structure = {"objects": list(attributes), "attribute_kind": category, "attributes": attributes}
        words = [*attributes, *attributes.values()]
    elif category == "spatial":
        relation = item.get("relation")
        if not isinstance(relation, dict) or not all(isinstance(relation.get(k), str) and relation[k].strip()
                                                     for k in ("obj1", "relationship", "obj2")):
            raise SuiteError("no relation {obj1, relationship, obj2}")
        subject, phrase, obj = (" ".join(relation[k].lower().split()) for k in ("obj1", "relationship", "obj2"))
        if phrase not in PUBLISHED_RELATION_RULES:
            raise SuiteError(f"relation {phrase!r} is not one of the published relations")
        framed = obj in ("image", "picture", "frame", "photo", "scene")
        if framed:
            obj = FRAME
            if phrase not in FRAME_RELATIONS:
                raise SuiteError(f"{phrase!r} cannot place an object in the picture")
        listed = item.get("objects", [subject, obj])
        if not isinstance(listed, list) or not all(isinstance(name, str) for name in listed):
            raise SuiteError("objects is not a list of names")
        objects = list(dict.fromkeys(" ".join(n.lower().split()) for n in listed if n.strip()))
        objects = [name for name in objects if name != FRAME and name not in ("image", "picture")]
        if subject not in objects or (not framed and obj not in objects) or subject == obj:
            raise SuiteError("the relation's objects are not among the listed objects")
        structure = {"objects": objects, "published_relation": phrase,
                     "relation": {"subject": subject, "relation": PUBLISHED_RELATION_RULES[phrase], "object": obj}}
        words = [*objects, *phrase.split()]
    else:
        counts = item.get("counts")
        if not isinstance(counts, dict) or not counts or not all(
                isinstance(k, str) and k.strip() and isinstance(v, int) and not isinstance(v, bool)
                for k, v in counts.items()):
            raise SuiteError("no counts {object: whole number}")
        counts = {" ".join(k.lower().split()): v for k, v in counts.items()}
        if any(not 1 <= n <= MAX_COUNT for n in counts.values()):
            raise SuiteError(f"a count outside 1-{MAX_COUNT} (prompt 4 knows the number words up to eight)")
        for n in counts.values():
            if not any(_word_in(word, text) for word in ((COUNT_WORDS[n - 1], "a", "an") if n == 1
                                                          else (COUNT_WORDS[n - 1],))):
                raise SuiteError(f"the number word of {n} is not in the text")
        structure = {"objects": list(counts), "counts": counts}
        words = []
    missing = [word for word in words if word.lower() not in text.lower()]
    if missing:
        raise SuiteError(f"{', '.join(repr(w) for w in missing)} not in the text")
    count = len(structure["objects"])
    if not low <= count <= high:
        raise SuiteError(f"{count} objects, not {low}" + (f"-{high}" if high != low else ""))
    return text, {"category": category, "stratum": stratum, "object_count": count, "strata": "published",
                  **structure}

# The LLM writer's request: the project's own words (the paper does not print the prompt it gave Gemini-2.5-Flash),
# asking for prompts in the paper's form and the structure the published strata's scripted prompts carry.
WRITER_BATCH = 25   # prompts asked for in one request
WRITER_ROUNDS = 4   # rounds of requests for a stratum's missing prompts before the build gives up
WRITER_REQUEST = """Write {count} different prompts for a text-to-image benchmark that tests {skill}.

{rules}
Use lower case. Vary the objects widely, common ones and rare object categories (animals, plants, food, tools, \
instruments, furniture, vehicles, buildings). Every prompt must differ from the others. (Batch {batch}.)

Answer with a JSON array of {count} objects and nothing else, each like:
{example}"""
_SKILLS = {"color": "attribute binding: each object has its own colour",
           "shape": "attribute binding: each object has its own shape",
           "texture": "attribute binding: each object has its own texture",
           "spatial": "spatial relationships between objects", "numeracy": "numeracy: exact numbers of objects"}
_BINDING_EXAMPLES = {"color": ("a pink stop sign and a orange bird", {"stop sign": "pink", "bird": "orange"}),
                     "shape": ("a pentagonal spoon and a oblong egg", {"spoon": "pentagonal", "egg": "oblong"}),
                     "texture": ("a rubber grass and a leather dove", {"grass": "rubber", "dove": "leather"})}


def _how_many(stratum: str) -> str:
    low, high = STRATA[stratum]
    return f"exactly {low}" if low == high else f"between {low} and {high}"


def writer_request(category: str, stratum: str, count: int, *, batch: str) -> str:
    """The request for ``count`` prompts of ``category`` naming as many objects as ``stratum`` says (module
    docstring); ``batch`` makes each request of a build its own (and the same again when the build is re-run)."""
    objects = _how_many(stratum)
    if category in BINDING_CATEGORIES:
        text, attributes = _BINDING_EXAMPLES[category]
        rules = (f"Each prompt names {objects} different objects, each with one {category} word of its own, written "
                 f'like "{text}" ("a" before each object; a comma between three or more, and "and" before the '
                 f'last). "attributes" maps each object (singular) to its {category} word.')
        example = json.dumps({"text": text, "attributes": attributes})
    elif category == "spatial" and stratum == "1":
        rules = ("Each prompt places one object in the picture with exactly one of these relations: "
                 f'{", ".join(FRAME_RELATIONS)}, written like "a lamp on the left of the image".')
        example = json.dumps({"text": "a lamp on the left of the image", "objects": ["lamp"],
                              "relation": {"obj1": "lamp", "relationship": "on the left of", "obj2": "image"}})
    elif category == "spatial":
        rules = (f"Each prompt names {objects} different objects: two of them related by exactly one of these "
                 f'relations: {", ".join(PUBLISHED_RELATION_RULES)}, written like "a mouse on the bottom of a '
                 'painting"; any further objects listed after a comma ("a fish next to a bicycle, a cup and a '
                 'lamp"). "objects" lists every object named (singular).')
        example = json.dumps({"text": "a mouse on the bottom of a painting", "objects": ["mouse", "painting"],
                              "relation": {"obj1": "mouse", "relationship": "on the bottom of", "obj2": "painting"}})
    else:
        rules = (f"Each prompt names {objects} different kinds of objects, each with a number from one to eight "
                 f"written as a word ({', '.join(COUNT_WORDS)}), like \"four trucks\" or \"three kites, two guitars "
                 "and one truck\". \"counts\" maps each object (singular) to its number.")
        example = json.dumps({"text": "three kites, two guitars and one truck",
                              "counts": {"kite": 3, "guitar": 2, "truck": 1}})
    return WRITER_REQUEST.format(count=count, skill=_SKILLS[category], rules=rules, batch=batch, example=example)


def _json_items(answer: str) -> list:
    """The JSON array of an answer (a ```json fence, or an object holding the array, is accepted)."""
    text = answer.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise SuiteError(f"the answer is not JSON ({error.msg})") from None
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), list):
        value = next(iter(value.values()))
    if not isinstance(value, list):
        raise SuiteError("the answer is not a JSON array")
    return value


def written_specs(ask, per_category: int = PUBLISHED_PER_CATEGORY, *, seed: int = 0,
                  categories: Sequence[str] = CATEGORIES, batch_size: int = WRITER_BATCH,
                  rounds: int = WRITER_ROUNDS, model: str = "") -> tuple[list[PromptSpec], dict[str, int]]:
    """``per_category`` prompts of each category in the published strata, written by an LLM: ``ask(texts) -> [(ok,
    answer or reason)]`` (:func:`judges.prompt_writer.judge_asker`). Each answer's prompts are checked
    (:func:`written_structure`) and repeats dropped; a stratum still short after ``rounds`` rounds of requests
    raises :class:`SuiteError` with what was missing and why. Returns the candidates (item keys
    ``<category>-g<seed>-<index>``, in stratum order) and {reason: prompts left out} (every prompt not kept is
    counted there)."""
    for category in categories:
        if category not in CATEGORIES:
            raise SuiteError(f"unknown SANEval category {category!r}. Use {', '.join(CATEGORIES)}.")
    wanted = {(category, stratum): n for category in categories
              for stratum, n in published_strata(per_category).items() if n}
    kept: dict[tuple[str, str], list[tuple[str, dict, str]]] = {key: [] for key in wanted}
    seen: dict[str, set[str]] = {category: set() for category in categories}
    left_out: dict[str, int] = {}
    failures: dict[str, int] = {}
    for round_number in range(rounds):
        requests = []
        for (category, stratum), n in wanted.items():
            missing = n - len(kept[(category, stratum)])
            for part in range(-(-missing // batch_size) if missing > 0 else 0):
                count = min(batch_size, missing - part * batch_size)
                requests.append((category, stratum, count, f"{seed}.{round_number}.{part}"))
        if not requests:
            break
        answers = ask([writer_request(c, s, count, batch=batch) for c, s, count, batch in requests])
        for (category, stratum, _, batch), (ok, answer) in zip(requests, answers):
            if not ok:
                failures[answer] = failures.get(answer, 0) + 1
                continue
            try:
                items = _json_items(answer)
            except SuiteError as error:
                failures[str(error)] = failures.get(str(error), 0) + 1
                continue
            for item in items:
                try:
                    text, structure = written_structure(category, stratum, item)
                except SuiteError as error:
                    reason = str(error)
                else:
                    if text.lower() in seen[category]:
                        reason = "a repeat"
                    elif len(kept[(category, stratum)]) >= wanted[(category, stratum)]:
                        reason = "more than asked for"
                    else:
                        seen[category].add(text.lower())
                        kept[(category, stratum)].append((text, structure, batch))
                        continue
                left_out[reason] = left_out.get(reason, 0) + 1
    short = {key: n - len(kept[key]) for key, n in wanted.items() if len(kept[key]) < n}
    if short:
        why = sorted({**left_out, **{f"request failed: {k}": v for k, v in failures.items()}}.items(),
                     key=lambda kv: -kv[1])[:5]
        raise SuiteError("the LLM wrote too few usable prompts: " + ", ".join(
            f"{category} stratum {stratum} lacks {n}" for (category, stratum), n in short.items())
            + f" after {rounds} rounds. Most common reasons: " + "; ".join(f"{r} ({n})" for r, n in why)
            + ". Nothing was written; run again with another --seed, ask for fewer (--per-category), or use "
              "--generator script.")
    specs = []
    for category in categories:
        index = 0
        for stratum in STRATA:
            for text, structure, batch in kept.get((category, stratum), []):
                specs.append(PromptSpec(
                    SUITE, f"{category}-g{seed}-{index:04d}", text, subset=category,
                    metadata={**structure, "generator": f"llm:{model}" if model else "llm"},
                    source=f"saneval LLM writer{' ' + model if model else ''}, seed {seed}, batch {batch}"))
                index += 1
    return specs, left_out

def category_specs(category: str, count: int, *, seed: int = 0, words: WordLists = WORDS) -> list[PromptSpec]:
    if category not in CATEGORIES:
        raise SuiteError(f"unknown SANEval category {category!r}. Use {', '.join(CATEGORIES)}.")
    rng = random.Random(f"{seed}:{category}")
    strata = list(CATEGORY_STRATA.get(category, STRATA))
    seen: set[str] = set()
    specs = []
    while len(specs) < count:
        if not strata:
            raise SuiteError(f"{category}: the word lists give only {len(specs)} distinct prompts, not {count}. "
                             "Ask for fewer or add words.")
        stratum = strata[len(specs) % len(strata)]
        for _ in range(_MAX_TRIES):
            text, metadata = _draw(rng, category, stratum, words)
            if text not in seen:
                break
        else:
            strata.remove(stratum)
            continue
        seen.add(text)
        text = text[0].upper() + text[1:]
        specs.append(PromptSpec(SUITE, f"{category}-s{seed}-{len(specs):04d}", text, subset=category,
                                metadata=metadata, source=f"saneval seed {seed} {category} #{len(specs)}"))
    return specs


def saneval_specs(
    per_category: int = PUBLISHED_PER_CATEGORY, *, seed: int = 0, categories: Sequence[str] = CATEGORIES,
    words: WordLists | None = None, strata: str = "even",
) -> list[PromptSpec]:
    """``per_category`` scripted prompts of each category (the published benchmark has 1,000 of each); ``strata``:
    ``even`` (strata take turns, :data:`WORDS`) or ``published`` (275/275/275/125/50 per 1,000, the paper's words
    :data:`PUBLISHED_WORDS`)."""
    if strata not in STRATA_MODES:
        raise SuiteError(f"strata must be one of {', '.join(STRATA_MODES)}, got {strata!r}.")
    if strata == "published":
        return [spec for category in categories
                for spec in published_category_specs(category, per_category, seed=seed, words=words)]
    return [spec for category in categories for spec in category_specs(category, per_category, seed=seed,
                                                                        words=words or WORDS)]


def demo_specs() -> list[PromptSpec]:
    """The demo's SANEval prompts (module docstring): few, seeded, every category."""
    return saneval_specs(DEMO_PER_CATEGORY, seed=DEMO_SEED)


def build_saneval(
    db: Database, per_category: int = PUBLISHED_PER_CATEGORY, *, seed: int = 0,
    categories: Sequence[str] = CATEGORIES, strata: str = "even",
) -> tuple[list[PromptSpec], PromptImport]:
    specs = saneval_specs(per_category, seed=seed, categories=categories, strata=strata)
    return specs, write_specs(db, specs)


def load_saneval_list(path: str | Path) -> list[PromptSpec]:
    """An external prompt list (CSV or JSONL): ``text`` and ``category`` required; ``key`` (default
    ``<file stem>-<line>``), ``stratum`` or ``object_count``, ``metadata`` (JSON, e.g. the expected structure) and
    other columns optional."""
    specs = []
    for line, row in read_table(path, ["text", "category"]):
        where = f"{path}:{line}"
        category = row["category"]
        if category not in CATEGORIES:
            raise SuiteError(f"{where}: category {category!r} is not one of {', '.join(CATEGORIES)}. Fix the row.")
        if row.get("object_count") not in (None, ""):
            count = str(row["object_count"]).strip()
            if not count.isdigit() or not 1 <= int(count) <= 15:
                raise SuiteError(f"{where}: object_count {row['object_count']!r} is not a whole number from 1 to 15.")
            row["object_count"], stratum = int(count), stratum_of(int(count))
            if row.get("stratum") not in (None, "", stratum):
                raise SuiteError(f"{where}: stratum {row['stratum']!r} does not hold {count} objects; "
                                 f"it is {stratum!r}. Fix one of the two.")
            row["stratum"] = stratum
        elif row.get("stratum") not in (None, "") and str(row["stratum"]) not in STRATA:
            raise SuiteError(f"{where}: stratum {row['stratum']!r} is not one of {', '.join(STRATA)}. Fix the row.")
        if row.get("key") in (None, "") and row.get("item_key") in (None, ""):
            row["key"] = f"{Path(path).stem}-{line}"
        specs.append(spec_from_row(path, line, {**row, "subset": category, "suite": SUITE}, SUITE))
    return specs


def import_saneval_list(db: Database, path: str | Path) -> PromptImport:
    return write_specs(db, load_saneval_list(path))


GENERATORS = ("script", "llm")


def _add_build_arguments(parser) -> None:
    from core.presets import add_preset_argument

    parser.add_argument("--per-category", type=int, default=PUBLISHED_PER_CATEGORY,
                        help=f"prompts per category (default {PUBLISHED_PER_CATEGORY}, as published)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--categories", help=f"comma-separated subset of {','.join(CATEGORIES)}")
    parser.add_argument("--strata", choices=STRATA_MODES, default="even",
                        help="even: strata take turns (default); published: 275/275/275/125/50 prompts with 1, 2, "
                             "3-5, 6-10, 11-15 objects per 1,000 (the paper's section 3.1)")
    parser.add_argument("--generator", choices=GENERATORS, default="script",
                        help="script: prompts from word lists, written at once (default, offline); llm: an LLM writes "
                             "them in the published strata through the judges' endpoint, as the paper's were, and "
                             "they wait as candidates until a person accepts them (python -m arena suites review, "
                             "or the admin tab)")
    parser.add_argument("--writer-model", help="the LLM that writes the prompts (default: the judge model)")
    add_preset_argument(parser, what="(its strata, generator and writer model)")


def _build(db: Database, args, context) -> tuple[PromptImport | None, str]:
    from core.presets import apply_defaults, check_suite, get_preset

    preset = get_preset(args.preset)
    check_suite(preset, SUITE)
    apply_defaults(args, preset.get("suite.options", {}), getattr(args, "given", set()))
    categories = [c.strip() for c in args.categories.split(",")] if args.categories else CATEGORIES
    protocol = f"; preset {preset.label()}"
    if args.generator == "llm":
        if args.strata != "published":
            raise SuiteError("the LLM writer writes the published strata: add --strata published.")
        from datamodel.prompt_candidates import add_candidates

        ask = context.ask(db, args.writer_model)
        specs, left_out = written_specs(ask, args.per_category, seed=args.seed, categories=categories,
                                        model=getattr(ask, "model", args.writer_model or ""))
        written = add_candidates(db, specs)
        dropped = "; ".join(f"{reason} ({n})" for reason, n in sorted(left_out.items(), key=lambda kv: -kv[1]))
        return None, (f"SANEval (LLM writer {getattr(ask, 'model', '')}, seed {args.seed}, published strata"
                      f"{protocol}): {len(specs)} candidates in {len(categories)} categories ({written.inserted} new, "
                      f"{written.updated} rewritten, {written.unchanged} unchanged, {written.decided} already "
                      f"decided). They become prompts when a person accepts them: python -m arena suites review "
                      f"{SUITE}, or the admin tab's prompt check."
                      + (f" Left out of the answers: {dropped}." if dropped else ""))
    specs, result = build_saneval(db, args.per_category, seed=args.seed, categories=categories, strata=args.strata)
    note = ("; spatial's 1-object prompts place the object in the picture"
            if args.strata == "published" and "spatial" in categories else "")
    strata = ", published strata" if args.strata == "published" else ""
    return result, (f"SANEval (seed {args.seed}{strata}{protocol}): {len(specs)} prompts in {len(categories)} "
                    f"categories{note}")


SUITES.register(Suite(
    name=SUITE,
    title="SANEval",
    criteria="Pick the image with every object the prompt asks for, in the right number, with the right colour, "
             "shape or texture, and in the right place relative to the others.",
    imports=(ImportFormat("saneval", "an external SANEval prompt list (CSV/JSONL: text, category[, key, stratum])",
                          run=lambda db, args, context: import_saneval_list(db, args.path)),),
    builders=(Builder("saneval", "SANEval binding, spatial and numeracy prompts: scripted, or written by an LLM and "
                      "checked by a person", add_arguments=_add_build_arguments, run=_build, with_context=True),),
))
