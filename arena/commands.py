"""``python -m arena``: the command line. Each command parses, calls one library function and prints."""

from __future__ import annotations

import argparse
import json
import sys

from core.extras import exit_status, require
from core.protocols import PROTOCOLS
from core.settings import SettingsError, load_settings, settings_markdown, settings_table
from datamodel.catalog import release_withheld, withheld_images
from datamodel.connection import describe, is_postgres_url
from datamodel.vote_table import EXPORTERS
from ratings.votes import TIE_POLICIES


def _open(settings):
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    return connect(settings.database, synchronous=settings.sqlite_synchronous), MediaStore.from_settings(settings)


def cmd_serve(args, settings) -> int:
    from arena.demo.seeding import ensure_demo
    from arena.web.app import serve
    from datamodel.connection import check_writable

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings.replace(**overrides)
    db, media = _open(settings)
    check_writable(db, settings.database)  # votes are written there: say so now, not at the first vote
    built = ensure_demo(db, media, settings)
    if built:
        print(f"Demo ready: {built['prompts']} prompts, {built['new_images']} images in {describe(settings.database)}")
    db.close()
    print(f"Arena on http://{settings.host}:{settings.port}  (database {describe(settings.database)}, media "
          f"{settings.media_dir})")
    serve(settings)
    return 0


def cmd_demo(args, settings) -> int:
    from arena.demo.seeding import build_demo, load_demo_bundle
    from datamodel.renditions import Renditions

    if args.regenerate:  # nothing is written unless the whole stack is there
        require("torch", "diffusers", "transformers", "open_clip", command="python -m arena demo --regenerate")
    db, media = _open(settings)
    if args.regenerate:  # the generators and metric scorers (torch): what python -m tools.demo_bundle ships
        built = build_demo(db, media, settings, progress=True)
    else:
        built = load_demo_bundle(db, media, renditions=Renditions.from_settings(media, settings))
    print(f"Demo: {built['prompts']} prompts ({built['new_prompts']} new), {built['new_images']} new images.")
    return 0


def cmd_import_images(args, settings) -> int:
    from arena.importer import import_images
    from datamodel.renditions import Renditions

    db, media = _open(settings)
    result = import_images(db, media, args.folder, args.prompts, suite=args.suite, variant=args.variant,
                           renditions=Renditions.from_settings(media, settings))
    print(f"Imported {result.images} images ({result.new_images} new) of {result.models} models "
          f"for {result.prompts} prompts into suite {args.suite!r}.")
    return 0


def cmd_import_votes(args, settings) -> int:
    from arena.vote_import import import_votes
    from datamodel.renditions import Renditions

    if args.remove is not None:
        return _remove_import(args, settings)
    if args.file is None or args.format is None:
        raise ValueError("import-votes needs the vote log and its format (import-votes FILE --format F), or "
                         "--remove ID to undo an import.")
    db, media = _open(settings)
    result = import_votes(db, args.file, args.format, source=args.source, aliases=args.aliases,
                          progress=not args.quiet, invalid=args.invalid,
                          preset="" if args.preset == "none" else args.preset, media=media,
                          renditions=Renditions.from_settings(media, settings), images=not args.no_images,
                          max_new_models=args.max_new_models)
    print(result.summary())
    return 0


def _remove_import(args, settings) -> int:
    from datamodel.imported_votes import remove_import

    if args.file is not None:
        raise ValueError("import-votes --remove ID takes no file: it undoes the import numbered ID.")
    db, _ = _open(settings)
    gone = remove_import(db, args.remove)
    record, models = gone.record, gone.models
    print(f"Removed import #{record.id} ({record.file} into source {record.source!r}): {gone.votes} votes"
          + (f", {gone.images} images only its votes showed" if gone.images else "")
          + (f", and {len(models)} models only it named: {', '.join(models)}." if models else "."))
    return 0


def cmd_renditions(args, settings) -> int:
    from datamodel.renditions import Renditions

    db, media = _open(settings)
    renditions = Renditions.from_settings(media, settings)
    report = renditions.render_missing(db, retry_unshowable=True, verify=True, progress=lambda done, total: print(
        f"\r{done} of {total} images", end="", file=sys.stderr))
    print(f"{report.rendered} images recorded as rendered for {renditions.spec.key} ({report.made} renditions made "
          f"now, the others were there); {report.unshowable} cannot be shown (their originals cannot be read).")
    return 0


def cmd_withheld(args, settings) -> int:
    db, _ = _open(settings)
    if args.release:
        print(f"{release_withheld(db, 'published')} published images released: battles draw them again.")
        return 0
    withheld = withheld_images(db)
    for reason, count in sorted(withheld.items()):
        print(f"{count} images withheld from battles: {reason}")
    if not withheld:
        print("No image is withheld from battles.")
    return 0


def cmd_export(args, settings) -> int:
    from datamodel.vote_table import export_votes

    db, media = _open(settings)
    before = withheld_images(db).get("published", 0)
    rows = export_votes(db, args.path, args.format, media=media, keep_in_battles=args.keep_in_battles)
    print(f"Wrote {rows} votes to {args.path}")
    if withheld := withheld_images(db).get("published", 0) - before:
        print(f"{withheld} images are now published with their model names and withheld from battles (anyone with "
              "the export could name them before the vote); `python -m arena withheld --release` draws them again.")
    if args.push_to:
        if args.format != "hf":
            raise ValueError("--push-to uploads a Hugging Face dataset: add --format hf.")
        from datamodel.hf_export import push_to_hub

        print(f"Pushed to {push_to_hub(args.path, args.push_to)}")
    return 0


def cmd_backup(args, settings) -> int:
    from datamodel.backup import BackupError, backup_database

    if is_postgres_url(settings.database):
        raise BackupError(f"The database is PostgreSQL ({describe(settings.database)}): back it up with pg_dump "
                          "(docs/deploying-postgresql.md, Backups); python -m arena backup copies a SQLite file.")
    copied = backup_database(settings.database, args.dest, overwrite=args.overwrite)
    print(f"Backed up {settings.database} to {args.dest}: {copied.votes} votes, integrity {copied.integrity}, "
          f"{copied.seconds:.1f} s")
    return 0


def cmd_migrate_db(args, settings) -> int:
    from datamodel.migrate_db import migrate_database

    source = args.source or (settings.db_path if is_postgres_url(settings.database) else settings.database)
    done = migrate_database(source, args.to, replace=args.replace, progress=lambda line: print("  copied " + line))
    rows = sum(done.tables.values())
    print(f"Copied {source} to {done.target}: {len(done.tables)} tables, {rows} rows, in {done.seconds:.1f} s"
          + (" (what the target held was replaced)" if done.replaced else ""))
    print("Verified: every table's row count equals the source's; "
          + "; ".join(f"{table} SHA-256 {digest[:16]}… on both sides" for table, digest in done.checksums.items()))
    print(f"Serve it with ARENA_DATABASE_URL={done.target} and every replica's ARENA_MEDIA_DIR on the same folder "
          f"as now ({settings.media_dir}).")
    return 0


def cmd_leaderboard(args, settings) -> int:
    from arena.leaderboard.compute import leaderboard_options
    from arena.leaderboard.service import compute_snapshot, data_version, keeps_history, options_key, stored_snapshot

    db, _ = _open(settings)
    protocol = args.protocol
    if args.preset:  # a published preset names its rating protocol; --protocol still wins
        from core.presets import check_suite, get_preset

        preset = get_preset(args.preset)
        check_suite(preset, args.suite)
        protocol = protocol or preset.get("rating.protocol", "arena")
    options = leaderboard_options(
        settings,
        suite=args.suite, subset=args.subset, variant=args.variant, category=args.category, voter=args.voter,
        judge=args.judge, rounds=args.rounds, tie_policy=args.tie_policy, include_excluded=args.include_excluded,
        protocol=protocol, anchor=args.anchor, source=args.source, anonymous_only=args.anonymous_only or None,
        intervals=args.intervals, mode=args.mode, order=args.order, min_votes=args.min_votes,
        provisional_votes=args.provisional_votes,
    )
    if args.history or args.as_of or args.rebuild_history:
        return _leaderboard_over_time(args, settings, db, options)
    snapshot = None if args.fresh else stored_snapshot(db, options_key(options))
    if snapshot is not None and args.json and "json" not in snapshot.view:  # stored before the JSON was kept
        snapshot = None
    if snapshot is None:
        kept = keeps_history(options, leaderboard_options(settings))  # the server's own boards only
        snapshot = compute_snapshot(db, options, settings.leaderboard_views,
                                    settings.leaderboard_history_days if kept else 0, figures=False)
        note = f"(computed now in {snapshot.seconds:.1f} s)"
    else:
        changed = snapshot.data_version != data_version(db)
        note = (f"(snapshot computed {snapshot.age():.0f} s ago in {snapshot.seconds:.1f} s"
                + ("; the data changed since: pass --fresh to recompute)" if changed else "; nothing changed since)"))
    if args.audit:
        return _print_audit(db, snapshot.view["json"], options, as_json=args.json)
    if args.json:
        print(json.dumps(snapshot.view["json"], indent=1, ensure_ascii=False))
        print(note, file=sys.stderr)
    else:
        print(note)
        print(snapshot.view["text"])
    return 0


def _print_audit(db, board: dict, options, as_json: bool) -> int:
    """``leaderboard --audit``: the robustness audit's line and every vote it would drop, with its voter."""
    from arena.leaderboard.fits import audit_votes

    audit = board.get("robustness")
    if not audit:
        why = ("the human + judge board is not audited" if board.get("mode") == "ppi" else
               "no model is ranked yet, or the protocol is not a converged Bradley–Terry fit (arena, lmarena-2025)")
        print(f"No robustness audit for this board: {why}.", file=sys.stderr)
        return 1
    filters = {key: getattr(options, key) for key in ("suite", "subset", "variant", "category", "voter")}
    votes = audit_votes(db, audit, {**filters, "source": options.source, "anonymous_only": options.anonymous_only,
                                    "include_excluded": options.include_excluded, "until": options.until})
    if as_json:
        print(json.dumps({**audit, "votes": json.loads(votes.to_json(orient="records"))}, indent=1,
                         ensure_ascii=False))
        return 0
    print(board.get("robustness_text", ""))
    for place in audit["places"]:
        listed = votes[votes["place"] == place["place"]]
        if place["votes"] is None:
            print(f"\n#{place['place']} {place['model']}: no removal along the search changes it.")
            continue
        print(f"\n#{place['place']} {place['model']}: {place['votes']} votes (influence-function estimate "
              f"{place['approximate']}); then #{place['place']} is {place['successor']}. Votes (the newest of each "
              f"kind; {listed['voter'].nunique()} voters):")
        print(listed.drop(columns=["place", "model"]).to_string(index=False))
    return 0


def _leaderboard_over_time(args, settings, db, options) -> int:
    """``leaderboard --rebuild-history DAYS``, ``--history`` and ``--as-of DAY``: the boards kept by day."""
    import dataclasses

    from arena.leaderboard.service import compute_snapshot, options_key, rebuild_history
    from arena.leaderboard.view import history_text
    from datamodel.rating_history import board_as_of, end_of_day, history

    key = options_key(options)
    if args.rebuild_history:
        made = rebuild_history(db, options, args.rebuild_history, history_days=settings.leaderboard_history_days,
                               keep=settings.leaderboard_views)
        print(f"Kept {len(made)} past day(s) from the votes cast by then: {', '.join(made) or 'none missing'}.")
    if args.as_of:
        if args.fresh:  # from the votes cast by the end of that day, not kept
            dated = dataclasses.replace(options, until=end_of_day(args.as_of))
            snapshot = compute_snapshot(db, dated, figures=False)
            print(json.dumps(snapshot.view["json"], indent=1, ensure_ascii=False) if args.json
                  else f"(computed now from the votes cast by the end of {args.as_of} UTC)\n{snapshot.view['text']}")
            return 0
        kept = board_as_of(db, key, args.as_of)
        if kept is None:
            raise LookupError(f"No board kept for these filters on or before {args.as_of}: add --fresh to compute it "
                              "from the votes cast by then, or --rebuild-history DAYS to keep past days.")
        if args.json:
            print(json.dumps({"day": kept.day, "computed_at": kept.computed_at, **kept.board}, indent=1,
                             ensure_ascii=False))
        else:
            from arena.leaderboard.view import json_frame, kept_table

            print(f"The board as kept on {kept.day} (UTC):")
            print(json_frame(kept_table(kept.board)).to_string(index=False, na_rep=""))
        return 0
    if args.history:
        days = history(db, key)
        if args.json:
            from arena.leaderboard.view import history_json

            print(json.dumps(history_json(db, key), indent=1, ensure_ascii=False))
        else:
            print(history_text(days))
    return 0


def cmd_presets(args, settings) -> int:
    from core.presets import PRESETS, get_preset, preset_markdown

    if args.name is None:
        for preset in PRESETS.values():
            where = f"suite {preset.suite}" if preset.suite else "any suite"
            print(f"{preset.name:20} {where:18} {preset.title}")
        return 0
    print(preset_markdown(get_preset(args.name)))
    return 0


def cmd_report(args, settings) -> int:
    from pathlib import Path

    from arena.reports import make_report, render
    from core.presets import get_preset

    db, _ = _open(settings)
    report = make_report(db, args.benchmark, preset=get_preset(args.preset) if args.preset else None,
                         settings=settings, compare_published=args.compare_published, source=args.source,
                         figures=None if args.no_figures else args.figures, variant=args.variant)
    form = "json" if args.json else args.format
    text = render(report, form)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"Wrote {report.title} ({len(report.tables)} tables, {form}) to {args.output}")
    else:
        print(text, end="")
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
    images.add_argument("--prompts", help="CSV or JSONL with key, text (+ subset, variant, role, metadata); without "
                        "it, files are named after the item keys of --suite's prompts already in the database")
    images.add_argument("--suite", default="imported", help="suite of the prompts (default: imported)")
    images.add_argument("--variant", help="without --prompts: only this variant's prompts (default: every variant of "
                        "each item)")
    images.set_defaults(handler=cmd_import_images)

    votes = commands.add_parser("import-votes", help="import another arena's votes (FastChat log, taxonomy "
                                                     "labels, CSV); see docs/importing-votes.md")
    votes.add_argument("file", nargs="?", help="the vote log: a FastChat clean_battle JSON (array or lines), the "
                                               "taxonomy paper's labelled battles (CSV) or a CSV of votes")
    votes.add_argument("--format",
                       choices=["fastchat", "taxonomy", "csv", "genai-bench", "pick-a-pic"],
                       help="fastchat: model_a, model_b, winner, judge, anony, tstamp records; taxonomy: [id,] subset, "
                            "wordnet_id, core_synset, model_a, model_b, result_{human,gpt}_{def,nodef} (codes 0-3); "
                            "csv: model_a, model_b, outcome, voter, time (+ id, voter_kind, anonymous, prompt, suite, "
                            "subset, variant, item_key); genai-bench: GenAI-Bench's image_generation parquet (prompt, "
                            "left_model, left_image, right_model, right_image, vote_type); pick-a-pic: Pick-a-Pic v2 "
                            "parquet (caption, jpg_0, jpg_1, model_0, model_1, label_0, label_1, user_id, ...)")
    votes.add_argument("--source", help="the name the votes are filed under, which the leaderboard's --source "
                                        "picks (default: the format's name)")
    votes.add_argument("--aliases", help="CSV (columns alias,model) or JSON object mapping the file's model names "
                                         "onto the arena's models (it wins over the preset's map)")
    votes.add_argument("--preset", metavar="NAME",
                       help="map model names with this published preset's alias map (default: the format's preset, "
                            "taxonomy-paper for --format taxonomy: the authors' hub-folder names onto the registry's "
                            "models); none: no preset map")
    votes.add_argument("--invalid", choices=["keep", "skip", "refuse"],
                       help="an anomalous record (a model against itself, ...): keep it, flagged with its reason; skip "
                            "it; or refuse the file (default: what the format's source did: keep for fastchat and "
                            "taxonomy, refuse for csv); the summary counts each reason")
    votes.add_argument("--no-images", action="store_true",
                       help="genai-bench, pick-a-pic: import the votes only, not the images the file carries (by "
                            "default they are imported and rendered, so the battles can be shown and judged)")
    from arena.vote_import import MAX_NEW_MODELS

    votes.add_argument("--max-new-models", type=int, default=MAX_NEW_MODELS, metavar="N",
                       help=f"refuse the file if more than N of its model names are new to the arena (default "
                            f"{MAX_NEW_MODELS}; map names onto the arena's models with --aliases)")
    votes.add_argument("--remove", type=int, metavar="ID", help="undo import number ID (the summary names it): its "
                       "votes, and the models only it named")
    votes.add_argument("--quiet", action="store_true", help="no progress bar")
    votes.set_defaults(handler=cmd_import_votes)
    renditions = commands.add_parser(
        "renditions", help="make the display renditions the settings ask for (after changing ARENA_DISPLAY_*, before "
                           "restarting the server: it renders what is missing before it serves)")
    renditions.set_defaults(handler=cmd_renditions)

    export = commands.add_parser("export", help="export the votes (CSV, JSONL, Parquet, FastChat, Hugging Face)")
    export.add_argument("path", help="output file (a folder for --format hf); the suffix picks csv, jsonl or parquet")
    export.add_argument("--format", choices=list(EXPORTERS),
                        help="output format (default: from the suffix); fastchat: FastChat's battle JSON; "
                             "hf: a Hugging Face dataset folder with the images")
    export.add_argument("--keep-in-battles", action="store_true",
                        help="with --format hf: keep drawing the exported images into battles (by default images "
                             "published with their model names are withheld: anyone with the export could name them)")
    export.add_argument("--push-to", metavar="REPO_ID",
                        help="with --format hf: upload the folder to this Hugging Face dataset (token: HF_TOKEN)")
    export.set_defaults(handler=cmd_export)

    withheld = commands.add_parser("withheld", help="count the images withheld from battles (published with their "
                                                    "model names by an hf export)")
    withheld.add_argument("--release", action="store_true", help="draw the published images into battles again")
    withheld.set_defaults(handler=cmd_withheld)

    backup = commands.add_parser("backup", help="copy the database consistently while the app serves")
    backup.add_argument("dest", help="the copy's file path (must not exist unless --overwrite)")
    backup.add_argument("--overwrite", action="store_true", help="replace an existing file at DEST")
    backup.set_defaults(handler=cmd_backup)

    migrate = commands.add_parser("migrate-db", help="copy this SQLite arena into a PostgreSQL database, verified "
                                  "(row counts, vote checksums)")
    migrate.add_argument("--to", required=True, metavar="URL",
                         help="the PostgreSQL database, postgresql://user@host:port/database (created or migrated)")
    migrate.add_argument("--from", dest="source", metavar="FILE",
                         help="the SQLite arena to copy (default: the db_path setting, ARENA_DB)")
    migrate.add_argument("--replace", action="store_true",
                         help="delete what the target already holds first (refused otherwise)")
    migrate.set_defaults(handler=cmd_migrate_db)

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
    board.add_argument("--protocol", choices=list(PROTOCOLS),
                       help="rating protocol (default: arena, this arena's fit); fastchat-2023, fastchat-2024, "
                            "taxonomy-paper, online-elo and lmarena-2025 reproduce published boards "
                            "(docs/methods/rating-protocols.md)")
    board.add_argument("--intervals", choices=["bootstrap", "sandwich"],
                       help="the arena protocol's 95%% intervals: bootstrap refits or the closed-form sandwich "
                            "(default: the intervals setting)")
    board.add_argument("--mode", choices=["human", "ppi"],
                       help="the human column from human votes only (default), or from human and judge votes with "
                            "the judge's bias corrected by prediction-powered inference (ppi; arena protocol)")
    board.add_argument("--order", choices=["rating", "lower"],
                       help="order the ranked models by rating or by the lower bound of their 95%% interval "
                            "(default: the leaderboard_order setting)")
    board.add_argument("--min-votes", type=int, help="votes in the fit a model needs to be ranked (default: the "
                                                      "min_votes setting)")
    board.add_argument("--provisional-votes", type=int,
                       help="below this many votes in the fit a ranked model is provisional (default: the setting)")
    board.add_argument("--audit", action="store_true",
                       help="list the votes whose removal would change each top place, with their voters "
                            "(the robustness audit; for the maintainer)")
    board.add_argument("--anchor", help="MODEL=RATING pins a model (protocols with an anchor); none: no anchor "
                                        "(default: the protocol's own)")
    board.add_argument("--source", help="only these votes: arena (this arena's own) or an import source "
                                        "(default: all)")
    board.add_argument("--anonymous-only", action="store_true",
                       help="only votes cast without the model names shown (FastChat's published boards)")
    board.add_argument("--json", action="store_true",
                       help='print the table as JSON: {"protocol": ..., "models": [{"model", "rating", "lower", '
                            '"upper", "votes", ...}]}')
    board.add_argument("--preset", metavar="NAME",
                       help="rate with this published preset's rating protocol (e.g. taxonomy-paper: the "
                            "paper's ELO, truncated, 'score (+up/-down)'); --protocol, if given, wins")
    board.add_argument("--fresh", action="store_true",
                       help="compute it now rather than print the latest snapshot (the server's, or an earlier run's); "
                            "with --as-of: from the votes cast by the end of that day")
    board.add_argument("--as-of", metavar="YYYY-MM-DD",
                       help="the board kept for these filters on that day (UTC), or the latest day before it")
    board.add_argument("--history", action="store_true",
                       help="each model's rating on every day a board is kept for these filters (with --json: the "
                            "boards)")
    board.add_argument("--rebuild-history", type=int, metavar="DAYS",
                       help="keep a board for each of the last DAYS days that has none, computed from the votes cast "
                            "by then")
    board.set_defaults(handler=cmd_leaderboard)

    presets = commands.add_parser("presets", help="list the published-protocol presets, or print one's choices")
    presets.add_argument("name", nargs="?", help="a preset to print with every choice and its source")
    presets.set_defaults(handler=cmd_presets)

    report = commands.add_parser("report", help="a benchmark paper's tables filled from the database")
    report.add_argument("benchmark", help="the report, e.g. taxonomy")
    report.add_argument("--preset", metavar="NAME",
                        help="the protocol the tables follow (default: the report's published preset)")
    report.add_argument("--format", choices=["markdown", "csv", "latex", "json"], default="markdown",
                        help="output format (default markdown)")
    report.add_argument("--json", action="store_true", help="print the report as JSON (the same as --format json)")
    report.add_argument("--source", help="rate only these votes, as the leaderboard's --source: arena (this arena's "
                                         "own) or an import source (default: every vote, imported ones included)")
    report.add_argument("--variant", help="the prompt variant of the tables whose variant the paper leaves open "
                                          "(taxonomy: the CLIP Tables 11-15, with_definition or without_definition; "
                                          "default: the preset's report.variant)")
    report.add_argument("--compare-published", action="store_true",
                        help="print the paper's own value beside each cell")
    report.add_argument("--output", "-o", help="write to this file instead of printing")
    report.add_argument("--figures", default="figures", metavar="DIR",
                        help="write each figure's plot (an HTML page) into this folder; the report prints the "
                             "figure's data as a table and the plot's path under it (default: figures)")
    report.add_argument("--no-figures", action="store_true", help="print the figures' tables, write no plot file")
    report.set_defaults(handler=cmd_report)

    settings = commands.add_parser("settings", help="list every setting, its environment variable and default")
    settings.add_argument("--markdown", action="store_true", help="as a Markdown table (docs/reference/settings.md)")
    settings.set_defaults(handler=cmd_settings)

    try:
        from arena.suite_commands import add_commands
    except ImportError:
        pass
    else:
        add_commands(commands, load_settings)
    from arena.plan_commands import add_commands as add_plan_commands
    from arena.rating_commands import add_commands as add_rating_commands

    add_rating_commands(commands)
    add_plan_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from core.presets import given_options

    parser = build_parser()
    args = parser.parse_args(argv)
    args.given = given_options(parser, sys.argv[1:] if argv is None else argv)  # the options a preset must not set
    try:
        settings = load_settings(config_file=args.config)
        return args.handler(args, settings)
    except (SettingsError, ValueError, LookupError, FileNotFoundError, ConnectionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:  # a command of the full install run in the web install: say how to add it
        return exit_status(error, f"python -m arena {args.command}")


if __name__ == "__main__":
    sys.exit(main())
