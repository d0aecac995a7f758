"""One model answering open prompts live, wherever it runs: in an embedded worker process (:mod:`generators.serving`)
or as a Ray Serve replica (:mod:`generators.ray_serving`). Both hold a :class:`LiveModel` and call
:meth:`LiveModel.generate`, so the two paths make the same images and apply the same safety filter.

The safety filter (:class:`SafetyConfig`): a diffusers pipeline that ships a safety checker (its ``safety_checker``
component, as Stable Diffusion's repositories do) is judged by it (the pipeline's ``nsfw_content_detected``); any
other model's images go through the configured image classifier (``ARENA_SAFETY_CLASSIFIER``: a transformers
image-classification model, flagged when a label of ``ARENA_SAFETY_LABELS`` scores at least
``ARENA_SAFETY_THRESHOLD``), or are not checked when none is configured (:func:`safety_plan` says which, for the
server's start-up log). A flagged image never leaves the model's process: the answer carries no pixels, only why.

Timings (unix time, comparable between processes of one machine): ``free_since`` when the worker finished its
previous request (a request sent before it waited for the worker), ``started``/``ended`` around the model's own
call (its ``seconds``), ``load_seconds`` when the model had to be loaded first, ``sent`` when the answer, its PNG
encoded, left for the app.
"""

from __future__ import annotations

import io
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generators.registry import ModelSpec


@dataclass(frozen=True)
class SafetyConfig:
    """The configured image classifier (empty: none), its flagging labels and threshold (picklable)."""

    classifier: str = ""
    labels: tuple[str, ...] = ("nsfw",)
    threshold: float = 0.5

    @classmethod
    def from_settings(cls, settings) -> SafetyConfig:
        labels = tuple(label.strip().lower() for label in settings.safety_labels.split(",") if label.strip())
        return cls(settings.safety_classifier, labels, settings.safety_threshold)


@dataclass(frozen=True)
class LiveImage:
    """A model's answer to one open prompt: PNG bytes when ``status`` is ``ok`` (``failed``: ``reason`` says why;
    ``flagged``: the safety filter withheld it, ``reason`` says which)."""

    model: str
    status: str
    png: bytes | None = None
    reason: str = ""
    seed: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    started: float = 0.0
    ended: float = 0.0
    free_since: float = 0.0
    sent: float = 0.0  # when the worker (or replica) handed the answer, encoded, to the transport back to the app
    cost_usd: float | None = None
    safety: str = ""  # which filter looked at it: "model's safety checker", "classifier NAME" or "none"
    params: dict[str, Any] = field(default_factory=dict)


def safety_plan(spec: ModelSpec, safety: SafetyConfig, ships_checker: bool | None = None) -> str:
    """Which filter judges ``spec``'s images: ``ships_checker`` (whether its pipeline has a safety checker; None:
    unknown before loading) first, then the configured classifier, else none."""
    if ships_checker:
        return "the model's own safety checker"
    if safety.classifier:
        return f"the classifier {safety.classifier}"
    return "none (no safety checker shipped, no ARENA_SAFETY_CLASSIFIER)"


class SafetyClassifier:
    """The configured image classifier (a transformers ``image-classification`` pipeline), loaded once."""

    def __init__(self, config: SafetyConfig, device: str = "cpu"):
        from transformers import pipeline

        self.config = config
        self.pipeline = pipeline("image-classification", model=config.classifier, device=device)

    def flags(self, image) -> str:
        """Why ``image`` is flagged ("nsfw 0.93"), or "" when it is not."""
        scores = {result["label"].lower(): result["score"] for result in self.pipeline(image, top_k=None)}
        over = sorted((label, score) for label, score in scores.items()
                      if label in self.config.labels and score >= self.config.threshold)
        return ", ".join(f"{label} {score:.2f}" for label, score in over)


class LiveModel:
    """``spec`` loaded on ``device`` with its safety filter; :meth:`generate` answers one prompt."""

    def __init__(self, spec: ModelSpec, *, registry: Mapping[str, ModelSpec] | None = None, device: str = "cpu",
                 cache_dir: str | Path | None = None, safety: SafetyConfig = SafetyConfig(),
                 classifiers: dict | None = None):
        from generators.pipelines import make_generator

        started = time.time()
        self.spec, self.device, self.safety = spec, device, safety
        if spec.kind == "api":
            raise ValueError(f"model {spec.name} is an API model; open prompts run diffusers and procedural models.")
        self.generator = make_generator(spec, registry=registry, cache_dir=cache_dir, device=device)
        pipeline = getattr(self.generator, "pipeline", None)
        self.ships_checker = getattr(pipeline, "safety_checker", None) is not None
        self.classifier = None
        if not self.ships_checker and safety.classifier:
            classifiers = classifiers if classifiers is not None else {}
            if safety.classifier not in classifiers:
                classifiers[safety.classifier] = SafetyClassifier(safety, device)
            self.classifier = classifiers[safety.classifier]
        self.load_seconds = time.time() - started

    @property
    def safety_label(self) -> str:
        return safety_plan(self.spec, self.safety, self.ships_checker)

    def generate(self, prompt: str, seed: int, *, free_since: float = 0.0, load_seconds: float = 0.0) -> LiveImage:
        """The image of ``prompt`` with ``seed``, checked by the safety filter; never raises (a failure is an
        answer with status ``failed`` and the error)."""
        started = time.time()
        common: dict[str, Any] = dict(model=self.spec.name, seed=seed, free_since=free_since, load_seconds=load_seconds,
                      started=started, safety=self.safety_label, params=dict(self.generator.params))
        try:
            image = self.generator.generate([prompt], [seed])[0]
            why = ""
            if self.ships_checker:
                flags = getattr(self.generator, "nsfw", None) or [False]
                why = "the model's safety checker flagged it" if flags[0] else ""
            elif self.classifier is not None:
                found = self.classifier.flags(image)
                why = f"the safety classifier flagged it ({found})" if found else ""
            ended = time.time()  # the model's seconds: its call and its safety filter
            if why:
                return LiveImage(status="flagged", reason=why, seconds=ended - started, ended=ended, **common)
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
        except Exception as error:  # noqa: BLE001 - the app records the failure and tells the annotator
            ended = time.time()
            reason = f"{type(error).__name__}: {' '.join(str(error).split())[:500]}"
            return LiveImage(status="failed", reason=reason, seconds=ended - started, ended=ended, **common)
        return LiveImage(status="ok", png=buffer.getvalue(), seconds=ended - started, ended=ended,
                         cost_usd=self.spec.price_usd, **common)
