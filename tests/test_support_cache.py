"""The test artefact cache (tests/support/cache.py): built once per hash of what builds it, rebuilt when that
changes, never left half-built, and never keeping a demo CLIP whose training was cut short."""

from __future__ import annotations

import json
import os
import time

import pytest
from support import cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_TEST_CACHE", str(tmp_path / "artefacts"))
    return tmp_path / "artefacts"


def test_an_artefact_is_built_once_and_again_when_what_builds_it_changes(root):
    built = []

    def build(folder):
        built.append(folder)
        (folder / "thing").write_text("made")

    first = cache.build_once("thing", ("pyproject.toml",), build, extra="recipe 1")
    again = cache.build_once("thing", ("pyproject.toml",), build, extra="recipe 1")
    assert first == again and built == [first] and (first / "thing").read_text() == "made"
    assert first.parent == root and first.name == f"thing-{cache.source_hash(('pyproject.toml',), 'recipe 1')}"
    other = cache.build_once("thing", ("pyproject.toml",), build, extra="recipe 2")
    assert other != first and built == [first, other]


def test_a_failed_build_leaves_nothing_and_the_next_run_builds_it(root):
    def broken(folder):
        (folder / "half").write_text("half")
        raise RuntimeError("pip failed")

    with pytest.raises(RuntimeError):
        cache.build_once("venv", (), broken, extra="x")
    assert not cache.artefact_dir("venv", extra="x").exists()
    folder = cache.build_once("venv", (), lambda f: (f / "whole").write_text("ok"), extra="x")
    assert (folder / "whole").exists() and not (folder / "half").exists()


def test_folders_of_older_code_unused_for_two_weeks_are_removed_when_a_new_one_is_built(root):
    old = cache.build_once("thing", (), lambda f: None, extra="old")
    recent = cache.build_once("thing", (), lambda f: None, extra="recent")
    weeks_ago = time.time() - (cache.KEEP_DAYS + 1) * 86400
    os.utime(old / cache.DONE, (weeks_ago, weeks_ago))
    cache.build_once("thing", (), lambda f: None, extra="new")
    assert not old.exists() and recent.exists()


@pytest.mark.parametrize("steps, kept", [(400, True), (67, False)])
def test_a_demo_clip_cut_short_by_its_time_limit_is_not_kept(tmp_path, steps, kept):
    folder = tmp_path / "tiny" / "demo-emoji-clip"
    folder.mkdir(parents=True)
    (folder / "training.json").write_text(json.dumps({"recipe": {"steps": 400}, "steps": steps}))
    cache.forget_cut_short_training(tmp_path)
    assert folder.exists() == kept
