"""The arena tab's open-prompt box: the annotator types a prompt, presses Generate, waits (a progress indicator),
and gets a battle of two anonymous images made for it, voted on and revealed like any other
(:mod:`arena.open_prompts` does the work).

Both images reach the page in one answer, after both are made and rendered, so the page cannot show one before the
other. While the two are made the page marks itself ``open-generating``: the vote buttons and their keys rest (the
battle on screen could otherwise be voted on while the new one replaces it) and a counter says how long it has been.

The handler is :func:`send_prompt`, at module level; :class:`OpenPromptBox` lays out the box under the vote bar and
wires it (only when the arena serves open prompts). Its script and stylesheet are ``static/open_prompt.html`` and
``static/open_prompt.css``.
"""

from __future__ import annotations

import gradio as gr

from arena import session as sessions
from arena.open_prompts import GenerationFailed
from arena.ratelimit import RateLimited, client_address
from arena.web.context import AppContext, bind, refusal, unwritable
from arena.web.render import escape_markdown, image_html, prompt_markdown, reveal_html
from datamodel.connection import database_errors
from datamodel.open_prompts import PromptRefused
from datamodel.votes import VoteRejected

PROGRESS_HTML = ('<div class="open-progress" role="status" aria-live="polite"><span class="open-spinner"></span>'
                 '<span>Both models are drawing your prompt… <span id="open-seconds">0</span> s. The two images '
                 'appear together.</span></div>')

# Generate pressed: the page marks itself generating and counts the seconds, until the answer (stop); meanwhile the
# vote keys rest (static/open_prompt.html: window.arenaOpenPrompt)
START_JS = "(...inputs) => window.arenaOpenPrompt.start(...inputs)"
STOP_JS = "() => window.arenaOpenPrompt.stop()"


def _message(text: str) -> str:
    return f"**⚠ {escape_markdown(text)}**"


async def send_prompt(ctx: AppContext, session: sessions.ArenaSession | None, text: object,
                      request: gr.Request | None = None) -> list:
    """Generate a battle for the typed prompt: [state, prompt, image A, image B, reveal, on screen, upcoming,
    message]. A refusal (rate limit, moderation, a failed generation) changes nothing on screen but the message."""
    if session is None:
        raise refusal("Sign in with your name and token first.", "open_prompt", request)
    keep = [gr.skip()] * 7
    open_prompts = ctx.open_prompts
    try:
        open_prompts.annotator_limit.check(sessions.signed_in_annotator(session).name)
        open_prompts.client_limit.check(client_address(request))
        session = await open_prompts.battle(session, text)
    except (RateLimited, PromptRefused, GenerationFailed, VoteRejected) as error:
        refusal(error, "open_prompt", request)  # the log line
        return [*keep, _message(str(error))]
    except database_errors() as error:
        return [*keep, _message(unwritable(error, "open_prompt", request))]
    battle = session.battle
    assert battle is not None  # the open prompt's battle, on screen
    token = battle.media_token
    return [session, prompt_markdown(battle), image_html(token, "a", "A"), image_html(token, "b", "B"),
            reveal_html(None), token, None, ""]


class OpenPromptBox:
    """The open-prompt box, laid out where it is made (under the vote bar); :meth:`wire` connects it to the arena
    tab's battle view once that exists."""

    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        with gr.Column(elem_id="open-box"):
            gr.Markdown("**Or type your own prompt**: two anonymous models draw it live, then you vote as usual.",
                        elem_id="open-intro")
            with gr.Row(elem_id="open-row"):
                self.text = gr.Textbox(show_label=False, placeholder="A prompt in any language…", max_lines=3,
                                       lines=1, max_length=ctx.settings.open_prompt_max_chars, elem_id="open-prompt",
                                       container=False, scale=1)
                self.generate = gr.Button("Generate", variant="primary", elem_id="open-generate", scale=0)
            gr.HTML(PROGRESS_HTML, elem_id="open-progress", container=False)
            self.message = gr.Markdown(elem_id="open-message")

    def wire(self, state: gr.State, battle_view: list) -> None:
        """Generate (or Enter) sends the prompt: ``battle_view`` is [prompt, image A, image B, reveal, on screen,
        upcoming] of the arena tab."""
        ctx = self.ctx
        gr.on([self.generate.click, self.text.submit], bind(ctx, send_prompt, name="open_prompt"), [state, self.text],
              [state, *battle_view, self.message],
              js=START_JS, api_name="open_prompt", concurrency_limit=ctx.settings.open_prompt_concurrency,
              concurrency_id="open_prompt", show_progress="hidden").then(None, js=STOP_JS)
