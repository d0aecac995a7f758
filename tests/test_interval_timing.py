"""A small run of ``python -m tools.interval_timing --parts study``: every variant's first snapshot and refresh, and
the ratio against a baseline checkout with its target (the baseline here is this checkout itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.study import BENCH_SPEC as SPEC
from support.study import bench_cache_dir

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_a_small_run_prints_both_snapshots_of_every_variant_and_the_ratio_to_its_target(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tools.interval_timing", "--parts", "study", "--votes", str(SPEC.votes),
         "--annotators", str(SPEC.annotators), "--study-models", str(SPEC.models), "--prompts", str(SPEC.prompts),
         "--repeats", "1", "--new-votes", "12", "--baseline", str(ROOT),
         "--cache-dir", str(bench_cache_dir(tmp_path))],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for label in ("the checkout in", "arena protocol, bootstrap", "arena protocol, sandwich", "lmarena-2025"):
        assert f"{label}" in out
    assert out.count("first snapshot of a fresh worker, CPU time, median of 1 (least ") == 4
    assert out.count("refresh after 12 new votes, CPU time, median of 1 (least ") == 4
    assert out.count("the complete page (a staged first snapshot and its completion), CPU time, median of 1") == 4
    assert out.count("the votes counter's rise over the 12 votes") == 4
    for part in ("first snapshot", "complete page", "refresh"):
        assert f"sandwich ÷ the board before ({ROOT.name}), {part}, median CPU times: " in out
        assert "  median of the 1 turns' own ratios: " in out
        assert f"sandwich ÷ bootstrap, this checkout, {part}, median CPU times: " in out
    assert out.count("(target ≤ 0.5: ") == 2
