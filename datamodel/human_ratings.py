"""Human ratings: questions served to annotators and their answers, enforced on the server like votes.

A rating task (declared in :mod:`judges.rating_tasks`) asks one question about one image. An admin opens a task
with an :class:`Assignment` (how many raters per item, which models' images). A question is served to an
annotator's session as a :class:`Serving` (a row of ``rating_servings``, with an unguessable id and media token, as a
battle is), and takes exactly one answer (:func:`record_rating`):

- only from the session it was served to (an unknown id and someone else's serving get the same answer, so ids
  cannot be probed);
- only on the task's scale (:mod:`datamodel.rating_scales`);
- only once per serving and once per annotator and question: a second answer to the same question, from any
  session, is refused;

and anything else is refused with :class:`RatingRejected`, writing nothing: the checks and the insert run in one
``BEGIN IMMEDIATE`` transaction. The quality rules of the votes (:mod:`datamodel.quality`: rate, speed, and a bias
rule, here the same answer at least ``bias_share`` of the time) run in that transaction too (:func:`update_flags`):
a rating that breaks one is stored, flagged ``excluded`` with the reason (or reported, for a trusted account), never
deleted; an admin's decision (:func:`review_rating`) is final.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from datamodel.battles import ShownImage
from datamodel.database import Database
from datamodel.dialect import now_text
from datamodel.models import model_ids
from datamodel.quality import BIAS, RATE, RULE_WORDS, SPEED, QualityRules, VoteFact, rule_reasons, verdict
from datamodel.rating_scales import RatingRejected, Scale
from datamodel.standing import ADMIN

MAX_RATERS_PER_ITEM = 10
BIAS_WORDS = "of this rater's "  # in the reason of the bias rule, which re-examines all of a rater's ratings


@dataclass(frozen=True)
class Assignment:
    """An admin's opening of a rating task: ``raters_per_item`` raters for every item of the images of ``models``
    (empty: every model), while ``active``."""

    task: str
    raters_per_item: int = 1
    models: tuple[str, ...] = ()
    active: bool = True


def set_assignment(db: Database, task: str, *, raters_per_item: int = 1, models: Sequence[str] = (),
                   active: bool = True) -> Assignment:
    """Open (or change, or close with ``active=False``) the rating of ``task``; return the stored assignment.

    ``raters_per_item`` must be 1 to :data:`MAX_RATERS_PER_ITEM`; every name in ``models`` must be a model of the
    arena (LookupError naming the known ones otherwise). The task name is checked by the caller against the
    declared tasks."""
    if isinstance(raters_per_item, bool) or not isinstance(raters_per_item, int) or not (
            1 <= raters_per_item <= MAX_RATERS_PER_ITEM):
        raise ValueError(f"raters per item must be a whole number from 1 to {MAX_RATERS_PER_ITEM}, got "
                         f"{raters_per_item!r}. The papers use 2 (Commonsense-T2I's experts) or 3 (SemVarBench's "
                         "raters).")
    known = model_ids(db)
    unknown = [name for name in models if name not in known]
    if unknown:
        raise LookupError(f"Unknown model {', '.join(map(repr, unknown))}: pick from {', '.join(known) or 'none'}.")
    models = tuple(dict.fromkeys(models))
    with db.conn:
        db.execute(
            "INSERT INTO rating_assignments (task, raters_per_item, models, active) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (task) DO UPDATE SET raters_per_item = excluded.raters_per_item, models = excluded.models, "
            f"active = excluded.active, updated_at = {now_text(db)}",
            [task, raters_per_item, json.dumps(list(models)), int(active)])
    return Assignment(task, raters_per_item, models, active)


def assignments(db: Database, *, active_only: bool = False) -> dict[str, Assignment]:
    """Every stored assignment by task (only the open ones with ``active_only``)."""
    rows = db.execute("SELECT task, raters_per_item, models, active FROM rating_assignments ORDER BY task").fetchall()
    return {task: Assignment(task, raters, tuple(json.loads(models)), bool(active))
            for task, raters, models, active in rows if active or not active_only}


@dataclass(frozen=True)
class Serving:
    """A question on an annotator's screen: the image (by ``media_token``), what is asked about it, and where it
    comes from (suite, subset, the image's own prompt). Never the model: that is told after the answer."""

    id: str
    task: str
    unit: str
    subject: str
    image_id: int
    text_prompt_id: int
    shown_text: str
    media_token: str
    served_at: float
    suite: str
    subset: str
    prompt: str  # the image's prompt
    metadata: dict


def record_serving(db: Database, *, task: str, unit: str, subject: str, image_id: int,
                   text_prompt_id: int, shown_text: str, annotator_id: int, session_id: str,
                   now: float | None = None) -> Serving:
    """Serve a question to ``annotator_id``'s session ``session_id``; return it (id and media token fresh)."""
    serving_id, media_token = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    with db.conn:
        db.execute(
            "INSERT INTO rating_servings (id, task, unit, subject, image_id, text_prompt_id, shown_text, annotator_id,"
            " session_id, media_token, served_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [serving_id, task, unit, subject, image_id, text_prompt_id, shown_text, annotator_id, session_id,
             media_token, time.time() if now is None else now])
    return load_serving(db, serving_id)


def load_serving(db: Database, serving_id: str) -> Serving:
    row = db.execute(
        "SELECT s.id, s.task, s.unit, s.subject, s.image_id, s.text_prompt_id, s.shown_text, s.media_token, "
        "s.served_at, p.suite, p.subset, p.text, p.metadata FROM rating_servings s "
        "JOIN images i ON i.id = s.image_id JOIN prompts p ON p.id = i.prompt_id WHERE s.id = ?",
        [serving_id]).fetchone()
    if row is None:
        raise LookupError(f"no rating serving {serving_id!r}")
    return Serving(*row[:12], json.loads(row[12] or "{}"))


def show_serving(db: Database, serving_id: str, now: float | None = None) -> None:
    """Record that the question ``serving_id`` (drawn earlier, held back) is put on screen now: its ``served_at``
    (what the ratings export as served_at, and how a reloaded page finds the question on screen)."""
    db.execute("UPDATE rating_servings SET served_at = ? WHERE id = ?", [time.time() if now is None else now,
                                                                       serving_id])


def unit_answers(db: Database, annotator_id: int, task: str, unit: str) -> int:
    """How many questions of ``task``'s unit ``unit`` the annotator has answered."""
    return db.execute("SELECT COUNT(DISTINCT subject) FROM ratings WHERE annotator_id = ? AND task = ? AND unit = ?",
                      [annotator_id, task, unit]).fetchone()[0]


def skip_serving(db: Database, serving_id: str, *, session_id: str, now: float | None = None) -> bool:
    """Mark the unanswered serving of ``session_id`` skipped (its unit is left for that rater); False when it is
    not that session's or already answered."""
    with db.conn:
        cursor = db.execute(
            "UPDATE rating_servings SET skipped_at = ? WHERE id = ? AND session_id = ? AND skipped_at IS NULL AND "
            "NOT EXISTS (SELECT 1 FROM ratings r WHERE r.serving_id = rating_servings.id)",
            [time.time() if now is None else now, serving_id, session_id])
    return cursor.rowcount == 1


def rating_image(db: Database, media_token: str) -> ShownImage | None:
    """The image of the serving with ``media_token``, or None."""
    row = db.execute("SELECT i.id, i.media_hash, i.media_ext FROM rating_servings s JOIN images i ON i.id = "
                     "s.image_id WHERE s.media_token = ?", [media_token]).fetchone()
    return ShownImage(*row) if row else None


@dataclass(frozen=True)
class RatingReceipt:
    rating_id: int
    serving_id: str
    task: str
    subject: str
    answer: dict
    value: float
    label: str  # how the answer reads ("Fits", "Object Accuracy 40, Relevance 30")
    model: str  # the image's model, told after the answer
    seconds_to_answer: float
    flag_changes: tuple[tuple[int, int], ...] = ()  # (rating id, excluded now) of the ratings whose flag flipped


def record_rating(
    db: Database, serving_id: str, answer: Any, *, scale: Scale, session_id: str,
    now: float | None = None, shown_at: float | None = None, rules: QualityRules | None = QualityRules(),
    paces: Mapping[str, float] | None = None,
) -> RatingReceipt:
    """Store ``answer`` to the serving ``serving_id`` of ``session_id`` (module docstring); return the receipt.

    ``seconds_to_answer`` counts from ``shown_at`` (when the page showed the question), else from when it was
    served. ``rules=None`` skips the quality rules; ``paces``: the speed rule's seconds per task
    (:func:`update_flags`)."""
    if not isinstance(serving_id, str) or not serving_id:
        raise RatingRejected("No question to answer: load the next question first.")
    parsed = scale.parse(answer)
    now = time.time() if now is None else now
    with db.conn:
        row = db.execute(
            """
            SELECT s.session_id, s.task, s.unit, s.subject, s.annotator_id, a.name, s.served_at, s.skipped_at,
                   s.image_id, i.prompt_id, s.text_prompt_id, i.model_id, m.name, s.shown_text,
                   (SELECT COUNT(*) FROM ratings r WHERE r.serving_id = s.id)
            FROM rating_servings s JOIN annotators a ON a.id = s.annotator_id
            JOIN images i ON i.id = s.image_id JOIN models m ON m.id = i.model_id
            WHERE s.id = ?""", [serving_id]).fetchone()
        if row is None or not hmac.compare_digest(row[0], session_id or ""):
            raise RatingRejected("This question was not shown to you. Load the next question and answer it.")
        (_, task, unit, subject, annotator_id, rater, served_at, skipped_at, image_id, prompt_id, text_prompt_id,
         model_id, model, shown_text, answered) = row
        if answered:
            raise RatingRejected("This question already has your answer. Go on to the next one.")
        if skipped_at is not None:
            raise RatingRejected("You skipped this question. Answer the one on your screen.")
        earlier = db.execute("SELECT 1 FROM ratings WHERE task = ? AND subject = ? AND annotator_id = ?",
                             [task, subject, annotator_id]).fetchone()
        if earlier:
            raise RatingRejected("You have already answered this question (in another session). Go on to the next "
                                 "one.")
        seconds = max(0.0, now - (served_at if shown_at is None else shown_at))
        value = scale.value(parsed)
        rating_id = db.execute(
            "INSERT INTO ratings (serving_id, task, unit, subject, rater, annotator_id, answer, value, image_id, "
            "prompt_id, text_prompt_id, model_id, shown_text, seconds_to_answer, served_at, answered_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [serving_id, task, unit, subject, rater, annotator_id, json.dumps(parsed, sort_keys=True), value,
             image_id, prompt_id, text_prompt_id, model_id, shown_text, seconds, served_at, now]).fetchone()[0]
        changes = update_flags(db, annotator_id, rules, paces=paces) if rules is not None else {}
    flips = tuple((rating_id, after) for rating_id, (before, after) in sorted(changes.items()) if before != after)
    return RatingReceipt(rating_id, serving_id, task, subject, parsed, value, scale.label(parsed), model,
                         seconds, flips)


# --- what the draw of the next question reads ----------------------------------------------------------------------

@dataclass(frozen=True)
class ServedQuestion:
    """One question served to an annotator: whether they answered it, and whether they skipped it."""

    task: str
    unit: str
    subject: str
    answered: bool
    skipped: bool
    serving_id: str


def annotator_questions(db: Database, annotator_id: int,
                        tasks: Iterable[str] | None = None) -> list[ServedQuestion]:
    """Every question served to ``annotator_id`` (in ``tasks``), oldest first."""
    tasks = None if tasks is None else list(tasks)
    where = "" if tasks is None else f" AND s.task IN ({','.join('?' * len(tasks)) or 'NULL'})"
    rows = db.execute(
        "SELECT s.task, s.unit, s.subject, r.id IS NOT NULL, s.skipped_at IS NOT NULL, s.id FROM rating_servings s "
        f"LEFT JOIN ratings r ON r.serving_id = s.id WHERE s.annotator_id = ?{where} ORDER BY s.rowid",
        [annotator_id, *(tasks or [])]).fetchall()
    return [ServedQuestion(task, unit, subject, bool(answered), bool(skipped), serving_id)
            for task, unit, subject, answered, skipped, serving_id in rows]


def unit_raters(db: Database, task: str) -> dict[str, int]:
    """{unit: how many annotators have a counted (not excluded) rating in it} for ``task``."""
    return dict(db.execute("SELECT unit, COUNT(DISTINCT annotator_id) FROM ratings WHERE task = ? AND excluded = 0 "
                           "GROUP BY unit", [task]).fetchall())


def task_totals(db: Database, task: str) -> dict[str, int]:
    """``{"ratings", "excluded", "raters"}`` of ``task``: every rating, the excluded ones, the distinct raters."""
    ratings, excluded, raters = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(excluded), 0), COUNT(DISTINCT annotator_id) FROM ratings WHERE task = ?",
        [task]).fetchone()
    return {"ratings": ratings, "excluded": excluded, "raters": raters}


def annotator_rating_count(db: Database, annotator_id: int) -> int:
    return db.execute("SELECT COUNT(*) FROM ratings WHERE annotator_id = ?", [annotator_id]).fetchone()[0]


@dataclass(frozen=True)
class RatingStanding:
    """An annotator's ratings as the Ratings tab tells them (:func:`rating_standing`): ``answered`` in all,
    ``excluded`` of them, those set aside per rule (``set_aside``: :data:`datamodel.quality.RATE`, ``SPEED``,
    ``BIAS``, or :data:`datamodel.standing.ADMIN` for an admin's review) and, per task, how often each answer (its
    stored JSON text) was given (``answers``)."""

    answered: int = 0
    excluded: int = 0
    set_aside: Mapping[str, int] = field(default_factory=dict)
    answers: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def counted(self) -> int:
        return self.answered - self.excluded


def rating_standing(db: Database, annotator_id: int) -> RatingStanding:
    """One annotator's :class:`RatingStanding`, in one query; an excluded rating counts under the first rule its
    reason names (the admin's review, then the bias, speed and rate rules)."""
    rows = db.execute("SELECT task, answer, excluded, reviewed, excluded_reason, COUNT(*) FROM ratings "
                      "WHERE annotator_id = ? GROUP BY task, answer, excluded, reviewed, excluded_reason",
                      [annotator_id]).fetchall()
    answers: dict[str, Counter] = {}
    set_aside: Counter = Counter()
    for task, answer, excluded, reviewed, reason, n in rows:
        answers.setdefault(task, Counter())[answer] += n
        if excluded:
            set_aside[_rule_of(reason or "", reviewed)] += n
    return RatingStanding(answered=sum(sum(c.values()) for c in answers.values()), excluded=sum(set_aside.values()),
                          set_aside=dict(set_aside), answers={task: dict(c) for task, c in answers.items()})


def _rule_of(reason: str, reviewed: int) -> str:
    if reviewed:
        return ADMIN
    if BIAS_WORDS in reason:
        return BIAS
    return SPEED if RULE_WORDS[SPEED][0] in reason else RATE


def answered_units(db: Database, annotator_id: int, task: str) -> int:
    """How many units of ``task`` the annotator has answered at least one question of."""
    return db.execute("SELECT COUNT(DISTINCT unit) FROM ratings WHERE annotator_id = ? AND task = ?",
                      [annotator_id, task]).fetchone()[0]


# --- quality rules ---------------------------------------------------------------------------------------------------

def _facts(db: Database, annotator_id: int, since: float | None) -> list[VoteFact]:
    sql = "SELECT id, answered_at, task || ':' || answer, NULL FROM ratings WHERE annotator_id = ?"
    rows = db.execute(sql + ("" if since is None else " AND answered_at >= ?"),
                      [annotator_id] if since is None else [annotator_id, since]).fetchall()
    return [VoteFact(*row) for row in rows]


def straight_lining(db: Database, annotator_id: int,
                    rules: QualityRules = QualityRules()) -> dict[str, str]:
    """The bias rule for ratings: {task: reason} for each task with at least ``bias_min_votes`` of the annotator's
    ratings of which one answer makes up at least ``bias_share`` (every image "fits", every Likert a 5)."""
    reasons = {}
    counts = db.execute("SELECT task, answer, COUNT(*) FROM ratings WHERE annotator_id = ? GROUP BY task, answer",
                        [annotator_id]).fetchall()
    per_task: dict[str, Counter] = {}
    for task, answer, n in counts:
        per_task.setdefault(task, Counter())[answer] = n
    for task, answers in sorted(per_task.items()):
        total = sum(answers.values())
        answer, top = max(answers.items(), key=lambda item: (item[1], item[0]))
        if total >= rules.bias_min_votes and top >= rules.bias_share * total:
            reasons[task] = f"at least {rules.bias_share:.0%} {BIAS_WORDS}{task} answers are {answer}"
    return reasons


def update_flags(db: Database, annotator_id: int, rules: QualityRules = QualityRules(), *,
                 full: bool = False, paces: Mapping[str, float] | None = None) -> dict[int, tuple[int, int]]:
    """Bring the ``excluded`` flags of an annotator's unreviewed ratings in line with the rules (module docstring);
    return {rating id: (excluded before, after)} of the ratings it changed (flag or reason).

    The rate and speed rules look back at most three hours, so only the ratings of the last three hours (with three
    more of context) are re-examined, unless the bias rule names a task or flagged a rating before (then every
    rating of the annotator) or ``full``. Ratings are counted apart from votes: a rater may vote and rate in one sitting.
    The rate rule counts all of a rater's ratings; the speed rule runs over each task's ratings apart, at its pace
    (``paces``: {task: seconds}; a task not in it: ``rules.fast_seconds``)."""
    with db.conn:
        source = db.execute("SELECT source FROM annotators WHERE id = ?", [annotator_id]).fetchone()
        trusted = source is not None and source[0] in rules.trusted_sources
        bias = straight_lining(db, annotator_id, rules)
        newest = db.execute("SELECT max(answered_at) FROM ratings WHERE annotator_id = ?", [annotator_id]).fetchone()[0]
        flagged_bias = db.execute("SELECT 1 FROM ratings WHERE annotator_id = ? AND reviewed = 0 AND "
                                  "excluded_reason LIKE ?", [annotator_id, f"%{BIAS_WORDS}%"]).fetchone()
        window = None if full or bias or flagged_bias or newest is None else newest - 3 * 3600
        facts = _facts(db, annotator_id, None if window is None else window - 3 * 3600)
        reasons = _paced_reasons(facts, rules, paces or {})
        for fact in facts:
            reason = bias.get(fact.outcome.split(":", 1)[0])
            if reason:
                reasons.setdefault(fact.vote_id, []).append((BIAS, reason))
        sql = "SELECT id, excluded, excluded_reason FROM ratings WHERE annotator_id = ? AND reviewed = 0"
        rows = db.execute(sql if window is None else sql + " AND answered_at >= ?",
                          [annotator_id] if window is None else [annotator_id, window]).fetchall()
        changed: dict[int, tuple[int, int]] = {}
        for rating_id, excluded, reason in rows:
            wanted = verdict(reasons.get(rating_id, ()), trusted)
            if (excluded, reason) != wanted:
                db.execute("UPDATE ratings SET excluded = ?, excluded_reason = ? WHERE id = ?", [*wanted, rating_id])
                changed[rating_id] = (excluded, wanted[0])
    return changed


def _paced_reasons(facts: list[VoteFact], rules: QualityRules, paces: Mapping[str, float]) -> dict:
    """The rate rule over all of ``facts``, the speed rule over each task's at its pace (:func:`update_flags`)."""
    never = len(facts) + 1  # a run or a count no list of these facts reaches
    reasons = rule_reasons(facts, replace(rules, fast_streak=never), bias=[])
    per_task: dict[str, list[VoteFact]] = {}
    for fact in facts:
        per_task.setdefault(fact.outcome.split(":", 1)[0], []).append(fact)
    for task, group in per_task.items():
        paced = replace(rules, fast_seconds=paces.get(task, rules.fast_seconds), max_per_hour=never,
                        max_per_3_hours=never)
        for rating_id, parts in rule_reasons(group, paced, bias=[]).items():
            reasons.setdefault(rating_id, []).extend(parts)
    return reasons


ADMIN_PREFIXES = ("excluded by an admin", "included by an admin")
RULES_SAID = " (the rules: "  # before the rules' reason, kept in an admin's decision


def review_rating(db: Database, rating_id: int, *, exclude: bool, note: str = "") -> str:
    """An admin's final word on one rating: exclude it or count it despite the rules, with ``note`` (the reason);
    :func:`review_ratings`."""
    return review_ratings(db, exclude=exclude, reason=note, rating_id=rating_id)


def review_ratings(db: Database, *, exclude: bool, reason: str = "", rating_id: int | None = None,
                   rater: str | None = None) -> str:
    """An admin's final word on one rating (``rating_id``) or on all of one rater's (``rater``): excluded, or counted
    despite the rules, with the admin's ``reason``; the ratings become ``reviewed`` (the rules leave them alone).
    Each keeps the rules' reason once after the admin's ("included by an admin: checked (the rules: ...)"), however
    often an admin changes their mind. Returns the confirmation in words; LookupError for an unknown rating or
    rater (nothing written)."""
    reason = " ".join(str(reason or "").split())[:200]
    where, params = ("id = ?", [rating_id]) if rating_id is not None else ("rater = ?", [rater])
    verb = "excluded" if exclude else "included"
    with db.conn:
        rows = db.execute(f"SELECT id, excluded_reason FROM ratings WHERE {where}", params).fetchall()
        if not rows:
            raise LookupError(f"No rating with id {rating_id}. Copy the id from the flagged ratings table."
                              if rating_id is not None else f"No ratings by {rater!r}. Pick a rater from the menu.")
        for found, before in rows:
            said = _rules_said(before)
            text = f"{verb} by an admin" + (f": {reason}" if reason else "") + (f"{RULES_SAID}{said})" if said else "")
            db.execute("UPDATE ratings SET excluded = ?, reviewed = 1, excluded_reason = ? WHERE id = ?",
                       [int(exclude), text, found])
    what = f"rating {rating_id}" if rating_id is not None else f"{len(rows)} ratings by {rater}"
    return f"{verb.capitalize()} {what}" + (f". Reason: {reason}." if reason else ".")


def _rules_said(reason: str) -> str:
    """The rules' reason in a rating's ``excluded_reason``: all of it before any admin's decision, else what an
    admin's decision kept of it ("" when the rules had none)."""
    if not reason.startswith(ADMIN_PREFIXES):
        return reason
    return reason.split(RULES_SAID, 1)[1][:-1] if RULES_SAID in reason else ""


def rating_raters(db: Database) -> list[str]:
    """The names of everyone who has rated, in order (the admin's per-rater review picks one)."""
    return [name for name, in db.execute("SELECT DISTINCT rater FROM ratings ORDER BY rater")]


def flagged_ratings(db: Database, limit: int = 500) -> list[dict]:
    """Ratings the rules flagged (excluded, or reported for a trusted account) or an admin reviewed, newest first."""
    return list(db.query(
        "SELECT id AS rating_id, rater, task, answer, created_at, excluded, reviewed, excluded_reason AS reason "
        "FROM ratings WHERE excluded = 1 OR reviewed = 1 OR excluded_reason != '' ORDER BY id DESC LIMIT ?",
        [limit]))


# --- reading the ratings back ---------------------------------------------------------------------------------------

RATING_COLUMNS = ["rating_id", "task", "unit", "subject", "rater", "annotator_id", "answer", "value", "image_id",
                  "idx", "prompt_id", "text_prompt_id", "model_id", "model", "suite", "subset", "item_key", "role",
                  "text_role", "metadata", "seconds_to_answer", "answered_at", "excluded"]


def ratings_frame(db: Database, *, task: str | Sequence[str] | None = None,
                  include_excluded: bool = False) -> pd.DataFrame:
    """The ratings (of ``task``), oldest first, with their image's prompt and model: :data:`RATING_COLUMNS`
    (``role``: the image's prompt's role, ``text_role``: the role of the prompt asked about); ``answer`` and
    ``metadata`` (the image's prompt's) decoded. Excluded ratings are left out unless
    ``include_excluded``."""
    tasks = [task] if isinstance(task, str) else list(task) if task is not None else None
    clauses, params = [], []
    if tasks is not None:
        clauses.append(f"r.task IN ({','.join('?' * len(tasks)) or 'NULL'})")
        params += tasks
    if not include_excluded:
        clauses.append("r.excluded = 0")
    rows = db.execute(
        "SELECT r.id, r.task, r.unit, r.subject, r.rater, r.annotator_id, r.answer, r.value, r.image_id, i.idx, "
        "r.prompt_id, r.text_prompt_id, r.model_id, m.name, p.suite, p.subset, p.item_key, p.role, t.role, "
        "p.metadata, r.seconds_to_answer, r.answered_at, r.excluded FROM ratings r JOIN images i ON i.id = r.image_id "
        "JOIN prompts p ON p.id = r.prompt_id JOIN prompts t ON t.id = r.text_prompt_id "
        "JOIN models m ON m.id = r.model_id "
        f"{'WHERE ' + ' AND '.join(clauses) if clauses else ''} ORDER BY r.id", params).fetchall()
    frame = pd.DataFrame(rows, columns=RATING_COLUMNS)
    frame["answer"] = [json.loads(text) for text in frame["answer"]]
    frame["metadata"] = [json.loads(text or "{}") for text in frame["metadata"]]
    frame["excluded"] = frame["excluded"].astype(bool)
    return frame
