"""Packaging and Hugging Face Spaces: settings from Spaces' environment, /data as persistent storage, the app started
the way Spaces start it (``python app.py``, environment only), a web-only start that never imports torch, and the
package metadata that requirements.txt is generated from."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.arena import build_small_arena
from support.processes import LoggedProcess, stop_logged, wait_answering

from core.settings import load_settings
from tools.load import free_port

ROOT = Path(__file__).resolve().parents[1]
# Importing any of these pulls the 6 GB stack a web-only install leaves out.
HEAVY = ("torch", "torchvision", "diffusers", "transformers", "open_clip", "torchmetrics", "torch_fidelity",
         "accelerate")
BLOCKER = f"""
import importlib.abc, runpy, sys
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ImportError(f"web-only start imported {{name}}")
sys.meta_path.insert(0, Blocker())
sys.argv = ["app.py"]
runpy.run_path("app.py", run_name="__main__")
"""


def test_spaces_server_variables_are_read_below_the_arena_ones(tmp_path):
    spaces = {"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "7999"}
    config = tmp_path / "arena.toml"
    config.write_text('host = "10.1.1.1"\nport = 7001\n')
    settings = load_settings(env=spaces, config_file=config)
    assert (settings.host, settings.port) == ("0.0.0.0", 7999)  # Spaces' variables over the file
    settings = load_settings(env={**spaces, "ARENA_HOST": "127.0.0.2", "ARENA_PORT": "7002"}, config_file=config)
    assert (settings.host, settings.port) == ("127.0.0.2", 7002)  # the arena's own variables over Spaces'
    assert load_settings(env={**spaces, "ARENA_PORT": "7002"}, config_file=config, port=7003).port == 7003  # flags
    assert (load_settings(env={}, config_file=config).host, load_settings(env={}).host) == ("10.1.1.1", "127.0.0.1")


def test_persistent_storage_folder_holds_the_database_and_media_when_it_exists(tmp_path):
    persistent = tmp_path / "data"
    env = {"ARENA_PERSISTENT_DIR": str(persistent)}
    absent = load_settings(env=env)
    assert (absent.db_path, absent.media_dir) == (Path("data/arena.db"), Path("data/media"))
    persistent.mkdir()
    present = load_settings(env=env)
    assert (present.db_path, present.media_dir) == (persistent / "arena.db", persistent / "media")
    chosen = load_settings(env={**env, "ARENA_DB": str(tmp_path / "mine.db")})
    assert (chosen.db_path, chosen.media_dir) == (tmp_path / "mine.db", persistent / "media")


def _start_like_spaces(tmp_path, command: list[str]) -> tuple[LoggedProcess, str]:
    """Start the app as a Space does: in the repository, environment only; /data is ``tmp_path`` here."""
    arena = build_small_arena(tmp_path)  # tmp_path/arena.db and tmp_path/media: what persistent storage holds
    arena.db.close()
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
    env.update(GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port), ARENA_PERSISTENT_DIR=str(tmp_path),
               ARENA_CACHE_DIR=str(tmp_path / "cache"), GRADIO_ANALYTICS_ENABLED="False")
    log = open(tmp_path / "app.log", "w")  # a file, not a pipe: the server's children inherit it
    process = LoggedProcess(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    process.log = tmp_path / "app.log"
    return process, f"http://127.0.0.1:{port}"


_stop = stop_logged  # the older name, kept importable from here


@pytest.mark.slow
def test_app_starts_the_way_spaces_start_it(tmp_path):
    process, url = _start_like_spaces(tmp_path, [sys.executable, "app.py"])
    try:
        page = wait_answering(process, url + "/")
        assert page.status_code == 200 and "gradio" in page.text.lower()
    finally:
        output = stop_logged(process)
    assert f"database {tmp_path / 'arena.db'}" in output, output  # persistent storage, not ./data


@pytest.mark.slow
def test_web_only_start_serves_and_votes_without_the_torch_stack(tmp_path):
    from gradio_client import Client

    from tools.load import shown_token

    process, url = _start_like_spaces(tmp_path, [sys.executable, "-c", BLOCKER])
    try:
        wait_answering(process, url + "/")
        client = Client(url, verbose=False)
        shown = client.predict("web-only", "token-0001", api_name="/sign_in")
        voted = client.predict("All suites", False, shown_token(shown), api_name="/vote_a")
        assert "Your vote: <b>" in voted[3] and "Vote #" not in voted[3]
    finally:
        output = stop_logged(process)
    assert "web-only start imported" not in output, output


def test_requirements_files_are_generated_from_pyproject():
    from tools.requirements import render

    for name, text in render().items():
        assert (ROOT / name).read_text() == text, f"{name} is stale: run python -m tools.requirements"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    heavy = {"torch", "torchvision", "diffusers", "transformers", "open_clip_torch", "torchmetrics", "accelerate",
             "torch-fidelity"}
    serving = (ROOT / "requirements.txt").read_text().splitlines()  # make run and Spaces: the web install, no torch
    assert not {line.split("==")[0].lower() for line in serving} & heavy, serving
    web_only = {pin for pin in [*project["dependencies"], *project["optional-dependencies"]["web"]]}
    assert {line for line in serving if "==" in line} == web_only
    full = (ROOT / "requirements-dev.txt").read_text().splitlines()  # make test: everything, on top of it
    assert full[1] == "-r requirements.txt"
    assert "torch==2.14.1" in full and "torchvision==0.29.1" in full  # the pins the machines hold
    extras = project["optional-dependencies"]
    everything = {pin for name in ("gen", "metrics", "judges", "dev") for pin in extras[name]
                  if not pin.startswith("t2i-arena")}
    assert everything <= {line for line in serving + full if "==" in line}


@pytest.mark.parametrize("lock", ["requirements-web.lock", "requirements-all.lock"])
def test_each_hashed_lock_pins_what_pyproject_pins(lock):
    from tools.requirements import LOCKS, lock_mismatches, lock_pins

    text = (ROOT / lock).read_text()
    lines = text.splitlines()
    assert lock in "\n".join(lines[:6])  # the command that made it, with its output file, is in its first lines
    assert lock_mismatches(lock) == [], f"{lock} is stale: rerun the command in its first lines"
    pins = lock_pins(text)
    for number, line in enumerate(lines):  # every package with its hash
        if line.split("==")[0] in pins:
            assert lines[number + 1].strip().startswith("--hash=sha256:"), line
    heavy = {"torch", "torchvision", "diffusers", "transformers", "open-clip-torch"}
    if LOCKS[lock] == ("web",):
        assert not heavy & set(pins), heavy & set(pins)  # the web install holds no torch stack
    else:
        assert heavy <= set(pins), heavy - set(pins)
    stale = lock_mismatches(lock, pyproject_text=(ROOT / "pyproject.toml").read_text().replace(
        '"gradio==6.31.0"', '"gradio==6.30.0"'))
    assert stale == [f"{lock} pins gradio 6.31.0, pyproject.toml 6.30.0"]
