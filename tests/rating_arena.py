"""Kept so that ``from rating_arena import ...`` in older tests still works: the code is in support/ratings.py."""

from support.ratings import MODELS, build_rating_arena, more_prompts  # noqa: F401
