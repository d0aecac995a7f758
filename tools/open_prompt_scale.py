"""``python -m tools.open_prompt_scale``: what one open prompt costs the server at study scale.

It copies the study-scale arena (:mod:`tools.scale_fixture`: 1,000,000 votes, 12 models, 2,000 prompts; built once
under ``.cache/scale``) into a temporary folder and sends ``--prompts`` open prompts through the arena's own path
(:meth:`arena.open_prompts.OpenPrompts.battle`, answered at once by a stand-in serving layer, so only the server's
own work is measured), each followed by its vote with the next battle drawn (:func:`arena.session.vote`), as a
server keeping the sampler's counts does (``--strategy``, default ``balanced``; its
:class:`sampling.sampler.SamplingStats` and :class:`sampling.prompt_pool.PromptPool` warm before the first prompt). The
counts check the catalog's change counter at every draw (``refresh_seconds`` 0: an open prompt followed by a draw
more than the server's 2 s later, i.e. fewer than one open prompt per 2 s; at more, a server re-reads every 2 s).

Per open prompt it prints: the CPU seconds of this process, every thread (``time.process_time``, so the background
full read of the counts, where one runs, is in it), the wall seconds of the request path (the battle, then the vote
and the next draw), how many full reads of the counts the open prompts started and how often the catalog's change
counter moved (every move also makes the prompt pool, the rendition keeper and the rating pool read again).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from arena import session as sessions
from arena.open_prompts import LiveModels, OpenPrompts
from core.settings import Settings
from datamodel.connection import Store
from datamodel.media import MediaStore
from datamodel.renditions import Renditions
from datamodel.sampling_reads import catalog_version
from generators.demo import demo_models
from generators.live import LiveImage
from generators.serving import Served
from judges.moderation import RuleModerator
from sampling.prompt_pool import PromptPool
from sampling.sampler import SamplingStats
from tools.sampler_bench import _copy_database
from tools.scale_fixture import ScaleSpec, cached_scale_database

MODELS = ("demo-painter", "demo-lookalike", "demo-scribble")


class InstantService:
    """A serving layer that answers every model at once with a small flat image of its own colour."""

    serving = "stand-in"

    def __init__(self, models):
        self._models = list(models)

    def models(self) -> list[str]:
        return list(self._models)

    async def generate(self, model: str, prompt: str, seed: int) -> Served:
        now = time.time()
        buffer = io.BytesIO()
        Image.new("RGB", (64, 64), (seed % 256, 90, 30 * self._models.index(model))).save(buffer, format="PNG")
        image = LiveImage(model=model, status="ok", png=buffer.getvalue(), seed=seed, started=now, ended=now,
                          free_since=now, seconds=0.0, safety="stand-in")
        return Served(image, now, time.time(), self.serving)

    def close(self) -> None:
        pass


def measure(folder: Path, prompts: int, strategy: str, seed: int = 0) -> dict:
    """Send ``prompts`` open prompts into a copy of the arena in ``folder`` (module docstring); the figures."""
    with tempfile.TemporaryDirectory(prefix="open-prompt-scale-") as scratch_name:
        scratch = Path(scratch_name)
        settings = Settings(db_path=_copy_database(folder / "arena.db", scratch), media_dir=scratch / "media",
                            cache_dir=scratch / "cache", demo=False, sampling_strategy=strategy)
        store = Store(settings.database)
        db = store.db()
        media = MediaStore(settings.media_dir)
        specs = demo_models()
        stats = SamplingStats(refresh_seconds=0.0)
        pool = PromptPool()
        sampler = sessions.Sampler(strategy, stats, pool)
        live = OpenPrompts(settings, store, media, Renditions.from_settings(media, settings), InstantService(MODELS),
                           RuleModerator.from_file(), LiveModels({name: specs[name] for name in MODELS}, specs),
                           rng=random.Random(seed), sampler=sampler)
        live.model_ids()  # the served models registered, as the server's first open prompt does
        started = time.perf_counter()
        stats.refresh(db, force=True)
        assert stats.tables is not None  # read by the forced refresh
        startup, votes = time.perf_counter() - started, stats.tables.votes
        pool.eligible_ids(db)
        session = sessions.start(db, "scale-visitor", "scale-visitor-token", open_signup=True)
        rng = random.Random(seed)
        loop = asyncio.new_event_loop()
        cpu, wall, full_reads, catalog_moves = [], [], 0, 0
        try:
            for index in range(prompts):
                tables, version = stats.tables, catalog_version(db)
                cpu_started, started = time.process_time(), time.perf_counter()
                session = loop.run_until_complete(live.battle(session, f"a lighthouse at dusk, take {index}"))
                assert session.battle is not None  # the open prompt's battle
                session = sessions.vote(db, session, rng.choice(["A", "B", "tie"]), rng=rng, sampler=sampler,
                                        on_screen=session.battle.media_token)
                wall.append(time.perf_counter() - started)
                stats.wait()  # the background full read it started, if any
                cpu.append(time.process_time() - cpu_started)
                full_reads += stats.tables is not tables
                catalog_moves += catalog_version(db) != version
        finally:
            loop.close()
            live.close()
            store.close()
    return {"votes": votes, "strategy": strategy, "prompts": prompts, "startup_s": startup,
            "cpu_s_mean": float(np.mean(cpu)), "cpu_s_p95": float(np.percentile(cpu, 95)),
            "wall_ms_p50": float(np.percentile(wall, 50)) * 1e3, "wall_ms_p95": float(np.percentile(wall, 95)) * 1e3,
            "full_reads": full_reads, "catalog_moves": catalog_moves}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.open_prompt_scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=20, help="open prompts sent (default 20)")
    parser.add_argument("--votes", type=int, default=1_000_000, help="votes of the scale arena (default 1,000,000)")
    parser.add_argument("--strategy", default="balanced", help="the server's sampling strategy (default balanced)")
    parser.add_argument("--cache", type=Path, default=Path(".cache"), help="where scale arenas are kept")
    args = parser.parse_args(argv)
    folder = cached_scale_database(ScaleSpec(votes=args.votes), args.cache)
    figures = measure(folder, args.prompts, args.strategy)
    print(f"{figures['votes']:,} human votes counted, strategy {figures['strategy']}: the counts' first full read "
          f"{figures['startup_s']:.1f} s")
    print(f"per open prompt ({figures['prompts']}): CPU {figures['cpu_s_mean']:.3f} s mean, {figures['cpu_s_p95']:.3f} "
          f"s p95 (every thread); request path (battle, vote, next draw) p50 {figures['wall_ms_p50']:.0f} ms, p95 "
          f"{figures['wall_ms_p95']:.0f} ms")
    print(f"full reads of the counts started: {figures['full_reads']}; the catalog's change counter moved "
          f"{figures['catalog_moves']} times")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
