"""T1 pairwise judge: a multimodal LLM votes on battles like an annotator does.

Battles are either drawn like the arena draws them (:func:`plan_drawn`: the ``uniform`` strategy of
:mod:`datamodel.battles` — a prompt, two distinct models, one image of each, random sides — within the selected
suite / subset / variant / models, from a seeded generator), copied from existing human battles
(:func:`plan_human`, same prompt, same images, same sides), so judge and human votes can be compared per battle, or
planned one per item as the taxonomy paper did (:func:`plan_items`: two uniformly drawn models per concept, the same
battle in every variant). The judge reads the generation prompt, or (``user_prompt="concept"``, the paper's Figure
7) the concept and its definition.

Each battle is sent with the T1 prompt and the two images (data URLs, detail configurable). With the position-bias
control (the default) it is asked in both orders: if the two verdicts agree once the second is swapped back, that is
the vote; if not, the vote is a tie (Chatbot Arena's rule for its LLM judge) and the judgment is marked
``inconsistent``, with both raw verdicts kept. ``single_order`` asks once, which is the published protocol exactly.

A vote goes through :func:`datamodel.votes.record_vote` on a battle served to the judge (voter kind ``judge``, voter =
the judge configuration's name: name, model and template version, :func:`judge_name`), in the same transaction as its
judgment, which records the template version too; a failed judgment (an API error after the last retry, a
refusal, a reply without a verdict) is stored with its reason and casts no vote. Drawn battle *i* of a seed has the
subject ``draw:<filters>:seed<seed>:<i>``, a copied one ``human:<battle id>``, an item's
``item:<filters>:seed<seed>:<suite>/<subset>/<item key>/<variant>``: a subject judged once is skipped by
later runs, so re-running never casts a second vote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import uuid
from dataclasses import dataclass, field
from typing import Sequence

from datamodel.battles import Pairing, imported_human_battles, voted_human_battles

from datamodel.database import Database
from sampling.draws import serve_battle
from datamodel.votes import record_vote
from judges.client import Engine, EngineConfig, Reply
from judges.parsing import SWAPPED, VERDICT_OUTCOMES, parse_pairwise, read_reply
from judges.prompts import PAIRWISE_TEMPLATE, Templates, pairwise_request
from judges.request import ImageInput
from judges.run import RunSummary, run_units
from judges.selection import ImageRow, Selection, SelectionError, image_rows, model_ids
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask
from datamodel.judgments import Judgment, copied_vote_outcomes, judged_subjects, judgments, save_judgment

TASK = "pairwise"
SOURCES = ("draw", "human", "items")
USER_PROMPTS = ("generation", "concept")
DEFAULT_DRAWS = 100


def judge_name(model: str, name: str = "gpt-judge", single_order: bool = False, version: str = "") -> str:
    """The voter name of a judge configuration: its name (``-single-order`` when asked once), model and template
    version (:meth:`judges.prompts.JudgeTemplate.version`), e.g. ``gpt-judge:gpt-4o-mini@1a2b3c4d``. Judges run
    before template versions voted as ``NAME:MODEL``, and keep that name."""
    return f"{name}{'-single-order' if single_order else ''}:{model}{f'@{version}' if version else ''}"


def pairwise_judge_name(model: str, name: str, single_order: bool, templates: Templates) -> str:
    """The voter name of the pairwise judge ``name`` asking ``model`` with the pairwise template of ``templates``."""
    return judge_name(model, name, single_order, PAIRWISE_TEMPLATE.version(templates))


@dataclass(frozen=True)
class PlannedBattle:
    subject: str
    pairing: Pairing
    prompt: str
    left: ImageInput
    right: ImageInput
    source_battle_id: str | None = None
    metadata: dict = field(default_factory=dict)  # the prompt's metadata (the concept, for user_prompt="concept")
    variant: str = ""


# --- planning ---------------------------------------------------------------------------------------------------

def _pool(rows: Sequence[ImageRow]) -> dict[int, dict[int, list[ImageRow]]]:
    """{prompt_id: {model_id: [images by idx]}} for prompts with images from at least two models."""
    pool: dict[int, dict[int, list[ImageRow]]] = {}
    for row in rows:
        pool.setdefault(row.prompt_id, {}).setdefault(row.model_id, []).append(row)
    return {pid: models for pid, models in sorted(pool.items()) if len(models) >= 2}


def plan_drawn(db: Database, media, selection: Selection, *, count: int, seed: int = 0,
               max_tries_per_draw: int = 50) -> list[PlannedBattle]:
    """``count`` battles drawn as :func:`datamodel.battles.draw_uniform` draws them, within ``selection``.

    The i-th battle of a seed is the same whatever ``count`` is. A draw that repeats a pair of images already drawn
    in this plan (in either order) is drawn again.
    """
    pool = _pool(image_rows(db, selection))
    if not pool:
        raise SelectionError(f"No prompt of {selection.describe()} has images from two models. Generate or import "
                             "images, or widen the filters.")
    rng = random.Random(seed)
    prompt_ids = sorted(pool)
    plans, seen = [], set()
    scope = selection.scope()
    for index in range(count):
        for _ in range(max_tries_per_draw):
            prompt_id = rng.choice(prompt_ids)
            images_by_model = pool[prompt_id]
            model_a, model_b = rng.sample(sorted(images_by_model), 2)
            left, right = rng.choice(images_by_model[model_a]), rng.choice(images_by_model[model_b])
            pair = (prompt_id, *sorted((left.image_id, right.image_id)))
            if pair not in seen:
                break
        else:
            break  # the pool is (nearly) exhausted: fewer battles than asked
        seen.add(pair)
        plans.append(PlannedBattle(
            f"draw:{scope}:seed{seed}:{index}", Pairing(prompt_id, left.image_id, right.image_id), left.text,
            left.input(media), right.input(media), metadata=left.metadata, variant=left.variant))
    return plans


def plan_items(db: Database, media, selection: Selection, *, seed: int = 0) -> list[PlannedBattle]:
    """One battle per item, as the taxonomy paper planned its battles (§4.1): for each item of the selection (its
    ``suite, subset, item_key``, in that order), two distinct models drawn uniformly from those with an image of
    every selected variant of the item, their sides random, and that same battle (first image of each) judged in
    every variant, so a concept's battle with and without its definition compares the same two models. At most
    ``selection.limit`` items; an item with fewer than two such models has no battle. Seeded: item *i*'s draw
    depends only on the seed and the items before it."""
    rows = image_rows(db, selection)
    variants: dict[tuple[str, str, str], dict[str, dict[str, ImageRow]]] = {}
    for row in rows:  # {item: {variant: {model: its first image}}}
        variants.setdefault((row.suite, row.subset, row.item_key), {}).setdefault(row.variant, {}).setdefault(
            row.model, row)
    rng = random.Random(seed)
    plans = []
    scope = selection.scope()
    for item in sorted(variants)[: selection.limit]:
        by_variant = variants[item]
        models = sorted(set.intersection(*(set(images) for images in by_variant.values())))
        if len(models) < 2:
            continue
        model_a, model_b = rng.sample(models, 2)
        for variant in sorted(by_variant):
            left, right = by_variant[variant][model_a], by_variant[variant][model_b]
            plans.append(PlannedBattle(
                f"item:{scope}:seed{seed}:{'/'.join(item)}/{variant}", Pairing(left.prompt_id, left.image_id,
                                                                            right.image_id),
                left.text, left.input(media), right.input(media), metadata=left.metadata, variant=variant))
    if not plans:
        raise SelectionError(f"No item of {selection.describe()} has images from two models in every variant. "
                             "Generate or import images, or widen the filters.")
    return plans


def concept_prompt(plan: "PlannedBattle") -> str:
    """The user prompt of the taxonomy paper's Figure 7: the concept, with its definition in parentheses in the
    with-definition variant ("inherited disorder (a genetic condition ...)"), without the generation prompt's "An
    image of"; a prompt without a concept in its metadata keeps its text."""
    lemma = str(plan.metadata.get("lemma") or "").strip()
    if not lemma:
        return plan.prompt
    definition = str(plan.metadata.get("definition") or "").strip()
    return f"{lemma} ({definition})" if definition and plan.variant == "with_definition" else lemma


def plan_human(db: Database, media, selection: Selection,
               include_excluded: bool = False) -> list[PlannedBattle]:
    """The human battles with a vote (within ``selection``), oldest first, then the imported human votes whose file
    carried their images (GenAI-Bench, Pick-a-Pic), each as a battle for the judge."""
    ids = model_ids(db, selection.models)
    rows = voted_human_battles(db, suite=selection.suite, subset=selection.subset, variant=selection.variant,
                               model_ids=ids.values() if selection.models else None,
                               include_excluded=include_excluded)
    imported = imported_human_battles(db, suite=selection.suite, subset=selection.subset,
                                      variant=selection.variant, model_ids=ids.values() if selection.models else None)
    return [
        PlannedBattle(f"human:{row[0]}", Pairing(row[1], row[3], row[8]), row[2],
                      ImageInput.from_media(media, row[4], row[5], row[6], row[7]),
                      ImageInput.from_media(media, row[9], row[10], row[11], row[12]),
                      source_battle_id=None if row[0].startswith("imported:") else row[0],
                      metadata=json.loads(row[13] or "{}"), variant=row[14])
        for row in [*rows, *imported]
    ]


# --- deciding (pure) --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    label: str | None        # A / B / C / D as shown, or None when it failed
    reason: str = ""
    explanation: str = ""


def read_answer(reply: Reply) -> Answer:
    """The verdict of one reply, or why there is none (API error, refusal, no final verdict)."""
    parsed = read_reply(reply, parse_pairwise)
    if not parsed.ok:
        return Answer(None, parsed.reason)
    return Answer(parsed.value.label, explanation=parsed.value.explanation)


@dataclass(frozen=True)
class Decision:
    status: str              # ok | inconsistent | failed
    outcome: str | None      # A | B | tie | both_bad relative to the battle's sides, None when failed
    reason: str
    verdict: dict


def decide(answers: Sequence[Answer]) -> Decision:
    """The vote from one answer (single order) or two (the second asked with the images swapped)."""
    labels = [a.label for a in answers]
    orders = [{"shown": "AB" if i == 0 else "BA", "label": label,
               "label_as_battle": (label if i == 0 else SWAPPED[label]) if label else None}
              for i, label in enumerate(labels)]
    verdict = {"orders": orders}
    failures = [f"{'first' if i == 0 else 'swapped'} order: {a.reason}"
                for i, a in enumerate(answers) if a.label is None]
    if failures:
        return Decision("failed", None, "; ".join(failures), {**verdict, "outcome": None})
    back = [o["label_as_battle"] for o in orders]
    if len(back) == 1 or back[0] == back[1]:
        outcome = VERDICT_OUTCOMES[back[0]]
        return Decision("ok", outcome, "", {**verdict, "outcome": outcome, "consistent": True})
    reason = f"the orders disagree: {back[0]} as shown, {back[1]} with the images swapped (back in battle order)"
    return Decision("inconsistent", "tie", reason, {**verdict, "outcome": "tie", "consistent": False})


def position_bias(verdicts: Sequence[dict]) -> dict:
    """First-position win rates: ``before`` over every decisive answer as shown (each order counts), ``after`` over
    the decisive final votes (A = the battle's left image)."""
    shown = [o["label"] for v in verdicts for o in v.get("orders", []) if o.get("label") in ("A", "B")]
    final = [v["outcome"] for v in verdicts if v.get("outcome") in ("A", "B")]
    rate = lambda labels: (sum(label == "A" for label in labels) / len(labels)) if labels else None  # noqa: E731
    return {"before": rate(shown), "before_n": len(shown), "after": rate(final), "after_n": len(final)}


# --- running ----------------------------------------------------------------------------------------------------

def _write(db: Database, plan: PlannedBattle, decision: Decision, *, judge: str, session_id: str,
           replies: Sequence[Reply], answers: Sequence[Answer], version: str) -> None:
    explanation = "\n\n".join(f"[{o}] {a.explanation}" for o, a in zip(("AB", "BA"), answers) if a.explanation)
    judgment = Judgment(
        judge, TASK, plan.subject, decision.status, decision.reason, decision.verdict,
        raw=[r.text for r in replies], explanation=explanation, request_keys=tuple(r.key for r in replies),
        prompt_id=plan.pairing.prompt_id, source_battle_id=plan.source_battle_id, template_version=version,
    )
    with db.conn:
        if decision.outcome is None:
            save_judgment(db, judgment)
            return
        battle = serve_battle(db, random.Random(0), session_id=session_id, judge=judge, pairing=plan.pairing)
        record_vote(db, battle.id, decision.outcome, session_id=session_id, rules=None)
        save_judgment(db, Judgment(**{**judgment.__dict__, "battle_id": battle.id}))


async def judge_battles(
    db: Database, engine: Engine, plans: Sequence[PlannedBattle], *, judge: str,
    templates: Templates = Templates(), single_order: bool = False, limit: int | None = None,
    progress: bool = True, handle_signals: bool = True, user_prompt: str = "generation",
) -> RunSummary:
    """Judge ``plans`` (skipping subjects already judged; at most ``limit``) and write votes and judgments. The
    judge reads the battle's generation prompt, or with ``user_prompt="concept"`` the concept (:func:`concept_prompt`)."""
    if user_prompt not in USER_PROMPTS:
        raise ValueError(f"unknown user prompt {user_prompt!r}; choose one of {', '.join(USER_PROMPTS)}.")
    done = judged_subjects(db, judge, TASK)
    todo = [plan for plan in plans if plan.subject not in done]
    summary = RunSummary(judge, TASK, skipped=len(plans) - len(todo))
    todo = todo[:limit] if limit is not None else todo
    session_id = f"judge-run:{uuid.uuid4().hex}"
    detail = engine.config.image_detail
    version = PAIRWISE_TEMPLATE.version(templates)

    async def worker(plan: PlannedBattle) -> str:
        text = concept_prompt(plan) if user_prompt == "concept" else plan.prompt
        requests = [pairwise_request(templates, text, plan.left, plan.right, detail)]
        if not single_order:
            requests.append(pairwise_request(templates, text, plan.right, plan.left, detail))
        replies = await asyncio.gather(*(engine.ask(request) for request in requests))
        for status in ("stopped", "dry_run"):
            if any(reply.status == status for reply in replies):
                return status
        answers = [read_answer(reply) for reply in replies]
        decision = decide(answers)
        _write(db, plan, decision, judge=judge, session_id=session_id, replies=replies, answers=answers,
               version=version)
        return decision.status

    await run_units(engine, todo, worker, summary, progress=progress, handle_signals=handle_signals)
    if not engine.dry_run:
        verdicts = [row["verdict"] for row in judgments(db, judge, TASK) if row["status"] != "failed"]
        bias = position_bias(verdicts)
        summary.extra["position_bias"] = bias
        if bias["before"] is not None:
            summary.notes.append(
                f"first-position win rate: {bias['before']:.3f} over {bias['before_n']} answers as shown (before), "
                f"{bias['after']:.3f} over {bias['after_n']} final votes (after)" if bias["after"] is not None else
                f"first-position win rate: {bias['before']:.3f} over {bias['before_n']} answers as shown (before)")
        agreement = human_agreement(db, judge)
        if agreement["n"]:
            summary.extra["human_agreement"] = agreement
            summary.notes.append(f"agreement with the human vote on the same battle: {agreement['agreement']:.3f} "
                                 f"over {agreement['n']} battles")
    if todo == [] and plans:
        summary.notes.append("every planned battle is already judged: use another --seed (or a larger --limit) "
                             "for new battles.")
    return summary


def human_agreement(db: Database, judge: str) -> dict:
    """How often the judge's vote equals the human vote on the battle it copied (same sides, same images)."""
    rows = copied_vote_outcomes(db, judge, TASK)
    agree = sum(a == b for a, b in rows)
    return {"n": len(rows), "agreement": agree / len(rows) if rows else None}


async def run_pairwise(
    db: Database, media, config: EngineConfig, selection: Selection = Selection(), *,
    source: str = "draw", seed: int = 0, single_order: bool = False, name: str = "gpt-judge",
    templates: Templates = Templates(), dry_run: bool = False, env=None, progress: bool = True,
    handle_signals: bool = True, user_prompt: str = "generation",
) -> RunSummary:
    """Plan battles (``source`` draw: ``selection.limit`` draws of ``seed``, default 100; human: the human battles,
    at most ``selection.limit`` not yet judged; items: one battle per item, :func:`plan_items`) and judge them."""
    if source not in SOURCES:
        raise ValueError(f"unknown battle source {source!r}; choose one of {', '.join(SOURCES)}.")
    judge = pairwise_judge_name(config.model, name, single_order, templates)
    if source == "draw":
        count = selection.limit if selection.limit is not None else DEFAULT_DRAWS
        plans, limit = plan_drawn(db, media, selection, count=count, seed=seed), None
        if len(plans) < count:
            note = f"only {len(plans)} distinct battles could be drawn of the {count} asked ({selection.describe()})."
        else:
            note = ""
    elif source == "items":
        plans, limit, note = plan_items(db, media, selection, seed=seed), None, ""
    else:
        plans, limit, note = plan_human(db, media, selection), selection.limit, ""
        if not plans:
            raise SelectionError(f"No human battle with a vote in {selection.describe()}. Vote in the arena first, "
                                 "or use --source draw.")
    async with Engine(db, config, env=env, dry_run=dry_run) as engine:
        summary = await judge_battles(db, engine, plans, judge=judge, templates=templates, single_order=single_order,
                                      limit=limit, progress=progress, handle_signals=handle_signals,
                                      user_prompt=user_prompt)
    if note:
        summary.notes.append(note)
    return summary


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", choices=SOURCES, default="draw",
                        help="draw new battles like the arena (default), copy the human battles with a vote, or "
                             "one battle per item with the same two models in every variant (items: the taxonomy "
                             "paper's design)")
    parser.add_argument("--user-prompt", choices=USER_PROMPTS, default="generation",
                        help="what the judge reads as the user prompt: the generation prompt (default) or the "
                             "concept with its definition (the taxonomy paper's Figure 7)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the drawn battles (default 0)")
    parser.add_argument("--single-order", action="store_true",
                        help="ask once, in the displayed order (the published protocol exactly)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="ask again the battles whose judgment failed (a reply without a verdict, a refusal): "
                             "their cached replies are dropped first")


async def _run(job: JudgeJob, args: argparse.Namespace) -> RunSummary:
    if args.retry_failed and not job.dry_run:
        from judges.compare import forget_failed

        forget_failed(job.db, TASK, pairwise_judge_name(job.config.model, job.name, args.single_order, job.templates))
    return await run_pairwise(job.db, job.media, job.config, job.selection, source=args.source, seed=args.seed,
                              single_order=args.single_order, user_prompt=args.user_prompt, **job.common())


JUDGE_TASKS.register(JudgeTask(
    name=TASK, run=_run, add_arguments=_add_arguments, templates=(PAIRWISE_TEMPLATE,),
    description="Vote on battles like an annotator (protocols.md T1), asking in both orders unless --single-order.",
    limit_help="--source draw: how many battles to draw with the seed (default 100); --source human: at most this "
               "many human battles not yet judged (default all); --source items: the first this many items "
               "(default all)",
))
