"""``python -m judges``: run the LLM/VLM judges. Each command parses, calls one library function and prints.

    python -m judges commonsense  T2 Commonsense-T2I fit judge -> commonsense_accuracy
    python -m judges pairwise     T1 pairwise votes (drawn battles or copies of human battles)
    python -m judges saneval      T4 SANEval LLM/VLM scoring around a detector -> saneval_overall, ...
    python -m judges semvar       T3 SemVarBench alignment judge -> semvar_kappa (SemVarEffect), ...
    python -m judges metrics ...  the model-based metrics (judges.metrics.commands)
    python -m judges compare      which judge to trust: every judge voter against the humans (judges.compare)

The judge sub-commands are the tasks of the registry (:mod:`judges.tasks`): each gets the common options below plus
its own, and its ``run`` is called with the open database, the engine configuration, the templates and the
selection. The endpoint, model, concurrency, timeout, retries, image detail, template file and prices come from the
settings (``ARENA_JUDGE_*``, see ``python -m arena settings``); the API key only from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from core.presets import (
    Preset,
    PresetError,
    add_preset_argument,
    apply_defaults,
    check_suite,
    get_preset,
    given_options,
)
from core.settings import SettingsError, load_settings
from judges import tasks
from judges.prompts import Templates
from judges.tasks import JUDGE_TASKS, JudgeTask


def __getattr__(name: str):
    if name == "DESCRIPTIONS":  # {task name: description}, read from the registry when asked for
        return {name: task.description for name, task in JUDGE_TASKS.items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _common(parser: argparse.ArgumentParser, task: JudgeTask) -> None:
    suite = task.default_suite
    parser.add_argument("--suite", default=suite, help=f"prompt suite (default: {suite or 'all suites'})")
    parser.add_argument("--subset", help="only this subset (e.g. Easy, a category)")
    parser.add_argument("--variant", help="only this variant (e.g. with_definition)")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="only these text-to-image models (repeat the option for several)")
    parser.add_argument("--limit", type=int, help=task.limit_help)
    parser.add_argument("--concurrency", type=int, help="API requests in flight (default: ARENA_JUDGE_CONCURRENCY)")
    parser.add_argument("--dry-run", action="store_true",
                        help="send nothing: print how many requests would be sent and their estimated cost")
    parser.add_argument("--judge-model", help="model the judge asks (default: ARENA_JUDGE_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: ARENA_JUDGE_BASE_URL)")
    parser.add_argument("--judge-name", default="gpt-judge",
                        help="judge name; votes and scores are recorded as NAME:MODEL, pairwise votes as "
                             "NAME:MODEL@TEMPLATE-VERSION (default gpt-judge)")
    parser.add_argument("--detail", choices=("high", "low", "auto"),
                        help="image detail (default: ARENA_JUDGE_IMAGE_DETAIL)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--config", help="settings TOML file (default: ARENA_CONFIG or ./arena.toml)")
    add_preset_argument(parser, what="(its judge model, template, image detail and the task's options)")


def preset_judge(preset: Preset, task: str, strict: bool) -> tuple[dict, dict]:
    """(option values, template replacements {task template key: registered template key}) of ``preset``'s judge for
    ``task``. A preset whose judge is for another task refuses it when chosen on purpose (``strict``) and gives
    nothing otherwise."""
    wanted = preset.get("judge.task")
    if wanted and wanted != task:
        if strict:
            raise SettingsError(f"preset {preset.name}'s judge is the {wanted} task, not {task}: run python -m judges "
                                f"{wanted} --preset {preset.name}, or drop --preset.")
        return {}, {}
    values = {dest: preset.get(key) for dest, key in (("judge_model", "judge.model"), ("detail", "judge.image_detail"),
                                                       ("judge_name", "judge.name")) if preset.get(key) is not None}
    return {**values, **preset.get("judge.options", {})}, dict(preset.get("judge.templates", {}))


def apply_judge_preset(args: argparse.Namespace, given: set[str], templates: Templates) -> Templates:
    """Resolve ``args.preset``, give the options the user did not type the preset's values, and return the templates
    with the preset's replacements (a template file replacing the same template is refused: say which one wins)."""
    args.preset = get_preset(args.preset)
    strict = args.preset.published  # a published protocol's judge is for its task; the project's defaults are not
    check_suite(args.preset, args.suite)
    if args.suite is None and args.preset.suite:  # a benchmark's preset judges that benchmark's prompts
        args.suite = args.preset.suite
    values, replacements = preset_judge(args.preset, args.command, strict)
    apply_defaults(args, values, given)
    clash = sorted(set(replacements) & set(templates.overridden))
    if clash:
        raise SettingsError(f"the judge template file replaces {clash[0]!r}, which preset {args.preset.name} also "
                            "replaces; unset ARENA_JUDGE_TEMPLATES (judge_templates) or drop --preset.")
    return templates.replace(**{key: templates.text(source) for key, source in replacements.items()})


def build_parser() -> argparse.ArgumentParser:
    """The parser: one sub-command per registered judge task, and ``metrics``."""
    parser = argparse.ArgumentParser(prog="python -m judges", description="Run the LLM/VLM judges of the arena.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _, task in JUDGE_TASKS.items():
        sub = commands.add_parser(task.name, help=task.description, description=task.description)
        _common(sub, task)
        if task.add_arguments is not None:
            task.add_arguments(sub)
    commands.add_parser("metrics", add_help=False,
                        help="model-based metrics (CLIP, FID/IS, reward, ...): python -m judges metrics --help")
    _compare_arguments(commands.add_parser("compare", help=COMPARE_HELP, description=COMPARE_HELP))
    return parser


COMPARE_HELP = ("Which judge to trust: every judge voter's agreement with the human votes on the same battles, per "
                "suite and subset, with the human-vs-human ceiling and judge ensembles; then every judge of a "
                "rating task against the human ratings on the same items (fit: accuracy and kappa; SemVarBench: "
                "Pearson, Spearman, kappa; SANEval: Spearman), with the rater-vs-rater ceiling.")


def _compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--suite", help="only this suite (default: every suite, and all of them together)")
    parser.add_argument("--min-shared", type=int, default=30,
                        help="fewer battles (or rated items) shared with the humans show 'insufficient' (default 30)")
    parser.add_argument("--rounds", type=int, default=200, help="bootstrap redraws for the interval of rho (200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    parser.add_argument("--no-subsets", action="store_true", help="no row per subset")
    parser.add_argument("--no-ensembles", action="store_true", help="no majority / agreement-weighted ensembles")
    parser.add_argument("--confusion", action="store_true", help="print each row's confusion matrix too")
    parser.add_argument("--csv", metavar="FILE", help="also write the table (without confusion matrices) to FILE")
    parser.add_argument("--ratings-csv", metavar="FILE",
                        help="also write the judges-against-ratings table to FILE")
    parser.add_argument("--config", help="settings TOML file (default: ARENA_CONFIG or ./arena.toml)")


def _compare(args) -> int:
    from datamodel.connection import connect
    from judges.compare import CompareOptions, compare_judges, format_table
    from judges.human_compare import HumanCompareOptions, compare_with_humans, format_human_table

    settings = load_settings(config_file=args.config)
    if args.min_shared < 1 or args.rounds < 0:
        raise SettingsError("--min-shared must be 1 or more and --rounds 0 or more.")
    options = CompareOptions(min_shared=args.min_shared, rounds=args.rounds, seed=args.seed,
                             subsets=not args.no_subsets, ensembles=not args.no_ensembles, suite=args.suite)
    db = connect(settings.database, synchronous=settings.sqlite_synchronous)
    try:
        try:
            table = compare_judges(db, options)
            human = compare_with_humans(db, HumanCompareOptions(min_shared=args.min_shared, suite=args.suite))
        except ValueError as error:
            raise SettingsError(str(error)) from None
    finally:
        db.close()
    if table.empty or not (table["judge"] != "human ceiling").any():
        print("No judge votes yet: run a judge on the human battles first, e.g. "
              "python -m judges pairwise --source human --judge-model MODEL")
    print(format_table(table, confusion=args.confusion))
    if args.csv:
        table.drop(columns=["confusion"]).to_csv(args.csv, index=False)
    if not human.empty:
        print()
        print(format_human_table(human))
    if args.ratings_csv:
        human.to_csv(args.ratings_csv, index=False)
    return 0


def _run(args) -> int:
    from datamodel.connection import connect
    from datamodel.media import MediaStore
    from judges.client import EngineConfig
    from judges.prompts import load_templates
    from judges.selection import Selection

    task = JUDGE_TASKS.get(args.command)
    settings = load_settings(config_file=args.config)
    templates = apply_judge_preset(args, args.given, load_templates(settings.judge_templates))
    config = EngineConfig.from_settings(settings, base_url=args.base_url, model=args.judge_model,
                                        concurrency=args.concurrency, image_detail=args.detail)
    if config.concurrency < 1:
        raise SettingsError(f"--concurrency must be 1 or more, got {config.concurrency}.")
    selection = Selection(args.suite, args.subset, args.variant, tuple(args.model), args.limit)
    db = connect(settings.database, synchronous=settings.sqlite_synchronous)
    job = tasks.JudgeJob(db, MediaStore(settings.media_dir), config, selection, templates, name=args.judge_name,
                         dry_run=args.dry_run, progress=not args.no_progress)
    try:
        summary = asyncio.run(task.run(job, args))
    finally:
        db.close()
    print("\n".join(summary.lines()))
    print(f"preset: {args.preset.label()}")
    return 130 if summary.stopped else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "metrics":
        from judges.metrics.commands import main as metrics_main  # torch and friends: only for this command

        return metrics_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    args.given = given_options(parser, argv)
    from core.extras import exit_status
    from core.registry import RegistryError
    from judges.client import JudgeConfigError
    from judges.prompts import TemplateError
    from judges.selection import SelectionError

    try:
        return _compare(args) if args.command == "compare" else _run(args)
    except (SettingsError, JudgeConfigError, TemplateError, SelectionError, FileNotFoundError, PresetError,
            RegistryError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:
        return exit_status(error, f"python -m judges {args.command}")
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("aborted: answers received so far are stored; run the same command again to resume.", file=sys.stderr)
        return 130
