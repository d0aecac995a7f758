"""The leaderboard over time (issue 29): boards kept by day and bounded, the board as of a date, past days rebuilt
from the votes cast by then, in the library, the command line and the API."""

import json
import random
import time

import pytest
from support.arena import command_line_env

from arena import session as sessions
from arena.commands import main
from arena.leaderboard.compute import leaderboard_options
from arena.leaderboard.service import compute_snapshot, options_key, rebuild_history
from datamodel.quality import QualityRules
from datamodel.rating_history import board_as_of, day_of, end_of_day, history, keep_day, kept_days

DAY = 86400.0
LAX = QualityRules(max_per_hour=10_000, max_per_3_hours=10_000, fast_streak=10_000, bias_min_votes=10_000)


def _vote_days(arena, per_day: dict[int, int], now: float) -> None:
    """``per_day[k]`` votes cast k days before ``now`` (at noon of that day, a minute apart), A always wins."""
    s = sessions.start(arena.db, "historian", "token-001", open_signup=True)
    for back, count in sorted(per_day.items(), reverse=True):
        noon = end_of_day(day_of(now - back * DAY)) - 12 * 3600
        for i in range(count):
            at = noon + 60 * i
            s = sessions.next_battle(arena.db, random.Random(back * 100 + i), s, now=at - 5)
            s = sessions.vote(arena.db, s, "A", rules=LAX, now=at)


def test_a_day_keeps_its_last_board_and_the_history_is_bounded(db):
    now = 1_800_000_000.0
    board = lambda n: {"votes": {"human": n}, "models": []}  # noqa: E731
    keep_day(db, "f1", board(1), now - 3 * DAY, days=30)
    keep_day(db, "f1", board(2), now - 1 * DAY, days=30)
    keep_day(db, "f1", board(3), now - 1 * DAY + 60, days=30)  # later that day: replaces it
    keep_day(db, "f1", board(0), now - 1 * DAY - 60, days=30)  # earlier that day than the one kept: ignored
    assert kept_days(db, "f1") == [day_of(now - DAY), day_of(now - 3 * DAY)]
    assert history(db, "f1")[-1].board["votes"] == {"human": 3}
    assert board_as_of(db, "f1", day_of(now - 2 * DAY)).day == day_of(now - 3 * DAY)  # the latest day before
    assert board_as_of(db, "f1", day_of(now - 5 * DAY)) is None
    keep_day(db, "f1", board(4), now + 30 * DAY, days=30)  # thirty days on: the older days are dropped
    assert kept_days(db, "f1") == [day_of(now + 30 * DAY)]
    for n, key in enumerate(("f2", "f3", "f4")):  # at most ``keep`` sets of filters, the most recently updated
        keep_day(db, key, board(n), now + 31 * DAY + n, days=30, keep=2)
    assert {key for key, in db.execute("SELECT DISTINCT filters FROM leaderboard_history")} == {"f3", "f4"}
    keep_day(db, "f5", board(9), now, days=0)  # no history kept at all
    assert kept_days(db, "f5") == []
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        board_as_of(db, "f1", "31/01/2025")


def test_a_computed_leaderboard_becomes_today_s_board_and_past_days_come_from_the_votes(small_arena):
    now = time.time()
    _vote_days(small_arena, {3: 6, 2: 6, 1: 6}, now)
    options = leaderboard_options(small_arena.settings, rounds=10, min_votes=2)  # a handful of votes ranks here
    key = options_key(options)
    snapshot = compute_snapshot(small_arena.db, options, keep=32, history_days=365)
    assert kept_days(small_arena.db, key) == [day_of(snapshot.computed_at)]
    made = rebuild_history(small_arena.db, options, 5, history_days=365, now=now)
    assert made == [day_of(now - k * DAY) for k in (5, 4, 3, 2, 1)]  # every past day asked for
    assert rebuild_history(small_arena.db, options, 5, history_days=365, now=now) == []  # kept days are left alone
    votes = [item.board["votes"]["human"] for item in history(small_arena.db, key)]
    assert votes == [0, 0, 6, 12, 18, 18]  # 5 and 4 days ago none; then as of each day's end; today all
    as_of = board_as_of(small_arena.db, key, day_of(now - 2 * DAY)).board
    assert as_of["votes"]["human"] == 12 and {m["model"] for m in as_of["models"]} == set(small_arena.model_ids)
    # the rating-history chart of the next computation draws each rated model over the kept days
    figure = json.loads(compute_snapshot(small_arena.db, options).view["figures"]["history"])
    assert figure["data"] and all(len(trace["x"]) >= 1 for trace in figure["data"])
    assert "Ratings over time" in figure["layout"]["title"]["text"]


@pytest.fixture
def cli_arena(small_arena, monkeypatch, tmp_path):
    """The small arena with ARENA_DB / ARENA_MEDIA_DIR pointing at it and no other ARENA_* variable, for the
    command line."""
    return command_line_env(small_arena, monkeypatch, tmp_path)


def test_the_command_line_prints_the_history_and_the_board_as_of_a_day(cli_arena, capsys):
    now = time.time()
    _vote_days(cli_arena, {2: 5, 1: 5}, now)
    yesterday, before = day_of(now - DAY), day_of(now - 2 * DAY)
    assert main(["leaderboard", "--as-of", yesterday, "--rounds", "10"]) == 2
    assert "No board kept for these filters on or before" in capsys.readouterr().err
    assert main(["leaderboard", "--rebuild-history", "3", "--rounds", "10"]) == 0
    assert f"Kept 3 past day(s) from the votes cast by then: {day_of(now - 3 * DAY)}, {before}, {yesterday}" \
        in capsys.readouterr().out
    assert main(["leaderboard", "--history", "--rounds", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Rating by day (UTC)") and before in out and yesterday in out
    assert main(["leaderboard", "--as-of", before, "--json", "--rounds", "10"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert kept["day"] == before and kept["votes"]["human"] == 5
    assert main(["leaderboard", "--as-of", before, "--fresh", "--json", "--rounds", "10"]) == 0
    assert json.loads(capsys.readouterr().out)["votes"]["human"] == 5  # computed from the votes cast by then
    assert main(["leaderboard", "--history", "--json", "--rounds", "10"]) == 0
    days = json.loads(capsys.readouterr().out)["days"]
    assert [d["day"] for d in days] == [day_of(now - 3 * DAY), before, yesterday]
    assert main(["leaderboard", "--as-of", "yesterday"]) == 2
    assert "write it as YYYY-MM-DD" in capsys.readouterr().err


def test_the_api_answers_the_history_and_keeps_annotators_boards_private(small_arena):
    from support.webapp import call_event, running_app

    now = time.time()
    _vote_days(small_arena, {2: 5, 1: 5}, now)
    options = leaderboard_options(small_arena.settings)
    rebuild_history(small_arena.db, options, 2, history_days=365, now=now)
    with running_app(small_arena.settings) as url:
        answer = call_event(url, "leaderboard_history", ["All", "All", "All", "All", "All", "", False, "Most votes",
                                                         "arena", "All", False])[0]
        assert [d["day"] for d in answer["days"]] == [day_of(now - 2 * DAY), day_of(now - DAY)]
        assert [d["votes"]["human"] for d in answer["days"]] == [5, 10]
        from tools.load import LoadError

        with pytest.raises(LoadError, match="Unknown voter 'historian'"):
            call_event(url, "leaderboard_history", ["All", "All", "All", "All", "historian", "", False, "Most votes",
                                                    "arena", "All", False])
