"""Finding the declarations of the ``judges`` package: :func:`discover` imports each of its modules once.

The judge tasks (:mod:`judges.tasks`) and their templates (:mod:`judges.prompts`) are declared in the modules that
implement them, which register them when imported. Both registries call :func:`discover` before they answer a
question about what exists (every task, every template key), so a new task is one module in this package that nobody
names. Sub-packages (``judges.metrics``) and the command line are not imported; a task module imports its heavy
optional dependencies (torch, a detector) inside its functions, so discovery stays cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

# not declarations: the command line and this module
SKIPPED = ("commands", "discovery")

_DONE = threading.Event()
_LOCK = threading.RLock()


def discover() -> None:
    """Import every module of the ``judges`` package once (not its sub-packages, nor ``_private`` ones)."""
    if _DONE.is_set():
        return
    with _LOCK:  # a module being imported may ask a registry itself: the same thread goes on
        if _DONE.is_set():
            return
        package = importlib.import_module("judges")
        for module in pkgutil.iter_modules(package.__path__):
            if not module.ispkg and not module.name.startswith("_") and module.name not in SKIPPED:
                importlib.import_module(f"judges.{module.name}")
        _DONE.set()
