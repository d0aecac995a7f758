"""What the Ratings tab tells a rater about their answers and the quality rules, as the Arena tab tells a voter about
votes (:mod:`arena.web.render`): answers given and counted, why those set aside do not count (rule by rule, the
answer named in words), and a warning before the bias rule sets a task's answers aside, from half its minimum on.

The rules are the votes' (:mod:`datamodel.quality`), applied to ratings by :mod:`datamodel.human_ratings`: the bias
rule sets aside all of a rater's answers to one task when one answer makes up ``bias_share`` of at least
``bias_min_votes`` of them; the speed rule uses each task's own pace (:attr:`judges.rating_tasks.RatingTask.pace`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from datamodel.human_ratings import RatingStanding
from datamodel.quality import BIAS, RATE, SPEED, QualityRules
from datamodel.standing import ADMIN


def answer_words(task, answer: str) -> str:
    """A stored answer (its JSON text) as the rater read it ("5 · Perfect", "Object accuracy 30, Relevance 40"); the
    text itself when ``task`` (a :class:`judges.rating_tasks.RatingTask`, or None) cannot read it."""
    try:
        return task.scale.label(json.loads(answer)) if task is not None else answer
    except (ValueError, KeyError, TypeError, StopIteration):
        return answer


def short_title(task) -> str:
    """A task's name for a sentence ("SANEval" of "SANEval: does the image follow the prompt?")."""
    return task.title.split(":")[0]


def answers_text(standing: RatingStanding) -> str:
    """"6 answers so far, 0 count": every answer and those the statistics count."""
    n = standing.answered
    given = f"{n} answer{'s' if n != 1 else ''} so far"
    if not n or standing.counted == n:
        return given + (", all count" if n > 1 else ", it counts" if n else "")
    return f"{given}, {standing.counted} count{'s' if standing.counted == 1 else ''}"


def set_aside_text(standing: RatingStanding, rules: QualityRules, declared: Mapping) -> str:
    """Why the answers that do not count were set aside, rule by rule ("" when every answer counts)."""
    if not standing.excluded:
        return ""
    biased = [f"{short_title(declared[task])} answers are “{answer_words(declared[task], top)}”"
              for task, top in _top_answers(standing, declared) if _share(standing, task) >= rules.bias_share
              and sum(standing.answers[task].values()) >= rules.bias_min_votes]
    why = {
        RATE: f"past {rules.max_per_hour:,} answers in an hour or {rules.max_per_3_hours:,} in 3 hours",
        SPEED: f"in a run of {rules.fast_streak} or more answers given faster than the task's pace",
        BIAS: (f"set aside with all your answers to the task because {rules.bias_share:.0%} or more of your "
               f"{' and '.join(biased) or 'answers to it are the same'} (from {rules.bias_min_votes} answers on)"),
        ADMIN: "set aside by the admin",
    }
    parts = "; ".join(f"{n} {why[rule]}" for rule, n in standing.set_aside.items())
    verb = "does" if standing.excluded == 1 else "do"
    return f"{standing.excluded} of your answers {verb} not count: {parts}."


def bias_notice(standing: RatingStanding, rules: QualityRules, declared: Mapping) -> str:
    """The warning before the bias rule sets a task's answers aside: from half its minimum of answers on, for a task
    whose answers are one answer ``bias_share`` of the time or more and are not set aside yet ("" when none)."""
    notices = []
    for task, top in _top_answers(standing, declared):
        total, count = sum(standing.answers[task].values()), standing.answers[task][top]
        if total < max(1, rules.bias_min_votes // 2) or count < rules.bias_share * total or (
                total >= rules.bias_min_votes):
            continue
        notices.append(f"{count} of your {total} {short_title(declared[task])} answers are "
                       f"“{answer_words(declared[task], top)}”. From {rules.bias_min_votes} answers on, when "
                       f"{rules.bias_share:.0%} or more of a rater's answers to one task are the same, all of them are "
                       "set aside: give each image the answer it deserves.")
    return " ".join(notices)


def _top_answers(standing: RatingStanding, declared: Mapping) -> list[tuple[str, str]]:
    """(task, its most frequent answer) of each declared task the rater answered."""
    return [(task, max(counts.items(), key=lambda item: (item[1], item[0]))[0])
            for task, counts in standing.answers.items() if task in declared and counts]


def _share(standing: RatingStanding, task: str) -> float:
    counts = standing.answers[task]
    return max(counts.values()) / sum(counts.values())
