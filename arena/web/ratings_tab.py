"""The Ratings tab: sign in, see one image and one question, answer on the task's scale, go on.

The human counterpart of the judges' rating tasks (:mod:`judges.rating_tasks`): the image large, the prompt, the
description or text asked about, the question as the paper words it and the answer controls of its scale, one row
per declared task (only the question's row shows: CSS reads the task from the question panel). Everything around
it is the battle page's (:mod:`arena.web.arena_tab`): the same sign-in and stay-signed-in token, the rate limits and
quality rules (:mod:`datamodel.human_ratings`; the limits' settings are the votes', their counts apart), images only through an unguessable media token as display
renditions (``rating-media/<token>``), the model told only after the answer, keyboard shortcuts and a fixed answer
bar on a phone, guidelines from the papers' instructions (open until the first answer), progress per task.

One request per answer: its answer stores the rating and carries the next question, whose image the page has
already loaded (it came hidden with the answer before: :mod:`arena.rating_session`), and the one after it, hidden,
to load meanwhile. Answers name the question on screen by its media token.

No ``from __future__ import annotations`` here: Gradio reads the handlers' type hints on every call.
"""

import html
import json

import gradio as gr

from arena import rating_session as raters
from arena.ratelimit import RateLimited, RateLimiter, client_address
from arena.web.arena_tab import FORGET_RESUME_JS, KEEP_RESUME_JS, READ_RESUME_JS
from arena.web.context import SIGN_IN_QUEUE, AppContext, refusal, throttled_sign_in
from arena.web.render import escape_markdown, speed_notice
from datamodel.annotators import SignInError
from datamodel.human_ratings import Serving
from datamodel.rating_scales import ChoiceScale, RatingRejected, ScoresScale
from judges.rating_tasks import RATING_TASKS, RatingTask

ALL_TASKS = "All open tasks"
SKIP_KEY = "S"

# Keys, per task: a choice scale's points by their key (and digits by position); a scores scale's digits 0-5 fill
# the next empty score in tens, Enter sends, Backspace clears. Answers wait until the image on screen has loaded
# ("rating-image-pending" on the page, as the battle page's "images-pending").
RATING_JS = """
<script>
window.ratingImageShown = () => {
  const image = document.querySelector('#rating-image img.rating-shown');
  return !!image && image.complete && image.naturalWidth > 0;
};
const ratingMark = () => document.documentElement.classList.toggle('rating-image-pending', !window.ratingImageShown());
document.addEventListener('load', ratingMark, true);
document.addEventListener('error', ratingMark, true);
const ratingWatch = () => {
  new MutationObserver(ratingMark).observe(document.body, {childList: true, subtree: true});
  ratingMark();
};
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ratingWatch);
else ratingWatch();
// On a phone the answer bar is fixed at the bottom: the page keeps room under the question as tall as the bar.
const ratingBarSize = new ResizeObserver((entries) => entries.forEach((entry) => document.documentElement.style
  .setProperty('--rating-bar-height', `${Math.ceil(entry.target.getBoundingClientRect().height)}px`)));
let ratingBar = null;
new MutationObserver(() => {
  const bar = document.getElementById('rating-bar');
  if (bar && bar !== ratingBar) { if (ratingBar) ratingBarSize.unobserve(ratingBar); ratingBar = bar;
    ratingBarSize.observe(bar); }
}).observe(document.documentElement, {childList: true, subtree: true});
const ratingVisible = (element) => element && !element.disabled && element.offsetParent !== null;
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
  const typing = target && ((target.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit'].includes(
    target.type)) || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || target.isContentEditable);
  if (typing) return;
  const panel = document.querySelector('#rating-item [data-task]');
  if (!panel || panel.offsetParent === null) return;  // the Ratings tab is not on screen
  const keys = __KEYS__;
  const key = event.key.toLowerCase();
  if (key === '__SKIP__') {
    const skip = document.getElementById('rating-skip');
    if (ratingVisible(skip)) { event.preventDefault(); skip.click(); }
    return;
  }
  const task = keys[panel.dataset.task];
  if (!task || !window.ratingImageShown()) return;
  if (task.points) {
    const id = task.points[key];
    const button = id && document.getElementById(id);
    if (ratingVisible(button)) { event.preventDefault(); button.click(); }
    return;
  }
  const groups = task.scores.map((id) => document.getElementById(id));
  if (key === 'enter') {
    const submit = document.getElementById(task.submit);
    if (ratingVisible(submit)) { event.preventDefault(); submit.click(); }
  } else if (key === 'backspace') {
    event.preventDefault();
    groups.forEach((group) => group && group.querySelectorAll('input:checked').forEach((input) => {
      input.checked = false; }));
    window.ratingClearScores = true;
  } else if (/^[0-9]$/.test(key) && Number(key) * task.step <= task.high) {
    const open = groups.find((group) => group && !group.querySelector('input:checked'));
    const input = open && open.querySelector(`input[value="${Number(key) * task.step}"]`);
    if (input) { event.preventDefault(); input.click(); }
  }
});
</script>
"""

RATING_CSS = """
#rating-item .rating-panel { display: flex; flex-direction: column; gap: 0.3em; }
#rating-item .rating-title { font-size: 0.9em; opacity: 0.8; margin: 0; }
#rating-item .rating-question { font-size: 1.15em; font-weight: 700; margin: 0.1em 0; }
#rating-item .rating-asked { font-size: 1.1em; margin: 0; }
#rating-item .rating-asked b { font-weight: 600; }
#rating-item .rating-criteria { margin: 0; font-style: italic; }
/* the image as large as the window allows beside the question; display renditions are square */
.rating-figure { margin: 0; display: flex; justify-content: center; }
.rating-figure img { display: block; width: auto; height: auto; max-width: 100%; aspect-ratio: 1 / 1;
    max-height: max(260px, calc(100vh - 290px)); object-fit: contain; border: 1px solid var(--border-color-primary);
    border-radius: 6px; cursor: zoom-in; }
.rating-figure.enlarged img { max-height: 90vh !important; max-width: 96vw; cursor: zoom-out; }
.rating-controls { display: none !important; gap: 8px; flex-wrap: wrap !important; }
.rating-controls > button { flex: 1 1 0; }
.rating-score { flex: 1 1 100% !important; padding: 4px 8px !important; }
.rating-score .wrap { gap: 4px !important; flex-wrap: nowrap !important; }
.rating-score label { padding: 4px 8px !important; min-width: 0 !important; }
#rating-bar { gap: 6px; }
#rating-signin-message p { color: var(--error-text-color, #b91c1c); }
.rating-image-pending .rating-controls :is(button, label) { opacity: 0.45; pointer-events: none; }
@media (max-width: 640px) {
    #rating-status { flex: 1 1 100% !important; min-width: 100% !important; }
    #rating-bar { position: fixed; left: 0; right: 0; bottom: 0; z-index: 20; padding: 6px 8px;
                  background: var(--background-fill-primary); box-shadow: 0 -3px 6px rgba(0, 0, 0, 0.15); }
    #rating-box { padding-bottom: calc(var(--rating-bar-height, 150px) + 8px) !important; }
    .rating-controls > button { min-width: 0 !important; }
    .rating-controls:has(.rating-score) > button { flex: 1 1 100% !important; }
    /* the question above the image (the answer bar is fixed at the bottom) */
    #rating-row { flex-direction: column-reverse !important; }
    .rating-figure img { max-height: min(38vh, 330px); }
    #rating-status { font-size: 0.92em; }
    #rating-item .rating-question { font-size: 1.02em; }
    .rating-score { padding: 2px 6px !important; }
    .rating-score label { padding: 2px 5px !important; }
    .rating-score [data-testid="block-info"] { font-size: 0.85em; margin-bottom: 2px; }
}
"""

def _control_id(task: str, part: str) -> str:
    return f"rate-{task.replace('_', '-')}-{part}"


def rating_css() -> str:
    """The page's CSS for the rating tab: only the answer row of the question's task shows."""
    shown = "\n".join(
        f".gradio-container:has(#rating-item [data-task=\"{name}\"]) #{_control_id(name, 'row')} "
        "{ display: flex !important; }" for name in RATING_TASKS)
    return RATING_CSS + shown


def rating_script() -> str:
    """The page's head script for the rating tab, with every task's keys."""
    keys = {}
    for name, task in RATING_TASKS.items():
        scale = task.scale
        if isinstance(scale, ChoiceScale):
            points = {}  # a point's own key first, then its value, then its position (a 0-10 scale's "1" is 1)
            for pick in (lambda p, _: p.key.lower(), lambda p, _: str(p.value), lambda _, position: str(position)):
                for position, point in enumerate(scale.points, start=1):
                    points.setdefault(pick(point, position), _control_id(name, str(point.value)))
            keys[name] = {"points": points}
        else:
            step = _score_step(scale)
            keys[name] = {"scores": [_control_id(name, score.name) for score in scale.scores],
                          "submit": _control_id(name, "submit"), "step": step, "high": scale.high}
    return RATING_JS.replace("__KEYS__", json.dumps(keys)).replace("__SKIP__", SKIP_KEY.lower())


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
    """Each open task's guidelines, titled, with where the paper says so."""
    if not tasks:
        return "No rating task is open yet."
    blocks = []
    for task in tasks.values():
        blocks.append(f"#### {escape_markdown(task.title)}\n\n{task.guidelines}\n\n*{escape_markdown(task.source)}.*")
    return "\n\n".join(blocks) + f"\n\nSkip a question you cannot judge with **Skip ({SKIP_KEY})**."


def build_ratings_tab(ctx: AppContext) -> gr.State:
    settings = ctx.settings
    open_signup = not settings.annotator_accounts
    pool = raters.RatingPool()
    declared = dict(RATING_TASKS)
    state = gr.State(None)  # a RatingSession once signed in; held on the server
    # The battle page's limits and settings, counted apart and worded for answers: per annotator and per address a
    # minute, and questions loaded without an answer (sign-in, Skip, a task change: each writes a serving row).
    answers = dict(noun="answers", advice="Look at the image a little longer and answer again")
    loads = dict(noun="new questions", advice="Answer the question on screen, or load another")
    annotator_limit = RateLimiter(settings.rate_limit_annotator_per_minute, "per annotator", **answers)
    client_limit = RateLimiter(settings.rate_limit_client_per_minute, "from one address", **answers)
    skip_limit = RateLimiter(settings.rate_limit_skips_per_minute, "per annotator", **loads)
    client_skip_limit = RateLimiter(settings.rate_limit_client_per_minute, "from one address", **loads)

    with gr.Column(visible=True) as signin_box:
        gr.Markdown("Sign in to rate images (the same account as on the Arena tab). "
                    + ("Pick a name and a token (a password you will reuse)." if open_signup
                       else "Use the account your admin gave you."))
        with gr.Row():
            name_box = gr.Textbox(label="Name", elem_id="rating-signin-name", max_lines=1)
            token_box = gr.Textbox(label="Token", type="password", elem_id="rating-signin-token", max_lines=1)
        signin_button = gr.Button("Sign in", variant="primary", elem_id="rating-signin-button")
        signin_message = gr.Markdown(elem_id="rating-signin-message")
    with gr.Column(visible=False, elem_id="rating-box") as rating_box:
        with gr.Row(elem_id="rating-head"):
            status = gr.Markdown(elem_id="rating-status")
            task_filter = gr.Dropdown([ALL_TASKS], value=ALL_TASKS, label="Task", show_label=False, container=False,
                                      elem_id="rating-task", scale=0, min_width=220)
            sign_out_button = gr.Button("Sign out", size="sm", elem_id="rating-sign-out", scale=0, min_width=90)
        with gr.Row(elem_id="rating-row"):
            with gr.Column(scale=3, min_width=300):
                image = gr.HTML(elem_id="rating-image")  # the image, large; the next one hidden, loading
            with gr.Column(scale=2, min_width=300):
                item = gr.HTML(elem_id="rating-item")  # the task, prompt, words asked about, question (data-task)
                with gr.Column(elem_id="rating-bar"):
                    choice_buttons: dict[tuple[str, int], gr.Button] = {}
                    score_radios: list[gr.Radio] = []
                    submit_buttons: dict[str, gr.Button] = {}
                    radios_of: dict[str, list[gr.Radio]] = {}
                    for name, task in declared.items():
                        with gr.Row(elem_id=_control_id(name, "row"), elem_classes=["rating-controls"]):
                            if isinstance(task.scale, ChoiceScale):
                                for point in task.scale.points:
                                    shown = point.label if point.label.startswith(point.key) else (
                                        f"{point.label} ({point.key})")
                                    choice_buttons[(name, point.value)] = gr.Button(
                                        shown, elem_id=_control_id(name, str(point.value)),
                                        variant="primary" if point.value == max(task.scale.values) else "secondary",
                                        min_width=60)
                            else:
                                radios_of[name] = [gr.Radio(
                                    [(str(v), v) for v in _score_choices(task.scale, score.name)],
                                    label=f"{score.label} ({task.scale.low}-{task.scale.high})",
                                    elem_id=_control_id(name, score.name), elem_classes=["rating-score"])
                                    for score in task.scale.scores]
                                score_radios += radios_of[name]
                                submit_buttons[name] = gr.Button("Send (Enter)", variant="primary", min_width=90,
                                                                 elem_id=_control_id(name, "submit"))
                    skip_button = gr.Button(f"Skip ({SKIP_KEY})", size="sm", elem_id="rating-skip")
        with gr.Accordion("Guidelines", open=True, elem_id="rating-guidelines") as guidelines_box:
            guidelines = gr.Markdown(elem_id="rating-guidelines-text")
        on_screen = gr.Textbox(visible=False, elem_id="rating-on-screen")  # the media token of the question shown
    issued = gr.Textbox(visible=False)
    stored = gr.Textbox(visible=False)

    # As on the battle page: plain values, never component updates, on the answer's path. The radios are cleared
    # (None) with every new question.
    item_outputs = [state, status, image, item, on_screen, *score_radios]

    def status_line(session: raters.RatingSession, notice: str = "", error: str = "") -> str:
        line = (f"Signed in as **{escape_markdown(session.annotator.name)}** · {session.ratings} "
                f"answer{'s' if session.ratings != 1 else ''} so far")
        current = session.current
        if current is not None:
            done, total = raters.progress(ctx.store.db(), session, current.task, pool)
            title = declared[current.task].title.split(":")[0] if current.task in declared else current.task
            line += f" · {min(done, total)} of {total} items of {escape_markdown(title)}"
        receipt = session.receipt
        if receipt is not None:  # the model only once the rater's answers on its unit are all in
            line += f"\n\nSaved: **{escape_markdown(receipt.label)}**."
            if session.revealed is not None:
                line += f" That item done: it was drawn by **{escape_markdown(session.revealed)}**."
        if notice:
            line += f"\n\n**⚠ {notice}**"
        if error:
            line += f"\n\n**⚠ {escape_markdown(error)}**"
        return line

    def view(session: raters.RatingSession, message: str = "", notice: str = "", error: str = "") -> list:
        current = session.current
        task = declared.get(current.task) if current is not None else None
        return [session, status_line(session, notice, error), image_html(current, session.upcoming),
                question_html(task, current, message), current.media_token if current is not None else "",
                *[None] * len(score_radios)]

    def refused(session: raters.RatingSession, error: Exception, event: str, request) -> list:
        refusal(error, event, request)
        return [session, status_line(session, error=str(error)), *[gr.skip()] * (len(item_outputs) - 2)]

    def chosen_task(value, request=None) -> str | None:
        if value is None or value == ALL_TASKS:
            return None
        if not isinstance(value, str) or value not in declared:
            raise refusal(f"Unknown task {str(value)[:60]!r}: pick one from the Task menu.", "rating_task", request)
        return value

    def require(session, event: str, request) -> raters.RatingSession:
        if session is None or not getattr(session, "signed_in", False):
            raise refusal("Sign in with your name and token first.", event, request)
        return session

    def load(session: raters.RatingSession, task: str | None, request, *, skipping: bool = False) -> list:
        try:
            skip_limit.check(session.annotator.name)
            client_skip_limit.check(client_address(request))
        except RateLimited as error:
            return refused(session, error, "rating_next", request)
        try:
            if skipping:
                session = raters.skip(ctx.store.db(), ctx.rng, session, pool=pool, task_filter=task)
            else:
                session = raters.next_question(ctx.store.db(), ctx.rng, session, pool=pool, task_filter=task)
        except raters.NoQuestionAvailable as error:
            return view(raters.without_question(session), str(error))
        except RatingRejected as error:
            return refused(session, error, "rating_next", request)
        return view(session)

    def next_item(session, task, request: gr.Request = None) -> list:
        session = require(session, "rating_next", request)
        return load(session, chosen_task(task, request), request)

    def skip_item(session, task, request: gr.Request = None) -> list:
        session = require(session, "rating_skip", request)
        return load(session, chosen_task(task, request), request, skipping=True)

    def opened(session: raters.RatingSession) -> list:
        tasks = {name: opened_task for name, (opened_task, _, _) in raters.open_tasks(ctx.store.db()).items()}
        choices = [ALL_TASKS, *((task.title, name) for name, task in tasks.items())]
        return ["", gr.update(visible=False), gr.update(visible=True), gr.update(choices=choices, value=ALL_TASKS),
                gr.update(open=session.ratings == 0), guidelines_markdown(tasks)]

    def sign_in(name: str, token: str, request: gr.Request = None) -> list:
        try:  # as the Arena tab's: a wrong token is a guess, bad input is not
            session = throttled_sign_in(ctx, request, name, lambda: raters.start(
                ctx.store.db(), name, token, open_signup=open_signup, min_token_length=settings.min_token_length))
        except (RateLimited, SignInError) as error:
            refusal(error, "rating_sign_in", request, warn=isinstance(error, SignInError))
            return [f"**⚠ {escape_markdown(error)}**", *[gr.skip()] * (len(signin_outputs) - 1)]
        session = raters.issue_resume(ctx.store.db(), session, days=settings.session_days)
        return [*opened(session), *load(session, None, request), session.resume_token or ""]

    def resume(token: str, request: gr.Request = None) -> list:
        session = raters.resume(ctx.store.db(), token, open_signup=open_signup) if token else None
        if session is None:
            return [gr.skip()] * len(signin_outputs)
        return [*opened(session), *load(session, None, request), gr.skip()]

    def sign_out(session) -> list:
        raters.sign_out(ctx.store.db(), session)
        return [gr.update(visible=True), gr.update(visible=False), None]

    def answer(session, task, shown, given, request) -> list:
        session = require(session, "rating_answer", request)
        task = chosen_task(task, request)
        try:
            annotator_limit.check(session.annotator.name)
            client_limit.check(client_address(request))
            session = raters.answer(ctx.store.db(), session, given, pool=pool, rng=ctx.rng,
                                    rules=settings.quality_rules, task_filter=task,
                                    on_screen=shown if isinstance(shown, str) and shown else None)
        except (RatingRejected, RateLimited) as error:
            return refused(session, error, "rating_answer", request)
        notice = speed_notice(session.fast_run, settings.quality_rules, session.annotator.source, doing="answering",
                              noun="answers", look="the image")
        message = "" if session.current is not None else (
            "Nothing left to rate here: thank you! Pick another task, or come back when the admin opens more.")
        return view(session, message, notice)

    def choice_handler(name: str, scale: ChoiceScale, value: int):
        def handler(session, task, shown=None, request: gr.Request = None) -> list:
            if session is not None and session.current is not None and session.current.task != name:
                return refused(session, RatingRejected("That button belongs to another question: answer the one "
                                                       "on screen."), "rating_answer", request)
            return answer(session, task, shown, {scale.name: value}, request)

        handler.__name__ = f"rate_{name}_{value}"
        return handler

    def scores_handler(name: str, scale: ScoresScale):
        def handler(session, task, shown, *values, request: gr.Request = None) -> list:
            if session is not None and session.current is not None and session.current.task != name:
                return refused(session, RatingRejected("That button belongs to another question: answer the one "
                                                       "on screen."), "rating_answer", request)
            return answer(session, task, shown, dict(zip(scale.names, values)), request)

        handler.__name__ = f"rate_{name}"
        return handler

    signin_outputs = [signin_message, signin_box, rating_box, task_filter, guidelines_box, guidelines, *item_outputs,
                      issued]
    gr.on([signin_button.click, token_box.submit], sign_in, [name_box, token_box], signin_outputs,
          api_name="rating_sign_in", **SIGN_IN_QUEUE).then(None, issued, None, js=KEEP_RESUME_JS)
    ctx.opening_events.add("rating_sign_in")
    gr.on(None, resume, stored, signin_outputs, js=READ_RESUME_JS, api_visibility="private", concurrency_limit=None)
    sign_out_button.click(sign_out, state, [signin_box, rating_box, state], js=FORGET_RESUME_JS,
                          api_visibility="private")
    fast = dict(queue=False, preprocess=False, postprocess=False)
    task_filter.select(next_item, [state, task_filter], item_outputs, api_name="rating_next", **fast)
    skip_button.click(skip_item, [state, task_filter], item_outputs, api_name="rating_skip", **fast)
    for (name, value), button in choice_buttons.items():
        button.click(choice_handler(name, declared[name].scale, value), [state, task_filter, on_screen],
                     item_outputs, api_name=f"rate_{name}_{value}", **fast)
    for name, button in submit_buttons.items():
        button.click(scores_handler(name, declared[name].scale), [state, task_filter, on_screen, *radios_of[name]],
                     item_outputs, api_name=f"rate_{name}", **fast)
    return state

