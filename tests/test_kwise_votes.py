"""Four-image votes (the four-image mode): drawn, stored with their image ids, refused when they cannot be the
annotator's, on SQLite and PostgreSQL."""

import json
import random

import pytest
from support.arena import MODELS

from arena import session as sessions
from arena.four_image_session import FourImageSitting, next_four, show_upcoming, vote_four
from datamodel.kwise import KWISE_COLUMNS, KwiseRejected, kwise_model_counts, kwise_vote_rows
from sampling.kwise import NoFourImageBattle

pytestmark = pytest.mark.both_engines


def _signed_in(db, name="kim"):
    return sessions.start(db, name, "a-long-token-1", open_signup=True)


@pytest.mark.parametrize("strategy", ["uniform", "ksort-ucb"])
def test_a_vote_is_stored_with_its_slots_and_image_ids(small_arena, strategy):
    db = small_arena.db
    session = _signed_in(db)
    sitting = next_four(db, random.Random(1), session, None, suites=["taxonomy"], strategy=strategy, now=100.0)
    battle = sitting.battle
    assert battle.suite == "taxonomy" and len(set(battle.image_ids)) == 4
    models = {row[0]: row[1] for row in db.execute("SELECT i.id, m.name FROM images i JOIN models m ON "
                                                   "m.id = i.model_id").fetchall()}
    assert sorted(models[i] for i in battle.image_ids) == sorted(MODELS)  # four different models
    voted = vote_four(db, session, sitting, best=3, worst=1, on_screen=battle.media_token, seconds_on_screen=4.0,
                      now=110.0)
    receipt = voted.receipt
    assert receipt.models == tuple(models[i] for i in battle.image_ids) and (receipt.best, receipt.worst) == (3, 1)
    assert receipt.seconds_to_vote == pytest.approx(4.0)
    stored = db.execute("SELECT best, worst, best_image_id, worst_image_id, annotator_id FROM kwise_votes").fetchall()
    assert [tuple(r) for r in stored] == [(3, 1, battle.image_ids[2], battle.image_ids[0], session.annotator.id)]
    (row,) = kwise_vote_rows(db)
    assert tuple(row) == KWISE_COLUMNS
    assert row["best_model"] == models[battle.image_ids[2]] and row["worst_model"] == models[battle.image_ids[0]]
    assert [row[f"image_id_{s}"] for s in range(1, 5)] == list(battle.image_ids)
    assert row["strategy"] == strategy and row["annotator"] == "kim"
    appearances, votes = kwise_model_counts(db)
    assert sum(appearances.values()) == 4 and votes[0][1:] == (3, 1)


def test_votes_that_cannot_be_the_annotators_are_refused(small_arena):
    db = small_arena.db
    kim, lee = _signed_in(db), _signed_in(db, "lee")
    sitting = next_four(db, random.Random(2), kim, None, suites=["taxonomy"], strategy="uniform")
    token = sitting.battle.media_token
    with pytest.raises(KwiseRejected, match="no longer on your screen"):  # another session's battle
        vote_four(db, lee, sitting, best=1, on_screen=token)
    with pytest.raises(KwiseRejected, match="no longer on your screen"):  # another battle's token
        vote_four(db, kim, sitting, best=1, on_screen="x" * 24)
    for best, worst in ((0, None), (5, None), (2, 2), (1, 7)):
        with pytest.raises(KwiseRejected, match="Pick the best image"):
            vote_four(db, kim, sitting, best=best, worst=worst, on_screen=token)
    voted = vote_four(db, kim, sitting, best=2, on_screen=token)
    with pytest.raises(KwiseRejected, match="already have your vote"):
        vote_four(db, kim, voted, best=1, on_screen=token)
    with pytest.raises(KwiseRejected, match="already have your vote"):  # the page's state replayed
        vote_four(db, kim, sitting, best=1, on_screen=token)
    with pytest.raises(KwiseRejected, match="Sign in on the Arena tab"):
        vote_four(db, None, sitting, best=1)
    assert db.execute("SELECT COUNT(*) FROM kwise_votes").fetchone()[0] == 1


def test_a_suite_without_four_models_per_prompt_has_no_battle(small_arena):
    db = small_arena.db
    with db.conn:
        db.execute("UPDATE images SET withheld = 'test' WHERE model_id = ?", [small_arena.model_ids[MODELS[0]]])
    with pytest.raises(NoFourImageBattle, match="images from 4 models"):
        next_four(db, random.Random(0), _signed_in(db), FourImageSitting(), suites=["taxonomy"], strategy="uniform")


def test_the_least_voted_prompt_comes_next(small_arena):
    db = small_arena.db
    session = _signed_in(db)
    sitting, seen = None, []
    for _ in range(3):  # the taxonomy suite has three prompts: each once before any twice
        sitting = next_four(db, random.Random(len(seen)), session, sitting, suites=["taxonomy"], strategy="ksort-ucb")
        seen.append(sitting.battle.prompt_id)
        sitting = vote_four(db, session, sitting, best=1, on_screen=sitting.battle.media_token)
    assert len(set(seen)) == 3 and db.execute("SELECT COUNT(*) FROM kwise_votes").fetchone()[0] == 3


def test_the_next_set_is_drawn_with_the_vote_and_takes_no_vote_before_it_is_shown(small_arena):
    """As the arena's next battle: the set drawn with the vote (of a prompt not just voted on) waits in the sitting;
    until it is shown a vote naming it is refused, and a vote replayed on the set voted on never lands on it; once
    shown it takes one vote, and shows the set voted on before it as already voted."""
    db = small_arena.db
    session = _signed_in(db)
    sitting = next_four(db, random.Random(4), session, None, suites=["taxonomy"], strategy="uniform", now=100.0)
    first = sitting.battle
    voted = vote_four(db, session, sitting, best=2, on_screen=first.media_token, now=110.0, rng=random.Random(5),
                      suites=["taxonomy"], strategy="uniform")
    following = voted.upcoming
    assert following is not None and following.prompt_id != first.prompt_id  # the least voted prompt comes next
    assert voted.battle == first and voted.receipt is not None
    assert db.execute("SELECT COUNT(*) FROM kwise_battles").fetchone()[0] == 2
    with pytest.raises(KwiseRejected, match="no longer on your screen"):  # not shown yet
        vote_four(db, session, voted, best=1, on_screen=following.media_token)
    with pytest.raises(KwiseRejected, match="already have your vote"):  # the set voted on, again
        vote_four(db, session, voted, best=1, on_screen=first.media_token)
    shown = show_upcoming(voted, now=120.0)
    assert (shown.battle, shown.receipt, shown.upcoming, shown.revealed) == (following, None, None, first)
    assert shown.shown_at == 120.0
    with pytest.raises(KwiseRejected, match="already have your vote"):  # a key pressed on the old reveal
        vote_four(db, session, shown, best=1, on_screen=first.media_token)
    assert db.execute("SELECT COUNT(*) FROM kwise_votes WHERE battle_id = ?", [following.id]).fetchone()[0] == 0
    again = vote_four(db, session, shown, best=3, on_screen=following.media_token, seconds_on_screen=2.0, now=125.0)
    assert again.receipt.battle_id == following.id and again.receipt.seconds_to_vote == pytest.approx(2.0)
    with pytest.raises(KwiseRejected, match="already have your vote"):
        vote_four(db, session, again, best=1, on_screen=following.media_token)
    assert db.execute("SELECT COUNT(*) FROM kwise_votes").fetchone()[0] == 2
    with pytest.raises(ValueError, match="follows a vote"):
        show_upcoming(shown)  # no vote yet on the set shown


def test_next_after_a_vote_shows_the_set_drawn_with_it_and_a_vote_without_a_draw_brings_none(small_arena):
    db = small_arena.db
    session = _signed_in(db)
    sitting = next_four(db, random.Random(6), session, None, suites=["taxonomy"], strategy="uniform")
    voted = vote_four(db, session, sitting, best=1, on_screen=sitting.battle.media_token, rng=random.Random(7),
                      suites=["taxonomy"], strategy="uniform")
    shown = next_four(db, random.Random(8), session, voted, suites=["taxonomy"], strategy="uniform")
    assert shown.battle == voted.upcoming and shown.upcoming is None  # shown, not drawn again
    assert db.execute("SELECT COUNT(*) FROM kwise_battles").fetchone()[0] == 2
    alone = vote_four(db, session, shown, best=1, on_screen=shown.battle.media_token)  # no rng: nothing drawn
    assert alone.upcoming is None and db.execute("SELECT COUNT(*) FROM kwise_battles").fetchone()[0] == 2


def test_a_vote_counts_when_no_next_set_can_be_drawn(small_arena):
    db = small_arena.db
    session = _signed_in(db)
    sitting = next_four(db, random.Random(9), session, None, suites=["taxonomy"], strategy="uniform")
    with db.conn:  # from now on no prompt has images of four models
        db.execute("UPDATE images SET withheld = 'test' WHERE model_id = ?", [small_arena.model_ids[MODELS[0]]])
    voted = vote_four(db, session, sitting, best=1, on_screen=sitting.battle.media_token, rng=random.Random(1),
                      suites=["taxonomy"], strategy="uniform")
    assert voted.receipt is not None and voted.upcoming is None
    assert db.execute("SELECT COUNT(*) FROM kwise_votes").fetchone()[0] == 1


def test_the_leaderboard_rates_four_image_votes_under_the_kwise_protocol_only(small_arena):
    from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard

    db = small_arena.db
    session = _signed_in(db)
    sitting = None
    for round_ in range(6):
        sitting = next_four(db, random.Random(round_), session, sitting, suites=["taxonomy"], strategy="uniform")
        names = {row[0]: row[1] for row in db.execute("SELECT i.id, m.name FROM images i JOIN models m ON "
                                                       "m.id = i.model_id").fetchall()}
        best = 1 + [names[i] for i in sitting.battle.image_ids].index(MODELS[0])  # the first model always wins
        sitting = vote_four(db, session, sitting, best=best, on_screen=sitting.battle.media_token)
    options = dict(rounds=50, min_votes=0, provisional_votes=0, robustness_top=0)
    board = compute_leaderboard(db, LeaderboardOptions(protocol="kwise-rank-breaking", **options))
    fit = board.fits["human"].set_index("model")
    assert fit.loc[MODELS[0], "rating"] == fit["rating"].max()
    assert fit.loc[MODELS[0], "votes"] == 18 and fit.loc[MODELS[0], "fit_votes"] == 6  # 6 votes, 3 pairs each
    assert compute_leaderboard(db, LeaderboardOptions(**options)).fits["human"]["votes"].sum() == 0
    other_suite = compute_leaderboard(db, LeaderboardOptions(protocol="kwise-rank-breaking", suite="commonsense",
                                                             **options))
    assert other_suite.fits["human"]["votes"].sum() == 0


def test_four_image_votes_follow_the_leaderboards_prompt_slices(small_arena):
    """A subset, variant or category slice keeps the four-image votes on its prompts (they were all dropped)."""
    from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard

    db = small_arena.db
    first = small_arena.prompt_ids[0]
    metadata = json.loads(db.execute("SELECT metadata FROM prompts WHERE id = ?", [first]).fetchone()[0])
    with db.conn:  # one taxonomy prompt of category "coins", the other two of none
        db.execute("UPDATE prompts SET metadata = ? WHERE id = ?",
                   [json.dumps({**metadata, "category": "coins"}), first])
    session = _signed_in(db)
    sitting, shown = None, []
    for round_ in range(6):  # two votes per taxonomy prompt (the least voted prompt comes next)
        sitting = next_four(db, random.Random(round_), session, sitting, suites=["taxonomy"], strategy="uniform")
        shown.append(sitting.battle.prompt_id)
        sitting = vote_four(db, session, sitting, best=1, on_screen=sitting.battle.media_token)
    prompts = {row[0]: row[1:] for row in db.execute("SELECT id, subset, variant FROM prompts").fetchall()}
    options = dict(protocol="kwise-rank-breaking", rounds=20, min_votes=0, provisional_votes=0, robustness_top=0)

    def fit_votes(**slice_):
        fit = compute_leaderboard(db, LeaderboardOptions(**options, **slice_)).fits["human"]
        return int(fit["fit_votes"].sum()) // 4  # each vote counts once for each of its four models

    assert fit_votes() == 6
    assert fit_votes(subset="Easy") == sum(prompts[p][0] == "Easy" for p in shown)
    assert fit_votes(variant="with_definition") == sum(prompts[p][1] == "with_definition" for p in shown) == 2
    assert fit_votes(category="coins") == 2
    assert fit_votes(subset="Hard") == sum(prompts[p][0] == "Hard" for p in shown)


def test_the_quality_rules_set_aside_four_image_votes_as_they_do_pairwise_ones(small_arena):
    """Runs of fast votes and one slot picked nearly always do not count (flagged with the reason, never deleted);
    the receipt says so, and the leaderboard and the sampler read the counted votes only."""
    db = small_arena.db
    fast, steady = _signed_in(db), _signed_in(db, "lee")
    sitting, at = None, 1000.0
    for n in range(10):  # ten votes 2 s apart: a run of fast votes
        at += 2.0
        sitting = next_four(db, random.Random(n), fast, sitting, suites=["taxonomy"], strategy="uniform", now=at)
        sitting = vote_four(db, fast, sitting, best=1 + n % 4, on_screen=sitting.battle.media_token, now=at + 1.0)
    assert sitting.receipt.excluded and "consecutive votes less than 5 s apart" in sitting.receipt.reason
    rows = db.execute("SELECT excluded, excluded_reason FROM kwise_votes v JOIN annotators a ON a.id = "
                      "v.annotator_id WHERE a.name = 'kim'").fetchall()
    assert len(rows) == 10 and all(row[0] == 1 and "5 s apart" in row[1] for row in rows)
    sitting, at = None, 5000.0
    for n in range(20):  # twenty unhurried votes, always slot 1
        at += 30.0
        sitting = next_four(db, random.Random(n), steady, sitting, suites=["taxonomy"], strategy="uniform", now=at)
        sitting = vote_four(db, steady, sitting, best=1, on_screen=sitting.battle.media_token, now=at + 10.0)
    assert sitting.receipt.excluded and "side 1" in sitting.receipt.reason
    assert kwise_vote_rows(db) == [] and len(kwise_vote_rows(db, include_excluded=True)) == 30
    assert kwise_model_counts(db) == ({}, [])
    clean = _signed_in(db, "max")
    sitting, at = None, 90000.0
    for n in range(20):  # unhurried, slots spread: all count
        at += 30.0
        sitting = next_four(db, random.Random(n), clean, sitting, suites=["taxonomy"], strategy="uniform", now=at)
        sitting = vote_four(db, clean, sitting, best=1 + n % 4, on_screen=sitting.battle.media_token, now=at + 10.0)
    assert not sitting.receipt.excluded and sitting.receipt.reason == ""
    assert len(kwise_vote_rows(db)) == 20
