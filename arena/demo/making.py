"""Make the demo bundle the arena loads at its first start: ``python -m tools.demo_bundle`` (one step, seeded).

It builds the demo with the generators and the metric scorers (:func:`arena.demo.seeding.build_demo`: torch,
diffusers, open_clip) into a throwaway database, media folder and model cache, then writes
:data:`arena.demo.seeding.DEMO_BUNDLE` (``arena/demo/bundle/``):

- ``manifest.json``: the demo prompts (keys and texts, checked against the code when loaded), the models with their
  configs, each image's prompt, model, index, seed, parameters and file, every metric row (per image or per model)
  and the directions of the metric names;
- ``images/<sha256>.<webp|png>``: each image losslessly compressed, as lossless WebP or as optimised PNG,
  whichever is smaller (the pixels are those the metrics were computed on; checked here).

Rerun it whenever a demo generator, the demo prompts or a demo metric scorer changes; ``tests/test_demo_bundle.py``
fails while the bundle is out of step with the code. The same code and seed give the same bundle: the global random
states are seeded (torchmetrics' Inception Score splits draw from torch's) and the throwaway cache path is written as
``<cache_dir>``.

The demo CLIP's training stops at its time limit (:data:`arena.demo.clip.RECIPE`'s ``max_seconds``), and a
CLIP cut short on a busy machine scores differently: the command then stops without writing the bundle. Rerun it on
a quieter machine, or pass ``--cache-dir`` with a model cache whose demo CLIP finished (the test artefact cache, or
``.cache/``): its tiny pipelines and trained CLIP are used as they are, and the bundle is the same.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from PIL import Image

from arena.demo.seeding import BUNDLE_COMMAND, BUNDLE_FORMAT, DEMO_BUNDLE, build_demo, demo_prompt_specs
from core.settings import Settings
from datamodel.catalog import images_of_source, models_of_source
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.metrics import metric_directions, metric_rows_of_source

CACHE_PLACEHOLDER = "<cache_dir>"


def _seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _smallest_lossless(data: bytes) -> tuple[bytes, str]:
    """The image as lossless WebP or optimised PNG, whichever is smaller, with the pixels checked equal.

    WebP's effort 4 (``method``): the 304 images take about 15 s and 1.3 % more bytes than with effort 6, which took
    150 s. PNG wins only on the tiny UNet's 64 px noise."""
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        candidates = []
        for fmt, ext, options in (("WEBP", "webp", {"lossless": True, "quality": 100, "method": 4, "exact": True}),
                                  ("PNG", "png", {"optimize": True})):
            buffer = io.BytesIO()
            image.save(buffer, format=fmt, **options)
            candidates.append((len(buffer.getvalue()), buffer.getvalue(), ext))
        size, encoded, ext = min(candidates)
        with Image.open(io.BytesIO(encoded)) as again:
            if again.convert(image.mode).tobytes() != image.tobytes():
                raise RuntimeError(f"{ext} changed the pixels of a demo image; the bundle must be lossless.")
    return encoded, ext


def _unplaced(value, cache_dir: str):
    """``value`` (a string, or JSON-like data) with the throwaway cache path written as ``<cache_dir>``."""
    if isinstance(value, str):
        return value.replace(cache_dir, CACHE_PLACEHOLDER)
    if isinstance(value, dict):
        return {key: _unplaced(item, cache_dir) for key, item in value.items()}
    if isinstance(value, list):
        return [_unplaced(item, cache_dir) for item in value]
    return value


def bundle_manifest(db, media: MediaStore, images_dir: Path, *, seed: int, cache_dir: str) -> dict:
    """Write the demo's images into ``images_dir`` and return the manifest of the demo in ``db``."""
    specs = demo_prompt_specs()
    index = {spec.key: i for i, spec in enumerate(specs)}
    models = models_of_source(db, "demo")
    rows = images_of_source(db, "demo")
    images: list[dict] = []
    position: dict[int, int] = {}
    for image_id, *key, model, idx, image_seed, media_hash, media_ext, params in rows:
        encoded, ext = _smallest_lossless(media.path(media_hash, media_ext).read_bytes())
        name = f"{hashlib.sha256(encoded).hexdigest()}.{ext}"
        (images_dir / name).write_bytes(encoded)
        position[image_id] = len(images)
        images.append({"prompt": index[tuple(key)], "model": model, "idx": idx, "seed": image_seed, "file": name,
                       "params": _unplaced(json.loads(params), cache_dir)})
    columns = ["model", "image", "suite", "subset", "variant", "name", "value", "scorer", "scorer_version", "details"]
    metrics = [
        [model, None if image_id is None else position[image_id], suite, subset, variant, name, value, scorer,
         _unplaced(version, cache_dir), _unplaced(json.loads(details), cache_dir)]
        for model, image_id, suite, subset, variant, name, value, scorer, version, details in
        metric_rows_of_source(db, "demo")]
    names = {row[columns.index("name")] for row in metrics}
    directions = metric_directions(db)
    return {
        "format": BUNDLE_FORMAT,
        "made_by": f"{BUNDLE_COMMAND} --seed {seed}",
        "seed": seed,
        "prompts": [[*spec.key, spec.text] for spec in specs],
        "models": models,
        "images": images,
        "metric_columns": columns,
        "metrics": metrics,
        "directions": {name: direction for name, direction in directions.items() if name in names},
    }


def _write_json(path: Path, manifest: dict) -> None:
    """One line per image and per metric row, so a rebuilt bundle diffs readably."""
    lines = ["{"]
    items = list(manifest.items())
    for number, (key, value) in enumerate(items):
        comma = "," if number < len(items) - 1 else ""
        if key in ("prompts", "models", "images", "metrics") and value:
            inner = [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in value]
            lines.append(f"  {json.dumps(key)}: [\n    " + ",\n    ".join(inner) + f"\n  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}{comma}")
    path.write_text("\n".join(lines) + "\n}\n", encoding="utf-8")


class DemoClipCutShort(RuntimeError):
    """The demo CLIP stopped before its last step (a busy machine): the bundle would not be the same."""


def check_demo_clip(cache_dir: Path) -> None:
    """Raise :class:`DemoClipCutShort` unless the demo CLIP in ``cache_dir`` trained every step of its recipe."""
    from arena.demo.clip import DEMO_CLIP_NAME, RECIPE

    record = json.loads((cache_dir / "tiny" / DEMO_CLIP_NAME / "training.json").read_text(encoding="utf-8"))
    if record.get("steps") != RECIPE["steps"]:
        raise DemoClipCutShort(
            f"the demo CLIP stopped after {record.get('steps')} of {RECIPE['steps']} steps (the machine is busy), so "
            "its scores would differ; the bundle was not written. Rerun on a quieter machine, or pass --cache-dir "
            "with a model cache whose demo CLIP finished.")


def make_bundle(out: Path = DEMO_BUNDLE, *, seed: int = 0, progress: bool = False,
                cache_dir: Path | None = None) -> dict:
    """Build the demo in a throwaway folder and write its bundle to ``out`` (replaced whole); return figures.
    ``cache_dir``: the model cache to use (default: a throwaway one, the tiny pipelines and the CLIP made there)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="demo-bundle-") as folder:
        work = Path(folder)
        cache_dir = Path(cache_dir) if cache_dir is not None else work / "cache"
        settings = Settings(db_path=work / "arena.db", media_dir=work / "media", cache_dir=cache_dir, seed=seed,
                            demo=True)
        _seed_everything(seed)
        db, media = connect(settings.db_path), MediaStore(settings.media_dir)
        build_demo(db, media, settings, progress=progress)
        staging = work / "bundle"
        (staging / "images").mkdir(parents=True)
        manifest = bundle_manifest(db, media, staging / "images", seed=seed, cache_dir=str(cache_dir))
        _write_json(staging / "manifest.json", manifest)
        db.close()
        check_demo_clip(cache_dir)  # before the shipped bundle is replaced
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(staging, out)
    size = sum(path.stat().st_size for path in out.rglob("*") if path.is_file())
    return {"images": len(manifest["images"]), "metrics": len(manifest["metrics"]), "bytes": size,
            "seconds": time.perf_counter() - started}
