"""A web-only install in a fresh virtualenv serves the demo and takes a vote in a real browser.

The virtualenv gets the hashed web lock (``requirements-web.lock``) and then the project itself, built from a clean
copy of the working tree (so the wheel's package data, the demo bundle included, is what ships). It holds no torch,
diffusers or transformers; the app is started from it on a fresh data folder, outside the repository, loads the
demo bundle at first start and serves it; Chromium signs in and votes; the vote is in the database.

The locked dependencies are installed once into the test artefact cache (``support/cache.py``: a folder named by a hash
of pyproject.toml and the lock) and reused by every later run, in any clone; the project is reinstalled on every
run. Figures (install time and size, first start) are printed (run
with ``-s`` to see them).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.browser import sign_in
from support.cache import build_once
from support.processes import LoggedProcess, stop_logged

from tools.load import free_port

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-web.lock"
HEAVY = ("torch", "torchvision", "diffusers", "transformers", "open_clip", "torchmetrics", "torch_fidelity",
         "accelerate")
NO_INDEX = ("Could not find a version", "No matching distribution", "NewConnectionError", "Network is unreachable",
            "Temporary failure in name resolution")
pytestmark = [pytest.mark.install, pytest.mark.timeout(1200)]


def _pip(python: Path, *args: str, timeout: float = 900) -> None:
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *args], capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        if any(text in done.stderr for text in NO_INDEX):
            pytest.skip(f"pip cannot reach the packages (no network or index?): {done.stderr[-300:]}")
        pytest.fail(f"pip install {' '.join(args)} failed:\n{done.stderr[-2000:]}")


def _du(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file() and not file.is_symlink())


def web_venv() -> tuple[Path, dict]:
    """The virtualenv with the web lock installed (made once per pyproject.toml and lock), and its figures."""

    def install(venv: Path) -> None:
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        _pip(venv / "bin" / "python", "--require-hashes", "--no-deps", "-r", str(LOCK))
        (venv / "install.json").write_text(json.dumps({"install_s": round(time.monotonic() - started, 1)}))

    venv = build_once("venv-web", ("pyproject.toml", LOCK.name), install, extra=str(sys.version_info[:2]))
    return venv, json.loads((venv / "install.json").read_text())


def _source_copy(target: Path) -> Path:
    """The working tree's files (tracked and untracked, not ignored) copied to ``target``: no stale build/ folder."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the working tree's files cannot be listed")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_a_web_only_virtualenv_serves_the_demo_and_takes_a_browser_vote(tmp_path, browser):
    venv, figures = web_venv()
    python = venv / "bin" / "python"
    started = time.monotonic()
    _pip(python, "--no-deps", "--force-reinstall", str(_source_copy(tmp_path / "src")), timeout=600)
    figures["project_install_s"] = round(time.monotonic() - started, 1)
    figures["venv_mb"] = round(_du(venv) / 1e6)
    found = subprocess.run([str(python), "-c", "import importlib.util, json; "
                            f"print(json.dumps([m for m in {HEAVY!r} if importlib.util.find_spec(m)]))"],
                           capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert found.returncode == 0 and json.loads(found.stdout) == [], found.stdout + found.stderr

    data, port = tmp_path / "data", free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ARENA_", "GRADIO_", "PYTHON"))}
    env.update(ARENA_DB=str(data / "arena.db"), ARENA_MEDIA_DIR=str(data / "media"),
               ARENA_CACHE_DIR=str(tmp_path / "cache"), ARENA_PERSISTENT_DIR=str(tmp_path / "no-persistent-storage"),
               GRADIO_ANALYTICS_ENABLED="False")
    log = tmp_path / "app.log"
    with open(log, "w") as out:  # a file, not a pipe: the server's children inherit it
        process = LoggedProcess([str(venv / "bin" / "arena"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    process.log = log
    url = f"http://127.0.0.1:{port}/"
    started = time.monotonic()
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"the app exited with {process.returncode}:\n{log.read_text()}")
            if time.monotonic() - started > 180:
                pytest.fail(f"the app did not answer on {url} within 180 s:\n{log.read_text()}")
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.25)
        figures["first_start_s"] = round(time.monotonic() - started, 1)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(url)
        sign_in(page, "web-only-voter", "token-0001", timeout=30000)
        page.wait_for_function("() => document.querySelector('#reveal .reveal') !== null", timeout=30000)
        page.click("#vote-a")
        page.wait_for_selector("#reveal .voted", timeout=30000)
        revealed = page.inner_text("#reveal")
    finally:
        output = stop_logged(process)
    print(f"\nweb-only install: {figures}")
    assert "Demo ready: 109 prompts, 436 images" in output, output  # arena/demo/seeding.py: 4 suites, 4 models
    with sqlite3.connect(data / "arena.db") as db:
        votes = db.execute(
            "SELECT v.voter, ma.name, mb.name, v.outcome FROM votes v JOIN battles b ON b.id = v.battle_id "
            "JOIN images ia ON ia.id = b.left_image_id JOIN models ma ON ma.id = ia.model_id "
            "JOIN images ib ON ib.id = b.right_image_id JOIN models mb ON mb.id = ib.model_id").fetchall()
        images = db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
    assert len(votes) == 1, votes
    voter, model_a, model_b, outcome = votes[0]
    assert voter == "web-only-voter" and model_a.startswith("demo-") and model_b.startswith("demo-")
    assert outcome == "A", outcome
    assert model_a in revealed and model_b in revealed
    assert images == 436
