"""Procedural renderers: deterministic PIL drawings that implement the generator interface without any weights.

They exist for the offline demo: unlike random-weight diffusion models they make images in which a person can see
which prompt they were drawn for (the prompt's words are written on them), so clicking through the demo arena is
meaningful. Colours and shapes follow the words of the prompt (a stable hash, not Python's salted ``hash``) and the
seed, so the same (prompt, seed) always gives the same pixels.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import re
import textwrap
from collections.abc import Callable, Mapping
from functools import lru_cache, partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from PIL import Image, ImageDraw, ImageEnhance, ImageFont, ImageOps

from generators.layouts import ON_PLATE, TEXTURE_PATTERNS, Placed, draw_plate, pattern_layer


def _word_rgb(word: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(word.lower().encode()).digest()
    return digest[0], digest[1], digest[2]


def _words(prompt: str) -> list[str]:
    return [w.strip(".,;:()[]\"'") for w in prompt.split() if w.strip(".,;:()[]\"'")] or ["?"]


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):  # Pillow without FreeType
        return ImageFont.load_default()


def _sides(size: int | tuple[int, int]) -> tuple[int, int]:
    """(width, height) from one side or a (width, height) pair (the registry's resolution convention)."""
    width, height = (size, size) if isinstance(size, int) else size
    if width < 48 or height < 48:
        raise ValueError(f"procedural renderers draw at least 48 x 48 pixels, got {width} x {height}; "
                         "raise the model's resolution.")
    return int(width), int(height)


def _contrast(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (0, 0, 0) if sum(rgb) > 380 else (255, 255, 255)


class PaletteRenderer:
    """Vertical colour fields, one per content word, with the prompt's words written over them.

    ``size`` is one side (a square) or (width, height)."""

    def __init__(self, name: str = "demo-palette", size: int | tuple[int, int] = 128):
        self.name = name
        self.width, self.height = _sides(size)
        self.size = min(self.width, self.height)  # the scale of fonts and shapes
        self.params = {"renderer": "palette", "width": self.width, "height": self.height}

    def render(self, prompt: str, seed: int) -> Image.Image:
        rng = random.Random(seed)
        words = _words(prompt)
        content = [w for w in words if len(w) > 3] or words
        image = Image.new("RGB", (self.width, self.height))
        draw = ImageDraw.Draw(image)
        width = self.width / len(content)
        for i, word in enumerate(content):
            r, g, b = _word_rgb(word)
            jitter = rng.randint(-25, 25)
            colour = tuple(max(0, min(255, c + jitter)) for c in (r, g, b))
            draw.rectangle([round(i * width), 0, round((i + 1) * width), self.height], fill=colour)
        for _ in range(3):  # a few seed-dependent discs so images of one prompt differ by seed
            x, y, radius = rng.randint(0, self.width), rng.randint(0, self.height), rng.randint(6, self.size // 5)
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=_word_rgb(rng.choice(content)),
                         width=3)
        font = _font(max(9, self.size // 10))
        lines = textwrap.wrap(" ".join(words), width=max(8, self.width // 9))[:6]
        y = self.size // 12
        for line in lines:
            fill = _contrast(_word_rgb(content[0]))
            draw.text((5, y), line, fill=fill, font=font, stroke_width=1, stroke_fill=tuple(255 - c for c in fill))
            y += self.size // 8
        return image

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
        return [self.render(prompt, seed) for prompt, seed in zip(prompts, seeds, strict=True)]


class SketchRenderer:
    """A line drawing on paper: one shape per content word (shape and place from the word), labelled with it."""

    SHAPES = ("ellipse", "rectangle", "triangle", "star")

    def __init__(self, name: str = "demo-sketch", size: int | tuple[int, int] = 128):
        self.name = name
        self.width, self.height = _sides(size)
        self.size = min(self.width, self.height)  # the scale of fonts and shapes
        self.params = {"renderer": "sketch", "width": self.width, "height": self.height}

    def render(self, prompt: str, seed: int) -> Image.Image:
        rng = random.Random(seed)
        words = _words(prompt)
        content = [w for w in words if len(w) > 3 and w.lower() not in ("image", "with", "without", "from")] or words
        image = Image.new("RGB", (self.width, self.height), (246, 241, 228))
        draw = ImageDraw.Draw(image)
        font = _font(max(9, self.size // 11))
        for word in content[:5]:
            digest = hashlib.sha256(word.lower().encode()).digest()
            shape = self.SHAPES[digest[3] % len(self.SHAPES)]
            cx = 16 + (digest[4] + rng.randint(0, 30)) % (self.width - 32)
            cy = 16 + (digest[5] + rng.randint(0, 30)) % (self.height - 40)
            r = 8 + digest[6] % (self.size // 6)
            ink = tuple(c // 2 for c in _word_rgb(word))
            box = [cx - r, cy - r, cx + r, cy + r]
            if shape == "ellipse":
                draw.ellipse(box, outline=ink, width=2)
            elif shape == "rectangle":
                draw.rectangle(box, outline=ink, width=2)
            elif shape == "triangle":
                draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], outline=ink, width=2)
            else:
                points = []
                for k in range(10):
                    radius = r if k % 2 == 0 else r // 2
                    angle = math.pi * k / 5
                    points.append((cx + radius * math.sin(angle), cy - radius * math.cos(angle)))
                draw.polygon(points, outline=ink, width=2)
            draw.text((cx - r, cy + r + 1), word[:12], fill=ink, font=font)
        caption = textwrap.shorten(" ".join(words), width=max(10, self.width // 6), placeholder="…")
        draw.rectangle([0, self.height - 14, self.width, self.height], fill=(40, 40, 40))
        draw.text((3, self.height - 13), caption, fill=(255, 255, 255), font=_font(10))
        return image

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
        return [self.render(prompt, seed) for prompt, seed in zip(prompts, seeds, strict=True)]


# --- the demo's glyph painters -------------------------------------------------------------------------------------
#
# Three tiers of one painter, so a demo vote has a visible right answer: "painter" draws the prompt's concept as an
# emoji (Debian's fonts-noto-color-emoji) on a coloured scene; "lookalike" often draws a near miss instead (for a
# taxonomy concept a cohyponym's or the hypernym's emoji, for a Commonsense-T2I prompt its partner's state); "scribble"
# draws random shapes. What each drew for a (prompt, seed) is :meth:`GlyphPainter.choice`, so tests check the tiers.

EMOJI_FONTS = (
    "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf",  # Debian fonts-noto-color-emoji
    "/usr/share/fonts/noto/NotoColorEmoji.ttf",
)
EMOJI_SIZE = 109  # Noto Color Emoji is a bitmap font with one strike, 109 px

# name: (sky top, sky bottom, ground, ground height as a share of the image, sun or lamp colour or None)
SCENES: Mapping[str, tuple] = MappingProxyType({
    "studio": ((236, 232, 224), (205, 198, 186), (150, 140, 128), 0.22, None),
    "table": ((214, 196, 170), (190, 168, 138), (122, 84, 52), 0.34, (255, 236, 190)),
    "vanity": ((250, 218, 228), (236, 188, 204), (176, 120, 140), 0.28, (255, 250, 230)),
    "room": ((226, 214, 190), (204, 188, 160), (136, 98, 66), 0.25, (255, 238, 180)),
    "kitchen": ((208, 226, 232), (184, 206, 214), (96, 110, 120), 0.30, (255, 255, 236)),
    "desert": ((120, 182, 236), (246, 206, 150), (222, 176, 108), 0.30, (255, 226, 120)),
    "street": ((150, 170, 196), (200, 206, 214), (92, 92, 100), 0.26, (255, 240, 200)),
    "cafe": ((122, 84, 60), (176, 128, 90), (86, 56, 38), 0.30, (255, 214, 150)),
    "park": ((110, 176, 238), (196, 228, 250), (88, 160, 74), 0.32, (255, 236, 120)),
    "sky": ((70, 140, 220), (170, 210, 246), (96, 150, 80), 0.18, (255, 240, 140)),
    "field": ((120, 180, 236), (240, 220, 170), (214, 176, 70), 0.38, (255, 220, 110)),
    "snow": ((176, 196, 216), (226, 234, 242), (246, 248, 252), 0.34, (236, 240, 250)),
    "night": ((16, 20, 52), (46, 52, 96), (30, 40, 46), 0.28, (236, 236, 210)),
    "night sea": ((16, 20, 52), (46, 52, 96), (26, 46, 84), 0.34, None),  # a moon is drawn as an emoji
    "dark": ((14, 14, 18), (30, 30, 36), (22, 22, 26), 0.25, None),
})


def _stable_rng(*parts: object) -> random.Random:
    """A random.Random seeded from ``parts`` by SHA-256 (not Python's salted hash): the same parts, the same draws."""
    return random.Random(int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big"))


@lru_cache(maxsize=1)
def emoji_font() -> ImageFont.FreeTypeFont | None:
    """Noto Color Emoji, or None when the Debian package fonts-noto-color-emoji is not installed."""
    for path in EMOJI_FONTS:
        if Path(path).exists():
            return ImageFont.truetype(path, EMOJI_SIZE)
    return None


@lru_cache(maxsize=256)
def glyph_image(glyph: str, tint: str = "") -> Image.Image:
    """One emoji as a cropped RGBA image (tinted: its luminance recoloured towards ``tint``, '#rrggbb').

    Without the emoji font the glyph's code points are written in the default font, and a warning says to install
    fonts-noto-color-emoji (``make install``)."""
    font = emoji_font()
    canvas = Image.new("RGBA", (EMOJI_SIZE + 40, EMOJI_SIZE + 40), (0, 0, 0, 0))
    draw = ImageDraw.Draw(canvas)
    if font is None:
        logging.getLogger(__name__).warning(
            "the emoji font is missing, so the demo painters write code points instead of pictures: install the "
            "Debian package fonts-noto-color-emoji (make install, or sudo apt-get install fonts-noto-color-emoji).")
        draw.text((4, 40), " ".join(f"U+{ord(c):04X}" for c in glyph), fill=(0, 0, 0, 255), font=_font(14))
    else:
        draw.text((0, 0), glyph, font=font, embedded_color=True)
    canvas = canvas.crop(canvas.getbbox() or (0, 0, 1, 1))
    if tint:
        grey = ImageOps.grayscale(canvas.convert("RGB"))
        coloured = ImageOps.colorize(grey, black=(20, 16, 12), white=tint, mid=None).convert("RGBA")
        coloured.putalpha(canvas.getchannel("A"))
        canvas = coloured
    return canvas


def paste_glyph(image: Image.Image, glyph: Image.Image, side: int, centre: tuple[int, int]) -> None:
    """Paste ``glyph`` (RGBA) onto ``image`` scaled so its longer side is ``side`` pixels, centred on ``centre``."""
    scale = side / max(glyph.size)
    glyph = glyph.resize((max(1, round(glyph.width * scale)), max(1, round(glyph.height * scale))),
                         Image.Resampling.LANCZOS)
    image.alpha_composite(glyph, (centre[0] - glyph.width // 2, centre[1] - glyph.height // 2))


def placed_glyph(placed: Placed) -> Image.Image:
    """The RGBA emoji of ``placed`` (:class:`generators.layouts.Placed`) as it is pasted: tinted, and patterned
    with its texture."""
    glyph = glyph_image(placed.glyph, placed.tint)
    if placed.texture not in TEXTURE_PATTERNS:
        return glyph
    kind, ink = TEXTURE_PATTERNS[placed.texture]
    alpha = glyph.getchannel("A")
    pattern = pattern_layer(glyph.size, kind, ink)
    pattern.putalpha(Image.composite(pattern.getchannel("A"), Image.new("L", glyph.size, 0), alpha))
    return Image.alpha_composite(glyph, pattern)


def draw_layout(image: Image.Image, layout: list[Placed]) -> None:
    """Paste each placed emoji of a layout (:mod:`generators.layouts`; on its plate, with its accent) onto ``image``
    (RGBA), in order."""
    width, height = image.size
    scale = min(width, height)
    draw = ImageDraw.Draw(image)
    for placed in layout:
        cx, cy, side = placed.x * width, placed.y * height, placed.side * scale
        if placed.plate:
            draw_plate(draw, placed.plate, cx, cy, side / 2)
        paste_glyph(image, placed_glyph(placed), round(side * (ON_PLATE if placed.plate else 1)),
                    (round(cx), round(cy)))
        if placed.accent:
            paste_glyph(image, glyph_image(placed.accent), max(8, round(side * 0.45)),
                        (round(min(width - side * 0.2, cx + side * 0.45)), round(max(side * 0.2, cy - side * 0.5))))


@lru_cache(maxsize=1)
def demo_glyphs() -> dict:
    """The demo's emoji table (suites/data/demo_glyphs.json) joined with the demo prompts it draws.

    Returns {"concepts": {lemma: entry + hypernym glyphs + cohyponym lemmas}, "commonsense": {prompt: entry with
    its partner prompt}, "saneval": {prompt: {"prompt", "structure": its metadata}} of the demo's SANEval prompts,
    "semvarbench": {prompt: {"prompt", "item", "role", "scene", "own", "partner"}} of the SemVarBench sample (own:
    the layout of the prompt's meaning, partner: the other meaning's), "objects": {word: emoji}, "tints"}."""
    from suites.saneval import demo_specs as saneval_demo_specs
    from suites.semvarbench import sample_specs as semvar_sample_specs
    from suites.taxonomy import DEMO_FILE, lemma_of

    table = json.loads(DEMO_FILE.with_name("demo_glyphs.json").read_text(encoding="utf-8"))
    concepts = {}
    for record in json.loads(DEMO_FILE.read_text(encoding="utf-8")):
        lemma = record["lemma"].replace("_", " ")
        if lemma not in table["concepts"]:
            continue
        concepts[lemma] = {
            **table["concepts"][lemma],
            "hypernym_glyphs": [table["hypernyms"][h] for h in record["hypernyms"] if h in table["hypernyms"]],
            # the siblings with an emoji: N(v) lists an Easy concept among its own cohyponyms (as the authors' data
            # does), and a near miss is another concept
            "cohyponyms": sorted(({lemma_of(c) for c in record["cohyponyms"]} - {lemma}) & set(table["concepts"])),
        }
    rows = table["commonsense"]
    commonsense = {row["prompt"]: {**row, "partner": rows[i ^ 1]["prompt"]} for i, row in enumerate(rows)}
    saneval = {spec.text: {"prompt": spec.text, "structure": spec.metadata} for spec in saneval_demo_specs()}
    semvar = {}
    for spec in semvar_sample_specs():
        item = table["semvarbench"][spec.item_key]
        meanings = ("permutation", "anchor") if spec.role == "permutation" else ("anchor", "permutation")
        semvar[spec.text] = {"prompt": spec.text, "item": spec.item_key, "role": spec.role, "scene": item["scene"],
                             "own": item[meanings[0]], "partner": item[meanings[1]]}
    return {"concepts": concepts, "commonsense": commonsense, "saneval": saneval, "semvarbench": semvar,
            "objects": table["objects"], "tints": table["tints"]}


_TAXONOMY_PROMPT = re.compile(r"^an image of (?:an? )?(.+?)(?: \(.*\))?\.?$", re.IGNORECASE | re.DOTALL)


class GlyphPainter:
    """A demo model that draws a prompt's concept as an emoji on a scene; ``tier`` says how often it is right.

    ``painter``: always the prompt's own emoji (the concept's, or the Commonsense-T2I prompt's state), large, on the
    concept's scene with its sun or lamp. ``lookalike``: the same scene, but for 60 % of (prompt, seed) a near miss:
    a cohyponym's emoji (two thirds of them) or the hypernym's, and for Commonsense-T2I prompts the partner prompt's
    state; smaller and off centre. A SANEval or SemVarBench demo prompt is drawn as several placed emoji
    (:mod:`generators.layouts`): the painter as the prompt says (each colour, shape, texture, place and count), the
    lookalike for 60 % a near miss (one count one off, attributes on the wrong objects, the relation reversed, or the
    SemVarBench item's other meaning), a little smaller. ``scribble``: random shapes on a random gradient, no emoji.
    A prompt the emoji table does not know (``python -m generators run`` on other suites) gets a seed-chosen emoji
    from the table. Pixels depend only on (tier, prompt, seed, size)."""

    TIERS = ("painter", "lookalike", "scribble")
    MISS_RATE = 0.6

    def __init__(self, tier: str, name: str, size: int | tuple[int, int] = 256):
        if tier not in self.TIERS:
            raise ValueError(f"unknown painter tier {tier!r}; use one of {', '.join(self.TIERS)}.")
        self.tier, self.name = tier, name
        self.width, self.height = _sides(size)
        self.size = min(self.width, self.height)
        self.params = {"renderer": tier, "width": self.width, "height": self.height}

    def entry(self, prompt: str) -> tuple[str, dict | None]:
        """('taxonomy', the concept's entry) | ('commonsense' | 'saneval' | 'semvarbench', the prompt's entry) |
        ('unknown', None)."""
        table = demo_glyphs()
        text = " ".join(prompt.split())
        for kind in ("commonsense", "saneval", "semvarbench"):
            if text in table[kind]:
                return kind, table[kind][text]
        match = _TAXONOMY_PROMPT.match(text)
        if match and match.group(1).lower() in table["concepts"]:
            return "taxonomy", table["concepts"][match.group(1).lower()]
        return "unknown", None

    def choice(self, prompt: str, seed: int) -> tuple[str, dict | None]:
        """What this tier draws for (prompt, seed): (what, entry) with what in concept | cohyponym | hypernym |
        partner | near miss | unknown | shapes; entry holds glyph, accent, tint, scene and effect, or for a SANEval
        or SemVarBench prompt its scene and ``layout`` (:mod:`generators.layouts`)."""
        if self.tier == "scribble":
            return "shapes", None
        kind, entry = self.entry(prompt)
        rng = _stable_rng("choice", prompt, seed)
        if kind == "unknown":
            table = demo_glyphs()["concepts"]
            return "unknown", table[rng.choice(sorted(table))]
        assert entry is not None  # every kind but unknown has its entry
        right = self.tier == "painter" or rng.random() >= self.MISS_RATE
        if kind in ("saneval", "semvarbench"):
            return self._composition(kind, entry, right, rng)
        if right:
            return "concept", entry
        if kind == "commonsense":
            return "partner", demo_glyphs()["commonsense"][entry["partner"]]
        if entry["cohyponyms"] and (rng.random() < 2 / 3 or not entry["hypernym_glyphs"]):
            return "cohyponym", demo_glyphs()["concepts"][rng.choice(entry["cohyponyms"])]
        return "hypernym", {**entry, "glyph": rng.choice(entry["hypernym_glyphs"]), "accent": "", "tint": ""}

    def _composition(self, kind: str, entry: dict, right: bool, rng: random.Random) -> tuple[str, dict]:
        """(what, {"prompt", "scene", "layout"[, "structure"]}) of a SANEval or SemVarBench prompt: its own layout,
        or the lookalike's near miss (SANEval: :func:`generators.layouts.saneval_near_miss`; SemVarBench: the
        item's other meaning), drawn smaller by the lookalike."""
        from generators.layouts import saneval_layout, saneval_near_miss, semvar_layout, shrunk
        from suites.saneval import BINDING_CATEGORIES, WORDS

        table = demo_glyphs()
        if kind == "saneval":
            structure = entry["structure"]
            if not right:
                structure = saneval_near_miss(structure, rng, {name: getattr(WORDS, name)
                                                               for name in BINDING_CATEGORIES})
            layout = saneval_layout(structure, table["objects"], table["tints"])
            drawn = {"prompt": entry["prompt"], "scene": "studio", "structure": structure}
        else:
            layout = semvar_layout(entry["own" if right else "partner"], table["objects"])
            drawn = {"prompt": entry["prompt"], "scene": entry["scene"]}
        if self.tier == "lookalike":
            layout = shrunk(layout, 0.85)
        what = "concept" if right else ("near miss" if kind == "saneval" else "partner")
        return what, {**drawn, "layout": layout}

    def _scene(self, draw: ImageDraw.ImageDraw, scene: str, rng: random.Random) -> None:
        """Paint the sky gradient, the ground and the sun or lamp (on a night sea, a few stars)."""
        top, bottom, ground, share, sun = SCENES.get(scene, SCENES["studio"])
        horizon = round(self.height * (1 - share))
        for y in range(horizon):
            t = y / max(1, horizon - 1)
            draw.line([(0, y), (self.width, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))
        draw.rectangle([0, horizon, self.width, self.height], fill=ground)
        draw.line([(0, horizon), (self.width, horizon)], fill=tuple(max(0, c - 40) for c in ground), width=2)
        if sun:
            r = self.size // 12
            x = rng.choice((self.width // 7, self.width * 6 // 7)) + rng.randint(-8, 8)
            y = self.height // 7 + rng.randint(-6, 6)
            draw.ellipse([x - r, y - r, x + r, y + r], fill=sun)
        elif scene == "night sea":  # a few stars, so that no two (prompt, seed) share a picture
            for _ in range(12):
                x, y = rng.randrange(self.width), rng.randrange(max(1, horizon - 2))
                draw.point([(x, y), (x + 1, y)], fill=tuple(min(255, c + 70) for c in top))

    def placement(self, prompt: str, seed: int) -> tuple[str, dict | None, int, tuple[int, int]]:
        """(what, entry) of :meth:`choice`, the side of the main emoji's square and its centre."""
        what, entry = self.choice(prompt, seed)
        if entry is None or "layout" in entry:  # shapes, or a layout of several emoji
            return what, entry, 0, (0, 0)
        rng = _stable_rng("place", self.tier, prompt, seed, self.width, self.height)
        horizon = round(self.height * (1 - SCENES.get(entry.get("scene", "studio"), SCENES["studio"])[3]))
        good = what == "concept" and self.tier == "painter"
        side = round(self.size * (0.58 if good else 0.42))
        cx = self.width // 2 + rng.randint(-self.width // 14, self.width // 14) * (1 if good else 3)
        cy = min(horizon, self.height - side // 2) - side // 3 + rng.randint(-4, 4)
        return what, entry, side, (cx, cy)

    def render(self, prompt: str, seed: int) -> Image.Image:
        rng = _stable_rng(self.tier, prompt, seed, self.width, self.height)
        what, entry, side, (cx, cy) = self.placement(prompt, seed)
        image = Image.new("RGBA", (self.width, self.height))
        draw = ImageDraw.Draw(image)
        if what == "shapes":
            self._scribble(draw, rng)
            return image.convert("RGB")
        assert entry is not None  # only shapes come without an entry
        self._scene(draw, entry.get("scene", "studio"), rng)
        if "layout" in entry:
            draw_layout(image, entry["layout"])
            return image.convert("RGB")
        shadow = (cx - side // 2, cy + side // 2 - side // 10, cx + side // 2, cy + side // 2 + side // 12)
        shade = Image.new("RGBA", image.size, (0, 0, 0, 0))
        ImageDraw.Draw(shade).ellipse(shadow, fill=(0, 0, 0, 70))
        image.alpha_composite(shade)
        glyph = glyph_image(entry["glyph"], entry.get("tint", ""))
        effect = entry.get("effect", "")
        if effect in ("unlit", "dark"):
            glyph = ImageEnhance.Brightness(glyph).enhance(0.55)
        elif effect == "light":
            glyph = ImageEnhance.Brightness(glyph).enhance(1.25)
        elif effect in ("green", "bare"):  # young green wheat; a leafless grey-brown tree
            dark, light = ((10, 40, 10), (150, 230, 120)) if effect == "green" else ((40, 30, 24), (190, 176, 160))
            alpha = glyph.getchannel("A")
            glyph = ImageOps.colorize(ImageOps.grayscale(glyph.convert("RGB")), dark, light).convert("RGBA")
            glyph.putalpha(alpha)
        elif effect in ("droop", "slide", "spill", "melt"):
            glyph = glyph.rotate(-80 if effect == "slide" else 35, expand=True, resample=Image.Resampling.BICUBIC)
        if effect == "glow":
            r = side * 2 // 3
            glow = Image.new("RGBA", image.size, (0, 0, 0, 0))
            ImageDraw.Draw(glow).ellipse([cx - r, cy - r, cx + r, cy + r], fill=(255, 240, 160, 150))
            image.alpha_composite(glow)
        paste_glyph(image, glyph, side, (cx, cy))
        if entry.get("accent"):
            accent = glyph_image(entry["accent"])
            ax = cx + side // 2 if cx < self.width // 2 else cx - side // 2
            paste_glyph(image, accent, side // 2, (max(side // 4, min(self.width - side // 4, ax)), cy - side // 3))
        return image.convert("RGB")

    def _scribble(self, draw: ImageDraw.ImageDraw, rng: random.Random) -> None:
        top = tuple(rng.randint(0, 255) for _ in range(3))
        bottom = tuple(rng.randint(0, 255) for _ in range(3))
        for y in range(self.height):
            t = y / max(1, self.height - 1)
            draw.line([(0, y), (self.width, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))
        for _ in range(rng.randint(5, 9)):
            x, y = rng.randint(0, self.width), rng.randint(0, self.height)
            r = rng.randint(self.size // 20, self.size // 5)
            colour = tuple(rng.randint(0, 255) for _ in range(3))
            if rng.random() < 0.5:
                draw.ellipse([x - r, y - r, x + r, y + r], fill=colour)
            else:
                draw.polygon([(x + rng.randint(-r, r), y + rng.randint(-r, r)) for _ in range(3)], fill=colour)

    def generate(self, prompts: list[str], seeds: list[int]) -> list[Image.Image]:
        return [self.render(prompt, seed) for prompt, seed in zip(prompts, seeds, strict=True)]


RENDERERS: Mapping[str, Callable[..., Any]] = MappingProxyType({
    "palette": PaletteRenderer, "sketch": SketchRenderer,
    **{tier: partial(GlyphPainter, tier) for tier in GlyphPainter.TIERS},
})


def make_renderer(kind: str, name: str, size: int | tuple[int, int]):
    """The procedural renderer ``kind`` (palette | sketch | painter | lookalike | scribble) under the model name
    ``name``; ``size`` is one side or (width, height)."""
    if kind not in RENDERERS:
        raise ValueError(f"unknown procedural renderer {kind!r}; use one of {', '.join(RENDERERS)}.")
    return RENDERERS[kind](name=name, size=size)
