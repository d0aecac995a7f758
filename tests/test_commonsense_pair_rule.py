"""Commonsense-T2I's pair rule on failed answers, case by case against the authors' evaluate.py.

evaluate.py (github.com/zeyofu/Commonsense-T2I, commit 07f2fdb, Apache-2.0) reads each of the judge's answers with
``int(answer.strip())`` and writes -1 when that fails; ``tell_supporting_description(score1, score2)`` then says
which description an image supports: 1 for (1, 0), 2 for (0, 1), one of the two at random for (1, 1), and none (0)
for anything else, a -1 included; a pair is right when the P1 image supports description 1 and the P2 image
description 2 (``get_score``). Below, that reading is written out from its definition and compared with the
project's rule (:func:`judges.commonsense.score_pair`) on every combination of answers 1, 0 and failed (None).
"""

from __future__ import annotations

import itertools
import random

import pytest

from judges.commonsense import score_pair

ANSWERS = (1, 0, None)  # None: the judge's answer was not a number (evaluate.py: -1)


def evaluate_py_support(score1: int, score2: int) -> set[int]:
    """The descriptions an image may support under evaluate.py's tell_supporting_description (a set: (1, 1) is a
    random choice between 1 and 2)."""
    if (score1, score2) == (1, 0):
        return {1}
    if (score1, score2) == (0, 1):
        return {2}
    if (score1, score2) == (1, 1):
        return {1, 2}
    return {0}


def evaluate_py_scores(fit_11, fit_12, fit_21, fit_22) -> set[int]:
    """The pair's possible scores under evaluate.py: answers (I1, D1), (I1, D2), (I2, D1), (I2, D2), -1 for a
    failed one."""
    as_read = [-1 if value is None else value for value in (fit_11, fit_12, fit_21, fit_22)]
    first = evaluate_py_support(as_read[0], as_read[1])
    second = evaluate_py_support(as_read[2], as_read[3])
    return {int(a == 1 and b == 2) for a in first for b in second}


CASES = list(itertools.product(ANSWERS, repeat=4))


@pytest.mark.parametrize("fits", CASES, ids=["".join("x" if v is None else str(v) for v in case) for case in CASES])
def test_the_published_rule_scores_each_pair_as_evaluate_py(fits):
    fit_11, fit_12, fit_21, fit_22 = fits
    raw = {(1, "d1"): fit_11, (1, "d2"): fit_12, (2, "d1"): fit_21, (2, "d2"): fit_22}
    possible = evaluate_py_scores(*fits)
    for seed in range(4):  # the pick of an image said to fit both: any of evaluate.py's outcomes
        score, _ = score_pair(raw, "unfit", (random.Random(seed), random.Random(seed + 100)))
        assert score in possible, (fits, score, possible)


@pytest.mark.parametrize("fits", [case for case in CASES if None in case])
def test_the_project_default_leaves_a_pair_with_a_failed_answer_out(fits):
    raw = dict(zip([(1, "d1"), (1, "d2"), (2, "d1"), (2, "d2")], fits))
    assert score_pair(raw, "skip", (random.Random(0), random.Random(1)))[0] is None


def test_the_issue_example_a_failed_partner_answer_does_not_count_as_a_fit():
    """answers [1, -1] for the P1 image and [0, 1] for the P2 image: evaluate.py scores 0 (the P1 image supports no
    description), not 1."""
    raw = {(1, "d1"): 1, (1, "d2"): None, (2, "d1"): 0, (2, "d2"): 1}
    assert evaluate_py_scores(1, None, 0, 1) == {0}
    assert score_pair(raw, "unfit", (random.Random(0), random.Random(0)))[0] == 0
