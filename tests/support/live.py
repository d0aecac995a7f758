"""Stand-ins for the open prompts' tests: a serving layer without processes (:class:`StandInService`), a tiny Stable
Diffusion that ships a safety checker (:func:`safety_checked_sd`) and a tiny image classifier (:func:`tiny_classifier`),
both with random weights, saved with ``save_pretrained`` and loaded as users' weights are."""

from __future__ import annotations

import asyncio
import io
import shutil
import time
from pathlib import Path

from PIL import Image

from generators.live import LiveImage
from generators.serving import Served


class StandInService:
    """Answers each model after its ``delays`` seconds with a flat PNG of its ``sizes`` (a model in ``fail`` fails, one
    in ``flag`` is flagged), recording the order the answers arrived in (``arrived``)."""

    serving = "stand-in"

    def __init__(self, models, *, delays=None, sizes=None, fail=(), flag=()):
        self._models = list(models)
        self.delays, self.sizes = dict(delays or {}), dict(sizes or {})
        self.fail, self.flag = set(fail), set(flag)
        self.arrived: list[str] = []
        self.closed = False

    def models(self) -> list[str]:
        return list(self._models)

    async def generate(self, model: str, prompt: str, seed: int) -> Served:
        submitted = time.time()
        await asyncio.sleep(self.delays.get(model, 0.0))
        started = time.time()
        self.arrived.append(model)
        common = dict(model=model, seed=seed, started=started, ended=started, free_since=submitted,
                      seconds=0.01 + self.delays.get(model, 0.0), safety="stand-in")
        if model in self.fail:
            return Served(LiveImage(status="failed", reason="RuntimeError: CUDA error: out of memory", **common),
                          submitted, time.time(), self.serving)
        if model in self.flag:
            return Served(LiveImage(status="flagged", reason="the safety classifier flagged it (nsfw 0.97)",
                                    **common), submitted, time.time(), self.serving)
        side = self.sizes.get(model, 64)
        buffer = io.BytesIO()
        Image.new("RGB", (side, side), (seed % 256, 80, 160)).save(buffer, format="PNG")
        return Served(LiveImage(status="ok", png=buffer.getvalue(), cost_usd=0.04 if model.endswith("api") else None,
                                **common), submitted, time.time(), self.serving)

    def close(self) -> None:
        self.closed = True


def safety_checked_sd(cache_dir: Path, target: Path, *, flags: bool) -> Path:
    """The tiny Stable Diffusion of ``generators.tiny`` with a tiny random-weight safety checker that flags every
    image (``flags``) or none, saved into ``target``."""
    import torch
    from diffusers import StableDiffusionPipeline
    from diffusers.pipelines.stable_diffusion.safety_checker import StableDiffusionSafetyChecker
    from transformers import CLIPConfig, CLIPImageProcessor

    from generators.tiny import ensure_tiny

    if (target / "model_index.json").exists():
        return target
    pipeline = StableDiffusionPipeline.from_pretrained(str(ensure_tiny(cache_dir, "tiny-sd")))
    torch.manual_seed(0)
    config = CLIPConfig(text_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                                     "num_attention_heads": 2},
                        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                                       "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
                        projection_dim=8)
    checker = StableDiffusionSafetyChecker(config).eval()
    with torch.no_grad():  # a concept scores cos - weight: with weight -2 every image is flagged, with 2 none
        checker.concept_embeds_weights.fill_(-2.0 if flags else 2.0)
        checker.special_care_embeds_weights.fill_(2.0)
    processor = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    pipeline.register_modules(safety_checker=checker, feature_extractor=processor)
    pipeline.register_to_config(requires_safety_checker=True)
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    pipeline.save_pretrained(str(partial))
    partial.rename(target)
    return target


def tiny_classifier(target: Path, *, flags: bool) -> Path:
    """A tiny random-weight ViT image classifier with the labels normal and nsfw that calls every image nsfw
    (``flags``) or normal, saved into ``target``."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    if (target / "config.json").exists():
        return target
    config = ViTConfig(image_size=32, patch_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=32, id2label={0: "normal", 1: "nsfw"},  # two labels, so num_labels=2
                       label2id={"normal": 0, "nsfw": 1})
    torch.manual_seed(0)
    model = ViTForImageClassification(config).eval()
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([0.0, 6.0] if flags else [6.0, 0.0]))
    model.save_pretrained(str(target))
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(str(target))
    return target
