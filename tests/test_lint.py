"""The linter and the type checker hold on the whole tree in `make test` too (`make check` runs them before its
tests; their configuration is pyproject.toml's [tool.ruff] and [tool.mypy])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # mypy over the tree takes about a minute without its cache


@pytest.mark.parametrize("command", [["ruff", "check", "."], ["mypy"]], ids=["ruff", "mypy"])
def test_the_tree_is_clean(command):
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
