"""Write requirements.txt and requirements-dev.txt from pyproject.toml: ``python -m tools.requirements`` (``--check``:
exit 1, naming the file, when one differs from what pyproject.toml gives).

requirements.txt is what ``make run`` and Hugging Face Spaces install: the base dependencies and the web extra, which
serve the shipped demo, take votes, show the leaderboard, export and import (about 0.8 GB, no torch).
requirements-dev.txt is what ``make test`` installs: requirements.txt, the gen, metrics and judges extras (the torch
stack: generation, metrics, judges), the postgresql extra (psycopg: the tests run on both engines), the ray extra
(the open prompts' Ray test) and the dev
extra's own pins. The hashed locks come from a resolver (the command
is in each one's first lines): requirements-web.lock, the web install, from pip-tools' pip-compile;
requirements-all.lock, the ``all`` extra with the torch stack, from uv's ``uv pip compile`` (pip-compile took longer
than 500 s on it, uv a few seconds). They are not written here, but ``--check`` also fails when a lock pins another
version of a package than pyproject.toml does.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVING_EXTRAS = ("web",)  # requirements.txt: make run, Spaces
FULL_EXTRAS = ("gen", "metrics", "judges", "postgresql", "ray", "dev")  # added by requirements-dev.txt: make test
HEADER = "# Generated from pyproject.toml by `python -m tools.requirements`; edit pyproject.toml, not this file.\n"
LOCKS = {"requirements-web.lock": ("web",), "requirements-all.lock": ("all",)}  # lock file → the extras it installs
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^]]*\])?==([^\s;\\]+)")


def _group(title: str, pins: list[str], seen: set[str]) -> list[str]:
    new = [pin for pin in pins if not pin.startswith("t2i-arena") and pin not in seen]
    seen.update(new)
    return [f"# {title}", *new] if new else []


def render(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """File name → text of each generated requirements file."""
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project["optional-dependencies"]
    seen: set[str] = set()
    serving = _group("base (pip install .)", project["dependencies"], seen)
    for name in SERVING_EXTRAS:
        serving += _group(f"extra {name} (pip install '.[{name}]')", extras[name], seen)
    dev = ["-r requirements.txt"]
    for name in FULL_EXTRAS:
        dev += _group(f"extra {name} (pip install '.[{name}]')", extras[name], seen)
    return {"requirements.txt": HEADER + "\n".join(serving) + "\n",
            "requirements-dev.txt": HEADER + "\n".join(dev) + "\n"}


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(text: str) -> dict[str, str]:
    """{normalised package name: version} of the ``name==version`` lines of a requirements or lock file."""
    return {_normalised(match[1]): match[2] for match in map(_PIN.match, text.splitlines()) if match}


def project_pins(project: dict, extras: tuple[str, ...]) -> dict[str, str]:
    """{normalised name: version} of the base dependencies and ``extras`` (following ``t2i-arena[...]``)."""
    pins: dict[str, str] = {}
    todo, seen = list(extras), set()
    for pin in project["dependencies"]:
        pins.update(lock_pins(pin))
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for pin in project["optional-dependencies"][extra]:
            if pin.startswith(project["name"] + "["):
                todo += pin.partition("[")[2].rstrip("]").split(",")
            else:
                pins.update(lock_pins(pin))
    return pins


def lock_mismatches(lock: str, *, pyproject_text: str | None = None) -> list[str]:
    """What ``lock`` (a name in :data:`LOCKS`) pins otherwise than pyproject.toml, or lacks, one line each."""
    project = tomllib.loads(pyproject_text or (ROOT / "pyproject.toml").read_text())["project"]
    path = ROOT / lock
    if not path.exists():
        return [f"{lock} is missing"]
    locked = lock_pins(path.read_text())
    return [f"{lock} lacks {name}" if name not in locked else f"{lock} pins {name} {locked[name]}, pyproject.toml "
            f"{version}" for name, version in sorted(project_pins(project, LOCKS[lock]).items())
            if locked.get(name) != version]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.requirements", description=__doc__.splitlines()[0])
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
    locks = [line for lock in LOCKS for line in lock_mismatches(lock)]
    if locks:
        print("; ".join(locks) + ": rerun the command in the first lines of each lock.", file=sys.stderr)
    return 1 if stale or (locks and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
