"""The simulation benchmark: its parts on known answers, and a tiny seeded run (the full run is a command)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import sampling
from tools import simulate


def test_truth_is_the_published_table_centred():
    truth = simulate.centred_truth(list(simulate.TRUE_ELO.values()))
    assert len(truth) == 12 and truth.mean() == pytest.approx(1000.0)
    assert truth.max() - truth.min() == pytest.approx(1056 - 900)


def test_outcomes_are_bradley_terry_among_decisive_votes():
    truth = np.array([1100.0, 1000.0, 900.0])
    p = simulate.outcome_probabilities(truth)
    assert p.shape == (3, 4) and p.sum(axis=1) == pytest.approx(np.ones(3))
    i, j = sampling.pair_index(3)
    decisive_win = p[:, 0] / (p[:, 0] + p[:, 1])
    assert decisive_win == pytest.approx(1 / (1 + 10 ** ((truth[j] - truth[i]) / 400)))
    assert p[2, 3] > p[0, 3]  # the weaker pair draws more "both bad"
    equal = simulate.outcome_probabilities([1000.0, 1000.0], bad_top=0.0, bad_bottom=0.0)
    assert equal[0, 2] == pytest.approx(0.15, abs=1e-3)  # Davidson ties between equal models


def test_checkpoints_grow_and_end_at_the_maximum():
    points = simulate.checkpoints(10_000, step=50, growth=0.02)
    assert points[0] == 50 and points[-1] == 10_000
    assert np.all(np.diff(points) >= 50)
    assert np.diff(points)[-1] <= 0.02 * 10_000 + 1


def test_criteria_on_known_answers():
    truth = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    estimates = np.array([[5, 4, 3, 2, 1], [4, 5, 3, 1, 2], [1, 2, 3, 4, 5]], dtype=float)
    rho = simulate.spearman_rows(estimates, truth)
    expected = [scipy.stats.spearmanr(e, truth).statistic for e in estimates]
    assert rho == pytest.approx(expected)
    assert simulate.top_k_rows(estimates, truth, k=2).tolist() == [True, True, False]
    ok = np.array([[False, True, True, True], [True, False, True, False], [True, True, True, True]])
    votes, settled = simulate.settled_at(ok, np.array([10, 20, 30, 40]))
    assert votes.tolist() == [20, 40, 10] and settled.tolist() == [True, False, True]


def test_the_simulation_uses_the_apps_functions():
    from sampling import simulation, warmup

    assert simulation.pair_probabilities is sampling.pair_probabilities
    assert simulation.fit_state is sampling.fit_state
    assert simulation.with_warmup is warmup.with_warmup


def test_a_tiny_run_is_seeded_and_sane():
    kwargs = dict(repetitions=3, max_votes=600, step=100, bootstrap_rounds=20, coverage_at=300)
    first = simulate.simulate_strategy("active", seed=4, **kwargs)
    again = simulate.simulate_strategy("active", seed=4, **kwargs)
    for field in ("spearman_votes", "top_votes", "coverage", "coverage_early", "bias", "outcome_shares"):
        assert np.array_equal(getattr(first, field), getattr(again, field))
    assert first.spearman_votes.shape == (3,) and np.all(first.spearman_votes <= 600)
    assert np.all((0 <= first.coverage) & (first.coverage <= 1))
    assert first.outcome_shares.sum() == pytest.approx(1.0)


def test_main_prints_the_table(capsys):
    code = simulate.main(["--repetitions", "2", "--max-votes", "300", "--step", "100", "--bootstrap-rounds", "10",
                          "--coverage-at", "0", "--strategies", "uniform,active"])
    assert code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert any(line.startswith("strategy") and "÷unif" in line for line in lines)
    assert any(line.startswith("uniform") and "1.00  1.00" in line for line in lines)
    assert any(line.startswith("active") for line in out.splitlines())


def test_main_refuses_bad_arguments_with_the_fix(capsys):
    assert simulate.main(["--strategies", "uniform,thompson"]) == 2
    assert "choices: uniform, balanced, active" in capsys.readouterr().err
    assert simulate.main(["--active-floor", "2"]) == 2
    assert "share between 0 and 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        simulate.main(["--help"])
    assert "--repetitions" in capsys.readouterr().out
