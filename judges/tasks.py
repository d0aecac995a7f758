"""The judge tasks ``python -m judges`` runs: one :class:`JudgeTask` declaration each, registered with :func:`register`.

A task module (``judges/<name>.py``, or a plug-in's or a test's own module) declares its templates and ends with one
declaration::

    register(JudgeTask(
        name="semvar", description="SemVarBench alignment judge (T3): ...", default_suite="semvarbench",
        run=_run, templates=(SEMVAR_TEMPLATE,),
    ))

Everything that lists judge tasks asks this registry: the sub-commands of ``python -m judges`` (with their help,
default suite, ``--limit`` help and extra options), the template file check (:func:`judges.prompts.check_templates`
knows the templates of every registered task) and the token budgets (each :class:`judges.prompts.JudgeTemplate`
carries its own). The built-in tasks are declared in the modules of the ``judges`` package, imported once on the
first lookup (:func:`all_tasks`, :func:`judges.discovery.discover`); sub-packages such as ``judges.metrics`` are not
imported, and a task module imports its heavy optional dependencies (a detector, torch) inside its ``run``.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from judges.discovery import discover
from judges.prompts import (BUILT_IN_TEMPLATES, DEFAULT_TEMPLATES, JudgeTemplate, TemplateError, Templates,
                            register_template, unregister_template)

if TYPE_CHECKING:
    from judges.client import EngineConfig
    from judges.run import RunSummary
    from judges.selection import Selection

# Sub-commands of ``python -m judges`` that are not judge tasks.
RESERVED = ("metrics",)


@dataclass(frozen=True)
class JudgeJob:
    """What the command line hands every task's ``run``: the open database and media folder, the engine
    configuration, the selection (``--suite``, ``--subset``, ``--variant``, ``--model``, ``--limit``) and the options
    common to all tasks."""

    db: Any
    media: Any
    config: "EngineConfig"
    selection: "Selection"
    templates: Templates
    name: str = "gpt-judge"
    dry_run: bool = False
    progress: bool = True

    def common(self) -> dict[str, Any]:
        """The keyword arguments every built-in ``run_<task>`` function takes: name, templates, dry_run, progress."""
        return dict(name=self.name, templates=self.templates, dry_run=self.dry_run, progress=self.progress)


@dataclass(frozen=True)
class JudgeTask:
    """One judge task: the sub-command ``python -m judges <name>`` and everything it needs.

    - ``description``: the help line of the sub-command.
    - ``run(job, args)``: an async function judging ``job.selection`` (a :class:`JudgeJob`) with the task's own
      options in ``args``; it returns a :class:`judges.run.RunSummary`, whose lines the command prints. Raise
      :class:`core.settings.SettingsError` (or a :class:`judges.selection.SelectionError`) with the fix in the
      message for a bad option.
    - ``default_suite``: the ``--suite`` default (None: every suite); ``limit_help``: what ``--limit`` counts.
    - ``add_arguments(parser)``: the task's own options, added after the common ones.
    - ``templates``: the :class:`judges.prompts.JudgeTemplate` declarations it asks with; registering the task
      registers them, so a template file may replace them.
    """

    name: str
    description: str
    run: Callable[[JudgeJob, argparse.Namespace], Awaitable["RunSummary"]]
    default_suite: str | None = None
    limit_help: str = "judge the first LIMIT items (default all)"
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    templates: tuple[JudgeTemplate, ...] = ()


class TaskRegistryError(ValueError):
    """A task declaration clashes with another one, or a task name is unknown; the message says what to do."""


_TASKS: dict[str, JudgeTask] = {}
_LOCK = threading.Lock()


def register(task: JudgeTask) -> JudgeTask:
    """Add ``task`` and its templates; a second declaration of the same name raises :class:`TaskRegistryError`,
    a template key another declaration already has :class:`judges.prompts.TemplateError`."""
    if not task.name or task.name.startswith("-") or task.name in RESERVED:
        raise TaskRegistryError(f"{task.name!r} cannot name a judge task (reserved: {', '.join(RESERVED)}). "
                                "Choose another name.")
    with _LOCK:
        if task.name in _TASKS and _TASKS[task.name] != task:
            raise TaskRegistryError(f"judge task {task.name!r} is declared twice. Give the new task another name, "
                                    "or unregister the old one first.")
    added = []
    try:
        for template in task.templates:
            if template.key not in DEFAULT_TEMPLATES:
                added.append(template.key)
            register_template(template)
    except TemplateError:
        for key in added:  # nothing of a refused declaration stays
            unregister_template(key)
        raise
    with _LOCK:
        _TASKS[task.name] = task
    return task


def unregister(name: str) -> None:
    """Remove a task and the templates only it declared (tests and plug-ins that clean up); unknown names are
    ignored."""
    with _LOCK:
        task = _TASKS.pop(name, None)
        still_used = {t.key for other in _TASKS.values() for t in other.templates}
    if task is not None:
        built_in = {t.key for t in BUILT_IN_TEMPLATES}
        for template in task.templates:
            if template.key not in still_used and template.key not in built_in:
                unregister_template(template.key)


def all_tasks() -> dict[str, JudgeTask]:
    """Every registered judge task by name, sorted by name (whatever order their modules were imported in)."""
    discover()
    with _LOCK:
        return dict(sorted(_TASKS.items()))


def task_named(name: str) -> JudgeTask:
    """The declaration of task ``name``; an unknown name raises :class:`TaskRegistryError` listing the known ones."""
    tasks = all_tasks()
    if name not in tasks:
        raise TaskRegistryError(f"unknown judge task {name!r}. Known tasks: {', '.join(tasks) or 'none'}. "
                                "Declare it with judges.tasks.register(JudgeTask(...)) in a module that is imported.")
    return tasks[name]
