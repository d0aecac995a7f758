"""The admin tab's Human ratings section: open the rating tasks, follow the study, review flagged ratings, export.

Every function checks the page's admin session (:class:`arena.web.admin_session.AdminSessions`) as the admin tab's
own do; refusals are one log line (:func:`arena.web.context.refusal`). An admin assigns a declared task
(:mod:`judges.rating_tasks`): how many raters each item gets (the paper's number is shown: two experts for
Commonsense-T2I, three raters for SemVarBench) and which models' images, or closes it. Exports go through the same
one-time download link as the vote exports (:func:`arena.web.admin_tab.export_link`'s route).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from arena import rating_session as raters
from arena.web.admin_session import Holder, SessionEnded
from arena.web.context import AppContext, bind, done, picked_cell, refusal, refused_text, unwritable
from arena.web.rating_notices import answer_words, short_title
from datamodel.connection import database_errors
from datamodel.human_ratings import (
    BIAS_WORDS,
    MAX_RATERS_PER_ITEM,
    flagged_ratings,
    rating_raters,
    review_ratings,
    set_assignment,
)
from datamodel.models import sorted_model_names
from datamodel.rating_table import EXPORT_FORMATS, export_ratings
from judges.rating_tasks import RATING_TASKS

# the tables' headers, in words as on the other tabs (the admin's flagged votes among them)
STATUS_HEADERS = ["Task", "Open", "Raters per item", "Paper's raters", "Models", "Items", "Begun", "Complete",
                  "Ratings", "Excluded", "Raters"]
FLAGGED_HEADERS = {"rating_id": "Rating", "rater": "Rater", "task": "Task", "answer": "Answer",
                   "created_at": "When (UTC)", "excluded": "Excluded", "reviewed": "By an admin", "reason": "Reason"}


def status_frame(ctx: AppContext, pool: raters.RatingPool) -> pd.DataFrame:
    rows = raters.study_status(ctx.store.db(), pool)
    return pd.DataFrame([[_title(row["task"]), "yes" if row["open"] else "no", row["raters_per_item"],
                          row["paper_raters"], row["models"], row["items"], row["items_begun"], row["items_complete"],
                          row["ratings"], row["excluded"], row["raters"]] for row in rows], columns=STATUS_HEADERS)


def flagged_frame(ctx: AppContext) -> pd.DataFrame:
    """The flagged ratings (:func:`datamodel.human_ratings.flagged_ratings`): the task by its title, the answer in
    words as the rater read it, the flags as yes or no."""
    table = pd.DataFrame(flagged_ratings(ctx.store.db()), columns=list(FLAGGED_HEADERS))
    table["answer"] = [answer_words(RATING_TASKS.get(task, None), answer)
                       for task, answer in zip(table["task"], table["answer"])]
    table["task"] = [_title(task) for task in table["task"]]
    table["reason"] = [_BIAS_REASON.sub(_bias_words, reason or "") for reason in table["reason"]]
    for column in ("excluded", "reviewed"):
        table[column] = ["yes" if value else "no" for value in table[column]]
    return table.rename(columns=FLAGGED_HEADERS)


# the bias rule's reason names the task and the answer as stored (datamodel.human_ratings.straight_lining)
_BIAS_REASON = re.compile(re.escape(BIAS_WORDS) + r"(\w+) answers are (\{[^}]*\})")


def _bias_words(match: re.Match) -> str:
    task = RATING_TASKS.get(match.group(1), None)
    name = short_title(task) if task is not None else match.group(1)
    return f"{BIAS_WORDS}{name} answers are “{answer_words(task, match.group(2))}”"


def _title(task: str) -> str:
    declared = RATING_TASKS.get(task, None)
    return declared.title if declared is not None else task


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


def fill(section: RatingAdmin, admin_id, request: gr.Request | None = None):
    ctx = section.ctx
    if not ctx.admins.live(admin_id, Holder.of(request)):
        return [gr.skip()] * 4
    return (status_frame(ctx, section.pool), flagged_frame(ctx), gr.update(choices=sorted_model_names(ctx.store.db())),
            gr.update(choices=rating_raters(ctx.store.db())))


def save_assignment(section: RatingAdmin, admin_id, name, raters_per_item, chosen, is_open,
                    request: gr.Request | None = None):
    """Open (or close) a task for ``raters_per_item`` raters per item of the ``chosen`` models' images."""
    ctx, tasks = section.ctx, section.tasks
    require(section, admin_id, "rating_admin_save", request)
    if name not in tasks:
        raise refusal("Pick a task from the menu first.", "rating_admin_save", request)
    try:
        count = int(float(raters_per_item)) if raters_per_item not in (None, "") else 0
        saved = set_assignment(ctx.store.db(), name, raters_per_item=count, models=list(chosen or []),
                               active=bool(is_open))
    except (ValueError, LookupError, TypeError, OverflowError) as error:  # said on the message line, the table stays
        refusal(error, "rating_admin_save", request)
        return gr.skip(), refused_text(str(error))
    except database_errors() as error:
        return gr.skip(), refused_text(unwritable(error, 'rating_admin_save', request, what='assignments'))
    text = (f"{tasks[name].title}: {'open' if saved.active else 'closed'}, "
            f"{saved.raters_per_item} rater{'s' if saved.raters_per_item != 1 else ''} per item "
            f"(the paper: {tasks[name].raters}), images of {', '.join(saved.models) or 'every model'}.")
    return status_frame(ctx, section.pool), done(text)


def export(section: RatingAdmin, admin_id, request: gr.Request | None = None, *, fmt: str) -> str:
    event = f"rating_export_{fmt}"
    require(section, admin_id, event, request)
    try:
        return section.export_link(section.ctx, admin_id, fmt, Holder.of(request), export=export_ratings,
                                   what="ratings")
    except SessionEnded:
        raise refusal(section.locked, event, request) from None


def review(section: RatingAdmin, admin_id, rating, reason: str = "", request: gr.Request | None = None, *,
           exclude_it: bool):
    """One flagged rating counted in the statistics again, or excluded, with the admin's reason."""
    event = f"rating_review_{'exclude' if exclude_it else 'include'}"
    require(section, admin_id, event, request)
    text = str(rating if rating is not None else "").strip()
    if not text.isdigit():
        return (refused_text("Enter the id of a rating from the table (or click its row)." if not text else
                             f"{text[:40]!r} is not a rating id: type the number in the Rating column."),
                gr.skip(), gr.skip())
    return reviewed(section, event, request, exclude=exclude_it, reason=reason, rating_id=int(text))


def review_rater(section: RatingAdmin, admin_id, rater, reason: str = "", request: gr.Request | None = None, *,
                 exclude_it: bool):
    """All of one rater's ratings counted in the statistics, or excluded, with the admin's reason."""
    event = f"rating_review_rater_{'exclude' if exclude_it else 'include'}"
    require(section, admin_id, event, request)
    if not isinstance(rater, str) or not rater:
        return refused_text("Pick a rater from the menu first."), gr.skip(), gr.skip()
    return reviewed(section, event, request, exclude=exclude_it, reason=reason, rater=rater)


def reviewed(section: RatingAdmin, event: str, request, **action):
    """The review ``action`` (:func:`datamodel.human_ratings.review_ratings`) confirmed on the message line, or why
    it was not taken; then the flagged ratings and the study."""
    try:
        message = done(review_ratings(section.ctx.store.db(), **action))
    except (LookupError, ValueError, OverflowError) as error:
        refusal(error, event, request)
        return refused_text(str(error)), gr.skip(), gr.skip()
    except database_errors() as error:
        return refused_text(unwritable(error, event, request, what="reviews")), gr.skip(), gr.skip()
    return message, flagged_frame(section.ctx), status_frame(section.ctx, section.pool)


def pick_rating(table: pd.DataFrame, evt: gr.SelectData):
    """A click on a row of the flagged ratings chooses that rating."""
    return picked_cell(table, evt, "Rating", int)


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
        # no minimum or maximum here: Gradio would refuse a 0 with a bare "Error"; the handler says why in words
        per_item = gr.Number(value=2, precision=0, label=f"Raters per item (1 to {MAX_RATERS_PER_ITEM})",
                             elem_id="rating-admin-raters")
        models = gr.Dropdown([], multiselect=True, label="Models (none: all)", elem_id="rating-admin-models")
        active = gr.Checkbox(value=True, label="Open", elem_id="rating-admin-open")
    with gr.Row():
        save = gr.Button("Save assignment", variant="primary", elem_id="rating-admin-save")
        refresh = gr.Button("Refresh", elem_id="rating-admin-refresh")
    message = gr.HTML(elem_id="rating-admin-message")
    gr.Markdown("#### Export ratings\nOne row per rating: the rater, the task, the image's model and prompt, the "
                "words asked about, the answer and its value, the times and the flags.")
    with gr.Row():
        exports = {fmt: gr.Button(f"Export ratings {fmt.upper()}", elem_id=f"rating-export-{fmt}")
                   for fmt in EXPORT_FORMATS}
    export_file = gr.HTML("", elem_id="rating-export-file")
    view = review_controls()
    private: dict[str, Any] = dict(api_visibility="private")
    gr.on([admin.change, refresh.click], bind(section, fill), admin, [status, view["flagged"], models, view["rater"]],
          **private)
    save.click(bind(section, save_assignment, "do_save"), [admin, task, per_item, models, active], [status, message],
               **private)
    for fmt, button in exports.items():
        button.click(bind(section, export, f"rating_export_{fmt}", fmt=fmt), admin, export_file, **private)
    wire_reviews(section, admin, view, status)


def review_controls() -> dict:
    """Lay out the flagged ratings with the one-rating review and the per-rater review; by name."""
    gr.Markdown("#### Flagged ratings\nExcluded by the quality rules (kept, never deleted), reported for a trusted "
                "account, or reviewed by an admin. An admin's decision is final; the rules' reason stays with it. "
                "Click a row to choose the rating.")
    view: dict[str, Any] = dict(flagged=gr.DataFrame(elem_id="flagged-ratings", interactive=False, max_height=420))
    with gr.Row():
        view["rating_id"] = gr.Textbox(label="Rating id", elem_id="review-rating-id", max_lines=1,
                                       placeholder="Click a row, or type its id")  # a number box shows 0 empty
        view["rating_reason"] = gr.Textbox(label="Reason", elem_id="review-rating-reason", max_lines=1)
        view["include"] = gr.Button("Count in the statistics", elem_id="review-rating-include")
        view["exclude"] = gr.Button("Exclude from the statistics", elem_id="review-rating-exclude")
    with gr.Row():
        view["rater"] = gr.Dropdown([], label="All of one rater's ratings", elem_id="rating-review-rater")
        view["rater_reason"] = gr.Textbox(label="Reason", elem_id="rating-review-rater-reason", max_lines=1)
        view["rater_include"] = gr.Button("Count all of them", elem_id="rating-review-rater-include")
        view["rater_exclude"] = gr.Button("Exclude all of them", elem_id="rating-review-rater-exclude")
    view["message"] = gr.HTML(elem_id="rating-review-message")  # what the last review did, or why not
    return view


def wire_reviews(section: RatingAdmin, admin: gr.State, view: dict, status) -> None:
    """The reviews' events: a row click picks the rating; each action answers on the message line."""
    private: dict[str, Any] = dict(api_visibility="private")
    outputs = [view["message"], view["flagged"], status]
    for exclude_it in (False, True):
        word = "exclude" if exclude_it else "include"
        view[word].click(bind(section, review, f"rating_review_{word}", exclude_it=exclude_it),
                         [admin, view["rating_id"], view["rating_reason"]], outputs, **private)
        view[f"rater_{word}"].click(bind(section, review_rater, f"rating_review_rater_{word}", exclude_it=exclude_it),
                                    [admin, view["rater"], view["rater_reason"]], outputs, **private)
    view["flagged"].select(pick_rating, view["flagged"], view["rating_id"], **private)
