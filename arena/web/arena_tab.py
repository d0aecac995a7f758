"""The arena tab: sign in, see a prompt and two anonymous images, vote, see the names, go on.

One request per vote: the vote's answer reveals the names and carries the next battle (drawn in the vote's own
transaction, :func:`arena.session.vote`), which the page keeps hidden, its images preloaded, until the voter presses
Next battle; that swap happens in the browser, with no request. Skipping a battle without a vote, or picking another
suite, loads one from the server. Every vote names the battle on screen by its media token, so a vote can only land on
the battle the voter sees.

The handlers are functions of this module that take the app's context first (:func:`arena.web.context.bind` hands it
to them); :func:`build_arena_tab` only lays the tab out (the shared sign-in form, :func:`arena_box`) and wires its
events (:func:`wire_arena_tab`). Its script and stylesheet are ``static/arena.html`` and ``static/arena.css``.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call, and string
annotations would be evaluated anew each time.
"""


from dataclasses import dataclass, replace

import gradio as gr

from arena import session as sessions
from arena.ratelimit import RateLimited, client_address
from arena.web.context import AppContext, bind, refusal, throttled_sign_in, unwritable
from arena.web.render import (
    KEY_HINTS,
    escape_markdown,
    expected_outcome,
    guidelines_markdown,
    image_html,
    prompt_markdown,
    reveal_html,
    speed_notice,
    status_markdown,
)
from arena.web.sign_in import SignInForm, sign_in_form, wire_sign_in
from datamodel.annotators import SignInError, first_guidelines_visit
from datamodel.connection import database_errors
from datamodel.models import model_details
from datamodel.standing import standing
from datamodel.votes import OUTCOME_LABELS, VoteRejected
from sampling.draws import NoBattleAvailable
from suites.registry import suite_title

ALL_SUITES = "All suites"
# A reveal names the models with their details as of a catalog change counter read at most this long ago (by a draw,
# or else by the reveal): an admin's new description shows within a second.
DETAILS_MAX_AGE_S = 1.0
EXPECTED_LABEL = "Expected outcome after the vote"
BUTTON_IDS = {"A": "vote-a", "B": "vote-b", "tie": "vote-tie", "both_bad": "vote-both-bad"}
BUTTON_KEYS = {"A": "A", "B": "B", "tie": "T", "both_bad": "X"}

# What a newcomer reads before signing in: the task, and what the token is.
HOW_IT_WORKS = (
    "**How it works.** You see a prompt and two images that two different models made from it, without their names. "
    "Pick the image that shows the prompt better (or *Tie*, or *Both are bad*); the models' names appear after your "
    "vote, and the votes make the leaderboard."
)
SIGN_UP = ("**Sign in** with a name and a token of your choice. The token is a password you make up now (at least "
           "{min} characters) and type again with the same name next time: it keeps your votes yours.")
SIGN_IN = "**Sign in** with the name and token your admin gave you."

NO_BATTLE_LEFT = "No battle left to show here. Pick another suite, or come back when there are new images."

# Before a vote is sent, the browser adds how long the battle on screen has been shown; Next battle swaps in the battle
# that came with the vote, in the browser (static/arena.html: window.arenaEvents).
VOTE_JS = "(...inputs) => window.arenaEvents.beforeVote(...inputs)"
NEXT_JS = "(...inputs) => window.arenaEvents.nextBattle(...inputs)"

# What the handlers answer, in this order (the events' outputs: wire_arena_tab)
BATTLE_VIEW = ("state", "status", "prompt", "image_a", "image_b", "reveal", "on_screen", "upcoming")
VOTE_VIEW = ("state", "status", "image_a", "image_b", "reveal", "upcoming")
SIGNED_IN = ("signin_message", "signin_box", "arena_box", "suite_filter", "guidelines_box", "guidelines")
SIGN_IN_VIEW = (*SIGNED_IN, *BATTLE_VIEW, "issued")  # the token that keeps the browser signed in last


@dataclass(frozen=True)
class ArenaTab:
    """What the rest of the page wires to the arena tab: the signed-in session, and the hidden button that the
    reveal's "See your own leaderboard" clicks."""

    state: gr.State
    your_board: gr.Button


# --- the handlers: each takes the app's context first (arena.web.context.bind hands it over) -------------------------


def read_on_screen(value) -> tuple:
    """(media token, seconds shown) from the page's on-screen value "token" or "token@seconds"; None where absent."""
    if not isinstance(value, str) or not value:
        return None, None
    token, _, seconds = value.partition("@")
    try:
        shown = float(seconds) if seconds else None
    except ValueError:
        shown = None
    return token or None, shown if shown is not None and 0 <= shown < 366 * 86400 else None


def upcoming_view(battle) -> dict:
    """The next battle as the page keeps it until Next battle: its prompt (never with the expected outcome: it is not
    voted on yet) and images, by media token."""
    if battle is None:
        return {"token": "", "prompt": NO_BATTLE_LEFT,
                "image_a": image_html(None, "a", "A"), "image_b": image_html(None, "b", "B")}
    return {"token": battle.media_token, "prompt": prompt_markdown(battle),
            "image_a": image_html(battle.media_token, "a", "A"), "image_b": image_html(battle.media_token, "b", "B")}


def status_line(ctx: AppContext, session: sessions.ArenaSession, suite: str | None, notice: str = "",
                error: str = "", standing_now=None) -> str:
    """The status line for ``session``: its annotator's votes cast and counted, the warnings of the quality rules,
    and progress in ``suite`` (the chosen one; None: all suites)."""
    db, rules = ctx.store.db(), ctx.settings.quality_rules
    title = suite_title(suite) if suite is not None else "all suites"
    annotator = sessions.signed_in_annotator(session)
    progress = (*sessions.progress(db, annotator.id, suite), title)
    standing_now = standing_now or standing(db, annotator.id, rules)
    return status_markdown(annotator.name, standing_now, notice, progress=progress, error=error,
                           rules=rules, trusted=annotator.source in rules.trusted_sources)


def told(ctx: AppContext, session: sessions.ArenaSession, line: str, outputs: int, suite: str | None = None) -> list:
    """A refused or unsaved vote or battle, told in words (``line``) on the status line; everything else stays as it
    is, the session state included: a request refused because another of the same tab ran at the same time (a
    double click) must not write back the state it started from over the one the other request left."""
    return [gr.skip(), status_line(ctx, session, suite, error=line), *[gr.skip()] * (outputs - 2)]


def refused(ctx: AppContext, session: sessions.ArenaSession, error: Exception, event: str, request, outputs: int,
            suite: str | None = None) -> list:
    """A refused vote or battle (:func:`told`), with its log line."""
    refusal(error, event, request)
    return told(ctx, session, str(error), outputs, suite)


def unsaved(ctx: AppContext, session: sessions.ArenaSession, error: BaseException, event: str, request, outputs: int,
            suite: str | None = None) -> list:
    """A vote or battle the database did not write (a full disk, a read-only database), told like a refusal."""
    return told(ctx, session, unwritable(error, event, request), outputs, suite)


def battle_shown(ctx: AppContext, session: sessions.ArenaSession, message: str = "", suite: str | None = None) -> list:
    """A battle loaded from the server (sign-in, skip, suite, reload), unvoted, so without its expected outcome;
    nothing waits behind it."""
    battle = session.battle
    body = prompt_markdown(battle) if battle else message or "No battle available."
    token = battle.media_token if battle else None
    return [session, status_line(ctx, session, suite), body, image_html(token, "a", "A"),
            image_html(token, "b", "B"), reveal_html(None), token or "", None]


def chosen_suite(ctx: AppContext, suite, request: gr.Request | None = None) -> str | None:
    """The suite filter's value as the sessions take it (None: all suites), refused unless it is one of the menu's
    choices. The battle events skip Gradio's preprocessing, which would otherwise check this."""
    if suite is None or suite == ALL_SUITES:
        return None
    if not isinstance(suite, str) or suite not in ctx.pool.suites(ctx.store.db()):
        raise refusal(f"Unknown suite {str(suite)[:60]!r}: pick one from the Suite menu.", "suite", request)
    return suite


def load_next(ctx: AppContext, session: sessions.ArenaSession | None, suite: str | None, expected: bool,
              request: gr.Request | None = None) -> list:
    """Skip, or another suite picked: a new battle from the server (:data:`BATTLE_VIEW`)."""
    if session is None:
        raise refusal("Sign in with your name and token first.", "next_battle", request)
    suite, outputs = chosen_suite(ctx, suite, request), len(BATTLE_VIEW)
    try:  # each battle loaded without a vote writes a battle row: limited per annotator and per address
        ctx.skip_limit.check(sessions.signed_in_annotator(session).name)
        ctx.client_skip_limit.check(client_address(request))
        session = sessions.next_battle(ctx.store.db(), ctx.rng, session, suite=suite, sampler=ctx.sampler)
    except NoBattleAvailable as error:
        return battle_shown(ctx, sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id,
                                                       votes=session.votes, signed_in_at=session.signed_in_at),
                            str(error), suite)
    except VoteRejected as error:  # a rate limit among them
        return refused(ctx, session, error, "next_battle", request, outputs, suite)
    except database_errors() as error:
        return unsaved(ctx, session, error, "next_battle", request, outputs, suite)
    return battle_shown(ctx, session, suite=suite)


def sign_in(ctx: AppContext, name: str, token: str, session: sessions.ArenaSession | None, suite: str,
            expected: bool, request: gr.Request | None = None) -> list:
    """Sign in and show a battle (:data:`SIGN_IN_VIEW`); a refusal is said under the form, which keeps what was
    typed."""
    settings = ctx.settings
    try:  # failures are throttled per address and overall (arena.ratelimit.LoginThrottle)
        session = throttled_sign_in(ctx, request, name, lambda: sessions.start(
            ctx.store.db(), name, token, open_signup=not settings.annotator_accounts,
            min_token_length=settings.min_token_length))
        session = sessions.issue_resume(ctx.store.db(), session, days=settings.session_days)
    except (RateLimited, SignInError) as error:
        refusal(error, "sign_in", request, warn=isinstance(error, SignInError))
        return [f"**⚠ {escape_markdown(str(error))}**", *[gr.skip()] * (len(SIGN_IN_VIEW) - 1)]
    except database_errors() as error:
        return [f"**⚠ {escape_markdown(unwritable(error, 'sign_in', request))}**",
                *[gr.skip()] * (len(SIGN_IN_VIEW) - 1)]
    return [*opened(ctx, session), *load_next(ctx, session, ALL_SUITES, expected, request),
            session.resume_token or ""]


def opened(ctx: AppContext, session: sessions.ArenaSession, suite: str | None = None) -> list:
    """The page once signed in (:data:`SIGNED_IN`): the form hidden, the arena shown, the suites named by their titles
    (as the prompt panel names them), ``suite`` picked (None: all suites), the guidelines open on the annotator's
    first visit only (a reload or a new sign-in finds them folded, a click on their header opens them)."""
    names = ctx.pool.suites(ctx.store.db())
    suites = [ALL_SUITES, *((suite_title(name), name) for name in names)]
    return ["", gr.update(visible=False), gr.update(visible=True),
            gr.update(choices=suites, value=suite or ALL_SUITES),
            gr.update(open=first_guidelines_visit(ctx.store.db(), sessions.signed_in_annotator(session).id)),
            guidelines_markdown(names, ctx.guidelines)]


def resume(ctx: AppContext, token: str, kept_suite: str = "", kept_shown: str = "",
           request: gr.Request | None = None) -> list:
    """A page (re)loaded with a stored token: signed in again, in the suite it had picked (``kept_suite``, its
    title), on the battle it showed (``kept_shown``, its media token) with its reveal when this session voted on it,
    else on the session's battle not yet voted on (or a new one)."""
    db = ctx.store.db()
    session = sessions.resume(db, token, open_signup=not ctx.settings.annotator_accounts) if token else None
    if session is None:
        return [gr.skip()] * len(SIGN_IN_VIEW)
    names = {suite_title(name): name for name in ctx.pool.suites(db)}
    suite = names.get(kept_suite) if isinstance(kept_suite, str) else None
    back = sessions.revealed_vote(db, session, kept_shown)
    if back is not None:  # the reveal of the battle voted on; the battle drawn with the vote waits for Next
        voted, receipt = back
        session = replace(session, revealed=voted)
        return [*opened(ctx, session, suite), session, status_line(ctx, session, suite), prompt_markdown(voted),
                *revealed_view(ctx, receipt, voted, session.battle), voted.media_token,
                upcoming_view(session.battle), gr.skip()]
    if session.battle is None:
        return [*opened(ctx, session, suite), *load_next(ctx, session, suite or ALL_SUITES, False, request),
                gr.skip()]
    return [*opened(ctx, session, suite), *battle_shown(ctx, session, suite=suite), gr.skip()]


def revealed_view(ctx: AppContext, receipt, battle, following, offer: int = 0, expected: bool = False) -> list:
    """[image A, image B, reveal] of ``battle`` once voted on (``receipt``): each model's name, description and link,
    the next battle's images (``following``) preloaded, the voter's own leaderboard offered after ``offer`` votes,
    the expected outcome when the voter asked for it. The models' details are kept until the catalog changes, as the
    last draw saw it (:data:`DETAILS_MAX_AGE_S`)."""
    db, names = ctx.store.db(), (receipt.model_a, receipt.model_b)
    details = ctx.pool.catalog_cached(db, ("model details", *names), lambda: model_details(db, list(names)),
                                      max_age_s=DETAILS_MAX_AGE_S)
    return [image_html(battle.media_token, "a", f"A: {receipt.model_a}", details.get(receipt.model_a)),
            image_html(battle.media_token, "b", f"B: {receipt.model_b}", details.get(receipt.model_b)),
            reveal_html(receipt, following.media_token if following else None, offer_board=offer,
                        details=details, expected=expected_outcome(battle) if expected else "")]


def sign_out(ctx: AppContext, session: sessions.ArenaSession | None) -> list:
    """Sign out everywhere: every stored token of the annotator is revoked (this page forgets its own), every other
    tab of theirs stops at its next request, and the form comes back."""
    if session is not None:
        sessions.sign_out(ctx.store.db(), session)
    return [gr.update(visible=True), gr.update(visible=False), None]


def cast_vote(ctx: AppContext, session: sessions.ArenaSession | None, suite: str | None, expected: bool,
              shown: str | None = None, request: gr.Request | None = None, *, outcome: str) -> list:
    """Record the vote for ``outcome``, reveal the names (and what each model is) on the voted images, say whether the
    vote counts, send the next battle along, and make it the session's current battle (the page shows it when the
    voter presses Next battle): :data:`VOTE_VIEW`."""
    if session is None:
        raise refusal("Sign in with your name and token first.", "vote", request)
    suite, (token, seconds) = chosen_suite(ctx, suite, request), read_on_screen(shown)
    rules = ctx.settings.quality_rules
    try:
        ctx.annotator_limit.check(sessions.signed_in_annotator(session).name)
        ctx.client_limit.check(client_address(request))
        voted = sessions.vote(ctx.store.db(), session, outcome, rules=rules, rng=ctx.rng,
                              suite=suite, sampler=ctx.sampler, on_screen=token, seconds_on_screen=seconds,
                              expected_shown=False)  # the page shows it only after the vote
    except VoteRejected as error:  # told on the status line; the battle stays on screen
        return refused(ctx, session, error, "vote", request, len(VOTE_VIEW), suite)
    except database_errors() as error:
        return unsaved(ctx, session, error, "vote", request, len(VOTE_VIEW), suite)
    return vote_view(ctx, voted, suite, expected is True)


def vote_view(ctx: AppContext, voted: sessions.ArenaSession, suite: str | None, expected: bool) -> list:
    """The answer to a vote (:data:`VOTE_VIEW`): the status with the speed notice, the reveal (the voter's own
    leaderboard offered every ``ARENA_PERSONAL_BOARD_VOTES`` votes) and the next battle, handed to the page now."""
    rules, every = ctx.settings.quality_rules, ctx.settings.personal_board_votes
    now = standing(ctx.store.db(), sessions.signed_in_annotator(voted).id, rules)
    notice = speed_notice(voted.fast_run, rules, sessions.signed_in_annotator(voted).source)
    offer = now.cast if every and now.cast >= every and now.cast % every == 0 else 0
    view = [status_line(ctx, voted, suite, notice, standing_now=now),
            *revealed_view(ctx, voted.receipt, voted.battle, voted.upcoming, offer, expected),
            upcoming_view(voted.upcoming)]
    if voted.upcoming is not None:  # handed to the page now: seconds_to_vote counts from here (or from Next battle)
        voted = sessions.show_upcoming(voted)
    return [voted, *view]


def toggle_expected(ctx: AppContext, session: sessions.ArenaSession | None, expected: bool, shown: str) -> str:
    """The prompt of the battle on screen with or without its expected outcome, once the voter has voted on it (the
    battle just voted on); a battle not yet voted on keeps it hidden."""
    token = read_on_screen(shown)[0]
    if session is None or token is None:
        return gr.skip()
    voted = [session.revealed, session.battle if session.receipt is not None else None]
    for battle in voted:
        if battle is not None and token == battle.media_token:
            return prompt_markdown(battle, show_expected=expected is True)
    return gr.skip()


# --- the layout and the wiring ---------------------------------------------------------------------------------------


def build_arena_tab(ctx: AppContext) -> ArenaTab:
    """Lay out the arena tab and wire its events to the handlers above."""
    ctx.guidelines  # noqa: B018 - read at start: a malformed guidelines file stops the server, not a sign-in
    open_signup = not ctx.settings.annotator_accounts
    form = sign_in_form(HOW_IT_WORKS + "\n\n" + (SIGN_UP.format(min=ctx.settings.min_token_length) if open_signup
                                                 else SIGN_IN))
    view = arena_box(ctx)
    view.update(signin_message=form.message, signin_box=form.box, state=gr.State(None))  # an ArenaSession, held
    view["issued"] = gr.Textbox(visible=False)  # the token that keeps this browser signed in (sessions.issue_resume)
    # never change: the inputs of the page-load event, read from local storage (the token, the suite's title and the
    # media token of the battle on screen before the reload)
    stored = [gr.Textbox(visible=False) for _ in range(3)]
    wire_arena_tab(ctx, form, view, stored)
    return ArenaTab(view["state"], view["your_board"])


def arena_box(ctx: AppContext) -> dict:
    """Lay out the signed-in arena (hidden until signed in); its components by name."""
    with gr.Column(visible=False, elem_id="arena-box") as box:
        # one compact row: who, their votes and warnings; the suite menu, the expected outcome, sign out
        with gr.Row(elem_id="arena-top"):
            status = gr.Markdown(elem_id="status", min_height=0)
            # on a phone the three controls are folded behind this toggle (static/arena.html opens and closes them)
            gr.HTML('<button class="arena-menu-toggle" type="button" aria-expanded="false">Suite ▾</button>',
                    elem_id="arena-menu", container=False, min_height=0)
            suite_filter = gr.Dropdown([ALL_SUITES], value=ALL_SUITES, label="Suite", show_label=False,
                                       container=False, elem_id="suite-filter", scale=0, min_width=190)
            # the benchmark's answer, shown once the voter has voted (in the reveal; ticked then, in the prompt)
            show_expected = gr.Checkbox(label=EXPECTED_LABEL, value=False, elem_id="show-expected", scale=0,
                                        container=False, min_width=150)
            sign_out_button = gr.Button("Sign out", size="sm", elem_id="sign-out", scale=0, min_width=80)
        prompt = gr.Markdown(elem_id="prompt")
        with gr.Row(equal_height=True, elem_id="battle-images"):
            image_a = gr.HTML(elem_id="image-a", container=False)
            image_b = gr.HTML(elem_id="image-b", container=False)
        reveal = gr.HTML(elem_id="reveal", container=False)  # the names, in place under the images
        # The vote bar (fixed at the bottom of a phone's screen). CSS shows one of the last two: Next battle after a
        # vote (in the browser), Skip before it (from the server). The keys show on the buttons only where there is
        # a keyboard (CSS).
        with gr.Row(elem_id="vote-bar"):
            vote_buttons = {
                outcome: gr.Button(OUTCOME_LABELS[outcome], elem_id=BUTTON_IDS[outcome],
                                   variant="primary" if outcome in ("A", "B") else "secondary", min_width=80)
                for outcome in BUTTON_IDS
            }
            next_button = gr.Button("Next battle", variant="primary", elem_id="next-battle", min_width=80)
            skip_button = gr.Button("Skip", elem_id="skip-battle", min_width=80)
        open_box = None
        if ctx.open_prompts is not None:  # the annotator's own prompt, made live (arena.web.open_prompt)
            from arena.web.open_prompt import OpenPromptBox

            open_box = OpenPromptBox(ctx)
        # what the reveal's "See your own leaderboard" clicks (arena.web.app wires it to the Leaderboard tab)
        your_board = gr.Button("Your leaderboard", elem_id="open-your-board", elem_classes=["arena-hidden"])
        # What "better" means, per suite; open on the annotator's first visit, folded on every later one.
        with gr.Accordion("Guidelines", open=True, elem_id="guidelines") as guidelines_box:
            guidelines = gr.Markdown(elem_id="guidelines-text")
            gr.HTML(f'<p class="key-hint">{KEY_HINTS}</p>', elem_id="key-hints")
        on_screen = gr.Textbox(visible=False, elem_id="on-screen")  # the media token of the battle on screen
        upcoming = gr.JSON(visible=False, elem_id="upcoming")  # the next battle, sent with the vote (upcoming_view)
    return dict(arena_box=box, status=status, suite_filter=suite_filter, show_expected=show_expected,
                sign_out_button=sign_out_button, prompt=prompt, image_a=image_a, image_b=image_b, reveal=reveal,
                vote_buttons=vote_buttons, next_button=next_button, skip_button=skip_button, open_box=open_box,
                your_board=your_board, guidelines_box=guidelines_box, guidelines=guidelines, on_screen=on_screen,
                upcoming=upcoming)


def wire_arena_tab(ctx: AppContext, form: SignInForm, view: dict, stored: list) -> None:
    """Wire the arena tab's events (``view``: its components by name) to the handlers.

    Every battle event answers with plain values, never component updates: Gradio rebuilds a component for each
    update, which cost more than the whole vote under load. Whether the shown battle is voted on travels in the
    reveal's HTML (class "voted"); CSS greys the vote buttons then, and the server refuses a second vote anyway.
    Votes and battles skip Gradio's queue: each is one short database transaction answered in the same HTTP request
    (POST /gradio_api/run/predict), which under load costs a fraction of a queued event. They also skip Gradio's
    per-component pre- and postprocessing: Gradio runs each of those in a worker thread (a thread hop per input and
    output besides the handler's own), which under load cost more than the handler; these components need none (the
    handlers check the raw inputs and return finished values).
    """
    state, battle_view, vote_view_ = view["state"], [view[n] for n in BATTLE_VIEW], [view[n] for n in VOTE_VIEW]
    choice = [state, view["suite_filter"], view["show_expected"]]
    on_screen = [view["prompt"], view["image_a"], view["image_b"], view["reveal"], view["on_screen"], view["upcoming"]]
    if view["open_box"] is not None:
        view["open_box"].wire(state, on_screen)
    wire_sign_in(ctx, form, api_name="sign_in", sign_in=bind(ctx, sign_in), inputs=[form.name, form.token, *choice],
                 outputs=[view[n] for n in SIGN_IN_VIEW], issued=view["issued"], resume=bind(ctx, resume),
                 stored=stored, sign_out=bind(ctx, sign_out), sign_out_button=view["sign_out_button"], state=state,
                 tab_box=view["arena_box"])
    fast = dict(queue=False, preprocess=False, postprocess=False)
    # The suite menu's select event, not input: input fires twice for one pick (on the pick and on blur), and two
    # concurrent loads of one session leave it on one battle and the page on the other.
    gr.on([view["skip_button"].click, view["suite_filter"].select], bind(ctx, load_next), choice, battle_view,
          api_name="next_battle", **fast)
    view["next_button"].click(None, [view["upcoming"]], on_screen, js=NEXT_JS)
    for outcome, button in view["vote_buttons"].items():
        name = f"vote_{outcome.lower()}"
        button.click(bind(ctx, cast_vote, name=name, outcome=outcome), [*choice, view["on_screen"]], vote_view_,
                     api_name=name, js=VOTE_JS, **fast)
    view["show_expected"].change(bind(ctx, toggle_expected), [state, view["show_expected"], view["on_screen"]],
                                 view["prompt"], api_visibility="private")
