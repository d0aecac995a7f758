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
import time

import gradio as gr
import pandas as pd

from arena.admin_tables import admin_actions, annotator_flags, flagged_table
from arena.ratelimit import RateLimited, client_address
from arena.web.admin_session import Holder, SessionEnded
from arena.web.context import AppContext, bind, done, picked_cell, refusal, refused_text, unwritable
from arena.web.prompt_review import build_prompt_review
from arena.web.rating_admin import build_rating_admin
from datamodel.connection import database_errors
from datamodel.kwise import has_kwise_votes
from datamodel.quality import BIAS, RATE, SPEED
from datamodel.reviews import ReviewError, review_votes, vote_reference
from datamodel.vote_table import EXPORT_FORMATS, export_votes
from sampling.coverage import votes_per_model, votes_per_pair, votes_per_prompt

EXPORT_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson", "parquet": "application/vnd.apache.parquet"}
FOUR_IMAGE = "four-image"  # the four-image votes' export format (datamodel.kwise.write_kwise_jsonl)
FILE_TYPES = {FOUR_IMAGE: "jsonl"}  # an export format whose file is of another type: that type
# The vote exports of the tab, format: (its button, what its rows are). The four-image one is shown where the arena
# has four-image votes (four_image_offered).
VOTE_EXPORTS = {**{fmt: (f"Export {fmt.upper()}", "votes") for fmt in EXPORT_FORMATS},
                FOUR_IMAGE: ("Export four-image JSONL", "four-image votes")}
LOCKED = ("Unlock the admin tab first: enter the admin password. (An admin session ends after 30 minutes without "
          "use or when the server restarts; then reload the page.)")


def export_link(ctx: AppContext, admin_id: str, fmt: str, holder: Holder, *, export=None, what: str = "votes") -> str:
    """The vote export in ``fmt`` (a format of :data:`datamodel.vote_table.EXPORTERS` whose rows are ``what``: the
    four-image one, four-image votes, is a .jsonl file: :data:`FILE_TYPES`), or ``export(db, path, fmt)``'s (which
    writes ``what``: ratings), offered to ``holder`` for one download, as the export event answers it: an HTML link
    (relative to the page) with the file's name (``what-<time>.<type>``), rows and size.

    Written into the admin session's private folder as a file of mode 0600 (deleted if the export fails).
    """
    suffix = FILE_TYPES.get(fmt, fmt)
    name = f"{what.replace(' ', '-')}-{time.strftime('%Y%m%d-%H%M%S')}.{suffix}"
    with ctx.admins.offer(admin_id, f".{suffix}", name=name, media_type=EXPORT_TYPES[suffix], holder=holder) as offer:
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


# The reason of a one-vote review unless the admin gives another (API callers that send only the vote id get it too).
ONE_VOTE_REASON = "reviewed by an admin"

# Closes the page's messages (Gradio's toasts): a refused unlock's "Wrong admin password" is gone once unlocked
# (static/admin.html; the tab's look: static/admin.css).
CLOSE_TOASTS_JS = "() => window.arenaAdmin.closeToasts()"


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


# --- the handlers: each takes the app's context first (arena.web.context.bind hands it over) -------------------------


def require(ctx: AppContext, admin_id, event: str, request: gr.Request | None) -> None:
    """Refuse the call unless this page holds a live admin session."""
    if not ctx.admins.live(admin_id, Holder.of(request)):
        raise refusal(LOCKED, event, request)


def tables(ctx: AppContext) -> list:
    """Every table the admin's actions change, read again: annotators, flagged votes, coverage, the log; and the
    annotators menu (:data:`REFRESHED`)."""
    db = ctx.store.db()
    flags = annotator_flags(db)
    names = [EVERY_ANNOTATOR, *((name, name) for name in flags["Annotator"])]
    return [flags, flagged_table(db), model_table(db), pair_table(db), prompt_table(db), admin_actions(db),
            gr.update(choices=names)]


def unlock(ctx: AppContext, given: str, admin_id, request: gr.Request | None = None):
    """The password, checked under the throttle: an admin session for this page, the tab shown."""
    holder, password = Holder.of(request), ctx.settings.admin_password
    if not ctx.admins.live(admin_id, holder):
        if not password:
            raise refusal("Set ARENA_ADMIN_PASSWORD to enable the admin tab.", "admin_unlock", request)
        client = client_address(request)
        try:
            attempt = ctx.admin_throttle.attempt(client)
        except RateLimited as error:
            raise refusal(error, "admin_unlock", request) from None
        with attempt:  # leaving without succeeded() counts a failure
            if not hmac.compare_digest(str(given or "").encode(), password.encode()):
                raise refusal("Wrong admin password.", "admin_unlock", request, warn=True)
            attempt.succeeded()
        admin_id = ctx.admins.open(holder)
    return [admin_id, gr.update(visible=False), gr.update(visible=True), "", *tables(ctx),
            gr.update(visible=four_image_offered(ctx))]


def four_image_offered(ctx: AppContext) -> bool:
    """Whether the tab offers the four-image votes' export: the arena runs the four-image mode or holds such votes
    (from an earlier run with it), read at each unlock."""
    return bool(ctx.settings.four_image_suite_names) or has_kwise_votes(ctx.store.db())


def reviewed(ctx: AppContext, event: str, request, review) -> list:
    """The answer of a review (``review()``: datamodel.reviews.review_votes): its message and the tables read again,
    or why it was refused or not saved, the tables left as they are."""
    try:
        result = review()
    except (ReviewError, ValueError, OverflowError) as error:
        refusal(error, event, request)
        return [refused_text(str(error)), *[gr.skip()] * len(REFRESHED)]
    except database_errors() as error:
        return [refused_text(unwritable(error, event, request, what="reviews")), *[gr.skip()] * len(REFRESHED)]
    if ctx.stats is not None:  # the sampler counts non-excluded votes: it reads them again, in the background
        ctx.stats.reload(ctx.store.db())
    return [done(result.message), *tables(ctx)]


def review_in_bulk(ctx: AppContext, admin_id, annotator, rule, reason, request: gr.Request | None = None, *,
                   exclude: bool) -> list:
    """One action on all of an annotator's votes, or all of a rule's (of every annotator, or of one)."""
    event = f"admin_bulk_{'exclude' if exclude else 'include'}"
    require(ctx, admin_id, event, request)
    return reviewed(ctx, event, request, lambda: review_votes(
        ctx.store.db(), exclude=exclude, reason=reason,
        annotator=annotator if isinstance(annotator, str) and annotator else None,
        rule=rule if isinstance(rule, str) and rule else None))


def review_one(ctx: AppContext, admin_id, vote: str | float | None, reason: str = ONE_VOTE_REASON,
               request: gr.Request | None = None, *, exclude: bool) -> list:
    """One vote included or excluded, by its kind and id ("pairwise 12", "four-image 12") as the flagged votes' Vote
    column shows it, or a pairwise vote's id alone ("12", or 12.0 from an API caller)
    (:func:`datamodel.reviews.vote_reference`)."""
    event = f"admin_review_{'exclude' if exclude else 'include'}"
    require(ctx, admin_id, event, request)

    def review():
        kind, vote_id = vote_reference(vote)
        return review_votes(ctx.store.db(), exclude=exclude, reason=reason, vote_id=vote_id, vote_kind=kind)

    return reviewed(ctx, event, request, review)


def pick_annotator(table: pd.DataFrame, evt: gr.SelectData):
    """A click on a row of the annotators table chooses that annotator."""
    return picked_cell(table, evt, "Annotator")


def pick_vote(table: pd.DataFrame, evt: gr.SelectData):
    """A click on a row of the flagged votes chooses that vote (by kind and id: "pairwise 12", "four-image 12")."""
    return picked_cell(table, evt, "Vote")


def export_event(fmt: str) -> str:
    """The name of the export event of ``fmt`` (admin_export_csv, ..., admin_export_four_image)."""
    return f"admin_export_{fmt.replace('-', '_')}"


def export(ctx: AppContext, admin_id, request: gr.Request | None = None, *, fmt: str) -> str:
    """The votes in ``fmt`` (:data:`VOTE_EXPORTS`), offered as a one-time download link (:func:`export_link`)."""
    event = export_event(fmt)
    require(ctx, admin_id, event, request)
    try:
        return export_link(ctx, admin_id, fmt, Holder.of(request), what=VOTE_EXPORTS[fmt][1])
    except SessionEnded:  # the session ended (or the server began to stop) while the file was written
        raise refusal(LOCKED, event, request) from None


# --- the layout and the wiring ---------------------------------------------------------------------------------------

# the tables and the menu every review reads again (tables()), in this order
REFRESHED = ("stats", "flagged", "per_model", "per_pair", "per_prompt", "actions", "review_annotator")


def build_admin_tab(ctx: AppContext, admin: gr.State | None = None) -> None:
    """Lay out the admin tab and wire it; ``admin`` (default: its own) is the page's state that holds its admin
    session id once unlocked (the leaderboard tab reads it too: an annotator's results are shown to the admin)."""
    admin = gr.State(None) if admin is None else admin  # this page's admin session id once unlocked (AdminSessions)
    with gr.Column(visible=True) as lock_box:
        if not ctx.settings.admin_password:
            gr.Markdown("The admin tab is locked: set the ARENA_ADMIN_PASSWORD environment variable and restart.")
        password_box = gr.Textbox(label="Admin password", type="password", elem_id="admin-password")
        unlock_button = gr.Button("Unlock", elem_id="admin-unlock")
    with gr.Column(visible=False) as admin_box:
        view = {**export_and_annotators(), **coverage_and_flagged(ctx)}
        build_rating_admin(ctx, admin, LOCKED, export_link)  # the Human ratings section
        build_prompt_review(ctx, admin, LOCKED)  # the prompt check: LLM-written prompts accepted by a person
    view.update(admin=admin, lock_box=lock_box, admin_box=admin_box, password_box=password_box, unlock=unlock_button)
    wire_admin_tab(ctx, view)


def export_and_annotators() -> dict:
    """Lay out the exports and the annotators' table with the bulk review; by name."""
    gr.Markdown("### Export votes\nOne row per vote, joined with battle, prompt and models (as displayed). Where "
                "the arena has four-image votes, their JSONL has one line per four-image vote with its four slots' "
                "models and image ids.")
    with gr.Row():
        export_buttons = {fmt: gr.Button(label, elem_id=f"export-{fmt}", visible=fmt != FOUR_IMAGE)
                          for fmt, (label, _) in VOTE_EXPORTS.items()}
    export_file = gr.HTML("", elem_id="export-file")  # the one-time download link of the latest export
    gr.Markdown("### Annotators\n*Each annotator's votes, pairwise and four-image together (Four-image: how many "
                "of them are four-image votes): cast, counted by the leaderboard, set aside by each quality rule, and "
                "those an admin decided on. An action covers both kinds. Click a row to choose the annotator "
                "below.*")
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
    return dict(export_buttons=export_buttons, export_file=export_file, stats=stats, review_annotator=review_annotator,
                review_rule=review_rule, review_reason=review_reason, exclude_all=exclude_all, include_all=include_all,
                review_message=review_message)


def coverage_and_flagged(ctx: AppContext) -> dict:
    """Lay out where the votes went, the flagged votes with the one-vote review, and the admins' actions; by name."""
    gr.Markdown(f"### Where the human votes went\nPairwise votes; sampling strategy: "
                f"**{ctx.settings.sampling_strategy}**. Fewest votes first, so gaps are visible.")
    with gr.Tabs():
        with gr.Tab("Per model"):
            per_model = gr.DataFrame(elem_id="votes-per-model", interactive=False)
        with gr.Tab("Per pair"):
            per_pair = gr.DataFrame(elem_id="votes-per-pair", interactive=False)
        with gr.Tab("Per prompt"):
            per_prompt = gr.DataFrame(elem_id="votes-per-prompt", interactive=False, wrap=False)
    gr.Markdown("### Flagged votes\nPairwise and four-image votes excluded by the quality rules (kept, never "
                "deleted), noted for a trusted account, or reviewed by an admin, newest first, with the models "
                "shown (a four-image vote's four, by slot). An admin's decision is final. Click a row to choose the "
                "vote.")
    flagged = gr.DataFrame(elem_id="flagged-votes", interactive=False, max_height=420)
    with gr.Row():
        # a text box: Gradio's number box shows 0 when empty, an id no vote has
        vote_id = gr.Textbox(label="Vote (e.g. pairwise 12, four-image 12)", elem_id="review-vote-id", max_lines=1,
                             placeholder="Click a row, or type its id")
        vote_reason = gr.Textbox(label="Reason", elem_id="review-vote-reason", max_lines=1, value=ONE_VOTE_REASON)
        include_button = gr.Button("Include in ratings", elem_id="review-include")
        exclude_button = gr.Button("Exclude from ratings", elem_id="review-exclude")
    vote_message = gr.HTML(elem_id="vote-review-message")
    gr.Markdown("### Actions taken\nThe admins' reviews, newest first.")
    actions = gr.DataFrame(elem_id="admin-actions", interactive=False, wrap=False, max_height=320)
    return dict(per_model=per_model, per_pair=per_pair, per_prompt=per_prompt, flagged=flagged, vote_id=vote_id,
                vote_reason=vote_reason, include_button=include_button, exclude_button=exclude_button,
                vote_message=vote_message, actions=actions)


def wire_admin_tab(ctx: AppContext, view: dict) -> None:
    """Wire the admin tab's events (``view``: its components by name) to the handlers."""
    admin, refreshed = view["admin"], [view[name] for name in REFRESHED]
    # One unlock at a time on the server: guesses cannot run in parallel (the throttle counts them anyway).
    gr.on([view["unlock"].click, view["password_box"].submit], bind(ctx, unlock, name="admin_unlock"),
          [view["password_box"], admin],
          [admin, view["lock_box"], view["admin_box"], view["password_box"], *refreshed,
           view["export_buttons"][FOUR_IMAGE]],
          api_visibility="private", show_progress="hidden", concurrency_limit=1, concurrency_id="admin_unlock"
          ).success(None, js=CLOSE_TOASTS_JS)  # a refused unlock's message (a toast) does not outlive the unlock
    for exclude, button in ((True, view["exclude_all"]), (False, view["include_all"])):
        button.click(bind(ctx, review_in_bulk, f"admin_bulk_{'exclude' if exclude else 'include'}", exclude=exclude),
                     [admin, view["review_annotator"], view["review_rule"], view["review_reason"]],
                     [view["review_message"], *refreshed], api_visibility="private")
    for exclude, button in ((False, view["include_button"]), (True, view["exclude_button"])):
        button.click(bind(ctx, review_one, f"admin_review_{'exclude' if exclude else 'include'}", exclude=exclude),
                     [admin, view["vote_id"], view["vote_reason"]], [view["vote_message"], *refreshed],
                     api_visibility="private")
    view["stats"].select(pick_annotator, view["stats"], view["review_annotator"], api_visibility="private")
    view["flagged"].select(pick_vote, view["flagged"], view["vote_id"], api_visibility="private")
    for fmt, button in view["export_buttons"].items():
        button.click(bind(ctx, export, export_event(fmt), fmt=fmt), [admin], view["export_file"],
                     api_visibility="private")
    # the only admin event a program may send first (it opens the admin session); the front door refuses the others
    # without a page session the server holds
    ctx.opening_events.add("admin_unlock")
