"""The arena tab: sign in, see a prompt and two anonymous images, vote, see the names, go on.

One request per vote: the vote's answer reveals the names and carries the next battle (drawn in the vote's own
transaction, :func:`arena.session.vote`), which the page keeps hidden, its images preloaded, until the voter presses
Next battle; that swap happens in the browser, with no request. Skipping a battle without a vote, or picking another
suite, loads one from the server. Every vote names the battle on screen by its media token, so a vote can only land on
the battle the voter sees.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call, and string
annotations would be evaluated anew each time.
"""


import sqlite3
from pathlib import Path

import gradio as gr

from arena import session as sessions
from datamodel.annotators import SignInError, first_guidelines_visit
from sampling.draws import NoBattleAvailable
from datamodel.votes import OUTCOME_LABELS, VoteRejected
from arena.ratelimit import RateLimited, client_address
from arena.web.context import AppContext, refusal, unwritable
from arena.web.render import (escape_markdown, guidelines_markdown, image_html, load_guidelines, prompt_markdown,
                              reveal_html, speed_notice, status_markdown)
from suites.registry import suite_title

ALL_SUITES = "All suites"
BUTTON_IDS = {"A": "vote-a", "B": "vote-b", "tie": "vote-tie", "both_bad": "vote-both-bad"}
BUTTON_KEYS = {"A": "A", "B": "B", "tie": "T", "both_bad": "X"}

KEYBOARD_JS = """
<script>
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;  // a held key votes once
  // typing in a text field is not a shortcut; a checkbox, a button or a link keeps no key (focus never traps them)
  const typing = target && ((target.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit'].includes(
    target.type)) || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || target.isContentEditable);
  if (typing) return;
  if (event.key === 'Escape') { document.querySelectorAll('.battle-image.enlarged').forEach(
    (figure) => figure.classList.remove('enlarged')); return; }
  const ids = {a: ['vote-a'], b: ['vote-b'], t: ['vote-tie'], x: ['vote-both-bad'], n: ['next-battle', 'skip-battle'],
               '1': ['vote-a'], '2': ['vote-b'], '3': ['vote-tie'], '4': ['vote-both-bad']};
  const voted = document.querySelector('#reveal .voted') !== null;
  for (const id of ids[event.key.toLowerCase()] || []) {
    const button = document.getElementById(id);
    if (id.startsWith('vote-') && (voted || !window.arenaImagesShown())) return;
    if (button && !button.disabled && button.offsetParent !== null) { event.preventDefault(); button.click(); return; }
  }
});
// Votes wait until both images of the battle on screen have loaded: until then the page carries the class
// "images-pending" (CSS greys the vote buttons and lets no click through; the keys above check the same).
window.arenaImagesShown = () => {
  const images = [...document.querySelectorAll('#image-a img, #image-b img')];
  return images.length === 2 && images.every((img) => img.complete && img.naturalWidth > 0);
};
const arenaMarkImages = () => document.documentElement.classList.toggle('images-pending', !window.arenaImagesShown());
const arenaImageEvent = () => { arenaMarkImages(); arenaFitImages(); };
document.addEventListener('load', arenaImageEvent, true);  // image loads do not bubble: listen while capturing
document.addEventListener('error', arenaImageEvent, true);
// On a phone the vote bar is fixed over the bottom of the screen: the page keeps room under the arena as tall as the
// bar (CSS reads --vote-bar-height), so the reveal's last line scrolls above it whatever the bar's rows take.
const arenaBarSize = new ResizeObserver((entries) => entries.forEach((entry) => document.documentElement.style
  .setProperty('--vote-bar-height', `${Math.ceil(entry.target.getBoundingClientRect().height)}px`)));
let arenaBar = null;
const arenaWatchBar = () => {
  const bar = document.getElementById('vote-bar');
  if (!bar || bar === arenaBar) return;
  if (arenaBar) arenaBarSize.unobserve(arenaBar);
  arenaBar = bar;
  arenaBarSize.observe(bar);
};
// On a wider screen the vote bar follows the images: when the status line (a warning, the end of a suite) and the
// prompt take more room than usual, the images shrink (to 160 px at least) so the buttons, the reveal and Next stay
// in the window; CSS reads --image-fit. A phone's bar is fixed to the screen instead.
const arenaFitImages = () => {
  const root = document.documentElement;
  const bar = document.getElementById('vote-bar');
  const image = document.querySelector('#image-a img');
  if (!bar || !image || window.innerWidth <= 640 || bar.offsetParent === null) {
    root.style.removeProperty('--image-fit');
    return;
  }
  const spare = window.innerHeight - 8 - (bar.getBoundingClientRect().bottom + window.scrollY);
  const fit = `${Math.max(160, Math.floor(image.getBoundingClientRect().height + spare))}px`;
  if (root.style.getPropertyValue('--image-fit') !== fit) root.style.setProperty('--image-fit', fit);
};
window.addEventListener('resize', arenaFitImages);
const arenaWatchImages = () => {
  new MutationObserver(() => { arenaMarkImages(); arenaWatchBar(); arenaFitImages(); }).observe(
    document.body, {childList: true, subtree: true});
  arenaMarkImages();
  arenaWatchBar();
  arenaFitImages();
};
// the page may add this script after the document has loaded
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', arenaWatchImages);
else arenaWatchImages();
// A click on a battle image enlarges it over the page; another click (or Escape) puts it back.
document.addEventListener('click', (event) => {
  const figure = event.target.closest && event.target.closest('.battle-image');
  if (figure && figure.querySelector('img')) figure.classList.toggle('enlarged');
});
</script>
"""

# Before a vote is sent: the on-screen token as "token@seconds shown" when the page swapped the battle in itself.
VOTE_JS = """
(state, suite, expected, onScreen) => {
  const [token, shownAt] = String(onScreen || '').split('@');
  return [state, suite, expected, shownAt ? `${token}@${(Date.now() - Number(shownAt)) / 1000}` : token];
}
"""

# Next battle, in the browser: show the battle that came with the vote (its images are already loaded).
NEXT_JS = """
(next, expected, ...current) => next ? [
  expected && next.prompt_expected ? next.prompt_expected : next.prompt, next.image_a, next.image_b,
  '<div class="reveal"></div>', next.token ? `${next.token}@${Date.now()}` : '', null] : current
"""

# Staying signed in: the token the sign-in answered is kept in the browser's local storage; a reload sends it back.
RESUME_KEY = "arena-session"
KEEP_RESUME_JS = f"(token) => {{ if (token) localStorage.setItem('{RESUME_KEY}', token); }}"
READ_RESUME_JS = f"() => [localStorage.getItem('{RESUME_KEY}') || '']"
FORGET_RESUME_JS = f"(...inputs) => {{ localStorage.removeItem('{RESUME_KEY}'); return inputs; }}"

NO_BATTLE_LEFT = "No battle left to show here. Pick another suite, or come back when there are new images."


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
    """The next battle as the page keeps it until Next battle: its prompt (both ways) and images, by media token."""
    if battle is None:
        return {"token": "", "prompt": NO_BATTLE_LEFT, "prompt_expected": None,
                "image_a": image_html(None, "a", "A"), "image_b": image_html(None, "b", "B")}
    return {"token": battle.media_token, "prompt": prompt_markdown(battle),
            "prompt_expected": prompt_markdown(battle, show_expected=True),
            "image_a": image_html(battle.media_token, "a", "A"), "image_b": image_html(battle.media_token, "b", "B")}


def build_arena_tab(ctx: AppContext) -> gr.State:
    settings = ctx.settings
    open_signup = not settings.annotator_accounts
    state = gr.State(None)  # an ArenaSession once signed in; held on the server

    with gr.Column(visible=True) as signin_box:
        gr.Markdown(
            "Sign in to vote. " + ("Pick a name and a token (a password you will reuse)." if open_signup
                                   else "Use the account your admin gave you.")
        )
        with gr.Row():
            name_box = gr.Textbox(label="Name", elem_id="signin-name", max_lines=1)
            token_box = gr.Textbox(label="Token", type="password", elem_id="signin-token", max_lines=1)
        signin_button = gr.Button("Sign in", variant="primary", elem_id="signin-button")
        signin_message = gr.Markdown(elem_id="signin-message")  # what went wrong; the form stays as typed
    with gr.Column(visible=False, elem_id="arena-box") as arena_box:
        with gr.Row():
            status = gr.Markdown(elem_id="status")
            suite_filter = gr.Dropdown([ALL_SUITES], value=ALL_SUITES, label="Suite", elem_id="suite-filter", scale=0,
                                       min_width=220)
            show_expected = gr.Checkbox(label="Show expected outcome", value=False, elem_id="show-expected", scale=0)
            sign_out_button = gr.Button("Sign out", size="sm", elem_id="sign-out", scale=0, min_width=90)
        prompt = gr.Markdown(elem_id="prompt")
        with gr.Row(equal_height=True, elem_id="battle-images"):
            image_a = gr.HTML(elem_id="image-a")
            image_b = gr.HTML(elem_id="image-b")
        reveal = gr.HTML(elem_id="reveal")  # the names, in place under the images
        # The vote bar (sticky at the bottom of a phone's screen, two rows of two). CSS shows one of the last two:
        # Next battle after a vote (in the browser), Skip before it (from the server).
        with gr.Row(elem_id="vote-bar"):
            vote_buttons = {
                outcome: gr.Button(f"{OUTCOME_LABELS[outcome]} ({BUTTON_KEYS[outcome]})", elem_id=BUTTON_IDS[outcome],
                                   variant="primary" if outcome in ("A", "B") else "secondary", min_width=80)
                for outcome in BUTTON_IDS
            }
            next_button = gr.Button("Next battle (N)", variant="primary", elem_id="next-battle", min_width=80)
            skip_button = gr.Button("Skip (N)", elem_id="skip-battle", min_width=80)
        # What "better" means, per suite; open on the annotator's first visit, folded on every later one.
        with gr.Accordion("Guidelines", open=True, elem_id="guidelines") as guidelines_box:
            guidelines = gr.Markdown(elem_id="guidelines-text")
        on_screen = gr.Textbox(visible=False, elem_id="on-screen")  # the media token of the battle on screen
        upcoming = gr.JSON(visible=False, elem_id="upcoming")  # the next battle, sent with the vote (upcoming_view)
    issued = gr.Textbox(visible=False)  # the token that keeps this browser signed in (sessions.issue_resume)
    stored = gr.Textbox(visible=False)  # never changes: the input of the page-load event, read from local storage

    # Every battle event answers with plain values, never component updates: Gradio rebuilds a component for each
    # update, which cost more than the whole vote under load. Whether the shown battle is voted on travels in the
    # reveal's HTML (class "voted"); CSS greys the vote buttons then, and the server refuses a second vote anyway.
    battle_outputs = [state, status, prompt, image_a, image_b, reveal, on_screen, upcoming]
    vote_outputs = [state, status, image_a, image_b, reveal, upcoming]

    guide = load_guidelines(Path(settings.guidelines_file) if settings.guidelines_file else None)  # read at start

    def status(session: sessions.ArenaSession, suite: str | None, notice: str = "", error: str = "") -> str:
        """The status line for ``session``: its annotator's votes and progress in ``suite`` (the battle's)."""
        progress = None
        if suite is not None:
            progress = (*sessions.progress(ctx.store.db(), session.annotator.id, suite), suite_title(suite))
        return status_markdown(session.annotator.name, session.votes, notice, progress=progress, error=error)

    def unsaved(session: sessions.ArenaSession, error: Exception, event: str, request, outputs: int) -> list:
        """A vote or battle the database could not write (a full disk, a read-only file), told like a refusal."""
        battle = session.battle or session.revealed
        line = status(session, battle.suite if battle else None, error=unwritable(error, event, request))
        return [gr.skip(), line, *[gr.skip()] * (outputs - 2)]

    def refused(session: sessions.ArenaSession, error: Exception, event: str, request, outputs: int) -> list:
        """A refused vote or battle, told in words on the status line; everything else stays as it is, the session
        state included: a request refused because another of the same tab ran at the same time (a double click)
        must not write back the state it started from over the one the other request left."""
        refusal(error, event, request)  # the log line
        battle = session.battle or session.revealed
        line = status(session, battle.suite if battle else None, error=str(error))
        return [gr.skip(), line, *[gr.skip()] * (outputs - 2)]

    def show(session: sessions.ArenaSession, expected: bool, message: str = "") -> list:
        """A battle loaded from the server (sign-in, skip, suite), unvoted; nothing waits behind it."""
        battle = session.battle
        body = prompt_markdown(battle, show_expected=expected is True) if battle else message or "No battle available."
        token = battle.media_token if battle else None
        return [session, status(session, battle.suite if battle else None), body, image_html(token, "a", "A"),
                image_html(token, "b", "B"), reveal_html(None), token or "", None]

    def chosen_suite(suite, request: gr.Request | None = None) -> str | None:
        """The suite filter's value as the sessions take it (None: all suites), refused unless it is one of the
        menu's choices. The battle events skip Gradio's preprocessing, which would otherwise check this."""
        if suite is None or suite == ALL_SUITES:
            return None
        if not isinstance(suite, str) or suite not in ctx.pool.suites(ctx.store.db()):
            raise refusal(f"Unknown suite {str(suite)[:60]!r}: pick one from the Suite menu.", "suite", request)
        return suite

    def load_next(session: sessions.ArenaSession | None, suite: str, expected: bool,
                  request: gr.Request = None) -> list:
        if session is None:
            raise refusal("Sign in with your name and token first.", "next_battle", request)
        suite = chosen_suite(suite, request)
        try:  # each battle loaded without a vote writes a battle row: limited per annotator and per address
            ctx.skip_limit.check(session.annotator.name)
            ctx.client_skip_limit.check(client_address(request))
        except RateLimited as error:
            return refused(session, error, "next_battle", request, len(battle_outputs))
        try:
            session = sessions.next_battle(ctx.store.db(), ctx.rng, session, suite=suite, sampler=ctx.sampler)
        except NoBattleAvailable as error:
            return show(sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id,
                                              votes=session.votes, signed_in_at=session.signed_in_at),
                        expected, str(error))
        except VoteRejected as error:
            return refused(session, error, "next_battle", request, len(battle_outputs))
        except sqlite3.OperationalError as error:
            return unsaved(session, error, "next_battle", request, len(battle_outputs))
        return show(session, expected)

    def sign_in(name: str, token: str, session: sessions.ArenaSession | None, suite: str, expected: bool,
                request: gr.Request = None) -> list:
        try:  # failures are throttled per address and overall (arena.ratelimit.LoginThrottle)
            with ctx.sign_in_throttle.attempt(client_address(request)) as attempt:
                try:
                    session = sessions.start(ctx.store.db(), name, token, open_signup=open_signup,
                                             min_token_length=settings.min_token_length)
                except SignInError as error:
                    if not error.guess:  # refused before any token was checked: not a guess
                        attempt.not_a_guess()
                    raise
                attempt.succeeded()
        except (RateLimited, SignInError) as error:  # said under the form, which keeps what was typed
            refusal(error, "sign_in", request, warn=isinstance(error, SignInError))
            return [f"**⚠ {escape_markdown(error)}**", *[gr.skip()] * (len(signin_outputs) - 1)]
        except sqlite3.OperationalError as error:
            return [f"**⚠ {escape_markdown(unwritable(error, 'sign_in', request))}**",
                    *[gr.skip()] * (len(signin_outputs) - 1)]
        session = sessions.issue_resume(ctx.store.db(), session, days=settings.session_days)
        return [*opened(session), *load_next(session, ALL_SUITES, expected, request), session.resume_token or ""]

    def opened(session: sessions.ArenaSession) -> list:
        """The page once signed in: the form hidden, the arena shown, the suites named by their titles (as the
        prompt panel names them), the guidelines open on the annotator's first visit only (a reload or a new sign-in
        finds them folded, a click on their header opens them)."""
        names = ctx.pool.suites(ctx.store.db())
        suites = [ALL_SUITES, *((suite_title(name), name) for name in names)]
        return ["", gr.update(visible=False), gr.update(visible=True), gr.update(choices=suites, value=ALL_SUITES),
                gr.update(open=first_guidelines_visit(ctx.store.db(), session.annotator.id)),
                guidelines_markdown(names, guide)]

    def resume(token: str, request: gr.Request = None) -> list:
        """A page (re)loaded with a stored token: signed in again, on the battle it showed (or a new one)."""
        session = sessions.resume(ctx.store.db(), token, open_signup=open_signup) if token else None
        if session is None:
            return [gr.skip()] * len(signin_outputs)
        if session.battle is None:
            return [*opened(session), *load_next(session, ALL_SUITES, False, request), gr.skip()]
        return [*opened(session), *show(session, False), gr.skip()]

    def sign_out(session: sessions.ArenaSession | None) -> list:
        """Sign out everywhere: every stored token of the annotator is revoked (this page forgets its own), every
        other tab of theirs stops at its next request, and the form comes back."""
        if session is not None:
            sessions.sign_out(ctx.store.db(), session)
        return [gr.update(visible=True), gr.update(visible=False), None]

    def cast_vote(outcome: str, session: sessions.ArenaSession | None, suite: str, expected: bool, shown: str,
                  request: gr.Request) -> list:
        """Record the vote, reveal the names on the voted images, send the next battle along, and make it the
        session's current battle (the page shows it when the voter presses Next battle)."""
        if session is None:
            raise refusal("Sign in with your name and token first.", "vote", request)
        suite = chosen_suite(suite, request)
        token, seconds = read_on_screen(shown)
        try:
            ctx.annotator_limit.check(session.annotator.name)
            ctx.client_limit.check(client_address(request))
            voted = sessions.vote(ctx.store.db(), session, outcome, rules=settings.quality_rules, rng=ctx.rng,
                                  suite=suite, sampler=ctx.sampler, on_screen=token, seconds_on_screen=seconds,
                                  expected_shown=expected is True)
        except VoteRejected as error:  # told on the status line; the battle stays on screen
            return refused(session, error, "vote", request, len(vote_outputs))
        except sqlite3.OperationalError as error:
            return unsaved(session, error, "vote", request, len(vote_outputs))
        receipt, battle, following = voted.receipt, voted.battle, voted.upcoming
        notice = speed_notice(voted.fast_run, settings.quality_rules, voted.annotator.source)
        view = [status(voted, battle.suite, notice),
                image_html(battle.media_token, "a", f"A: {receipt.model_a}"),
                image_html(battle.media_token, "b", f"B: {receipt.model_b}"),
                reveal_html(receipt, following.media_token if following else None), upcoming_view(following)]
        if following is not None:  # handed to the page now: seconds_to_vote counts from here (or from Next battle)
            voted = sessions.next_battle(ctx.store.db(), ctx.rng, voted, suite=suite, sampler=ctx.sampler)
        return [voted, *view]

    def toggle_expected(session: sessions.ArenaSession | None, expected: bool, shown: str) -> str:
        """The prompt of the battle on screen (the current one, or the one just voted on) with or without the
        expected outcome."""
        token = read_on_screen(shown)[0]
        for battle in (session.battle, session.revealed) if session is not None else ():
            if battle is not None and token in (None, battle.media_token):
                return prompt_markdown(battle, show_expected=expected is True)
        return gr.skip()

    signin_inputs = [name_box, token_box, state, suite_filter, show_expected]
    signin_outputs = [signin_message, signin_box, arena_box, suite_filter, guidelines_box, guidelines, *battle_outputs,
                      issued]
    gr.on([signin_button.click, token_box.submit], sign_in, signin_inputs, signin_outputs, api_name="sign_in",
          concurrency_limit=None).then(None, issued, None, js=KEEP_RESUME_JS)
    gr.on(None, resume, stored, signin_outputs, js=READ_RESUME_JS, api_visibility="private", concurrency_limit=None)
    sign_out_button.click(sign_out, state, [signin_box, arena_box, state], js=FORGET_RESUME_JS,
                          api_visibility="private")
    # Votes and battles skip Gradio's queue: each is one short database transaction answered in the same HTTP
    # request (POST /gradio_api/run/predict), which under load costs a fraction of a queued event. They also skip
    # Gradio's per-component pre- and postprocessing: Gradio runs each of those in a worker thread (a thread hop per
    # input and output besides the handler's own), which under load cost more than the handler; these components
    # need none (the handlers check the raw inputs and return finished values).
    fast = dict(queue=False, preprocess=False, postprocess=False)
    # The suite menu's select event, not input: input fires twice for one pick (on the pick and on blur), and two
    # concurrent loads of one session leave it on one battle and the page on the other.
    gr.on([skip_button.click, suite_filter.select], load_next, [state, suite_filter, show_expected], battle_outputs,
          api_name="next_battle", **fast)
    next_button.click(None, [upcoming, show_expected], [prompt, image_a, image_b, reveal, on_screen, upcoming],
                      js=NEXT_JS)

    def vote_handler(outcome: str):
        def handler(session: sessions.ArenaSession | None, suite: str, expected: bool, shown: str | None = None,
                    request: gr.Request = None) -> list:
            return cast_vote(outcome, session, suite, expected, shown, request)

        handler.__name__ = f"vote_{outcome.lower()}"
        return handler

    for outcome, button in vote_buttons.items():
        button.click(vote_handler(outcome), [state, suite_filter, show_expected, on_screen], vote_outputs,
                     api_name=f"vote_{outcome.lower()}", js=VOTE_JS, **fast)
    show_expected.change(toggle_expected, [state, show_expected, on_screen], prompt, api_visibility="private")
    # these refuse a page without a session at once: the front door refuses them before Gradio makes one
    ctx.session_events.update({"sign_out", "next_battle", "toggle_expected", *(f"vote_{o.lower()}" for o in BUTTON_IDS)})
    return state
