"""Moderation of open prompts before anything is generated: a moderation model or a local rule list.

- :class:`APIModerator` asks the OpenAI-compatible ``/moderations`` endpoint of the judges (``ARENA_JUDGE_BASE_URL``,
  its key from ``OPENAI_API_KEY`` as the judges take it, :func:`judges.client.resolve_api_key`) with the model named
  by ``ARENA_MODERATION_MODEL`` (OpenAI's ``omni-moderation-latest`` reads any language). A prompt the model flags is
  refused with the categories it named. When the endpoint cannot be reached or answers an error, the prompt is
  refused too (fail closed), with words that say to try again.
- :class:`RuleModerator`, used when no moderation model is set: regular expressions, each with a category and the
  reason the annotator reads, from a TOML file (``ARENA_MODERATION_RULES``, or the built-in
  ``judges/data/moderation_rules.toml``; its format is in its first lines).

Both answer a :class:`Verdict`; :func:`moderator_from_settings` picks one and :meth:`describe` says which, for the
server's start-up log line.
"""

from __future__ import annotations

import logging
import re
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

BUILTIN_RULES = Path(__file__).resolve().parent / "data" / "moderation_rules.toml"
UNAVAILABLE = "the moderation service could not be reached, so nothing was generated. Try again in a minute"


class ModerationConfigError(ValueError):
    """The moderation rules or model cannot be used; the message names the file or setting and the fix."""


@dataclass(frozen=True)
class Verdict:
    """Whether a prompt may be generated; when not, its ``category`` and ``why`` (words the annotator reads)."""

    allowed: bool
    category: str = ""
    why: str = ""

    @property
    def message(self) -> str:
        return "" if self.allowed else f"Your prompt was refused: {self.why}."


@dataclass(frozen=True)
class Rule:
    category: str
    why: str
    pattern: re.Pattern


class RuleModerator:
    """A local list of rules (module docstring); the first rule whose pattern matches refuses the prompt."""

    def __init__(self, rules: list[Rule], source: str):
        self.rules, self.source = rules, source

    @classmethod
    def from_file(cls, path: str | Path | None = None) -> RuleModerator:
        """The rules of the TOML file ``path`` (default: the built-in list); a file that cannot be read, a rule without
        its fields or a pattern that does not compile raises :class:`ModerationConfigError` naming the rule."""
        path = Path(path) if path else BUILTIN_RULES
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise ModerationConfigError(f"{path}: the moderation rules cannot be read ({error}). Fix the file or "
                                        "unset ARENA_MODERATION_RULES to use the built-in list.") from None
        entries = data.get("rule")
        if not isinstance(entries, list) or not entries:
            raise ModerationConfigError(f"{path}: no [[rule]] tables. Write each rule as [[rule]] with category, why "
                                        "and pattern.")
        rules = []
        for number, entry in enumerate(entries, 1):
            missing = [key for key in ("category", "why", "pattern") if not isinstance(entry.get(key), str)
                       or not entry.get(key).strip()]
            if missing:
                raise ModerationConfigError(f"{path}: rule {number} lacks {', '.join(missing)}. Give every rule a "
                                            "category, a why and a pattern.")
            try:
                pattern = re.compile(entry["pattern"], re.IGNORECASE | re.DOTALL)
            except re.error as error:
                raise ModerationConfigError(f"{path}: rule {number} ({entry['category']}): the pattern is not a "
                                            f"regular expression ({error}). Fix it.") from None
            rules.append(Rule(entry["category"].strip(), entry["why"].strip(), pattern))
        return cls(rules, str(path))

    def describe(self) -> str:
        return f"the local rule list {self.source} ({len(self.rules)} rules)"

    async def check(self, text: str) -> Verdict:
        text = unicodedata.normalize("NFC", text)
        for rule in self.rules:
            if rule.pattern.search(text):
                return Verdict(False, rule.category, rule.why)
        return Verdict(True)


class APIModerator:
    """The OpenAI-compatible moderation endpoint of the judges (module docstring). ``client``: an
    ``openai.AsyncOpenAI`` (tests), else one made on first use with the judges' endpoint and key."""

    def __init__(self, model: str, *, base_url: str = "", timeout_s: float = 30.0,
                 env: Mapping[str, str] | None = None, client: Any = None):
        import os

        from judges.client import resolve_api_key

        self.model, self.base_url, self.timeout_s = model, base_url, timeout_s
        self._client, self._given = client, client is not None
        self._loop = None  # the event loop the client was made in (an httpx client belongs to one)
        self._key = "" if client is not None else resolve_api_key(os.environ if env is None else env, base_url)

    def describe(self) -> str:
        return f"the moderation model {self.model} at {self.base_url or 'api.openai.com'}"

    def _get_client(self):
        import asyncio

        loop = asyncio.get_running_loop()
        if not self._given and (self._client is None or self._loop is not loop):
            import openai

            self._loop = loop
            self._client = openai.AsyncOpenAI(api_key=self._key, base_url=self.base_url or None, max_retries=2,
                                              timeout=self.timeout_s)
        return self._client

    async def check(self, text: str) -> Verdict:
        try:
            answer = await self._get_client().moderations.create(model=self.model, input=text)
            result = answer.results[0]
        except Exception as error:  # noqa: BLE001 - any failure of the service refuses the prompt (fail closed)
            log.warning("moderation model %s did not answer: %s", self.model, " ".join(str(error).split())[:300])
            return Verdict(False, "unavailable", UNAVAILABLE)
        if not result.flagged:
            return Verdict(True)
        categories = result.categories.model_dump(by_alias=True) if hasattr(result.categories, "model_dump") \
            else dict(result.categories)
        named = sorted(name for name, flagged in categories.items() if flagged) or ["unsafe content"]
        return Verdict(False, ", ".join(named), f"the moderation model flagged it ({', '.join(named)})")


def moderator_from_settings(settings, env: Mapping[str, str] | None = None) -> RuleModerator | APIModerator:
    """:class:`APIModerator` when ``moderation_model`` is set, else :class:`RuleModerator` of ``moderation_rules``."""
    if settings.moderation_model:
        return APIModerator(settings.moderation_model, base_url=settings.judge_base_url,
                            timeout_s=settings.judge_timeout_s, env=env)
    return RuleModerator.from_file(settings.moderation_rules or None)
