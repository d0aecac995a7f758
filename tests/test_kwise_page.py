"""The Four images tab's handlers (arena.web.four_image) over a real app context: no name before the vote, the names
after it, refusals told on the status line, and Next after a vote not counted as a skip."""

import gradio as gr
from support.arena import MODELS

from arena import session as sessions
from arena.four_image_session import FourImageSitting
from arena.web.app import make_context
from arena.web.four_image import SHOWN, VOTED, cast_four, grid_html, opened, read_pick, show_next


def _ctx(small_arena, **settings):
    small_arena.db.close()
    return make_context(small_arena.settings.replace(four_image_suites="taxonomy", **settings))


def test_names_only_after_the_vote_and_next_after_a_vote_is_no_skip(small_arena):
    ctx = _ctx(small_arena, rate_limit_skips_per_minute=2)
    session = sessions.start(ctx.store.db(), "kim", "a-long-token-1", open_signup=True)
    sitting = None
    for number in range(5):  # more sets than the two skips a minute allow: each follows a vote
        shown = dict(zip(SHOWN, show_next(ctx, sitting, session)))
        sitting = shown["state"]
        assert not any(model in shown["grid"] + shown["prompt"] + shown["reveal"] for model in MODELS)
        assert shown["on_screen"] == sitting.battle.media_token
        voted = dict(zip(VOTED, cast_four(ctx, sitting, session, sitting.battle.media_token, "2:4")))
        sitting = voted["state"]
        assert sitting.receipt.models[1] in voted["reveal"] and all(m in voted["grid"] for m in MODELS)
        assert f"{number + 1} four-image vote" in voted["status"]
    again = opened(ctx, sitting, session)[0]  # a voted set is replaced when the tab is picked again
    assert isinstance(again, FourImageSitting) and again.battle.id != sitting.battle.id


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
