"""The recipe "How to add a suite" (docs/extending.md), followed once: a toy suite added by one declaration in this
file."""

from __future__ import annotations

import json

import pytest

from arena.web.render import prompt_markdown
from core.registry import RegistryError
from datamodel.battles import Battle, ShownImage
from datamodel.catalog import PromptSpec
from suites import registry
from suites.common import read_table, write_specs
from suites.registry import SUITES, Builder, ImportFormat, Suite

TOY = "toy-colours"


def _load(path) -> list[PromptSpec]:
    return [PromptSpec(TOY, f"colour-{line}", f"A {row['colour']} square", subset="shapes",
                       metadata={"colour": row["colour"]}, source=f"{path}:{line}")
            for line, row in read_table(path, ["colour"])]


def _add_build_arguments(parser) -> None:
    parser.add_argument("--count", type=int, default=3, help="how many squares")


def _build(db, args, settings):
    specs = [PromptSpec(TOY, f"grey-{n}", f"A square in grey number {n}", subset="generated",
                        metadata={"colour": "grey"}) for n in range(args.count)]
    return write_specs(db, specs), f"toy: {len(specs)} grey squares"


# the one declaration the recipe asks for
TOY_SUITE = Suite(
    name=TOY,
    title="Toy colours",
    criteria="Pick the square of the named colour.",
    imports=(ImportFormat("toy-colours", "a CSV with a colour column",
                          run=lambda db, args, context: write_specs(db, _load(args.path))),),
    builders=(Builder("toy-squares", "grey squares", add_arguments=_add_build_arguments, run=_build),),
    caption=lambda metadata: ("Colour", metadata["colour"]) if metadata.get("colour") else None,
)


@pytest.fixture
def toy_suite():
    SUITES.register(TOY_SUITE)
    yield TOY_SUITE
    SUITES.unregister(TOY)


def _battle(subset: str) -> Battle:
    return Battle(id="b1", prompt_id=1, suite=TOY, subset=subset, variant="", text="A red square",
                  metadata={"colour": "red"}, left=ShownImage(1, "left", ".png"), right=ShownImage(2, "right", ".png"),
                  served_at=0.0, media_token="t")


def test_a_suite_declared_once_gets_its_import_and_build_commands_title_and_caption(toy_suite, suites_cli, tmp_path):
    path = tmp_path / "colours.csv"
    path.write_text("colour\nred\nblue\n")
    code, out, err = suites_cli("import", "toy-colours", path)
    assert code == 0, err
    assert "2 prompts written (2 new, 0 updated, 0 unchanged)" in out
    assert "toy-colours  shapes" in out
    code, out, err = suites_cli("build", "toy-squares", "--count", "4")
    assert code == 0, err
    assert "toy: 4 grey squares" in out and "4 prompts written (4 new" in out
    code, out, _ = suites_cli("show", TOY, "--subset", "shapes")
    assert "A red square" in out and "A blue square" in out

    battle = _battle(subset="shapes")
    panel = prompt_markdown(battle)
    assert "**Suite:** Toy colours" in panel and "**Colour:** red" in panel


def test_an_unregistered_suite_has_no_commands_and_shows_its_bare_name(suites_cli, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        suites_cli("import", "toy-colours", tmp_path / "x.csv")
    assert exit_.value.code == 2 and "invalid choice: 'toy-colours'" in capsys.readouterr().err
    battle = _battle(subset="")
    assert "**Suite:** toy\\-colours" in prompt_markdown(battle) and "Colour" not in prompt_markdown(battle)


def test_a_clashing_declaration_is_refused_with_what_to_rename(toy_suite):
    with pytest.raises(RegistryError, match="suite 'toy-colours' is declared twice"):
        SUITES.register(Suite(name=TOY, title="Other", criteria="x"))
    with pytest.raises(RegistryError, match=r"declares `suites import commonsense`, which suite 'commonsense'"):
        SUITES.register(Suite(name="another", title="Another", criteria="x",
                       imports=(ImportFormat("commonsense", "clash", run=lambda db, args, context: None),)))
    assert "another" not in SUITES


def test_every_built_in_suite_declares_a_title_and_criteria():
    suites = dict(SUITES)
    assert {"taxonomy", "commonsense", "semvarbench", "saneval", "paraphrase"} <= set(suites)
    for suite in suites.values():
        assert suite.title and suite.criteria.endswith("."), suite.name
    assert json.dumps(sorted(registry.import_formats())) == json.dumps(
        sorted(["commonsense", "paraphrase", "predicted", "saneval", "semvarbench", "taxonomy-bench"]))


def test_the_built_in_suites_come_in_the_order_their_modules_sort_whatever_was_imported_first():
    """`suites list`, `suites import --help` and the command reference (docs/reference/commands.md) list the suites in
    this order; it was the order the suite modules happened to be imported in (a test module importing
    suites.semvarbench first put its import format first in the generated reference)."""
    import subprocess
    import sys

    script = ("import suites.semvarbench, suites.saneval; from suites import registry; "
              "print(' '.join(registry.SUITES))")
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    plain = subprocess.run([sys.executable, "-c", "from suites import registry; print(' '.join(registry.SUITES))"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert first == plain == ["commonsense", "open", "paraphrase", "saneval", "semvarbench", "taxonomy"]
