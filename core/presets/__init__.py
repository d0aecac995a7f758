"""Published-protocol presets: one named declaration per way of running a benchmark, chosen with ``--preset NAME``.

A preset says, in one place, how every step of a benchmark runs: which models generate and with which settings,
which judge votes and how it is asked, which metrics score and with which scorer, which rating protocol fits the
votes and which report prints the tables. Every choice is a :class:`Choice`: its value, the paper section or
released file it comes from, and (where the paper's text and the authors' code differ) a note saying which one the
preset follows. ``arena`` is the project's own defaults (what every command does without ``--preset``); a published
preset (``taxonomy-paper``, ...) reproduces one paper exactly.

The declarations are plain data, so that every layer reads its own section and nothing imports upward:

=====================  ======================================================  ========================================
key                    value                                                   read by
=====================  ======================================================  ========================================
generation.models      registry names run when ``--models`` is not given       ``python -m generators run``
generation.all_models  {ModelSpec field: value} for every model without its    ``python -m generators run``
                       own entry (e.g. ``{"steps": 28, "guidance": 7.0}``)
generation.model.NAME  {ModelSpec field: value} for model NAME (``{}``: the    ``python -m generators run``
                       registry's settings, and ``all_models`` does not apply)
generation.seed        base seed; ``generation.seed_policy``: derived | fixed  ``python -m generators run``
generation.batch_size  prompts per pipeline call                               ``python -m generators run``
generation.images_per_prompt  images per (model, prompt)                       ``python -m generators run``
suite.options          {option dest: value} of the suite's builder (e.g.       ``python -m arena suites build``
                       ``{"strata": "published"}``)
judge.task             the judge command the preset's judge is for             ``python -m judges TASK``
judge.model            the judge model (``--judge-model``)                     ``python -m judges TASK``
judge.image_detail     high | low | auto (``--detail``)                        ``python -m judges TASK``
judge.name             the judge's name (``--judge-name``)                     ``python -m judges TASK``
judge.templates        {task template key: registered template key whose text  ``python -m judges TASK``
                       the task sends instead}
judge.options          {option dest: value} of the task's own options          ``python -m judges TASK``
                       (e.g. ``{"single_order": True}``)
metrics.names          the metrics run when ``--metrics`` is not given         ``python -m judges metrics``
metrics.option.DEST    the default of a metric option (argparse dest)          ``python -m judges metrics``
rating.protocol        the rating protocol that fits the votes                 ``python -m arena leaderboard`` / report
report.variant         the prompt variant of the report's tables the paper     ``python -m arena report --variant``
                       leaves open (taxonomy: the CLIP Tables 11-15)
votes.aliases          {name in the authors' vote files: registry model}       ``python -m arena import-votes``
report.name            the report of ``python -m arena report``                ``python -m arena report``
report.human_task      the human rating task whose answers fill the report's   ``python -m arena report``
                       human table (its scale)
report.evaluators      {the paper's evaluator: its dated judge model}: the     ``python -m arena report``
                       judges whose scores fill the paper's columns
data.KEY               how the data is obtained (documentation only)           the docs, the report's header
=====================  ======================================================  ========================================

A command applies a preset with :func:`apply_defaults`: every option the user typed wins, every other option the
preset sets takes the preset's value, and the command prints (and stores, where it stores anything) the preset's
name, so every output says which protocol made it.

Declaring a preset (one module of this package per preset, listed in :data:`PRESETS`' built-ins, or a plug-in's
module named by an entry point of the group ``t2i_arena.presets``)::

    # core/presets/semvarbench_paper.py
    from core.presets import PRESETS, Choice, Preset

    PRESETS.register(Preset(
        name="semvarbench-paper", suite="semvarbench", report="semvarbench",
        title="SemVarBench exactly as published",
        paper="semvarbench.txt",
        choices={
            "generation.models": Choice(("sd-v1-5", "sdxl"), "paper Table 2 (the evaluated models)"),
            "generation.model.sd-v1-5": Choice({"scheduler": "DPMSolverMultistepScheduler"}, "paper §5.1"),
            "judge.task": Choice("semvar", "paper §4"),
            "judge.model": Choice("gpt-4o", "paper §5.1"),
            "metrics.names": Choice(("clip",), "paper Table 9"),
            "rating.protocol": Choice("arena", "no ELO in the paper: the project's own"),
        },
    ))

:func:`get_preset` returns a declaration; :meth:`Preset.lines` lists its documented choices (the docs and
``python -m arena presets`` print them); :meth:`Preset.get` and :meth:`Preset.section` read values.
"""

from __future__ import annotations

import argparse
import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.registry import Registry

DEFAULT_PRESET = "arena"


class PresetError(ValueError):
    """A declaration or a command line cannot use a preset; the message says what to do."""


@dataclass(frozen=True)
class Choice:
    """One documented choice of a preset: its ``value``, its ``source`` (the paper section, table or released file
    it comes from; for the project's own defaults, why) and a ``note`` where the paper's text and the authors'
    code differ (which one the preset follows and why)."""

    value: Any
    source: str
    note: str = ""


def _is_names(value: Any) -> bool:
    return isinstance(value, (tuple, list)) and all(isinstance(v, str) and v for v in value)


def _is_fields(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) for k in value)


# key pattern -> (check, what the value must be)
KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "generation.models": (_is_names, "a list of registry model names"),
    "generation.all_models": (_is_fields, "a table of ModelSpec fields"),
    "generation.model.*": (_is_fields, "a table of ModelSpec fields"),
    "generation.seed": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "generation.seed_policy": (lambda v: v in ("derived", "fixed"), "derived or fixed"),
    "generation.batch_size": (lambda v: isinstance(v, int) and v >= 1, "an integer of 1 or more"),
    "generation.images_per_prompt": (lambda v: isinstance(v, int) and v >= 1, "an integer of 1 or more"),
    "suite.options": (_is_fields, "a table of the suite builder's option values"),
    "judge.task": (lambda v: isinstance(v, str) and bool(v), "a judge task name"),
    "judge.model": (lambda v: isinstance(v, str) and bool(v), "a model name"),
    "judge.image_detail": (lambda v: v in ("high", "low", "auto"), "high, low or auto"),
    "judge.name": (lambda v: isinstance(v, str) and bool(v), "a name"),
    "judge.templates": (lambda v: _is_fields(v) and all(isinstance(t, str) for t in v.values()),
                        "a table {task template key: registered template key}"),
    "judge.options": (_is_fields, "a table of the task's option values"),
    "metrics.names": (_is_names, "a list of metric names"),
    "metrics.option.*": (lambda v: True, "any value"),
    "rating.protocol": (lambda v: isinstance(v, str) and bool(v), "a rating protocol name"),
    "report.variant": (lambda v: isinstance(v, str) and bool(v), "a prompt variant"),
    "report.name": (lambda v: isinstance(v, str) and bool(v), "a report name"),
    "votes.aliases": (lambda v: _is_fields(v) and all(isinstance(t, str) and t for t in v.values()),
                      "a table {model name in the published files: registry model}"),
    "report.human_task": (lambda v: isinstance(v, str) and bool(v), "a human rating task name"),
    "report.evaluators": (lambda v: _is_fields(v) and all(isinstance(m, str) and m for m in v.values()),
                          "a table {the paper's evaluator: its dated judge model}"),
    "data.*": (lambda v: True, "any value"),
}


def _pattern_of(key: str) -> str | None:
    return next((pattern for pattern in KEYS if fnmatch.fnmatchcase(key, pattern)), None)


@dataclass(frozen=True)
class Preset:
    """One named way of running a benchmark (see the module docstring for the keys of ``choices``).

    ``suite``: the suite it is for (None: any suite); ``report``: its ``python -m arena report`` name, if any;
    ``paper``: the paper's file in ../shared/reference/papers (for a published preset); ``published``: whether it
    reproduces a paper (``arena`` is the project's own).
    """

    name: str
    title: str
    choices: Mapping[str, Choice] = field(default_factory=dict)
    suite: str | None = None
    report: str | None = None
    paper: str = ""
    published: bool = True
    description: str = ""

    def __post_init__(self):
        if not self.name or any(c in self.name for c in " ,/"):
            raise PresetError(f"preset name {self.name!r}: use a non-empty name without spaces, commas or slashes.")
        object.__setattr__(self, "choices", MappingProxyType(dict(self.choices)))
        for key, choice in self.choices.items():
            where = f"preset {self.name!r}, {key}"
            if not isinstance(choice, Choice):
                raise PresetError(f"{where}: write the value as Choice(value, source).")
            pattern = _pattern_of(key)
            if pattern is None:
                raise PresetError(f"{where}: unknown key. Known keys: {', '.join(KEYS)}.")
            check, expected = KEYS[pattern]
            if not check(choice.value):
                raise PresetError(f"{where}: {choice.value!r} is not {expected}.")
            if not choice.source.strip():
                raise PresetError(f"{where}: say where the choice comes from (the paper section, table or released "
                                  "file; for the project's own default, why).")
        if self.report and self.choices.get("report.name", Choice(self.report, "-")).value != self.report:
            raise PresetError(f"preset {self.name!r}: report {self.report!r} and report.name disagree.")

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when the preset leaves it to the command's own default."""
        choice = self.choices.get(key)
        return default if choice is None else choice.value

    def section(self, prefix: str) -> dict[str, Any]:
        """{rest of the key: value} of every key starting with ``prefix`` (``section("generation.model.")`` gives
        {model name: fields})."""
        return {key[len(prefix):]: choice.value for key, choice in self.choices.items() if key.startswith(prefix)}

    def lines(self) -> list[tuple[str, str, str, str]]:
        """(key, value as text, source, note) of every choice, in declaration order: the documented preset."""
        def shown(key: str, value: Any) -> str:
            if key.startswith("generation.model.") and not value:
                return "the registry's settings (generation.all_models does not apply)"
            return format_value(value)

        return [(key, shown(key, choice.value), choice.source, choice.note) for key, choice in self.choices.items()]

    def label(self) -> str:
        """How outputs name the preset: ``taxonomy-paper (published protocol)`` or ``arena (project defaults)``."""
        return f"{self.name} ({'published protocol' if self.published else 'project defaults'})"


def format_value(value: Any) -> str:
    """A choice's value as one line of text (lists joined by commas, tables as key=value)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) or "(none)"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}={format_value(v)}" for k, v in value.items()) or "(none)"
    return str(value)


PRESETS = Registry[Preset]("presets", tuple(f"core.presets.{module}" for module in (
    "arena", "commonsense_paper", "consistency_paper", "saneval_paper", "semvarbench_paper",
    "semvarbench_pipeline_defaults", "taxonomy_paper",
)), what="preset", hint="(python -m arena presets lists them with their choices)")


def get_preset(name: str | None = None) -> Preset:
    """The preset called ``name`` (None: :data:`DEFAULT_PRESET`); an unknown name raises
    :class:`core.registry.RegistryError` listing the known ones."""
    return PRESETS[name or DEFAULT_PRESET]


def check_suite(preset: Preset, suite: str | None) -> None:
    """Refuse a preset made for another suite than the one a command works on."""
    if preset.suite and suite and suite != preset.suite:
        fitting = [p.name for p in PRESETS.values() if p.suite in (None, suite)]
        raise PresetError(f"preset {preset.name!r} is for suite {preset.suite!r}, not {suite!r}. Drop --preset, "
                          f"or use a preset for {suite!r} ({', '.join(fitting)}).")


# --- applying a preset to a command line -----------------------------------------------------------------------


def add_preset_argument(parser: argparse.ArgumentParser, default: str | None = None, what: str = "") -> None:
    """The ``--preset NAME`` option (one spelling everywhere)."""
    parser.add_argument(
        "--preset", default=default, metavar="NAME",
        help=f"published-protocol preset{' ' + what if what else ''}: options you do not give take the preset's "
             f"values (default {default or DEFAULT_PRESET}: the project's own defaults; python -m arena presets "
             "lists them)")


def given_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The ``dest`` of every option of ``parser`` (and of its sub-commands) that ``argv`` spells out (``--opt
    value``, ``--opt=value``, or a unique prefix of a long option as argparse accepts it): the options a preset must
    not override."""
    tokens = [token.split("=", 1)[0] for token in argv if token.startswith("-") and token != "-"]
    given: set[str] = set()
    dests: dict[str, str] = {}
    for action in parser._actions:  # argparse keeps its actions here; there is no public listing
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                given |= given_options(sub, argv)
        for string in action.option_strings:
            dests[string] = action.dest
    for token in tokens:
        if token in dests:
            given.add(dests[token])
        elif token.startswith("--"):
            matches = {dest for string, dest in dests.items() if string.startswith(token)}
            if len(matches) == 1:
                given |= matches
    return given


def apply_defaults(args: argparse.Namespace, values: Mapping[str, Any], given: Iterable[str]) -> dict[str, Any]:
    """Set ``args.<dest>`` to ``values[dest]`` for every dest the user did not give; return what was set. A dest the
    parser does not know raises :class:`PresetError` (a preset naming an option that does not exist)."""
    given = set(given)
    applied = {}
    for dest, value in values.items():
        if not hasattr(args, dest):
            raise PresetError(f"the preset sets option {dest!r}, which this command does not have.")
        if dest not in given:
            setattr(args, dest, value)
            applied[dest] = value
    return applied


def preset_markdown(preset: Preset) -> str:
    """A preset as Markdown: its title, what it is for, and one table line per choice (key, value, source, note)."""
    lines = [f"## Preset `{preset.name}`: {preset.title}", ""]
    if preset.description:
        lines += [preset.description, ""]
    lines += [f"Suite: {preset.suite or 'any'}. Report: {preset.report or 'none'}. "
              f"{'Reproduces ' + preset.paper if preset.paper else 'The project’s own protocol.'}", "",
              "| Key | Value | Source | Where the text and the code differ |", "|---|---|---|---|"]
    escape = lambda text: text.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines += [f"| `{key}` | {escape(value)} | {escape(source)} | {escape(note)} |"
              for key, value, source, note in preset.lines()]
    return "\n".join(lines)
