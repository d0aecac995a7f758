"""``python -m judges``: run the LLM/VLM judges. Each command parses, calls one library function and prints.

    python -m judges pairwise     T1 pairwise votes (drawn battles or copies of human battles)
    python -m judges commonsense  T2 Commonsense-T2I fit judge -> commonsense_accuracy
    python -m judges semvar       T3 SemVarBench alignment judge -> semvar_kappa (SemVarEffect), ...
    python -m judges saneval      T4 SANEval LLM/VLM scoring around a detector -> saneval_overall, ...
    python -m judges metrics ...  the model-based metrics (judges.metrics.cli)

The endpoint, model, concurrency, timeout, retries, image detail, template file and prices come from the settings
(``ARENA_JUDGE_*``, see ``python -m arena settings``); the API key only from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from datamodel.settings import SettingsError, load_settings

DESCRIPTIONS = {
    "pairwise": "Vote on battles like an annotator (protocols.md T1), asking in both orders unless --single-order.",
    "commonsense": "Commonsense-T2I fit judge (T2): fit(I, D) for both images and descriptions of each item.",
    "semvar": "SemVarBench alignment judge (T3): seven S(T, I) per item and model, SemVarEffect per model.",
    "saneval": "SANEval scoring (T4): LLM structure and synonyms, a detector, VLM attribute questions.",
}
DEFAULT_SUITES = {"pairwise": None, "commonsense": "commonsense", "semvar": "semvarbench", "saneval": "saneval"}


def _common(parser: argparse.ArgumentParser, command: str) -> None:
    suite = DEFAULT_SUITES[command]
    parser.add_argument("--suite", default=suite, help=f"prompt suite (default: {suite or 'all suites'})")
    parser.add_argument("--subset", help="only this subset (e.g. Easy, a category)")
    parser.add_argument("--variant", help="only this variant (e.g. with_definition)")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="only these text-to-image models (repeat the option for several)")
    parser.add_argument("--limit", type=int, help={
        "pairwise": "--source draw: how many battles to draw with the seed (default 100); --source human: at most "
                    "this many human battles not yet judged (default all)",
        "commonsense": "judge the first LIMIT items (default all)", "semvar": "judge the first LIMIT items "
        "(default all)", "saneval": "score the images of the first LIMIT prompts (default all)"}[command])
    parser.add_argument("--concurrency", type=int, help="API requests in flight (default: ARENA_JUDGE_CONCURRENCY)")
    parser.add_argument("--dry-run", action="store_true",
                        help="send nothing: print how many requests would be sent and their estimated cost")
    parser.add_argument("--judge-model", help="model the judge asks (default: ARENA_JUDGE_MODEL)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: ARENA_JUDGE_BASE_URL)")
    parser.add_argument("--judge-name", default="gpt-judge",
                        help="judge name; votes and scores are recorded as NAME:MODEL (default gpt-judge)")
    parser.add_argument("--detail", choices=("high", "low", "auto"), help="image detail (default: ARENA_JUDGE_IMAGE_DETAIL)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--config", help="settings TOML file (default: ARENA_CONFIG or ./arena.toml)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m judges", description="Run the LLM/VLM judges of the arena.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command, description in DESCRIPTIONS.items():
        sub = commands.add_parser(command, help=description, description=description)
        _common(sub, command)
        if command == "pairwise":
            sub.add_argument("--source", choices=("draw", "human"), default="draw",
                             help="draw new battles like the arena (default) or copy the human battles with a vote")
            sub.add_argument("--seed", type=int, default=0, help="seed of the drawn battles (default 0)")
            sub.add_argument("--single-order", action="store_true",
                             help="ask once, in the displayed order (the published protocol exactly)")
        if command == "commonsense":
            sub.add_argument("--seed", type=int, default=0, help="seed of the 'fits both: pick one' draws (default 0)")
        if command == "saneval":
            sub.add_argument("--detector", help="transformers OWLv2 / Grounding DINO folder or hub id "
                                                "(e.g. google/owlv2-base-patch16-ensemble)")
            sub.add_argument("--device", default="cpu", help="device of the detector (default cpu)")
            sub.add_argument("--detector-threshold", type=float, default=0.3, help="box confidence cut-off (default 0.3)")
            sub.add_argument("--no-synonyms", action="store_true", help="do not ask the LLM for synonyms")
            sub.add_argument("--flag-threshold", type=float, default=0.5,
                             help="flag attribute ratings below this (default 0.5)")
    commands.add_parser("metrics", help="model-based metrics (CLIP, FID/IS, reward, ...): python -m judges metrics --help",
                        add_help=False)
    return parser


def _run(args) -> int:
    from datamodel.media import MediaStore
    from datamodel.connection import connect
    from judges.client import EngineConfig
    from judges.prompts import load_templates
    from judges.selection import Selection

    settings = load_settings(config_file=args.config)
    config = EngineConfig.from_settings(settings, base_url=args.base_url, model=args.judge_model,
                                        concurrency=args.concurrency, image_detail=args.detail)
    if config.concurrency < 1:
        raise SettingsError(f"--concurrency must be 1 or more, got {config.concurrency}.")
    templates = load_templates(settings.judge_templates)
    selection = Selection(args.suite, args.subset, args.variant, tuple(args.model), args.limit)
    db = connect(settings.db_path, synchronous=settings.sqlite_synchronous)
    media = MediaStore(settings.media_dir)
    common = dict(name=args.judge_name, templates=templates, dry_run=args.dry_run, progress=not args.no_progress)
    try:
        if args.command == "pairwise":
            from judges.pairwise import run_pairwise

            job = run_pairwise(db, media, config, selection, source=args.source, seed=args.seed,
                               single_order=args.single_order, **common)
        elif args.command == "commonsense":
            from judges.commonsense import run_commonsense

            job = run_commonsense(db, media, config, selection, seed=args.seed, **common)
        elif args.command == "semvar":
            from judges.semvar import run_semvar

            job = run_semvar(db, media, config, selection, **common)
        else:
            from judges.saneval import SanevalOptions, run_saneval

            detector = None
            if not args.dry_run:
                if not args.detector:
                    raise SettingsError("saneval needs --detector: a transformers OWLv2 or Grounding DINO folder or "
                                        "hub id, e.g. --detector google/owlv2-base-patch16-ensemble.")
                from judges.metrics.detection import TransformersDetector

                detector = TransformersDetector(args.detector, device=args.device, threshold=args.detector_threshold)
            options = SanevalOptions(synonyms=not args.no_synonyms, flag_threshold=args.flag_threshold)
            job = run_saneval(db, media, config, selection, detector=detector, options=options, **common)
        summary = asyncio.run(job)
    finally:
        db.close()
    print("\n".join(summary.lines()))
    return 130 if summary.stopped else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "metrics":
        from judges.metrics.cli import main as metrics_main

        return metrics_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from judges.client import JudgeConfigError
    from judges.prompts import TemplateError
    from judges.selection import SelectionError

    try:
        return _run(args)
    except (SettingsError, JudgeConfigError, TemplateError, SelectionError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("aborted: answers received so far are stored; run the same command again to resume.", file=sys.stderr)
        return 130
