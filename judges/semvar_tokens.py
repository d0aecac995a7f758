"""SemVarBench token accuracy (Table 4; Appendix F.4.1): the share of a sentence's meaningful words its image shows.

"Token accuracy refers to the ratio of tokens successfully generated that correspond to images. We filter out
meaningful tokens and verify their visual representation in the image using GPT-4o" (Table 4); "words with specific
meaning (including nouns, verbs, adjectives, adverbs, and relationship-describing prepositions)", e.g. "a dog chasing
a cat" gives "dog", "chasing", "cat", each verified independently (F.4.1). The paper prints no prompt: the request
(:data:`TOKENS_TEMPLATE`) is the project's, one per (sentence, its own image), asking the judge to list those words
and say for each whether the image shows it, as a JSON object {word: true | false}.

Per image of an anchor, permutation or paraphrase prompt, the metric ``semvar_token_accuracy`` = shown words / words
(details: the words and the answers); a reply that is no such object makes the image's judgment ``failed``. The
report's Table 4 averages it per model and category for T_a, T_pv and T_pi. It needs only a VLM judge (GPT-4o in
the paper: ``python -m judges semvar_tokens --judge-model gpt-4o-2024-05-13``), not the models' text encoders.
The fine-tuned rows of the paper's Table 4 (+sft-unet) are out of scope (docs/methods/semvarbench.md).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from typing import Sequence

from datamodel.database import Database
from datamodel.judgments import Judgment, save_judgment
from datamodel.metrics import MetricRow, write_metrics
from judges.client import Engine, EngineConfig
from judges.parsing import ParseError, read_reply
from judges.prompts import JudgeTemplate, Templates
from judges.run import RunSummary, run_units
from judges.selection import ImageRow, Selection, SelectionError, image_rows
from judges.tasks import JUDGE_TASKS, JudgeJob, JudgeTask

SUITE = "semvarbench"
ROLES = ("anchor", "permutation", "paraphrase")
TASK = "semvar_tokens"
METRIC = "semvar_token_accuracy"
TOKENS_TEMPLATE = JudgeTemplate(
    "semvar_tokens",
    'Here is a generated image and the text it was generated from: "{text}"\n\n'
    "List the words of the text with specific meaning: nouns, verbs, adjectives, adverbs and the prepositions that "
    "describe a relationship (for \"a dog chasing a cat\": dog, chasing, cat). For each word, check on its own "
    "whether the image shows it.\n\n"
    'Answer with a JSON object only, each word mapped to true (shown) or false (not shown), for example: '
    '{"dog": true, "chasing": false, "cat": true}',
    placeholders=("{text}",), max_tokens=300, expected_tokens=60)


def parse_tokens(text: str) -> dict[str, bool]:
    """{word: shown} from the judge's answer (a ```json fence is accepted); :class:`ParseError` otherwise."""
    body = (text or "").strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        raise ParseError("expected a JSON object {word: true or false}") from None
    if not isinstance(value, dict) or not value or not all(isinstance(k, str) and k.strip() and isinstance(v, bool)
                                                           for k, v in value.items()):
        raise ParseError("expected a non-empty JSON object mapping each word to true or false")
    return {" ".join(k.split()): v for k, v in value.items()}


def token_accuracy(words: dict[str, bool]) -> float:
    """The share of the words the image shows."""
    return sum(words.values()) / len(words)


def plan_images(db: Database, selection: Selection) -> list[ImageRow]:
    """Each model's first image of every anchor, permutation and paraphrase prompt of ``selection`` (limit: items)."""
    rows = [row for row in image_rows(db, replace(selection, suite=selection.suite or SUITE, limit=None))
            if row.role in ROLES]
    keep = set(list(dict.fromkeys(row.item_key for row in rows))[: selection.limit])
    first: dict[tuple[int, int], ImageRow] = {}
    for row in rows:
        if row.item_key in keep:
            key = (row.model_id, row.prompt_id)
            if key not in first or row.idx < first[key].idx:
                first[key] = row
    return list(first.values())


async def judge_tokens(db: Database, media, engine: Engine, images: Sequence[ImageRow], *, judge: str,
                       templates: Templates = Templates(), progress: bool = True,
                       handle_signals: bool = True) -> RunSummary:
    """Ask each image's token question; store the judgment and ``semvar_token_accuracy``."""
    summary = RunSummary(judge, TASK)
    detail = engine.config.image_detail
    version = "tok:" + TOKENS_TEMPLATE.version(templates)

    async def worker(row: ImageRow) -> str:
        reply = await engine.ask(TOKENS_TEMPLATE.build(templates, row.input(media), detail, text=row.text))
        if reply.status in ("stopped", "dry_run"):
            return reply.status
        parsed = read_reply(reply, parse_tokens)
        with db.conn:
            save_judgment(db, Judgment(judge, TASK, f"image:{row.image_id}", "ok" if parsed.ok else "failed",
                                       parsed.reason, {"words": parsed.value} if parsed.ok else {}, raw=[reply.text],
                                       request_keys=(reply.key,), prompt_id=row.prompt_id, image_id=row.image_id,
                                       model_id=row.model_id))
            if parsed.ok:
                write_metrics(db, [MetricRow(row.model_id, METRIC, token_accuracy(parsed.value), judge,
                                             image_id=row.image_id, suite=row.suite, subset=row.subset,
                                             scorer_version=version, details={"words": parsed.value,
                                                                              "role": row.role})])
        return "ok" if parsed.ok else "failed"

    await run_units(engine, images, worker, summary, progress=progress, handle_signals=handle_signals)
    return summary


async def run_semvar_tokens(db: Database, media, config: EngineConfig,
                            selection: Selection = Selection(), *, name: str = "gpt-judge",
                            templates: Templates = Templates(), dry_run: bool = False, env=None,
                            progress: bool = True, handle_signals: bool = True) -> RunSummary:
    images = plan_images(db, selection)
    if not images:
        raise SelectionError(f"No {SUITE} image of {selection.describe()}. Import the suite and generate its images.")
    async with Engine(db, config, env=env, dry_run=dry_run) as engine:
        return await judge_tokens(db, media, engine, images, judge=f"{name}:{config.model}", templates=templates,
                                  progress=progress, handle_signals=handle_signals)


async def _run(job: JudgeJob, args: argparse.Namespace) -> RunSummary:
    return await run_semvar_tokens(job.db, job.media, job.config, job.selection, **job.common())


JUDGE_TASKS.register(JudgeTask(
    name="semvar_tokens", run=_run, default_suite=SUITE, templates=(TOKENS_TEMPLATE,),
    description="SemVarBench token accuracy (Table 4): the share of each sentence's meaningful words its image shows.",
))
