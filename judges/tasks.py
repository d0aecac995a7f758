"""The judge tasks ``python -m judges`` runs: one :class:`JudgeTask` declaration each, in the registry
:data:`JUDGE_TASKS`.

A task module (``judges/<name>.py`` listed in :data:`judges.prompts.JUDGE_TASK_MODULES`, or a plug-in's module named
by an entry point of the group ``t2i_arena.judge_tasks``) declares its templates and ends with one declaration::

    JUDGE_TASKS.register(JudgeTask(
        name="semvar", description="SemVarBench alignment judge (T3): ...", default_suite="semvarbench",
        run=_run, templates=(SEMVAR_TEMPLATE,),
    ))

Everything that lists judge tasks asks this registry: the sub-commands of ``python -m judges`` (with their help,
default suite, ``--limit`` help and extra options), the template file check (:func:`judges.prompts.check_templates`
knows the templates of every registered task) and the token budgets (each :class:`judges.prompts.JudgeTemplate`
carries its own). A task module imports its heavy optional dependencies (a detector, torch) inside its ``run``, so
loading the registry stays cheap.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.registry import Registry, RegistryError
from judges.prompts import BUILT_IN_TEMPLATES, JUDGE_TASK_MODULES, JUDGE_TEMPLATES, JudgeTemplate, Templates

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
    config: EngineConfig
    selection: Selection
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
    run: Callable[[JudgeJob, argparse.Namespace], Awaitable[RunSummary]]
    default_suite: str | None = None
    limit_help: str = "judge the first LIMIT items (default all)"
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    templates: tuple[JudgeTemplate, ...] = ()


def _check_task(task: JudgeTask, others: list[JudgeTask]) -> None:
    if not task.name or task.name.startswith("-") or task.name in RESERVED:
        raise RegistryError(f"{task.name!r} cannot name a judge task (reserved: {', '.join(RESERVED)}). "
                            "Choose another name.")


class _JudgeTasks(Registry[JudgeTask]):
    """The judge tasks; registering one registers its templates (:data:`judges.prompts.JUDGE_TEMPLATES`), and
    unregistering it removes those only it declared."""

    def register(self, task: JudgeTask) -> JudgeTask:
        if self.declared(task.name) == task:
            return task
        added = []
        try:
            for template in task.templates:
                if JUDGE_TEMPLATES.declared(template.key) is None:
                    added.append(template.key)
                JUDGE_TEMPLATES.register(template)
            return super().register(task)
        except RegistryError:
            for key in added:  # nothing of a refused declaration stays
                JUDGE_TEMPLATES.unregister(key)
            raise

    def unregister(self, name: str) -> JudgeTask | None:
        task = super().unregister(name)
        if task is not None:
            still_used = {t.key for _, other in self.items() for t in other.templates} | {
                t.key for t in BUILT_IN_TEMPLATES}
            for template in task.templates:
                if template.key not in still_used:
                    JUDGE_TEMPLATES.unregister(template.key)
        return task


JUDGE_TASKS = _JudgeTasks("judge_tasks", JUDGE_TASK_MODULES, what="judge task", check=_check_task)
