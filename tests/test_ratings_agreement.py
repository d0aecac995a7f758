"""Agreement between rankings, human vs judge, annotators; position bias; the model × model matrices."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import ratings
from ratings.agreement import cohen_kappa, fleiss_kappa

CASES = Path(__file__).parent / "data" / "ratings"


def cases(kind: str) -> list[dict]:
    loaded = [json.loads(p.read_text()) | {"file": p.name} for p in sorted(CASES.glob("*.json"))]
    return [c for c in loaded if c["kind"] == kind]


def frame(rows: list[tuple], columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(columns))


@pytest.mark.parametrize("case", cases("cohen_kappa"), ids=lambda c: c["file"])
def test_cohen_kappa_known_answers(case):
    assert cohen_kappa(np.array(case["confusion"])) == pytest.approx(case["expected"], abs=case["tolerance"])


@pytest.mark.parametrize("case", cases("fleiss_kappa"), ids=lambda c: c["file"])
def test_fleiss_kappa_known_answers(case):
    agreement, kappa = fleiss_kappa(np.array(case["items"]))
    assert agreement == pytest.approx(case["expected"]["agreement"], abs=case["tolerance"])
    assert kappa == pytest.approx(case["expected"]["kappa"], abs=case["tolerance"])


# --- rank correlation ----------------------------------------------------------------------------------------------

def test_rank_correlation_perfect_reversed_and_common_models_only():
    a = {"x": 1100, "y": 1000, "z": 900, "w": 950}
    same = ratings.rank_correlation(a, {"x": 3, "y": 2, "z": 1, "extra": 7, "w": 1.5})
    assert same["n"] == 4 and same["spearman"] == pytest.approx(1) and same["kendall"] == pytest.approx(1)
    assert same["spearman_p"] == pytest.approx(0.0, abs=1e-9)
    assert same["kendall_p"] == pytest.approx(scipy.stats.kendalltau([1, 2, 3, 4], [1, 2, 3, 4]).pvalue)
    reverse = ratings.rank_correlation(a, {k: -v for k, v in a.items()})
    assert reverse["spearman"] == pytest.approx(-1) and reverse["kendall"] == pytest.approx(-1)


def test_rank_correlation_handles_tied_values_like_scipy():
    a = {"p": 1.0, "q": 1.0, "r": 2.0, "s": 3.0, "t": 3.0}
    b = {"p": 1.0, "q": 2.0, "r": 3.0, "s": 4.0, "t": 5.0}
    got = ratings.rank_correlation(a, b)
    x, y = [a[k] for k in "pqrst"], [b[k] for k in "pqrst"]
    assert got["spearman"] == pytest.approx(scipy.stats.spearmanr(x, y).statistic)
    assert got["kendall"] == pytest.approx(scipy.stats.kendalltau(x, y).statistic)  # tau-b
    assert got["kendall"] < 1


def test_rank_correlation_with_too_few_models_is_nan():
    got = ratings.rank_correlation({"x": 1}, {"x": 2, "y": 3})
    assert got["n"] == 1 and np.isnan(got["spearman"]) and np.isnan(got["kendall_p"])


# --- human vs judge ------------------------------------------------------------------------------------------------

HUMAN_JUDGE = frame([
    # pair_key, voter_kind, model_a, model_b, outcome
    ("p1", "human", "x", "y", "A"), ("p1", "judge", "y", "x", "B"),        # both: x won -> agree (A, A)
    ("p2", "human", "x", "y", "tie"), ("p2", "judge", "y", "x", "tie"),    # agree (tie, tie)
    ("p3", "human", "x", "z", "A"), ("p3", "judge", "z", "x", "A"),        # x won vs z won -> (A, B)
    ("p4", "human", "y", "z", "both_bad"), ("p4", "judge", "y", "z", "both_bad"),
    ("p5", "human", "y", "z", "B"), ("p5", "judge", "z", "y", "A"),        # both: z won -> (B, B)
    ("p6", "human", "x", "z", "A"),                                        # no judge vote: not matched
], ("pair_key", "voter_kind", "model_a", "model_b", "outcome"))


def test_human_judge_agreement_reorients_and_matches_a_hand_computed_kappa():
    result = ratings.human_judge_agreement(HUMAN_JUDGE)
    confusion = result["confusion"]
    assert list(confusion.index) == list(confusion.columns) == ["A", "B", "tie", "both_bad"]
    assert confusion.index.name == "human" and confusion.columns.name == "judge"
    expected = np.zeros((4, 4), dtype=int)
    expected[0, 0] = expected[2, 2] = expected[0, 1] = expected[3, 3] = expected[1, 1] = 1
    np.testing.assert_array_equal(confusion.to_numpy(), expected)
    assert result["n"] == 5 and result["agreement"] == pytest.approx(0.8)
    # p_e = (2*1 + 1*2 + 1*1 + 1*1) / 25 = 0.24; kappa = (0.8 - 0.24) / 0.76
    assert result["kappa"] == pytest.approx(0.56 / 0.76)


def test_human_judge_agreement_needs_pair_key_and_handles_no_overlap():
    with pytest.raises(ValueError, match="pair_key.*Add them"):
        ratings.human_judge_agreement(HUMAN_JUDGE.drop(columns="pair_key"))
    alone = ratings.human_judge_agreement(HUMAN_JUDGE[HUMAN_JUDGE["voter_kind"] == "human"])
    assert alone["n"] == 0 and np.isnan(alone["kappa"]) and np.isnan(alone["agreement"])


# --- inter-annotator -----------------------------------------------------------------------------------------------

ANNOTATORS = frame([
    ("p1", "h1", "human", "x", "y", "A"), ("p1", "h2", "human", "y", "x", "B"), ("p1", "h3", "human", "x", "y", "B"),
    ("p1", "gpt", "judge", "x", "y", "A"),
    ("p2", "h1", "human", "x", "z", "tie"), ("p2", "h2", "human", "z", "x", "tie"),
    ("p3", "h1", "human", "y", "z", "A"),
], ("pair_key", "voter", "voter_kind", "model_a", "model_b", "outcome"))


def test_inter_annotator_agreement_by_hand():
    result = ratings.inter_annotator_agreement(ANNOTATORS)
    assert result["n_items"] == 2 and result["n_pairs"] == 4
    # p1: (A, A, B) -> P = 2/6; p2: (tie, tie) -> P = 1; P-bar = 2/3; p = (.4, .2, .4, 0), P_e = .36
    assert result["agreement"] == pytest.approx(2 / 3)
    assert result["fleiss_kappa"] == pytest.approx((2 / 3 - 0.36) / 0.64)
    pairs = result["pairs"].set_index(["voter_1", "voter_2"])
    assert pairs.loc[("h1", "h2"), "n"] == 2 and pairs.loc[("h1", "h2"), "agreement"] == 1.0
    assert pairs.loc[("h1", "h3"), "agreement"] == 0.0 and pairs.loc[("h2", "h3"), "agreement"] == 0.0
    with_judge = ratings.inter_annotator_agreement(ANNOTATORS, voter_kind=None)
    assert with_judge["n_pairs"] == 4 + 3


def test_inter_annotator_consensus_spearman_of_consistent_annotators_is_one():
    rows = []
    for voter in ("h1", "h2"):
        for winner, loser, times in (("a", "b", 3), ("b", "a", 1), ("b", "c", 3), ("c", "b", 1), ("a", "c", 4),
                                     ("c", "a", 1), ("c", "d", 2), ("d", "c", 1), ("b", "d", 2), ("d", "a", 1)):
            rows += [(f"{winner}{loser}{k}", voter, "human", winner, loser, "A") for k in range(times)]
    votes = frame(rows, ("pair_key", "voter", "voter_kind", "model_a", "model_b", "outcome"))
    result = ratings.inter_annotator_agreement(votes)
    assert result["consensus_spearman"] == pytest.approx(1.0) and result["consensus_annotators"] == 2


# --- position bias -------------------------------------------------------------------------------------------------

def test_position_bias_shares_and_binomial_test():
    votes = frame([
        ("judge", "Easy", "A"), ("judge", "Easy", "A"), ("judge", "Easy", "A"), ("judge", "Easy", "B"),
        ("judge", "Easy", "tie"), ("human", "Easy", "A"), ("human", "Easy", "B"), ("human", "Hard", "both_bad"),
    ], ("voter_kind", "subset", "outcome")).assign(model_a="x", model_b="y")
    table = ratings.position_bias(votes).set_index(["voter_kind", "subset"])
    judge = table.loc[("judge", "Easy")]
    assert judge["votes"] == 5
    assert (judge["first_wins"], judge["second_wins"], judge["ties"], judge["both_bad"]) == \
        pytest.approx((0.6, 0.2, 0.2, 0.0))
    assert judge["first_win_rate"] == pytest.approx(0.75)
    assert judge["p_value"] == pytest.approx(scipy.stats.binomtest(3, 4, 0.5).pvalue)
    assert table.loc[("human", "Easy"), "first_win_rate"] == pytest.approx(0.5)
    assert np.isnan(table.loc[("human", "Hard"), "first_win_rate"])
    overall = ratings.position_bias(votes, by=())
    assert overall["votes"].tolist() == [8] and overall["first_wins"].iloc[0] == pytest.approx(4 / 8)
    with pytest.raises(ValueError, match="no such column"):
        ratings.position_bias(votes, by="category")


# --- matrices ------------------------------------------------------------------------------------------------------

MATRIX_VOTES = frame([("x", "y", "A"), ("y", "x", "B"), ("y", "x", "A"), ("x", "y", "tie"), ("x", "z", "A")],
                     ("model_a", "model_b", "outcome"))


def test_win_fraction_and_battle_count_by_hand():
    counts = ratings.battle_count_matrix(MATRIX_VOTES)
    assert counts.loc["x", "y"] == counts.loc["y", "x"] == 4 and counts.loc["x", "z"] == 1
    assert counts.loc["y", "z"] == 0 and counts.loc["x", "x"] == 0
    fraction = ratings.win_fraction_matrix(MATRIX_VOTES)
    assert fraction.loc["x", "y"] == pytest.approx(2 / 4)   # the tie stays in the denominator
    assert fraction.loc["y", "x"] == pytest.approx(1 / 4)
    assert fraction.loc["x", "z"] == 1.0 and np.isnan(fraction.loc["y", "z"])
    assert list(fraction.index)[0] == "x"  # best mean win fraction first
    ordered = ratings.battle_count_matrix(MATRIX_VOTES, order=["z", "y", "x"])
    assert list(ordered.index) == list(ordered.columns) == ["z", "y", "x"]


def test_predicted_win_rate_matrix():
    matrix = ratings.predicted_win_rate_matrix({"x": 1400.0, "y": 1000.0, "gone": float("nan")})
    assert list(matrix.index) == ["x", "y"]
    assert matrix.loc["x", "y"] == pytest.approx(10 / 11) and matrix.loc["y", "x"] == pytest.approx(1 / 11)
    assert matrix.loc["x", "x"] == pytest.approx(0.5)
    table = ratings.fit_leaderboard(MATRIX_VOTES, rounds=0, tie_policy="half")
    from_table = ratings.predicted_win_rate_matrix(table)
    np.testing.assert_allclose(from_table.to_numpy() + from_table.to_numpy().T, 1.0)


def test_agreement_and_bias_on_an_empty_vote_table():
    empty = pd.DataFrame(columns=["model_a", "model_b", "outcome", "voter", "voter_kind", "subset", "pair_key"])
    assert ratings.human_judge_agreement(empty)["n"] == 0
    inter = ratings.inter_annotator_agreement(empty)
    assert inter["n_items"] == inter["n_pairs"] == 0 and np.isnan(inter["fleiss_kappa"])
    assert np.isnan(inter["consensus_spearman"]) and inter["consensus_annotators"] == 0 and inter["pairs"].empty
    bias = ratings.position_bias(empty)
    assert bias.empty and list(bias.columns)[:2] == ["voter_kind", "subset"]
