"""Metric columns against the human ELO on the leaderboard: Spearman of each metric with the human ratings, with
the sign flipped for lower-is-better metrics (FID, consistency spreads) so that agreeing with people is positive."""

from __future__ import annotations

import pytest
from scipy.stats import spearmanr
from support.votes import CLIP, HUMAN_ORDER, store_metrics, vote_human_order

from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard


def test_metric_spearman_against_human_elo_flips_lower_is_better(small_arena):
    vote_human_order(small_arena)
    store_metrics(small_arena)
    board = compute_leaderboard(small_arena.db, LeaderboardOptions(suite="taxonomy", rounds=20, min_votes=1))
    assert list(board.table["model"]) == list(HUMAN_ORDER)  # sorted by the human ELO
    correlations = board.correlations.set_index("against human ELO")
    assert {"fid", "clip_score", "reward"} <= set(correlations.index)

    human_scores = [4, 3, 2, 1]  # ranks of HUMAN_ORDER
    # FID rises as people like a model less: flipped, it agrees perfectly with the human ELO
    assert correlations.loc["fid", "spearman"] == pytest.approx(1.0)
    assert correlations.loc["fid", "n"] == 4
    assert "fid" in board.table.columns and board.table["fid"].tolist() == [10.0, 20.0, 30.0, 40.0]
    # CLIP: higher is better, not flipped; charlie and delta swapped: 1 - 6 * 2 / (4 * 15) = 0.8
    expected = spearmanr(human_scores, [CLIP[m] for m in HUMAN_ORDER]).statistic
    assert correlations.loc["clip_score", "spearman"] == pytest.approx(expected) == pytest.approx(0.8)
    # reward: only the three scored models count, and its reversed order is a perfect negative
    assert correlations.loc["reward", "n"] == 3
    assert correlations.loc["reward", "spearman"] == pytest.approx(-1.0)
    # no judge votes: the judge row is undefined, not zero
    assert correlations.loc["Judge ELO", "n"] == 0 and correlations["spearman"].isna().loc["Judge ELO"]
