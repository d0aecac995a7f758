"""``python -m arena suites list|build|import|show``: the prompt suites on the command line.

:func:`add_commands` adds the ``suites`` command to the arena's parser; each leaf sets ``handler(args, settings)``,
which parses nothing more, calls one library function and prints counts per suite and subset. The ``build`` and
``import`` sub-commands are those the suites declare (:mod:`suites.registry`), plus ``import prompts`` for any
suite's prompts in the standard columns. It lives on the top floor because a predicted-concepts import may ask the
judge model for definitions (:mod:`judges.definitions`). :func:`main` runs the same commands on their own
(``python -m arena.suite_commands ...``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from datamodel.catalog import CatalogError, PromptImport, suites_summary
from judges import definitions
from suites import generic, registry
from suites.common import SuiteError, prompts_of, suites_of
from suites.registry import Builder, ImportContext, ImportFormat


def _open(settings):
    from datamodel.connection import connect

    return connect(settings.database, synchronous=settings.sqlite_synchronous)


def _print_counts(db, result) -> None:
    print(f"{len(result.ids)} prompts written ({result.inserted} new, {result.updated} updated, "
          f"{result.unchanged} unchanged)")
    for note in result.notes:
        print(f"note: {note}")
    suites = set(suites_of(db, result.ids))
    _print_summary([row for row in suites_summary(db) if row["suite"] in suites])


def _print_summary(rows: list[dict]) -> None:
    if not rows:
        print("no prompts yet. Build or import a suite: python -m arena suites build easy")
        return
    print(f"{'suite':12} {'subset':18} {'variant':20} {'prompts':>8} {'images':>8} {'models':>7}")
    for row in rows:
        print(f"{row['suite']:12} {row['subset'] or '-':18} {row['variant'] or '-':20} "
              f"{row['prompts']:8d} {row['images']:8d} {row['models']:7d}")


def cmd_list(args, settings) -> int:
    db = _open(settings)
    rows = suites_summary(db)
    _print_summary(rows)
    present = {row["suite"] for row in rows}
    for name, suite in registry.SUITES.items():
        if suite.notes is not None and name in present:
            for line in suite.notes(db):
                print(f"note: {line}")
    return 0


def cmd_show(args, settings) -> int:
    rows = prompts_of(_open(settings), args.suite, subset=args.subset, variant=args.variant, limit=args.limit)
    if not rows:
        print(f"no prompts in suite {args.suite!r}{' subset ' + repr(args.subset) if args.subset else ''}. "
              "See python -m arena suites list")
    for row in rows:
        tag = "/".join(part for part in (row["subset"], row["variant"], row["role"]) if part)
        print(f"{row['item_key']}  [{tag}]  {row['text']}")
    return 0


def _builder(builder: Builder) -> Callable:
    def handler(args, settings) -> int:
        db = _open(settings)
        context = (ImportContext(settings=settings, definer=_definer(settings), asker=_asker(settings))
                   if builder.with_context else settings)
        result, line = builder.run(db, args, context)
        print(line)
        if result is not None:
            _print_counts(db, result)
        return 0

    return handler


def _ids(text: str | None, option: str) -> list[int]:
    try:
        return [int(part) for part in (text or "").replace(" ", "").split(",") if part]
    except ValueError:
        raise SuiteError(f"{option} takes candidate ids separated by commas (12,13,20), not {text!r}.") from None


def cmd_review(args, settings) -> int:
    """List a suite's prompt candidates, or accept or reject some (:mod:`datamodel.prompt_candidates`)."""
    import getpass

    from datamodel.prompt_candidates import candidate_counts, candidates, decide

    db = _open(settings)
    accept, reject = _ids(args.accept, "--accept"), _ids(args.reject, "--reject")
    if args.accept_all:
        accept += [row["id"] for row in candidates(db, args.suite, status="pending")]
    reviewer = args.reviewer or getpass.getuser()
    for ids, accepting in ((accept, True), (reject, False)):
        if ids:
            done = decide(db, ids, accept=accepting, reviewer=reviewer, reason=args.reason or "")
            print(f"{'accepted' if accepting else 'rejected'} {done.accepted + done.rejected} by {reviewer}"
                  + (f" ({len(done.prompt_ids)} prompts written)" if accepting else "")
                  + (f"; {done.unchanged} already {'accepted' if accepting else 'rejected'}" if done.unchanged else ""))
    if not (accept or reject):
        rows = candidates(db, args.suite, status=args.status, limit=args.limit or None)
        for row in rows:
            meta = row["metadata"]
            tag = "/".join(str(part) for part in (row["subset"], meta.get("stratum")) if part)
            print(f"{row['id']:6d}  {row['item_key']}  [{tag}]  {row['status']}  {row['text']}")
        if not rows:
            print(f"no {args.status or ''} candidates of suite {args.suite!r}.".replace("  ", " "))
    counts = candidate_counts(db, args.suite).get(args.suite, {})
    print(f"{args.suite}: " + ", ".join(f"{counts.get(status, 0)} {status}" for status in
                                         ("pending", "accepted", "rejected")))
    return 0


def _asker(settings) -> Callable:
    """The LLM writer of a builder: the judges' engine with the settings' endpoint (:mod:`judges.prompt_writer`)."""
    def asker(db, model=None):
        from judges.client import EngineConfig
        from judges.prompt_writer import judge_asker

        return judge_asker(db, EngineConfig.from_settings(settings), model=model)

    return asker


def _definer(settings) -> Callable:
    """Who writes missing definitions on import: the judge model, when an endpoint is configured."""
    def definer(db):
        if not definitions.can_define(settings):
            return None
        from judges.client import EngineConfig

        return definitions.judge_definer(db, EngineConfig.from_settings(settings))

    return definer


def _importer(run: Callable) -> Callable:
    def handler(args, settings) -> int:
        db = _open(settings)
        _print_counts(db, run(db, args, ImportContext(settings=settings, definer=_definer(settings))))
        return 0

    return handler


def _import_prompt_list(db, args, context) -> PromptImport:
    return generic.import_prompt_list(db, args.path, suite=args.suite)


def _prompt_list_arguments(parser) -> None:
    parser.add_argument("--suite", help="suite of rows without a suite column")


# any suite's prompts, in the standard columns: the one import that belongs to no suite
PROMPT_LIST = ImportFormat(
    "prompts", "any prompt list (CSV/JSONL: key, text[, suite, subset, variant, role, metadata])",
    run=_import_prompt_list, add_arguments=_prompt_list_arguments)


def add_commands(subparsers, settings_loader: Callable | None = None) -> None:
    """Add ``suites`` and its subcommands to an argparse subparsers object (``settings_loader`` is unused:
    handlers receive the settings the caller loaded)."""
    suites = subparsers.add_parser("suites", help="prompt suites: list, build, import, review, show",
                                   description="Build and import the benchmark prompt suites (T1-T5).")
    commands = suites.add_subparsers(dest="suites_command", required=True, metavar="SUITES_COMMAND")

    listing = commands.add_parser("list", help="prompt, image and model counts per suite, subset and variant")
    listing.set_defaults(handler=cmd_list)

    show = commands.add_parser("show", help="print a suite's prompts")
    show.add_argument("suite", help="suite name, e.g. taxonomy (see suites list)")
    show.add_argument("--subset", help="only this subset, e.g. Easy")
    show.add_argument("--variant", help="only this variant, e.g. with_definition")
    show.add_argument("--limit", type=int, default=20, help="at most this many prompts (default 20; 0: all)")
    show.set_defaults(handler=cmd_show)

    build = commands.add_parser("build", help="build a suite from WordNet or word lists")
    builders = build.add_subparsers(dest="builder", required=True, metavar="BUILDER")
    for name, builder in registry.builders().items():
        parser = builders.add_parser(name, help=builder.help)
        builder.add_arguments(parser)
        parser.set_defaults(handler=_builder(builder))

    review = commands.add_parser(
        "review", help="the prompt candidates an LLM wrote: list them, accept them (they become prompts) or reject "
                       "them")
    review.add_argument("suite", help="the suite of the candidates, e.g. saneval")
    review.add_argument("--status", choices=["pending", "accepted", "rejected"], default="pending",
                        help="list the candidates with this status (default pending)")
    review.add_argument("--limit", type=int, default=20, help="list at most this many (default 20; 0: all)")
    review.add_argument("--accept", metavar="IDS", help="accept these candidates (ids separated by commas)")
    review.add_argument("--accept-all", action="store_true", help="accept every pending candidate of the suite")
    review.add_argument("--reject", metavar="IDS", help="reject these candidates (ids separated by commas)")
    review.add_argument("--reason", help="why (kept with the decision)")
    review.add_argument("--reviewer", help="who decides (default: the login name)")
    review.set_defaults(handler=cmd_review)

    imports = commands.add_parser("import", help="import a suite file (nothing is written if a row is bad)")
    importers = imports.add_subparsers(dest="importer", required=True, metavar="FORMAT")
    for name, form in {**registry.import_formats(), PROMPT_LIST.name: PROMPT_LIST}.items():
        parser = importers.add_parser(name, help=form.help)
        parser.add_argument("path", type=Path, help="the file to import")
        if form.add_arguments is not None:
            form.add_arguments(parser)
        parser.set_defaults(handler=_importer(form.run))


def main(argv: list[str] | None = None, settings_loader: Callable | None = None) -> int:
    """Run ``suites ...`` without the rest of the arena CLI: ``main(["suites", "list"])``."""
    from core.presets import PresetError, given_options
    from core.registry import RegistryError
    from core.settings import SettingsError, load_settings
    from datamodel.prompt_candidates import ReviewError

    parser = argparse.ArgumentParser(prog="python -m arena.suite_commands")
    add_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    args.given = given_options(parser, sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args, (settings_loader or load_settings)())
    except (SuiteError, CatalogError, SettingsError, ReviewError, PresetError, RegistryError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
