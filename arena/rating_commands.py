"""``python -m arena ratings status|assign|stats|export``: the human rating tasks on the command line.

:func:`add_commands` adds the ``ratings`` command to the arena's parser; each leaf sets ``handler(args, settings)``,
which parses nothing more, calls one library function and prints:

- ``status``: per declared task its assignment and how far the study is (:func:`arena.rating_session.study_status`);
- ``assign TASK``: open a task (``--raters``, ``--model``) or close it (``--close``)
  (:func:`datamodel.human_ratings.set_assignment`);
- ``stats``: agreement between raters and the papers' human tables (:func:`judges.human_report.human_statistics`);
- ``export PATH``: the rating table as CSV, JSONL, Parquet or a Hugging Face dataset
  (:func:`datamodel.rating_table.export_ratings`).
"""

from __future__ import annotations

import argparse

TASK_HELP = "the task: commonsense_fit, semvar_alignment, saneval_adherence or another declared one"


def _open(settings):
    from datamodel.connection import connect

    return connect(settings.database, synchronous=settings.sqlite_synchronous)


def cmd_status(args, settings) -> int:
    from arena.rating_session import study_status

    rows = study_status(_open(settings))
    print(f"{'task':20} {'open':5} {'raters/item':>11} {'paper':>5} {'items':>6} {'begun':>6} {'complete':>8} "
          f"{'ratings':>8} {'excluded':>8} {'raters':>6}  models")
    for row in rows:
        print(f"{row['task']:20} {'yes' if row['open'] else 'no':5} {row['raters_per_item']:11d} "
              f"{row['paper_raters']:5d} {row['items']:6d} {row['items_begun']:6d} {row['items_complete']:8d} "
              f"{row['ratings']:8d} {row['excluded']:8d} {row['raters']:6d}  {row['models']}")
    return 0


def cmd_assign(args, settings) -> int:
    from datamodel.human_ratings import set_assignment
    from judges.rating_tasks import RATING_TASKS

    task = RATING_TASKS[args.task]
    raters = args.raters if args.raters is not None else task.raters
    saved = set_assignment(_open(settings), task.name, raters_per_item=raters, models=args.model,
                           active=not args.close)
    print(f"{task.title} ({task.name}): {'open' if saved.active else 'closed'}, {saved.raters_per_item} rater(s) per "
          f"item (the paper: {task.raters}), images of {', '.join(saved.models) or 'every model'}.")
    return 0


def cmd_stats(args, settings) -> int:
    from judges.human_report import format_statistics, human_statistics

    print(format_statistics(human_statistics(_open(settings), task=args.task)))
    return 0


def cmd_export(args, settings) -> int:
    from datamodel.media import MediaStore
    from datamodel.rating_table import export_ratings

    rows = export_ratings(_open(settings), args.path, args.format, media=MediaStore.from_settings(settings),
                          keep_in_battles=args.keep_in_battles)
    print(f"Wrote {rows} ratings to {args.path}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """Add ``ratings`` and its sub-commands to the arena's sub-command parser ``commands`` (the handlers import what
    they need: the other commands do not pay for the statistics' imports)."""
    group = commands.add_parser("ratings", help="human rating tasks: status, assign, stats, export")
    sub = group.add_subparsers(dest="ratings_command", required=True, metavar="COMMAND")

    status = sub.add_parser("status", help="each rating task's assignment and how far the study is")
    status.set_defaults(handler=cmd_status)

    assign = sub.add_parser("assign", help="open a rating task (or change it, or close it)")
    assign.add_argument("task", help=TASK_HELP)
    assign.add_argument("--raters", type=int, help="raters per item (default: the paper's number)")
    assign.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="only this model's images (repeat for several; default: every model)")
    assign.add_argument("--close", action="store_true", help="stop serving the task (its ratings stay)")
    assign.set_defaults(handler=cmd_assign)

    stats = sub.add_parser("stats", help="agreement between raters and the papers' human tables")
    stats.add_argument("--task", help="only this task (" + TASK_HELP.removeprefix("the task: ") + ")")
    stats.set_defaults(handler=cmd_stats)

    export = sub.add_parser("export", help="export the ratings (CSV, JSONL, Parquet, Hugging Face)")
    export.add_argument("path", help="output file (a folder for --format hf); the suffix picks csv, jsonl or parquet")
    export.add_argument("--format", help="csv, jsonl, parquet or hf (default: from the suffix); hf: a Hugging Face "
                        "dataset folder with the images")
    export.add_argument("--keep-in-battles", action="store_true",
                        help="with --format hf: keep showing the exported images in battles and questions (by "
                             "default images published with their model names are withheld: anyone with the export "
                             "could name them)")
    export.set_defaults(handler=cmd_export)
