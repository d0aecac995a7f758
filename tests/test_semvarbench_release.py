"""SemVarBench Tables 7 and 14 from the released ``benchmark/`` folder (github.com/zhuxiangru/SemVarBench, commit
861811fe21cd68b4433c9efa3c61acce50c4378b, 2025-04-25).

The release carries no licence, so the project ships none of it. ../shared/data/semvarbench holds its test set and
category files under ``.tsv`` names; the first test checks that they are the released bytes (SHA-256 of the files at
that commit), so Table 7's Test column and Table 14, which tests/test_semvarbench_published.py computes from them,
are computed from the release itself. The released training set (``trainingset/training_data.txt``, 10,770 rows of
id, T_a, T_pv, T_pi, no category) gives Table 7's deduplicated totals; its per-category Train column cannot be
computed, since the release does not say which category a training item is in. Point ``ARENA_SEMVARBENCH_RELEASE``
at a clone's ``benchmark/`` folder to run that part.
"""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import pytest
from support.shared import SEMVARBENCH, SEMVARBENCH_CATEGORIES, shared_file

# SHA-256 of the released files at commit 861811f (benchmark/testset/test_data.txt; the 20 category files in name
# order, concatenated; benchmark/trainingset/training_data.txt)
RELEASED_TEST = "1166d8227c532b6177d1126f79788ba0a0baa64f0d188cc936ddc7994dce5bcf"
RELEASED_CATEGORIES = "d2f6266fb1e4ac2ee0c965a87b6812e44d8cc0bebbdccf29c39aa1231b883b33"
RELEASED_TRAINING = "89069abd8c22966bfb0dafcf71718aa12d280a15dc263df1775cea001d30f537"


def published(table: str) -> dict[tuple[str, str], str]:
    path = Path(__file__).parents[1] / "arena" / "reports" / "published" / "semvarbench.csv"
    with path.open(newline="") as handle:
        return {(r["row"], r["column"]): r["value"] for r in csv.DictReader(handle) if r["table"] == table}


def test_the_shared_test_set_and_categories_are_the_released_files():
    test_set = shared_file(SEMVARBENCH)
    assert hashlib.sha256(test_set.read_bytes()).hexdigest() == RELEASED_TEST
    folder = shared_file(SEMVARBENCH_CATEGORIES)
    joined = b"".join(path.read_bytes() for path in sorted(folder.glob("*.tsv")))
    assert len(list(folder.glob("*.tsv"))) == 20 and hashlib.sha256(joined).hexdigest() == RELEASED_CATEGORIES


def read_rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return [line.rstrip("\n").split("\t") for line in handle if line.strip()]


def test_table_7_deduplicated_totals_from_the_released_training_and_test_sets():
    """Table 7's "Total(deduplication)" line prints 11,454 under Train and 10,770 under Total (its Total lines are
    swapped: per category Train + Test = Total, and 11,454 - 684 = 10,770): the release's training set is 10,770
    distinct items and, with the 684 test items, 11,454 (the text's "11,454 valid samples")."""
    release = os.environ.get("ARENA_SEMVARBENCH_RELEASE")
    if not release:
        pytest.skip("ARENA_SEMVARBENCH_RELEASE is not set: point it at a clone of github.com/zhuxiangru/SemVarBench's "
                    "benchmark/ folder (commit 861811f; not redistributable, so not in the project)")
    training = Path(release) / "trainingset" / "training_data.txt"
    assert hashlib.sha256(training.read_bytes()).hexdigest() == RELEASED_TRAINING
    train = read_rows(training)
    test = read_rows(shared_file(SEMVARBENCH))
    assert all(len(row) == 4 for row in train)
    train_items = {tuple(row[1:]) for row in train}
    test_items = {tuple(row[1:]) for row in test}
    printed = published("7")
    assert len(train) == len(train_items) == int(printed[("Total(deduplication)", "Total")].replace(",", ""))
    assert not train_items & test_items
    assert len(train_items | test_items) == int(printed[("Total(deduplication)", "Train")].replace(",", ""))
    assert len(test_items) == int(printed[("Total(deduplication)", "Test")])
