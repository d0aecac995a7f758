"""core.registry: one Registry per kind, filled from an explicit tuple of built-in modules and from entry points."""

from __future__ import annotations

import importlib.metadata
import sys
from dataclasses import dataclass

import pytest

import core.registry
from core.registry import Registry, RegistryError, load


@dataclass(frozen=True)
class Toy:
    name: str
    size: int = 1


def declaring_modules(tmp_path, monkeypatch, prefix: str, **bodies: str) -> list[str]:
    """Modules ``<prefix>_<name>`` holding ``bodies`` on sys.path (each may use ``TOYS``, a registry of strings)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []
    for name, body in bodies.items():
        module = f"{prefix}_{name}"
        (tmp_path / f"{module}.py").write_text(f"from {prefix}_home import TOYS\n{body}\n")
        names.append(module)
        monkeypatch.delitem(sys.modules, module, raising=False)
    return names


def test_register_get_names_and_items():
    toys = Registry[Toy]("toys", (), what="toy", hint="(the toy box lists them)")
    small = toys.register(Toy("small"))
    assert toys.register(Toy("small")) == small  # the same declaration again changes nothing
    toys.register(Toy("big", 3))
    assert toys.get("big") == Toy("big", 3)
    assert toys.names() == ("small", "big") and list(toys) == ["small", "big"] and "big" in toys
    assert toys.items() == [("small", Toy("small")), ("big", Toy("big", 3))]
    with pytest.raises(RegistryError, match="toy 'small' is declared twice. Give the new toy another name"):
        toys.register(Toy("small", 2))
    with pytest.raises(RegistryError, match=r"unknown toy 'huge'; choices: small, big \(the toy box lists them\)\."):
        toys.get("huge")
    with pytest.raises(LookupError):  # and a ValueError: the old handlers of both still catch it
        toys.get("huge")
    assert toys.unregister("small") == Toy("small") and toys.unregister("small") is None
    assert toys.names() == ("big",)


def test_built_ins_come_first_in_their_tuples_order(tmp_path, monkeypatch):
    (tmp_path / "regtoys_home.py").write_text("from core.registry import Registry\n"
                                              "TOYS = Registry('toys', ('regtoys_b', 'regtoys_a'), what='toy', "
                                              "key=str)\n")
    monkeypatch.delitem(sys.modules, "regtoys_home", raising=False)
    declaring_modules(tmp_path, monkeypatch, "regtoys", a="TOYS.register('from-a')",
                      b="TOYS.register('from-b1')\nTOYS.register('from-b2')")
    from regtoys_home import TOYS  # type: ignore[import-not-found]  # written above, at run time

    TOYS.register("elsewhere")  # registered before the built-ins were loaded
    importlib.import_module("regtoys_a")  # imported before its sibling (as another module might)
    assert TOYS.names() == ("from-b1", "from-b2", "from-a", "elsewhere")


def test_plug_ins_come_from_entry_points_and_a_broken_one_names_its_package(tmp_path, monkeypatch):
    (tmp_path / "plugtoys_home.py").write_text("from core.registry import Registry\n"
                                               "TOYS = Registry('toys', (), what='toy', key=str, groups=('extras',))\n")
    monkeypatch.delitem(sys.modules, "plugtoys_home", raising=False)
    declaring_modules(tmp_path, monkeypatch, "plugtoys", good="TOYS.register('plugged')",
                      extra="TOYS.register('from-the-other-group')", bad="import no_such_module_here")
    from plugtoys_home import TOYS  # type: ignore[import-not-found]  # written above, at run time

    points = [importlib.metadata.EntryPoint("good", "plugtoys_good", "t2i_arena.toys"),
              importlib.metadata.EntryPoint("other", "plugtoys_extra", "t2i_arena.extras"),
              importlib.metadata.EntryPoint("elsewhere", "plugtoys_bad", "t2i_arena.other_kind")]
    monkeypatch.setattr(core.registry, "_entry_points", lambda: importlib.metadata.EntryPoints(points))
    assert TOYS.names() == ("plugged", "from-the-other-group")

    broken = Registry("broken", (), what="toy")
    points.append(importlib.metadata.EntryPoint("bad", "plugtoys_bad", "t2i_arena.broken"))
    with pytest.raises(RegistryError, match=r"the plug-in bad = 'plugtoys_bad' of an installed package \(entry point "
                                            r"group t2i_arena.broken\) cannot be imported: .*no_such_module_here"):
        broken.names()


def test_load_names_a_module_or_an_attribute():
    assert load("core.registry") is core.registry
    assert load("core.registry:Registry.register") is Registry.register
