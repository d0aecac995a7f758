"""Ranks that respect the intervals (issue 44): rank ranges, two vote thresholds, the order by the lower bound; the
robustness line and the maintainer's vote list; the human + judge (PPI) board, on the page's view, in the command
line and in the JSON."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from support.votes import JUDGE, RANKING, add_votes, image_of, vote_on

from arena.commands import main
from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from arena.leaderboard.view import render_view
from core.protocols import get_protocol
from core.settings import Settings, SettingsError
from datamodel.battles import Pairing
from ratings.ranks import board_order, rank_ranges, vote_status


def test_rank_ranges_hold_every_rank_the_intervals_allow():
    lower = np.array([1100.0, 1050.0, 1040.0, 900.0, 800.0])
    upper = np.array([1200.0, 1120.0, 1060.0, 1000.0, 2000.0])
    ranked = np.array([True, True, True, True, False])
    best, worst = rank_ranges(lower, upper, ranked)
    # a is above c and d; b overlaps a and c; c overlaps b only; d is below all; e is not ranked
    assert best[:4].tolist() == [1, 1, 2, 4] and worst[:4].tolist() == [2, 3, 3, 4]
    assert np.isnan(best[4]) and np.isnan(worst[4])


def test_two_thresholds_and_the_order_by_lower_bound():
    ranked, provisional = vote_status(np.array([5, 50, 150, 400]), np.array([True, True, True, True]), 50, 300)
    assert ranked.tolist() == [False, True, True, True] and provisional.tolist() == [True, True, True, False]
    rating = np.array([1100.0, 1090.0, 1000.0, 1300.0])
    lower = np.array([1080.0, 1000.0, 990.0, 900.0])
    names = ["sure", "wide", "low", "few"]
    assert board_order(rating, lower, [True, True, True, False], [9, 9, 9, 1], names, "rating").tolist() == [0, 1, 2, 3]
    assert board_order(rating, lower, [True, True, True, False], [9, 9, 9, 1], names, "lower").tolist() == [0, 1, 2, 3]
    lower[1] = 985.0  # "wide" now has the lowest lower bound: it drops below "low"
    assert board_order(rating, lower, [True, True, True, False], [9, 9, 9, 1], names, "lower").tolist() == [0, 2, 1, 3]
    with pytest.raises(ValueError, match="order the board by rating"):
        board_order(rating, lower, [True] * 4, [1] * 4, names, "votes")


def test_settings_refuse_thresholds_and_orders_that_cannot_work(tmp_path):
    with pytest.raises(SettingsError, match="ARENA_LEADERBOARD_ORDER"):
        Settings(db_path=tmp_path / "a.db", media_dir=tmp_path, leaderboard_order="votes")
    with pytest.raises(SettingsError, match="ARENA_INTERVALS"):
        Settings(db_path=tmp_path / "a.db", media_dir=tmp_path, intervals="clt")
    with pytest.raises(SettingsError, match="ARENA_MIN_VOTES"):
        Settings(db_path=tmp_path / "a.db", media_dir=tmp_path, min_votes=-1)


def view(arena, **options):
    options = LeaderboardOptions(rounds=50, **options)
    return render_view(compute_leaderboard(arena.db, options), options), options


def test_rank_ranges_thresholds_and_the_robustness_line_on_the_page_view(small_arena):
    add_votes(small_arena)  # 36 human votes, all decisive: 18 per model
    shown, _ = view(small_arena, min_votes=15, provisional_votes=20)
    table = shown["tables"]["table"]
    assert table["headers"][:3] == ["Rank", "Rank range", "Model"]
    rows = {row[2]: row for row in table["data"]}
    assert all(rows[model][0] is not None and rows[model][1] for model in RANKING)  # 18 votes each: ranked ...
    assert all("italic" in table["metadata"]["styling"][i][0] for i in range(len(table["data"])))  # ... provisional
    assert shown["json"]["ranking"] == {"min_votes": 15, "provisional_votes": 20, "order": "rating"}
    record = {m["model"]: m for m in shown["json"]["models"]}["alpha-model"]
    assert record["ranked"] and record["provisional"] and record["rank"] <= record["rank_worst"]
    line = shown["notes"]["table"].split("\n\n")[0]
    assert line.startswith("*By rating, the #1 (alpha-model) changes if ") and "of 36 votes are dropped" in line
    assert shown["json"]["robustness"]["places"][0]["model"] == "alpha-model"
    firm, _ = view(small_arena, min_votes=15, provisional_votes=15)
    assert not any("italic" in row[0] for row in firm["tables"]["table"]["metadata"]["styling"])  # no longer grey
    unranked, _ = view(small_arena, min_votes=19)
    assert all(row[0] is None and isinstance(row[3], int) for row in unranked["tables"]["table"]["data"])
    assert "none is ranked: their ratings show greyed" in unranked["headline"]
    assert unranked["json"]["robustness"] is None and "By rating" not in unranked["notes"]["table"]


def test_the_order_by_lower_bound_reaches_the_table(small_arena):
    add_votes(small_arena)
    by_rating, _ = view(small_arena, min_votes=1)
    by_lower, options = view(small_arena, min_votes=1, order="lower")
    fit = compute_leaderboard(small_arena.db, options).fits["human"]
    assert list(fit["model"]) == list(fit.sort_values("lower", ascending=False)["model"])
    assert [row[2] for row in by_lower["tables"]["table"]["data"]] == list(fit["model"])
    assert "ordered by the lower bound of its 95% interval" in by_lower["notes"]["table"]
    assert "ordered by rating" in by_rating["notes"]["table"]


def test_the_audit_command_lists_the_votes_and_their_voters(small_arena, monkeypatch, tmp_path, capsys):
    add_votes(small_arena)
    small_arena.db.close()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_DB", str(small_arena.settings.db_path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(small_arena.settings.media_dir))
    assert main(["leaderboard", "--fresh", "--rounds", "20", "--min-votes", "5", "--audit"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("By rating, the #1 (alpha-model) changes if ")
    assert "#1 alpha-model:" in out and ("alice" in out or "bob" in out)
    assert main(["leaderboard", "--fresh", "--rounds", "20", "--min-votes", "5", "--audit", "--json"]) == 0
    audit = json.loads(capsys.readouterr().out)
    first = audit["places"][0]
    listed = [vote for vote in audit["votes"] if vote["place"] == 1]
    assert len(listed) == first["votes"] == sum(drop["votes"] for drop in first["drops"])
    assert {vote["voter"] for vote in listed} <= {"alice", "bob"}
    # removing exactly those votes from the database and rating again changes the #1
    from datamodel.connection import connect

    db = connect(small_arena.settings.db_path)
    db.execute(f"DELETE FROM votes WHERE id IN ({','.join(str(vote['vote']) for vote in listed)})")
    db.conn.commit()
    after = compute_leaderboard(db, LeaderboardOptions(rounds=0, min_votes=5)).fits["human"]
    assert after.sort_values("rating", ascending=False)["model"].iloc[0] != "alpha-model"
    assert main(["leaderboard", "--fresh", "--rounds", "20", "--min-votes", "500", "--audit"]) == 1
    assert "No robustness audit for this board" in capsys.readouterr().err


def judge_only_battles(arena, prompts=(3, 4)):
    """The judge votes by the ranking on every pair of two more prompts that no person voted on."""
    for p, (better, worse) in itertools.product(prompts, itertools.combinations(RANKING, 2)):
        prompt_id = arena.prompt_ids[p]
        pairing = Pairing(prompt_id, image_of(arena.db, prompt_id, better), image_of(arena.db, prompt_id, worse))
        vote_on(arena.db, pairing, "A", judge=JUDGE)


def test_the_human_and_judge_board_says_which_votes_and_which_correction(small_arena):
    add_votes(small_arena)
    judge_only_battles(small_arena)
    shown, options = view(small_arena, min_votes=1, mode="ppi", judge=JUDGE)
    board = compute_leaderboard(small_arena.db, options)
    assert board.ppi["human"] == 36 and board.ppi["paired"] == 36 and board.ppi["judge_only"] == 12
    assert 0.0 <= board.ppi["lambda"] <= 1.0
    assert "+ 12 judge votes on battles no person voted on, the judge's bias corrected by PPI" in shown["headline"]
    assert "prediction-powered inference (PPI++" in shown["summary"]
    assert shown["json"]["mode"] == "ppi" and shown["json"]["ppi"]["judge_only"] == 12
    human, _ = view(small_arena, min_votes=1)
    assert human["json"]["mode"] == "human" and "PPI" not in human["headline"]
    with pytest.raises(ValueError, match="fits the arena protocol's Bradley–Terry"):
        compute_leaderboard(small_arena.db, LeaderboardOptions(protocol="lmarena-2025", mode="ppi"))


def test_sandwich_intervals_are_named_where_the_board_says_how_it_was_made(small_arena):
    add_votes(small_arena)
    shown, _ = view(small_arena, min_votes=1, intervals="sandwich")
    assert "95% intervals in closed form (sandwich" in shown["summary"]
    assert "sandwich (CLT) covariance" in shown["notes"]["table"]
    lmarena, _ = view(small_arena, min_votes=1, protocol="lmarena-2025")
    assert "lmarena-2025" in lmarena["headline"] and lmarena["json"]["choices"]["bootstrap"].startswith("none: R ±")


def test_the_protocol_table_keeps_every_model_and_the_ranked_ones_first():
    votes = pd.DataFrame({"model_a": ["a"] * 30 + ["c"] * 2, "model_b": ["b"] * 30 + ["a"] * 2,
                          "outcome": ["A"] * 20 + ["B"] * 10 + ["A"] * 2})
    table = get_protocol("arena", rounds=20, ridge=0.19).rate_frame(votes, min_votes=10)
    assert list(table["model"]) == ["a", "b", "c"] and table["ranked"].tolist() == [True, True, False]
    assert table.loc[2, "rating"] > table.loc[1, "rating"]  # c won its two votes: rated, not ranked
    assert pd.isna(table.loc[2, "rank"]) and table.loc[0, "rank"] == 1
