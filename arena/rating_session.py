"""One rater's sitting at the rating page, as plain functions over a small state object (as :mod:`arena.session` is
for battles).

The page keeps a :class:`RatingSession` per browser tab (server-held ``gr.State``) and calls these functions; tests
call them directly. A session shows one question (``current``) and holds the next one (``upcoming``), drawn in the
transaction of the answer before, whose image the page has already loaded: an answer makes ``upcoming`` the question
on screen and draws the one after it, so the next image appears as soon as the answer is stored.

Which question comes next (:func:`draw_question`), among the tasks an admin opened
(:mod:`datamodel.human_ratings`, :class:`datamodel.human_ratings.Assignment`):

1. a question of a unit the rater has begun (served, not skipped) and not finished, the oldest such unit first: a
   rater answers all the questions of a unit (a Commonsense-T2I generation pair's four fits, a SemVarBench item's
   seven scores), so that each rater's statistics are complete per unit;
2. else a unit the rater has never been served, among those with fewer counted raters than the assignment's
   ``raters_per_item``: a task at random among those with such units, then the unit with the fewest raters (at
   random among equals), then one of its questions at random.

Skipping a question leaves its whole unit to other raters (its answered questions stay). Sign-in, staying signed in
across reloads and signing out are the battle page's (:mod:`arena.session`); a session whose stay-signed-in token was
revoked (signed out, here or on the Arena tab) answers nothing more. A reloaded page resumes on the question it had
on screen, with the one held back for after it.

**The model is told per unit, once the unit is done.** A unit's images are one model's, and its questions come one
after another, so a model told with each answer would be known for the rest of the unit (the fourth security review:
on Commonsense-T2I 75% of answers were on the model just told, 50% on the very image). An answer's receipt names no
model; the answer that completes a unit tells that unit's model (``revealed``), and the next question is of a unit
drawn as any other, so the share of answers on the model just told stays at chance (``python -m tools.rating_reveals``
measures it).
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from dataclasses import dataclass, field, replace

from arena import session as battle_sessions
from arena.session import signed_in_annotator
from datamodel.annotator_sessions import open_questions
from datamodel.annotators import MIN_TOKEN_LENGTH, Annotator
from datamodel.database import Database
from datamodel.human_ratings import (
    RatingReceipt,
    Serving,
    annotator_questions,
    annotator_rating_count,
    answered_units,
    assignments,
    load_serving,
    record_rating,
    record_serving,
    show_serving,
    skip_serving,
    task_totals,
    unit_answers,
    unit_raters,
)
from datamodel.quality import QualityRules
from datamodel.rating_scales import RatingRejected
from datamodel.sampling_reads import catalog_version
from judges.rating_tasks import RATING_TASKS, RatingTask, RatingUnit


class NoQuestionAvailable(LookupError):
    """No question is left to serve under the current filter; the message says what to do."""


NO_TASK_OPEN = ("No rating task is open yet: the arena's admin opens them (Admin tab, Human ratings). Vote on the "
                "Arena tab meanwhile.")


class RatingPool:
    """The units of each task, per set of models, computed once until a model, prompt or image changes (the
    ``catalog`` counter of ``data_versions``; without it, deleted by hand, at every call). Shared by a server's
    threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._units: dict[tuple[str, tuple[str, ...]], tuple[int | None, list[RatingUnit], dict[str, RatingUnit]]] = {}

    def units(self, db: Database, task: RatingTask, models: tuple[str, ...]) -> dict[str, RatingUnit]:
        """{unit key: unit} of ``task`` over the images of ``models``, in the task's order."""
        version = catalog_version(db)
        key = (task.name, tuple(models))
        with self._lock:
            held = self._units.get(key)
            if held is not None and version is not None and held[0] == version:  # no counter: nothing says
                return held[2]
        planned = task.units(db, models)
        by_key = {unit.key: unit for unit in planned}
        with self._lock:
            self._units[key] = (version, planned, by_key)
        return by_key


@dataclass(frozen=True)
class RatingSession:
    annotator: Annotator | None = None
    session_id: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    current: Serving | None = None  # the question on screen
    upcoming: Serving | None = None  # drawn with the last answer; the page has its image already
    task_filter: str | None = None  # the task menu's choice when ``upcoming`` was drawn (None: every open task)
    shown_at: float = 0.0  # when ``current`` was put on screen: seconds_to_answer counts from here
    receipt: RatingReceipt | None = None  # the last answer of this session
    revealed: str | None = None  # the model of the unit that answer completed (None: the unit goes on, or skipped)
    answered_token: str | None = None  # the media token of the question that answer was for
    ratings: int = 0
    answered_at: float | None = None
    fast_run: int = 0  # answers in a row less than the speed rule's seconds apart (as ArenaSession.fast_run)
    resume_token: str | None = None
    signed_in_at: float = field(default_factory=time.time)  # a sign-out or token change after this ends the session

    @property
    def signed_in(self) -> bool:
        return self.annotator is not None


def start(db: Database, name: str, token: str, *, open_signup: bool,
          min_token_length: int = MIN_TOKEN_LENGTH) -> RatingSession:
    """Sign in (as on the battle page) and open a rating session."""
    signed = battle_sessions.start(db, name, token, open_signup=open_signup, min_token_length=min_token_length)
    return RatingSession(annotator=signed.annotator, session_id=signed.session_id,
                         ratings=annotator_rating_count(db, signed_in_annotator(signed).id),
                         signed_in_at=signed.signed_in_at)


def issue_resume(db: Database, session: RatingSession, *, days: float) -> RatingSession:
    """A stay-signed-in token for ``session`` (the battle page's: one token signs both pages in again)."""
    issued = battle_sessions.issue_resume(
        db, battle_sessions.ArenaSession(annotator=session.annotator, session_id=session.session_id), days=days)
    return replace(session, resume_token=issued.resume_token)


def resume(db: Database, token: str, *, open_signup: bool,
           now: float | None = None) -> RatingSession | None:
    """The rating session of a reloaded page from its stay-signed-in ``token``, on the question it showed (the
    newest unanswered, unskipped question served to that session), or None (:func:`arena.session.resume`)."""
    signed = battle_sessions.resume(db, token, open_signup=open_signup, now=now)
    if signed is None:
        return None
    on_screen = [load_serving(db, question) for question in open_questions(db, signed.session_id)]
    current, upcoming = (on_screen + [None, None])[:2]
    return RatingSession(annotator=signed.annotator, session_id=signed.session_id, current=current,
                         upcoming=upcoming, shown_at=time.time() if now is None else now,
                         ratings=annotator_rating_count(db, signed_in_annotator(signed).id), resume_token=token,
                         signed_in_at=signed.signed_in_at)


def sign_out(db: Database, session: RatingSession | None) -> RatingSession:
    """Sign out everywhere, as the battle page does (:func:`arena.session.sign_out`): every stay-signed-in token of
    the annotator is revoked and every session of theirs, on either page, ends at its next request; the returned
    session is signed out."""
    if session is not None and session.signed_in:
        battle_sessions.sign_out(db, session)
    return RatingSession()


def _check_live(db: Database, session: RatingSession | None) -> None:
    """Refuse a session that is not signed in, or began before its annotator signed out anywhere or had their token
    changed (:func:`arena.session.check_signed_in`)."""
    if session is None or not session.signed_in:
        raise RatingRejected("Sign in with your name and token first.")
    try:
        battle_sessions.check_signed_in(db, session)
    except battle_sessions.VoteRejected:
        raise RatingRejected("You have signed out (here or in another tab or browser, or your token was changed): "
                             "sign in again to go on rating.") from None


def open_tasks(db: Database) -> dict[str, tuple[RatingTask, tuple[str, ...], int]]:
    """{task name: (declaration, models, raters per item)} of the open assignments of declared tasks."""
    declared = dict(RATING_TASKS)
    return {name: (declared[name], assignment.models, assignment.raters_per_item)
            for name, assignment in assignments(db, active_only=True).items() if name in declared}


@dataclass(frozen=True)
class Draw:
    task: RatingTask
    unit: RatingUnit
    question_index: int


def draw_question(db: Database, rng: random.Random, annotator_id: int, *, pool: RatingPool,
                  task_filter: str | None = None, pending: frozenset[tuple[str, str]] = frozenset()) -> Draw:
    """The next question for ``annotator_id`` (module docstring), not one of ``pending`` ((task, subject) already on
    the page); raises :class:`NoQuestionAvailable`."""
    tasks = open_tasks(db)
    if task_filter is not None:
        if task_filter not in tasks:
            raise NoQuestionAvailable("That rating task is not open now: pick another from the menu.")
        tasks = {task_filter: tasks[task_filter]}
    if not tasks:
        raise NoQuestionAvailable(NO_TASK_OPEN)
    history = annotator_questions(db, annotator_id, tasks)
    answered = {(q.task, q.subject) for q in history if q.answered}
    skipped = {(q.task, q.unit) for q in history if q.skipped}
    begun = list(dict.fromkeys((q.task, q.unit) for q in history))
    units = {name: pool.units(db, task, models) for name, (task, models, _) in tasks.items()}
    for name, key in begun:  # 1. finish a begun unit, the oldest first
        unit = units[name].get(key)
        if unit is None or (name, key) in skipped:
            continue
        remaining = [index for index, q in enumerate(unit.questions)
                     if (name, q.subject) not in answered and (name, q.subject) not in pending]
        if remaining:
            return Draw(tasks[name][0], unit, rng.choice(remaining))
    seen = set(begun)
    choices = {}
    for name, (_, _, raters) in tasks.items():  # 2. a new unit that needs raters
        counts = unit_raters(db, name)
        fresh = [(counts.get(key, 0), key) for key in units[name] if (name, key) not in seen
                 and counts.get(key, 0) < raters]
        if fresh:
            fewest = min(count for count, _ in fresh)
            choices[name] = [key for count, key in fresh if count == fewest]
    if not choices:
        titles = ", ".join(tasks[name][0].title for name in tasks)
        raise NoQuestionAvailable(f"Nothing left to rate in {titles}: every item has its raters or your answers. "
                                  "Thank you! Pick another task, or come back when the admin opens more.")
    name = rng.choice(sorted(choices))
    unit = units[name][rng.choice(choices[name])]
    return Draw(tasks[name][0], unit, rng.randrange(len(unit.questions)))


def _serve(db, rng, session: RatingSession, pool: RatingPool, task_filter: str | None,
           pending: frozenset, now: float | None = None) -> Serving:
    drawn = draw_question(db, rng, signed_in_annotator(session).id, pool=pool, task_filter=task_filter, pending=pending)
    question = drawn.unit.questions[drawn.question_index]
    return record_serving(db, task=drawn.task.name, unit=drawn.unit.key, subject=question.subject,
                          image_id=question.image_id, text_prompt_id=question.text_prompt_id,
                          shown_text=question.shown_text, annotator_id=signed_in_annotator(session).id,
                          session_id=session.session_id, now=now)


def _pending(*servings: Serving | None) -> frozenset[tuple[str, str]]:
    return frozenset((s.task, s.subject) for s in servings if s is not None)


def _fits(serving: Serving | None, task_filter: str | None) -> bool:
    return serving is not None and (task_filter is None or serving.task == task_filter)


def next_question(db: Database, rng: random.Random, session: RatingSession, *, pool: RatingPool,
                  task_filter: str | None = None, now: float | None = None) -> RatingSession:
    """Put a question on screen and draw the one after it: the current one stays if it fits ``task_filter``, else
    the upcoming one, else a new draw. Raises :class:`NoQuestionAvailable` when none is left (the session keeps
    nothing on screen then: see :func:`without_question`)."""
    _check_live(db, session)
    now = time.time() if now is None else now
    current = session.current if _fits(session.current, task_filter) else None
    upcoming = session.upcoming if _fits(session.upcoming, task_filter) else None
    with db.conn:
        if current is None:
            current, upcoming = upcoming, None
            if current is not None:
                show_serving(db, current.id, now)
        if current is None:
            current = _serve(db, rng, session, pool, task_filter, frozenset(), now)
        if upcoming is None:
            try:
                upcoming = _serve(db, rng, session, pool, task_filter, _pending(current), now)
            except NoQuestionAvailable:
                upcoming = None
    shown = session.shown_at if current is session.current and session.shown_at else now
    return replace(session, current=current, upcoming=upcoming, task_filter=task_filter, shown_at=shown)


def task_paces() -> dict[str, float]:
    """The speed rule's seconds of each declared task (:attr:`judges.rating_tasks.RatingTask.pace`)."""
    return {name: task.pace for name, task in RATING_TASKS.items()}


def without_question(session: RatingSession) -> RatingSession:
    """``session`` with nothing on screen (no question left under the filter)."""
    return replace(session, current=None, upcoming=None)


def answer(
    db: Database, session: RatingSession, given, *, pool: RatingPool, rng: random.Random,
    rules: QualityRules | None = QualityRules(), task_filter: str | None = None, on_screen: str | None = None,
    now: float | None = None,
) -> RatingSession:
    """Store the answer ``given`` to the question on screen and put the next one there, in one transaction.

    ``on_screen``, the media token of the question the rater sees, must be the current one's (so an answer cannot
    land on a question not shown). The returned session holds the receipt (what was stored) and, when this answer
    completed the rater's answers on its unit, the unit's model in ``revealed`` (module docstring). When no question
    is left the answer still counts and nothing is on screen."""
    _check_live(db, session)
    current = session.current
    if current is None:
        raise RatingRejected("No question to answer: load the next question first.")
    if on_screen is not None and on_screen != current.media_token:
        if on_screen == session.answered_token:
            raise RatingRejected("This question already has your answer. Go on to the next one.")
        raise RatingRejected("This question is no longer on your screen. Answer the one shown now.")
    task = RATING_TASKS.get(current.task, None)
    if task is None:
        raise RatingRejected(f"The rating task {current.task!r} is no longer declared: skip this question.")
    now = time.time() if now is None else now
    with db.conn:
        receipt = record_rating(db, current.id, given, scale=task.scale, session_id=session.session_id, now=now,
                                shown_at=session.shown_at or None, rules=rules, paces=task_paces())
        revealed = receipt.model if _unit_done(db, session, current, pool) else None
        following = session.upcoming if _fits(session.upcoming, task_filter) else None
        if following is not None:
            show_serving(db, following.id, now)
        else:
            try:
                following = _serve(db, rng, session, pool, task_filter, frozenset(), now)
            except NoQuestionAvailable:
                following = None
        after = None
        if following is not None:
            try:
                after = _serve(db, rng, session, pool, task_filter, _pending(following), now)
            except NoQuestionAvailable:
                after = None
    fast = (rules is not None and session.answered_at is not None
            and 0 <= now - session.answered_at < task.pace)
    return replace(session, current=following, upcoming=after, task_filter=task_filter, shown_at=now,
                   receipt=receipt, revealed=revealed, answered_token=current.media_token, ratings=session.ratings + 1,
                   answered_at=now,
                   fast_run=max(session.fast_run, 1) + 1 if fast else 1)


def _unit_done(db: Database, session: RatingSession, serving: Serving, pool: RatingPool) -> bool:
    """Whether the rater has now answered every question of ``serving``'s unit (as the open assignment plans it)."""
    opened = open_tasks(db).get(serving.task)
    if opened is None:
        return False
    declaration, models, _ = opened
    unit = pool.units(db, declaration, models).get(serving.unit)
    return unit is not None and unit_answers(db, signed_in_annotator(session).id, serving.task, serving.unit) >= len(
        unit.questions)


def skip(db: Database, rng: random.Random, session: RatingSession, *, pool: RatingPool,
         task_filter: str | None = None, now: float | None = None) -> RatingSession:
    """Leave the question on screen, and its unit, to other raters; show another."""
    _check_live(db, session)
    now = time.time() if now is None else now
    current, upcoming = session.current, session.upcoming
    if current is not None:
        skip_serving(db, current.id, session_id=session.session_id, now=now)
        if upcoming is not None and upcoming.task == current.task and upcoming.unit == current.unit:
            skip_serving(db, upcoming.id, session_id=session.session_id, now=now)
            upcoming = None
    return next_question(db, rng, replace(session, current=None, upcoming=upcoming), pool=pool,
                         task_filter=task_filter, now=now)


def progress(db: Database, session: RatingSession, task: str, pool: RatingPool) -> tuple[int, int]:
    """(units of ``task`` the rater has answered in, units the assignment opens): "12 of 80 items"."""
    opened = open_tasks(db).get(task)
    if opened is None:
        return answered_units(db, signed_in_annotator(session).id, task), 0
    declaration, models, _ = opened
    return answered_units(db, signed_in_annotator(session).id, task), len(pool.units(db, declaration, models))


STATUS_COLUMNS = ["task", "title", "open", "raters_per_item", "paper_raters", "models", "items", "items_begun",
                  "items_complete", "ratings", "excluded", "raters"]


def study_status(db: Database, pool: RatingPool | None = None) -> list[dict]:
    """Per declared task: its assignment (open, raters per item, models; the paper's raters when none is stored),
    its items (units) over those models, how many have a counted rating and how many have all their raters, and
    the ratings, excluded ratings and raters so far (:data:`STATUS_COLUMNS`)."""
    pool = pool or RatingPool()
    stored = assignments(db)
    rows = []
    for name, task in RATING_TASKS.items():
        assignment = stored.get(name)
        models = assignment.models if assignment else ()
        target = assignment.raters_per_item if assignment else task.raters
        units = pool.units(db, task, models)
        counts = unit_raters(db, name)
        rows.append({"task": name, "title": task.title, "open": bool(assignment and assignment.active),
                     "raters_per_item": target, "paper_raters": task.raters,
                     "models": ", ".join(models) or "all", "items": len(units),
                     "items_begun": sum(1 for key in units if counts.get(key, 0) > 0),
                     "items_complete": sum(1 for key in units if counts.get(key, 0) >= target),
                     **task_totals(db, name)})
    return rows
