"""``python -m judges metrics``: compute model-based metrics for a suite into the ``metrics`` table.

    python -m judges metrics --suite taxonomy --metrics clip,fid,is,reward,consistency
    python -m judges metrics --suite commonsense --metrics clip          # also the CLIP pair accuracy (T2)
    python -m judges metrics --suite taxonomy --tiny                     # offline: tiny random stand-in scorers

The metrics, their options and their defaults are the registered ones (:mod:`judges.metrics.registry`). Each
metric's scorer is built on its own: a metric whose optional extra (torch-fidelity for FID/IS, ImageReward for
``reward``) or weights are missing is skipped with one line on stderr saying what to install or which flag to set,
and the other metrics still run. Exit status: 0 when at least one requested metric ran; 3 when none could (or, with
``--strict``, when any was skipped); 2 for a usage or configuration error.

The library function is :func:`compute_metrics`; :func:`main` parses, builds the scorers and prints.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Sequence

from datamodel.database import Database
from datamodel.media import MediaStore
from datamodel.metrics import record_directions
from core.presets import Preset, add_preset_argument, apply_defaults, check_suite, get_preset, given_options
from judges.metrics.registry import (METRICS, MetricRun, Scorers, Skip, add_metric_options, check_names, default_names,
                                     run_order)

EXIT_NOTHING_RAN = 3


def compute_metrics(db: Database, media: MediaStore, suite: str, metrics: Sequence[str],
                    scorers: Scorers, *, models: Sequence[str] | None = None, progress: bool = False) -> dict:
    """Run the registered ``metrics`` on ``suite`` with ``scorers`` (and their options, ``scorers.options``); return
    the summary, each metric's part as its ``score`` returned it (the rows are written to the database).

    Metrics run in registration order with their companions on this suite (``clip`` on the commonsense suite also
    runs ``commonsense``), derived ones last; each records its stored names' directions (``metric_directions``). A
    requested metric whose scorer is unavailable, or whose data cannot be scored yet (consistency without stored
    source scores), is not run: ``summary["skipped"]`` maps it to the reason.
    """
    requested = check_names(metrics)
    run = MetricRun(db, media, suite, scorers.options, models=models, progress=progress)
    skipped: dict[str, str] = {}
    for name in run_order(requested, suite):
        metric = METRICS[name]
        if not scorers.ready(name):
            if name in requested:  # a companion left out goes unmentioned: the metric that brings it says why
                skipped[name] = scorers.unavailable[name]
            continue
        record_directions(db, metric.outputs())
        try:
            run.summary.update(metric.score(run, scorers[name]))
        except Skip as why:
            skipped[name] = str(why)
    if skipped:
        run.summary["skipped"] = skipped
    return run.summary


def build_parser() -> argparse.ArgumentParser:
    known = dict(METRICS)
    default = ",".join(default_names())
    listing = "\n".join(textwrap.fill(f"{name}: {metric.title}" + (f" [needs {metric.extra}]" if metric.extra else ""),
                                      width=100, initial_indent="  ", subsequent_indent="      ")
                        for name, metric in known.items())
    parser = argparse.ArgumentParser(prog="python -m judges metrics", description=__doc__.split("\n")[0],
                                     epilog=f"metrics:\n{listing}",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", help="TOML settings file (default: $ARENA_CONFIG or ./arena.toml)")
    parser.add_argument("--db", dest="db_path", help="database file (default: the db_path setting)")
    parser.add_argument("--media-dir", help="media folder (default: the media_dir setting)")
    parser.add_argument("--cache-dir", help="cache folder for the tiny stand-ins (default: the cache_dir setting)")
    parser.add_argument("--suite", required=True, help="suite whose images to score")
    parser.add_argument("--metrics", default=default, help=f"comma-separated, from {', '.join(known)} "
                        f"(default {default})")
    parser.add_argument("--models", help="only these models (comma-separated)")
    parser.add_argument("--tiny", action="store_true", help="tiny random stand-in scorers (offline demo, tests)")
    add_metric_options(parser)
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars (they are also off when stderr is not a terminal)")
    parser.add_argument("--strict", action="store_true",
                        help=f"exit with status {EXIT_NOTHING_RAN} when any requested metric is skipped")
    add_preset_argument(parser, what="(its metrics and their scorers' settings)")
    return parser


def preset_values(preset: Preset) -> dict:
    """The options a preset sets: ``--metrics`` from ``metrics.names``, each ``metrics.option.DEST``."""
    values = dict(preset.section("metrics.option."))
    if preset.get("metrics.names"):
        values["metrics"] = ",".join(preset.get("metrics.names"))
    return values


def apply_metrics_preset(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str]) -> Preset:
    """Resolve ``args.preset``, check it fits the suite, give the options the user did not type its values."""
    preset = get_preset(args.preset)
    check_suite(preset, args.suite)
    apply_defaults(args, preset_values(preset), given_options(parser, argv))
    args.preset = preset
    return preset


def _print_summary(summary: dict) -> None:
    import pandas as pd

    for key, value in summary.items():
        if key == "skipped":
            continue
        if isinstance(value, pd.DataFrame):
            print(f"{key}:")
            print(value.to_string(index=False) if not value.empty else "  (nothing to compare)")
        else:
            print(f"{key}: {value}")


def main(argv: list[str] | None = None) -> int:
    from datamodel.connection import connect
    from core.extras import missing_extra
    from core.settings import SettingsError, load_settings

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        preset = apply_metrics_preset(parser, args, argv)
        metrics = list(dict.fromkeys(m.strip() for m in args.metrics.split(",") if m.strip()))
        settings = load_settings(config_file=args.config)
        overrides = {k: getattr(args, k) for k in ("db_path", "media_dir", "cache_dir") if getattr(args, k)}
        settings = settings.replace(**overrides) if overrides else settings
        if not metrics:
            raise ValueError(f"--metrics names no metric; choose from {', '.join(METRICS)}.")
        metrics = check_names(metrics)
        scorers = Scorers(args, tiny=args.tiny, cache_dir=settings.cache_dir).build(run_order(metrics, args.suite))
        if all(metric in scorers.unavailable for metric in metrics):
            summary = {"skipped": {metric: scorers.unavailable[metric] for metric in metrics}}
        else:
            db = connect(settings.database, synchronous=settings.sqlite_synchronous)
            try:
                summary = compute_metrics(
                    db, MediaStore(settings.media_dir), args.suite, metrics, scorers,
                    models=[m.strip() for m in args.models.split(",")] if args.models else None,
                    progress=not args.quiet,
                )
            finally:
                db.close()
    except (SettingsError, ValueError, LookupError, OSError, ModuleNotFoundError, RuntimeError) as error:
        print(f"error: {missing_extra(error, 'python -m judges metrics') or error}", file=sys.stderr)
        return 2
    _print_summary(summary)
    print(f"preset: {preset.label()}")
    skipped = summary.get("skipped", {})
    for metric, why in skipped.items():
        print(f"skipped {metric}: {' '.join(why.split())}", file=sys.stderr)  # one line each
    if all(metric in skipped for metric in metrics):
        print(f"error: none of the requested metrics ({', '.join(metrics)}) could run; see the skipped lines above.",
              file=sys.stderr)
        return EXIT_NOTHING_RAN
    return EXIT_NOTHING_RAN if skipped and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
