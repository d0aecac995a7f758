import re
from pathlib import Path

import pytest

from arena.web.render import escape_markdown, prompt_markdown
from core.settings import Settings, SettingsError, load_settings, settings_table
from datamodel.battles import Battle, ShownImage

SETTINGS_REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "settings.md"


def test_environment_overrides_file_overrides_defaults(tmp_path):
    config = tmp_path / "arena.toml"
    config.write_text('port = 8000\nhost = "0.0.0.0"\n[annotators]\nalice = "token-alice"\n')
    settings = load_settings(env={"ARENA_PORT": "9000"}, config_file=config)
    assert (settings.port, settings.host) == (9000, "0.0.0.0")
    assert settings.annotator_accounts == {"alice": "token-alice"}
    assert load_settings(env={}).port == Settings().port


def test_bad_settings_say_how_to_fix_them(tmp_path):
    with pytest.raises(SettingsError, match="port must be a int"):
        load_settings(env={"ARENA_PORT": "eighty"})
    with pytest.raises(SettingsError, match="'alice' is not 'name:token'"):
        load_settings(env={"ARENA_ANNOTATORS": "alice"})
    (tmp_path / "a.toml").write_text('admin_password = "x"\n')
    with pytest.raises(SettingsError,
                       match="admin_password is a secret; set it in the environment as ARENA_ADMIN_PASSWORD"):
        load_settings(env={}, config_file=tmp_path / "a.toml")
    (tmp_path / "b.toml").write_text('colour = "x"\n')
    with pytest.raises(SettingsError, match="unknown setting 'colour'"):
        load_settings(env={}, config_file=tmp_path / "b.toml")
    with pytest.raises(SettingsError, match="does not exist"):
        load_settings(env={"ARENA_CONFIG": str(tmp_path / "missing.toml")})


def test_every_setting_is_documented_in_the_settings_reference():
    text = SETTINGS_REFERENCE.read_text()
    missing = [env for _, env, _, _ in settings_table() if env not in text]
    assert not missing, f"document these settings: run python -m tools.docs ({missing})"


def test_prompt_text_is_shown_literally():
    hostile = '<img src=x onerror="alert(1)"> **bold** [link](http://x)'
    escaped = escape_markdown(hostile)
    assert "<img" not in escaped and "&lt;img" in escaped
    assert "**" not in escaped and "](" not in escaped
    battle = Battle("b", 1, "taxonomy", "Easy", "with_definition", hostile, {"lemma": "<b>x</b>", "definition": "d"},
                    ShownImage(1, "0" * 64, "png"), ShownImage(2, "1" * 64, "png"), 0.0, "tok")
    rendered = prompt_markdown(battle)
    assert not re.search(r"<(img|b)\b", rendered)
    assert "Concept:" in rendered and "WordNet taxonomy" in rendered


def test_expected_outcome_only_when_asked():
    battle = Battle("b", 1, "commonsense", "Physical Laws", "", "A lightbulb without electricity",
                    {"description": "The lightbulb is unlit"}, ShownImage(1, "0" * 64, "png"),
                    ShownImage(2, "1" * 64, "png"), 0.0, "tok")
    assert "unlit" not in prompt_markdown(battle)
    assert "unlit" in prompt_markdown(battle, show_expected=True)


def test_the_matplotlib_switch_is_skipped_only_without_matplotlib(monkeypatch):
    import contextlib
    import importlib.util

    import gradio as gr

    from arena.web.app import skip_matplotlib_backend_switch

    class Switch:  # stands for Gradio's own context manager
        pass

    monkeypatch.setattr(gr.utils, "MatplotlibBackendMananger", Switch)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "matplotlib" else None)
    assert skip_matplotlib_backend_switch() is False and gr.utils.MatplotlibBackendMananger is Switch
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert skip_matplotlib_backend_switch() is True
    with gr.utils.MatplotlibBackendMananger():  # what Gradio does around every event
        pass
    assert gr.utils.MatplotlibBackendMananger is contextlib.nullcontext


def test_the_load_harness_reads_a_process_cpu_time():
    import os
    import time

    from tools.load import process_cpu_seconds

    before = process_cpu_seconds(os.getpid())
    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass
    assert before is not None and process_cpu_seconds(os.getpid()) >= before + 0.03
    assert process_cpu_seconds(2**22 + 12345) is None  # no such process


def _displayed_heading(markdown: str) -> str:
    """The text a reader sees in the prompt panel's heading: the Markdown rendered as CommonMark (raw HTML allowed,
    so an unescaped tag would show up as a tag), tags dropped and entities decoded, as a browser shows it."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    class Heading(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.inside, self.text, self.tags = False, "", []

        def handle_starttag(self, tag, attrs):
            self.inside = self.inside or tag == "h3"
            if self.inside and tag != "h3":
                self.tags.append(tag)

        def handle_endtag(self, tag):
            self.inside = self.inside and tag != "h3"

        def handle_data(self, data):
            self.text += data if self.inside else ""

    parser = Heading()
    parser.feed(MarkdownIt("commonmark").render(markdown))
    assert not parser.tags, f"the prompt became markup: {parser.tags}"
    return parser.text


@pytest.mark.parametrize("text", [
    "a dog's toy", 'the "quoted" word', "salt & pepper", "AT&T's <b>bold</b> #1 * [x](y) `code` &amp; &#x27;",
    '<img src=x onerror="alert(1)"> **bold** [link](http://x)',
])
def test_the_prompt_panel_shows_the_prompt_text_exactly(text):
    battle = Battle("b", 1, "commonsense", "", "", text, {}, ShownImage(1, "0" * 64, "png"),
                    ShownImage(2, "1" * 64, "png"), 0.0, "tok")
    assert _displayed_heading(prompt_markdown(battle)) == text
