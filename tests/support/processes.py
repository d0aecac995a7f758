"""Servers the tests start as subprocesses (the app as Spaces or a web-only install starts it, Datasette): started
with their output in a log file, stopped with their process group, their log returned for the test's message."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tools.load import stop_server


class LoggedProcess(subprocess.Popen[bytes]):
    """A server started as a subprocess with its output in the file ``log`` (set once it is started)."""

    log: Path


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie, ended but not yet reaped, has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def stop_logged(process: LoggedProcess) -> str:
    """Stop the server and its process group (the server's children); return what it printed (``process.log``)."""
    stop_server(process)
    return process.log.read_text()


def wait_answering(process: LoggedProcess, url: str, timeout: float = 120) -> httpx.Response:
    """The first answer of ``url``, polled until the server answers; fails the test with the server's log when it
    exits or does not answer within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app exited with {process.returncode}:\n{process.log.read_text()}")
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            time.sleep(0.2)
    pytest.fail(f"the app did not answer on {url} within {timeout} s:\n{stop_logged(process)}")
