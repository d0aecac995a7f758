"""The test tiers select what they say: ``make check`` the quick tests on SQLite, ``make check-postgresql`` the same
tests' PostgreSQL runs, and together they are the whole quick tier (pytest.ini, tests/conftest.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICK = re.search(r'^QUICK := (.+)$', (ROOT / "Makefile").read_text(), re.M).group(1)
MODULE = "tests/test_snapshots.py"  # a both_engines module with a slow test
SLOW = "test_new_votes_give_the_old_snapshot_at_once_and_a_new_one_in_the_background"


def _collected(marks: str) -> list[str]:
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", "-p", "no:randomly", "-m", marks]
    done = subprocess.run([*command, MODULE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if line.startswith(MODULE + "::")]


@pytest.mark.slow  # two collections in subprocesses: 7 s
def test_make_check_runs_sqlite_and_check_postgresql_the_postgresql_runs_of_the_same_tests():
    makefile = (ROOT / "Makefile").read_text()
    assert '-m "$(QUICK) and not postgresql"' in makefile and '-m "$(QUICK) and postgresql"' in makefile
    on_sqlite, on_postgresql = _collected(f"{QUICK} and not postgresql"), _collected(f"{QUICK} and postgresql")
    assert on_sqlite and all("[sqlite" in test for test in on_sqlite)
    assert on_postgresql and all("[postgresql" in test for test in on_postgresql)
    assert sorted(test.replace("[postgresql", "[sqlite") for test in on_postgresql) == sorted(on_sqlite)
    assert not any(SLOW in test for test in on_sqlite + on_postgresql)  # the slow tier is in neither
    source = (ROOT / MODULE).read_text()
    assert source.count("\ndef test_") - source.count("@pytest.mark.slow\ndef test_") == len(on_sqlite)
