"""The demo's procedural painters: a visible right answer, tiers that differ as declared, deterministic pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from arena.demo.seeding import demo_prompt_specs
from generators.demo import DEMO_MODELS, demo_models
from generators.pipelines import make_generator
from generators.procedural import GlyphPainter, demo_glyphs, emoji_font, glyph_image

pytestmark = pytest.mark.skipif(emoji_font() is None, reason="needs Debian's fonts-noto-color-emoji (make install)")

TAXONOMY = [spec for spec in demo_prompt_specs() if spec.suite == "taxonomy"]
COMMONSENSE = [spec for spec in demo_prompt_specs() if spec.suite == "commonsense"]


def glyph_match(image: Image.Image, glyph: str | Image.Image, tint: str, side: int, centre: tuple[int, int]) -> float:
    """Share of the emoji's opaque pixels (``glyph``: an emoji, or its RGBA image; rendered alone, scaled to
    ``side``, placed at ``centre``) that ``image`` shows in the same colour (within 12 levels per channel)."""
    alone = glyph if isinstance(glyph, Image.Image) else glyph_image(glyph, tint)
    scale = side / max(alone.size)
    alone = alone.resize((max(1, round(alone.width * scale)), max(1, round(alone.height * scale))),
                         Image.Resampling.LANCZOS)
    left, top = centre[0] - alone.width // 2, centre[1] - alone.height // 2
    crop = np.asarray(image.convert("RGB").crop((left, top, left + alone.width, top + alone.height)), dtype=int)
    pixels = np.asarray(alone, dtype=int)
    opaque = pixels[..., 3] > 250
    close = (np.abs(crop - pixels[..., :3]) <= 12).all(axis=-1)
    return float(close[opaque].mean())


def test_the_painter_draws_each_concept_s_own_emoji_and_no_other():
    painter = GlyphPainter("painter", "demo-painter")
    looks = {(entry["glyph"], entry["tint"]) for entry in demo_glyphs()["concepts"].values()}
    assert len(TAXONOMY) == 48
    for spec in TAXONOMY:
        image = painter.render(spec.text, 0)
        what, entry, side, centre = painter.placement(spec.text, 0)
        assert what == "concept" and entry is demo_glyphs()["concepts"][spec.metadata["lemma"].replace("_", " ")]
        own = glyph_match(image, entry["glyph"], entry["tint"], side, centre)
        assert own > 0.95, (spec.text, own)
        for glyph, tint in looks - {(entry["glyph"], entry["tint"])}:  # another concept's emoji is not there
            assert glyph_match(image, glyph, tint, side, centre) < 0.6, (spec.text, glyph, tint)


def test_the_tiers_draw_what_they_declare():
    painter, lookalike, scribble = (GlyphPainter(tier, f"demo-{tier}") for tier in GlyphPainter.TIERS)
    table = demo_glyphs()
    drawn = {"concept": 0, "cohyponym": 0, "hypernym": 0}
    for spec in TAXONOMY:
        lemma = spec.metadata["lemma"].replace("_", " ")
        own = table["concepts"][lemma]
        for seed in range(5):
            assert painter.choice(spec.text, seed) == ("concept", own)
            assert scribble.choice(spec.text, seed) == ("shapes", None)
            what, entry, side, centre = lookalike.placement(spec.text, seed)
            drawn[what] += 1
            if what == "cohyponym":  # a sibling under the same WordNet hypernym
                assert entry is not own and entry in [table["concepts"][c] for c in own["cohyponyms"]]
            elif what == "hypernym":
                assert entry["glyph"] in own["hypernym_glyphs"]
            else:
                assert what == "concept" and entry is own
            image = lookalike.render(spec.text, seed)  # the picture follows the declared choice
            assert glyph_match(image, entry["glyph"], entry["tint"], side, centre) > 0.8, (spec.text, seed, what)
    misses = (drawn["cohyponym"] + drawn["hypernym"]) / sum(drawn.values())
    assert 0.45 < misses < 0.75 and drawn["cohyponym"] > drawn["hypernym"] > 0, drawn
    partners = 0
    for spec in COMMONSENSE:
        own = table["commonsense"][spec.text]
        assert painter.choice(spec.text, 0) == ("concept", own)
        what, entry = lookalike.choice(spec.text, 0)
        assert (what, entry) in (("concept", own), ("partner", table["commonsense"][own["partner"]]))
        assert entry["prompt"] in (spec.text, own["partner"]) and own["partner"] != spec.text
        partners += what == "partner"
    assert 0 < partners < len(COMMONSENSE)


def test_scribbles_show_no_emoji_and_the_tiers_look_different():
    painter, lookalike, scribble = (GlyphPainter(tier, f"demo-{tier}") for tier in GlyphPainter.TIERS)
    for spec in TAXONOMY[::6]:
        _, entry, side, centre = painter.placement(spec.text, 1)
        assert glyph_match(scribble.render(spec.text, 1), entry["glyph"], entry["tint"], side, centre) < 0.3
        images = [np.asarray(r.render(spec.text, 1), dtype=int) for r in (painter, lookalike, scribble)]
        assert np.abs(images[0] - images[2]).mean() > 20


def test_pixels_depend_only_on_model_prompt_and_seed():
    spec = demo_models()["demo-lookalike"]
    first = make_generator(spec).generate([TAXONOMY[0].text, COMMONSENSE[0].text, TAXONOMY[0].text], [3, 3, 4])
    again = make_generator(spec).generate([TAXONOMY[0].text, COMMONSENSE[0].text], [3, 3])
    assert first[0].tobytes() == again[0].tobytes() and first[1].tobytes() == again[1].tobytes()
    assert first[0].tobytes() != first[2].tobytes()  # another seed, another picture
    assert first[0].size == (256, 256) and first[0].mode == "RGB"
    painter = make_generator(demo_models()["demo-painter"])
    assert painter.generate([TAXONOMY[0].text], [3])[0].tobytes() != first[0].tobytes()


def test_unknown_prompts_still_get_a_picture_and_the_demo_arena_has_four_models():
    painter = GlyphPainter("painter", "demo-painter")
    what, entry = painter.choice("a red bicycle in the rain", 2)
    assert what == "unknown" and entry in demo_glyphs()["concepts"].values()
    assert painter.render("a red bicycle in the rain", 2).size == (256, 256)
    assert DEMO_MODELS == ("demo-painter", "demo-lookalike", "demo-scribble", "demo-tiny-unet")
    specs = demo_models()
    assert [specs[name].kind for name in DEMO_MODELS] == ["procedural"] * 3 + ["diffusers"]
    with pytest.raises(ValueError, match="unknown painter tier"):
        GlyphPainter("perfect", "x")


SANEVAL = [spec for spec in demo_prompt_specs() if spec.suite == "saneval"]
SEMVAR = [spec for spec in demo_prompt_specs() if spec.suite == "semvarbench"]


def layout_match(image: Image.Image, layout) -> list[float]:
    """glyph_match of each placed emoji of a layout (tinted and patterned as generators.procedural.placed_glyph makes
    it) where generators.procedural.draw_layout pastes it."""
    from generators.layouts import ON_PLATE
    from generators.procedural import placed_glyph

    side = min(image.size)
    return [glyph_match(image, placed_glyph(p), "", round(p.side * side * (ON_PLATE if p.plate else 1)),
                        (round(p.x * image.width), round(p.y * image.height))) for p in layout]


def test_the_painter_draws_saneval_prompts_as_their_structure_says():
    from suites.saneval import CATEGORIES

    painter = GlyphPainter("painter", "demo-painter")
    table = demo_glyphs()
    assert {spec.metadata["category"] for spec in SANEVAL} == set(CATEGORIES)
    for spec in SANEVAL:
        structure = spec.metadata
        what, entry = painter.choice(spec.text, 0)
        assert what == "concept" and entry["structure"] == structure
        layout = entry["layout"]
        if "counts" in structure:  # as many of each object's emoji as counted
            assert sorted(p.glyph for p in layout) == sorted(table["objects"][name] for name, n in
                                                             structure["counts"].items() for _ in range(n))
        elif "relation" in structure:
            subject, obj = layout
            relation = structure["relation"]["relation"]
            assert (subject.glyph, obj.glyph) == tuple(table["objects"][structure["relation"][k]]
                                                       for k in ("subject", "object"))
            assert {"left of": subject.x < obj.x, "right of": subject.x > obj.x, "above": subject.y < obj.y,
                    "below": subject.y > obj.y}[relation], spec.text
        else:
            kind = structure["attribute_kind"]
            wanted = [structure["attributes"][name] for name in structure["objects"]]
            assert [p.glyph for p in layout] == [table["objects"][name] for name in structure["objects"]]
            assert ([p.plate for p in layout] == wanted if kind == "shape"
                    else [p.tint for p in layout] == [table["tints"][kind][w] for w in wanted])
        assert min(layout_match(painter.render(spec.text, 0), layout)) > 0.9, spec.text


def test_the_lookalike_misses_compositions_by_one_thing_and_the_scribble_ignores_them():
    painter, lookalike, scribble = (GlyphPainter(tier, f"demo-{tier}") for tier in GlyphPainter.TIERS)
    misses = 0
    for spec in SANEVAL:
        for seed in range(4):
            what, entry = lookalike.choice(spec.text, seed)
            assert what in ("concept", "near miss")
            assert (entry["structure"] == spec.metadata) == (what == "concept")
            if what == "near miss" and "counts" in spec.metadata:  # one count one off
                assert abs(sum(entry["structure"]["counts"].values()) - sum(spec.metadata["counts"].values())) == 1
            misses += what == "near miss"
            assert min(layout_match(lookalike.render(spec.text, seed), entry["layout"])) > 0.8, (spec.text, seed)
        _, entry = painter.choice(spec.text, 0)
        assert max(layout_match(scribble.render(spec.text, 0), entry["layout"])) < 0.3
    assert 0.4 < misses / (4 * len(SANEVAL)) < 0.8, misses


def test_semvarbench_prompts_are_drawn_with_their_meaning_and_the_lookalike_draws_the_other():
    painter, lookalike = GlyphPainter("painter", "demo-painter"), GlyphPainter("lookalike", "demo-lookalike")
    assert len(SEMVAR) == 18 and all(spec.metadata["categories"] for spec in SEMVAR)
    items = {}
    for spec in SEMVAR:
        what, entry = painter.choice(spec.text, 0)
        assert what == "concept"
        items.setdefault(spec.item_key, {})[spec.role] = entry["layout"]
        assert min(layout_match(painter.render(spec.text, 0), entry["layout"])) > 0.9, spec.text
    partners = 0
    for key, layouts in items.items():  # the paraphrase means what the anchor means; the permutation does not
        assert layouts["anchor"] == layouts["paraphrase"] != layouts["permutation"], key
    for spec in SEMVAR:
        for seed in range(3):
            what, entry = lookalike.choice(spec.text, seed)
            other = items[spec.item_key]["anchor" if spec.role == "permutation" else "permutation"]
            own = items[spec.item_key][spec.role]
            assert [(p.glyph, p.x, p.y, p.tint) for p in entry["layout"]] == [
                (p.glyph, p.x, p.y, p.tint) for p in (own if what == "concept" else other)]
            partners += what == "partner"
    assert 0 < partners < 3 * len(SEMVAR)
