"""The leaderboard object and its summary: one judge voter in the judge column, the agreement statistics."""

from __future__ import annotations

import pytest
from support.votes import JUDGE, RANKING, SINGLE, add_votes

from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from arena.leaderboard.text import agreement_text, summary_text

pytestmark = pytest.mark.both_engines

OPTIONS = LeaderboardOptions(rounds=10, min_votes=1)


def test_the_judge_column_is_the_judge_with_the_most_votes_and_the_summary_says_so(small_arena):
    add_votes(small_arena)
    board = compute_leaderboard(small_arena.db, OPTIONS)
    assert board.judge == JUDGE and not board.judge_chosen
    assert board.judges == {JUDGE: 18, SINGLE: 6}
    assert board.fits["judge"]["votes"].sum() == 2 * 18  # each vote counts for both its models; none of SINGLE's
    assert list(board.fits["judge"].sort_values("rating", ascending=False)["model"]) == RANKING
    # 18 battles x 2 human votes x 1 judge vote; alice disagrees once, bob three times
    assert board.agreement["n"] == 36
    assert board.agreement["agreement"] == pytest.approx(32 / 36)
    summary = summary_text(board, OPTIONS)
    assert (f"Judge column: {JUDGE} (18 votes, the judge with the most votes); "
            f"other judges: {SINGLE} (6)") in summary
    assert f"Human–judge agreement ({JUDGE}) on 36 pairs of votes on shared battles: 0.89" in summary


def test_another_judge_can_be_named_and_only_its_votes_count(small_arena):
    add_votes(small_arena)
    options = LeaderboardOptions(rounds=10, min_votes=1, judge=SINGLE)
    board = compute_leaderboard(small_arena.db, options)
    assert board.judge == SINGLE and board.judge_chosen
    assert board.fits["judge"]["votes"].sum() == 2 * 6
    assert board.agreement["n"] == 12  # 6 battles x 2 human votes
    # SINGLE always says A; on its 6 battles the better model was on the left 3 times
    assert board.agreement["confusion"].to_numpy().sum() == 12
    assert board.agreement["agreement"] == pytest.approx(
        (3 * 2 - 1) / 12)  # right where the better was on the left, except bob's upset of alpha by bravo
    assert f"Judge column: {SINGLE} (6 votes, chosen); other judges: {JUDGE} (18)" in summary_text(board, options)
    with pytest.raises(LookupError, match=f"No judge votes from 'gpt-judge:nope'. Judges with votes: {JUDGE}, "
                                          f"{SINGLE}; pass one of them"):
        compute_leaderboard(small_arena.db, LeaderboardOptions(rounds=10, judge="gpt-judge:nope"))


def test_inter_annotator_fleiss_kappa_pairs_and_consensus_spearman_reach_the_summary(small_arena):
    add_votes(small_arena)
    board = compute_leaderboard(small_arena.db, OPTIONS)
    inter = board.inter_annotator
    assert (inter["n_items"], inter["n_pairs"]) == (18, 18)
    assert inter["agreement"] == pytest.approx(14 / 18)  # alice and bob differ on 4 battles
    pairs = inter["pairs"]
    assert list(pairs[["voter_1", "voter_2", "n"]].itertuples(index=False, name=None)) == [("alice", "bob", 18)]
    # Oriented to the first model by name (here also the better one): alice A 17 / B 1, bob A 15 / B 3, never both B,
    # so p_o = 14/18, p_e = (17·15 + 1·3)/18² and κ = (p_o − p_e)/(1 − p_e) = −1/11.
    assert pairs["kappa"].iloc[0] == pytest.approx(-1 / 11)
    summary = summary_text(board, OPTIONS)
    assert (f"Inter-annotator: 18 battles seen by several annotators (18 pairs of votes), mean pairwise agreement "
            f"0.78, Fleiss' κ {inter['fleiss_kappa']:.2f}, Spearman ρ between an annotator's own ratings and "
            f"everyone else's {inter['consensus_spearman']:.2f} (mean over 2 annotators).") in summary
    panel = agreement_text(board)
    assert ("Cohen's κ per pair of annotators who share the most battles:\n  voter_1 voter_2  n  agreement  kappa\n"
            "    alice     bob 18      0.778 -0.091") in panel


def test_a_database_without_votes_gives_an_empty_panel(small_arena):
    board = compute_leaderboard(small_arena.db, OPTIONS)
    assert board.judge is None and board.judges == {}
    assert "Judge column: no judge votes yet" in summary_text(board, OPTIONS)
    panel = agreement_text(board)
    assert "(no battle voted on by a human and the judge)" in panel
    assert "(no battle seen by two annotators)" in panel


@pytest.mark.parametrize("rating, lower, upper, shown", [
    (1000.0, 980.4, 1030.6, "+31 / -20"),
    (2044.2, 2044.0, 2043.9, "+0 / -0"),  # a degenerate interval a rounding error below the rating
    (1000.0, 1005.0, 1030.0, "1005 – 1030"),  # a percentile interval that misses the rating
    (float("nan"), 990.0, 1010.0, ""),
])
def test_confidence_intervals_are_shown_without_doubled_signs(rating, lower, upper, shown):
    import pandas as pd

    from arena.leaderboard.labels import format_ci

    assert format_ci(pd.Series({"rating": rating, "lower": lower, "upper": upper})) == shown
