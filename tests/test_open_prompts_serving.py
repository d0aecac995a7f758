"""Open prompts served for real: the embedded workers and a local Ray instance (``tools.open_prompt_load`` with a
few visitors: each starts the app in a child process), and the safety filters on tiny random-weight stand-ins."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.live import safety_checked_sd, tiny_classifier

from generators.demo import demo_models
from generators.live import LiveModel, SafetyConfig
from generators.registry import ModelSpec
from generators.serving import EmbeddedService

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def _load(tmp_path, cache: Path, serving: str, *extra: str) -> dict:
    figures = tmp_path / "figures.json"
    run = subprocess.run([sys.executable, "-m", "tools.open_prompt_load", "--serving", serving, "--visitors", "3",
                          "--duration", "8", "--bare-calls", "3", "--cache-dir", str(cache), "--json", str(figures),
                          *extra], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(figures.read_text())


def test_visitors_typing_prompts_through_the_embedded_workers(tmp_path, artefact_cache):
    figures = _load(tmp_path, artefact_cache, "embedded")
    assert figures["battles"] >= 3 and figures["votes"] == figures["battles"]
    assert figures["out_of_order"] == 0 and figures["votes_lost"] == 0 and figures["errors"] == 0


def test_a_local_ray_instance_serves_two_tiny_models_for_battles(tmp_path, artefact_cache):
    """Ray Serve on 127.0.0.1 (started and stopped by the tool), one deployment per model: battles run through it."""
    figures = _load(tmp_path, artefact_cache, "ray", "--ray-cpus", "3")
    assert figures["serving"] == "ray" and figures["battles"] >= 3
    assert figures["out_of_order"] == 0 and figures["votes_lost"] == 0 and figures["errors"] == 0
    assert set(figures["models"]) == {"demo-painter", "demo-tiny-unet"}


def test_the_embedded_workers_load_on_demand_and_fail_a_broken_model_in_words(artefact_cache):
    specs = demo_models()
    broken = ModelSpec(name="demo-broken", pipeline_class="StableDiffusionPipeline", weights="/nonexistent/weights",
                       dtype="float32")
    service = EmbeddedService({"demo-painter": specs["demo-painter"], "demo-scribble": specs["demo-scribble"],
                               "demo-broken": broken}, devices=["cpu"], resident=1, cache_dir=artefact_cache)

    async def battle():
        return await asyncio.gather(*(service.generate(name, "a kite over a beach", 7)
                                      for name in ("demo-painter", "demo-scribble", "demo-painter", "demo-broken")))

    try:
        first, second, third, broken_answer = asyncio.run(battle())
    finally:
        service.close()
    assert [a.image.status for a in (first, second, third)] == ["ok", "ok", "ok"]
    assert first.image.png == third.image.png  # the same prompt and seed: the same picture, loaded again
    assert second.image.load_seconds > 0 and third.image.load_seconds > 0  # one resident: each switch loads
    assert broken_answer.image.status == "failed"
    assert "weights folder /nonexistent/weights" in broken_answer.image.reason
    assert all(answer.overhead < 5 for answer in (first, second, third))


def test_the_safety_checker_a_model_ships_withholds_every_flagged_image(tmp_path, artefact_cache):
    for flags in (True, False):
        folder = safety_checked_sd(artefact_cache, tmp_path / f"sd-checked-{flags}", flags=flags)
        spec = ModelSpec(name="checked-sd", pipeline_class="StableDiffusionPipeline", weights=str(folder), steps=2,
                         resolution=(64, 64), dtype="float32")
        model = LiveModel(spec, cache_dir=artefact_cache, safety=SafetyConfig(classifier="unused/when-shipped"))
        image = model.generate("a beach", 1)
        assert model.ships_checker and image.safety == "the model's own safety checker"
        if flags:
            assert image.status == "flagged" and image.png is None and "safety checker flagged it" in image.reason
        else:
            assert image.status == "ok" and image.png.startswith(b"\x89PNG")


def test_the_configured_classifier_withholds_flagged_images_of_models_without_a_checker(tmp_path):
    painter = demo_models()["demo-painter"]
    for flags in (True, False):
        folder = tiny_classifier(tmp_path / f"classifier-{flags}", flags=flags)
        model = LiveModel(painter, safety=SafetyConfig(classifier=str(folder), labels=("nsfw",), threshold=0.5))
        image = model.generate("a garden", 3)
        assert image.safety == f"the classifier {folder}"
        if flags:
            assert image.status == "flagged" and image.png is None and "nsfw 1.00" in image.reason
        else:
            assert image.status == "ok"
    unchecked = LiveModel(painter).generate("a garden", 3)
    assert unchecked.status == "ok" and unchecked.safety.startswith("none")


def test_a_worker_that_dies_fails_its_requests_at_once_and_the_next_request_starts_another(artefact_cache):
    """The worker's answer pipe ending is seen on the event loop at once: its request in flight fails, naming the exit
    code, well before any timeout; the next request starts a new worker."""
    specs = demo_models()
    service = EmbeddedService({"demo-painter": specs["demo-painter"]}, devices=["cpu"], cache_dir=artefact_cache)

    async def killed_then_again():
        first = asyncio.ensure_future(service.generate("demo-painter", "a kite", 1))
        await asyncio.sleep(0)  # sent: the worker is still starting
        os.kill(service._workers[0].process.pid, signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match=r"stopped \(exit code -9\)"):
            await asyncio.wait_for(first, 30)
        noticed = time.monotonic() - started
        return noticed, await service.generate("demo-painter", "a kite", 1)

    try:
        noticed, again = asyncio.run(killed_then_again())
    finally:
        service.close()
    assert noticed < 2.0
    assert again.image.status == "ok" and again.overhead < 5
    assert set(again.overhead_parts) == {"request", "encode", "answer", "loop"}
