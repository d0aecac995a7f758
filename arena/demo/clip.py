"""The demo's CLIP: a tiny open_clip model trained offline on the demo painters' emoji, so the demo metrics can rank.

The offline demo's arena models have a known order (:mod:`generators.demo`): demo-painter draws the concept's emoji,
demo-lookalike often a cohyponym's or the hypernym's, demo-scribble random shapes, demo-tiny-unet random-weight noise.
A tiny *random* CLIP cannot see any of that, so the demo's CLIP columns (``clip_score``, the taxonomy similarities
``clip_lemma`` / ``clip_hypernym`` / ``clip_cohyponym`` / ``clip_specificity``, the commonsense metric and the
CLIP-cosine reward stand-in) are computed with this model instead, recorded as ``open_clip:demo-emoji-clip``.

What it is: the tiny open_clip architecture of :func:`judges.metrics.clip_scores.build_tiny_clip` (CLIP's real
tokenizer, 32 px ViT, a 40-token context: the longest demo prompt has 36), trained from a fixed seed on CPU with
CLIP's symmetric contrastive loss (:data:`RECIPE`: 400 steps, each showing every look 8 times with one of its texts;
the token embedding stays at its seeded random values, which keeps a step cheap), then saved as a ``local-dir:``
folder and loaded like real weights. It is trained once per cache folder (``<cache_dir>/tiny/demo-emoji-clip``: 40 s
on two idle cores, about 3 minutes on busy ones, stopped after ``max_seconds`` whatever the step; ``training.json``
there records the recipe, the steps and time taken, the last loss and the accuracy on fresh augmented images of
naming each look by its first text) and trained again only when :data:`RECIPE` changes.

What it is trained on, all made here, offline:

- images: each "look" of the demo's emoji table (``suites/data/demo_glyphs.json``, drawn with Noto Color Emoji by
  :func:`generators.procedural.glyph_image`): a concept's glyph with its tint and accent, and each hypernym's glyph,
  pasted at a random size (30-65 % of the side), place and slight rotation, with random brightness, on a random
  background (a sky-and-ground scene from :data:`generators.procedural.SCENES` with jittered colours, a random
  gradient, a flat colour or random clutter shapes), drawn at 64 px. These are not the demo's images: no painter
  is called, the scenes' colours are jittered, and size and place are drawn at random;
- texts: for a concept look, the texts the CLIP metric compares its images with (the WordNet lemma, e.g.
  "cowboy hat", and both demo prompts "An image of cowboy hat" and "An image of cowboy hat (<WordNet definition>)"),
  and the emoji's Unicode name ("face with cowboy hat") where no other look shares it; for a hypernym look its
  lemma, "An image of <lemma>" and its emoji's name. WordNet cohyponyms of the demo concepts that have no emoji
  ("brown", "pastel", "bowler hat", ...) are negatives only: texts that no training image shows.

So its scores show the metric pipeline working on a demo whose right answer is known, by construction: they are not
a measurement of real text-to-image models, and it knows nothing outside the demo's emoji. Commonsense-T2I prompts
are not in its training data (their states are drawn with effects, not separate emoji), nor are the SemVarBench and
SANEval demo prompts (several emoji placed, recoloured or counted, :mod:`generators.layouts`), so its numbers on those
three suites are as uninformative as the random model's.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from PIL import Image, ImageDraw, ImageEnhance

DEMO_CLIP_NAME = "demo-emoji-clip"  # the folder under <cache_dir>/tiny, and the scorer open_clip:demo-emoji-clip
class Recipe(TypedDict):
    """What the demo CLIP's training does (:data:`RECIPE`)."""

    version: int
    seed: int
    steps: int
    learning_rate: float
    weight_decay: float
    warmup: int
    images_per_look: int
    images_per_step: int
    negatives_per_step: int
    render_side: int
    context_length: int
    max_seconds: float


RECIPE: Recipe = {  # what the training does; a folder trained with another recipe is trained again
    "version": 1, "seed": 0, "steps": 400, "learning_rate": 3e-3, "weight_decay": 0.05, "warmup": 20,
    "images_per_look": 96, "images_per_step": 8, "negatives_per_step": 16, "render_side": 64, "context_length": 40,
    "max_seconds": 300,
}

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Look:
    """One thing the demo painters draw: a glyph with its tint and accent, and the texts that name it."""

    glyph: str
    tint: str
    accent: str
    texts: tuple[str, ...]


def _emoji_name(glyph: str) -> str:
    """'🤠' → 'face with cowboy hat': the Unicode names of the glyph's pictographs (variation selectors left out)."""
    names = [unicodedata.name(c, "") for c in glyph if not 0xFE00 <= ord(c) <= 0xFE0F and c != "\u200d"]
    return " ".join(name.lower() for name in names if name)


def training_looks() -> tuple[list[Look], list[str]]:
    """(the looks with their texts, the negative texts): see the module docstring. An emoji name that another look
    shares or that the metric compares with (three coins are called "coin", which is the hypernym's lemma) is left
    out, and so would be a lemma or prompt of two looks."""
    from generators.procedural import demo_glyphs
    from suites.taxonomy import DEMO_FILE, demo_specs, lemma_of

    table = json.loads(DEMO_FILE.with_name("demo_glyphs.json").read_text(encoding="utf-8"))
    concepts = demo_glyphs()["concepts"]
    texts: dict[tuple[str, str, str], list[str]] = {}
    for lemma, entry in concepts.items():
        texts.setdefault((entry["glyph"], entry["tint"], entry["accent"]), []).append(lemma)
    for spec in demo_specs():  # both prompt variants, exactly as the clip_score metric reads them
        entry = concepts.get(spec.metadata["lemma"].replace("_", " "))
        if entry:
            texts[(entry["glyph"], entry["tint"], entry["accent"])].append(spec.text)
    for synset, glyph in table["hypernyms"].items():
        texts.setdefault((glyph, "", ""), []).extend([lemma_of(synset), f"An image of {lemma_of(synset)}"])
    owners: dict[str, set] = {}
    for key, names in texts.items():
        for text in names:
            owners.setdefault(text, set()).add(key)
    emoji = {key: _emoji_name(key[0]) for key in texts}
    for key, name in emoji.items():  # a name the metric compares with, or shared by two looks, is left out
        if name and name not in owners and list(emoji.values()).count(name) == 1:
            texts[key].append(name)
    looks = [Look(*key, tuple(dict.fromkeys(t for t in names if len(owners.get(t, {key})) == 1)))
             for key, names in texts.items()]
    records = json.loads(DEMO_FILE.read_text(encoding="utf-8"))
    named = {text for look in looks for text in look.texts} | set(owners)
    negatives = sorted({lemma_of(s) for record in records for s in (*record["cohyponyms"], *record["hypernyms"])}
                       - named)
    return [look for look in looks if look.texts], negatives


def _background(side: int, rng: random.Random) -> Image.Image:
    """A random scene, gradient, flat colour or clutter of shapes."""
    from generators.procedural import SCENES

    image = Image.new("RGBA", (side, side))
    draw = ImageDraw.Draw(image)
    kind = rng.random()
    jitter = lambda colour: tuple(max(0, min(255, c + rng.randint(-30, 30))) for c in colour)  # noqa: E731
    if kind < 0.45:
        top, bottom, ground, share, sun = SCENES[rng.choice(sorted(SCENES))]
        top, bottom, ground = jitter(top), jitter(bottom), jitter(ground)
        horizon = round(side * (1 - share * rng.uniform(0.6, 1.4)))
    else:
        top = tuple(rng.randint(0, 255) for _ in range(3))
        bottom = top if kind < 0.65 else tuple(rng.randint(0, 255) for _ in range(3))
        ground, horizon, sun = bottom, side, None
    for y in range(horizon):
        t = y / max(1, horizon - 1)
        draw.line([(0, y), (side, y)], fill=tuple(round(a + (b - a) * t) for a, b in zip(top, bottom)))
    draw.rectangle([0, horizon, side, side], fill=ground)
    if sun and rng.random() < 0.7:
        r, x, y = side // 12, rng.randint(0, side), rng.randint(0, side // 3)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=jitter(sun))
    if kind >= 0.85:  # clutter: random shapes the model must learn to ignore
        for _ in range(rng.randint(2, 6)):
            x, y, r = rng.randint(0, side), rng.randint(0, side), rng.randint(side // 20, side // 5)
            colour = tuple(rng.randint(0, 255) for _ in range(3))
            if rng.random() < 0.5:
                draw.ellipse([x - r, y - r, x + r, y + r], fill=colour)
            else:
                draw.polygon([(x + rng.randint(-r, r), y + rng.randint(-r, r)) for _ in range(3)], fill=colour)
    return image


def render_look(look: Look, rng: random.Random, side: int) -> Image.Image:
    """One augmented training image of ``look``: its emoji at a random size, place, angle and brightness."""
    from generators.procedural import glyph_image, paste_glyph

    image = _background(side, rng)
    glyph = glyph_image(look.glyph, look.tint)
    if rng.random() < 0.5:
        glyph = ImageEnhance.Brightness(glyph).enhance(rng.uniform(0.75, 1.2))
    glyph = glyph.rotate(rng.uniform(-15, 15), expand=True, resample=Image.Resampling.BICUBIC)
    size = round(side * rng.uniform(0.3, 0.65))
    half = size // 2
    centre = (rng.randint(half, side - half), rng.randint(half, side - half))
    paste_glyph(image, glyph, size, centre)
    if look.accent:
        ax = centre[0] + (half if rng.random() < 0.5 else -half)
        paste_glyph(image, glyph_image(look.accent), max(4, size // 2),
               (max(size // 4, min(side - size // 4, ax)), max(size // 4, centre[1] - size // 3)))
    return image.convert("RGB")


def build_demo_clip(folder: str | Path) -> Path:
    """The trained demo CLIP in ``folder`` (a ``local-dir:`` open_clip folder), trained now if it is missing or was
    trained with another :data:`RECIPE`; return the folder."""
    folder = Path(folder)
    if _trained(folder):
        return folder
    import shutil
    import tempfile

    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))  # this process's own
    try:
        report = train_demo_clip(partial)
        log.info("trained the demo CLIP: %d steps in %.0f s, loss %.3f, held-out accuracy %.2f", report["steps"],
                 report["seconds"], report["final_loss"], report["held_out_accuracy"])
        shutil.rmtree(folder, ignore_errors=True)
        try:
            partial.rename(folder)  # the finished model appears at once
        except OSError:
            if not _trained(folder):  # not another process that finished first
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def _trained(folder: Path) -> bool:
    """Whether ``folder`` holds a demo CLIP trained with :data:`RECIPE`."""
    record = folder / "training.json"
    if not (folder / "open_clip_config.json").exists() or not record.exists():
        return False
    return json.loads(record.read_text(encoding="utf-8")).get("recipe") == RECIPE


def train_demo_clip(folder: str | Path, recipe: Recipe | None = None) -> dict:
    """Train the demo CLIP (see the module docstring) and save it with its ``training.json``; return that record.
    ``recipe``: :data:`RECIPE` (the default) or another one, to try changes."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    from judges.metrics.clip_scores import tiny_clip_config

    recipe = RECIPE if recipe is None else recipe
    started = time.monotonic()
    looks, negatives = training_looks()
    rng = random.Random(recipe["seed"])
    config = tiny_clip_config()
    config["text_cfg"]["context_length"] = recipe["context_length"]  # the longest demo prompt: 36 tokens
    mean, std = (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)
    preprocess = open_clip.image_transform(config["vision_cfg"]["image_size"], is_train=False, mean=mean, std=std)
    tokenizer = open_clip.get_tokenizer("ViT-B-32", context_length=recipe["context_length"])

    def pool(count: int):
        return torch.stack([torch.stack([preprocess(render_look(look, rng, recipe["render_side"]))
                                         for _ in range(count)]) for look in looks])

    images = pool(recipe["images_per_look"])  # (looks, images per look, 3, 32, 32)
    held_out = pool(8)
    texts = [text for look in looks for text in look.texts]
    tokens = tokenizer(texts + negatives)
    first = [sum(len(look.texts) for look in looks[:i]) for i in range(len(looks))]
    negative_tokens = tokens[len(texts):]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe["seed"])
        model = open_clip.CLIP(**config)
        model.token_embedding.weight.requires_grad_(False)  # a fixed random code per token: training it is slow
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=recipe["learning_rate"],
                                      weight_decay=recipe["weight_decay"])
        labels = torch.arange(len(looks))
        steps, loss = 0, torch.tensor(0.0)
        model.train()
        for steps in range(1, recipe["steps"] + 1):
            warm = min(1.0, steps / recipe["warmup"])
            for group in optimizer.param_groups:
                group["lr"] = recipe["learning_rate"] * warm * 0.5 * (1 + math.cos(math.pi * steps / recipe["steps"]))
            groups = recipe["images_per_step"]  # images per look; each group holds every look once
            pick = torch.randint(images.shape[1], (groups, len(looks)))
            chosen = [first[i] + int(torch.randint(len(look.texts), ())) for i, look in enumerate(looks)]
            sampled = torch.randperm(len(negatives))[: recipe["negatives_per_step"]]
            image_features = torch.nn.functional.normalize(
                model.encode_image(images[labels.repeat(groups), pick.flatten()]), dim=-1)
            text_features = torch.nn.functional.normalize(
                model.encode_text(torch.cat([tokens[chosen], negative_tokens[sampled]])), dim=-1)
            logits = model.logit_scale.exp().clamp(max=100) * image_features @ text_features.T
            by_text = logits[:, : len(looks)].T.reshape(len(looks), groups, len(looks)).transpose(0, 1)
            loss = (torch.nn.functional.cross_entropy(logits, labels.repeat(groups))  # image → its look's text
                    + torch.nn.functional.cross_entropy(by_text.flatten(0, 1), labels.repeat(groups))) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if steps % 25 == 0:
                log.debug("demo CLIP step %d: loss %.3f, %.0f s", steps, loss.item(), time.monotonic() - started)
            if time.monotonic() - started > recipe["max_seconds"]:
                log.warning("the demo CLIP stopped training after %d of %d steps (%d s limit)", steps,
                            recipe["steps"], recipe["max_seconds"])
                break
        model.eval()
        with torch.inference_mode():
            names = torch.nn.functional.normalize(model.encode_text(tokens[first]), dim=-1)  # each look's first text
            seen = torch.nn.functional.normalize(model.encode_image(held_out.flatten(0, 1)), dim=-1)
            accuracy = float(((seen @ names.T).argmax(-1) == labels.repeat_interleave(held_out.shape[1]))
                             .float().mean())
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    report = {"recipe": recipe, "steps": steps, "seconds": round(time.monotonic() - started, 1),
              "final_loss": round(loss.item(), 4), "held_out_accuracy": round(accuracy, 3),
              "looks": [{"glyph": look.glyph, "tint": look.tint, "accent": look.accent, "texts": list(look.texts)}
                        for look in looks], "negative_texts": negatives}
    (folder / "training.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    (folder / "open_clip_config.json").write_text(json.dumps(
        {"model_cfg": config, "preprocess_cfg": {"mean": list(mean), "std": list(std)}}, indent=1))
    return report
