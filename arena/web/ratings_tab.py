"""The Ratings tab: sign in, see one image and one question, answer on the task's scale, go on.

The human counterpart of the judges' rating tasks (:mod:`judges.rating_tasks`): the image large, the prompt, the
description or text asked about, the question as the paper words it and the answer controls of its scale, one row
per declared task (only the question's row shows: CSS reads the task from the question panel). Everything around
it is the battle page's (:mod:`arena.web.arena_tab`): the same sign-in and stay-signed-in token, the rate limits and
quality rules (:mod:`datamodel.human_ratings`; the limits' settings are the votes', their counts apart), images
only through an unguessable media token as display renditions (``rating-media/<token>``), the model told only after
the answer, keyboard shortcuts and a fixed answer bar on a phone, guidelines from the papers' instructions (open
until the first answer), progress per task.

One request per answer: its answer stores the rating and carries the next question, whose image the page has
already loaded (it came hidden with the answer before: :mod:`arena.rating_session`), and the one after it, hidden,
to load meanwhile. Answers name the question on screen by its media token.

The handlers are functions of this module that take the tab's :class:`RatingDesk` first (:func:`arena.web.context.bind`
hands it to them); :func:`build_ratings_tab` only lays the tab out and wires its events. Its script and stylesheet are
``static/ratings.html`` and ``static/ratings.css``; what they need from the declared tasks comes from
:func:`rating_keys` (the page's ``#rating-keys`` data) and :func:`answer_rows_css`.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call.
"""

import html
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from arena import rating_session as raters
from arena.ratelimit import RateLimited, RateLimiter, client_address
from arena.session import signed_in_annotator
from arena.web import rating_notices as notices
from arena.web.context import AppContext, bind, refusal, throttled_sign_in, unwritable
from arena.web.render import countdown_text, escape_markdown, speed_notice
from arena.web.sign_in import sign_in_form, wire_sign_in
from datamodel.annotators import SignInError
from datamodel.connection import database_errors
from datamodel.human_ratings import Serving, rating_standing
from datamodel.rating_scales import ChoiceScale, RatingRejected, ScoresScale
from judges.rating_tasks import RATING_TASKS, RatingTask

ALL_TASKS = "All open tasks"
SKIP_KEY = "S"
ANOTHER_QUESTION = "That button belongs to another question: answer the one on screen."

# What the handlers answer, in this order (the events' outputs: wire_ratings_tab), the score radios after these
ITEM_VIEW = ("state", "status", "image", "item", "on_screen")
SIGNED_IN = ("signin_message", "signin_box", "rating_box", "task_filter", "guidelines_box", "guidelines")


def _control_id(task: str, part: str) -> str:
    return f"rate-{task.replace('_', '-')}-{part}"


def answer_rows_css() -> str:
    """The page's CSS rules that show only the answer row of the question's task (``static/ratings.css`` hides them
    all; a choice scale's is a grid whose columns ``static/ratings.html`` sets), one per declared task, and only the
    question's task's guidelines (:func:`guidelines_markdown`); then the key hints, only where there is a keyboard
    and a fine pointer (never on a touch screen, as the Arena tab's), one rule per control (Gradio splits a media
    rule's selector lists)."""
    rows = [f".gradio-container:has(#rating-item [data-task=\"{name}\"]) #{_control_id(name, 'row')} "
            f"{{ display: {'grid' if isinstance(task.scale, ChoiceScale) else 'flex'} !important; }}"
            for name, task in RATING_TASKS.items()]
    rows += [f".gradio-container:has(#rating-item [data-task=\"{name}\"]) #rating-guidelines "
             f".rating-guide:not(.{_control_id(name, 'guide')}) {{ display: none; }}" for name in RATING_TASKS]
    hints = {"rating-skip": SKIP_KEY}
    for name, task in RATING_TASKS.items():
        if isinstance(task.scale, ChoiceScale):
            hints.update({_control_id(name, str(point.value)): point.key.upper() for point in task.scale.points
                          if not point.label.startswith(point.key)})
        else:
            hints[_control_id(name, "submit")] = "Enter"
    rules = " ".join(f'#{element}::after {{ content: "\\00a0({key})"; }}' for element, key in hints.items())
    return "\n".join(rows) + f"\n@media (hover: hover) and (pointer: fine) {{ {rules} }}"


def rating_keys() -> dict:
    """Every task's keys, which ``static/ratings.html`` reads from the page's ``#rating-keys`` data: ``skip``, the Skip
    key; per task, a choice scale's ``points`` (key: the button's id) or a scores scale's ``scores`` (the radios'
    ids), ``submit``, ``step`` and ``high``."""
    keys: dict[str, dict[str, Any]] = {}
    for name, task in RATING_TASKS.items():
        scale = task.scale
        if isinstance(scale, ChoiceScale):
            # a point's own key first, then its value, then its position (a 0-10 scale's "1" is 1)
            points: dict[str, str] = {}
            for pick in (lambda p, _: p.key.lower(), lambda p, _: str(p.value), lambda _, position: str(position)):
                for position, point in enumerate(scale.points, start=1):
                    points.setdefault(pick(point, position), _control_id(name, str(point.value)))
            keys[name] = {"points": points}
        else:
            keys[name] = {"scores": [_control_id(name, score.name) for score in scale.scores],
                          "submit": _control_id(name, "submit"), "step": _score_step(scale), "high": scale.high}
    return {"skip": SKIP_KEY.lower(), "tasks": keys}


def _score_step(scale: ScoresScale) -> int:
    values = sorted({value for anchors in (scale.anchors or {}).values() for value, _ in anchors})
    return values[1] - values[0] if len(values) > 1 else 1


def _score_choices(scale: ScoresScale, name: str) -> list[int]:
    anchors = (scale.anchors or {}).get(name)
    return sorted(value for value, _ in anchors) if anchors else list(range(scale.low, scale.high + 1))


def image_url(media_token: str) -> str:
    return f"rating-media/{html.escape(media_token)}"


def image_html(serving: Serving | None, upcoming: Serving | None = None) -> str:
    """The image of the question on screen (a click enlarges it), and ``upcoming``'s hidden, to load meanwhile."""
    preload = f'<img src="{image_url(upcoming.media_token)}" alt="" hidden>' if upcoming is not None else ""
    if serving is None:
        return f'<figure class="battle-image rating-figure"></figure>{preload}'
    return (f'<figure class="battle-image rating-figure"><img class="rating-shown" '
            f'src="{image_url(serving.media_token)}" alt="The image to rate"></figure>{preload}')


def question_html(task: RatingTask | None, serving: Serving | None, message: str = "") -> str:
    """The question panel: the task, the prompt, the words asked about, the question and the criteria; its
    ``data-task`` names the task for CSS (which answer row shows) and the keys."""
    if serving is None or task is None:
        return f'<div class="rating-panel rating-empty"><p>{html.escape(message)}</p></div>'
    e = html.escape
    parts = [f'<div class="rating-panel" data-task="{e(task.name)}">', f'<p class="rating-title">{e(task.title)}</p>']
    if task.show_prompt:
        parts.append(f'<p class="rating-asked"><b>Prompt:</b> {e(serving.prompt)}</p>')
    if task.text_label:
        parts.append(f'<p class="rating-asked"><b>{e(task.text_label)}:</b> {e(serving.shown_text)}</p>')
    parts.append(f'<p class="rating-question">{e(task.question)}</p>')
    criteria = task.criteria_for(serving.metadata, serving.subset)
    if criteria:
        parts.append(f'<p class="rating-criteria">{e(criteria)}</p>')
    return "".join(parts) + "</div>"


def guidelines_markdown(tasks: dict) -> str:
    """Each open task's guidelines, titled, with where the paper says so, each in a block named by its task: only the
    block of the question's task shows (:func:`answer_rows_css`; every block when no question is on screen), so that
    "All open tasks" does not set every task's guidelines before the rater at once. The menu's pick of a task shows
    that task's questions, and with them its guidelines."""
    if not tasks:
        return "No rating task is open yet."
    blocks = []
    for task in tasks.values():
        blocks.append(f'<div class="rating-guide {_control_id(task.name, "guide")}">\n\n'
                      f"#### {escape_markdown(task.title)}\n\n{task.guidelines}\n\n*{escape_markdown(task.source)}.*"
                      "\n\n</div>")
    return "\n\n".join(blocks) + f"\n\nSkip a question you cannot judge with **Skip ({SKIP_KEY})**."


@dataclass(frozen=True)
class RatingDesk:
    """What the Ratings tab's handlers share besides the app's context: the declared tasks, the rating pool, and the
    battle page's limits and settings, counted apart and worded for answers: per annotator and per address a minute,
    and questions loaded without an answer (sign-in, Skip, a task change: each writes a serving row)."""

    ctx: AppContext
    declared: dict
    pool: raters.RatingPool
    limits: dict
    radios: int  # the score radios among the outputs, each cleared (None) with every new question

    @classmethod
    def of(cls, ctx: AppContext) -> "RatingDesk":
        settings, declared = ctx.settings, dict(RATING_TASKS)
        answers = dict(noun="answers", advice="Look at the image a little longer and answer again")
        loads = dict(noun="new questions", advice="Answer the question on screen, or load another")
        limits = dict(
            annotator=RateLimiter(settings.rate_limit_annotator_per_minute, "per annotator", **answers),
            client=RateLimiter(settings.rate_limit_client_per_minute, "from one address", **answers),
            skip=RateLimiter(settings.rate_limit_skips_per_minute, "per annotator", **loads),
            client_skip=RateLimiter(settings.rate_limit_client_per_minute, "from one address", **loads))
        radios = sum(len(task.scale.scores) for task in declared.values() if not isinstance(task.scale, ChoiceScale))
        return cls(ctx, declared, raters.RatingPool(), limits, radios)

    @property
    def open_signup(self) -> bool:
        return not self.ctx.settings.annotator_accounts

    @property
    def outputs(self) -> int:
        return len(ITEM_VIEW) + self.radios


# --- the handlers: each takes the tab's desk first (arena.web.context.bind hands it over) ----------------------------


def status_line(desk: RatingDesk, session: raters.RatingSession, notice: str = "", error: str = "") -> str:
    """Who is signed in, their answers so far and those that count, the progress in the task on screen, the receipt
    of the last answer (and the model, once the rater's answers on its unit are all in), then, each as a warning of
    its own, why answers do not count, the bias rule when it is near (:mod:`arena.web.rating_notices`), a notice
    and an error (a wait "in N s" counts down)."""
    standing = rating_standing(desk.ctx.store.db(), signed_in_annotator(session).id)
    rules = desk.ctx.settings.quality_rules
    line = f"Signed in as **{escape_markdown(signed_in_annotator(session).name)}** · {notices.answers_text(standing)}"
    current = session.current
    if current is not None:
        done, total = raters.progress(desk.ctx.store.db(), session, current.task, desk.pool)
        title = notices.short_title(desk.declared[current.task]) if current.task in desk.declared else current.task
        line += f" · {min(done, total)} of {total} items of {escape_markdown(title)}"
    receipt = session.receipt
    if receipt is not None:  # the model only once the rater's answers on its unit are all in (a phone folds the rest)
        line += f'\n\n<span class="rating-saved">Saved: **{escape_markdown(receipt.label)}**.</span>'
        if session.revealed is not None:
            line += f" That item done: it was drawn by **{escape_markdown(session.revealed)}**."
    warnings = [escape_markdown(text) for text in (notices.set_aside_text(standing, rules, desk.declared),
                                                    notices.bias_notice(standing, rules, desk.declared)) if text]
    warnings += [notice] if notice else []  # the app's own words
    for text in warnings:  # a phone shows each in two lines (a tap unfolds it), the refusal below whole
        line += f'\n\n<span class="rating-warning">⚠ {text}</span>'
    if error:
        line += f'\n\n<span class="rating-warning rating-refusal">⚠ {countdown_text(escape_markdown(error))}</span>'
    return line


def item_view(desk: RatingDesk, session: raters.RatingSession, message: str = "", notice: str = "",
              error: str = "") -> list:
    """The question on screen (:data:`ITEM_VIEW`, then the score radios, cleared): plain values, never component
    updates, on the answer's path, as on the battle page."""
    current = session.current
    task = desk.declared.get(current.task) if current is not None else None
    return [session, status_line(desk, session, notice, error), image_html(current, session.upcoming),
            question_html(task, current, message), current.media_token if current is not None else "",
            *[None] * desk.radios]


def told(desk: RatingDesk, session: raters.RatingSession, line: str) -> list:
    """A refused or unsaved answer or question, told in words (``line``) on the status line; the rest stays."""
    return [session, status_line(desk, session, error=line), *[gr.skip()] * (desk.outputs - 2)]


def refused(desk: RatingDesk, session: raters.RatingSession, error: Exception, event: str, request) -> list:
    refusal(error, event, request)
    return told(desk, session, str(error))


def chosen_task(desk: RatingDesk, value, request=None) -> str | None:
    if value is None or value == ALL_TASKS:
        return None
    if not isinstance(value, str) or value not in desk.declared:
        raise refusal(f"Unknown task {str(value)[:60]!r}: pick one from the Task menu.", "rating_task", request)
    return value


def require(session, event: str, request) -> raters.RatingSession:
    if session is None or not getattr(session, "signed_in", False):
        raise refusal("Sign in with your name and token first.", event, request)
    return session


def load(desk: RatingDesk, session: raters.RatingSession, task: str | None, request, *, skipping: bool = False) -> list:
    """A new question from the server (sign-in, Skip, a task picked), under the limits of loads."""
    event = "rating_skip" if skipping else "rating_next"
    db, rng = desk.ctx.store.db(), desk.ctx.rng
    try:
        desk.limits["skip"].check(signed_in_annotator(session).name)
        desk.limits["client_skip"].check(client_address(request))
        if skipping:
            session = raters.skip(db, rng, session, pool=desk.pool, task_filter=task)
        else:
            session = raters.next_question(db, rng, session, pool=desk.pool, task_filter=task)
    except raters.NoQuestionAvailable as error:
        return item_view(desk, raters.without_question(session), str(error))
    except (RateLimited, RatingRejected) as error:
        return refused(desk, session, error, "rating_next", request)
    except database_errors() as error:
        return told(desk, session, unwritable(error, event, request, what="your place"))
    return item_view(desk, session)


def next_item(desk: RatingDesk, session, task, request: gr.Request | None = None) -> list:
    session = require(session, "rating_next", request)
    return load(desk, session, chosen_task(desk, task, request), request)


def skip_item(desk: RatingDesk, session, task, request: gr.Request | None = None) -> list:
    session = require(session, "rating_skip", request)
    return load(desk, session, chosen_task(desk, task, request), request, skipping=True)


def opened(desk: RatingDesk, session: raters.RatingSession) -> list:
    """The page once signed in (:data:`SIGNED_IN`): the open tasks in the menu, the guidelines open on the first
    visit."""
    tasks = {name: task for name, (task, _, _) in raters.open_tasks(desk.ctx.store.db()).items()}
    choices = [ALL_TASKS, *((task.title, name) for name, task in tasks.items())]
    return ["", gr.update(visible=False), gr.update(visible=True), gr.update(choices=choices, value=ALL_TASKS),
            gr.update(open=session.ratings == 0), guidelines_markdown(tasks)]


def sign_in(desk: RatingDesk, name: str, token: str, request: gr.Request | None = None) -> list:
    """Sign in and show a question; a refusal is said under the form, which keeps what was typed."""
    ctx, settings = desk.ctx, desk.ctx.settings
    skipped = [gr.skip()] * (len(SIGNED_IN) + desk.outputs)  # the message's outputs first
    try:  # as the Arena tab's: a wrong token is a guess, bad input is not
        session = throttled_sign_in(ctx, request, name, lambda: raters.start(
            ctx.store.db(), name, token, open_signup=desk.open_signup, min_token_length=settings.min_token_length))
        session = raters.issue_resume(ctx.store.db(), session, days=settings.session_days)
    except (RateLimited, SignInError) as error:
        refusal(error, "rating_sign_in", request, warn=isinstance(error, SignInError))
        return [f"**⚠ {escape_markdown(str(error))}**", *skipped]
    except database_errors() as error:
        return [f"**⚠ {escape_markdown(unwritable(error, 'rating_sign_in', request, what='your sign-in'))}**",
                *skipped]
    return [*opened(desk, session), *load(desk, session, None, request), session.resume_token or ""]


def resume(desk: RatingDesk, token: str, request: gr.Request | None = None) -> list:
    """The page-load event: a page that kept its sign-in token gets its question again."""
    session = raters.resume(desk.ctx.store.db(), token, open_signup=desk.open_signup) if token else None
    if session is None:
        return [gr.skip()] * (len(SIGNED_IN) + desk.outputs + 1)
    return [*opened(desk, session), *load(desk, session, None, request), gr.skip()]


def sign_out(desk: RatingDesk, session) -> list:
    raters.sign_out(desk.ctx.store.db(), session)
    return [gr.update(visible=True), gr.update(visible=False), None]


def answer(desk: RatingDesk, session, task, shown, given, request) -> list:
    """Store ``given`` (scale name: value) for the question on screen and show the next."""
    session = require(session, "rating_answer", request)
    task = chosen_task(desk, task, request)
    settings = desk.ctx.settings
    try:
        desk.limits["annotator"].check(session.annotator.name)
        desk.limits["client"].check(client_address(request))
        session = raters.answer(desk.ctx.store.db(), session, given, pool=desk.pool, rng=desk.ctx.rng,
                                rules=settings.quality_rules, task_filter=task,
                                on_screen=shown if isinstance(shown, str) and shown else None)
    except (RatingRejected, RateLimited) as error:
        return refused(desk, session, error, "rating_answer", request)
    except database_errors() as error:
        return told(desk, session, unwritable(error, "rating_answer", request, what="answers"))
    answered = desk.declared.get(session.receipt.task) if session.receipt is not None else None
    paced = replace(settings.quality_rules, fast_seconds=answered.pace) if answered else settings.quality_rules
    notice = speed_notice(session.fast_run, paced, session.annotator.source, doing="answering", noun="answers",
                          look="the image")
    message = "" if session.current is not None else (
        "Nothing left to rate here: thank you! Pick another task, or come back when the admin opens more.")
    return item_view(desk, session, message, notice)


def answer_choice(desk: RatingDesk, session, task, shown=None, request: gr.Request | None = None, *, task_name: str,
                  value: int) -> list:
    """A choice scale's button (``task_name``'s point ``value``)."""
    if session is not None and session.current is not None and session.current.task != task_name:
        return refused(desk, session, RatingRejected(ANOTHER_QUESTION), "rating_answer", request)
    return answer(desk, session, task, shown, {desk.declared[task_name].scale.name: value}, request)


def answer_scores(desk: RatingDesk, session, task, shown, request: gr.Request | None = None, *values,
                  task_name: str) -> list:
    """A scores scale's Send (``task_name``'s radios' ``values``, one per score; the request before them, where
    Gradio hands it over: after them it never came, and the per-address limit counted every such answer as one
    address's)."""
    if session is not None and session.current is not None and session.current.task != task_name:
        return refused(desk, session, RatingRejected(ANOTHER_QUESTION), "rating_answer", request)
    return answer(desk, session, task, shown, dict(zip(desk.declared[task_name].scale.names, values)), request)


# --- the layout and the wiring ---------------------------------------------------------------------------------------


def build_ratings_tab(ctx: AppContext) -> gr.State:
    """Lay out the Ratings tab and wire its events to the handlers above; the signed-in session's state."""
    desk = RatingDesk.of(ctx)
    form = sign_in_form("Sign in to rate images (the same account as on the Arena tab). "
                        + ("Pick a name and a token (a password you will reuse)." if desk.open_signup
                           else "Use the account your admin gave you."), prefix="rating-")
    with gr.Column(visible=False, elem_id="rating-box") as rating_box:
        with gr.Row(elem_id="rating-head"):
            status = gr.Markdown(elem_id="rating-status")
            # on a phone the task menu and Sign out fold behind this toggle (static/ratings.html opens and closes it)
            gr.HTML('<button class="rating-menu-toggle" type="button" aria-expanded="false">Task ▾</button>',
                    elem_id="rating-menu", container=False, min_height=0)
            task_filter = gr.Dropdown([ALL_TASKS], value=ALL_TASKS, label="Task", show_label=False, container=False,
                                      elem_id="rating-task", scale=0, min_width=220)
            sign_out_button = gr.Button("Sign out", size="sm", elem_id="rating-sign-out", scale=0, min_width=90)
        with gr.Row(elem_id="rating-row"):
            with gr.Column(scale=3, min_width=300):
                image = gr.HTML(elem_id="rating-image")  # the image, large; the next one hidden, loading
            with gr.Column(scale=2, min_width=300):
                item = gr.HTML(elem_id="rating-item")  # the task, prompt, words asked about, question (data-task)
                with gr.Column(elem_id="rating-bar"):
                    controls = answer_controls(desk.declared)
                    skip_button = gr.Button("Skip", size="sm", elem_id="rating-skip")
        with gr.Accordion("Guidelines", open=True, elem_id="rating-guidelines") as guidelines_box:
            guidelines = gr.Markdown(elem_id="rating-guidelines-text")
        on_screen = gr.Textbox(visible=False, elem_id="rating-on-screen")  # the media token of the question shown
    view = dict(state=gr.State(None), status=status, image=image, item=item, on_screen=on_screen,  # a RatingSession
                signin_message=form.message, signin_box=form.box, rating_box=rating_box, task_filter=task_filter,
                guidelines_box=guidelines_box, guidelines=guidelines, sign_out_button=sign_out_button,
                skip_button=skip_button, issued=gr.Textbox(visible=False), stored=gr.Textbox(visible=False))
    wire_ratings_tab(desk, form, view, controls)
    return view["state"]


def answer_controls(declared: dict) -> dict:
    """One row of answer controls per declared task (CSS shows the question's): a choice scale's buttons, or a scores
    scale's radios and its Send. By kind: ``choices`` ((task, value): button), ``radios`` (task: its radios, in
    order) and ``submits`` (task: Send)."""
    choices: dict[tuple[str, int], gr.Button] = {}
    radios: dict[str, list[gr.Radio]] = {}
    submits: dict[str, gr.Button] = {}
    for name, task in declared.items():
        choice = isinstance(task.scale, ChoiceScale)
        with gr.Row(elem_id=_control_id(name, "row"), elem_classes=["rating-controls"] + ["rating-choices"] * choice):
            if choice:
                for point in task.scale.points:  # every answer alike (the papers' scales are neutral)
                    choices[(name, point.value)] = gr.Button(point.label, elem_id=_control_id(name, str(point.value)),
                                                             variant="secondary", min_width=60)
                continue
            radios[name] = [gr.Radio([(str(v), v) for v in _score_choices(task.scale, score.name)],
                                     label=f"{score.label} ({task.scale.low}-{task.scale.high})",
                                     elem_id=_control_id(name, score.name), elem_classes=["rating-score"])
                            for score in task.scale.scores]
            submits[name] = gr.Button("Send", variant="primary", min_width=90,
                                      elem_id=_control_id(name, "submit"))
    return dict(choices=choices, radios=radios, submits=submits)


def wire_ratings_tab(desk: RatingDesk, form, view: dict, controls: dict) -> None:
    """Wire the Ratings tab's events (``view``: its components by name) to the handlers. As on the battle page,
    answers and questions skip Gradio's queue and its pre- and postprocessing (arena.web.arena_tab.wire_arena_tab)."""
    state, task_filter = view["state"], view["task_filter"]
    item_outputs = [*(view[n] for n in ITEM_VIEW), *(r for radios in controls["radios"].values() for r in radios)]
    wire_sign_in(desk.ctx, form, api_name="rating_sign_in", sign_in=bind(desk, sign_in),
                 inputs=[form.name, form.token], outputs=[*(view[n] for n in SIGNED_IN), *item_outputs,
                                                          view["issued"]],
                 issued=view["issued"], resume=bind(desk, resume), stored=view["stored"], sign_out=bind(desk, sign_out),
                 sign_out_button=view["sign_out_button"], state=state, tab_box=view["rating_box"])
    fast = dict(queue=False, preprocess=False, postprocess=False)
    task_filter.select(bind(desk, next_item), [state, task_filter], item_outputs, api_name="rating_next", **fast)
    view["skip_button"].click(bind(desk, skip_item), [state, task_filter], item_outputs, api_name="rating_skip",
                              **fast)
    for (name, value), button in controls["choices"].items():
        api_name = f"rate_{name}_{value}"
        button.click(bind(desk, answer_choice, api_name, task_name=name, value=value),
                     [state, task_filter, view["on_screen"]], item_outputs, api_name=api_name, **fast)
    for name, button in controls["submits"].items():
        button.click(bind(desk, answer_scores, f"rate_{name}", task_name=name),
                     [state, task_filter, view["on_screen"], *controls["radios"][name]], item_outputs,
                     api_name=f"rate_{name}", **fast)
