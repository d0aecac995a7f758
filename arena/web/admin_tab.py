"""The admin tab: behind the admin password, vote exports, annotator statistics and the review of flagged votes.

Only Unlock takes the password, throttled per client address and overall (:class:`arena.ratelimit.LoginThrottle`:
after a few failures an address waits, twice as long after each further one). A right password opens an admin
session (:class:`arena.web.admin_session.AdminSessions`) whose id the page keeps in its server-held state, bound to
the address and browser cookie that unlocked it; every other admin function checks that session and its holder on
every call, so calling one by its ``fn_index`` from a page that has not unlocked, or with another page's session id
from another browser, gets nothing. Refusals are one line in the server log (:func:`arena.web.context.refusal`).

An export is written into the admin session's private folder (file mode 0600) and offered for download under a
random token (:meth:`arena.web.admin_session.AdminSessions.offer`); the export event answers that page's session
only, with a link to ``admin-export/<token>``, which the front door (:class:`arena.web.app.AdminExports`) streams
once, while the admin session lives, within 10 minutes, to the address that asked, and then deletes. The file never
passes through the server's memory or Gradio's event answer, so a study-sized export (hundreds of MB) costs the
server no more than a small one; Gradio's file cache never holds one.
"""

from __future__ import annotations

import hmac
import html
import sqlite3
import time

import gradio as gr

import pandas as pd

from datamodel.vote_table import EXPORT_FORMATS, annotator_stats, export_votes
from datamodel.quality import flagged_votes, review_vote
from sampling.coverage import votes_per_model, votes_per_pair, votes_per_prompt
from arena.ratelimit import RateLimited, client_address
from arena.web.admin_session import Holder, SessionEnded
from arena.web.context import AppContext, refusal, unwritable
from arena.web.rating_admin import build_rating_admin

EXPORT_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}
LOCKED = ("Unlock the admin tab first: enter the admin password. (An admin session ends after 30 minutes without "
          "use or when the server restarts; then reload the page.)")


def export_link(ctx: AppContext, admin_id: str, fmt: str, holder: Holder, *, export=None, what: str = "votes") -> str:
    """The vote export in ``fmt`` (or ``export(db, path, fmt)``'s, which writes ``what``: ratings), offered to
    ``holder`` for one download, as the export event answers it: an HTML link (relative to the page) with the file's
    name, rows and size.

    Written into the admin session's private folder as a file of mode 0600 (deleted if the export fails).
    """
    name = f"{what}-{time.strftime('%Y%m%d-%H%M%S')}.{fmt}"
    with ctx.admins.offer(admin_id, f".{fmt}", name=name, media_type=EXPORT_TYPES[fmt], holder=holder) as offer:
        rows = (export or export_votes)(ctx.store.db(), offer.path, fmt)
        size = offer.path.stat().st_size
    size_text = f"{size / 1e6:,.1f} MB" if size >= 100_000 else f"{size / 1e3:,.1f} kB"
    minutes = round(ctx.admins.offer_s / 60)
    return (f'<a class="export-link" href="admin-export/{html.escape(offer.token)}" download="{html.escape(name)}">'
            f"Download {html.escape(name)}</a> ({rows:,} {what}, {size_text}). "
            f"<span class=\"export-note\">The link works once, within {minutes} minutes; export again for another "
            "copy.</span>")


def build_admin_tab(ctx: AppContext, admin: gr.State | None = None) -> None:
    """Wire the admin tab; ``admin`` (default: its own) is the page's state that holds its admin session id once
    unlocked (the leaderboard tab reads it too: an annotator's results are shown to the admin)."""
    password = ctx.settings.admin_password
    admin = gr.State(None) if admin is None else admin  # this page's admin session id once unlocked (AdminSessions)
    with gr.Column(visible=True) as lock_box:
        if not password:
            gr.Markdown("The admin tab is locked: set the ARENA_ADMIN_PASSWORD environment variable and restart.")
        password_box = gr.Textbox(label="Admin password", type="password", elem_id="admin-password")
        unlock = gr.Button("Unlock", elem_id="admin-unlock")
    with gr.Column(visible=False) as admin_box:
        gr.Markdown("### Export votes\nOne row per vote, joined with battle, prompt and models (as displayed).")
        with gr.Row():
            export_buttons = {fmt: gr.Button(f"Export {fmt.upper()}", elem_id=f"export-{fmt}")
                              for fmt in EXPORT_FORMATS}
        export_file = gr.HTML("", elem_id="export-file")  # the one-time download link of the latest export
        gr.Markdown("### Annotators")
        stats = gr.DataFrame(elem_id="annotator-stats", interactive=False)
        gr.Markdown(f"### Where the human votes went\nSampling strategy: **{ctx.settings.sampling_strategy}**. "
                    "Fewest votes first, so gaps are visible.")
        with gr.Tabs():
            with gr.Tab("Per model"):
                per_model = gr.DataFrame(elem_id="votes-per-model", interactive=False)
            with gr.Tab("Per pair"):
                per_pair = gr.DataFrame(elem_id="votes-per-pair", interactive=False)
            with gr.Tab("Per prompt"):
                per_prompt = gr.DataFrame(elem_id="votes-per-prompt", interactive=False)
        gr.Markdown("### Flagged votes\nExcluded by the quality rules (kept, never deleted) or reviewed by an admin. "
                    "An admin's decision is final.")
        flagged = gr.DataFrame(elem_id="flagged-votes", interactive=False)
        with gr.Row():
            vote_id = gr.Number(label="Vote id", precision=0, elem_id="review-vote-id")
            include_button = gr.Button("Include in ratings", elem_id="review-include")
            exclude_button = gr.Button("Exclude from ratings", elem_id="review-exclude")
        build_rating_admin(ctx, admin, LOCKED, export_link)  # the Human ratings section

    def require(admin_id, event: str, request: gr.Request | None) -> None:
        """Refuse the call unless this page holds a live admin session."""
        if not ctx.admins.live(admin_id, Holder.of(request)):
            raise refusal(LOCKED, event, request)

    def flagged_table() -> pd.DataFrame:
        rows = flagged_votes(ctx.store.db())
        return pd.DataFrame(rows, columns=["vote_id", "voter", "outcome", "created_at", "excluded", "reviewed",
                                           "reason"])

    def do_unlock(given: str, admin_id, request: gr.Request = None):
        holder = Holder.of(request)
        if not ctx.admins.live(admin_id, holder):
            if not password:
                raise refusal("Set ARENA_ADMIN_PASSWORD to enable the admin tab.", "admin_unlock", request)
            client = client_address(request)
            try:
                attempt = ctx.admin_throttle.attempt(client)
            except RateLimited as error:
                raise refusal(error, "admin_unlock", request)
            with attempt:  # leaving without succeeded() counts a failure
                if not hmac.compare_digest(str(given or "").encode(), password.encode()):
                    raise refusal("Wrong admin password.", "admin_unlock", request, warn=True)
                attempt.succeeded()
            admin_id = ctx.admins.open(holder)
        db = ctx.store.db()
        return (admin_id, gr.update(visible=False), gr.update(visible=True), annotator_stats(db),
                flagged_table(), votes_per_model(db), votes_per_pair(db), votes_per_prompt(db), "")

    def do_review(exclude: bool, admin_id, vote: float | None, request: gr.Request | None):
        event = f"admin_review_{'exclude' if exclude else 'include'}"
        require(admin_id, event, request)
        if vote is None:
            raise refusal("Enter the id of a vote from the table.", event, request)
        try:
            review_vote(ctx.store.db(), int(vote), exclude=exclude)
        except LookupError as error:
            raise refusal(error, event, request)
        except sqlite3.OperationalError as error:
            raise gr.Error(unwritable(error, event, request), print_exception=False)
        if ctx.stats is not None:  # the sampler counts non-excluded votes: it reads them again, in the background
            ctx.stats.reload(ctx.store.db())
        return flagged_table()

    def do_export(fmt: str, admin_id, request: gr.Request | None) -> str:
        event = f"admin_export_{fmt}"
        require(admin_id, event, request)
        try:
            return export_link(ctx, admin_id, fmt, Holder.of(request))
        except SessionEnded:  # the session ended (or the server began to stop) while the file was written
            raise refusal(LOCKED, event, request)

    def review_handler(exclude: bool):
        def handler(admin_id, vote: float | None, request: gr.Request = None):
            return do_review(exclude, admin_id, vote, request)

        handler.__name__ = f"admin_review_{'exclude' if exclude else 'include'}"
        return handler

    def export_handler(fmt: str):
        def handler(admin_id, request: gr.Request = None) -> str:
            return do_export(fmt, admin_id, request)

        handler.__name__ = f"admin_export_{fmt}"
        return handler

    do_unlock.__name__ = "admin_unlock"
    # One unlock at a time on the server: guesses cannot run in parallel (the throttle counts them anyway).
    gr.on([unlock.click, password_box.submit], do_unlock, [password_box, admin],
          [admin, lock_box, admin_box, stats, flagged, per_model, per_pair, per_prompt, password_box],
          api_visibility="private", show_progress="hidden", concurrency_limit=1, concurrency_id="admin_unlock")
    for exclude, button in ((False, include_button), (True, exclude_button)):
        button.click(review_handler(exclude), [admin, vote_id], flagged, api_visibility="private")
    for fmt, button in export_buttons.items():
        button.click(export_handler(fmt), [admin], export_file, api_visibility="private")
    # these answer only a page holding an admin session: the front door refuses them without a Gradio session
    ctx.session_events.update({"admin_review_include", "admin_review_exclude",
                               *(f"admin_export_{fmt}" for fmt in EXPORT_FORMATS)})
