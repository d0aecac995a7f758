"""The project's reference folder ``../shared`` (papers, the benchmarks' data files, protocols.md), beside the
checkout: read in place, never copied into the project.

A test that needs a file from it calls :func:`shared_file`, which skips the test with a message naming the file, what
it is and how to provide it when the folder or the file is missing (a fresh clone elsewhere has no ``../shared``).
``ARENA_TEST_SHARED`` points the tests at another copy of the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ARENA_TEST_SHARED") or ROOT.parent / "shared")

# What each file the tests read is, for the message when it is missing.
SEMVARBENCH = "data/semvarbench/test_data.tsv"
SEMVARBENCH_CATEGORIES = "data/semvarbench/categories"
HOLLINGER = "data/hollinger/abstract_vs_realistic.tsv"
PROTOCOLS = "reference/protocols.md"
DESCRIPTIONS = {
    SEMVARBENCH: "SemVarBench's test set (test_data.tsv, 684 anchor / permutation / paraphrase rows)",
    SEMVARBENCH_CATEGORIES: "SemVarBench's category files (one TSV of item ids per category)",
    HOLLINGER: "the paraphrase benchmark's abstract_vs_realistic.tsv (80 objects, 5 paraphrases each)",
    PROTOCOLS: "protocols.md, what the authors' code did where the papers are silent",
    "reference/papers/semvarbench.txt": "the SemVarBench paper's text (its judge prompt, Appendix)",
    "reference/papers/commonsense-t2i.txt": "the Commonsense-T2I paper's text (its fit prompt, section 2.3)",
    "reference/papers/taxonomy-image-generation.txt": "the taxonomy paper's text (its judge prompt, Figure 7)",
}


def shared_file(relative: str) -> Path:
    """``../shared/<relative>``; skips the calling test, saying exactly what is missing, when it is not there."""
    path = SHARED / relative
    if not path.exists():
        what = DESCRIPTIONS.get(relative, relative)
        where = "the folder itself is missing" if not SHARED.is_dir() else "the folder has no such file"
        pytest.skip(f"needs {what} at {path} ({where}): put the project's reference folder 'shared' beside the "
                    "checkout, or set ARENA_TEST_SHARED to a copy of it")
    return path
