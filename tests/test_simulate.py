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


def test_the_simulated_server_refits_on_the_servers_cadence_between_checkpoints(monkeypatch):
    """The server refits every 50 votes; the simulation does too, even when its checkpoints are far apart."""
    from sampling import simulation

    fitted_at = []
    real_fit = simulation.fit_state

    def counting_fit(counts, **kwargs):
        fitted_at.append(int(np.asarray(counts)[0].sum()))
        return real_fit(counts, **kwargs)

    monkeypatch.setattr(simulation, "fit_state", counting_fit)
    outcome_p = simulate.outcome_probabilities([1050.0, 1000.0, 950.0, 900.0])
    schedule = simulation.Schedule(refit_every=50, refit_growth=0.0, redraw_every=50)
    for _ in simulation.walk("active", outcome_p=outcome_p, points=np.array([1000]), repetitions=2,
                             rng=np.random.default_rng(0), schedule=schedule):
        pass
    assert fitted_at == list(range(0, 1000, 50))
    assert simulate.build_parser().parse_args([]).refit_growth == 0.0


def _timed_votes(arena, pairwise_seconds, four_seconds):
    """Human pairwise votes and four-image votes that took the given seconds on the page."""
    import itertools
    import random

    from support.votes import image_of

    from arena import session as sessions
    from arena.four_image_session import next_four, vote_four
    from datamodel.battles import Pairing
    from datamodel.votes import record_vote
    from sampling.draws import serve_battle

    db = arena.db
    session = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    pairs = itertools.cycle(itertools.combinations(sorted(arena.model_ids), 2))
    for n, seconds in enumerate(pairwise_seconds):
        left, right = next(pairs)
        prompt_id = arena.prompt_ids[n % 3]
        battle = serve_battle(db, random.Random(n), session_id=session.session_id, annotator_id=session.annotator.id,
                              pairing=Pairing(prompt_id, image_of(db, prompt_id, left), image_of(db, prompt_id, right)))
        record_vote(db, battle.id, "A", session_id=session.session_id, shown_at=1000.0 * n, now=1000.0 * n + seconds,
                    rules=None)
    sitting = None
    for n, seconds in enumerate(four_seconds):
        sitting = next_four(db, random.Random(n), session, sitting, suites=["taxonomy"], strategy="uniform",
                            now=1000.0 * (n + 1))
        sitting = vote_four(db, session, sitting, best=1 + n % 4, on_screen=sitting.battle.media_token,
                            seconds_on_screen=seconds, now=1000.0 * (n + 1) + seconds)


def test_the_time_model_takes_the_seconds_of_a_databases_own_votes(small_arena, capsys):
    """--timings-from: the median seconds the page recorded per counted human vote, per kind of vote; the assumption,
    said to be one, for a kind with too few timed votes."""
    few = simulate.MIN_TIMED_VOTES
    _timed_votes(small_arena, [4.0] * (few // 2) + [9.0] * (few - few // 2) + [300.0], [])
    path = small_arena.settings.database
    model, notes = simulate.recorded_time_model(path)
    assert model.look_seconds == pytest.approx(9.0)  # the median of the timed votes: the 300 s one moves it little
    assert model.four_look_seconds == simulate.TimeModel.four_look_seconds
    assert f"median of {few + 1} timed human pairwise votes" in notes[0]
    assert "an assumption" in notes[1] and "0 timed four-image votes" in notes[1]
    args = ["--repetitions", "2", "--max-votes", "300", "--step", "100", "--bootstrap-rounds", "10", "--coverage-at",
            "0", "--strategies", "uniform", "--four-image", "uniform", "--timings-from", str(path)]
    assert simulate.main(args) == 0
    out = capsys.readouterr().out
    assert notes[0] in out and notes[1] in out
    assert any(line.startswith("uniform ") and "pairwise   9.08" in line for line in out.splitlines())
    _timed_votes(small_arena, [], [20.0] * few)
    model, notes = simulate.recorded_time_model(path)
    assert model.four_look_seconds == pytest.approx(20.0)
    assert f"median of {few} timed human four-image votes" in notes[1]


def test_timings_from_a_missing_database_stop_with_the_fix(tmp_path, capsys):
    assert simulate.main(["--timings-from", str(tmp_path / "nothing.db")]) == 2
    assert "nothing.db" in capsys.readouterr().err
