"""The sign-in form the Arena and Ratings tabs share, and how a page stays signed in.

Both tabs sign an annotator in with a name and a token (one account for both), each sign-in under the throttle
(:func:`arena.web.context.throttled_sign_in`) and the sign-in queue slots (:data:`arena.web.context.SIGN_IN_QUEUE`).
A sign-in answers a token that keeps the browser signed in: the page keeps it in its local storage, sends it back
with its page-load event after a reload, and forgets it on Sign out (``static/sign_in.html``: the browser halves of
these events, ``window.arenaSignIn``).

No ``from __future__ import annotations`` here: the form's type hints are Gradio's classes.
"""

from dataclasses import dataclass

import gradio as gr

from arena.web.context import SIGN_IN_QUEUE, AppContext

KEEP_SIGN_IN_JS = "(token) => window.arenaSignIn.keep(token)"
READ_SIGN_IN_JS = "() => window.arenaSignIn.read()"  # the token, the suite and the battle the page showed
FORGET_SIGN_IN_JS = "(...inputs) => window.arenaSignIn.forget(...inputs)"


@dataclass(frozen=True)
class SignInForm:
    """The form: a column with the tab's words, the name and token boxes, the button and the line that says what
    went wrong (the boxes keep what was typed)."""

    box: gr.Column
    name: gr.Textbox
    token: gr.Textbox
    button: gr.Button
    message: gr.Markdown


def sign_in_form(intro: str, prefix: str = "") -> SignInForm:
    """Lay out the form, shown until the tab is signed in: ``intro`` above the boxes; every element's id starts with
    ``prefix`` (the Arena tab's: ``signin-name``, ..., the Ratings tab's: ``rating-signin-name``, ...)."""
    with gr.Column(visible=True, elem_id=f"{prefix}signin-box") as box:
        gr.Markdown(intro, elem_id=f"{prefix}signin-intro")
        with gr.Row():
            name = gr.Textbox(label="Name", elem_id=f"{prefix}signin-name", max_lines=1)
            token = gr.Textbox(label="Token", type="password", elem_id=f"{prefix}signin-token", max_lines=1)
        button = gr.Button("Sign in", variant="primary", elem_id=f"{prefix}signin-button")
        message = gr.Markdown(elem_id=f"{prefix}signin-message")
    return SignInForm(box, name, token, button, message)


def wire_sign_in(ctx: AppContext, form: SignInForm, *, api_name: str, sign_in, inputs: list, outputs: list,
                 issued: gr.Textbox, resume, stored: list, sign_out, sign_out_button: gr.Button, state: gr.State,
                 tab_box: gr.Column) -> None:
    """Wire a tab's sign-in (the button or Enter in the token box: ``sign_in``, named ``api_name``, its last output
    ``issued``, the token the browser keeps), its page-load event (``resume`` of the ``stored`` values the browser
    read, with the same ``outputs``) and its Sign out (``sign_out`` of ``state``: the form shown again, ``tab_box``
    hidden, the state emptied). Signing in is the one event of the tab a page without a session may send."""
    gr.on([form.button.click, form.token.submit], sign_in, inputs, outputs, api_name=api_name,
          **SIGN_IN_QUEUE).then(None, issued, None, js=KEEP_SIGN_IN_JS)
    gr.on(None, resume, stored, outputs, js=READ_SIGN_IN_JS, api_visibility="private", concurrency_limit=None)
    sign_out_button.click(sign_out, state, [form.box, tab_box, state], js=FORGET_SIGN_IN_JS,
                          api_visibility="private")
    ctx.opening_events.add(api_name)  # a program's first call (the page's first is its load event)
