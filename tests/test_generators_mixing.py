"""A model's images made with another scheduler are never mixed with new ones under the same name (issue 26): the
consistency preset runs SD 2.1 with its repository's scheduler at the registry's 50 steps / 7.5, where the registry
(and the arena preset) swap in DPMSolverMultistepScheduler; steps and guidance alone cannot tell the two apart."""

from __future__ import annotations

import dataclasses
from functools import partial

import pytest

from core.presets import get_preset
from datamodel.catalog import PromptSpec, add_prompts
from datamodel.connection import connect
from datamodel.media import MediaStore
from generators.pipelines import make_generator
from generators.registry import apply_preset, builtin_models
from generators.runner import RunError, run
from generators.smoke import stand_ins


@pytest.mark.slow
def test_a_run_with_another_scheduler_refuses_to_add_to_the_models_images(tmp_path):
    db = connect(tmp_path / "arena.db")
    media = MediaStore(tmp_path / "media")
    ids = add_prompts(db, [PromptSpec("paraphrase", "1", f"A blue cube, wording {v}", role=str(v),
                                      subset="abstract", metadata={"category": "abstract"}) for v in range(2)]).ids
    registry = builtin_models()
    card = stand_ins(registry, registry["sd-2-1"])  # the registry's: DPMSolverMultistepScheduler swapped in
    paper = stand_ins(registry, apply_preset(registry, get_preset("consistency-paper"))["sd-2-1"])
    assert (card["sd-2-1"].steps, card["sd-2-1"].guidance) == (paper["sd-2-1"].steps, paper["sd-2-1"].guidance)
    assert (card["sd-2-1"].scheduler, paper["sd-2-1"].scheduler) == ("DPMSolverMultistepScheduler", "")
    cache = tmp_path / "cache"
    run(db, media, [card["sd-2-1"]], ids[:1], partial(make_generator, registry=card, cache_dir=cache))
    with pytest.raises(RunError, match=r"the database has 1 images of sd-2-1 made with DPMSolverMultistepScheduler; "
                                       r"this run makes them with DDIMScheduler"):
        run(db, media, [paper["sd-2-1"]], ids, partial(make_generator, registry=paper, cache_dir=cache),
            preset="consistency-paper")
    assert db.execute("SELECT COUNT(*) FROM images").fetchone()[0] == 1
    same = dataclasses.replace(card["sd-2-1"])  # the same scheduler resumes as before
    assert run(db, media, [same], ids, partial(make_generator, registry=card, cache_dir=cache)).made == 1
