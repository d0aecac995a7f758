"""The arena tab: sign in, see a prompt and two anonymous images, vote, see the names, go on.

One request per vote: the vote's answer reveals the names and carries the next battle (drawn in the vote's own
transaction, :func:`arena.session.vote`), which the page keeps hidden, its images preloaded, until the voter presses
Next battle; that swap happens in the browser, with no request. Skipping a battle without a vote, or picking another
suite, loads one from the server. Every vote names the battle on screen by its media token, so a vote can only land on
the battle the voter sees.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call, and string
annotations would be evaluated anew each time.
"""


import gradio as gr

from arena import session as sessions
from datamodel.annotators import SignInError
from sampling.draws import NoBattleAvailable
from datamodel.votes import OUTCOME_LABELS, VoteRejected
from arena.ratelimit import RateLimited, client_address
from arena.web.context import AppContext, refusal
from arena.web.render import image_html, prompt_markdown, reveal_html, speed_notice, status_markdown

ALL_SUITES = "All suites"
BUTTON_IDS = {"A": "vote-a", "B": "vote-b", "tie": "vote-tie", "both_bad": "vote-both-bad"}
BUTTON_KEYS = {"A": "A", "B": "B", "tie": "T", "both_bad": "X"}

KEYBOARD_JS = """
<script>
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;  // a held key votes once
  if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable)) return;
  const ids = {a: ['vote-a'], b: ['vote-b'], t: ['vote-tie'], x: ['vote-both-bad'], n: ['next-battle', 'skip-battle'],
               '1': ['vote-a'], '2': ['vote-b'], '3': ['vote-tie'], '4': ['vote-both-bad']};
  const voted = document.querySelector('#reveal .voted') !== null;
  for (const id of ids[event.key.toLowerCase()] || []) {
    const button = document.getElementById(id);
    if (id.startsWith('vote-') && voted) return;
    if (button && !button.disabled && button.offsetParent !== null) { event.preventDefault(); button.click(); return; }
  }
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
    with gr.Column(visible=False) as arena_box:
        with gr.Row():
            status = gr.Markdown(elem_id="status")
            suite_filter = gr.Dropdown([ALL_SUITES], value=ALL_SUITES, label="Suite", elem_id="suite-filter", scale=0,
                                       min_width=220)
            show_expected = gr.Checkbox(label="Show expected outcome", value=False, elem_id="show-expected", scale=0)
        prompt = gr.Markdown(elem_id="prompt")
        with gr.Row(equal_height=True):
            image_a = gr.HTML(elem_id="image-a")
            image_b = gr.HTML(elem_id="image-b")
        with gr.Row():
            vote_buttons = {
                outcome: gr.Button(f"{OUTCOME_LABELS[outcome]} ({BUTTON_KEYS[outcome]})", elem_id=BUTTON_IDS[outcome],
                                   variant="primary" if outcome in ("A", "B") else "secondary")
                for outcome in BUTTON_IDS
            }
        reveal = gr.HTML(elem_id="reveal")
        # CSS shows one of the two: Next battle after a vote (in the browser), Skip before it (from the server).
        next_button = gr.Button("Next battle (N)", variant="primary", elem_id="next-battle")
        skip_button = gr.Button("Skip this battle (N): load another without voting", elem_id="skip-battle")
        on_screen = gr.Textbox(visible=False, elem_id="on-screen")  # the media token of the battle on screen
        upcoming = gr.JSON(visible=False, elem_id="upcoming")  # the next battle, sent with the vote (upcoming_view)

    # Every battle event answers with plain values, never component updates: Gradio rebuilds a component for each
    # update, which cost more than the whole vote under load. Whether the shown battle is voted on travels in the
    # reveal's HTML (class "voted"); CSS greys the vote buttons then, and the server refuses a second vote anyway.
    battle_outputs = [state, status, prompt, image_a, image_b, reveal, on_screen, upcoming]
    vote_outputs = [state, status, image_a, image_b, reveal, upcoming]

    def show(session: sessions.ArenaSession, expected: bool, message: str = "") -> list:
        """A battle loaded from the server (sign-in, skip, suite), unvoted; nothing waits behind it."""
        battle = session.battle
        body = prompt_markdown(battle, show_expected=expected is True) if battle else message or "No battle available."
        token = battle.media_token if battle else None
        return [session, status_markdown(session.annotator.name, session.votes), body, image_html(token, "a", "A"),
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
            raise refusal(error, "next_battle", request)
        try:
            session = sessions.next_battle(ctx.store.db(), ctx.rng, session, suite=suite, sampler=ctx.sampler)
        except NoBattleAvailable as error:
            return show(sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id,
                                              votes=session.votes), expected, str(error))
        except VoteRejected as error:
            raise refusal(error, "next_battle", request)
        return show(session, expected)

    def sign_in(name: str, token: str, session: sessions.ArenaSession | None, suite: str, expected: bool,
                request: gr.Request = None) -> list:
        try:  # failures are throttled per address and overall (arena.ratelimit.LoginThrottle)
            with ctx.sign_in_throttle.attempt(client_address(request)) as attempt:
                session = sessions.start(ctx.store.db(), name, token, open_signup=open_signup,
                                         min_token_length=settings.min_token_length)
                attempt.succeeded()
        except RateLimited as error:
            raise refusal(error, "sign_in", request)
        except SignInError as error:
            raise refusal(error, "sign_in", request, warn=True)
        suites = [ALL_SUITES, *ctx.pool.suites(ctx.store.db())]
        return [gr.update(visible=False), gr.update(visible=True), gr.update(choices=suites, value=ALL_SUITES),
                *load_next(session, ALL_SUITES, expected, request)]

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
                                  suite=suite, sampler=ctx.sampler, on_screen=token, seconds_on_screen=seconds)
        except VoteRejected as error:
            raise refusal(error, "vote", request)
        receipt, battle, following = voted.receipt, voted.battle, voted.upcoming
        notice = speed_notice(voted.fast_run, settings.quality_rules, voted.annotator.source)
        view = [status_markdown(voted.annotator.name, voted.votes, notice),
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
    signin_outputs = [signin_box, arena_box, suite_filter, *battle_outputs]
    gr.on([signin_button.click, token_box.submit], sign_in, signin_inputs, signin_outputs, api_name="sign_in",
          concurrency_limit=None)
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
    return state
