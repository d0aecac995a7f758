"""The test tiers select what they say: ``make check`` the quick tests on SQLite, ``make check-postgresql`` the same
tests' PostgreSQL runs, and together they are the whole quick tier (pytest.ini, tests/conftest.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_QUICK_LINE = re.search(r'^QUICK := (.+)$', (ROOT / "Makefile").read_text(), re.M)
assert _QUICK_LINE is not None, "the Makefile defines QUICK"
QUICK = _QUICK_LINE.group(1)
MODULE = "tests/test_snapshots.py"  # a both_engines module with a slow test
SLOW = "test_new_votes_give_the_old_snapshot_at_once_and_a_new_one_in_the_background"


# One interpreter collects the module once per mark expression (pytest.main twice; the second collection reuses the
# imports of the first instead of paying a second start-up): what each -m selects is pytest's own answer either way.
_COLLECT_EACH = """
import sys, pytest
for marks in sys.argv[2:]:
    print("== -m " + marks, flush=True)
    code = pytest.main(["--collect-only", "-q", "-p", "no:xdist", "-p", "no:randomly", "-m", marks, sys.argv[1]])
    print(f"== exit {int(code)}", flush=True)
"""


def _collected(*expressions: str) -> list[list[str]]:
    """The test ids of MODULE that ``pytest -m EXPRESSION`` selects, for each expression."""
    done = subprocess.run([sys.executable, "-c", _COLLECT_EACH, MODULE, *expressions], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    parts = done.stdout.split("== -m ")[1:]
    assert [part.split("\n", 1)[0] for part in parts] == list(expressions), done.stdout + done.stderr
    assert all(part.rstrip().endswith("== exit 0") for part in parts), done.stdout + done.stderr
    return [[line for line in part.splitlines() if line.startswith(MODULE + "::")] for part in parts]


@pytest.mark.slow  # two collections in a subprocess: 5 s
def test_make_check_runs_sqlite_and_check_postgresql_the_postgresql_runs_of_the_same_tests():
    makefile = (ROOT / "Makefile").read_text()
    assert '-m "$(QUICK) and not postgresql"' in makefile and '-m "$(QUICK) and postgresql"' in makefile
    on_sqlite, on_postgresql = _collected(f"{QUICK} and not postgresql", f"{QUICK} and postgresql")
    assert on_sqlite and all("[sqlite" in test for test in on_sqlite)
    assert on_postgresql and all("[postgresql" in test for test in on_postgresql)
    assert sorted(test.replace("[postgresql", "[sqlite") for test in on_postgresql) == sorted(on_sqlite)
    assert not any(SLOW in test for test in on_sqlite + on_postgresql)  # the slow tier is in neither
    source = (ROOT / MODULE).read_text()
    assert source.count("\ndef test_") - source.count("@pytest.mark.slow\ndef test_") == len(on_sqlite)
