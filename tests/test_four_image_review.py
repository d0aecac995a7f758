"""The admin's review of four-image votes beside the pairwise ones (issue 42): the annotators' counts and the flagged
votes list them, with their kind, pick and four models; an admin excludes or restores one by its reference
("four-image 12"), or all of an annotator's or a rule's votes of both kinds in one action; the quality rules leave a
reviewed four-image vote alone, as a pairwise one. On SQLite and PostgreSQL."""

from __future__ import annotations

import random

import pytest
from support.votes import four_image_votes

from arena import session as sessions
from arena.admin_tables import admin_actions, annotator_flags, flagged_table
from datamodel import reviews
from datamodel.kwise import kwise_vote_rows
from datamodel.reviews import ReviewError, review_votes

pytestmark = pytest.mark.both_engines


def _pairwise_votes(db, session, count: int, *, start: float, every: float):
    for n in range(count):
        at = start + n * every
        session = sessions.vote(db, sessions.next_battle(db, random.Random(n), session, now=at - 1), "A" if n % 2
                                else "B", now=at)
    return session


@pytest.fixture
def reviewed_arena(small_arena):
    """kim: 3 unhurried pairwise votes, then 10 four-image votes 2 s apart (the speed rule sets all 10 aside); lee: 4
    unhurried four-image votes (counted)."""
    db = small_arena.db
    kim = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    kim = _pairwise_votes(db, kim, 3, start=1000.0, every=60.0)
    fast = four_image_votes(db, kim, 10, start=5000.0, every=2.0)
    lee = sessions.start(db, "lee", "a-long-token-2", open_signup=True)
    steady = four_image_votes(db, lee, 4, start=9000.0, every=40.0)
    return small_arena, kim, fast, steady


def _kwise(db, vote_id: int) -> tuple:
    return tuple(db.execute("SELECT excluded, reviewed, excluded_reason FROM kwise_votes WHERE id = ?",
                            [vote_id]).fetchone())


def test_the_annotators_table_counts_four_image_votes_with_the_pairwise_ones(reviewed_arena):
    arena, _, fast, steady = reviewed_arena
    flags = reviews.annotator_flags(arena.db).set_index("annotator")
    kim, lee = flags.loc["kim"], flags.loc["lee"]
    assert (kim["votes"], kim["four_image"], kim["counted"], kim["speed_rule"]) == (13, 10, 3, 10)
    assert (lee["votes"], lee["four_image"], lee["counted"], lee["speed_rule"]) == (4, 4, 4, 0)
    assert kim["four_image_median_seconds"] == pytest.approx(1.0)  # each shown 1 s before its vote
    assert pd_isna(lee["median_seconds"])  # no pairwise vote
    shown = annotator_flags(arena.db).set_index("Annotator")
    assert shown.loc["kim", "Four-image"] == 10 and shown.loc["kim", "Median s (four-image)"] == 1.0


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


def test_the_flagged_votes_list_four_image_votes_with_their_kind_pick_and_models(reviewed_arena):
    arena, _, fast, steady = reviewed_arena
    db = arena.db
    table = flagged_table(db)
    assert list(table.columns) == ["Vote", "Voter", "Outcome", "When (UTC)", "Excluded", "By an admin", "Reason",
                                   "Models"]
    four = table[table["Vote"].str.startswith("four-image ")]
    assert sorted(four["Vote"]) == sorted(f"four-image {vote_id}" for vote_id in fast)  # lee's count: not listed
    rows = {row["id"]: row for row in kwise_vote_rows(db, include_excluded=True)
            for row in [dict(row, id=row["vote_id"])]}
    first = four[four["Vote"] == f"four-image {fast[0]}"].iloc[0]
    vote = rows[fast[0]]
    assert first["Models"] == ", ".join(f"{slot} {vote[f'model_{slot}']}" for slot in range(1, 5))
    assert first["Outcome"] == f"best {vote['best']} ({vote['best_model']}), worst {vote['worst']} " \
                               f"({vote['worst_model']})"
    assert (first["Voter"], first["Excluded"], first["By an admin"]) == ("kim", "yes", "no")
    assert "consecutive votes less than 5 s apart" in first["Reason"]
    assert first["When (UTC)"].startswith("1970-01-01T01:23:20")  # voted at 5000 s
    assert table.iloc[0]["Vote"] == f"four-image {fast[-1]}"  # newest first
    # a pairwise vote an admin excluded joins them, named by its kind, with its two models
    pairwise_id, outcome, left, right = db.execute(
        "SELECT v.id, v.outcome, ml.name, mr.name FROM votes v JOIN models ml ON ml.id = v.left_model_id JOIN models "
        "mr ON mr.id = v.right_model_id ORDER BY v.id LIMIT 1").fetchone()
    review_votes(db, exclude=True, reason="a test", vote_id=pairwise_id)
    table = flagged_table(db)
    assert len(table) == 11
    pairwise = table[table["Vote"] == f"pairwise {pairwise_id}"].iloc[0]
    assert (pairwise["Voter"], pairwise["Outcome"], pairwise["Models"]) == ("kim", outcome, f"{left} vs {right}")
    assert (pairwise["Excluded"], pairwise["By an admin"]) == ("yes", "yes")


def test_an_admin_restores_and_excludes_one_four_image_vote_by_its_reference(reviewed_arena):
    arena, kim, fast, steady = reviewed_arena
    db = arena.db
    pairwise_same_id = db.execute("SELECT excluded, reviewed, excluded_reason FROM votes WHERE id = ?",
                                  [fast[0]]).fetchone()
    kind, vote_id = reviews.vote_reference(f"four-image {fast[0]}")
    assert (kind, vote_id) == ("four-image", fast[0])
    result = review_votes(db, exclude=False, reason="looked at each", vote_id=vote_id, vote_kind=kind, now=86400.0)
    assert (result.matched, result.changed) == (1, 1)
    assert result.message.startswith(f"Included 1 vote: four-image vote {fast[0]}")
    excluded, reviewed_, reason = _kwise(db, fast[0])
    assert (excluded, reviewed_) == (0, 1)
    assert reason.startswith("included by an admin: looked at each (was: 10+ consecutive votes less than 5 s apart")
    # the pairwise vote of the same number is another vote, left as it was
    assert db.execute("SELECT excluded, reviewed, excluded_reason FROM votes WHERE id = ?",
                      [fast[0]]).fetchone() == pairwise_same_id
    assert fast[0] in {row["vote_id"] for row in kwise_vote_rows(db)}  # it counts: the ratings read it
    # the quality rules leave a reviewed vote alone: another fast vote re-checks kim's four-image votes
    four_image_votes(db, kim, 1, start=5021.0, every=2.0)
    assert _kwise(db, fast[0])[:2] == (0, 1)
    assert _kwise(db, fast[1])[:2] == (1, 0)  # the others stay the rules'
    # and back out
    review_votes(db, exclude=True, reason="second look", vote_id=fast[0], vote_kind="four-image", now=86500.0)
    assert _kwise(db, fast[0])[:2] == (1, 1)
    log = admin_actions(db)
    assert [tuple(row) for row in log[["Action", "Vote", "Votes", "Changed"]].itertuples(index=False)] == [
        ("exclude", f"four-image {fast[0]}", 1, 1), ("include", f"four-image {fast[0]}", 1, 1)]
    with pytest.raises(ReviewError, match="No four-image vote with id 999999"):
        review_votes(db, exclude=True, reason="x", vote_id=999999, vote_kind="four-image")


@pytest.mark.parametrize(("typed", "expected"), [
    ("12", ("pairwise", 12)), (12.0, ("pairwise", 12)), (" four-image 7 ", ("four-image", 7)),
    ("Four-image 7", ("four-image", 7)), ("pairwise 3", ("pairwise", 3))])
def test_a_vote_reference_is_its_number_or_its_kind_and_number(typed, expected):
    assert reviews.vote_reference(typed) == expected


@pytest.mark.parametrize("typed", ["", "abc", "1.5", "four-image", "four image x", "triple 3", None])
def test_a_wrong_vote_reference_is_told_in_words(typed):
    with pytest.raises(ReviewError, match="not a vote id|Enter the id"):
        reviews.vote_reference(typed)


def test_an_action_on_an_annotator_or_a_rule_covers_both_kinds_of_vote(reviewed_arena):
    arena, _, fast, steady = reviewed_arena
    db = arena.db
    result = review_votes(db, exclude=True, reason="a bot", annotator="kim", now=86400.0)
    assert (result.matched, result.changed) == (13, 3)  # the ten four-image votes were already set aside
    assert "13 votes (3 pairwise, 10 four-image)" in result.message
    assert db.execute("SELECT COUNT(*) FROM votes WHERE voter = 'kim' AND excluded = 1 AND reviewed = 1"
                      ).fetchone()[0] == 3
    assert all(_kwise(db, vote_id)[:2] == (1, 1) for vote_id in fast)
    assert all(_kwise(db, vote_id) == (0, 0, "") for vote_id in steady)  # lee's are not kim's
    flags = reviews.annotator_flags(db).set_index("annotator")
    assert (flags.loc["kim", "excluded_by_admin"], flags.loc["kim", "speed_rule"]) == (13, 0)
    # the speed rule's votes back in: kim's four-image ones (their rule's words kept after the admin's)
    result = review_votes(db, exclude=False, reason="a human after all", rule="speed", now=86500.0)
    assert (result.matched, result.changed) == (10, 10)
    assert result.message.startswith("Included 10 four-image votes: the votes the speed rule flagged")
    assert all(_kwise(db, vote_id)[:2] == (0, 1) for vote_id in fast)
    assert len(kwise_vote_rows(db)) == 14
