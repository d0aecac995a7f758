"""The admin tab's prompt check: the prompts an LLM wrote, accepted or rejected by a person before they are used.

SANEval's prompts "were generated using Gemini-2.5-Flash and subsequently validated by human annotators" (§3.1). The
LLM writer (``python -m arena suites build saneval --generator llm``) stores them as candidates
(:mod:`datamodel.prompt_candidates`); this section lists the pending ones, and the admin accepts (the candidate
becomes a prompt) or rejects them (kept, with the reason). The same decisions are ``python -m arena suites review``
on the command line. Every function checks the page's admin session as the admin tab's own do; refusals are one log
line (:func:`arena.web.context.refusal`). A section of its own, kept plain: one table, one id, three buttons.
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr
import pandas as pd

from arena.web.admin_session import Holder
from arena.web.context import AppContext, bind, picked_cell, refusal, unwritable
from datamodel.connection import database_errors
from datamodel.prompt_candidates import ReviewError, candidate_counts, candidates, decide

SHOWN = 50  # pending candidates listed at a time
HEADERS = ["Candidate", "Category (objects)", "Prompt"]
REVIEWER = "admin"  # who the decisions of the admin tab are recorded as


def pending_frame(ctx: AppContext) -> pd.DataFrame:
    """The first :data:`SHOWN` pending candidates, oldest first."""
    rows = candidates(ctx.store.db(), status="pending", limit=SHOWN)
    return pd.DataFrame([[row["id"], f"{row['suite']} {row['subset']} ({row['metadata'].get('object_count', '?')})",
                          row["text"]] for row in rows], columns=HEADERS)


def counts_text(ctx: AppContext) -> str:
    counts = candidate_counts(ctx.store.db())
    if not counts:
        return ("No prompt candidates. An LLM writes them with python -m arena suites build saneval --generator llm "
                "--strata published (or --preset saneval-paper).")
    return "; ".join(f"**{html.escape(suite)}**: {n['pending']} pending, {n['accepted']} accepted, "
                     f"{n['rejected']} rejected" for suite, n in counts.items())


def fill(ctx: AppContext, admin_id, request: gr.Request | None = None):
    if not ctx.admins.live(admin_id, Holder.of(request)):
        return [gr.skip()] * 2
    return pending_frame(ctx), counts_text(ctx)


def decide_candidates(ctx: AppContext, admin_id, chosen, why, request: gr.Request | None = None, *, locked: str,
                      accepting: bool, every_listed: bool):
    """Accept or reject the chosen candidate (``every_listed``: every one listed); ``locked``: the admin tab's
    refusal for a locked page."""
    event = "prompt_review_" + ("accept_all" if every_listed else "accept" if accepting else "reject")
    if not ctx.admins.live(admin_id, Holder.of(request)):
        raise refusal(locked, event, request)
    ids = list(pending_frame(ctx)["Candidate"]) if every_listed else [] if chosen is None else [int(chosen)]
    if not ids:
        raise refusal("Pick a candidate: click its row or enter its number.", event, request)
    try:
        done = decide(ctx.store.db(), ids, accept=accepting, reviewer=REVIEWER, reason=why or "")
    except ReviewError as error:
        raise refusal(error, event, request) from None
    except database_errors() as error:
        return gr.skip(), gr.skip(), f"**⚠ {unwritable(error, event, request, what='decisions')}**", gr.skip()
    text = (f"Accepted {done.accepted} (now prompts)" if accepting else f"Rejected {done.rejected}") + (
        f"; {done.unchanged} already so." if done.unchanged else ".")
    return pending_frame(ctx), counts_text(ctx), text, None


def pick(frame: pd.DataFrame, evt: gr.SelectData):
    """A click on a row of the candidates chooses that candidate."""
    return picked_cell(frame, evt, "Candidate", int)


def build_prompt_review(ctx: AppContext, admin: gr.State, locked: str) -> None:
    """The section's components and events, inside the admin tab's unlocked column; filled when ``admin`` (the page's
    admin session id) is set, and on Refresh. ``locked``: the admin tab's refusal for a locked page."""
    gr.Markdown("### Prompt check\nPrompts an LLM wrote wait here until a person accepts them (they become prompts "
                "of their suite) or rejects them (kept, with the reason). Click a row to pick it.")
    summary = gr.Markdown(elem_id="prompt-review-counts")
    table = gr.DataFrame(elem_id="prompt-candidates", interactive=False, wrap=True, max_height=420,
                         column_widths=["18%", "24%", "58%"])
    with gr.Row():
        candidate = gr.Number(label="Candidate", precision=0, elem_id="prompt-review-id")
        reason = gr.Textbox(label="Reason (for a rejection)", elem_id="prompt-review-reason")
    with gr.Row():
        accept = gr.Button("Accept", variant="primary", elem_id="prompt-review-accept")
        reject = gr.Button("Reject", elem_id="prompt-review-reject")
        accept_shown = gr.Button("Accept all listed", elem_id="prompt-review-accept-all")
        refresh = gr.Button("Refresh", elem_id="prompt-review-refresh")
    message = gr.Markdown(elem_id="prompt-review-message")
    private: dict[str, Any] = dict(api_visibility="private")
    gr.on([admin.change, refresh.click], bind(ctx, fill), admin, [table, summary], **private)
    outputs = [table, summary, message, candidate]
    for button, name, accepting, every_listed in ((accept, "accept", True, False), (reject, "reject", False, False),
                                                  (accept_shown, "accept_all", True, True)):
        button.click(bind(ctx, decide_candidates, f"prompt_review_{name}", locked=locked, accepting=accepting,
                          every_listed=every_listed), [admin, candidate, reason], outputs, **private)
    table.select(pick, table, candidate, **private)
