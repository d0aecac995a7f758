"""The judge task that writes the definitions of LLM-predicted taxonomy concepts (protocols.md, T1, predicted).

The protocol's prompt is an instruction and one worked example (:func:`definition_prompt`); the answer's first line
is the definition (:func:`parse_definition`). :func:`judge_definer` sends the prompts through the judges' engine
(cache, retries, concurrency) and :func:`import_predicted` imports a predicted-concepts file with it, so a concept
without a definition column gets the judge model's.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from datamodel.catalog import PromptImport
from datamodel.database import Database
from judges.prompts import JudgeTemplate, fill
from judges.request import ChatRequest
from suites import taxonomy
from suites.common import SuiteError
from suites.taxonomy import Define, DefinitionError

# The protocol's definition prompt for predicted concepts: an instruction and one example.
DEFINITION_INSTRUCTION = "Write a definition for the word/phrase in one sentence."
DEFINITION_EXAMPLE = ("caddle", "act as a caddie and carry clubs for a player")
# Declared like the judge templates (text, placeholder and token budget together), but not registered: definitions
# are written during a suite import, which does not read the judge template file, so the protocol text is fixed.
DEFINITION_TEMPLATE = JudgeTemplate(
    "definition", f"{DEFINITION_INSTRUCTION}\nWord: {DEFINITION_EXAMPLE[0]}\nDefinition: {DEFINITION_EXAMPLE[1]}\n"
                  "Word: {concept}\nDefinition:",
    placeholders=("{concept}",), max_tokens=100, expected_tokens=30)  # one sentence
DEFINITION_MAX_TOKENS = DEFINITION_TEMPLATE.max_tokens


def definition_prompt(concept: str) -> str:
    """The protocol's definition prompt for one concept (one user message)."""
    return fill(DEFINITION_TEMPLATE.text, concept=concept)


def parse_definition(answer: str) -> str:
    """The definition in a model's answer: its first non-empty line, without a 'Definition:' label or quotes."""
    line = next((line.strip() for line in (answer or "").splitlines() if line.strip()), "")
    if line.lower().startswith("definition:"):
        line = line[len("definition:"):].strip()
    return line.strip('"').strip()


def definition_request(concept: str) -> ChatRequest:
    """The protocol's definition prompt as a :class:`judges.request.ChatRequest` (temperature 0, one sentence)."""
    return DEFINITION_TEMPLATE.request((definition_prompt(concept),))


def judge_definer(
    db: Database, config, *, env: Mapping[str, str] | None = None, progress: bool = True
) -> Define:
    """Definitions written by the judge model through the judges' engine (:class:`judges.client.Engine`).

    ``config`` is a :class:`judges.client.EngineConfig` (``EngineConfig.from_settings(settings)``): endpoint, model,
    concurrency, timeout and retries. Answers are stored in the database's request cache (``judge_requests``), so
    a concept is never paid for twice, even when an import fails half-way. Raises :class:`SuiteError` at once if
    neither ``OPENAI_API_KEY`` nor a base URL is set, and :class:`DefinitionError` (naming each concept and the
    reason) when requests still fail after their retries, are refused or answer nothing.
    """
    from judges.client import JudgeConfigError, resolve_api_key

    env = os.environ if env is None else env
    try:
        resolve_api_key(env, config.base_url)
    except JudgeConfigError:
        raise SuiteError(
            "no endpoint to write definitions: set OPENAI_API_KEY or ARENA_JUDGE_BASE_URL, or add a definition column."
        ) from None

    def define(concepts: list[str]) -> dict[str, str]:
        try:
            return asyncio.run(_define_all(db, config, list(concepts), env=env, progress=progress))
        except asyncio.CancelledError:  # a second Ctrl-C
            raise SuiteError("definitions aborted; nothing was imported. Run the import again: the definitions "
                             "already written are cached and not asked for again.") from None

    return define


async def _define_all(db, config, concepts: list[str], *, env, progress: bool) -> dict[str, str]:
    from judges.client import Engine
    from judges.run import RunSummary, run_units

    replies: dict[str, Any] = {}
    summary = RunSummary(f"definitions:{config.model}", "definitions")
    async with Engine(db, config, env=env) as engine:
        async def worker(concept: str) -> str:
            reply = replies[concept] = await engine.ask(definition_request(concept))
            return "ok" if reply.ok else "stopped" if reply.status == "stopped" else "failed"

        await run_units(engine, concepts, worker, summary, progress=progress)
    if progress:
        print(f"definitions by {config.model}: {summary.done} written, {summary.failed} failed; requests: "
              f"{summary.requests_sent} sent, {summary.requests_cached} cached, {summary.retries} retries; "
              f"cost ${summary.cost_usd:.4f}", file=sys.stderr)
    definitions, failures = {}, {}
    for concept in concepts:
        reply = replies.get(concept)
        definition = parse_definition(reply.text) if reply is not None and reply.ok else ""
        if definition:
            definitions[concept] = definition
        elif reply is None or not reply.ok:
            failures[concept] = reply.reason if reply is not None else "not asked (the run was stopped)"
        else:
            failures[concept] = f"the model refused ({reply.refusal})" if reply.refusal else "the answer was empty"
    if failures:
        raise DefinitionError(failures, len(concepts))
    return definitions


def can_define(settings) -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or settings.judge_base_url)




def import_predicted(
    db: Database, path: str | Path, *, settings=None, subset: str | None = None,
    define: Define | None = None, wn=None, progress: bool = True,
) -> PromptImport:
    """:func:`suites.taxonomy.import_predicted`, with missing definitions written by the judge model of ``settings``
    when it is configured and no ``define`` is given (:func:`judge_definer`, answers cached in ``db``)."""
    if define is None and settings is not None and can_define(settings):
        from judges.client import EngineConfig

        define = judge_definer(db, EngineConfig.from_settings(settings), progress=progress)
    return taxonomy.import_predicted(db, path, settings=settings, subset=subset, define=define, wn=wn)
