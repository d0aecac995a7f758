"""What the wheel ships and what its core install requires: the product packages, not the tooling; and only
libraries the product packages import."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from tools.layers import ALLOWED, package_of, read_graph

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PRODUCT = sorted(set(ALLOWED) - {"tools", "app"})  # the packages a user installs


def test_the_wheel_ships_the_product_packages_and_not_the_tools():
    """tools/ (benchmarks, load tests, the docs and requirements generators) runs from a checkout."""
    included = PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(pattern.rstrip("*") for pattern in included) == PRODUCT


def test_every_core_dependency_is_imported_by_the_product():
    """A library only the tests or the tools use belongs in the dev or bench extra, not in every install."""
    import ast

    imported = set()
    for name, path in read_graph().modules.items():
        if package_of(name) in PRODUCT:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    imported.add(node.module.split(".")[0])
    distributions = importlib.metadata.packages_distributions()
    used = {dist.lower().replace("_", "-") for module in imported for dist in distributions.get(module, ())}
    required = {re.split(r"[=<>\[ ;]", pin)[0].lower().replace("_", "-") for pin in PROJECT["project"]["dependencies"]}
    assert sorted(required - used) == []
