"""The benchmark command's own pieces (the timed comparison itself runs only as ``python -m ratings.bench``)."""

from __future__ import annotations

import numpy as np
import pytest

from ratings import bench


def test_synthetic_votes_follow_the_documented_design():
    names, a, b, outcome = bench.synthetic_codes(40_000, seed=0)
    assert len(names) == 12 and (a != b).all()
    truth = bench.true_ratings()
    assert 840 < min(truth.values()) < 860 and 1140 < max(truth.values()) < 1160
    shares = np.bincount(outcome, minlength=4) / len(outcome)
    assert shares[2] == pytest.approx(0.15, abs=0.01) and shares[3] == pytest.approx(0.10, abs=0.01)
    again = bench.synthetic_codes(40_000, seed=0)
    assert all(np.array_equal(x, y) for x, y in zip((a, b, outcome), again[1:]))


def test_parse_size_reads_k_and_m():
    assert [bench.parse_size(s) for s in ("10k", "100K", "1M", "2.5k", "25000")] == [10_000, 100_000, 1_000_000,
                                                                                       2_500, 25_000]
    with pytest.raises(Exception, match="write e.g. 10k"):
        bench.parse_size("lots")


def test_bench_runs_without_peers_and_prints_a_row_per_size(capsys):
    assert bench.main(["--sizes", "2k,3k", "--rounds", "20", "--peers", "none", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "2,000 votes" in out and "3,000 votes" in out
    assert out.count("ratings.fit_leaderboard (ours)") == 2


def test_max_difference_aligns_the_anchor():
    ours = {"x": 1100.0, "y": 900.0}
    assert bench.max_difference(ours, {"x": 1600.0, "y": 1400.0, "extra": 5.0}) == pytest.approx(0.0)
    assert bench.max_difference(ours, {"x": 1101.0, "y": 899.0}) == pytest.approx(1.0)
