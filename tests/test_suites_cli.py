"""``python -m arena suites ...``: every command has help, imports print counts per suite and subset, errors exit 2."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from support.shared import HOLLINGER, SEMVARBENCH, shared_file

from arena.suite_commands import add_commands

DATA = Path(__file__).parent / "data" / "suites"


@pytest.fixture
def run(suites_cli):
    """conftest's ``suites_cli`` under this module's older name."""
    return suites_cli


def _leaf_parsers(parser: argparse.ArgumentParser, path=()):
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        yield path, parser
    for action in actions:
        for name, child in action.choices.items():
            yield from _leaf_parsers(child, (*path, name))


def test_every_suites_command_has_help():
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers(dest="command"), None)
    leaves = dict(_leaf_parsers(parser))
    assert {" ".join(path) for path in leaves} == {
        "suites list", "suites show", "suites build easy", "suites build random", "suites build saneval",
        "suites review",
        *(f"suites import {name}" for name in ("predicted", "taxonomy-bench", "commonsense", "semvarbench", "saneval",
                                               "paraphrase", "prompts")),
    }
    for path, leaf in leaves.items():
        assert leaf.get_default("handler"), path
        assert all(action.help for action in leaf._actions), (path, [a.dest for a in leaf._actions if not a.help])


def test_imports_print_counts_per_suite_and_subset(run):
    code, out, _ = run("import", "paraphrase", shared_file(HOLLINGER))
    assert code == 0
    assert "400 prompts written (400 new, 0 updated, 0 unchanged)" in out
    assert "paraphrase   abstract           -                         200        0       0" in out
    code, out, _ = run("import", "semvarbench", shared_file(SEMVARBENCH))
    assert code == 0 and "semvarbench  -                  -                        2052" in out
    code, out, _ = run("import", "commonsense", Path("suites/data/commonsense_sample.json").resolve())
    assert code == 0 and "commonsense  Physical Laws      -                          12" in out
    assert "paraphrase" not in out  # only the imported suite's rows
    code, out, _ = run("import", "predicted", DATA / "predicted.csv")
    assert code == 0 and "taxonomy     P-Mix              without_definition          1" in out
    code, out, _ = run("import", "saneval", DATA / "saneval_external.csv")
    assert code == 0 and "saneval      numeracy" in out
    code, out, _ = run("import", "prompts", DATA / "prompts.jsonl")
    assert code == 0 and "kites        numeracy           -                           1" in out
    code, out, _ = run("build", "saneval", "--per-category", "10", "--categories", "color,spatial")
    assert code == 0 and "SANEval (seed 0; preset arena (project defaults)): 20 prompts in 2 categories" in out
    code, out, _ = run("list")
    assert [line.split()[0] for line in out.splitlines()[1:]] == [
        "commonsense"] * 5 + ["kites"] * 2 + ["paraphrase"] * 2 + ["saneval"] * 3 + ["semvarbench"] + ["taxonomy"] * 8
    code, out, _ = run("import", "paraphrase", shared_file(HOLLINGER))
    assert "400 prompts written (0 new, 0 updated, 400 unchanged)" in out


def test_show_prints_a_suites_prompts(run):
    run("import", "semvarbench", shared_file(SEMVARBENCH))
    code, out, _ = run("show", "semvarbench", "--limit", "3")
    assert code == 0 and out.splitlines() == [
        "0_224_341  [anchor]  The firefighter rescues the family from the burning building.",
        "0_224_341  [paraphrase]  The family is rescued by the firefighter from the burning building.",
        "0_224_341  [permutation]  The family rescues the firefighter from the burning building.",
    ]
    code, out, _ = run("show", "taxonomy", "--subset", "Easy")
    assert code == 0 and "no prompts in suite 'taxonomy' subset 'Easy'. See python -m arena suites list" in out
    code, out, _ = run("list")
    assert "semvarbench" in out
    assert run("show", "semvarbench", "--limit", "0")[1].count("\n") == 3 * 684


def test_errors_exit_2_with_the_file_and_line(run, tmp_path, monkeypatch):
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\tc\td\ne\tf\n")
    code, out, err = run("import", "semvarbench", bad)
    assert code == 2 and err.startswith(f"error: {bad}:2: malformed row with 2 fields.")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "p.csv").write_text("concept\nhusky\n")
    code, _, err = run("import", "predicted", tmp_path / "p.csv", "--subset", "P-Hypo")
    assert code == 2 and "p.csv:2: no definition for 'husky' (1 concepts lack one). Set OPENAI_API_KEY or " \
                         "ARENA_JUDGE_BASE_URL so the judge model writes them, or add a definition column." in err
    assert run("list")[1].startswith("no prompts yet.")


def test_the_arena_cli_runs_the_suites_commands(tmp_path, monkeypatch, capsys):
    from arena.commands import main as arena_main

    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.db"))
    monkeypatch.chdir(tmp_path)
    assert arena_main(["suites", "import", "prompts", str(DATA / "prompts.csv"), "--suite", "mine"]) == 0
    assert "mine         animals            -                           3" in capsys.readouterr().out
