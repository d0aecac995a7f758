"""Open prompts: an annotator types a prompt, two models drawn by the sampler answer it live, and the battle that
follows is voted on and revealed like any other.

:meth:`OpenPrompts.battle` does it in this order, and stops at the first refusal with words the annotator reads:

1. the prompt is normalised and checked (:func:`datamodel.open_prompts.normalise_prompt`: the length limit, any
   language) and moderated (:mod:`judges.moderation`: the moderation model, or the local rule list); a refused
   prompt says why, is logged, and is not stored;
2. the prompt is stored (suite ``open``), the two models are drawn (:func:`sampling.live.draw_live_pair`, sides by a
   coin) and both generations are sent at once to the serving layer (:mod:`generators.serving`: embedded workers, or
   Ray Serve on a cluster: :mod:`generators.ray_serving`);
3. the battle waits for both answers, up to ``open_prompt_timeout_s``; nothing is shown before both are in, so the
   order they arrive in names no model. If either failed, timed out or was flagged by the safety filter, nothing is
   shown and nothing can be voted on: the annotator reads which of the three happened (never which model), the
   failing model and the reason are recorded (``generations``), the prompt and any image made are kept;
4. both images are stored, their display renditions made (the same renditions as every battle image: one size,
   format, quality and padded length, no metadata) before either is served, and the battle is recorded and made the
   session's current one. The vote, the reveal and Next battle are the arena's own.

One :class:`OpenPrompts` per app (:func:`open_prompts_from_settings`), with its serving layer, moderator and rate
limits (per annotator and per address).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena import session as sessions
from arena.ratelimit import RateLimiter
from arena.session import signed_in_annotator
from core.settings import Settings, SettingsError
from datamodel.battles import Pairing, record_battle
from datamodel.catalog import add_model
from datamodel.connection import Store
from datamodel.media import MediaStore
from datamodel.open_prompts import Generation, PromptRefused, add_open_prompt, normalise_prompt, record_generations
from datamodel.renditions import Renditions
from generators.live import SafetyConfig, safety_plan
from generators.registry import ModelSpec, RegistryError, load_registry
from generators.serving import ImageService, Served
from sampling.live import draw_live_pair

log = logging.getLogger(__name__)

# the demo's models that answer open prompts: its three painters, and its tiny diffusers pipeline where torch is
DEMO_LIVE_MODELS = ("demo-painter", "demo-lookalike", "demo-scribble")
DEMO_DIFFUSERS_MODEL = "demo-tiny-unet"

FAILED = ("One of the two models could not make an image, so there is nothing to vote on. Your prompt is kept: "
          "press Generate to try again.")
TIMED_OUT = ("One of the two models did not finish within {seconds:g} s, so there is nothing to vote on. Your "
             "prompt is kept: press Generate to try again.")
FLAGGED = ("The safety filter withheld one of the two images, so there is nothing to vote on. Try another prompt.")


class GenerationFailed(RuntimeError):
    """The battle was called off (a model failed, timed out or was flagged); the message is the annotator's."""


@dataclass(frozen=True)
class LiveModels:
    """The models that answer open prompts (name: spec) and the registry their cascades' stages come from."""

    specs: dict[str, ModelSpec]
    registry: dict[str, ModelSpec]


def open_prompts_enabled(settings: Settings, has_demo: bool) -> bool:
    """Whether the arena serves open prompts: ``on``, ``off``, or (``demo``) when it holds the bundled demo."""
    return settings.open_prompts == "on" or (settings.open_prompts == "demo" and has_demo)


def live_models(settings: Settings, *, demo: bool) -> LiveModels:
    """The registry (built-ins, the demo models, ``ARENA_MODELS_FILE``) and the models of ``open_prompt_models``;
    empty in the demo: its painters and (with torch) its tiny diffusers pipeline. Fewer than two, an unknown name or a
    model that cannot answer a prompt alone raises :class:`SettingsError` with the fix."""
    from generators.demo import demo_models

    try:
        registry = load_registry(settings.models_file or None, extra=demo_models())
    except RegistryError as error:
        raise SettingsError(f"ARENA_MODELS_FILE: {error}") from None
    names = [name.strip() for name in settings.open_prompt_models.split(",") if name.strip()]
    if not names and demo:
        names = [*DEMO_LIVE_MODELS, *([DEMO_DIFFUSERS_MODEL] if importlib.util.find_spec("torch") else [])]
    unknown = [name for name in names if name not in registry]
    if unknown:
        raise SettingsError(f"ARENA_OPEN_PROMPT_MODELS names {', '.join(unknown)}, not in the registry. Use built-in "
                            "or demo-* names, or add them in a models file (ARENA_MODELS_FILE).")
    unfit = [name for name in names if registry[name].kind == "api" or registry[name].takes_image]
    if unfit:
        raise SettingsError(f"ARENA_OPEN_PROMPT_MODELS: {', '.join(unfit)} cannot answer open prompts here (API "
                            "models and super-resolution stages are not served live). Name diffusers or procedural "
                            "models.")
    if len(set(names)) < 2:
        raise SettingsError("open prompts need at least two models: set ARENA_OPEN_PROMPT_MODELS to two or more "
                            "registry names (or ARENA_OPEN_PROMPTS=off).")
    return LiveModels({name: registry[name] for name in dict.fromkeys(names)}, registry)


def make_service(settings: Settings, models: LiveModels) -> ImageService:
    """The serving layer: Ray Serve on ``ARENA_RAY_ADDRESS``, else the embedded workers."""
    if settings.ray_address:
        from generators.ray_serving import RayService

        return RayService(settings.ray_address, list(models.specs))
    from generators.serving import EmbeddedService, default_devices

    return EmbeddedService(models.specs, registry=models.registry, devices=default_devices(settings.serving_devices),
                           resident=settings.serving_resident_models, cache_dir=Path(settings.cache_dir),
                           safety=SafetyConfig.from_settings(settings))


class OpenPrompts:
    """The open-prompt path of one app (module docstring)."""

    def __init__(self, settings: Settings, store: Store, media: MediaStore, renditions: Renditions,
                 service: ImageService, moderator, models: LiveModels, *, rng: random.Random | None = None,
                 sampler=None):
        self.settings, self.store, self.media, self.renditions = settings, store, media, renditions
        self.service, self.moderator, self.models = service, moderator, models
        self.rng = rng or random.SystemRandom()
        self.sampler = sampler  # arena.session.Sampler: the strategy and its statistics
        self.timeout_s = settings.open_prompt_timeout_s
        shared = store if store.postgres else None
        advice: dict[str, Any] = dict(noun="open prompts",
                                      advice="Vote on the battle on screen, or send another prompt", store=shared)
        self.annotator_limit = RateLimiter(settings.rate_limit_open_prompts_per_minute, "per annotator", **advice)
        self.client_limit = RateLimiter(settings.rate_limit_open_prompts_per_minute * 5, "from one address", **advice)
        self._model_ids: dict[str, int] = {}

    def describe(self) -> str:
        """What the server's start-up log says: the models, the serving layer, moderation and the safety filters."""
        safety = SafetyConfig.from_settings(self.settings)
        filters = "; ".join(f"{name}: {safety_plan(spec, safety, _ships_checker(spec))}"
                            for name, spec in self.models.specs.items())
        return (f"open prompts on: models {', '.join(self.models.specs)}; serving {self.service.serving}; "
                f"moderation by {self.moderator.describe()}; safety filter per model: {filters}")

    def model_ids(self) -> dict[str, int]:
        """{name: id} of the served models, registered (source as ``python -m generators run`` records it)."""
        if not self._model_ids:
            db = self.store.db()
            for name, spec in self.models.specs.items():
                source = {"procedural": "demo", "api": "api"}.get(spec.kind, "diffusers")
                source = "demo" if name.startswith("demo-") else source
                self._model_ids[name] = add_model(db, name, source=source, description=spec.description,
                                                  config=spec.config())
        return self._model_ids

    async def battle(self, session: sessions.ArenaSession, text: object) -> sessions.ArenaSession:
        """The session with an open prompt's battle on screen (module docstring); raises :class:`PromptRefused`
        (nothing stored) or :class:`GenerationFailed` (the prompt and the failures stored)."""
        prompt = normalise_prompt(text, self.settings.open_prompt_max_chars)
        verdict = await self.moderator.check(prompt)
        if not verdict.allowed:
            log.info("open prompt refused for annotator %s: %s (%d characters)", signed_in_annotator(session).id,
                     verdict.category, len(prompt))
            raise PromptRefused(verdict.message)
        ids = await asyncio.to_thread(self.model_ids)
        prompt_id = await asyncio.to_thread(add_open_prompt, self.store.db(), prompt)
        model_a, model_b = draw_live_pair(self.rng, self._strategy(), list(ids.values()), self._stats())
        names = {model_id: name for name, model_id in ids.items()}
        sides = [names[model_a], names[model_b]]
        seeds = [self.rng.randrange(2**31) for _ in sides]
        tasks = [asyncio.ensure_future(self.service.generate(name, prompt, seed)) for name, seed in zip(sides, seeds)]
        done, late = await asyncio.wait(tasks, timeout=self.timeout_s)
        for task in late:
            task.cancel()
        answers = [_generation(name, seed, task, self.timeout_s) for name, seed, task in zip(sides, seeds, tasks)]
        return await asyncio.to_thread(self._finish, session, prompt_id, answers)

    def _strategy(self) -> str:
        return self.sampler.strategy if self.sampler is not None else "uniform"

    def _stats(self):
        return self.sampler.stats if self.sampler is not None and self.sampler.reads_stats else None

    def _finish(self, session: sessions.ArenaSession, prompt_id: int,
                answers: list[tuple[dict, bytes | None]]) -> sessions.ArenaSession:
        """Store what was made, record every generation, and either record the battle or call it off."""
        db = self.store.db()
        made = []
        for fields, png in answers:
            stored = None
            if png is not None:
                stored = self.media.put(png, source=f"open prompt {prompt_id} from {fields['model']}")
                self.renditions.warm(stored.media_hash, stored.media_ext)  # before either image may be served
            made.append(Generation(stored=stored, **fields))
        image_ids = record_generations(db, prompt_id, made, model_ids=self.model_ids(),
                                       annotator_id=signed_in_annotator(session).id, serving=self.service.serving,
                                       rendition=self.renditions.spec.key)
        bad = [generation for generation in made if generation.status != "ok"]
        if bad:
            for generation in bad:
                log.warning("open prompt %d: %s %s: %s", prompt_id, generation.model, generation.status,
                            generation.reason)
            statuses = {generation.status for generation in bad}
            message = (FLAGGED if "flagged" in statuses else
                       TIMED_OUT.format(seconds=self.timeout_s) if "timeout" in statuses else FAILED)
            raise GenerationFailed(message)
        sessions.check_signed_in(db, session)
        image_a, image_b = image_ids
        assert image_a is not None and image_b is not None  # both generations are ok: each made an image
        battle = record_battle(db, Pairing(prompt_id, image_a, image_b), session_id=session.session_id,
                               annotator_id=signed_in_annotator(session).id, strategy=self._strategy())
        return sessions.show_battle(session, battle)

    def close(self) -> None:
        self.service.close()


def _ships_checker(spec: ModelSpec) -> bool | None:
    """Whether a diffusers model ships a safety checker, read from its ``model_index.json`` where the weights are a
    local folder; None when unknown before loading."""
    import json

    if spec.kind != "diffusers" or not spec.weights:
        return None if spec.kind == "diffusers" else False
    try:
        index = json.loads((Path(spec.weights) / "model_index.json").read_text())
    except (OSError, ValueError):
        return None
    return bool(index.get("safety_checker") and index["safety_checker"][0])


def _generation(model: str, seed: int, task: asyncio.Future, timeout_s: float) -> tuple[dict, bytes | None]:
    """(the fields of the generation to record, the PNG to store when it is made) of one side's task."""
    if not task.done() or task.cancelled():
        return dict(model=model, status="timeout", seed=seed, reason=f"no image within {timeout_s:g} s"), None
    if task.exception() is not None:
        error = task.exception()
        return dict(model=model, status="failed", seed=seed, reason=f"{type(error).__name__}: {error}"), None
    served: Served = task.result()
    image = served.image
    ok = image.status == "ok" and bool(image.png)
    fields = dict(model=model, status="ok" if ok else image.status if image.status != "ok" else "failed", seed=seed,
                  seconds=image.seconds, wait_seconds=max(0.0, served.total - image.seconds), reason=image.reason,
                  cost_usd=image.cost_usd if ok else None,
                  params={**image.params, "seed": seed, "safety": image.safety, "serving": served.serving,
                          "source": "open prompts", "load_s": image.load_seconds, "queued_s": served.waited,
                          "overhead_s": served.overhead, "overhead_parts_s": served.overhead_parts})
    return fields, image.png if ok else None


def open_prompts_from_settings(settings: Settings, store: Store, media: MediaStore, renditions: Renditions, *,
                               has_demo: bool, sampler=None) -> OpenPrompts | None:
    """The app's :class:`OpenPrompts` (None when the mode is off), its choices logged."""
    if not open_prompts_enabled(settings, has_demo):
        return None
    from judges.moderation import ModerationConfigError, moderator_from_settings

    models = live_models(settings, demo=has_demo)
    try:
        moderator = moderator_from_settings(settings)
    except ModerationConfigError as error:
        raise SettingsError(str(error)) from None
    except ValueError as error:  # no API key for the moderation model
        raise SettingsError(f"ARENA_MODERATION_MODEL: {error}") from None
    service = make_service(settings, models)
    open_prompts = OpenPrompts(settings, store, media, renditions, service, moderator, models, sampler=sampler)
    log.warning(open_prompts.describe())
    return open_prompts

