"""The benchmark command's own pieces (the timed comparison itself runs only as ``python -m tools.ratings_bench``)."""

from __future__ import annotations

import numpy as np
import pytest

from tools import ratings_bench as bench


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
    assert out.count("target faster than every peer: no peer ran (--peers none)") == 2
    assert out.count("target within 0.5 Elo of the peers fitting the same unregularised model") == 2


def test_max_difference_aligns_the_anchor():
    ours = {"x": 1100.0, "y": 900.0}
    assert bench.max_difference(ours, {"x": 1600.0, "y": 1400.0, "extra": 5.0}) == pytest.approx(0.0)
    assert bench.max_difference(ours, {"x": 1101.0, "y": 899.0}) == pytest.approx(1.0)


def _result(seconds, shift):
    return {"total_s": seconds, "ratings": {"x": 1100.0 + shift, "y": 900.0 - shift}}


def test_verdicts_name_the_fastest_peer_and_leave_the_l2_penalised_fschat_out_of_the_elo_target():
    ours = {"x": 1100.0, "y": 900.0}
    results = {"fschat": _result(0.5, 30.0), "evalica": _result(0.2, 0.1), "choix-ilsr": _result(3.0, 0.3),
               "arena-rank": {"peer": "arena-rank", "error": "timed out after 300 s"}, "choix-opt": None}
    speed, agree = bench.verdict_lines(0.1, results, ours)
    assert speed.startswith("  target faster than every peer: met") and "fastest peer evalica 0.200 s" in speed
    assert "arena-rank, choix-opt did not run" in speed
    assert "within 0.5 Elo" in agree and ": met (largest max |Δ| 0.3000 Elo, choix-ilsr" in agree
    assert "fschat" not in agree.split("(")[1]  # 30 Elo off, but regularised: not part of the target
    slower, off = bench.verdict_lines(0.3, results | {"evalica": _result(0.2, 0.6)}, ours)
    assert "NOT met" in slower and ": NOT met (largest max |Δ| 0.6000 Elo, evalica" in off


def test_fschat_is_the_only_peer_outside_the_same_model_target():
    assert set(bench.PEERS) - set(bench.SAME_MODEL_PEERS) == {"fschat"}
    assert "penalty (C=1)" in bench.__doc__ and "fschat is left out" in bench.__doc__
