"""python -m tools.coverage (the intervals' coverage, the human + judge board, the vote thresholds) and the human
votes tools.simulate reports saved: the simulated votes follow the model each protocol fits, and small seeded runs
print every figure (the 200-repetition figures are in docs/benchmarks.md)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tools import coverage, judge_study, simulate


def test_the_simulated_votes_follow_the_model_each_protocol_fits():
    rng = np.random.default_rng(0)
    ratings = np.array([1100.0, 1000.0])
    a, b = np.zeros(400_000, dtype=int), np.ones(400_000, dtype=int)
    p = judge_study.win_probability(ratings, a[:1], b[:1])[0]
    half = judge_study.outcomes(rng, ratings, a, b, "half")
    score = np.select([half == 0, half >= 2], [1.0, 0.5], 0.0)
    assert score.mean() == pytest.approx(p, abs=0.003)  # ties scored ½: the expected score is σ(Δ)
    drop = judge_study.outcomes(rng, ratings, a, b, "drop")
    decisive = drop[drop < 2]
    assert (decisive == 0).mean() == pytest.approx(p, abs=0.003)  # ties dropped: Bradley–Terry among the rest
    assert (drop == 2).mean() == pytest.approx(judge_study.TIE, abs=0.003)


def test_a_small_seeded_run_prints_every_part(capsys):
    assert coverage.main(["--repetitions", "4", "--votes", "3000", "--rounds", "200", "--human-votes", "800",
                          "--judge-votes", "6000", "--established", "3000"]) == 0
    out = capsys.readouterr().out
    for label in ("lmarena-2025 sandwich", "lmarena-2025 bootstrap", "arena sandwich", "arena bootstrap"):
        row = re.search(rf"^{label}\s+\|\s+([\d.]+)%", out, re.M)
        assert row and float(row.group(1)) >= 75.0, label
    ppi = float(re.search(r"^human \+ judge, PPI correction\s+\|\s+[\d.]+%\s+\|\s+([\d.]+)", out, re.M).group(1))
    alone = float(re.search(r"^human votes only\s+\|\s+[\d.]+%\s+\|\s+([\d.]+)", out, re.M).group(1))
    assert ppi < alone
    assert re.search(r"the judge saves [\d,]+ \(\d+%\); simulated, the human-only board", out)
    assert re.search(r"^\s+100 \|", out, re.M) and re.search(r"^\s+1000 \|", out, re.M)
    assert coverage.main(["--parts", "nothing"]) == 2


def test_simulate_reports_the_human_votes_a_judge_saves(capsys):
    assert simulate.main(["--repetitions", "2", "--max-votes", "300", "--strategies", "uniform", "--coverage-at", "0",
                          "--bootstrap-rounds", "20", "--judge-votes", "2000", "--human-votes", "400"]) == 0
    out = capsys.readouterr().out
    assert "Human + judge (PPI++), 2 simulated studies: 400 human votes" in out
    assert re.search(r"At equal width the human-only board needs [\d,]+ human votes: the judge saves", out)


@pytest.mark.slow  # about 30 s on the 2-core machine: the 200-repetition figures are the command's
def test_both_interval_methods_and_the_ppi_board_cover_the_truth_in_simulation():
    for result in coverage.interval_coverage(40, 3000, seed=1, rounds=500):
        assert result.coverage.mean() >= 0.9, (result.label, result.coverage.mean())
    study = judge_study.ppi_coverage(coverage.truth(), 40, 1500, 15000, seed=1)
    assert study.ppi.coverage.mean() >= 0.9 and study.human.coverage.mean() >= 0.9
    assert study.ppi.width.mean() < 0.9 * study.human.width.mean()
    assert study.pooled.coverage.mean() < 0.8  # without the correction the judge's bias shows
    assert study.confirmed_width == pytest.approx(study.ppi.width.mean(), rel=0.1)
