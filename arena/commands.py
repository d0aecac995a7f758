"""``python -m arena``: the command line. Each command parses, calls one library function and prints."""

from __future__ import annotations

import argparse
import sys

from datamodel.extras import exit_status, require
from datamodel.settings import SettingsError, load_settings, settings_markdown, settings_table
from datamodel.vote_table import EXPORTERS
from ratings.votes import TIE_POLICIES


def _open(settings):
    from datamodel.media import MediaStore
    from datamodel.connection import connect

    return connect(settings.db_path, synchronous=settings.sqlite_synchronous), MediaStore.from_settings(settings)


def cmd_serve(args, settings) -> int:
    from arena.demo import ensure_demo
    from arena.web.app import serve

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings.replace(**overrides)
    db, media = _open(settings)
    built = ensure_demo(db, media, settings)
    if built:
        print(f"Demo ready: {built['prompts']} prompts, {built['new_images']} images in {settings.db_path}")
    db.close()
    print(f"Arena on http://{settings.host}:{settings.port}  (database {settings.db_path}, media {settings.media_dir})")
    serve(settings)
    return 0


def cmd_demo(args, settings) -> int:
    from arena.demo import build_demo, load_demo_bundle

    if args.regenerate:  # nothing is written unless the whole stack is there
        require("torch", "diffusers", "transformers", "open_clip", command="python -m arena demo --regenerate")
    db, media = _open(settings)
    if args.regenerate:  # the generators and metric scorers (torch): what python -m tools.demo_bundle ships
        built = build_demo(db, media, settings, progress=True)
    else:
        built = load_demo_bundle(db, media)
    print(f"Demo: {built['prompts']} prompts ({built['new_prompts']} new), {built['new_images']} new images.")
    return 0


def cmd_import_images(args, settings) -> int:
    from arena.importer import import_images
    from datamodel.renditions import Renditions

    db, media = _open(settings)
    result = import_images(db, media, args.folder, args.prompts, suite=args.suite,
                           renditions=Renditions.from_settings(media, settings))
    print(f"Imported {result.images} images ({result.new_images} new) of {result.models} models "
          f"for {result.prompts} prompts into suite {args.suite!r}.")
    return 0


def cmd_export(args, settings) -> int:
    from datamodel.vote_table import export_votes

    db, media = _open(settings)
    rows = export_votes(db, args.path, args.format, media=media)
    print(f"Wrote {rows} votes to {args.path}")
    if args.push_to:
        if args.format != "hf":
            raise ValueError("--push-to uploads a Hugging Face dataset: add --format hf.")
        from datamodel.hf_export import push_to_hub

        print(f"Pushed to {push_to_hub(args.path, args.push_to)}")
    return 0


def cmd_backup(args, settings) -> int:
    from datamodel.backup import backup_database

    copied = backup_database(settings.db_path, args.dest, overwrite=args.overwrite)
    print(f"Backed up {settings.db_path} to {args.dest}: {copied.votes} votes, integrity {copied.integrity}, "
          f"{copied.seconds:.1f} s")
    return 0


def cmd_leaderboard(args, settings) -> int:
    from arena.leaderboard import leaderboard_options
    from arena.leaderboard_service import compute_snapshot, data_version, options_key, stored_snapshot

    db, _ = _open(settings)
    options = leaderboard_options(
        settings,
        suite=args.suite, subset=args.subset, variant=args.variant, category=args.category, voter=args.voter,
        judge=args.judge, rounds=args.rounds, tie_policy=args.tie_policy, include_excluded=args.include_excluded,
    )
    snapshot = None if args.fresh else stored_snapshot(db, options_key(options))
    if snapshot is None:
        snapshot = compute_snapshot(db, options, settings.leaderboard_views)
        print(f"(computed now in {snapshot.seconds:.1f} s)")
    else:
        changed = snapshot.data_version != data_version(db)
        print(f"(snapshot computed {snapshot.age():.0f} s ago in {snapshot.seconds:.1f} s"
              + ("; the data changed since: pass --fresh to recompute)" if changed else "; nothing changed since)"))
    print(snapshot.view["text"])
    return 0


def cmd_settings(args, settings) -> int:
    if args.markdown:
        print(settings_markdown(), end="")
        return 0
    for name, env, default, help_text in settings_table():
        print(f"{name:24} {env:30} default {default!s:18} {help_text}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena", description="Pairwise text-to-image arena.")
    parser.add_argument("--config", help="TOML settings file (default: $ARENA_CONFIG or ./arena.toml)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="start the web app (loads the shipped demo into an empty database)")
    serve.add_argument("--host", help="address to listen on (default: the host setting)")
    serve.add_argument("--port", type=int, help="port to listen on (default: the port setting)")
    serve.set_defaults(handler=cmd_serve)

    demo = commands.add_parser("demo", help="write the bundled demo prompts and images into the database")
    demo.add_argument("--regenerate", action="store_true",
                      help="make the images and metrics with the generators and scorers (needs the gen and metrics "
                           "extras) instead of loading the shipped bundle")
    demo.set_defaults(handler=cmd_demo)

    images = commands.add_parser("import-images", help="import a folder <model>/<prompt key>.<png|jpg|webp>")
    images.add_argument("folder", help="folder with one subfolder of images per model")
    images.add_argument("--prompts", required=True, help="CSV or JSONL with key, text (+ subset, variant, role, metadata)")
    images.add_argument("--suite", default="imported", help="suite of the prompts (default: imported)")
    images.set_defaults(handler=cmd_import_images)

    export = commands.add_parser("export", help="export the votes (CSV, JSONL, Parquet, FastChat, Hugging Face)")
    export.add_argument("path", help="output file (a folder for --format hf); the suffix picks csv, jsonl or parquet")
    export.add_argument("--format", choices=list(EXPORTERS),
                        help="output format (default: from the suffix); fastchat: FastChat's battle JSON; "
                             "hf: a Hugging Face dataset folder with the images")
    export.add_argument("--push-to", metavar="REPO_ID",
                        help="with --format hf: upload the folder to this Hugging Face dataset (token: HF_TOKEN)")
    export.set_defaults(handler=cmd_export)

    backup = commands.add_parser("backup", help="copy the database consistently while the app serves")
    backup.add_argument("dest", help="the copy's file path (must not exist unless --overwrite)")
    backup.add_argument("--overwrite", action="store_true", help="replace an existing file at DEST")
    backup.set_defaults(handler=cmd_backup)

    board = commands.add_parser("leaderboard", help="print the leaderboard")
    board.add_argument("--suite", help="only votes on prompts of this suite, e.g. taxonomy")
    board.add_argument("--subset", help="only votes on prompts of this subset, e.g. Easy")
    board.add_argument("--variant", help="with_definition or without_definition (taxonomy)")
    board.add_argument("--category", help="only votes on prompts of this category (metadata category)")
    board.add_argument("--voter", help="one annotator's or judge's votes only")
    board.add_argument("--judge", help="the judge voter of the judge column, e.g. gpt-judge:gpt-4o-mini "
                                       "(default: the judge with the most votes)")
    board.add_argument("--tie-policy", choices=list(TIE_POLICIES),
                       help="ties and both-bad in the fit (default: the tie_policy setting)")
    board.add_argument("--rounds", type=int, help="bootstrap rounds (default: the setting)")
    board.add_argument("--include-excluded", action="store_true", help="count votes flagged as excluded")
    board.add_argument("--fresh", action="store_true",
                       help="compute it now rather than print the latest snapshot (the server's, or an earlier run's)")
    board.set_defaults(handler=cmd_leaderboard)

    settings = commands.add_parser("settings", help="list every setting, its environment variable and default")
    settings.add_argument("--markdown", action="store_true", help="as a Markdown table (docs/reference/settings.md)")
    settings.set_defaults(handler=cmd_settings)

    try:
        from arena.suite_commands import add_commands
    except ImportError:
        pass
    else:
        add_commands(commands, load_settings)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(config_file=args.config)
        return args.handler(args, settings)
    except (SettingsError, ValueError, LookupError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:  # a command of the full install run in the web install: say how to add it
        return exit_status(error, f"python -m arena {args.command}")


if __name__ == "__main__":
    sys.exit(main())
