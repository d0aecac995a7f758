"""Metric columns against the human ELO on the leaderboard: Spearman of each metric with the human ratings, with
the sign flipped for lower-is-better metrics (FID, consistency spreads) so that agreeing with people is positive."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from scipy.stats import spearmanr

from datamodel.annotators import sign_in
from datamodel.battles import Pairing
from sampling.draws import serve_battle
from arena.leaderboard import LeaderboardOptions, compute_leaderboard
from datamodel.votes import record_vote
from datamodel.metrics import MetricRow, write_metrics
from judges.selection import image_rows

HUMAN_ORDER = ("alpha-model", "bravo-model", "charlie-model", "delta-model")  # best first
CLIP = {"alpha-model": 0.40, "bravo-model": 0.30, "charlie-model": 0.10, "delta-model": 0.20}  # one swap at the bottom
FID = {"alpha-model": 10.0, "bravo-model": 20.0, "charlie-model": 30.0, "delta-model": 40.0}  # lower is better
REWARD = {"alpha-model": 0.1, "bravo-model": 0.2, "charlie-model": 0.3}  # reversed, and delta unscored


def vote_human_order(arena) -> None:
    """For every pair of models, four human votes on one taxonomy prompt: the better model wins three."""
    annotator = sign_in(arena.db, "alice", "token-001", open_signup=True)
    prompt_id = image_rows(arena.db, "taxonomy")[0]["prompt_id"]
    by_model = {row["model"]: row["id"] for row in image_rows(arena.db, "taxonomy") if row["prompt_id"] == prompt_id}
    rng = random.Random(0)
    for better, worse in combinations(HUMAN_ORDER, 2):
        for n, winner_left in enumerate((True, False, True, False)):
            left, right = (better, worse) if winner_left else (worse, better)
            battle = serve_battle(arena.db, rng, session_id="s1", annotator_id=annotator.id,
                                  pairing=Pairing(prompt_id, by_model[left], by_model[right]))
            wins = n < 3  # the better model wins 3 of 4
            outcome = ("A" if winner_left else "B") if wins else ("B" if winner_left else "A")
            record_vote(arena.db, battle.id, outcome, session_id="s1", rules=None)


def store_metrics(arena) -> None:
    ids, rows = arena.model_ids, []
    for row in image_rows(arena.db, "taxonomy"):
        rows.append(MetricRow(row["model_id"], "clip_score", CLIP[row["model"]], "open_clip:test", image_id=row["id"],
                              suite="taxonomy"))
        if row["model"] in REWARD:
            rows.append(MetricRow(row["model_id"], "reward", REWARD[row["model"]], "tiny-reward", image_id=row["id"],
                                  suite="taxonomy"))
    for model, value in FID.items():
        rows.append(MetricRow(ids[model], "fid", value, "inception-v3", suite="taxonomy"))
    write_metrics(arena.db, rows)


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
