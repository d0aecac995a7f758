"""T3 SemVarBench alignment judge: SemVarEffect from seven judge scores per item and model.

An item has three prompts of suite ``semvarbench`` sharing an ``item_key``: the anchor T_a, the permutation T_pv
(same words, meaning changed) and the paraphrase T_pi (meaning kept), roles ``anchor`` / ``permutation`` /
``paraphrase``; a model has one image of each (the lowest generation index is used). The judge scores
S(T, I) = (Relevance + Object Accuracy) / 100 from the two ``[[n]]`` (0-50) of the T3 prompt, seven times:
S(T_a,I_a), S(T_pv,I_pv), S(T_pi,I_pi), S(T_pv,I_a), S(T_a,I_pv), S(T_pi,I_a), S(T_a,I_pi). Then (:func:`item_scores`)

    S̄    = mean of S(T_a,I_a), S(T_pv,I_pv), S(T_pi,I_pi)
    γ_w  = |S(T_a,I_pv) - S(T_a,I_a)| + |S(T_pv,I_pv) - S(T_pv,I_a)|
    γ_wo = |S(T_a,I_pi) - S(T_a,I_a)| + |S(T_pi,I_pi) - S(T_pi,I_a)|
    κ    = γ_w - γ_wo   (SemVarEffect)

and a model's score is the mean over items, overall and per category (``metadata["categories"]``). An item with a
failed call gets no score; the failed calls are stored as judgments with the reason.

Results (scorer / judge = the judge name): per call a judgment of task ``semvar_score``; per image the metric
``semvar_alignment`` = S(T, I) of its own prompt; per item and model a judgment of task ``semvar_item`` (the seven
scores, S̄, γ_w, γ_wo, κ and the template version); per model the metrics ``semvar_score`` (S̄),
``semvar_gamma_w``, ``semvar_gamma_wo`` and ``semvar_kappa`` (SemVarEffect), subset '' and subset = category, from
the item scores of the current template version only (items judged with another template under the same judge name
are left out, and model scores only they gave are deleted).

Aspects (Section 4.3, Fig. 8; Tables 9 and 10 group the categories so): :func:`aspect_scores` gives the same four
means over the items with at least one category of each aspect of :data:`suites.semvarbench.ASPECTS` (Relation,
Attribute Comparison, Attribute Value), each item once per aspect. The paper does not say how its aspect scores
(Ideogram 2: 0.07, 0.13, 0.19) were averaged; they are not reproduced by weighting its own Table 9/10 values by the
categories' sizes (Attribute Comparison gives 0.15), so this item mean is the project's reading.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
from dataclasses import dataclass, replace
from typing import Sequence

from datamodel.database import Database
from datamodel.judgments import (
    Judgment,
    delete_other_versions,
    judgments,
    other_versions_notes,
    save_judgment,
    split_by_version,
)
from datamodel.metrics import MetricRow, write_metrics
from datamodel.models import model_names
from judges.client import Engine, EngineConfig
from judges.parsing import parse_semvar, read_reply
from judges.prompts import SEMVAR_TEMPLATE, Templates, semvar_request
from judges.run import RunSummary, run_units
from judges.selection import ImageRow, Selection, SelectionError, image_rows, items_by_model
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask
from suites.semvarbench import ASPECT_OF, ASPECTS

SUITE = "semvarbench"
ROLES = ("anchor", "permutation", "paraphrase")
TASK = "semvar_score"
ITEM_TASK = "semvar_item"
# The seven (text role, image role) calls, in the order of the protocol's worked examples.
CALLS = (("anchor", "anchor"), ("permutation", "permutation"), ("paraphrase", "paraphrase"),
         ("permutation", "anchor"), ("anchor", "permutation"), ("paraphrase", "anchor"), ("anchor", "paraphrase"))
MODEL_METRICS = {"mean": "semvar_score", "gamma_w": "semvar_gamma_w", "gamma_wo": "semvar_gamma_wo",
                 "kappa": "semvar_kappa"}


def item_scores(s_a_a: float, s_pv_pv: float, s_pi_pi: float, s_pv_a: float, s_a_pv: float, s_pi_a: float,
                s_a_pi: float) -> dict[str, float]:
    """S̄, γ_w, γ_wo and κ of one item from its seven scores (arguments in :data:`CALLS` order)."""
    gamma_w = abs(s_a_pv - s_a_a) + abs(s_pv_pv - s_pv_a)
    gamma_wo = abs(s_a_pi - s_a_a) + abs(s_pi_pi - s_pi_a)
    return {"mean": (s_a_a + s_pv_pv + s_pi_pi) / 3, "gamma_w": gamma_w, "gamma_wo": gamma_wo,
            "kappa": gamma_w - gamma_wo}


def categories_of(row: ImageRow) -> list[str]:
    names = row.metadata.get("categories") or ([row.metadata["category"]] if row.metadata.get("category") else [])
    return [str(name) for name in names]


def template_version(templates: Templates) -> str:
    return "t3:" + hashlib.sha256(templates.semvar.encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Unit:
    item: tuple
    model_id: int
    images: dict  # role -> ImageRow (lowest generation index)


def plan_units(db: Database, selection: Selection) -> list[Unit]:
    rows = image_rows(db, replace(selection, suite=selection.suite or SUITE, limit=None))  # limit: items
    items = items_by_model(rows, ROLES)
    return [Unit(key, model_id, {role: images[0] for role, images in by_role.items()})
            for key in list(items)[: selection.limit] for model_id, by_role in items[key].items()]


async def judge_semvar(
    db: Database, media, engine: Engine, units: Sequence[Unit], *, judge: str,
    templates: Templates = Templates(), progress: bool = True, handle_signals: bool = True,
) -> RunSummary:
    """Ask the seven scores of every unit, store judgments and item scores, then the model scores."""
    summary = RunSummary(judge, TASK)
    detail = engine.config.image_detail
    version = template_version(templates)

    async def worker(unit: Unit) -> str:
        calls = [(unit.images[text_role], unit.images[image_role]) for text_role, image_role in CALLS]
        replies = await asyncio.gather(*(engine.ask(semvar_request(templates, text.text, image.input(media), detail))
                                         for text, image in calls))
        for status in ("stopped", "dry_run"):
            if any(reply.status == status for reply in replies):
                return status
        scores = []
        with db.conn:
            for (text, image), reply in zip(calls, replies):
                parsed = read_reply(reply, parse_semvar)
                verdict = ({"relevance": parsed.value.relevance, "object_accuracy": parsed.value.object_accuracy,
                            "score": parsed.value.score} if parsed.ok else {})
                scores.append(parsed.value.score if parsed.ok else None)
                save_judgment(db, Judgment(
                    judge, TASK, f"text:{text.prompt_id}:image:{image.image_id}", "ok" if parsed.ok else "failed",
                    parsed.reason, verdict, raw=[reply.text], request_keys=(reply.key,), prompt_id=text.prompt_id,
                    image_id=image.image_id, model_id=image.model_id))
                if parsed.ok and text is image:
                    write_metrics(db, [MetricRow(
                        model_id=image.model_id, image_id=image.image_id, suite=image.suite, subset=image.subset,
                        name="semvar_alignment", value=parsed.value.score, scorer=judge, scorer_version=version)])
            if any(score is None for score in scores):
                return "failed"
            result = item_scores(*scores)
            anchor = unit.images["anchor"]
            save_judgment(db, Judgment(
                judge, ITEM_TASK, f"item:{anchor.image_id}", "ok",
                verdict={**result, "item_key": anchor.item_key, "categories": categories_of(anchor),
                         "scores": {f"S(T_{t},I_{i})": s for (t, i), s in zip(CALLS, scores)},
                         "template_version": version},
                prompt_id=anchor.prompt_id, image_id=anchor.image_id, model_id=anchor.model_id))
        return "ok"

    await run_units(engine, units, worker, summary, progress=progress, handle_signals=handle_signals)
    if not engine.dry_run:
        rows = aggregate(db, judge, version)
        summary.extra["model_scores"] = rows
        summary.notes.extend(
            f"SemVarEffect κ of {row['model']}: {row['kappa']:.3f} (S̄ {row['mean']:.3f}, γ_w {row['gamma_w']:.3f}, "
            f"γ_wo {row['gamma_wo']:.3f}) over {row['items']} items" for row in rows if row["subset"] == "")
        summary.notes.extend(other_versions_notes(rows, "item scores"))
    return summary


def aggregate(db: Database, judge: str, version: str = "") -> list[dict]:
    """Write the model-level SemVarBench metrics (means over items, overall and per category) of the stored item
    scores of ``judge`` judged with template ``version`` ('': every version); return the rows written (with
    ``other_versions``, the item scores of other versions left out). Model scores of ``judge`` written under another
    version are deleted."""
    names = model_names(db)
    groups: dict[tuple[int, str], list[dict]] = {}
    rows, other_versions = split_by_version(judgments(db, judge, ITEM_TASK), version,
                                            lambda row: row["verdict"].get("template_version"))
    if version:
        delete_other_versions(db, scorer=judge, suite=SUITE, names=MODEL_METRICS.values(), version=version)
    for row in rows:
        for subset in ["", *row["verdict"].get("categories", [])]:
            groups.setdefault((row["model_id"], subset), []).append(row["verdict"])
    written = []
    for (model_id, subset), items in sorted(groups.items()):
        means = {key: sum(item[key] for item in items) / len(items) for key in MODEL_METRICS}
        for key, name in MODEL_METRICS.items():
            write_metrics(db, [MetricRow(model_id=model_id, suite=SUITE, subset=subset, name=name, value=means[key],
                                     scorer=judge, scorer_version=version, details={"items": len(items)})])
        written.append({"model": names[model_id], "subset": subset, "items": len(items), **means,
                        "other_versions": other_versions})
    return written


def aspect_scores(db: Database, judge: str, version: str = "") -> list[dict]:
    """{model, aspect, items, mean, gamma_w, gamma_wo, kappa} per model and aspect (paper order) from the stored item
    scores of ``judge`` with template ``version`` ('': every version); an item counts once in each aspect of its
    categories."""
    names = model_names(db)
    rows, _ = split_by_version(judgments(db, judge, ITEM_TASK), version,
                               lambda row: row["verdict"].get("template_version"))
    groups: dict[tuple[int, str], list[dict]] = {}
    for row in rows:
        for aspect in dict.fromkeys(ASPECT_OF[c] for c in row["verdict"].get("categories", []) if c in ASPECT_OF):
            groups.setdefault((row["model_id"], aspect), []).append(row["verdict"])
    order = list(ASPECTS)
    return [{"model": names[model_id], "aspect": aspect, "items": len(items),
             **{key: sum(item[key] for item in items) / len(items) for key in MODEL_METRICS}}
            for (model_id, aspect), items in sorted(groups.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1])))]


async def run_semvar(
    db: Database, media, config: EngineConfig, selection: Selection = Selection(), *,
    name: str = "gpt-judge", templates: Templates = Templates(), dry_run: bool = False, env=None,
    progress: bool = True, handle_signals: bool = True,
) -> RunSummary:
    """Plan the (item, model) units of ``selection`` (limit = items) and judge them."""
    units, notes = plan_units(db, selection), []
    if not units:
        raise SelectionError(f"No {SUITE} item of {selection.describe()} has images for all of "
                             f"{', '.join(ROLES)}. Import the suite and generate its images first.")
    async with Engine(db, config, env=env, dry_run=dry_run) as engine:
        summary = await judge_semvar(db, media, engine, units, judge=f"{name}:{config.model}", templates=templates,
                                     progress=progress, handle_signals=handle_signals)
    summary.notes.extend(dict.fromkeys(notes))
    return summary


async def _run(job: JudgeJob, args: argparse.Namespace) -> RunSummary:
    return await run_semvar(job.db, job.media, job.config, job.selection, **job.common())


JUDGE_TASKS.register(JudgeTask(
    name="semvar", run=_run, default_suite=SUITE, templates=(SEMVAR_TEMPLATE,),
    description="SemVarBench alignment judge (T3): seven S(T, I) per item and model, SemVarEffect per model.",
))
