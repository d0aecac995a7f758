"""``python -m arena``: help for every command, and the leaderboard command's printed sections."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.votes import JUDGE, SINGLE, add_votes

from arena.commands import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, its help in the parent's list) of every subcommand, at every depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), helps.get(name)
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser()))


def test_the_command_list_covers_the_documented_commands():
    names = {path for path, _ in COMMANDS}
    assert {("serve",), ("demo",), ("import-images",), ("export",), ("leaderboard",), ("settings",)} <= names


@pytest.mark.parametrize("path,help_text", COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_command_has_help(path, help_text, capsys):
    assert help_text, f"python -m arena {' '.join(path)} has no help line in its parent's command list"
    with pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m arena {' '.join(path)}")
    assert "-h, --help" in out


@pytest.fixture
def arena_env(small_arena, monkeypatch, tmp_path):
    add_votes(small_arena)
    small_arena.db.close()
    monkeypatch.chdir(tmp_path)
    for name in list(os.environ):
        if name.startswith("ARENA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("ARENA_DB", str(small_arena.settings.db_path))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(small_arena.settings.media_dir))
    return small_arena


def test_leaderboard_prints_the_table_and_the_agreement_panel(arena_env, capsys):
    assert main(["leaderboard", "--rounds", "10"]) == 0
    out = capsys.readouterr().out
    sections = [
        "36 human votes · 24 judge votes",
        f"Judge column: {JUDGE} (18 votes, the judge with the most votes)",
        "Human rank",
        "Rank correlation with the human ELO:",
        "Position bias (share of votes; first_win_rate = A / (A + B); p: binomial test against 0.5):",
        f"Human–judge agreement ({JUDGE}), outcomes oriented to the first model by name, on 36 pairs of votes on "
        "shared battles: raw agreement 0.89, Cohen's κ",
        "Inter-annotator: 18 battles seen by several annotators (18 pairs of votes), mean pairwise agreement 0.78, "
        "Fleiss' κ",
        "Cohen's κ per pair of annotators who share the most battles:",
    ]
    positions, start = [], 0
    for section in sections:  # each in this order, after the one before
        start = out.find(section, start)
        assert start >= 0, f"{section!r} missing or out of order in:\n{out}"
        positions.append(start)
    panel = out[positions[4]:]
    bias = [line.split() for line in panel.splitlines()[1:4]]
    assert bias[0][:3] == ["voter_kind", "subset", "votes"]
    assert bias[1][:3] == ["human", "Easy", "36"] and bias[2][:3] == ["judge", "Easy", "24"]
    confusion = panel[panel.index("Cohen's κ"):].splitlines()[1:6]
    assert confusion[0].split() == ["judge", "A", "judge", "B", "judge", "tie", "judge", "both_bad"]
    # Oriented to the first model by name, which is also the better one: the judge always says A, the humans B on
    # their 4 upsets.
    assert [row.split() for row in confusion[1:3]] == [["human", "A", "32", "0", "0", "0"],
                                                        ["human", "B", "4", "0", "0", "0"]]
    assert "alice     bob 18      0.778" in panel


def test_the_leaderboard_command_prints_text_without_drawing_a_figure(arena_env):
    """The terminal command computes the board and prints its text (or JSON) without importing plotly: the figures
    are the page's, drawn when the page asks."""
    code = ("import sys\n"
            "from arena.commands import main\n"
            "assert main(sys.argv[1:]) == 0\n"
            "print('plotly imported:', 'plotly' in sys.modules)\n")
    root = Path(__file__).resolve().parent.parent
    for args in (["--rounds", "10", "--fresh"], ["--rounds", "10", "--json"]):
        done = subprocess.run([sys.executable, "-c", code, "leaderboard", *args], cwd=root, capture_output=True,
                              text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
        assert done.returncode == 0, done.stderr
        assert "Human rank" in done.stdout or '"models"' in done.stdout
        assert done.stdout.rstrip().endswith("plotly imported: False"), done.stdout[-300:]


def test_leaderboard_judge_option_and_its_error(arena_env, capsys):
    assert main(["leaderboard", "--rounds", "10", "--judge", SINGLE]) == 0
    assert f"Judge column: {SINGLE} (6 votes, chosen); other judges: {JUDGE} (18)" in capsys.readouterr().out
    assert main(["leaderboard", "--rounds", "10", "--judge", "nobody"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No judge votes from 'nobody'. Judges with votes: ") and "pass one of them" in err


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, "/".join(action.option_strings) or action.dest, action.help


def test_every_option_and_argument_has_help():
    missing = [f"{' '.join(path) or '(top)'} {name}" for path, name, help_text in _options(build_parser())
               if not help_text]
    assert missing == []
