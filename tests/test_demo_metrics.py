"""The offline demo's CLIP metrics separate its models of known strength.

The demo's arena models are ranked by construction: demo-painter always draws the concept's emoji, demo-lookalike
draws a cohyponym's or hypernym's emoji 60 % of the time, demo-scribble draws random shapes. Its CLIP metric columns
must show that order, so the demo shows the pipeline working on data whose right answer is known. The demo is built
once for this module on a temporary database; the models go into the test artefact cache (conftest's
``artefact_cache``), so the emoji CLIP model is trained once per version of the code that trains it.
"""

from __future__ import annotations

import pytest

from core.settings import Settings
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.procedural import emoji_font

pytestmark = [pytest.mark.slow,  # trains the demo CLIP on a cold artefact cache, then builds the whole demo
              pytest.mark.skipif(emoji_font() is None, reason="needs Debian's fonts-noto-color-emoji (make install)")]

CLIP_METRICS = ("clip_score", "clip_lemma", "clip_hypernym", "clip_cohyponym")


@pytest.fixture(scope="module")
def demo(tmp_path_factory, artefact_cache):
    from arena.demo.seeding import build_demo

    root = tmp_path_factory.mktemp("demo")
    settings = Settings(db_path=root / "arena.db", media_dir=root / "media", cache_dir=artefact_cache, demo=True)
    db = connect(settings.db_path)
    build_demo(db, MediaStore(settings.media_dir), settings, progress=False)
    yield db
    db.close()


def taxonomy_means(db) -> dict[str, dict[str, float]]:
    """{model: {metric: mean over its taxonomy images}} of the CLIP metrics, with the scorer that made them."""
    rows = db.execute(
        "SELECT m.name, mt.name, AVG(mt.value), GROUP_CONCAT(DISTINCT mt.scorer) FROM metrics mt "
        "JOIN models m ON m.id = mt.model_id WHERE mt.suite = 'taxonomy' AND mt.image_id IS NOT NULL "
        f"AND mt.name IN ({','.join('?' * len(CLIP_METRICS))}) GROUP BY m.name, mt.name", CLIP_METRICS).fetchall()
    means: dict[str, dict[str, float]] = {}
    for model, metric, value, scorer in rows:
        means.setdefault(model, {"scorer": scorer})[metric] = value
    for values in means.values():
        values["margin"] = values["clip_lemma"] - values["clip_cohyponym"]
    return means


def test_the_demo_clip_metrics_rank_the_painter_first(demo):
    means = taxonomy_means(demo)
    figures = {model: {k: v if isinstance(v, str) else round(v, 3) for k, v in values.items()}
               for model, values in means.items()}
    painter, lookalike, scribble = (means[f"demo-{tier}"] for tier in ("painter", "lookalike", "scribble"))
    for metric in ("clip_lemma", "clip_score"):  # the concept's name and the prompt: painter > lookalike > scribble
        assert painter[metric] > lookalike[metric] > scribble[metric], (metric, figures)
        assert painter[metric] > means["demo-tiny-unet"][metric], (metric, figures)
    # the painter's image is its concept rather than a sibling; the lookalike's often is the sibling
    assert painter["margin"] > lookalike["margin"] + 0.1, figures
    assert painter["margin"] > 0.2 and painter["margin"] > scribble["margin"], figures
    assert {values["scorer"] for values in means.values()} == {"open_clip:demo-emoji-clip"}, figures


def test_the_reward_stand_in_and_commonsense_use_the_same_trained_model(demo):
    scorers = {row[0] for row in demo.execute(
        "SELECT DISTINCT scorer FROM metrics WHERE name IN ('reward', 'commonsense_clip_fit', 'clip_score')")}
    assert scorers == {"open_clip:demo-emoji-clip", "stand-in:open_clip:demo-emoji-clip"}, scorers


def test_the_training_texts_are_the_metric_s_texts_and_name_one_look_each():
    from arena.demo.clip import training_looks

    looks, negatives = training_looks()
    by_text = {}
    for look in looks:
        for text in look.texts:
            by_text.setdefault(text, []).append(look.glyph + look.tint + look.accent)
    assert all(len(owners) == 1 for owners in by_text.values())  # no text is a positive of two looks
    penny = next(look for look in looks if "penny" in look.texts)
    assert penny.texts[:2] == ("penny", "An image of penny (a coin worth one-hundredth of the value of the basic unit)")
    assert "An image of penny" in penny.texts and "coin" not in penny.texts  # three coins share the emoji name
    money_bag = next(look for look in looks if look.glyph == "💰")
    assert money_bag.texts == ("coin", "An image of coin", "money bag")  # the hypernym keeps its lemma
    assert "dog" in next(look for look in looks if look.glyph == "🐾").texts
    assert "brown" in negatives and not set(negatives) & set(by_text)
    assert len(looks) == 32


def test_a_folder_trained_with_another_recipe_is_not_reused(tmp_path):
    import json

    from arena.demo.clip import RECIPE, _trained

    (tmp_path / "open_clip_config.json").write_text("{}")
    (tmp_path / "training.json").write_text(json.dumps({"recipe": {**RECIPE, "steps": 1}}))
    assert not _trained(tmp_path)
    (tmp_path / "training.json").write_text(json.dumps({"recipe": RECIPE}))
    assert _trained(tmp_path)
