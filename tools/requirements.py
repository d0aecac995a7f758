"""Write requirements.txt and requirements-dev.txt from pyproject.toml: ``python -m tools.requirements`` (``--check``:
exit 1, naming the file, when one differs from what pyproject.toml gives).

requirements.txt is what ``make run`` and Hugging Face Spaces install: the base dependencies and the web, gen,
metrics and judges extras (everything the app and the CLI can do). requirements-dev.txt adds the dev extra's own pins.
The hashed lock of the web install, requirements-web.lock, comes from pip-tools (the command is in its first lines).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNTIME_EXTRAS = ("web", "gen", "metrics", "judges")
HEADER = "# Generated from pyproject.toml by `python -m tools.requirements`; edit pyproject.toml, not this file.\n"


def _group(title: str, pins: list[str], seen: set[str]) -> list[str]:
    new = [pin for pin in pins if not pin.startswith("t2i-arena") and pin not in seen]
    seen.update(new)
    return [f"# {title}", *new] if new else []


def render(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """File name → text of each generated requirements file."""
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project["optional-dependencies"]
    seen: set[str] = set()
    runtime = _group("base (pip install .)", project["dependencies"], seen)
    for name in RUNTIME_EXTRAS:
        runtime += _group(f"extra {name} (pip install '.[{name}]')", extras[name], seen)
    dev = ["-r requirements.txt", *_group("extra dev (pip install '.[dev]')", extras["dev"], seen)]
    return {"requirements.txt": HEADER + "\n".join(runtime) + "\n",
            "requirements-dev.txt": HEADER + "\n".join(dev) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    stale = []
    for name, text in render().items():
        path = ROOT / name
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        print(f"{', '.join(stale)} differ from pyproject.toml: run `python -m tools.requirements`.", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
