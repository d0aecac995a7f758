"""The suite of open prompts: the prompts annotators type themselves, answered live by two models
(:mod:`datamodel.open_prompts`). Nothing imports or builds it: its prompts arrive one by one from the arena page."""

from __future__ import annotations

from datamodel.open_prompts import OPEN_SUITE
from suites.registry import SUITES, Suite

SUITES.register(Suite(
    name=OPEN_SUITE,
    title="Open prompts",
    criteria="The image that shows what the prompt asks for, all of it, and looks right.",
))
