"""The human rating tasks: one :class:`RatingTask` declaration per benchmark, in the registry :data:`RATING_TASKS`.

Three benchmarks validate their judges against people who answer a question about one image (not a pairwise vote).
Each is declared here once: the question as the paper words it, the answer scale (:mod:`datamodel.rating_scales`),
the guidelines from the paper's instructions, how many raters the paper used, and its *units*, the questions one
rater answers together, which are the judges' own units so that every judge is held against the humans on the same
items (:mod:`judges.human_compare`):

- ``commonsense_fit`` (Commonsense-T2I §2.3 and §3.1): experts decide whether the content of an image fits a
  description, fit 1 / 0. A unit is one generation pair of one model: the images I1 of P1 and I2 of P2 with the same
  generation index, each asked against both descriptions D1 and D2, four questions named as the fit judge names its
  judgments (``image:<id>:d1`` / ``:d2``); the unit is the judge's pair (``pair:<I1>:<I2>``). Two experts per item.
- ``semvar_alignment`` (SemVarBench Appendix E.2, Figure 13, Table 13): raters score the alignment of matched and
  mismatched image–text pairs with the automatic protocol's two scores, Object Accuracy and Relevance, 0–50 each. A
  unit is one item of one model with the judge's seven (text, image) pairs (:data:`judges.semvar.CALLS`), subjects
  ``text:<prompt id>:image:<image id>``, unit ``item:<anchor image id>``. Three raters.
- ``saneval_adherence`` (SANEval Appendix D, Figures 5–9): annotators see an image and its prompt and rate on a
  Likert scale whether the conditions the prompt specifies (per category) are satisfied. A unit is one image
  (``image:<id>``, the scorer's subject). The paper's figures hold the interface, whose words are not in the text:
  the five points and their labels between its two ends, "poor" and "perfect" alignment, are this project's.

A task declared elsewhere (a plug-in, a test) calls ``RATING_TASKS.register`` in its own module; the rating page, the admin's
assignment, the exports, the statistics and the judge board ask this registry and never name a task.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from core.registry import Registry
from datamodel.database import Database
from datamodel.rating_scales import ChoiceScale, Point, Scale, Score, ScoresScale
from judges import commonsense, saneval, semvar
from judges.human_stats import (COMMONSENSE_COMPARISON, SANEVAL_COMPARISON, SEMVAR_COMPARISON, Comparison,
                                commonsense_human_accuracy, saneval_human_scores, semvar_human_scores)
from judges.saneval_rules import StructureError, category_of
from judges.selection import Selection


@dataclass(frozen=True)
class Question:
    """One question of a unit: its ``subject`` (as the judges name theirs), the image asked about, the prompt whose
    words are asked about (``text_prompt_id``) and those words (``shown_text``: a description, a text)."""

    subject: str
    image_id: int
    text_prompt_id: int
    shown_text: str


@dataclass(frozen=True)
class RatingUnit:
    """The questions one rater answers together (the judges' unit): ``key``, the image's ``model_id``, its
    ``categories`` and the questions."""

    key: str
    task: str
    model_id: int
    categories: tuple[str, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class RatingTask:
    """One human rating task (module docstring).

    - ``name``: stored in ``ratings.task``; ``suite``: the prompts it rates; ``title``: what raters and the admin read.
    - ``question``: the question as the paper words it; ``criteria``: per category (the image prompt's category) a
      line saying what to check, "" for every category.
    - ``text_label``: what the words asked about are called on the page ("Description", "Text"), "" when the
      question is about the prompt itself; ``show_prompt``: whether the image's own prompt is shown (not for
      SemVarBench, whose mismatched pairs ask about another prompt's text).
    - ``scale``: the answers (:mod:`datamodel.rating_scales`); ``guidelines``: the instructions (Markdown).
    - ``raters``: how many raters per item the paper used; ``source``: where the paper says so.
    - ``pace``: the speed rule's seconds for this task (:mod:`datamodel.quality`): an answer less than this after the
      rater's previous answer to the task is fast, and runs of fast answers are set aside. Below a careful rater's
      pace on the task's question, which is not a battle's (docs/human-ratings.md, "The pace rule").
    - ``plan(db, selection)``: the task's units over the images of ``selection``.
    - ``compare``: how its judges are held against its raters (:class:`judges.human_stats.Comparison`; None: no
      judge to compare).
    - ``tables``: {title: function of the task's ratings frame giving a DataFrame}: the paper's human tables
      (:mod:`judges.human_stats`).
    """

    name: str
    suite: str
    title: str
    question: str
    scale: Scale
    guidelines: str
    raters: int
    source: str
    plan: Callable[[Database, Selection], list[RatingUnit]]
    text_label: str = ""
    show_prompt: bool = True
    criteria: Mapping[str, str] = field(default_factory=dict)
    compare: Comparison | None = None
    tables: Mapping[str, Callable] = field(default_factory=dict)
    pace: float = 5.0

    def units(self, db: Database, models: tuple[str, ...] = ()) -> list[RatingUnit]:
        """The units over the images of ``models`` (all models when empty) that a battle may show: rendered for the
        display and not withheld (``battle_images``), so a question's first image request is never a timed render
        and a published image is never put before a rater."""
        return self.plan(db, Selection(self.suite, models=tuple(models), shown_only=True))

    def criteria_for(self, metadata: Mapping, subset: str = "") -> str:
        """The criteria line for an image whose prompt has ``metadata`` and ``subset`` ("" when none)."""
        category = str(metadata.get("category") or subset or "").lower()
        return self.criteria.get(category, self.criteria.get("", ""))


# the built-in tasks are declared below; a plug-in's module (an entry point of t2i_arena.rating_tasks) declares its own
RATING_TASKS = Registry[RatingTask]("rating_tasks", ("judges.rating_tasks",), what="rating task")


# --- Commonsense-T2I ------------------------------------------------------------------------------------------------

FIT = ChoiceScale("fit", (Point(1, "Fits", "Y"), Point(0, "Does not fit", "N")), level="nominal")


def _commonsense_units(db: Database, selection: Selection) -> list[RatingUnit]:
    """One unit per generation pair of each item and model (:func:`judges.commonsense.plan_units`)."""
    units, _ = commonsense.plan_units(db, selection)
    planned = []
    for unit in units:
        for first, second in unit.pairs:
            asked = (("d1", first, unit.descriptions[0]), ("d2", second, unit.descriptions[1]))
            questions = tuple(Question(f"image:{image.image_id}:{which}", image.image_id, prompt.prompt_id, text)
                              for image in (first, second) for which, prompt, text in asked)
            planned.append(RatingUnit(f"pair:{first.image_id}:{second.image_id}", COMMONSENSE.name, unit.model_id,
                                      (commonsense.category_of(first),), questions))
    return planned


COMMONSENSE = RATING_TASKS.register(RatingTask(
    name="commonsense_fit", suite=commonsense.SUITE, title="Commonsense-T2I: does the image fit the description?",
    question="Does the content in the image fit the description?",
    text_label="Description", scale=FIT, raters=2, plan=_commonsense_units, compare=COMMONSENSE_COMPARISON,
    pace=2.0,  # one image, one description, yes or no: careful raters answered 2.5-4.5 s apart
    tables={"Table 2, Human column: accuracy per model (and category)": commonsense_human_accuracy},
    source="Commonsense-T2I §2.3 (fit and the pair score), §3.1 (two experts per item, four generations)",
    guidelines=(
        "Look at the image and decide whether what it shows fits the **description** under it: **Fits** (1) or "
        "**Does not fit** (0). Judge the content, not the image's quality or style. Each image comes twice, once "
        "with the description its own prompt expects and once with the description of the item's other prompt; "
        "answer each on its own. An item counts as right only when both of its images fit their own description "
        "and not the other one, averaged over its generations. Keys: Y or 1 (fits), N or 0 (does not fit)."),
))


# --- SemVarBench ----------------------------------------------------------------------------------------------------

TABLE_13 = {
    "object_accuracy": (
        (50, "Perfectly Accurate (All objects exist, and their attributes are described correctly)."),
        (40, "Highly Accurate (All objects exist, but some minor details may differ slightly)."),
        (30, "Partially Accurate (Most objects exist, but there are noticeable errors in appearance, color, or "
             "shape)."),
        (20, "Mostly Inaccurate (Significant deviation from the description, with multiple attribute errors)."),
        (10, "Severely Inaccurate (Most object details contradict the description)."),
        (0, "Completely Inaccurate (Objects described are missing or entirely replaced by different objects)."),
    ),
    "relevance": (
        (50, "Perfect Match (Object positions and interactions fully align with the description)."),
        (40, "Highly Matched (Most object positions and relationships align, with minor mismatches that do not affect "
             "overall understanding)."),
        (30, "Partially Matched (Key objects exist, but there are significant mismatches in position or "
             "relationships, leading to a slightly different overall context)."),
        (20, "Mostly Mismatched (Object relationships do not align with the description)."),
        (10, "Severely Misaligned (Most object relationships are chaotic)."),
        (0, "Completely Mismatched (All Object relationships are completely different from the description)."),
    ),
}
SEMVAR_SCORES = ScoresScale(
    (Score("object_accuracy", "Object Accuracy", "The existence and attributes of objects."),
     Score("relevance", "Relevance", "Relationships, positions, and interactions between objects.")),
    low=0, high=50, anchors=TABLE_13)


def _semvar_units(db: Database, selection: Selection) -> list[RatingUnit]:
    """One unit per item and model with the judge's seven (text, image) pairs (:data:`judges.semvar.CALLS`)."""
    planned = []
    for unit in semvar.plan_units(db, selection):
        anchor = unit.images["anchor"]
        questions = tuple(
            Question(f"text:{unit.images[text].prompt_id}:image:{unit.images[image].image_id}",
                     unit.images[image].image_id, unit.images[text].prompt_id, unit.images[text].text)
            for text, image in semvar.CALLS)
        planned.append(RatingUnit(f"item:{anchor.image_id}", SEMVAR.name, unit.model_id,
                                  tuple(semvar.categories_of(anchor)), questions))
    return planned


def _table_13() -> str:
    lines = []
    for score in SEMVAR_SCORES.scores:
        lines.append(f"**{score.label} (0-50 points)**: {score.help}")
        lines += [f"- {value}: {text}" for value, text in TABLE_13[score.name]]
        lines.append("")
    return "\n".join(lines)


SEMVAR = RATING_TASKS.register(RatingTask(
    name="semvar_alignment", suite=semvar.SUITE, title="SemVarBench: does the image align with the text?",
    question="Does the generated image align with the given text?", text_label="Text", show_prompt=False,
    scale=SEMVAR_SCORES, raters=3, plan=_semvar_units, compare=SEMVAR_COMPARISON,
    pace=4.0,  # a text to read against the image, two scores to give
    tables={"Table 11: human evaluation, S̄, γ_w, γ_wo and κ per model (and category)": semvar_human_scores},
    source="SemVarBench Appendix E.2 (three raters, the automatic protocol's scores), Figure 13, Table 13",
    guidelines=(
        "Score how well the image aligns with the **text** above it, with the two scores of the automatic "
        "evaluation, 0 to 50 each. The text may be the image's own prompt or another sentence of the same words in "
        "another order: score the image against the text shown, whatever it was drawn for. Table 13's criteria:\n\n"
        + _table_13() + "Keys: digits 0-5 pick the next score in tens (3 → 30), Enter sends, Backspace clears."),
))


# --- SANEval --------------------------------------------------------------------------------------------------------

LIKERT = ChoiceScale("likert", (Point(1, "1 · Poor", "1"), Point(2, "2 · Weak", "2"), Point(3, "3 · Partial", "3"),
                                Point(4, "4 · Good", "4"), Point(5, "5 · Perfect", "5")), level="ordinal")


def _saneval_units(db: Database, selection: Selection) -> list[RatingUnit]:
    """One unit per image of a SANEval prompt (:func:`judges.saneval.plan_units`)."""
    planned = []
    for row in saneval.plan_units(db, selection):
        try:
            category = category_of(row.metadata, row.subset)
        except StructureError:
            category = row.subset
        planned.append(RatingUnit(f"image:{row.image_id}", SANEVAL.name, row.model_id, (category,),
                                  (Question(f"image:{row.image_id}", row.image_id, row.prompt_id, row.text),)))
    return planned


SANEVAL_CRITERIA = {
    "spatial": "Condition: the objects stand in the spatial relation the prompt names.",
    "numeracy": "Condition: each object appears as many times as the prompt says.",
    "color": "Condition: each object has the colour the prompt gives it.",
    "shape": "Condition: each object has the shape the prompt gives it.",
    "texture": "Condition: each object has the texture the prompt gives it."}

def _adherence_guidelines(low: str, high: str, keys: str) -> str:
    return ("Read the prompt, look at the image and rate how well the image satisfies the conditions the prompt "
            "specifies for its category (the spatial relation, the number of objects, or each object's colour, shape "
            f"or texture), from **{low}** (the conditions are not met) to **{high}** (every condition is met). Judge "
            f"adherence to the conditions, not beauty. Keys: {keys}.")


SANEVAL = RATING_TASKS.register(RatingTask(
    name="saneval_adherence", suite=saneval.SUITE, title="SANEval: are the prompt's conditions satisfied?",
    question="Are the specified conditions satisfied in the image?", scale=LIKERT, raters=1,
    pace=2.5,  # a short prompt and its condition line, five points
    plan=_saneval_units, compare=SANEVAL_COMPARISON,
    tables={"Table 4: human evaluation per model and category, Total": saneval_human_scores},
    source="SANEval Appendix D (an image and its prompt, a Likert scale from poor to perfect alignment), "
           "Figures 5-9, Table 4",
    criteria=SANEVAL_CRITERIA, guidelines=_adherence_guidelines("1 · Poor", "5 · Perfect", "1 to 5"),
))

# Table 4's cells are means of 100 answers that move in steps of 0.001: the paper's raters answered in tenths (a
# five-point Likert's means move in steps of 0.0025; tests/test_saneval_published.py). The same question on eleven
# points, 0 (poor) to 10 (perfect), value v / 10: the scale the saneval-paper preset's Table 4 reads.
TENTHS = ChoiceScale("tenths", (Point(0, "0 · Poor", "0"), *(Point(v, str(v), str(v)) for v in range(1, 10)),
                                Point(10, "10 · Perfect", "t")), level="ordinal")

SANEVAL_TENTHS = RATING_TASKS.register(replace(
    SANEVAL, name="saneval_adherence_10", title="SANEval: are the prompt's conditions satisfied? (0-10)", scale=TENTHS,
    pace=3.0,  # as the Likert, on eleven points
    tables={"Table 4: human evaluation per model and category, Total (answers in tenths)": saneval_human_scores},
    source="SANEval Appendix D (an image and its prompt, a scale from poor to perfect alignment), Figures 5-9, "
           "Table 4 (means of 100 answers in steps of 0.001: answers in tenths)",
    guidelines=_adherence_guidelines("0 · Poor", "10 · Perfect", "0 to 9, and T for 10"),
))
