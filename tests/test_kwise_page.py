"""The Four images tab's handlers (arena.web.four_image) over a real app context: no name before the vote, the names
after it with the next set preloaded, refusals told on the status line, the votes cast and those that count, and
Next after a vote not counted as a skip."""

import gradio as gr
from support.arena import MODELS

from arena import session as sessions
from arena.web.app import make_context
from arena.web.four_image import SHOWN, VOTED, cast_four, grid_html, opened, read_pick, show_next
from datamodel.kwise import SLOTS


def _ctx(small_arena, **settings):
    small_arena.db.close()
    return make_context(small_arena.settings.replace(four_image_suites="taxonomy", **settings))


def test_names_only_after_the_vote_and_next_after_a_vote_is_no_skip(small_arena):
    ctx = _ctx(small_arena, rate_limit_skips_per_minute=2)
    session = sessions.start(ctx.store.db(), "kim", "a-long-token-1", open_signup=True)
    sitting = None
    for number in range(5):  # more sets than the two skips a minute allow: each follows a vote
        if number == 0 or sitting.upcoming is not None:  # the first set, or one not preloaded: from the server
            shown = dict(zip(SHOWN, show_next(ctx, sitting, session)))
            sitting = shown["state"]
            assert not any(model in shown["grid"] + shown["prompt"] + shown["reveal"] for model in MODELS)
            assert shown["on_screen"] == sitting.battle.media_token
        voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "2:4")))
        assert voted["state"].revealed == sitting.battle  # the set voted on; the one drawn with the vote is current
        assert voted["state"].receipt is None and voted["state"].battle.media_token == voted["upcoming"]["token"]
        assert sitting.battle.id in [row[0] for row in ctx.store.db().execute("SELECT battle_id FROM kwise_votes")]
        names = [ctx.store.db().execute("SELECT m.name FROM images i JOIN models m ON m.id = i.model_id WHERE i.id = ?",
                                        [image]).fetchone()[0] for image in sitting.battle.image_ids]
        assert names[1] in voted["reveal"] and all(f"{slot}: {name}" in voted["grid"]
                                                   for slot, name in zip(SLOTS, names))
        assert f"{number + 1} four-image vote" in voted["status"]
        sitting = voted["state"]
    again = opened(ctx, sitting, session)  # the tab picked again: the page keeps its reveal and the set behind it
    assert again == [gr.skip()] * len(SHOWN)


def test_the_next_set_comes_with_the_vote_preloaded_and_anonymous(small_arena):
    """The vote's answer carries the next set (its prompt and grid, by media token, no name) and the reveal loads its
    four images hidden, so Next shows it in the browser; the set voted on takes no second vote, not even the page's
    (a key pressed on the reveal), and that vote never lands on the next set."""
    ctx = _ctx(small_arena)
    db = ctx.store.db()
    session = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    first = show_next(ctx, None, session)[0]
    voted = dict(zip(VOTED, cast_four(ctx, first, session, first.battle.media_token, "2:")))
    following = voted["state"].battle
    upcoming = voted["upcoming"]
    assert following.id != first.battle.id and upcoming["token"] == following.media_token
    assert upcoming["grid"] == grid_html(voted["state"]) and following.text in upcoming["prompt"]
    assert not any(model in upcoming["grid"] + upcoming["prompt"] for model in MODELS)
    assert following.id not in upcoming["grid"] + voted["reveal"]  # the battle id never leaves the server
    for slot in SLOTS:  # preloaded: hidden, through the next set's media token
        assert f'<img src="kwise-media/{following.media_token}/{slot}" alt="" hidden>' in voted["reveal"]
    replayed = cast_four(ctx, voted["state"], session, first.battle.media_token, "1:")
    assert "already have your vote" in replayed[1] and replayed[0] == gr.skip()
    assert db.execute("SELECT COUNT(*) FROM kwise_votes WHERE battle_id = ?", [following.id]).fetchone()[0] == 0
    second = dict(zip(VOTED, cast_four(ctx, voted["state"], session, f"{following.media_token}@1.5", "3:")))
    assert second["state"].revealed == following and "Best: <b>" in second["reveal"]  # "token@seconds shown" taken
    assert db.execute("SELECT COUNT(*) FROM kwise_votes WHERE battle_id = ?", [following.id]).fetchone()[0] == 1


def test_refusals_are_told_on_the_status_line(small_arena):
    ctx = _ctx(small_arena, rate_limit_skips_per_minute=2)
    session = sessions.start(ctx.store.db(), "kim", "a-long-token-1", open_signup=True)
    refused = show_next(ctx, None, None)
    assert "Sign in on the Arena tab first" in refused[1]
    sitting = show_next(ctx, None, session)[0]
    bad = cast_four(ctx, sitting, session, sitting.battle.media_token, "3:3")
    assert "Pick the best image" in bad[1] and bad[0] == gr.skip()
    skipped = show_next(ctx, sitting, session)  # the second skip of the minute
    assert skipped[0].battle.id != sitting.battle.id
    limited = show_next(ctx, skipped[0], session)  # the third: over the limit
    assert "⚠" in limited[1]
    assert opened(ctx, skipped[0], session) == [gr.skip()] * len(SHOWN)  # the set waiting for a vote stays


def test_the_pick_and_the_empty_grid():
    assert read_pick("3:1") == (3, 1) and read_pick("3:") == (3, None) and read_pick("x") == (0, None)
    assert read_pick(None) == (0, None)
    assert "four-empty" in grid_html(None)


def test_the_reveal_says_when_the_quality_rules_set_a_vote_aside(small_arena):
    ctx = _ctx(small_arena)
    session = sessions.start(ctx.store.db(), "kim", "a-long-token-1", open_signup=True)
    sitting = None
    for _ in range(10):  # ten votes in a few seconds: a run of fast votes
        sitting = show_next(ctx, sitting, session)[0]
        voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "1:")))
        sitting = voted["state"]
    assert "This vote does not count" in voted["reveal"] and "5 s apart" in voted["reveal"]


def test_the_status_line_says_the_votes_cast_and_those_that_count(small_arena):
    """As the arena's status line: the annotator's four-image votes cast and those the leaderboard counts (not the
    votes of the page's sitting), and why the others are set aside."""
    ctx = _ctx(small_arena)
    session = sessions.start(ctx.store.db(), "kim", "a-long-token-1", open_signup=True)
    shown = dict(zip(SHOWN, show_next(ctx, None, session)))
    assert "Signed in as **kim**" in shown["status"] and "no four-image votes yet" in shown["status"]
    sitting = shown["state"]
    voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "1:")))
    assert "1 four-image vote cast, it counts" in voted["status"]
    for _ in range(9):  # nine more within seconds: a run of ten fast votes, all set aside
        sitting = voted["state"]
        voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "1:")))
    assert "10 four-image votes cast, 0 count" in voted["status"]
    assert "10 of your four-image votes do not count: 10 in a run of 10 or more votes less than 5 s apart" in (
        voted["status"].replace("\\", ""))  # the warning as Markdown shows it
    later = show_next(ctx, None, session)[1]  # a new sitting of the same annotator (a reload): the same counts
    assert "10 four-image votes cast, 0 count" in later


def test_the_status_line_says_when_the_admin_set_a_four_image_vote_aside(small_arena):
    """A four-image vote the admin excluded after a run of fast votes is counted once, as the admin's, not under the
    speed rule too (as the Arena tab's status line counts a reviewed pairwise vote)."""
    from datamodel.reviews import FOUR_IMAGE, review_votes

    ctx = _ctx(small_arena)
    db = ctx.store.db()
    session = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    sitting = show_next(ctx, None, session)[0]
    for _ in range(10):  # a run of ten fast votes, all set aside by the speed rule
        voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "1:")))
        sitting = voted["state"]
    first = db.execute("SELECT MIN(id) FROM kwise_votes").fetchone()[0]
    review_votes(db, exclude=True, reason="spam", vote_id=first, vote_kind=FOUR_IMAGE)
    status = show_next(ctx, None, session)[1].replace("\\", "")
    assert "10 four-image votes cast, 0 count" in status
    assert "10 of your four-image votes do not count: 9 in a run of 10 or more" in status
    assert "; 1 set aside by the admin" in status
