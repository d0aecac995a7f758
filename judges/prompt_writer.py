"""Texts written by the judge model for a suite builder: the judges' engine behind a plain function.

A suite that has an LLM write its prompts (SANEval's §3.1: "prompts ... were generated using Gemini-2.5-Flash") builds
the requests itself (:mod:`suites.saneval`) and needs only a way to send them; :func:`judge_asker` is that way:
``ask(texts) -> [(ok, answer or reason), ...]`` through :class:`judges.client.Engine` (cache, retries, concurrency,
costs), so a text already asked is answered from the database's request cache and a build that stopped half-way
costs nothing to run again. ``python -m arena suites build`` builds it from the settings (the endpoint and key of the
judges; the model of ``--writer-model`` or the judge model).
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace
from typing import Mapping, Sequence

from datamodel.database import Database
from judges.request import ChatRequest
from suites.common import SuiteError

# The writer asks for many different prompts per request: some variety (temperature 1) and room for a batch of
# JSON objects. A request's key holds both, so a repeated build is answered from the cache.
WRITER_TEMPERATURE = 1.0
WRITER_MAX_TOKENS = 4096


def judge_asker(db: Database, config, *, model: str | None = None, env: Mapping[str, str] | None = None,
                progress: bool = True, temperature: float = WRITER_TEMPERATURE, max_tokens: int = WRITER_MAX_TOKENS):
    """A function ``ask(texts) -> [(ok, answer or the reason it failed)]`` sending each text as one user message
    to the judges' endpoint (``config``: a :class:`judges.client.EngineConfig`; ``model`` replaces its model).
    Raises :class:`SuiteError` at once when no endpoint is configured."""
    from judges.client import JudgeConfigError, resolve_api_key

    env = os.environ if env is None else env
    if model:
        config = replace(config, model=model)
    try:
        resolve_api_key(env, config.base_url)
    except JudgeConfigError:
        raise SuiteError("no endpoint for the LLM writer: set OPENAI_API_KEY or ARENA_JUDGE_BASE_URL (any "
                         "OpenAI-compatible server), or build the scripted prompts (--generator script).") from None

    def ask(texts: Sequence[str]) -> list[tuple[bool, str]]:
        try:
            return asyncio.run(_ask_all(db, config, list(texts), env=env, progress=progress,
                                        temperature=temperature, max_tokens=max_tokens))
        except asyncio.CancelledError:  # a second Ctrl-C
            raise SuiteError("the LLM writer was stopped; nothing was written. Run the build again: the answers "
                             "received are cached and not asked for again.") from None

    ask.model = config.model
    return ask


async def _ask_all(db, config, texts: list[str], *, env, progress: bool, temperature: float,
                   max_tokens: int) -> list[tuple[bool, str]]:
    from judges.client import Engine
    from judges.run import RunSummary, run_units

    replies = {}
    summary = RunSummary(f"writer:{config.model}", "prompt writer")
    async with Engine(db, config, env=env) as engine:
        async def worker(index: int) -> str:
            request = ChatRequest((texts[index],), max_tokens=max_tokens, temperature=temperature,
                                  expected_output_tokens=max_tokens // 2)
            reply = replies[index] = await engine.ask(request)
            return "ok" if reply.ok else "stopped" if reply.status == "stopped" else "failed"

        await run_units(engine, list(range(len(texts))), worker, summary, progress=progress)
    if progress:
        print(f"prompt writer {config.model}: {summary.done} answered, {summary.failed} failed; requests: "
              f"{summary.requests_sent} sent, {summary.requests_cached} cached; cost ${summary.cost_usd:.4f}",
              file=sys.stderr)
    answers = []
    for index in range(len(texts)):
        reply = replies.get(index)
        if reply is None:
            answers.append((False, "not asked (the run was stopped)"))
        elif reply.ok and reply.text.strip():
            answers.append((True, reply.text))
        else:
            answers.append((False, reply.reason or (f"refused: {reply.refusal}" if reply.refusal else "empty answer")))
    return answers
