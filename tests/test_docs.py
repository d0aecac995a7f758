"""The docs stay true: the generated reference pages match the code, every link of the README and of docs/ leads to
a page (and a heading) that exists, the index lists every page, and the README stays a short front door."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.settings import settings_table
from tools import docs

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)  # no headings inside code
    return {docs.slug(line.lstrip("#").strip().replace("`", "")) for line in text.splitlines() if line.startswith("#")}


def test_the_generated_reference_pages_are_current():
    assert docs.stale() == [], "a reference page is stale: run `python -m tools.docs` and commit the pages"


def test_the_reference_holds_every_setting_and_every_command():
    settings = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    assert [env for _, env, _, _ in settings_table() if f"`{env}`" not in settings] == []
    commands = (DOCS / "reference" / "commands.md").read_text(encoding="utf-8")
    lines = [command.line for command in docs.commands()]
    assert {"python -m arena serve", "python -m arena suites import semvarbench", "python -m generators smoke",
            "python -m judges compare", "python -m judges metrics", "python -m tools.load",
            "python -m tools.docs"} <= set(lines)
    assert [line for line in lines if f"## `{line}`" not in commands] == []


def test_a_stale_page_is_named_with_the_command_that_regenerates_it(tmp_path):
    for path, text in docs.pages().items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert docs.stale(tmp_path) == []
    page = tmp_path / docs.SETTINGS_PAGE
    page.write_text(page.read_text(encoding="utf-8").replace("ARENA_DB", "ARENA_DATABASE"), encoding="utf-8")
    (tmp_path / docs.COMMANDS_PAGE).unlink()
    assert docs.stale(tmp_path) == [f"{docs.SETTINGS_PAGE} is stale: run `python -m tools.docs`",
                                    f"{docs.COMMANDS_PAGE} is stale: run `python -m tools.docs`"]


@pytest.mark.parametrize("page", pages(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_leads_to_a_page_and_heading_that_exist(page):
    broken = []
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(target)
    assert broken == [], f"{page.relative_to(ROOT)} links to what does not exist: {broken}"


def test_the_index_lists_every_page():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    listed = {(DOCS / target).resolve().relative_to(DOCS).as_posix() for target in LINK.findall(index)
              if not re.match(r"[a-z]+:", target) and target.endswith(".md") and not target.startswith("..")}
    written = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")} - {"index.md"}
    assert written - listed == set(), "add these pages to docs/index.md"


def test_the_readme_is_a_short_front_door_with_the_spaces_card():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= 10_240, f"README.md is {len(text.encode())} bytes: move detail into docs/"
    card = text.split("---\n")[1]  # the Hugging Face Spaces front matter
    assert text.startswith("---\n") and "sdk: gradio" in card and "app_file: app.py" in card
    assert "make run" in text and "make test" in text and "docs/index.md" in text
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (ROOT / image).stat().st_size > 10_000, image  # a real screenshot
