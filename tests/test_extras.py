"""A command that needs the torch stack, run in the web install (make run, Spaces), says so in one line and names the
install that adds it, instead of a traceback, and writes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.extras import EXTRA_OF, MissingExtra, missing_extra, require

ROOT = Path(__file__).resolve().parents[1]
# Run a command with every package of the extras missing, as in the web install.
WEB_ONLY = f"""
import importlib.abc, runpy, sys
class WebOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {sorted(EXTRA_OF)!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, WebOnly())
module, sys.argv = sys.argv[1], sys.argv[1:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def test_the_message_names_the_command_the_package_its_extra_and_the_install():
    error = ModuleNotFoundError("No module named 'torch.nn'", name="torch.nn")
    message = missing_extra(error, "python -m generators run")
    assert message.startswith("python -m generators run needs the gen extra (no module named 'torch')")
    assert "pip install '.[all]'" in message
    assert "metrics extra" in missing_extra(ModuleNotFoundError("x", name="torchmetrics"))
    assert missing_extra(ModuleNotFoundError("x", name="pandas")) is None  # not an extra's: a real bug, re-raised
    assert missing_extra(ValueError("torch")) is None
    with pytest.raises(MissingExtra, match=r"^tools.x needs the full install \(no module named 'torch_x'\)"):
        require("json", "torch_x", command="tools.x")  # json is there; torch_x is not


@pytest.mark.slow
@pytest.mark.parametrize("argv, extra", [
    (["generators", "run", "--models", "sdxl", "--suite", "taxonomy"], "gen"),
    (["generators", "smoke", "--models", "sdxl"], "gen"),
    (["arena", "demo", "--regenerate"], "gen"),
    (["tools.demo_bundle", "--out", "{tmp}/bundle"], "gen"),
])
def test_a_full_install_command_in_the_web_install_says_what_to_install_and_writes_nothing(tmp_path, argv, extra):
    env = {**os.environ, "ARENA_DB": str(tmp_path / "arena.db"), "ARENA_MEDIA_DIR": str(tmp_path / "media"),
           "ARENA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", WEB_ONLY, *[a.format(tmp=tmp_path) for a in argv]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert f"needs the {extra} extra" in done.stderr and "pip install '.[all]'" in done.stderr, done.stderr
    assert not (tmp_path / "arena.db").exists() and not (tmp_path / "bundle").exists()  # nothing half-way
