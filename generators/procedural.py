"""Procedural renderers: deterministic PIL drawings that implement the generator interface without any weights.

They exist for the offline demo: unlike random-weight diffusion models they make images in which a person can see
which prompt they were drawn for (the prompt's words are written on them), so clicking through the demo arena is
meaningful. Colours and shapes follow the words of the prompt (a stable hash, not Python's salted ``hash``) and the
seed, so the same (prompt, seed) always gives the same pixels.
"""

from __future__ import annotations

import hashlib
import math
import random
import textwrap
from types import MappingProxyType
from typing import Mapping

from PIL import Image, ImageDraw, ImageFont


def _word_rgb(word: str) -> tuple[int, int, int]:
    digest = hashlib.sha256(word.lower().encode()).digest()
    return digest[0], digest[1], digest[2]


def _words(prompt: str) -> list[str]:
    return [w.strip(".,;:()[]\"'") for w in prompt.split() if w.strip(".,;:()[]\"'")] or ["?"]


def _font(size: int) -> ImageFont.ImageFont:
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
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=_word_rgb(rng.choice(content)), width=3)
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


RENDERERS: Mapping[str, type] = MappingProxyType({"palette": PaletteRenderer, "sketch": SketchRenderer})


def make_renderer(kind: str, name: str, size: int | tuple[int, int]):
    """The procedural renderer ``kind`` (palette | sketch) under the model name ``name``; ``size`` is one side or
    (width, height)."""
    if kind not in RENDERERS:
        raise ValueError(f"unknown procedural renderer {kind!r}; use one of {', '.join(RENDERERS)}.")
    return RENDERERS[kind](name=name, size=size)
