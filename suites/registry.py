"""The prompt suites the arena knows: one :class:`Suite` declaration each, in the registry :data:`SUITES`.

A suite module (``suites/<name>.py``, listed in :data:`SUITES`' built-ins, or a plug-in's module named by an entry
point of the group ``t2i_arena.suites``) reads or builds its prompts and ends with one declaration::

    SUITES.register(Suite(
        name="commonsense", title="Commonsense-T2I",
        criteria="Does the image show what commonsense implies (a lightbulb without electricity is dark)?",
        imports=(ImportFormat("commonsense", "Commonsense-T2I data.json", run=...),),
    ))

Everything that lists suites asks this registry: the ``suites import`` / ``suites build`` sub-commands, the titles and
captions the arena shows above a battle, and the criteria of the annotators' and judges' guidelines.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from core.registry import Registry, RegistryError
from datamodel.catalog import PromptImport
from datamodel.database import Database

Define = Callable[[list[str]], dict[str, str]]


@dataclass(frozen=True)
class ImportContext:
    """What an import may need besides its file: the settings, and who writes missing definitions.

    ``definer(db)`` returns a function that writes definitions for a list of concepts (the judge model's, built by
    the command line from the judges' engine), or None when no judge endpoint is configured; ``asker(db, model)``
    one that sends texts to the judge endpoint and returns the answers (a builder whose prompts an LLM writes).
    """

    settings: Any = None
    definer: Callable[[Database], Define | None] | None = None
    asker: Callable[..., Callable] | None = None

    def define(self, db: Database) -> Define | None:
        return self.definer(db) if self.definer is not None else None

    def ask(self, db: Database, model: str | None = None) -> Callable:
        """The LLM writer's transport: ``ask(texts) -> [(ok, answer or reason)]`` through the judges' engine with
        ``model`` (None: the judge model); a :class:`suites.common.SuiteError` when the command gave none."""
        if self.asker is None:
            from suites.common import SuiteError

            raise SuiteError("this command has no LLM writer: run it as python -m arena suites build.")
        return self.asker(db, model)


@dataclass(frozen=True)
class ImportFormat:
    """``python -m arena suites import <name> PATH``: a file format the suite reads.

    ``run(db, args, context)`` imports ``args.path`` (plus the flags ``add_arguments`` adds) and returns what it
    wrote; nothing is written when a row is bad.
    """

    name: str
    help: str
    run: Callable[[Database, argparse.Namespace, ImportContext], PromptImport]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None


@dataclass(frozen=True)
class Builder:
    """``python -m arena suites build <name>``: prompts made by the project (from WordNet, from word lists).

    ``run(db, args, settings)`` writes the prompts and returns what it wrote (None when it wrote no prompt, e.g. only
    candidates waiting for a person's check) and one line saying what was built. With ``with_context`` it gets an
    :class:`ImportContext` (the settings, and the judges' engine as an LLM writer) instead of the settings.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Database, argparse.Namespace, Any], tuple[PromptImport | None, str]]
    with_context: bool = False


@dataclass(frozen=True)
class Suite:
    """One prompt suite: the ``suite`` value of its prompts and everything the arena shows or runs for it.

    - ``title``: the name annotators and leaderboard viewers read.
    - ``criteria``: what a better image does for this suite's prompts, for the annotators' and judges' guidelines.
    - ``imports`` / ``builders``: how its prompts get into the database.
    - ``caption(metadata)``: an optional (label, text) shown under the prompt (the taxonomy's concept and its
      definition), or None.
    - ``notes(db)``: optional lines ``python -m arena suites list`` prints under the counts (e.g. that the taxonomy
      subsets built from WordNet are a reconstruction of the published ones).
    """

    name: str
    title: str
    criteria: str
    imports: tuple[ImportFormat, ...] = ()
    builders: tuple[Builder, ...] = ()
    caption: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None
    notes: Callable[[Database], list[str]] | None = None


def _check_commands(suite: Suite, others: list[Suite]) -> None:
    """Refuse a suite declaring an import or build command another suite already has."""
    for kind, field in (("import", "imports"), ("build", "builders")):
        owners = {command.name: other.name for other in others for command in getattr(other, field)}
        for command in getattr(suite, field):
            if command.name in owners:
                raise RegistryError(f"suite {suite.name!r} declares `suites {kind} {command.name}`, which suite "
                                    f"{owners[command.name]!r} already has. Rename one of them.")


SUITES = Registry[Suite]("suites", (
    "suites.commonsense", "suites.open_prompts", "suites.paraphrase", "suites.saneval", "suites.semvarbench",
    "suites.taxonomy",
), what="suite", hint="(python -m arena suites list)", check=_check_commands)


def suite_title(name: str) -> str:
    """The title to show for suite ``name`` (the name itself for an undeclared suite)."""
    suite = SUITES.get(name, None)  # None: a suite that only exists as imported prompts
    return suite.title if suite is not None else name


def import_formats() -> dict[str, ImportFormat]:
    """Every ``suites import`` format by name."""
    return {command.name: command for suite in SUITES.values() for command in suite.imports}


def builders() -> dict[str, Builder]:
    """Every ``suites build`` builder by name."""
    return {command.name: command for suite in SUITES.values() for command in suite.builders}
