"""The demo shipped as data (arena/demo/bundle/): in step with the code, small, and loaded without torch.

When one of these fails after a change to the demo prompts, a demo generator or a demo metric, remake the bundle:
``python -m tools.demo_bundle``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from arena.demo.seeding import (
    DEMO_BUNDLE,
    DEMO_METRIC_NAMES,
    DemoBundleError,
    demo_incomplete,
    demo_prompt_specs,
    ensure_demo,
    load_demo_bundle,
    missing_demo_metrics,
    read_demo_bundle,
)
from core.settings import Settings
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.demo import DEMO_MODELS, demo_models
from generators.procedural import emoji_font

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((DEMO_BUNDLE / "manifest.json").read_text(encoding="utf-8"))


def _counts(db) -> dict:
    return {table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("prompts", "models", "images", "metrics")}


def test_the_bundle_is_in_step_with_the_demo_code():
    specs = demo_prompt_specs()
    assert MANIFEST["prompts"] == [[*spec.key, spec.text] for spec in specs]
    assert [model["name"] for model in MANIFEST["models"]] == list(DEMO_MODELS)
    registry = demo_models()
    for model in MANIFEST["models"]:
        assert model["config"] == registry[model["name"]].config(), model["name"]
    made = {(image["prompt"], image["model"], image["idx"]) for image in MANIFEST["images"]}
    assert made == {(i, name, 0) for i in range(len(specs)) for name in DEMO_MODELS}
    columns = MANIFEST["metric_columns"]
    stored = {(row[columns.index("model")], row[columns.index("suite")], row[columns.index("name")])
              for row in MANIFEST["metrics"]}
    for suite, names in DEMO_METRIC_NAMES.items():
        for model in DEMO_MODELS:
            assert {name for m, s, name in stored if (m, s) == (model, suite)} >= set(names), (model, suite)
    assert set(MANIFEST["directions"]) == {name for _, _, name in stored}


def test_the_bundle_files_are_whole_and_small():
    files = {path.name: path for path in (DEMO_BUNDLE / "images").iterdir()}
    assert set(files) == {image["file"] for image in MANIFEST["images"]}  # nothing unreferenced is shipped
    for name, path in files.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == name.partition(".")[0], name
    size = sum(path.stat().st_size for path in DEMO_BUNDLE.rglob("*") if path.is_file())
    assert size <= 5_000_000, f"the demo bundle is {size / 1e6:.1f} MB"


@pytest.mark.skipif(emoji_font() is None, reason="needs Debian's fonts-noto-color-emoji (make install)")
def test_the_bundled_painters_images_are_what_the_painters_draw_now(artefact_cache):
    """The procedural models are cheap to run: a few of their bundled images must be pixel for pixel what they
    draw today (the bundle is lossless), so a painter changed without remaking the bundle fails here."""
    from generators.pipelines import make_generator

    specs, registry = demo_prompt_specs(), demo_models()
    picked = [image for image in MANIFEST["images"] if image["model"] != "demo-tiny-unet"][::23]
    assert len(picked) >= 6
    for image in picked:
        generator = make_generator(registry[image["model"]], cache_dir=artefact_cache, device="cpu",
                                   dtype="float32")
        drawn = generator.generate([specs[image["prompt"]].text], [image["seed"]])[0]
        with Image.open(DEMO_BUNDLE / "images" / image["file"]) as shipped:
            assert np.array_equal(np.asarray(shipped.convert("RGB")), np.asarray(drawn.convert("RGB"))), image


@pytest.mark.slow  # 5.6 s on the quiet machine (make check, 2026-11-26)
def test_loading_the_bundle_fills_an_empty_database_and_finishes_an_interrupted_load(tmp_path):
    settings = Settings(db_path=tmp_path / "a.db", media_dir=tmp_path / "media", cache_dir=tmp_path / "cache",
                        demo=True)
    db, media = connect(settings.db_path), MediaStore(settings.media_dir)
    specs = demo_prompt_specs()
    built = ensure_demo(db, media, settings)
    assert built == {"prompts": len(specs), "new_prompts": len(specs), "new_images": len(specs) * len(DEMO_MODELS)}
    complete = _counts(db)
    assert complete == {"prompts": len(specs), "models": len(DEMO_MODELS), "images": len(specs) * len(DEMO_MODELS),
                        "metrics": len(MANIFEST["metrics"])}
    assert not demo_incomplete(db) and missing_demo_metrics(db) == []
    originals = [path for path in settings.media_dir.rglob("*") if path.is_file() and "renditions" not in path.parts]
    assert len(originals) == len(MANIFEST["images"])
    assert ensure_demo(db, media, settings) is None  # a finished demo is left alone
    assert not (tmp_path / "cache").exists()  # nothing was generated, no model built

    db.execute("DELETE FROM metrics WHERE name = 'reward'")  # stopped during the metrics
    assert demo_incomplete(db)
    assert ensure_demo(db, media, settings)["new_images"] == 0
    assert _counts(db) == complete and not demo_incomplete(db)
    lost = db.execute("SELECT id FROM images ORDER BY id DESC LIMIT 1").fetchone()[0]  # stopped in the images
    db.execute("DELETE FROM metrics WHERE image_id = ?", [lost])
    db.execute("DELETE FROM images WHERE id = ?", [lost])
    assert demo_incomplete(db)
    assert load_demo_bundle(db, media)["new_images"] == 1
    assert _counts(db) == complete and not demo_incomplete(db)


@pytest.mark.slow
def test_loading_the_bundle_imports_no_torch(tmp_path):
    code = (
        "import sys\n"
        "from arena.demo.seeding import ensure_demo\n"
        "from datamodel.connection import connect\n"
        "from datamodel.media import MediaStore\n"
        "from core.settings import Settings\n"
        f"root = {str(tmp_path)!r}\n"
        "s = Settings(db_path=root + '/a.db', media_dir=root + '/media', cache_dir=root + '/cache', demo=True)\n"
        "print(ensure_demo(connect(s.db_path), MediaStore(s.media_dir), s)['new_images'])\n"
        "print(sorted(m for m in ('torch', 'diffusers', 'transformers', 'open_clip') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == [str(len(MANIFEST["images"])), "[]"]


def test_a_bundle_for_other_prompts_is_refused_with_the_command_that_remakes_it(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({**MANIFEST, "prompts": MANIFEST["prompts"][1:]}))
    with pytest.raises(DemoBundleError, match="python -m tools.demo_bundle"):
        read_demo_bundle(tmp_path)
    with pytest.raises(DemoBundleError, match="is missing. Remake it with `python -m tools.demo_bundle`"):
        read_demo_bundle(tmp_path / "nowhere")


@pytest.mark.slow
def test_the_demo_command_loads_the_bundle(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
    env.update(ARENA_DB=str(tmp_path / "a.db"), ARENA_MEDIA_DIR=str(tmp_path / "media"),
               ARENA_CACHE_DIR=str(tmp_path / "cache"), ARENA_PERSISTENT_DIR=str(tmp_path / "none"))
    command = [sys.executable, "-m", "arena", "demo"]
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    specs = len(MANIFEST['prompts'])
    assert f"Demo: {specs} prompts ({specs} new), {len(MANIFEST['images'])} new images." in first.stdout
    again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert f"Demo: {specs} prompts (0 new), 0 new images." in again.stdout, again.stderr
    assert not (tmp_path / "cache").exists()


def test_a_demo_clip_cut_short_stops_the_bundle(tmp_path):
    """A busy machine stops the demo CLIP's training at its time limit; such a CLIP scores differently, so
    tools.demo_bundle writes no bundle with it and says what to do."""
    from arena.demo.clip import DEMO_CLIP_NAME, RECIPE
    from arena.demo.making import DemoClipCutShort, check_demo_clip

    folder = tmp_path / "tiny" / DEMO_CLIP_NAME
    folder.mkdir(parents=True)
    (folder / "training.json").write_text(json.dumps({"recipe": RECIPE, "steps": RECIPE["steps"]}))
    check_demo_clip(tmp_path)  # finished: nothing to say
    (folder / "training.json").write_text(json.dumps({"recipe": RECIPE, "steps": 230}))
    with pytest.raises(DemoClipCutShort, match=f"stopped after 230 of {RECIPE['steps']} steps.*--cache-dir"):
        check_demo_clip(tmp_path)
