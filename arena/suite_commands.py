"""``python -m arena suites list|build|import|show``: the prompt suites on the command line.

:func:`add_commands` adds the ``suites`` command to the arena's parser; each leaf sets ``handler(args, settings)``,
which parses nothing more, calls one library function and prints counts per suite and subset. :func:`main` runs the
same commands on their own (``python -m arena.suite_commands ...``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from datamodel.catalog import CatalogError, suites_summary
from judges import definitions
from suites import commonsense, generic, paraphrase, saneval, semvarbench, taxonomy
from suites.common import SuiteError, prompts_of, suites_of


def _open(settings):
    from datamodel.connection import connect

    return connect(settings.db_path, synchronous=settings.sqlite_synchronous)


def _wordnet(args, settings):
    from suites.wordnet import load_wordnet, wordnet_dir_from

    return load_wordnet(settings.cache_dir, args.wordnet_dir or wordnet_dir_from(settings))


def _print_counts(db, result) -> None:
    print(f"{len(result.ids)} prompts written ({result.inserted} new, {result.updated} updated, "
          f"{result.unchanged} unchanged)")
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
    _print_summary(suites_summary(_open(settings)))
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


def cmd_build_easy(args, settings) -> int:
    wn = _wordnet(args, settings)
    roots = taxonomy.read_roots(wn, args.roots_file) if args.roots_file else (
        [root.strip() for root in args.roots.split(",") if root.strip()] if args.roots else taxonomy.EASY_ROOTS)
    db = _open(settings)
    concepts, result = taxonomy.build_easy(db, wn, roots)
    print(f"Easy: {len(roots)} root synsets, {len(concepts)} entities "
          f"(the paper had {taxonomy.PUBLISHED_EASY_ENTITIES}), 2 prompts each")
    _print_counts(db, result)
    return 0


def cmd_build_random(args, settings) -> int:
    wn = _wordnet(args, settings)
    counts = {"Hypernymy": args.hypernymy, "Hyponymy": args.hyponymy, "Synset-Mixing": args.mixing}
    db = _open(settings)
    concepts, result = taxonomy.build_random_split(db, wn, counts, seed=args.seed)
    made = {subset: sum(c.subset == subset for c in concepts) for subset in taxonomy.SPLIT_SUBSETS}
    published = " / ".join(str(n) for n in taxonomy.RANDOM_SPLIT_COUNTS.values())
    print(f"Random split (seed {args.seed}): " + ", ".join(f"{k} {v}" for k, v in made.items())
          + f"; {len(concepts)} nodes (published {published})")
    _print_counts(db, result)
    return 0


def cmd_build_saneval(args, settings) -> int:
    categories = [c.strip() for c in args.categories.split(",")] if args.categories else saneval.CATEGORIES
    db = _open(settings)
    specs, result = saneval.build_saneval(db, args.per_category, seed=args.seed, categories=categories)
    print(f"SANEval (seed {args.seed}): {len(specs)} prompts in {len(categories)} categories")
    _print_counts(db, result)
    return 0


def _importer(run: Callable) -> Callable:
    def handler(args, settings) -> int:
        db = _open(settings)
        _print_counts(db, run(db, args, settings))
        return 0

    return handler


IMPORTS = {  # format: (help, run(db, args, settings) -> PromptImport)
    "predicted": ("LLM-predicted taxonomy concepts (CSV/JSONL: concept, subset[, definition])",
                  lambda db, a, s: definitions.import_predicted(db, a.path, settings=s, subset=a.subset)),
    "commonsense": ("Commonsense-T2I data.json (prompt1, prompt2, description1, ...)",
                    lambda db, a, s: commonsense.import_commonsense(db, a.path)),
    "semvarbench": ("SemVarBench test_data.tsv (id, T_a, T_pv, T_pi; categories/ beside it)",
                    lambda db, a, s: semvarbench.import_semvarbench(db, a.path, a.categories)),
    "saneval": ("an external SANEval prompt list (CSV/JSONL: text, category[, key, stratum])",
                lambda db, a, s: saneval.import_saneval_list(db, a.path)),
    "paraphrase": ("paraphrase TSV (prompt_id, variation, prompt, category)",
                   lambda db, a, s: paraphrase.import_paraphrases(db, a.path)),
    "prompts": ("any prompt list (CSV/JSONL: key, text[, suite, subset, variant, role, metadata])",
                lambda db, a, s: generic.import_prompt_list(db, a.path, suite=a.suite)),
}


def add_commands(subparsers, settings_loader: Callable | None = None) -> None:
    """Add ``suites`` and its subcommands to an argparse subparsers object (``settings_loader`` is unused:
    handlers receive the settings the caller loaded)."""
    suites = subparsers.add_parser("suites", help="prompt suites: list, build, import, show",
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
    wordnet_help = "WordNet 3.0 folder (default: the wordnet_dir setting / ARENA_WORDNET_DIR, else /usr/share/wordnet)"

    easy = builders.add_parser("easy", help="taxonomy Easy subset: root synsets and their direct hyponyms")
    easy.add_argument("--roots", help="comma-separated root synset ids (default: the 22 built-in roots)")
    easy.add_argument("--roots-file", type=Path, help="file with one root synset id per line")
    easy.add_argument("--wordnet-dir", type=Path, help=wordnet_help)
    easy.set_defaults(handler=cmd_build_easy)

    rand = builders.add_parser("random", help="taxonomy random split: Hypernymy, Hyponymy, Synset-Mixing nodes")
    for flag, subset in (("--hypernymy", "Hypernymy"), ("--hyponymy", "Hyponymy"), ("--mixing", "Synset-Mixing")):
        default = taxonomy.RANDOM_SPLIT_COUNTS[subset]
        rand.add_argument(flag, type=int, default=default, help=f"{subset} nodes (default {default}, as published)")
    rand.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    rand.add_argument("--wordnet-dir", type=Path, help=wordnet_help)
    rand.set_defaults(handler=cmd_build_random)

    sane = builders.add_parser("saneval", help="scripted SANEval binding, spatial and numeracy prompts")
    sane.add_argument("--per-category", type=int, default=saneval.PUBLISHED_PER_CATEGORY,
                      help=f"prompts per category (default {saneval.PUBLISHED_PER_CATEGORY}, as published)")
    sane.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    sane.add_argument("--categories", help=f"comma-separated subset of {','.join(saneval.CATEGORIES)}")
    sane.set_defaults(handler=cmd_build_saneval)

    imports = commands.add_parser("import", help="import a suite file (nothing is written if a row is bad)")
    importers = imports.add_subparsers(dest="importer", required=True, metavar="FORMAT")
    for name, (help_text, run) in IMPORTS.items():
        parser = importers.add_parser(name, help=help_text)
        parser.add_argument("path", type=Path, help="the file to import")
        if name == "predicted":
            parser.add_argument("--subset", choices=taxonomy.PREDICTED_SUBSETS, help="subset of rows without one")
        if name == "semvarbench":
            parser.add_argument("--categories", type=Path, help="folder of <category>.tsv (default: beside the file)")
        if name == "prompts":
            parser.add_argument("--suite", help="suite of rows without a suite column")
        parser.set_defaults(handler=_importer(run))


def main(argv: list[str] | None = None, settings_loader: Callable | None = None) -> int:
    """Run ``suites ...`` without the rest of the arena CLI: ``main(["suites", "list"])``."""
    from datamodel.settings import SettingsError, load_settings

    parser = argparse.ArgumentParser(prog="python -m arena.suite_commands")
    add_commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    try:
        return args.handler(args, (settings_loader or load_settings)())
    except (SuiteError, CatalogError, SettingsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
