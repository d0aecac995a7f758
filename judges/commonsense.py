"""T2 Commonsense-T2I fit judge.

For an item (prompts P1 and P2 of suite ``commonsense`` sharing an ``item_key``, roles ``p1``/``p2``, each with the
expected ``description`` in its metadata) and a model with images I1 for P1 and I2 for P2 (the image of generation
index k of P1 paired with the image of the same index k of P2; a generation that one of the two prompts lacks is
skipped and counted in the run's notes), the judge answers fit(I, D) in {0, 1} for both images and both
descriptions with the T2 prompt. When it says an image fits both D1 and D2, one of the two is kept at random (a
generator seeded by the run seed and the image id, so a re-run keeps the same choice). The pair scores 1 iff

    fit(I1, D1) + fit(I2, D2) - fit(I1, D2) - fit(I2, D1) = 2,

the item's score is the mean over its generations, and a model's accuracy the mean over items (overall and per
category), stored as metrics in [0, 1] (the paper prints percentages). A pair with a failed fit (API error, refusal,
neither 1 nor 0) gets no score (``failed_fit="skip"``, the default), or, as the authors' ``evaluate.py`` counts it
(an answer that is not a number becomes -1, and an image with a -1 supports no description), a score in which that
image fits neither description, so the pair scores 0 (``failed_fit="unfit"``, the published protocol; case by case in
tests/test_commonsense_pair_rule.py); either way the failed fits are stored as judgments with the reason.

Results (scorer / judge = the judge name): per image the metric ``commonsense_fit`` (the fit to its own description
after the random pick; details hold both raw fits); per generation pair a judgment of task ``commonsense_pair``
(the score, the four fits and the template version); per model the metric ``commonsense_accuracy`` with subset ''
(all items) and subset = category, from the pair scores of the current template version only (pairs judged with
another fit template under the same judge name are left out, and accuracies only they gave are deleted).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
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
from judges.parsing import parse_fit, read_reply
from judges.prompts import COMMONSENSE_FIT_TEMPLATE, Templates, fit_request
from judges.run import RunSummary, run_units
from judges.selection import ImageRow, Selection, SelectionError, image_rows, items_by_model
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask

SUITE = "commonsense"
ROLES = ("p1", "p2")
FAILED_FIT = ("skip", "unfit")  # a pair with a failed fit: no score; or its image fits nothing (evaluate.py)
TASK = "commonsense_fit"
PAIR_TASK = "commonsense_pair"


def resolve_fits(fit_own: int, fit_partner: int, rng: random.Random) -> tuple[int, int, bool]:
    """(own, partner, picked at random): an image said to fit both descriptions keeps one of them at random."""
    if fit_own == 1 and fit_partner == 1:
        keep_own = rng.random() < 0.5
        return (1, 0, True) if keep_own else (0, 1, True)
    return fit_own, fit_partner, False


def pair_score(fit_11: int, fit_22: int, fit_12: int, fit_21: int) -> int:
    """1 iff fit(I1,D1) + fit(I2,D2) - fit(I1,D2) - fit(I2,D1) = 2, else 0."""
    return int(fit_11 + fit_22 - fit_12 - fit_21 == 2)


Fits = dict[tuple[int, str], "int | None"]  # (image 1 or 2, description "d1" or "d2") -> the judge's fit (None: failed)


def score_pair(raw: Fits, failed_fit: str, rngs: tuple[random.Random, random.Random]) -> tuple[int | None, dict]:
    """The pair's score from the four raw fits (None: a failed answer) under the ``failed_fit`` rule, and per image
    (1, 2) its (own, partner, picked at random) fits after the pick; ``rngs`` draw each image's pick.

    ``skip``: a pair with a failed fit scores None. ``unfit`` (evaluate.py): a failed answer is read as -1, and an
    image with one supports neither description (``tell_supporting_description`` returns 0 for any pair of answers
    but (1, 0), (0, 1) and (1, 1)), so both its fits count 0 and the pair scores 0."""
    if any(value is None for value in raw.values()) and failed_fit == "skip":
        return None, {}
    resolved = {}
    for i, own, partner in ((1, "d1", "d2"), (2, "d2", "d1")):
        if raw[(i, own)] is None or raw[(i, partner)] is None:
            resolved[i] = (0, 0, False)
        else:
            resolved[i] = resolve_fits(raw[(i, own)], raw[(i, partner)], rngs[i - 1])
    return pair_score(resolved[1][0], resolved[2][0], resolved[1][1], resolved[2][1]), resolved


def image_rng(seed: int, image_id: int) -> random.Random:
    return random.Random(f"commonsense:{seed}:{image_id}")


def category_of(row: ImageRow) -> str:
    return str(row.metadata.get("category") or row.subset or "")


def template_version(templates: Templates, jpeg_quality: int | None = None) -> str:
    """``t2:<hash of the fit template>``, and ``+jpeg<quality>`` when the judge saw JPEGs (the fits of the stored
    images and of their JPEGs never mix)."""
    version = "t2:" + hashlib.sha256(templates.commonsense_fit.encode()).hexdigest()[:8]
    return version + (f"+jpeg{jpeg_quality}" if jpeg_quality else "")


GenerationPair = tuple[ImageRow, ImageRow]  # (P1 image, P2 image) of one generation index


@dataclass(frozen=True)
class Unit:
    item: tuple
    model_id: int
    pairs: tuple[GenerationPair, ...]  # (P1 image, P2 image) per generation index present for both
    descriptions: tuple[str, str]


def plan_units(db: Database, selection: Selection) -> tuple[list[Unit], list[str]]:
    """The (item, model) units of ``selection`` (limit = items) and notes on items that cannot be scored."""
    rows = image_rows(db, replace(selection, suite=selection.suite or SUITE, limit=None))  # limit: items
    items = items_by_model(rows, ROLES)
    units, notes = [], []
    for key in list(items)[: selection.limit]:
        for model_id, by_role in items[key].items():
            p1, p2 = by_role["p1"], by_role["p2"]
            descriptions = (p1[0].metadata.get("description"), p2[0].metadata.get("description"))
            if not all(descriptions):
                notes.append(f"item {key[3]!r} has no expected description in its metadata; re-import it with "
                             "python -m suites (commonsense).")
                break
            pairs, unmatched = pair_generations(p1, p2)
            if unmatched:
                notes.append(f"item {key[3]!r}, model {p1[0].model}: generation(s) {', '.join(unmatched)} skipped "
                             "(an image for only one of P1 and P2); generate the missing image to score them.")
            if pairs:
                units.append(Unit(key, model_id, pairs, descriptions))
    return units, notes


def pair_generations(p1: Sequence[ImageRow], p2: Sequence[ImageRow]) -> tuple[tuple[GenerationPair, ...], list[str]]:
    """(P1 image, P2 image) pairs with the same generation index, in index order; and the unmatched generations
    ("3 (P1 only)", ...). With several images of one prompt at one index the first is used."""
    first: dict[int, ImageRow] = {}
    second: dict[int, ImageRow] = {}
    for rows, by_idx in ((p1, first), (p2, second)):
        for row in rows:
            by_idx.setdefault(row.idx, row)
    pairs = tuple((first[idx], second[idx]) for idx in sorted(first.keys() & second.keys()))
    unmatched = [f"{idx} ({'P1' if idx in first else 'P2'} only)" for idx in sorted(first.keys() ^ second.keys())]
    return pairs, unmatched


async def judge_commonsense(
    db: Database, media, engine: Engine, units: Sequence[Unit], *, judge: str,
    templates: Templates = Templates(), seed: int = 0, failed_fit: str = "skip", progress: bool = True,
    handle_signals: bool = True, jpeg_quality: int | None = None, max_tokens: int | None = None,
) -> RunSummary:
    """Ask every fit of ``units``, store judgments and scores, then the accuracies; return the summary.
    ``jpeg_quality``: send each image as the JPEG a script saving ``.jpg`` with Pillow wrote (evaluate.py read the
    JPEGs generate_images.py saved, quality 75); ``max_tokens``: the completion limit (evaluate.py: 10; default
    the template's)."""
    if failed_fit not in FAILED_FIT:
        raise ValueError(f"failed_fit must be one of {', '.join(FAILED_FIT)}, got {failed_fit!r}.")
    if jpeg_quality is not None and not 1 <= jpeg_quality <= 95:
        raise ValueError(f"jpeg_quality must be 1 to 95 (Pillow's scale; 75 as the authors saved), got {jpeg_quality}.")
    summary = RunSummary(judge, TASK)
    detail = engine.config.image_detail
    version = template_version(templates, jpeg_quality)

    async def fit(image: ImageRow, description: str, which: str):
        seen = image.input(media)
        request = fit_request(templates, description, seen.as_jpeg(jpeg_quality) if jpeg_quality else seen, detail)
        reply = await engine.ask(replace(request, max_tokens=max_tokens) if max_tokens else request)
        return image, which, description, reply

    async def worker(unit: Unit) -> str:
        calls = [fit(image, description, which)
                 for first, second in unit.pairs for image in (first, second)
                 for which, description in zip(("d1", "d2"), unit.descriptions)]
        results = await asyncio.gather(*calls)
        for status in ("stopped", "dry_run"):
            if any(reply.status == status for *_, reply in results):
                return status
        fits: dict[tuple[int, str], int | None] = {}
        with db.conn:
            for image, which, description, reply in results:
                parsed = read_reply(reply, parse_fit)
                fits[(image.image_id, which)] = parsed.value
                save_judgment(db, Judgment(
                    judge, TASK, f"image:{image.image_id}:{which}", "ok" if parsed.ok else "failed", parsed.reason,
                    {"fit": parsed.value, "description": description}, raw=[reply.text], request_keys=(reply.key,),
                    prompt_id=image.prompt_id, image_id=image.image_id, model_id=image.model_id))
            status = "ok"
            for first, second in unit.pairs:
                raw = {(i, w): fits[(img.image_id, w)] for i, img in ((1, first), (2, second)) for w in ("d1", "d2")}
                failed = sum(value is None for value in raw.values())
                if failed:
                    status = "failed"
                score, resolved = score_pair(raw, failed_fit, (image_rng(seed, first.image_id),
                                                               image_rng(seed, second.image_id)))
                if score is None:
                    continue
                for i, image, own, partner in ((1, first, "d1", "d2"), (2, second, "d2", "d1")):
                    f_own, f_partner, picked = resolved[i]
                    write_metrics(db, [MetricRow(
                        model_id=image.model_id, image_id=image.image_id, suite=image.suite, subset=image.subset,
                        name="commonsense_fit", value=f_own, scorer=judge, scorer_version=version,
                        details={"fit_own": raw[(i, own)], "fit_partner": raw[(i, partner)],
                                 "picked_at_random": picked, "fit_partner_after_pick": f_partner})])
                save_judgment(db, Judgment(
                    judge, PAIR_TASK, f"pair:{first.image_id}:{second.image_id}", "ok",
                    verdict={"score": score, "item": f"{first.subset}/{first.item_key}", "category": category_of(first),
                             "generation": first.idx, "fit_11": resolved[1][0], "fit_12": resolved[1][1],
                             "fit_21": resolved[2][1], "fit_22": resolved[2][0], "template_version": version,
                             "failed_fits": failed, "failed_fit": failed_fit},
                    prompt_id=first.prompt_id, image_id=first.image_id, model_id=first.model_id))
        return status

    await run_units(engine, units, worker, summary, progress=progress, handle_signals=handle_signals)
    if not engine.dry_run:
        rows = aggregate(db, judge, version)
        summary.extra["accuracy"] = rows
        summary.notes.extend(f"commonsense accuracy of {row['model']}: {row['value']:.3f} over {row['items']} items"
                             for row in rows if row["subset"] == "")
        summary.notes.extend(other_versions_notes(rows, "pair scores"))
    return summary


def accuracy(pair_scores: Sequence[dict]) -> tuple[float, int]:
    """Mean over items of the mean pair score over the item's generations; and the number of items."""
    by_item: dict[str, list[float]] = {}
    for row in pair_scores:
        by_item.setdefault(row["item"], []).append(row["value"])
    means = [sum(values) / len(values) for values in by_item.values()]
    return (sum(means) / len(means) if means else float("nan")), len(means)


def aggregate(db: Database, judge: str, version: str = "") -> list[dict]:
    """Write ``commonsense_accuracy`` per model (subset '') and per model and category from the stored pair scores
    of ``judge`` judged with template ``version`` ('' : every version); return the rows written (with
    ``other_versions``, the pair scores of other versions left out). Accuracies of ``judge`` written under
    another version are deleted."""
    names = model_names(db)
    groups: dict[tuple[int, str], list[dict]] = {}
    rows, other_versions = split_by_version(judgments(db, judge, PAIR_TASK), version,
                                            lambda row: row["verdict"].get("template_version"))
    if version:
        delete_other_versions(db, scorer=judge, suite=SUITE, names=["commonsense_accuracy"], version=version)
    for row in rows:
        entry = {"item": row["verdict"]["item"], "value": row["verdict"]["score"]}
        groups.setdefault((row["model_id"], ""), []).append(entry)
        groups.setdefault((row["model_id"], row["verdict"]["category"]), []).append(entry)
    written = []
    for (model_id, category), entries in sorted(groups.items()):
        value, items = accuracy(entries)
        write_metrics(db, [MetricRow(
            model_id=model_id, suite=SUITE, subset=category, name="commonsense_accuracy", value=value, scorer=judge,
            scorer_version=version,
            details={"items": items, "pairs": len(entries), "scale": "fraction (x100 for the paper's %)"})])
        written.append({"model": names[model_id], "subset": category, "value": value, "items": items,
                        "other_versions": other_versions})
    return written


async def run_commonsense(
    db: Database, media, config: EngineConfig, selection: Selection = Selection(), *,
    seed: int = 0, name: str = "gpt-judge", templates: Templates = Templates(), dry_run: bool = False, env=None,
    progress: bool = True, handle_signals: bool = True, failed_fit: str = "skip", jpeg_quality: int | None = None,
    max_tokens: int | None = None,
) -> RunSummary:
    """Plan the (item, model) units of ``selection`` (limit = items) and judge them."""
    units, notes = plan_units(db, selection)
    if not units:
        raise SelectionError(f"No {SUITE} item of {selection.describe()} has images for all of "
                             f"{', '.join(ROLES)}. Import the suite and generate its images first.")
    async with Engine(db, config, env=env, dry_run=dry_run) as engine:
        summary = await judge_commonsense(db, media, engine, units, judge=f"{name}:{config.model}",
                                          templates=templates, seed=seed, failed_fit=failed_fit, progress=progress,
                                          handle_signals=handle_signals, jpeg_quality=jpeg_quality,
                                          max_tokens=max_tokens)
    summary.notes.extend(dict.fromkeys(notes))
    return summary


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=0, help="seed of the 'fits both: pick one' draws (default 0)")
    parser.add_argument("--failed-fit", choices=FAILED_FIT, default="skip",
                        help="a fit the judge could not give (an API error, an answer neither 1 nor 0): skip its pair "
                             "(default), or, as the authors' evaluate.py does (unfit), let its image fit neither "
                             "description, so the pair scores 0")
    parser.add_argument("--jpeg-quality", type=int, metavar="Q",
                        help="send each image as a JPEG of Pillow quality Q, as the authors' generate_images.py saved "
                             "them (75, Pillow's default; default: the stored image as it is)")
    parser.add_argument("--max-tokens", type=int, metavar="N",
                        help="the completion limit of each fit question (evaluate.py asks with 10; default: the "
                             "template's)")


async def _run(job: JudgeJob, args: argparse.Namespace) -> RunSummary:
    return await run_commonsense(job.db, job.media, job.config, job.selection, seed=args.seed,
                                 failed_fit=args.failed_fit, jpeg_quality=args.jpeg_quality,
                                 max_tokens=args.max_tokens, **job.common())


JUDGE_TASKS.register(JudgeTask(
    name="commonsense", run=_run, add_arguments=_add_arguments, default_suite=SUITE,
    templates=(COMMONSENSE_FIT_TEMPLATE,),
    description="Commonsense-T2I fit judge (T2): fit(I, D) for both images and descriptions of each item.",
))
