"""Bradley–Terry ratings, the leaderboard table, tie policies, bootstrap, online Elo and the vote-format edge."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import choix
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ratings
from ratings.bradley_terry import fit_bradley_terry, newton_bt, rank_by_ci
from ratings.elo import online_elo
from ratings.votes import FitCells, count_tensor, fit_cells

CASES = Path(__file__).parent / "data" / "ratings"


def load_cases(kind: str) -> list[dict]:
    cases = [json.loads(p.read_text()) | {"file": p.name} for p in sorted(CASES.glob("*.json"))]
    return [c for c in cases if c["kind"] == kind]


def votes_from_rows(rows: list[list]) -> pd.DataFrame:
    expanded = [row[:3] for row in rows for _ in range(row[3])]
    return pd.DataFrame(expanded, columns=["model_a", "model_b", "outcome"])


def synthetic_votes(n_votes: int, seed: int, n_models: int = 8, tie_share: float = 0.25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    names = np.array([f"model-{i}" for i in range(n_models)])
    true = np.linspace(850, 1150, n_models)
    a = rng.integers(0, n_models, n_votes)
    b = (a + rng.integers(1, n_models, n_votes)) % n_models
    p_a = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
    kind = rng.random(n_votes)
    outcome = np.where(kind < tie_share * 0.6, "tie", np.where(kind < tie_share, "both_bad",
                                                               np.where(rng.random(n_votes) < p_a, "A", "B")))
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": outcome})


def rating_map(table: pd.DataFrame) -> dict[str, float]:
    return dict(zip(table["model"], table["rating"]))


# --- known answers -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", load_cases("bradley_terry"), ids=lambda c: c["file"])
def test_bradley_terry_known_answers(case):
    votes = votes_from_rows(case["votes"])
    params = dict(case["params"])
    if "anchor" in params:
        params["anchor"] = tuple(params["anchor"])
    table = ratings.fit_leaderboard(votes, ridge=0, rounds=0, **params)
    got = rating_map(table)
    assert set(got) == set(case["expected"])
    for model, expected in case["expected"].items():
        assert got[model] == pytest.approx(expected, abs=case["tolerance"]), (case["file"], model)
    # the default ridge moves these ratings by far less than an Elo point
    default = rating_map(ratings.fit_leaderboard(votes, rounds=0, **params))
    for model, expected in case["expected"].items():
        assert default[model] == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize("case", load_cases("online_elo"), ids=lambda c: c["file"])
def test_online_elo_known_answers(case):
    elo = online_elo(votes_from_rows(case["votes"]), **case["params"])
    for model, expected in case["expected"].items():
        assert elo[model] == pytest.approx(expected, abs=case["tolerance"])


def test_known_answer_cases_exist_for_each_formula():
    kinds = {json.loads(p.read_text())["kind"] for p in CASES.glob("*.json")}
    assert {"bradley_terry", "online_elo", "cohen_kappa", "fleiss_kappa"} <= kinds


# --- agreement with choix (a runtime dependency) -------------------------------------------------------------------

def choix_pairs(votes: pd.DataFrame, models: list[str], tie_policy: str) -> list[tuple[int, int]]:
    """Votes as choix (winner, loser) pairs; under 'half' every decisive vote twice and a tie once each way."""
    index = {m: i for i, m in enumerate(models)}
    pairs = []
    for a, b, outcome in votes[["model_a", "model_b", "outcome"]].itertuples(index=False):
        i, j = index[a], index[b]
        if outcome in ("A", "B"):
            win = (i, j) if outcome == "A" else (j, i)
            pairs += [win] * (2 if tie_policy == "half" else 1)
        elif tie_policy == "half":
            pairs += [(i, j), (j, i)]
    return pairs


def to_elo(theta: np.ndarray) -> np.ndarray:
    elo = 400 * np.asarray(theta) / math.log(10)
    return elo - elo.mean() + 1000


@pytest.mark.parametrize("tie_policy", ["drop", "half"])
def test_matches_choix_within_half_an_elo_point(tie_policy):
    votes = synthetic_votes(3000, seed=7)
    table = ratings.fit_leaderboard(votes, tie_policy=tie_policy, ridge=0, rounds=0)
    models = sorted(table["model"])
    ours = np.array([rating_map(table)[m] for m in models])
    pairs = choix_pairs(votes, models, tie_policy)
    ilsr = to_elo(choix.ilsr_pairwise(len(models), pairs, max_iter=1000, tol=1e-12))
    opt = to_elo(choix.opt_pairwise(len(models), pairs, alpha=0.0, tol=1e-10))
    assert np.abs(ours - ilsr).max() < 0.5
    assert np.abs(ours - opt).max() < 0.5
    assert np.abs(ours - ilsr).max() < 1e-6  # in fact they agree to numerical precision


def test_newton_matches_choix_dense_on_a_batch():
    rng = np.random.default_rng(3)
    wins = rng.integers(1, 30, size=(5, 6, 6)).astype(float)
    for w in wins:
        np.fill_diagonal(w, 0)
    theta, converged = newton_bt(wins)
    assert converged.all()
    for w, t in zip(wins, theta):
        expected = choix.ilsr_pairwise_dense(w, max_iter=1000, tol=1e-13)
        np.testing.assert_allclose(t, expected - expected.mean(), atol=1e-8)


# --- bootstrap -----------------------------------------------------------------------------------------------------

def test_bootstrap_is_deterministic_under_the_seed():
    votes = synthetic_votes(2000, seed=1)
    first = ratings.fit_leaderboard(votes, rounds=200, seed=42)
    again = ratings.fit_leaderboard(votes, rounds=200, seed=42)
    other = ratings.fit_leaderboard(votes, rounds=200, seed=43)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["lower"], other["lower"])
    np.testing.assert_allclose(first["rating"], other["rating"])  # the rating is the fit, not a bootstrap statistic
    generator = ratings.fit_leaderboard(votes, rounds=200, seed=np.random.default_rng(42))
    pd.testing.assert_frame_equal(first, generator)


def test_ci_contains_the_fit_and_narrows_with_more_votes():
    small = ratings.fit_leaderboard(synthetic_votes(1000, seed=2), rounds=300)
    large = ratings.fit_leaderboard(synthetic_votes(20000, seed=2), rounds=300)
    for table in (small, large):
        assert (table["lower"] <= table["rating"]).all()
        assert (table["rating"] <= table["upper"]).all()
    width = lambda t: (t["upper"] - t["lower"]).mean()  # noqa: E731
    assert width(large) < width(small) / 3


def test_bootstrap_redraw_keeps_the_vote_total_and_is_multinomial():
    counts = count_tensor(np.array([0, 0, 1, 2]), np.array([1, 2, 2, 0]), np.array([0, 1, 2, 0]), 3)
    cells = fit_cells(counts, "half")
    fit = fit_bradley_terry(counts, tie_policy="half", rounds=0)
    assert fit.samples.shape == (0, 3)
    redrawn = ratings.bradley_terry.bootstrap_counts(cells.count, 500, np.random.default_rng(0))
    assert (redrawn.sum(axis=1) == cells.count.sum()).all()
    np.testing.assert_allclose(redrawn.mean(axis=0), cells.count, atol=0.2)


def test_bootstrap_samples_match_refits_of_the_redrawn_counts():
    votes = synthetic_votes(500, seed=4, n_models=4)
    models, counts = ratings.vote_counts(votes)
    fit = fit_bradley_terry(counts, models=list(models), rounds=5, seed=9, ridge=0)
    cells = fit_cells(counts, "drop")
    redrawn = ratings.bradley_terry.bootstrap_counts(cells.count, 5, np.random.default_rng(9))
    for r in range(5):
        again = FitCells(cells.i, cells.j, cells.score, redrawn[r])
        theta, ok = newton_bt(again.win_matrix(4))
        assert ok
        np.testing.assert_allclose(fit.samples[r], to_elo(theta), atol=1e-8)


# --- tie policies --------------------------------------------------------------------------------------------------

def test_tie_policies_differ_as_documented():
    decisive = votes_from_rows([["x", "y", "A", 6], ["y", "x", "A", 2], ["x", "z", "A", 3], ["z", "x", "A", 2],
                                ["y", "z", "A", 3], ["z", "y", "A", 3]])
    extra = votes_from_rows([["x", "y", "tie", 4], ["y", "z", "both_bad", 5]])
    both = pd.concat([decisive, extra], ignore_index=True)
    fit = lambda v, p: rating_map(ratings.fit_leaderboard(v, tie_policy=p, ridge=0, rounds=0))  # noqa: E731
    # drop: ties and both-bad change nothing
    assert fit(both, "drop") == pytest.approx(fit(decisive, "drop"), abs=1e-9)
    # half: a tie pulls x and y together; both-bad counts like a tie
    assert fit(both, "half")["x"] - fit(both, "half")["y"] < fit(decisive, "half")["x"] - fit(decisive, "half")["y"]
    only_bb = pd.concat([decisive, votes_from_rows([["x", "y", "both_bad", 4], ["y", "z", "both_bad", 5]])])
    only_tie = pd.concat([decisive, votes_from_rows([["x", "y", "tie", 4], ["y", "z", "tie", 5]])])
    assert fit(only_bb, "half") == pytest.approx(fit(only_tie, "half"), abs=1e-9)
    # half_ties_drop_both_bad: ties count half, both-bad leave the fit
    no_bb = pd.concat([decisive, votes_from_rows([["x", "y", "tie", 4]])])
    assert fit(both, "half_ties_drop_both_bad") == pytest.approx(fit(no_bb, "half"), abs=1e-9)
    assert fit(both, "half_ties_drop_both_bad") != pytest.approx(fit(both, "half"), abs=1e-3)


def test_both_bad_rate_is_reported_under_every_policy():
    votes = votes_from_rows([["x", "y", "A", 3], ["y", "x", "A", 2], ["x", "y", "both_bad", 5], ["y", "x", "tie", 2]])
    for policy in ratings.TIE_POLICIES:
        table = ratings.fit_leaderboard(votes, tie_policy=policy, rounds=10).set_index("model")
        assert table.loc["x", "votes"] == 12 and table.loc["x", "both_bad"] == 5
        assert table.loc["x", "both_bad_rate"] == pytest.approx(5 / 12)
        assert (table.loc["x", "wins"], table.loc["x", "losses"], table.loc["x", "ties"]) == (3, 2, 2)


def test_unknown_tie_policy_says_which_exist():
    with pytest.raises(ValueError, match="choose one of 'drop', 'half', 'half_ties_drop_both_bad'"):
        ratings.fit_leaderboard(votes_from_rows([["x", "y", "A", 1]]), tie_policy="ignore")


# --- the leaderboard table -----------------------------------------------------------------------------------------

def test_table_columns_order_and_sums():
    votes = synthetic_votes(3000, seed=5)
    table = ratings.fit_leaderboard(votes, rounds=100)
    assert list(table.columns) == ["model", "rating", "lower", "upper", "rank", "votes", "wins", "losses",
                                   "ties", "both_bad", "both_bad_rate", "provisional"]
    assert table["rating"].is_monotonic_decreasing
    assert table["rating"].mean() == pytest.approx(1000, abs=1e-6)
    assert table["votes"].sum() == 2 * len(votes)
    assert table["wins"].sum() == table["losses"].sum() == votes["outcome"].isin(["A", "B"]).sum()
    assert (table["votes"] == table[["wins", "losses", "ties", "both_bad"]].sum(axis=1)).all()


def test_rank_respects_cis():
    assert list(rank_by_ci(np.array([10, 8, 0, -5.0]), np.array([20, 12, 9, 1.0]))) == [1, 1, 2, 3]
    table = ratings.fit_leaderboard(synthetic_votes(800, seed=6), rounds=200)
    for _, row in table.iterrows():
        assert row["rank"] == 1 + (table["lower"] > row["upper"]).sum()
    assert table["rank"].iloc[0] == 1
    assert table["rank"].is_monotonic_increasing


def test_provisional_counts_the_votes_in_the_fit():
    votes = votes_from_rows([["x", "y", "A", 6], ["y", "x", "A", 4], ["x", "z", "A", 2], ["z", "y", "A", 1],
                             ["z", "x", "tie", 9]])
    drop = ratings.fit_leaderboard(votes, min_votes=5, rounds=0).set_index("model")
    assert not drop.loc["x", "provisional"] and drop.loc["z", "provisional"]  # z: 3 votes in the fit, 12 in all
    half = ratings.fit_leaderboard(votes, min_votes=5, rounds=0, tie_policy="half").set_index("model")
    assert not half.loc["z", "provisional"]


def test_zero_votes_give_an_empty_table():
    empty = ratings.fit_leaderboard(pd.DataFrame(columns=["model_a", "model_b", "outcome", "voter_kind"]))
    assert empty.empty and list(empty.columns) == list(ratings.LEADERBOARD_COLUMNS)
    assert ratings.fit_leaderboard(pd.DataFrame()).empty


def test_a_model_that_wins_everything_stays_finite_with_the_default_ridge():
    votes = votes_from_rows([["x", "y", "A", 5], ["z", "x", "B", 5], ["y", "z", "A", 3], ["z", "y", "A", 2]])
    table = ratings.fit_leaderboard(votes, rounds=50).set_index("model")
    assert np.isfinite(table["rating"]).all() and np.isfinite(table["upper"]).all()
    assert table["rating"].idxmax() == "x" and table.loc["x", "rank"] == 1
    with pytest.raises(ValueError, match=r"MLE does not exist.*x never lost.*ridge > 0"):
        ratings.fit_leaderboard(votes, ridge=0)


def test_disconnected_graph_warns_with_ridge_and_raises_without():
    votes = votes_from_rows([["a", "b", "A", 3], ["b", "a", "A", 1], ["c", "d", "A", 2], ["d", "c", "A", 2]])
    with pytest.warns(UserWarning, match="never met"):
        table = ratings.fit_leaderboard(votes, rounds=20)
    got = rating_map(table)
    assert got["a"] + got["b"] == pytest.approx(2000, abs=1e-3)  # each group centred on the base
    with pytest.raises(ValueError, match="splits into 2 groups.*Rate each group separately"):
        ratings.fit_leaderboard(votes, ridge=0)


def test_a_model_with_only_dropped_votes_gets_a_blank_rating():
    votes = votes_from_rows([["x", "y", "A", 3], ["y", "x", "A", 1], ["x", "w", "tie", 2]])
    table = ratings.fit_leaderboard(votes, rounds=20).set_index("model")
    assert math.isnan(table.loc["w", "rating"]) and pd.isna(table.loc["w", "rank"])
    assert table.index[-1] == "w" and table.loc["w", "provisional"]
    half = ratings.fit_leaderboard(votes, rounds=20, tie_policy="half").set_index("model")
    assert np.isfinite(half.loc["w", "rating"])


def test_positions_do_not_matter_for_the_fit():
    votes = synthetic_votes(1500, seed=8)
    swapped = votes.rename(columns={"model_a": "model_b", "model_b": "model_a"})
    swapped["outcome"] = swapped["outcome"].replace({"A": "B", "B": "A"})
    pd.testing.assert_frame_equal(ratings.fit_leaderboard(votes, rounds=50),
                                  ratings.fit_leaderboard(swapped[votes.columns], rounds=50))


def test_anchor_pins_a_model_in_the_fit_and_every_round():
    votes = synthetic_votes(2000, seed=9)
    table = ratings.fit_leaderboard(votes, anchor=("model-3", 1200.0), rounds=100).set_index("model")
    assert table.loc["model-3", ["rating", "lower", "upper"]].tolist() == pytest.approx([1200.0] * 3)
    free = ratings.fit_leaderboard(votes, rounds=0).set_index("model")
    shift = 1200.0 - free.loc["model-3", "rating"]
    np.testing.assert_allclose(table["rating"], free.loc[table.index, "rating"] + shift, atol=1e-6)
    with pytest.raises(ValueError, match="Cannot anchor on 'nobody'.*Pick one of"):
        ratings.fit_leaderboard(votes, anchor=("nobody", 1000.0))


def test_bad_votes_say_how_to_fix_them():
    with pytest.raises(ValueError, match="must be one of 'A', 'B', 'tie', 'both_bad'"):
        ratings.fit_leaderboard(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "outcome": ["model_a"]}))
    with pytest.raises(ValueError, match="lacks column.*outcome"):
        ratings.fit_leaderboard(pd.DataFrame({"model_a": ["x"], "model_b": ["y"]}))
    with pytest.raises(ValueError, match="compare a model with itself.*drop those rows"):
        ratings.fit_leaderboard(pd.DataFrame({"model_a": ["x"], "model_b": ["x"], "outcome": ["A"]}))
    with pytest.raises(ValueError, match="ridge must be"):
        ratings.fit_leaderboard(votes_from_rows([["x", "y", "A", 1]]), ridge=-1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=6, max_size=6), st.integers(2, 4))
def test_mle_is_unchanged_when_every_count_is_multiplied(wins, factor):
    # x, y, z meet each other both ways (every ordered pair has >= 1 win), so the MLE exists
    rows = [["x", "y", "A", wins[0]], ["y", "x", "A", wins[1]], ["y", "z", "A", wins[2]],
            ["z", "y", "A", wins[3]], ["x", "z", "A", wins[4]], ["z", "x", "A", wins[5]]]
    once = rating_map(ratings.fit_leaderboard(votes_from_rows(rows), ridge=0, rounds=0))
    scaled = [r[:3] + [r[3] * factor] for r in rows]
    many = rating_map(ratings.fit_leaderboard(votes_from_rows(scaled), ridge=0, rounds=0))
    assert many == pytest.approx(once, abs=1e-6)
    assert sum(once.values()) / 3 == pytest.approx(1000)


# --- online Elo ----------------------------------------------------------------------------------------------------

def test_online_elo_is_order_dependent_and_approaches_bt_with_small_k():
    votes = synthetic_votes(20000, seed=11, n_models=4, tie_share=0.0)
    bt = ratings.fit_leaderboard(votes, rounds=0).set_index("model")["rating"]
    elo = online_elo(votes, k=1.0)
    assert np.abs(elo[bt.index] - bt).max() < 25
    assert not online_elo(votes.iloc[::-1], k=8).equals(online_elo(votes, k=8))
    with pytest.raises(ValueError, match="k must be a positive"):
        online_elo(votes, k=0)


# --- slicing -------------------------------------------------------------------------------------------------------

def test_slice_votes_filters_lists_scalars_and_excluded():
    votes = pd.DataFrame({
        "model_a": ["x"] * 5, "model_b": ["y"] * 5, "outcome": ["A"] * 5,
        "suite": ["taxonomy", "taxonomy", "commonsense", "taxonomy", "taxonomy"],
        "subset": ["Easy", "Hyponymy", "Physical", "Easy", "Easy"],
        "voter_kind": ["human", "human", "human", "judge", "human"],
        "excluded": [False, False, False, False, True],
    })
    assert len(ratings.slice_votes(votes, suite="taxonomy")) == 3
    assert len(ratings.slice_votes(votes, suite="taxonomy", include_excluded=True)) == 4
    assert len(ratings.slice_votes(votes, subset=["Easy", "Physical"], voter_kind="human")) == 2
    assert len(ratings.slice_votes(votes)) == 4
    with pytest.raises(ValueError, match="no 'variant' column.*leave out the variant= filter"):
        ratings.slice_votes(votes, variant="with_definition")
    assert len(ratings.slice_votes(votes, variant=None)) == 4


def test_disconnected_warning_does_not_fire_on_connected_data():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ratings.fit_leaderboard(synthetic_votes(500, seed=12), rounds=20)


def test_slice_votes_finds_an_item_under_each_of_its_categories():
    votes = pd.DataFrame({
        "model_a": ["x"] * 4, "model_b": ["y"] * 4, "outcome": ["A"] * 4,
        "category": ["color", None, None, "Physical Laws"],
        "categories": ['["color"]', '["color", "height"]', ["height", "count"], None],
    })
    assert list(ratings.slice_votes(votes, category="color").index) == [0, 1]
    assert list(ratings.slice_votes(votes, category="height").index) == [1, 2]
    assert list(ratings.slice_votes(votes, category=["count", "Physical Laws"]).index) == [2, 3]
    assert ratings.slice_votes(votes, category="Easy").empty
    only_lists = votes.drop(columns="category")  # a table with the list alone still slices
    assert list(ratings.slice_votes(only_lists, category="height").index) == [1, 2]
