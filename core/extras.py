"""The optional installs (the extras of pyproject.toml) and what a command says when one it needs is missing.

``make run`` and Hugging Face Spaces install the web extra only (requirements.txt): serving, voting, the leaderboard,
exports and imports. Generating images, computing metrics and running judges need the torch stack and the judges'
client, which ``pip install '.[all]'`` adds. A command that meets one of their packages missing stops with
:func:`missing_extra`'s message instead of a traceback.
"""

from __future__ import annotations

import importlib.util
import sys

INSTALL_ALL = "pip install '.[all]'"
# Top-level module → the extra of pyproject.toml that installs it.
EXTRA_OF = {
    "torch": "gen", "torchvision": "gen", "diffusers": "gen", "transformers": "gen", "accelerate": "gen",
    "safetensors": "gen", "open_clip": "gen", "torchmetrics": "metrics", "torch_fidelity": "metrics",
    "openai": "judges", "httpx2": "judges", "ray": "ray",
}


class MissingExtra(ModuleNotFoundError):
    """A package of an extra is not installed; the message names the command, the package and the install line."""


def _message(name: str, command: str) -> str:
    extra = f"the {EXTRA_OF[name]} extra" if name in EXTRA_OF else "the full install"
    return (f"{command} needs {extra} (no module named {name!r}), which the web "
            f"install (make run, requirements.txt) leaves out. Add it: .venv/bin/{INSTALL_ALL} (the torch stack, "
            "about 6 GB), or pip install -r requirements-dev.txt.")


def missing_extra(error: BaseException, command: str = "this command") -> str | None:
    """The message for ``error`` when it is an import of a package of an extra, else None (a missing package of
    the web install is a broken install, not a missing extra: the caller re-raises)."""
    if isinstance(error, MissingExtra):
        return str(error)
    name = (getattr(error, "name", None) or "").split(".")[0]
    if not isinstance(error, ImportError) or name not in EXTRA_OF:
        return None
    return _message(name, command)


def exit_status(error: ImportError, command: str) -> int:
    """For a command line's ``except ImportError``: print the missing extra's message and return the exit status 2;
    re-raise ``error`` when it is not a package of an extra (a broken install, to be seen whole)."""
    message = missing_extra(error, command)
    if message is None:
        raise error
    print(f"error: {message}", file=sys.stderr)
    return 2


def require(*modules: str, command: str = "this command") -> None:
    """Raise :class:`MissingExtra` (with :func:`missing_extra`'s message) unless every module can be imported."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:  # a finder that refuses the name outright
            found = False
        if not found:
            raise MissingExtra(_message(module, command), name=module)
