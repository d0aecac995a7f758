"""The leaderboard at scale computes the same numbers as the vote-table functions of :mod:`ratings` (the code it
replaced), on a 10,000-vote study fixture and on every slice; the count-based statistics match brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.study import study_database

import ratings
from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from datamodel.vote_arrays import read_vote_arrays
from datamodel.vote_table import votes_frame
from ratings.agreement import _shared_pairs, paired_confusion
from tools.scale_fixture import ScaleSpec

SPEC = ScaleSpec(votes=10_000, annotators=300, models=6, prompts=120, seed=3)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    db = study_database(tmp_path_factory.mktemp("study"), SPEC)
    yield db
    db.close()


def reference_pairs(votes: pd.DataFrame, min_shared: int, max_pairs: int) -> pd.DataFrame:
    """Cohen's κ per pair of annotators the way the old code found them: every pair of votes on a battle listed."""
    keyed = pd.DataFrame({"pair_key": votes["pair_key"].to_numpy(), "voter": votes["voter"].to_numpy(),
                          "outcome": ratings.oriented_outcomes(votes)})
    keyed = keyed.drop_duplicates(["pair_key", "voter"], keep="last")
    pairs = keyed.merge(keyed, on="pair_key", suffixes=("_1", "_2"))
    pairs = pairs[pairs["voter_1"] < pairs["voter_2"]]
    rows = []
    for (v1, v2), group in pairs.groupby(["voter_1", "voter_2"]):
        if len(group) < min_shared:
            continue
        confusion = np.zeros((4, 4))
        np.add.at(confusion, (group["outcome_1"].to_numpy(int), group["outcome_2"].to_numpy(int)), 1)
        rows.append({"voter_1": v1, "voter_2": v2, "n": len(group),
                     "agreement": np.trace(confusion) / len(group), "kappa": ratings.cohen_kappa(confusion)})
    table = pd.DataFrame(rows, columns=["voter_1", "voter_2", "n", "agreement", "kappa"])
    table = table.sort_values(["n", "voter_1", "voter_2"], ascending=[False, True, True])
    return table.head(max_pairs).reset_index(drop=True)


@pytest.mark.slow
@pytest.mark.parametrize("filters", [{}, {"suite": "taxonomy"}, {"subset": "Easy", "variant": "with_definition"},
                                     {"category": "color"}, {"voter": "annotator-00007"}],
                         ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()) or "all")
def test_the_leaderboard_matches_the_vote_table_functions(study, filters):
    options = LeaderboardOptions(rounds=200, min_votes=5, pair_min_shared=3, max_pairs=25, **filters)
    board = compute_leaderboard(study, options)
    votes = votes_frame(study, include_excluded=False, **filters)
    human = votes[votes["voter_kind"] == "human"]
    judge = votes[votes["voter"] == board.judge]
    assert board.votes == {"human": len(human), "judge": int((votes["voter_kind"] == "judge").sum())}
    for kind, part in (("human", human), ("judge", judge)):
        expected = ratings.fit_leaderboard(part, rounds=200, min_votes=5)
        got = board.fits[kind]
        assert sorted(got["model"]) == sorted(expected["model"])
        ranked = got["ranked"].to_numpy()  # the ranked models first, in the same order by rating (issue 44)
        assert list(got["model"][ranked]) == [m for m in expected["model"] if m in set(got["model"][ranked])]
        got = got.set_index("model").loc[expected["model"]].reset_index()
        np.testing.assert_allclose(got["rating"], expected["rating"], atol=0.01)
        np.testing.assert_allclose(got[["lower", "upper"]], expected[["lower", "upper"]], atol=0.01)
        assert got[["votes", "wins", "ties", "both_bad"]].equals(expected[["votes", "wins", "ties", "both_bad"]])
    agreement = ratings.human_judge_agreement(pd.concat([human, judge]))
    assert board.agreement["n"] == agreement["n"]
    assert board.agreement["confusion"].equals(agreement["confusion"])
    inter = ratings.inter_annotator_agreement(human)
    for key in ("n_items", "n_pairs", "agreement", "fleiss_kappa"):
        assert board.inter_annotator[key] == pytest.approx(inter[key], nan_ok=True), key
    pd.testing.assert_frame_equal(board.inter_annotator["pairs"], reference_pairs(human, 3, 25), check_dtype=False)
    bias = ratings.position_bias(votes, by=("voter_kind", "subset"))
    pd.testing.assert_frame_equal(board.position_bias, bias, check_dtype=False)
    assert board.strategies == votes["strategy"].value_counts().to_dict()
    assert board.counts.sum() == len(votes)


def test_the_study_fixture_has_every_panel_filled(study):
    board = compute_leaderboard(study, LeaderboardOptions(rounds=50))
    assert board.votes["judge"] == 1_000 and len(board.judges) == 2
    assert board.agreement["n"] > 0 and board.inter_annotator["n_items"] > 0
    assert len(board.inter_annotator["pairs"]) == 50  # the cap: pairs sharing at least 5 battles
    assert 0 < board.inter_annotator["consensus_spearman"] <= 1
    # the fixture's true order (model 01 best) is recovered
    assert list(board.fits["human"]["model"]) == [f"scale-model-{i:02d}" for i in range(1, 7)]


def test_vote_arrays_keep_the_votes_of_the_vote_table_in_order(study):
    for filters in ({}, {"suite": "commonsense"}, {"category": "Physical Laws"}, {"voter": "gpt-judge:scale-judge-2"}):
        arrays = read_vote_arrays(study, **filters)
        votes = votes_frame(study, **filters)
        shown = list(zip([arrays.models[i] for i in arrays.model_a], [arrays.models[i] for i in arrays.model_b],
                         [ratings.OUTCOMES[o] for o in arrays.outcome], arrays.excluded))
        assert shown == list(zip(votes["model_a"], votes["model_b"], votes["outcome"], votes["excluded"]))
        assert list(arrays.image_a) == list(votes["image_a_id"]) and list(arrays.image_b) == list(votes["image_b_id"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 15), st.integers(0, 11)), min_size=0, max_size=120),
       st.integers(1, 4), st.integers(1, 8), st.integers(1, 5), st.integers(1, 60))
def test_shared_pairs_are_the_top_pairs_of_brute_force(memberships, min_shared, max_pairs, block, products):
    import scipy.sparse

    memberships = sorted(set(memberships))
    items = np.array([m[0] for m in memberships], dtype=np.int64)
    voters = np.array([m[1] for m in memberships], dtype=np.int64)
    incidence = scipy.sparse.csc_matrix((np.ones(len(items)), (items, voters)), shape=(16, 12))
    a, b, n = _shared_pairs(incidence, min_shared, max_pairs, block=block, products_per_block=products)
    sets = {v: {i for i, w in memberships if w == v} for v in range(12)}
    brute = sorted(((-len(sets[x] & sets[y]), x, y) for x, y in itertools.combinations(range(12), 2)
                    if len(sets[x] & sets[y]) >= min_shared))[:max_pairs]
    assert [(-int(k), int(x), int(y)) for x, y, k in zip(a, b, n)] == brute


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=40),
       st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=40))
def test_paired_confusion_counts_every_pair_of_votes_on_a_key(side_1, side_2):
    confusion = paired_confusion(np.array([k for k, _ in side_1], dtype=np.int64),
                                 np.array([o for _, o in side_1], dtype=np.int64),
                                 np.array([k for k, _ in side_2], dtype=np.int64),
                                 np.array([o for _, o in side_2], dtype=np.int64))
    brute = np.zeros((4, 4), dtype=np.int64)
    for (k1, o1), (k2, o2) in itertools.product(side_1, side_2):
        brute[o1, o2] += k1 == k2
    assert (confusion == brute).all()
