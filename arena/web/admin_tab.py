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

from datamodel.vote_table import EXPORT_FORMATS, export_votes
from datamodel.quality import BIAS, RATE, SPEED, flagged_votes
from arena.admin_tables import admin_actions, annotator_flags
from datamodel.reviews import ReviewError, review_votes
from sampling.coverage import votes_per_model, votes_per_pair, votes_per_prompt
from arena.ratelimit import RateLimited, client_address
from arena.web.admin_session import Holder, SessionEnded
from arena.web.context import AppContext, refusal, unwritable
from arena.web.prompt_review import build_prompt_review
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


RULE_CHOICES = [("Every vote", ""), ("Votes the rate rule flagged", RATE), ("Votes the speed rule flagged", SPEED),
                ("Votes the bias rule flagged", BIAS)]
EVERY_ANNOTATOR = ("Every annotator", "")
ADMIN_CSS = """
#review-message p, #vote-review-message p, #admin-password-message p { margin: 0.2em 0; }
.admin-done { display: inline-block; padding: 2px 8px; border-left: 3px solid #16a34a; border-radius: 3px;
              background: #f0fdf4; color: #14532d; font-weight: 600; }
.admin-refused { display: inline-block; padding: 2px 8px; border-left: 3px solid #d97706; border-radius: 3px;
                 background: #fff7ed; color: #7c2d12; font-weight: 600; }
#annotator-stats tbody tr, #flagged-votes tbody tr { cursor: pointer; }
"""


# The reason of a one-vote review unless the admin gives another (API callers that send only the vote id get it too).
ONE_VOTE_REASON = "reviewed by an admin"

# Closes the page's messages (Gradio's toasts): a refused unlock's "Wrong admin password" is gone once unlocked.
CLOSE_TOASTS_JS = "() => document.querySelectorAll('.toast-close').forEach(button => button.click())"


def done(text: str) -> str:
    """An action's confirmation, as the page shows it (a green line)."""
    return f'<span class="admin-done">✓ {html.escape(text)}</span>'


def refused_text(text: str) -> str:
    """Why an action was not taken, as the page shows it (an amber line); the tables stay as they are."""
    return f'<span class="admin-refused">⚠ {html.escape(text)}</span>'


def model_table(db) -> pd.DataFrame:
    """Votes per model with plain headers, the share as a percentage."""
    table = votes_per_model(db)
    table["share"] = [f"{share:.0%}" for share in table["share"]]
    return table.rename(columns={"model": "Model", "votes": "Votes", "share": "Share", "vs_mean": "× mean",
                                 "wins": "Wins", "losses": "Losses", "ties": "Ties", "both_bad": "Both bad"})


def pair_table(db) -> pd.DataFrame:
    """Votes per pair of models with plain headers, the share as a percentage."""
    table = votes_per_pair(db)
    table["share"] = [f"{share:.0%}" for share in table["share"]]
    return table.rename(columns={"model_1": "Model", "model_2": "Other model", "prompts": "Prompts", "votes": "Votes",
                                 "decisive": "Decisive", "share": "Share", "vs_mean": "× mean"})


def prompt_table(db) -> pd.DataFrame:
    """Votes per prompt with the counts first and the prompt's text cut to 80 characters (the whole text hid the
    votes column), plain headers."""
    table = votes_per_prompt(db)
    table["prompt"] = [text if len(text) <= 80 else text[:79] + "…" for text in table["prompt"]]
    order = ["votes", "pairs_voted", "max_per_pair", "replicated", "models", "suite", "subset", "variant", "prompt",
             "prompt_id"]
    return table[order].rename(columns={"votes": "Votes", "pairs_voted": "Pairs voted", "max_per_pair":
                                        "Most on one pair", "replicated": "Replicated", "models": "Models",
                                        "suite": "Suite", "subset": "Subset", "variant": "Variant",
                                        "prompt": "Prompt", "prompt_id": "Prompt id"})


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
        gr.Markdown("### Annotators\n*Each annotator's votes: cast, counted by the leaderboard, set aside by each "
                    "quality rule, and those an admin decided on. Click a row to choose the annotator below.*")
        stats = gr.DataFrame(elem_id="annotator-stats", interactive=False, wrap=False, max_height=420)
        with gr.Row(elem_id="review-annotator-row"):
            review_annotator = gr.Dropdown([EVERY_ANNOTATOR], value="", label="Annotator",
                                           elem_id="review-annotator", allow_custom_value=True)
            # any value reaches the handler, which refuses a page without an admin session first, then an unknown
            # rule in words (datamodel.reviews.review_votes)
            review_rule = gr.Dropdown(RULE_CHOICES, value="", label="Votes", elem_id="review-rule",
                                      allow_custom_value=True)
            review_reason = gr.Textbox(label="Reason (kept with the votes and in the log)", elem_id="review-reason",
                                       max_lines=1)
        with gr.Row():
            exclude_all = gr.Button("Exclude these votes", elem_id="review-exclude-all", variant="stop")
            include_all = gr.Button("Include these votes", elem_id="review-include-all")
        review_message = gr.HTML(elem_id="review-message")  # what the last action did, or why it was not taken
        gr.Markdown(f"### Where the human votes went\nSampling strategy: **{ctx.settings.sampling_strategy}**. "
                    "Fewest votes first, so gaps are visible.")
        with gr.Tabs():
            with gr.Tab("Per model"):
                per_model = gr.DataFrame(elem_id="votes-per-model", interactive=False)
            with gr.Tab("Per pair"):
                per_pair = gr.DataFrame(elem_id="votes-per-pair", interactive=False)
            with gr.Tab("Per prompt"):
                per_prompt = gr.DataFrame(elem_id="votes-per-prompt", interactive=False, wrap=False)
        gr.Markdown("### Flagged votes\nExcluded by the quality rules (kept, never deleted), noted for a trusted "
                    "account, or reviewed by an admin. An admin's decision is final. Click a row to choose the vote.")
        flagged = gr.DataFrame(elem_id="flagged-votes", interactive=False, max_height=420)
        with gr.Row():
            vote_id = gr.Number(label="Vote id", precision=0, elem_id="review-vote-id")
            vote_reason = gr.Textbox(label="Reason", elem_id="review-vote-reason", max_lines=1,
                                     value=ONE_VOTE_REASON)
            include_button = gr.Button("Include in ratings", elem_id="review-include")
            exclude_button = gr.Button("Exclude from ratings", elem_id="review-exclude")
        vote_message = gr.HTML(elem_id="vote-review-message")
        gr.Markdown("### Actions taken\nThe admins' reviews, newest first.")
        actions = gr.DataFrame(elem_id="admin-actions", interactive=False, wrap=False, max_height=320)
        build_rating_admin(ctx, admin, LOCKED, export_link)  # the Human ratings section
        build_prompt_review(ctx, admin, LOCKED)  # the prompt check: LLM-written prompts accepted by a person

    def require(admin_id, event: str, request: gr.Request | None) -> None:
        """Refuse the call unless this page holds a live admin session."""
        if not ctx.admins.live(admin_id, Holder.of(request)):
            raise refusal(LOCKED, event, request)

    def flagged_table() -> pd.DataFrame:
        rows = flagged_votes(ctx.store.db())
        table = pd.DataFrame(rows, columns=["vote_id", "voter", "outcome", "created_at", "excluded", "reviewed",
                                            "reason"])
        for column in ("excluded", "reviewed"):
            table[column] = ["yes" if value else "no" for value in table[column]]
        return table.rename(columns={"vote_id": "Vote", "voter": "Voter", "outcome": "Outcome",
                                     "created_at": "When (UTC)", "excluded": "Excluded", "reviewed": "By an admin",
                                     "reason": "Reason"})

    def tables() -> list:
        """Every table the admin's actions change, read again: annotators, flagged votes, coverage, the log; and
        the annotators menu."""
        db = ctx.store.db()
        flags = annotator_flags(db)
        names = [EVERY_ANNOTATOR, *((name, name) for name in flags["Annotator"])]
        return [flags, flagged_table(), model_table(db), pair_table(db), prompt_table(db), admin_actions(db),
                gr.update(choices=names)]

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
        return [admin_id, gr.update(visible=False), gr.update(visible=True), "", *tables()]

    def do_bulk(exclude: bool, admin_id, annotator, rule, reason, request: gr.Request | None):
        """One action on all of an annotator's votes, or all of a rule's (of every annotator, or of one)."""
        event = f"admin_bulk_{'exclude' if exclude else 'include'}"
        require(admin_id, event, request)
        try:
            result = review_votes(ctx.store.db(), exclude=exclude, reason=reason,
                                  annotator=annotator if isinstance(annotator, str) and annotator else None,
                                  rule=rule if isinstance(rule, str) and rule else None)
        except ReviewError as error:
            refusal(error, event, request)
            return [refused_text(str(error)), *[gr.skip()] * 7]
        except sqlite3.OperationalError as error:
            return [refused_text(unwritable(error, event, request)), *[gr.skip()] * 7]
        if ctx.stats is not None:  # the sampler counts non-excluded votes: it reads them again, in the background
            ctx.stats.reload(ctx.store.db())
        return [done(result.message), *tables()]

    def do_review(exclude: bool, admin_id, vote: float | None, reason: str, request: gr.Request | None):
        event = f"admin_review_{'exclude' if exclude else 'include'}"
        require(admin_id, event, request)
        try:
            if vote is None:
                raise ReviewError("Enter the id of a vote from the flagged votes table (or click its row).")
            result = review_votes(ctx.store.db(), exclude=exclude, reason=reason, vote_id=int(vote))
        except (ReviewError, ValueError, OverflowError) as error:
            refusal(error, event, request)
            return [refused_text(str(error)), *[gr.skip()] * 7]
        except sqlite3.OperationalError as error:
            return [refused_text(unwritable(error, event, request)), *[gr.skip()] * 7]
        if ctx.stats is not None:
            ctx.stats.reload(ctx.store.db())
        return [done(result.message), *tables()]

    def pick_annotator(table: pd.DataFrame, evt: gr.SelectData):
        """A click on a row of the annotators table chooses that annotator."""
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        try:
            return str(table.iloc[int(row)]["Annotator"])
        except (IndexError, KeyError, ValueError, TypeError):
            return gr.skip()

    def pick_vote(table: pd.DataFrame, evt: gr.SelectData):
        """A click on a row of the flagged votes chooses that vote."""
        row = evt.index[0] if isinstance(evt.index, (list, tuple)) else evt.index
        try:
            return int(table.iloc[int(row)]["Vote"])
        except (IndexError, KeyError, ValueError, TypeError):
            return gr.skip()

    def do_export(fmt: str, admin_id, request: gr.Request | None) -> str:
        event = f"admin_export_{fmt}"
        require(admin_id, event, request)
        try:
            return export_link(ctx, admin_id, fmt, Holder.of(request))
        except SessionEnded:  # the session ended (or the server began to stop) while the file was written
            raise refusal(LOCKED, event, request)

    def bulk_handler(exclude: bool):
        def handler(admin_id, annotator, rule, reason, request: gr.Request = None):
            return do_bulk(exclude, admin_id, annotator, rule, reason, request)

        handler.__name__ = f"admin_bulk_{'exclude' if exclude else 'include'}"
        return handler

    def review_handler(exclude: bool):
        def handler(admin_id, vote: float | None, reason: str = ONE_VOTE_REASON, request: gr.Request = None):
            return do_review(exclude, admin_id, vote, reason, request)

        handler.__name__ = f"admin_review_{'exclude' if exclude else 'include'}"
        return handler

    def export_handler(fmt: str):
        def handler(admin_id, request: gr.Request = None) -> str:
            return do_export(fmt, admin_id, request)

        handler.__name__ = f"admin_export_{fmt}"
        return handler

    do_unlock.__name__ = "admin_unlock"
    refreshed = [stats, flagged, per_model, per_pair, per_prompt, actions, review_annotator]
    # One unlock at a time on the server: guesses cannot run in parallel (the throttle counts them anyway).
    gr.on([unlock.click, password_box.submit], do_unlock, [password_box, admin],
          [admin, lock_box, admin_box, password_box, *refreshed],
          api_visibility="private", show_progress="hidden", concurrency_limit=1, concurrency_id="admin_unlock"
          ).success(None, js=CLOSE_TOASTS_JS)  # a refused unlock's message (a toast) does not outlive the unlock
    for exclude, button in ((True, exclude_all), (False, include_all)):
        button.click(bulk_handler(exclude), [admin, review_annotator, review_rule, review_reason],
                     [review_message, *refreshed], api_visibility="private")
    for exclude, button in ((False, include_button), (True, exclude_button)):
        button.click(review_handler(exclude), [admin, vote_id, vote_reason], [vote_message, *refreshed],
                     api_visibility="private")
    stats.select(pick_annotator, stats, review_annotator, api_visibility="private")
    flagged.select(pick_vote, flagged, vote_id, api_visibility="private")
    for fmt, button in export_buttons.items():
        button.click(export_handler(fmt), [admin], export_file, api_visibility="private")
    # the only admin event a program may send first (it opens the admin session); the front door refuses the others
    # without a page session the server holds
    ctx.opening_events.add("admin_unlock")
