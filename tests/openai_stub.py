"""Kept so that ``from openai_stub import ...`` in older tests still works: the code is in support/openai_stub.py."""

from support.openai_stub import *  # noqa: F401,F403
