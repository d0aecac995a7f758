"""The web app stays easy to change: short functions (each tab's handlers at module level, its ``build_*`` function
only lays out and wires), its scripts and stylesheets as files under ``arena/web/static/`` that ship in the wheel,
and event handlers bound to the app's context the way Gradio reads them."""

from __future__ import annotations

import ast
import asyncio
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import gradio as gr

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "arena" / "web"
LONGEST = 80  # lines of a function, its nested functions included


def long_functions(folder: Path, longest: int = LONGEST) -> list[tuple[str, str, int]]:
    """(file, function, lines) of every function in ``folder``'s modules longer than ``longest`` lines, from its
    ``def`` (decorators excluded) to its last line: a nested function's lines count in the function around it."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None  # ast.parse sets it on every node
                lines = node.end_lineno - node.lineno + 1
                if lines > longest:
                    found.append((path.name, node.name, lines))
    return found


# a line of a script or a stylesheet: ends with a brace, then at most ) ; , (and a comment)
CODE_LINE = re.compile(r"[{}][);,\s]*(//.*|/\*.*\*/)?$")


def code_in_strings(folder: Path) -> list[tuple[str, int, str]]:
    """(file, line, why) of every string literal in ``folder``'s modules that holds a script or a stylesheet: a
    ``<script`` (but a JSON data element's) or ``<style`` tag, or three lines or more of code."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if re.search(r"<style\b|<script\b(?![^>]*application/json)", text, re.IGNORECASE):  # data may be
                found.append((path.name, node.lineno, "a <script> or <style> element"))
            elif sum(bool(CODE_LINE.search(line.rstrip())) for line in text.splitlines()) >= 2:
                found.append((path.name, node.lineno, "lines of a script or a stylesheet"))
    return found


def test_no_function_of_the_web_app_is_longer_than_80_lines():
    assert long_functions(WEB) == []


def test_the_length_check_counts_nested_functions(tmp_path):
    inner = "".join(f"        x{i} = {i}\n" for i in range(LONGEST))
    (tmp_path / "tab.py").write_text(f"def build_tab():\n    def handler():\n{inner}    return handler\n\n\n"
                                     "def short():\n    return 1\n")
    assert long_functions(tmp_path) == [("tab.py", "build_tab", LONGEST + 3), ("tab.py", "handler", LONGEST + 1)]


def test_the_web_app_keeps_no_script_or_stylesheet_in_python_strings():
    assert code_in_strings(WEB) == []


def test_the_string_check_finds_scripts_and_stylesheets(tmp_path):
    (tmp_path / "tab.py").write_text(
        '"""A docstring: it says what the tab does.\n\nIt may mention a { brace.\n"""\n'
        'JS = "(token) => window.arenaSignIn.keep(token)"\n'
        'HEAD = "<script>let x = 1;</script>"\n'
        'DATA = \'<script type="application/json" id="keys">{}</script>\'\n'
        'CSS = """\n#a { color: red; }\n#b { color: blue; }\n.c {\n    gap: 0;\n}\n"""\n')
    assert code_in_strings(tmp_path) == [("tab.py", 6, "a <script> or <style> element"),
                                         ("tab.py", 8, "lines of a script or a stylesheet")]


def test_every_file_of_the_page_is_served_and_ships_in_the_wheel():
    from arena.web import assets, early_script

    static = sorted(path.name for path in assets.STATIC.iterdir())
    served = sorted(path.name for path in (*assets.STYLESHEETS, *assets.HEAD_SCRIPTS)) + [early_script.SCRIPT.name]
    assert static == sorted(served)
    assert all(path.read_text().strip() for path in assets.STATIC.iterdir())
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["arena.web"]
    assert [name for name in static if not any(fnmatch(f"static/{name}", pattern) for pattern in patterns)] == []
    # Gradio's head_paths are HTML: each script file is one <script> element, a comment before it at most
    for path in assets.HEAD_SCRIPTS:
        text = re.sub(r"<!--.*?-->", "", path.read_text(), flags=re.DOTALL).strip()
        assert text.startswith("<script>") and text.endswith("</script>") and text.count("<script") == 1, path


def _handler(ctx, name: str, token: str, request: gr.Request | None = None, *, kind: str) -> list:
    return [ctx, name, token, request, kind]


async def _slow_handler(ctx, text: str, request: gr.Request | None = None) -> list:
    return [ctx, text, request]


def test_a_bound_handler_gets_the_request_from_gradio_and_keeps_its_name():
    from gradio.helpers import special_args

    from arena.web.context import bind

    handler = bind("the context", _handler, name="vote_a", kind="A")
    assert handler.__name__ == "vote_a"
    request = object()
    inputs, _, _, _ = special_args(handler, ["alice", "secret"], request=request)
    assert handler(*inputs) == ["the context", "alice", "secret", request, "A"]
    slow = bind("the context", _slow_handler)
    assert slow.__name__ == "_slow_handler" and asyncio.iscoroutinefunction(slow)
    inputs, _, _, _ = special_args(slow, ["a prompt"], request=request)
    assert asyncio.run(slow(*inputs)) == ["the context", "a prompt", request]


def test_a_scores_answer_gets_the_request_before_the_scores():
    """Gradio hands the request only to a parameter before ``*values``: the Ratings tab's score answers (SemVarBench's
    two scores) then count against the per-address limit by the rater's address, not all under "unknown"."""
    from gradio.helpers import special_args

    from arena.web.context import bind
    from arena.web.ratings_tab import answer_scores

    handler = bind("the desk", answer_scores, "rate_semvar_alignment", task_name="semvar_alignment")
    request = object()
    inputs, _, _, _ = special_args(handler, ["session", "task", "token", 60, 80], request=request)
    assert inputs == ["session", "task", "token", request, 60, 80]
