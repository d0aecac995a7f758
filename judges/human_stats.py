"""The papers' statistics from human ratings, and how each rating task is held against its judges.

Inputs are the counted (not excluded) ratings of one task, :func:`datamodel.human_ratings.ratings_frame`; the
``*_human`` functions read them from the database themselves (what the reports call for their "Human" columns).

Commonsense-T2I (§2.3, §3.1; Table 2's Human column, Figure 4)
    Per rater and generation pair (unit) with all four fits answered: the fits of each image against its own and
    its partner's description; an image said to fit both keeps one of the two at random, as the paper does for its
    evaluators (``fits_both="pick"``, a generator seeded by the seed, the rater and the image; ``"strict"``
    keeps both, so such a pair scores 0). score = 1 iff fit(I1,D1) + fit(I2,D2) − fit(I1,D2) − fit(I2,D1) = 2
    (:func:`judges.commonsense.pair_score`). A pair's score is the mean over its raters ("their average scores"),
    an item's the mean over its generations, a model's accuracy the mean over items, overall and per category.
SemVarBench (Appendix E.2; Table 11)
    Per question S(T, I) = (Relevance + Object Accuracy) / 100, the mean over its raters ("we use their mean scores
    to calculate SemVarEffect"); per item and model with all seven questions, S̄, γ_w, γ_wo and κ = γ_w − γ_wo
    (:func:`judges.semvar.item_scores`); per model the means over items, overall and per category.
SANEval (Appendix D; Table 4)
    Per image the mean over its raters of the Likert answer on [0, 1] ((L − 1) / 4 on five points); per model and
    category the mean over images; Total the unweighted mean of the categories present
    (:func:`judges.saneval_rules.category_scores`, which Table 4's Total follows: 0.7304 for Imagen 3.0).
Agreement between raters (:func:`rater_agreement`)
    Per question: Fleiss' κ over the answers of a choice scale, Krippendorff's α at the scale's level (nominal fit,
    ordinal Likert, interval SemVarBench score S), Cohen's κ per pair of raters (:mod:`ratings.rater_agreement`).

Judges against humans (:class:`Comparison`, used by :mod:`judges.human_compare`): a fit judge's fits (the T2 fit
judge's raw fits, the CLIP evaluator's fit(I, D) = [cos(I, D) > cos(I, D')]) against every expert fit on the same
question: accuracy and Cohen's κ. The SemVarBench judge's SemVarEffect κ per item against the humans' (Table 12):
Pearson's r, Spearman's ρ, and Cohen's κ of the sign of κ (−, 0, +): the paper does not say how it made its
continuous SemVarEffect categorical; the sign, whether a model reacts more to a change of meaning than to a change of
words, is this project's choice. The SANEval scorer's image score against the raters' mean Likert per image:
Spearman's ρ (and Pearson's r).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from datamodel.database import Database
from datamodel.human_ratings import ratings_frame
from datamodel.judgments import judgments, metric_rows
from datamodel.rating_scales import ChoiceScale, Scale
from judges.commonsense import pair_score, resolve_fits
from judges.saneval_rules import CATEGORIES as SANEVAL_CATEGORIES, category_scores
from judges.semvar import CALLS, item_scores
from ratings.rater_agreement import fleiss, krippendorff_alpha, pairwise_cohen, sign_classes

FITS_BOTH = ("pick", "strict")


def by_rater(frame: pd.DataFrame, key: str = "subject", value: str = "value") -> dict[str, dict[str, float]]:
    """{rater: {key: value}} of a ratings frame."""
    result: dict[str, dict[str, float]] = {}
    for rater, item, given in zip(frame["rater"], frame[key], frame[value]):
        result.setdefault(rater, {})[item] = float(given)
    return result


def _category(metadata: Mapping, subset: str) -> str:
    return str(metadata.get("category") or subset or "")


# --- Commonsense-T2I ------------------------------------------------------------------------------------------------

def commonsense_pair_scores(frame: pd.DataFrame, *, fits_both: str = "pick", seed: int = 0) -> pd.DataFrame:
    """One row per rater and generation pair with its four fits answered: rater, unit, model, item_key, category,
    idx, the four fits (after the pick) and the pair's score (module docstring)."""
    if fits_both not in FITS_BOTH:
        raise ValueError(f"fits_both must be one of {', '.join(FITS_BOTH)}, got {fits_both!r}.")
    columns = ["rater", "unit", "model", "item_key", "category", "idx", "fit_11", "fit_12", "fit_21", "fit_22",
               "score"]
    rows = []
    for (rater, unit), group in frame.groupby(["rater", "unit"], sort=True):
        first, second = (int(part) for part in unit.split(":")[1:3])
        fits = {subject: int(value) for subject, value in zip(group["subject"], group["value"])}
        wanted = [f"image:{image}:{which}" for image in (first, second) for which in ("d1", "d2")]
        if not all(subject in fits for subject in wanted):
            continue
        resolved = {}
        for image, own, partner in ((first, "d1", "d2"), (second, "d2", "d1")):
            f_own, f_partner = fits[f"image:{image}:{own}"], fits[f"image:{image}:{partner}"]
            if fits_both == "pick":
                f_own, f_partner, _ = resolve_fits(f_own, f_partner,
                                                   random.Random(f"commonsense-human:{seed}:{rater}:{image}"))
            resolved[image] = (f_own, f_partner)
        (f11, f12), (f22, f21) = resolved[first], resolved[second]
        head = group.iloc[0]
        rows.append([rater, unit, head["model"], head["item_key"], _category(head["metadata"], head["subset"]),
                     int(head["idx"]), f11, f12, f21, f22, pair_score(f11, f22, f12, f21)])
    return pd.DataFrame(rows, columns=columns)


def commonsense_human_accuracy(frame: pd.DataFrame, *, fits_both: str = "pick", seed: int = 0) -> pd.DataFrame:
    """Human accuracy per model, overall (category '') and per category (module docstring): model, category,
    accuracy (a fraction; ×100 for Table 2's percentages), items, pairs, raters."""
    pairs = commonsense_pair_scores(frame, fits_both=fits_both, seed=seed)
    columns = ["model", "category", "accuracy", "items", "pairs", "raters"]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    per_pair = pairs.groupby(["model", "item_key", "category", "unit"], as_index=False).agg(
        score=("score", "mean"), raters=("rater", "nunique"))
    per_item = per_pair.groupby(["model", "item_key", "category"], as_index=False).agg(
        score=("score", "mean"), pairs=("unit", "size"))
    rows = []
    for model, group in per_item.groupby("model", sort=True):
        raters = int(pairs.loc[pairs["model"] == model, "rater"].nunique())
        rows.append([model, "", float(group["score"].mean()), len(group), int(group["pairs"].sum()), raters])
        for category, part in group.groupby("category", sort=True):
            rows.append([model, category, float(part["score"].mean()), len(part), int(part["pairs"].sum()),
                         int(pairs.loc[(pairs["model"] == model) & (pairs["category"] == category), "rater"]
                             .nunique())])
    return pd.DataFrame(rows, columns=columns)


# --- SemVarBench ----------------------------------------------------------------------------------------------------

CALL_INDEX = {call: k for k, call in enumerate(CALLS)}


def semvar_item_effects(frame: pd.DataFrame) -> pd.DataFrame:
    """Per item and model with all seven questions answered, from the raters' mean S per question: unit, model,
    categories, raters, S̄ (``mean``), γ_w, γ_wo, κ (:func:`judges.semvar.item_scores`, on every item at once)."""
    columns = ["unit", "model", "categories", "raters", "mean", "gamma_w", "gamma_wo", "kappa"]
    calls = pd.Series([CALL_INDEX.get(pair, -1) for pair in zip(frame["text_role"], frame["role"])], index=frame.index,
                      dtype="int64") if len(frame) else pd.Series(dtype="int64")
    known = frame.assign(call=calls)[calls >= 0]
    if known.empty:
        return pd.DataFrame(columns=columns)
    scores = known.pivot_table(index="unit", columns="call", values="value", aggfunc="mean")
    scores = scores.reindex(columns=range(len(CALLS))).dropna()
    if scores.empty:
        return pd.DataFrame(columns=columns)
    effects = pd.DataFrame(item_scores(*(scores[k].to_numpy() for k in range(len(CALLS)))), index=scores.index)
    heads = (known.assign(_anchor=known["role"] != "anchor").sort_values("_anchor", kind="stable")
             .drop_duplicates("unit").set_index("unit"))  # the anchor image's row of each unit where there is one
    raters = known.groupby("unit")["rater"].nunique()
    categories = [tuple(m.get("categories") or ([m["category"]] if m.get("category") else []))
                  for m in heads.loc[effects.index, "metadata"]]
    return pd.DataFrame({"unit": effects.index, "model": heads.loc[effects.index, "model"].to_numpy(),
                         "categories": categories, "raters": raters.loc[effects.index].to_numpy(),
                         **{k: effects[k].to_numpy() for k in ("mean", "gamma_w", "gamma_wo", "kappa")}},
                        columns=columns).reset_index(drop=True)


def semvar_rater_effects(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    """{rater: {unit: SemVarEffect κ from that rater's own seven scores}} for the units a rater completed."""
    result: dict[str, dict[str, float]] = {}
    for rater, group in frame.groupby("rater", sort=True):
        effects = semvar_item_effects(group)
        result[rater] = dict(zip(effects["unit"], effects["kappa"]))
    return result


def semvar_human_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 11 from human scores: model, subset ('' all, else a category), items, S̄ (``mean``), γ_w, γ_wo, κ."""
    effects = semvar_item_effects(frame)
    columns = ["model", "subset", "items", "mean", "gamma_w", "gamma_wo", "kappa"]
    rows = []
    for model, group in effects.groupby("model", sort=True):
        subsets = {"": group}
        for category in sorted({c for categories in group["categories"] for c in categories}):
            subsets[category] = group[[category in categories for categories in group["categories"]]]
        for subset, part in subsets.items():
            rows.append([model, subset, len(part), *(float(part[k].mean()) for k in
                                                     ("mean", "gamma_w", "gamma_wo", "kappa"))])
    return pd.DataFrame(rows, columns=columns)


# --- SANEval --------------------------------------------------------------------------------------------------------

def saneval_image_values(frame: pd.DataFrame) -> pd.DataFrame:
    """Per image: subject, image_id, model, category, raters and the mean Likert answer on [0, 1] (``value``)."""
    columns = ["subject", "image_id", "model", "category", "raters", "value"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame = frame.assign(category=[_category(m, s).lower() for m, s in zip(frame["metadata"], frame["subset"])])
    return frame.groupby(["subject", "image_id", "model", "category"], as_index=False).agg(
        raters=("rater", "nunique"), value=("value", "mean"))[columns]


def saneval_human_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 4 from human ratings: per model the mean per category and Total (module docstring), and images."""
    images = saneval_image_values(frame)
    columns = ["model", *SANEVAL_CATEGORIES, "total", "images"]
    rows = []
    for model, group in images.groupby("model", sort=True):
        scores = category_scores(zip(group["category"], group["value"]))
        rows.append([model, *(scores.get(c, float("nan")) for c in SANEVAL_CATEGORIES), scores.get("overall"),
                     len(group)])
    return pd.DataFrame(rows, columns=columns)


# --- what the reports call ------------------------------------------------------------------------------------------

def commonsense_human(db: Database, *, task: str = "commonsense_fit", fits_both: str = "pick",
                      seed: int = 0) -> pd.DataFrame:
    """Commonsense-T2I Table 2's Human column (:func:`commonsense_human_accuracy`) from the stored ratings."""
    return commonsense_human_accuracy(ratings_frame(db, task=task), fits_both=fits_both, seed=seed)


def semvar_human(db: Database, *, task: str = "semvar_alignment") -> pd.DataFrame:
    """SemVarBench Table 11 from human ratings (:func:`semvar_human_scores`)."""
    return semvar_human_scores(ratings_frame(db, task=task))


def saneval_human(db: Database, *, task: str = "saneval_adherence") -> pd.DataFrame:
    """SANEval Table 4 from human ratings (:func:`saneval_human_scores`)."""
    return saneval_human_scores(ratings_frame(db, task=task))


# --- agreement between raters ----------------------------------------------------------------------------------------

def answer_values(frame: pd.DataFrame, scale: Scale) -> pd.Series:
    """The number each rating's agreement is measured on: the chosen point of a choice scale, else the value S."""
    if isinstance(scale, ChoiceScale):
        return pd.Series([answer[scale.name] for answer in frame["answer"]], index=frame.index, dtype=float)
    return frame["value"].astype(float)


def rater_agreement(frame: pd.DataFrame, scale: Scale, *, min_shared: int = 1) -> dict:
    """Agreement between the raters of one task on the same questions (module docstring): ``raters``,
    ``ratings``, ``questions``, ``shared`` (questions with two raters or more), ``fleiss_kappa`` and
    ``fleiss_agreement`` (choice scales; NaN for scores), ``alpha`` (Krippendorff, at ``level``) and ``pairs``
    (Cohen's κ per pair of raters sharing ``min_shared`` questions; choice scales)."""
    values = by_rater(frame.assign(point=answer_values(frame, scale)), value="point") if len(frame) else {}
    choice = isinstance(scale, ChoiceScale)
    domain = scale.values if choice else None
    result = {"raters": len(values), "ratings": int(len(frame)), "questions": int(frame["subject"].nunique())
              if len(frame) else 0, "level": scale.level}
    counted = fleiss(values, categories=domain) if choice else {"items": None, "agreement": np.nan, "kappa": np.nan}
    shared = int((frame.groupby("subject")["rater"].nunique() >= 2).sum()) if len(frame) else 0
    result.update(shared=shared, fleiss_kappa=counted["kappa"], fleiss_agreement=counted["agreement"],
                  alpha=krippendorff_alpha(values, scale.level, domain),
                  pairs=pairwise_cohen(values, min_shared) if choice else [])
    return result


# --- how each task is held against its judges -------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """How a rating task's judges are compared with its raters.

    - ``kind``: ``agreement`` (every rating against the judge on its question: accuracy, Cohen's κ) or
      ``correlation`` (the judge against the raters' ``consensus`` per key: Pearson, Spearman, and Cohen's κ of
      ``classes``);
    - ``machines(db)``: {judge: {key: value}}, every judge's values;
    - ``raters(frame)``: {rater: {key: value}}, each rater's own (for the human ceiling, and the agreement kind);
    - ``consensus(frame)``: {key: value} of all raters (correlation kind);
    - ``what``: what a key is, for the board ("fit per question").
    """

    kind: str
    machines: Callable[[Database], dict[str, dict[str, float]]]
    raters: Callable[[pd.DataFrame], dict[str, dict[str, float]]]
    what: str
    consensus: Callable[[pd.DataFrame], dict[str, float]] | None = None
    classes: Callable[[np.ndarray], np.ndarray] | None = None


def commonsense_machine_fits(db: Database) -> dict[str, dict[str, float]]:
    """Each fit judge's raw fits per question (judgments ``commonsense_fit``), and each CLIP evaluator's
    fit(I, D1) = [cos_d1 > cos_d2], fit(I, D2) = [cos_d2 > cos_d1] (metric ``commonsense_clip_fit``)."""
    fits: dict[str, dict[str, float]] = {}
    for row in judgments(db, task="commonsense_fit"):
        if row["status"] == "ok" and row["verdict"].get("fit") in (0, 1):
            fits.setdefault(row["judge"], {})[row["subject"]] = float(row["verdict"]["fit"])
    for row in metric_rows(db, scorer=None, name="commonsense_clip_fit", suite="commonsense"):
        c1, c2 = row["details"].get("cos_d1"), row["details"].get("cos_d2")
        if c1 is None or c2 is None:
            continue
        given = fits.setdefault(f"CLIP evaluator {row['scorer']}", {})
        given[f"image:{row['image_id']}:d1"] = float(c1 > c2)
        given[f"image:{row['image_id']}:d2"] = float(c2 > c1)
    return fits


def semvar_machine_effects(db: Database) -> dict[str, dict[str, float]]:
    """Each SemVarBench judge's SemVarEffect κ per item (judgments ``semvar_item``, keyed by the unit)."""
    effects: dict[str, dict[str, float]] = {}
    for row in judgments(db, task="semvar_item"):
        if row["status"] == "ok" and "kappa" in row["verdict"]:
            effects.setdefault(row["judge"], {})[row["subject"]] = float(row["verdict"]["kappa"])
    return effects


def saneval_machine_scores(db: Database) -> dict[str, dict[str, float]]:
    """Each SANEval scorer's image score per image (metric ``saneval_image_score``)."""
    scores: dict[str, dict[str, float]] = {}
    for row in metric_rows(db, scorer=None, name="saneval_image_score", suite="saneval"):
        if row["value"] is not None:
            scores.setdefault(row["scorer"], {})[f"image:{row['image_id']}"] = float(row["value"])
    return scores


def _semvar_consensus(frame: pd.DataFrame) -> dict[str, float]:
    effects = semvar_item_effects(frame)
    return dict(zip(effects["unit"], effects["kappa"]))


def _saneval_consensus(frame: pd.DataFrame) -> dict[str, float]:
    images = saneval_image_values(frame)
    return dict(zip(images["subject"], images["value"]))


COMMONSENSE_COMPARISON = Comparison("agreement", commonsense_machine_fits, by_rater, "fit per question")
SEMVAR_COMPARISON = Comparison("correlation", semvar_machine_effects, semvar_rater_effects,
                               "SemVarEffect κ per item", consensus=_semvar_consensus, classes=sign_classes)
SANEVAL_COMPARISON = Comparison("correlation", saneval_machine_scores, by_rater, "score per image",
                                consensus=_saneval_consensus)
