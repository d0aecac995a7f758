"""The arena tab: sign in, see a prompt and two anonymous images, vote, see the names, go on.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call, and string
annotations would be evaluated anew each time.
"""


import gradio as gr

from arena import session as sessions
from arena.annotators import SignInError
from arena.battles import NoBattleAvailable
from arena.votes import OUTCOME_LABELS, VoteRejected
from arena.web.context import AppContext
from arena.web.render import image_html, prompt_markdown, reveal_html, status_markdown

ALL_SUITES = "All suites"
BUTTON_IDS = {"A": "vote-a", "B": "vote-b", "tie": "vote-tie", "both_bad": "vote-both-bad"}
BUTTON_KEYS = {"A": "A", "B": "B", "tie": "T", "both_bad": "X"}

KEYBOARD_JS = """
<script>
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.isContentEditable)) return;
  const ids = {a: 'vote-a', b: 'vote-b', t: 'vote-tie', x: 'vote-both-bad', n: 'next-battle',
               '1': 'vote-a', '2': 'vote-b', '3': 'vote-tie', '4': 'vote-both-bad'};
  const id = ids[event.key.toLowerCase()];
  const button = id && document.getElementById(id);
  const voted = document.querySelector('#reveal .voted') !== null;
  if (id && id.startsWith('vote-') && voted) return;
  if (button && !button.disabled && button.offsetParent !== null) { event.preventDefault(); button.click(); }
});
</script>
"""


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
        next_button = gr.Button("Next battle (N) — skips a battle you have not voted on", elem_id="next-battle")

    # Every battle event answers with plain values, never component updates: Gradio rebuilds a component for each
    # update, which cost more than the whole vote under load. Whether the shown battle is voted on travels in the
    # reveal's HTML (class "voted"); CSS greys the vote buttons then, and the server refuses a second vote anyway.
    battle_outputs = [state, status, prompt, image_a, image_b, reveal]

    def show(session: sessions.ArenaSession, expected: bool, message: str = "") -> list:
        expected = expected is True  # the raw checkbox value (see chosen_suite)
        voted = session.receipt is not None
        battle = session.battle
        body = prompt_markdown(battle, show_expected=expected) if battle else message or "No battle available."
        token = battle.media_token if battle else None
        labels = (f"A: {session.receipt.model_a}", f"B: {session.receipt.model_b}") if voted else ("A", "B")
        return [
            session,
            status_markdown(session.annotator.name, session.votes),
            body,
            image_html(token, "a", labels[0]),
            image_html(token, "b", labels[1]),
            reveal_html(session.receipt),
        ]

    def chosen_suite(suite) -> str | None:
        """The suite filter's value as the sessions take it (None: all suites), refused unless it is one of the
        menu's choices. The battle events skip Gradio's preprocessing, which would otherwise check this."""
        if suite is None or suite == ALL_SUITES:
            return None
        if not isinstance(suite, str) or suite not in ctx.pool.suites(ctx.store.db()):
            raise gr.Error(f"Unknown suite {str(suite)[:60]!r}: pick one from the Suite menu.")
        return suite

    def load_next(session: sessions.ArenaSession | None, suite: str, expected: bool) -> list:
        if session is None:
            raise gr.Error("Sign in with your name and token first.")
        suite = chosen_suite(suite)
        try:
            session = sessions.next_battle(ctx.store.db(), ctx.rng, session, suite=suite, sampler=ctx.sampler)
        except NoBattleAvailable as error:
            return show(sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id,
                                              votes=session.votes), expected, str(error))
        except VoteRejected as error:
            raise gr.Error(str(error))
        return show(session, expected)

    def sign_in(name: str, token: str, session: sessions.ArenaSession | None, suite: str, expected: bool) -> list:
        try:
            session = sessions.start(ctx.store.db(), name, token, open_signup=open_signup)
        except SignInError as error:
            raise gr.Error(str(error))
        suites = [ALL_SUITES, *ctx.pool.suites(ctx.store.db())]
        return [gr.update(visible=False), gr.update(visible=True), gr.update(choices=suites, value=ALL_SUITES),
                *load_next(session, ALL_SUITES, expected)]

    def cast_vote(outcome: str, session: sessions.ArenaSession | None, suite: str, expected: bool,
                  request: gr.Request) -> list:
        if session is None:
            raise gr.Error("Sign in with your name and token first.")
        suite = chosen_suite(suite)
        try:
            ctx.annotator_limit.check(session.annotator.name)
            ctx.client_limit.check(request.client.host if request and request.client else "unknown")
            session = sessions.vote(ctx.store.db(), session, outcome, rules=settings.quality_rules, rng=ctx.rng,
                                    suite=suite, sampler=ctx.sampler)
        except VoteRejected as error:
            raise gr.Error(str(error))
        return show(session, expected)

    def toggle_expected(session: sessions.ArenaSession | None, expected: bool) -> str:
        if session is None or session.battle is None:
            return gr.skip()
        return prompt_markdown(session.battle, show_expected=expected)

    signin_inputs = [name_box, token_box, state, suite_filter, show_expected]
    signin_outputs = [signin_box, arena_box, suite_filter, *battle_outputs]
    gr.on([signin_button.click, token_box.submit], sign_in, signin_inputs, signin_outputs, api_name="sign_in",
          concurrency_limit=None)
    # Votes and battles skip Gradio's queue: each is one short database transaction answered in the same HTTP
    # request (POST /gradio_api/run/<api_name>), which under load costs a fraction of a queued event. They also skip
    # Gradio's per-component pre- and postprocessing: Gradio runs each of those in a worker thread (two inputs, five
    # outputs: seven thread hops per event besides the handler's own), which under load cost more than the handler;
    # these components need none (the handlers check the raw inputs and return finished strings).
    fast = dict(queue=False, preprocess=False, postprocess=False)
    gr.on([next_button.click, suite_filter.input], load_next, [state, suite_filter, show_expected], battle_outputs,
          api_name="next_battle", **fast)
    def vote_handler(outcome: str):
        def handler(session: sessions.ArenaSession | None, suite: str, expected: bool, request: gr.Request) -> list:
            return cast_vote(outcome, session, suite, expected, request)

        handler.__name__ = f"vote_{outcome.lower()}"
        return handler

    for outcome, button in vote_buttons.items():
        button.click(vote_handler(outcome), [state, suite_filter, show_expected], battle_outputs,
                     api_name=f"vote_{outcome.lower()}", **fast)
    show_expected.change(toggle_expected, [state, show_expected], prompt, api_visibility="private")
    return state
