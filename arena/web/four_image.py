"""The Four images tab (the four-image mode): one prompt, four anonymous images from four models, pick the best (and
optionally the worst), see the names.

Shown when the setting ``four_image_suites`` names a suite. The annotator is the one signed in on the Arena tab (the
tab's events take the arena's session, :mod:`arena.four_image_session`); the four images come through the battle's
unguessable media token as display renditions (``kwise-media/<token>/<slot>``, the same front door and renditions as
a pairwise battle's), and the names only with the vote's answer. On a desktop the four images are a 2×2 grid; on a
phone a 2×2 grid of smaller tiles (a tap enlarges one), the Next button fixed at the bottom. Keys: **1**–**4** pick
the best, **Shift+1**–**4** mark (or unmark) the worst before that, **N** the next set. The page's script and
stylesheet are ``static/four_image.html`` and ``static/four_image.css``.

As on the Arena tab, the vote's answer carries the next set (drawn in the vote's transaction,
:func:`arena.four_image_session.vote_four`): the reveal loads its four images hidden, and Next after a vote shows it
in the browser, with no request. Next before a vote (a skip), or after a vote that brought no set, asks the server.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call.
"""

import html
from typing import Any

import gradio as gr

from arena.four_image_session import FourImageSitting, next_four, show_upcoming, vote_four
from arena.ratelimit import RateLimited, client_address
from arena.web.arena_tab import read_on_screen
from arena.web.context import AppContext, bind, refusal, unwritable
from arena.web.render import countdown_text, counted_lines, escape_markdown, set_aside_text, votes_text
from datamodel.connection import database_errors
from datamodel.kwise import SLOTS, KwiseBattle, KwiseRejected
from datamodel.standing import four_image_standing
from sampling.kwise import NoFourImageBattle

SUBMIT_JS = "(...inputs) => window.fourImage.beforeVote(...inputs)"
NEXT_JS = "(...inputs) => window.fourImage.next(...inputs)"
SHOWN = ("state", "status", "prompt", "grid", "reveal", "on_screen", "upcoming")  # a new set's answer, in this order
VOTED = ("state", "status", "grid", "reveal", "upcoming")  # what a vote answers
SWAPPED = ("prompt", "grid", "reveal", "on_screen", "upcoming")  # what Next after a vote sets, in the browser
INSTRUCTIONS = ("Which image shows the prompt best? **Best** under it (keys **1**–**4**); mark the worst first if you "
                "like (**Worst**, **Shift+1**–**4**). The names appear after your vote.")


def image_url(media_token: str, slot: int) -> str:
    return f"kwise-media/{html.escape(media_token)}/{slot}"


def grid_html(sitting: FourImageSitting | None) -> str:
    """The four tiles: each image through the battle's media token under its slot number, with its Best and Worst
    buttons; once voted, each caption names its model and the pick (the grid's class ``voted`` greys the buttons)."""
    if sitting is None or sitting.battle is None:
        return '<div class="four-grid four-empty"></div>'
    return _grid(sitting.battle.media_token, sitting.receipt)


def _grid(token: str, receipt) -> str:
    tiles = []
    for slot in SLOTS:
        caption = str(slot)
        mark = ""
        if receipt is not None:
            caption = f"{slot}: {receipt.models[slot - 1]}"
            mark = " best" if slot == receipt.best else " worst" if slot == receipt.worst else ""
        badge = {" best": "★ best", " worst": "✗ worst"}.get(mark, "")
        tiles.append(
            f'<figure class="four-tile{mark}" data-slot="{slot}"><figcaption><span class="four-name">'
            f'{html.escape(caption)}</span><span class="four-badge">{badge}</span></figcaption>'
            f'<img src="{image_url(token, slot)}" alt="Image {slot}"><div class="four-actions">'
            f'<button type="button" class="four-best" data-slot="{slot}">Best <kbd>{slot}</kbd></button>'
            f'<button type="button" class="four-worst" data-slot="{slot}">Worst</button></div></figure>')
    voted = " voted" if receipt is not None else ""
    return f'<div class="four-grid{voted}" data-token="{html.escape(token)}">{"".join(tiles)}</div>'


def reveal_html(sitting: FourImageSitting | None) -> str:
    """The names of the set voted on, whether the vote counts, and the next set's four images loaded hidden (the
    set drawn with the vote, ``sitting.upcoming``), so Next shows them at once."""
    if sitting is None or sitting.receipt is None:
        return '<div class="four-reveal"></div>'
    receipt = sitting.receipt
    worst = f" Worst: <b>{html.escape(receipt.models[receipt.worst - 1])}</b>." if receipt.worst else ""
    counted = "".join(f" {line}" for line in counted_lines(receipt.excluded, receipt.reason))  # wraps where narrow
    following = sitting.upcoming
    preload = "".join(f'<img src="{image_url(following.media_token, slot)}" alt="" hidden>'
                      for slot in SLOTS) if following is not None else ""
    return (f'<div class="four-reveal voted">Best: <b>{html.escape(receipt.models[receipt.best - 1])}</b>.{worst} '
            f'Press <b>Next</b><span class="four-key"> (N)</span> for another set.{counted}{preload}</div>')


def upcoming_view(battle: KwiseBattle | None) -> dict | None:
    """The next set as the page keeps it until Next (:data:`SWAPPED`): its media token, prompt and grid, no name;
    None when the vote brought none (Next then asks the server)."""
    if battle is None:
        return None
    return {"token": battle.media_token, "prompt": _prompt(battle), "grid": _grid(battle.media_token, None)}


def status_text(ctx: AppContext, session, error: str = "") -> str:
    """As the Arena tab's status line: who is signed in, their four-image votes cast and those that count (every
    sitting's: :func:`datamodel.standing.four_image_standing`), why the others are set aside, and why the last
    request was refused (``error``; a wait "in N s" counts down)."""
    warnings = []
    if session is not None and session.signed_in:
        now = four_image_standing(ctx.store.db(), session.annotator.id)
        line = f"Signed in as **{escape_markdown(session.annotator.name)}** · {votes_text(now, 'four-image ')}"
        aside = set_aside_text(now, ctx.settings.quality_rules, "four-image ", "one slot")
        warnings += [escape_markdown(aside)] if aside else []
    else:
        line = "Not signed in"
    if error:
        warnings.append(countdown_text(escape_markdown(error)))
    # on the line itself, which wraps where the window is narrow: the grid and Next stay above a desktop's fold
    return line + "".join(f' <span class="arena-warning">⚠ {text}</span>' for text in warnings)


def _prompt(battle: KwiseBattle) -> str:
    return f"**Prompt:** {html.escape(battle.text)}"


def show_next(ctx: AppContext, sitting: FourImageSitting | None, session, request: gr.Request | None = None) -> list:
    """A new set of four from the server (:data:`SHOWN`); told on the status line when none can be drawn or the page
    is not signed in. Leaving a set without a vote is a skip, limited as the arena's skips are; Next after a vote that
    brought no set is not."""
    try:
        if session is not None and session.signed_in and (sitting is None or sitting.receipt is None):
            ctx.skip_limit.check(session.annotator.name)
            ctx.client_skip_limit.check(client_address(request))
        sitting = next_four(ctx.store.db(), ctx.rng, session, sitting, suites=ctx.settings.four_image_suite_names,
                            strategy=ctx.settings.four_image_strategy, stats=ctx.kwise_stats)
    except (KwiseRejected, NoFourImageBattle, RateLimited) as error:
        refusal(error, "four_next", request)
        return [gr.skip(), status_text(ctx, session, str(error)), *[gr.skip()] * (len(SHOWN) - 2)]
    except database_errors() as error:
        return [gr.skip(), status_text(ctx, session, unwritable(error, "four_next", request)),
                *[gr.skip()] * (len(SHOWN) - 2)]
    assert sitting.battle is not None  # next_four hands out a sitting with its battle
    return [sitting, status_text(ctx, session), _prompt(sitting.battle), grid_html(sitting), reveal_html(sitting),
            sitting.battle.media_token, None]


def opened(ctx: AppContext, sitting: FourImageSitting | None, session, request: gr.Request | None = None) -> list:
    """The tab picked: the page stays as it is while its set waits for a vote, or the set that came with the vote
    waits for Next; else a new set."""
    if sitting is not None and sitting.battle is not None and sitting.receipt is None:
        return [gr.skip()] * len(SHOWN)
    return show_next(ctx, sitting, session, request)


def read_pick(pick) -> tuple[int, int | None]:
    """(best, worst or None) from the page's pick "best:worst" ("3:1", "3:"); (0, None) where it is not one."""
    best, _, worst = str(pick or "").partition(":")
    try:
        return int(best), int(worst) if worst else None
    except ValueError:
        return 0, None


def cast_four(ctx: AppContext, sitting: FourImageSitting | None, session, shown: str, pick: str,
              request: gr.Request | None = None) -> list:
    """Record the pick on the set on screen, reveal the names and send the next set along (:data:`VOTED`), which
    becomes the sitting's set on screen (the page shows it when the voter presses Next)."""
    (token, seconds), (best, worst) = read_on_screen(shown), read_pick(pick)
    settings = ctx.settings
    try:
        if session is not None and session.signed_in:
            ctx.annotator_limit.check(session.annotator.name)
        ctx.client_limit.check(client_address(request))
        sitting = vote_four(ctx.store.db(), session, sitting, best=best, worst=worst, on_screen=token,
                            seconds_on_screen=seconds, rules=settings.quality_rules, rng=ctx.rng,
                            suites=settings.four_image_suite_names, strategy=settings.four_image_strategy,
                            stats=ctx.kwise_stats)
    except (KwiseRejected, RateLimited) as error:
        refusal(error, "four_vote", request)
        return [gr.skip(), status_text(ctx, session, str(error)), *[gr.skip()] * (len(VOTED) - 2)]
    except database_errors() as error:
        return [gr.skip(), status_text(ctx, session, unwritable(error, "four_vote", request)),
                *[gr.skip()] * (len(VOTED) - 2)]
    view = [status_text(ctx, session), grid_html(sitting), reveal_html(sitting), upcoming_view(sitting.upcoming)]
    if sitting.upcoming is not None:  # handed to the page now: seconds_to_vote counts from here (or from Next)
        sitting = show_upcoming(sitting)
    return [sitting, *view]


def build_four_image_tab(ctx: AppContext, tab: gr.Tab, arena_state: gr.State) -> None:
    """Lay out the Four images tab and wire its events (the arena's signed-in session is ``arena_state``)."""
    with gr.Column(elem_id="four-box"):
        gr.Markdown(INSTRUCTIONS, elem_id="four-instructions")
        view = dict(state=gr.State(None), status=gr.Markdown(elem_id="four-status", min_height=0),
                    prompt=gr.Markdown(elem_id="four-prompt"), grid=gr.HTML(elem_id="four-grid", container=False),
                    reveal=gr.HTML(elem_id="four-reveal", container=False),
                    on_screen=gr.Textbox(visible=False, elem_id="four-on-screen"),
                    pick=gr.Textbox(visible=False, elem_id="four-pick"),
                    upcoming=gr.JSON(visible=False, elem_id="four-upcoming"))  # the next set, sent with the vote
        # CSS shows one of the two: Next after a vote (in the browser), Next before it (a skip, from the server)
        with gr.Row(elem_id="four-bar"):
            next_button = gr.Button("Next", variant="primary", elem_id="four-next", min_width=80)
            load_button = gr.Button("Next", variant="primary", elem_id="four-load", min_width=80)
        submit = gr.Button("Vote", elem_id="four-submit", elem_classes=["arena-hidden"])
    fast: dict[str, Any] = dict(queue=False, preprocess=False, postprocess=False)
    shown, swapped = [view[name] for name in SHOWN], [view[name] for name in SWAPPED]
    tab.select(bind(ctx, opened), [view["state"], arena_state], shown, api_visibility="private", **fast)
    load_button.click(bind(ctx, show_next, name="four_next"), [view["state"], arena_state], shown,
                      api_name="four_next", **fast)
    next_button.click(None, swapped, swapped, js=NEXT_JS)
    submit.click(bind(ctx, cast_four, name="four_vote"),
                 [view["state"], arena_state, view["on_screen"], view["pick"]], [view[name] for name in VOTED],
                 api_name="four_vote", js=SUBMIT_JS, **fast)
