"""What the demo painters draw for a compositional prompt: several emoji placed as the prompt says.

A SANEval prompt (:func:`suites.saneval.demo_specs`) carries its structure in its metadata (objects, their colour,
shape or texture, a spatial relation, counts); :func:`saneval_layout` turns it into placed emoji:

- colour and texture binding: each object's emoji recoloured towards its attribute's tint (``tints`` in
  ``suites/data/demo_glyphs.json``: "red" is #e0282e, "wooden" #a8733e), a texture also with its pattern
  (:data:`TEXTURE_PATTERNS`: wood grain, a knit's stitches, fur's strokes, marble's veins, a shine on metal, glass,
  plastic and rubber), the objects in a row;
- shape binding: each object on a plate of its shape (round, square, triangular, ..., heart-shaped, cylindrical);
- spatial: the subject left of, right of, above or below the object;
- numeracy: as many copies of each object's emoji as counted, in a grid.

:func:`saneval_near_miss` is the lookalike's near miss of a structure: one count one off, the attributes handed to
the wrong objects (or another attribute for a single object), the relation's two objects swapped.

A SemVarBench demo item (``suites/data/semvarbench_sample``) has two meanings: the anchor's (which its paraphrase
shares) and the permutation's; ``semvarbench`` in the glyph table holds each meaning's layout, and the lookalike's
near miss is the other meaning's. Positions and sizes are shares of the image's sides, so the layouts draw at any
size; :func:`generators.procedural.draw_layout` draws them (with :func:`draw_plate` and :func:`pattern_layer`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any

from PIL import Image, ImageDraw

SHAPE_PLATE = (246, 240, 226)  # the plate an object of a shape-binding prompt stands on
SHAPE_INK = (70, 60, 50)
ON_PLATE = 0.6  # an emoji on a plate is drawn at this share of its side; the plate fills the side (its cell)


@dataclass(frozen=True)
class Placed:
    """One emoji of a layout: ``glyph`` recoloured towards ``tint`` ('#rrggbb' or ''), centred on (``x``, ``y``)
    with its longer side ``side`` (shares of the image), on a plate of ``plate`` (a shape word, or ''), with
    ``accent`` (an emoji, or '') at its upper right and the pattern of ``texture`` (a texture word, or '')."""

    glyph: str
    x: float
    y: float
    side: float
    tint: str = ""
    plate: str = ""
    accent: str = ""
    texture: str = ""


def _row(glyphs: list[tuple[str, str, str, str]], y: float = 0.58) -> list[Placed]:
    """(glyph, tint, plate, texture) side by side, each as large as the row allows."""
    n = len(glyphs)
    side = min(0.42, 0.94 / n)
    return [Placed(glyph, (k + 0.5) / n, y, side, tint, plate, texture=texture)
            for k, (glyph, tint, plate, texture) in enumerate(glyphs)]


def _grid(glyphs: list[str]) -> list[Placed]:
    """The glyphs on a grid of near-square cells, row by row."""
    columns = math.ceil(math.sqrt(len(glyphs)))
    rows = math.ceil(len(glyphs) / columns)
    cell = 0.86 / max(columns, rows)
    top = 0.55 - cell * (rows - 1) / 2
    return [Placed(glyph, 0.5 + cell * (k % columns - (columns - 1) / 2), top + cell * (k // columns), cell * 0.86)
            for k, glyph in enumerate(glyphs)]


# where the relation puts the subject and the object: (subject x, y), (object x, y)
RELATION_PLACES = {"left of": ((0.28, 0.6), (0.72, 0.6)), "right of": ((0.72, 0.6), (0.28, 0.6)),
                   "above": ((0.5, 0.26), (0.5, 0.7)), "below": ((0.5, 0.7), (0.5, 0.26)),
                   "next to": ((0.3, 0.6), (0.7, 0.6)), "on top of": ((0.5, 0.36), (0.5, 0.7))}


def saneval_layout(structure: dict, objects: dict[str, str], tints: dict[str, dict[str, str]]) -> list[Placed]:
    """The placed emoji of a SANEval prompt's ``structure`` (its metadata); ``objects``: {object word: emoji},
    ``tints``: {"color" | "texture": {word: '#rrggbb'}}."""
    if "counts" in structure:
        return _grid([objects[name] for name, count in structure["counts"].items() for _ in range(count)])
    if "relation" in structure:
        relation = structure["relation"]
        (sx, sy), (ox, oy) = RELATION_PLACES[relation["relation"]]
        return [Placed(objects[relation["subject"]], sx, sy, 0.34), Placed(objects[relation["object"]], ox, oy, 0.34)]
    kind, attributes = structure["attribute_kind"], structure["attributes"]
    return _row([(objects[name], tints[kind][attributes[name]] if kind in tints else "",
                  attributes[name] if kind == "shape" else "", attributes[name] if kind == "texture" else "")
                 for name in structure["objects"]])


def saneval_near_miss(structure: dict, rng: random.Random, attribute_words: dict[str, tuple[str, ...]]) -> dict:
    """The structure with one thing wrong (module docstring); ``attribute_words``: {kind: the words of that kind}."""
    if "counts" in structure:
        counts = dict(structure["counts"])
        name = rng.choice(sorted(counts))
        counts[name] += 1 if counts[name] == 1 or rng.random() < 0.5 else -1
        return {**structure, "counts": counts}
    if "relation" in structure:
        relation = structure["relation"]
        return {**structure, "relation": {**relation, "subject": relation["object"], "object": relation["subject"]}}
    names, attributes = structure["objects"], structure["attributes"]
    if len(set(attributes.values())) > 1:  # hand each object the next one's attribute
        wrong = {name: attributes[names[(k + 1) % len(names)]] for k, name in enumerate(names)}
    else:
        other = rng.choice([w for w in attribute_words[structure["attribute_kind"]] if w not in attributes.values()])
        wrong = {name: other for name in names}
    return {**structure, "attributes": wrong}


def semvar_layout(meaning: list[dict], objects: dict[str, str]) -> list[Placed]:
    """The placed emoji of one meaning of a SemVarBench demo item (the glyph table's ``semvarbench`` entries)."""
    return [Placed(objects[thing["object"]], thing["x"], thing["y"], thing["size"], thing.get("tint", ""),
                   accent=thing.get("accent", "")) for thing in meaning]


def shrunk(layout: list[Placed], factor: float) -> list[Placed]:
    """The layout with every emoji ``factor`` times its size (the lookalike draws smaller)."""
    return [replace(placed, side=placed.side * factor) for placed in layout]


def draw_plate(draw: ImageDraw.ImageDraw, shape: str, cx: float, cy: float, r: float) -> None:
    """A plate of ``shape`` centred on (cx, cy), ``r`` its half side."""
    style: dict[str, Any] = {"fill": SHAPE_PLATE, "outline": SHAPE_INK, "width": max(2, round(r / 14))}

    def polygon(corners: int, start: float, radii=(1.0,)) -> list[tuple[float, float]]:
        return [(cx + r * radii[k % len(radii)] * math.cos(start + 2 * math.pi * k / corners),
                 cy + r * radii[k % len(radii)] * math.sin(start + 2 * math.pi * k / corners)) for k in range(corners)]

    if shape == "round":
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], **style)
    elif shape == "oval":
        draw.ellipse([cx - r, cy - r * 0.62, cx + r, cy + r * 0.62], **style)
    elif shape == "square":
        draw.rectangle([cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85], **style)
    elif shape == "rectangular":
        draw.rectangle([cx - r, cy - r * 0.6, cx + r, cy + r * 0.6], **style)
    elif shape == "triangular":
        draw.polygon(polygon(3, -math.pi / 2), **style)
    elif shape == "hexagonal":
        draw.polygon(polygon(6, 0), **style)
    elif shape == "diamond-shaped":
        draw.polygon([(cx, cy - r), (cx + r * 0.7, cy), (cx, cy + r), (cx - r * 0.7, cy)], **style)
    elif shape == "star-shaped":
        draw.polygon(polygon(10, -math.pi / 2, (1.0, 0.5)), **style)
    elif shape == "heart-shaped":
        heart = ((16 * math.sin(t) ** 3, 13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t)
                  - math.cos(4 * t)) for t in (2 * math.pi * k / 48 for k in range(48)))  # the heart curve
        points = [(cx + r * 0.95 * x / 16, cy - r * 0.95 * y / 16) for x, y in heart]
        draw.polygon(points, **style)
    elif shape == "cylindrical":
        top, bottom = cy - r * 0.8, cy + r * 0.8
        draw.rectangle([cx - r * 0.6, top, cx + r * 0.6, bottom], fill=SHAPE_PLATE)
        draw.ellipse([cx - r * 0.6, bottom - r * 0.22, cx + r * 0.6, bottom + r * 0.22], **style)
        draw.line([(cx - r * 0.6, top), (cx - r * 0.6, bottom)], fill=SHAPE_INK, width=style["width"])
        draw.line([(cx + r * 0.6, top), (cx + r * 0.6, bottom)], fill=SHAPE_INK, width=style["width"])
        draw.ellipse([cx - r * 0.6, top - r * 0.22, cx + r * 0.6, top + r * 0.22], **style)


# texture: (pattern, its ink as RGBA); the pattern is drawn over the tinted emoji, inside its outline
TEXTURE_PATTERNS = {"wooden": ("grain", (70, 40, 16, 150)), "knitted": ("stitches", (255, 236, 230, 170)),
                    "furry": ("strokes", (90, 56, 24, 150)), "fluffy": ("strokes", (200, 190, 176, 170)),
                    "marble": ("veins", (110, 110, 120, 170)), "leather": ("stitches", (40, 20, 8, 110)),
                    "metallic": ("shine", (255, 255, 255, 150)), "rubber": ("shine", (150, 150, 150, 110)),
                    "plastic": ("shine", (255, 255, 255, 130)), "glass": ("shine", (255, 255, 255, 190))}


def pattern_layer(size: tuple[int, int], kind: str, ink: tuple[int, int, int, int]) -> Image.Image:
    """An RGBA layer of ``size`` with the pattern ``kind`` in ``ink`` (drawn from a fixed seed: same pixels)."""
    layer = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    width, height = size
    step = max(4, min(size) // 12)
    rng = random.Random(kind)
    if kind == "grain":
        for y in range(0, height, step):
            draw.arc([-width // 2, y - step, width * 3 // 2, y + step * 2], 200, 340, fill=ink, width=2)
    elif kind == "stitches":
        for y in range(0, height, step):
            for x in range(0, width, step):
                draw.line([(x, y), (x + step // 2, y + step)], fill=ink, width=2)
                draw.line([(x + step, y), (x + step // 2, y + step)], fill=ink, width=2)
    elif kind == "strokes":
        for _ in range(width * height // (step * 3)):
            x, y = rng.randrange(width), rng.randrange(height)
            draw.line([(x, y), (x + rng.randint(-3, 3), y + step // 2)], fill=ink, width=1)
    elif kind == "veins":
        for _ in range(4):
            x, y = rng.randrange(width), 0
            while y < height:
                nx, ny = x + rng.randint(-step, step), y + step
                draw.line([(x, y), (nx, ny)], fill=ink, width=2)
                x, y = nx, ny
    elif kind == "shine":
        draw.line([(width * 0.2, height * 0.15), (width * 0.5, height * 0.1)], fill=ink, width=max(2, step // 2))
        draw.ellipse([width * 0.62, height * 0.18, width * 0.72, height * 0.28], fill=ink)
    return layer
