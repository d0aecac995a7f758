"""A plug-in package, installed into a fresh virtualenv, adds a suite, a metric and a rating protocol that the command
line and the web page offer, with no line of the project changed (docs/extending.md, "Your own package").

The package is written here: three modules, each ending with its declaration, named by entry points of the groups
``t2i_arena.suites``, ``t2i_arena.metrics`` and ``t2i_arena.rating_protocols`` in its pyproject.toml. The virtualenv
is made with ``python -m venv`` and sees this project and the shared virtualenv's packages through a ``.pth`` file;
pip installs the plug-in into it from its folder (``--no-deps --no-build-isolation --no-index``: no network). The
shared virtualenv, which does not have the plug-in, offers none of the three.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.install, pytest.mark.timeout(900)]

PLUGIN = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "arena-toy-plugin"
        version = "0.1"

        [project.entry-points."t2i_arena.suites"]
        toy-squares = "arena_toy_plugin.suite"

        [project.entry-points."t2i_arena.metrics"]
        toy-brightness = "arena_toy_plugin.metric"

        [project.entry-points."t2i_arena.rating_protocols"]
        toy-elo = "arena_toy_plugin.protocol"

        [tool.setuptools]
        packages = ["arena_toy_plugin"]
        """,
    "arena_toy_plugin/__init__.py": "",
    "arena_toy_plugin/suite.py": """
        from datamodel.catalog import PromptSpec
        from suites.common import write_specs
        from suites.registry import SUITES, Builder, Suite


        def add_arguments(parser):
            parser.add_argument("--count", type=int, default=3, help="how many squares")


        def build(db, args, settings):
            specs = [PromptSpec("toy-squares", f"grey-{n}", f"A grey square number {n}", subset="grey")
                     for n in range(args.count)]
            return write_specs(db, specs), f"toy: {len(specs)} grey squares"


        SUITES.register(Suite(name="toy-squares", title="Toy squares", criteria="Pick the greyer square.",
                              builders=(Builder("toy-squares", "grey squares (a plug-in)", add_arguments, build),)))
        """,
    "arena_toy_plugin/metric.py": """
        from judges.metrics.registry import METRICS, Metric


        def score(run, scorer):
            return {}


        METRICS.register(Metric(name="toy-brightness", title="mean brightness (a plug-in)", direction="lower",
                                score=score, default=False))
        """,
    "arena_toy_plugin/protocol.py": """
        from dataclasses import dataclass

        from core.protocols import PROTOCOLS
        from ratings.protocols import OnlineElo


        @dataclass(frozen=True)
        class ToyElo(OnlineElo):
            name = "toy-elo"
            title = "online Elo, a plug-in's copy"


        PROTOCOLS.register(ToyElo())
        """,
}

# the web page's menus, as the browser receives them (the Blocks' config), by label
PAGE_MENUS = """
import json
from core.settings import load_settings
from arena.web.app import build_app
config = build_app(load_settings()).get_config_file()
print(json.dumps({c["props"].get("label"): [choice[1] for choice in c["props"].get("choices") or []]
                  for c in config["components"] if c.get("type") == "dropdown"}))
"""


def plugin_venv(tmp_path: Path) -> Path:
    """A virtualenv over the shared one's packages and this project, with the plug-in installed; its python."""
    source = tmp_path / "plugin"
    for name, text in PLUGIN.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(textwrap.dedent(text).lstrip())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    (site / "shared_venv.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
                                          f"{ROOT}\n")
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", str(source)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return python


def run(python: Path | str, *args: str, env: dict, cwd: Path) -> str:
    done = subprocess.run([str(python), *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)
    assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_plug_in_package_adds_a_suite_a_metric_and_a_protocol_to_the_commands_and_the_page(tmp_path):
    python = plugin_venv(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ARENA_", "GRADIO_", "PYTHON"))}
    env.update(ARENA_DB=str(tmp_path / "data" / "arena.db"), ARENA_MEDIA_DIR=str(tmp_path / "data" / "media"),
               ARENA_CACHE_DIR=str(tmp_path / "cache"), ARENA_DEMO="0", GRADIO_ANALYTICS_ENABLED="False")
    work = tmp_path / "work"  # outside the checkout: the project comes from the virtualenv's .pth
    work.mkdir()

    assert "toy-squares" in run(python, "-m", "arena", "suites", "build", "--help", env=env, cwd=work)
    assert "toy: 3 grey squares" in run(python, "-m", "arena", "suites", "build", "toy-squares", env=env, cwd=work)
    listed = run(python, "-m", "arena", "suites", "list", env=env, cwd=work)
    assert "toy-squares" in listed and "grey" in listed, listed
    assert "toy-brightness" in run(python, "-m", "judges", "metrics", "--help", env=env, cwd=work)
    assert "toy-elo" in run(python, "-m", "arena", "leaderboard", "--help", env=env, cwd=work)
    menus = json.loads(run(python, "-c", PAGE_MENUS, env=env, cwd=work).strip().splitlines()[-1])
    assert menus["Rating protocol"][-1] == "toy-elo", menus  # after the six built-ins

    shared = {**env, "PYTHONPATH": str(ROOT)}  # the shared virtualenv, without the plug-in, offers none of them
    assert "toy-squares" not in run(sys.executable, "-m", "arena", "suites", "build", "--help", env=shared, cwd=work)
    assert "toy-elo" not in run(sys.executable, "-m", "arena", "leaderboard", "--help", env=shared, cwd=work)
