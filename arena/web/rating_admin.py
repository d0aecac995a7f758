"""The admin tab's Human ratings section: open the rating tasks, follow the study, review flagged ratings, export.

Every function checks the page's admin session (:class:`arena.web.admin_session.AdminSessions`) as the admin tab's
own do; refusals are one log line (:func:`arena.web.context.refusal`). An admin assigns a declared task
(:mod:`judges.rating_tasks`): how many raters each item gets (the paper's number is shown: two experts for
Commonsense-T2I, three raters for SemVarBench) and which models' images, or closes it. Exports go through the same
one-time download link as the vote exports (:func:`arena.web.admin_tab.export_link`'s route).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import pandas as pd

from arena import rating_session as raters
from arena.web.context import AppContext, bind, refusal, unwritable
from datamodel.connection import database_errors
from datamodel.human_ratings import MAX_RATERS_PER_ITEM, flagged_ratings, review_rating, set_assignment
from datamodel.models import sorted_model_names
from datamodel.rating_table import EXPORT_FORMATS, export_ratings
from arena.web.admin_session import Holder, SessionEnded
from judges.rating_tasks import RATING_TASKS

# the tables' headers, in words as on the other tabs (the admin's flagged votes among them)
STATUS_HEADERS = ["Task", "Open", "Raters per item", "Paper's raters", "Models", "Items", "Begun", "Complete",
                  "Ratings", "Excluded", "Raters"]
FLAGGED_HEADERS = {"rating_id": "Rating", "rater": "Rater", "task": "Task", "answer": "Answer",
                   "created_at": "When (UTC)", "excluded": "Excluded", "reviewed": "By an admin", "reason": "Reason"}


def status_frame(ctx: AppContext, pool: raters.RatingPool) -> pd.DataFrame:
    rows = raters.study_status(ctx.store.db(), pool)
    return pd.DataFrame([[row["task"], "yes" if row["open"] else "no", row["raters_per_item"], row["paper_raters"],
                          row["models"], row["items"], row["items_begun"], row["items_complete"], row["ratings"],
                          row["excluded"], row["raters"]] for row in rows], columns=STATUS_HEADERS)


def flagged_frame(ctx: AppContext) -> pd.DataFrame:
    """The flagged ratings (:func:`datamodel.human_ratings.flagged_ratings`), their flags as yes or no."""
    table = pd.DataFrame(flagged_ratings(ctx.store.db()), columns=list(FLAGGED_HEADERS))
    for column in ("excluded", "reviewed"):
        table[column] = ["yes" if value else "no" for value in table[column]]
    return table.rename(columns=FLAGGED_HEADERS)


@dataclass(frozen=True)
class RatingAdmin:
    """What the section's handlers share: the app's context, the rating pool, the declared tasks, the admin tab's
    refusal for a locked page (``locked``) and its one-time download link (``export_link``:
    :func:`arena.web.admin_tab.export_link`)."""

    ctx: AppContext
    pool: raters.RatingPool
    tasks: dict
    locked: str
    export_link: Callable


# --- the handlers: each takes the section's RatingAdmin first (arena.web.context.bind hands it over) -----------------


def require(section: RatingAdmin, admin_id, event: str, request) -> None:
    """Refuse the call unless this page holds a live admin session, held by this address and browser."""
    if not section.ctx.admins.live(admin_id, Holder.of(request)):
        raise refusal(section.locked, event, request)


def fill(section: RatingAdmin, admin_id, request: gr.Request = None):
    ctx = section.ctx
    if not ctx.admins.live(admin_id, Holder.of(request)):
        return [gr.skip()] * 3
    return status_frame(ctx, section.pool), flagged_frame(ctx), gr.update(choices=sorted_model_names(ctx.store.db()))


def save_assignment(section: RatingAdmin, admin_id, name, raters_per_item, chosen, is_open,
                    request: gr.Request = None):
    """Open (or close) a task for ``raters_per_item`` raters per item of the ``chosen`` models' images."""
    ctx, tasks = section.ctx, section.tasks
    require(section, admin_id, "rating_admin_save", request)
    if name not in tasks:
        raise refusal("Pick a task from the menu first.", "rating_admin_save", request)
    try:
        count = int(raters_per_item) if raters_per_item is not None else 0
        saved = set_assignment(ctx.store.db(), name, raters_per_item=count, models=list(chosen or []),
                               active=bool(is_open))
    except (ValueError, LookupError) as error:
        raise refusal(error, "rating_admin_save", request)
    except database_errors() as error:
        return gr.skip(), f"**⚠ {unwritable(error, 'rating_admin_save', request, what='assignments')}**"
    text = (f"**{html.escape(tasks[name].title)}**: {'open' if saved.active else 'closed'}, "
            f"{saved.raters_per_item} rater{'s' if saved.raters_per_item != 1 else ''} per item "
            f"(the paper: {tasks[name].raters}), images of {', '.join(saved.models) or 'every model'}.")
    return status_frame(ctx, section.pool), text


def export(section: RatingAdmin, admin_id, request: gr.Request = None, *, fmt: str) -> str:
    event = f"rating_export_{fmt}"
    require(section, admin_id, event, request)
    try:
        return section.export_link(section.ctx, admin_id, fmt, Holder.of(request), export=export_ratings,
                                   what="ratings")
    except SessionEnded:
        raise refusal(section.locked, event, request)


def review(section: RatingAdmin, admin_id, rating, request: gr.Request = None, *, exclude_it: bool):
    """One flagged rating counted in the statistics again, or excluded."""
    event = f"rating_review_{'exclude' if exclude_it else 'include'}"
    require(section, admin_id, event, request)
    if rating is None:
        raise refusal("Enter the id of a rating from the table.", event, request)
    try:
        review_rating(section.ctx.store.db(), int(rating), exclude=exclude_it)
    except LookupError as error:
        raise refusal(error, event, request)
    except database_errors() as error:  # no message line here: Gradio's
        raise gr.Error(unwritable(error, event, request, what="reviews"), print_exception=False)
    return flagged_frame(section.ctx), status_frame(section.ctx, section.pool)


# --- the layout and the wiring ---------------------------------------------------------------------------------------


def build_rating_admin(ctx: AppContext, admin: gr.State, locked: str, export_link) -> None:
    """The section's components and events, inside the admin tab's unlocked column; filled when ``admin`` (the
    page's admin session id) is set, and on Refresh. ``locked``: the admin tab's refusal for a locked page;
    ``export_link``: its one-time download link (:func:`arena.web.admin_tab.export_link`)."""
    section = RatingAdmin(ctx, raters.RatingPool(), dict(RATING_TASKS), locked, export_link)
    gr.Markdown("### Human ratings\nRating tasks beside the battles (one image, one question: the Ratings tab). "
                "Open a task, choose how many raters each item gets and whose images; close it to stop serving it.")
    status = gr.DataFrame(elem_id="rating-study", interactive=False)
    with gr.Row():
        task = gr.Dropdown([(t.title, name) for name, t in section.tasks.items()], label="Task",
                           elem_id="rating-admin-task")
        per_item = gr.Number(value=2, precision=0, minimum=1, maximum=MAX_RATERS_PER_ITEM, label="Raters per item",
                             elem_id="rating-admin-raters")
        models = gr.Dropdown([], multiselect=True, label="Models (none: all)", elem_id="rating-admin-models")
        active = gr.Checkbox(value=True, label="Open", elem_id="rating-admin-open")
    with gr.Row():
        save = gr.Button("Save assignment", variant="primary", elem_id="rating-admin-save")
        refresh = gr.Button("Refresh", elem_id="rating-admin-refresh")
    message = gr.Markdown(elem_id="rating-admin-message")
    gr.Markdown("#### Export ratings\nOne row per rating: the rater, the task, the image's model and prompt, the "
                "words asked about, the answer and its value, the times and the flags.")
    with gr.Row():
        exports = {fmt: gr.Button(f"Export ratings {fmt.upper()}", elem_id=f"rating-export-{fmt}")
                   for fmt in EXPORT_FORMATS}
    export_file = gr.HTML("", elem_id="rating-export-file")
    gr.Markdown("#### Flagged ratings\nExcluded by the quality rules (kept, never deleted), reported for a trusted "
                "account, or reviewed by an admin. An admin's decision is final.")
    flagged = gr.DataFrame(elem_id="flagged-ratings", interactive=False)
    with gr.Row():
        rating_id = gr.Number(label="Rating id", precision=0, elem_id="review-rating-id")
        include = gr.Button("Count in the statistics", elem_id="review-rating-include")
        exclude = gr.Button("Exclude from the statistics", elem_id="review-rating-exclude")
    private = dict(api_visibility="private")
    gr.on([admin.change, refresh.click], bind(section, fill), admin, [status, flagged, models], **private)
    save.click(bind(section, save_assignment, "do_save"), [admin, task, per_item, models, active], [status, message],
               **private)
    for fmt, button in exports.items():
        button.click(bind(section, export, f"rating_export_{fmt}", fmt=fmt), admin, export_file, **private)
    for exclude_it, button in ((False, include), (True, exclude)):
        button.click(bind(section, review, f"rating_review_{'exclude' if exclude_it else 'include'}",
                          exclude_it=exclude_it), [admin, rating_id], [flagged, status], **private)
