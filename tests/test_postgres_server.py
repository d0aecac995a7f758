"""tools.postgres_server: a cluster whose owner was killed is stopped and deleted by the next one started beside it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.processes import running

from tools.postgres_server import TemporaryPostgres

pytestmark = pytest.mark.postgresql
ROOT = Path(__file__).resolve().parent.parent
OWNER = """
import json, sys, time
from tools.postgres_server import TemporaryPostgres
server = TemporaryPostgres(parent=sys.argv[1]).start()
print(json.dumps({"root": str(server.root), "pid": server.server_pid()}), flush=True)
time.sleep(600)
"""


@pytest.fixture
def parent():
    """A folder for the clusters that PostgreSQL's own user can reach when the tests run as root (pytest's tmp_path
    is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="arena-pg-tests-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _killed_owner(parent: Path) -> dict:
    """A cluster started by a process that was then killed (kill -9): its server runs on, nobody to stop it."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(parent)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None  # stdout=PIPE
    try:
        cluster = json.loads(owner.stdout.readline())
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=30)
        owner.stdout.close()
    assert running(cluster["pid"]) and Path(cluster["root"]).is_dir()
    return cluster


def test_a_cluster_left_by_a_killed_owner_is_stopped_and_deleted_by_the_next_start(parent):
    """Before: a test run killed with kill -9 (a CI timeout, an OOM kill) left its server running and its folder in
    /tmp, and every such run added one."""
    (parent / "arena-postgres-unrelated").mkdir()  # no owner recorded: not ours to judge, left alone
    stale = _killed_owner(parent)
    try:
        with TemporaryPostgres(parent=parent) as fresh:
            deadline = time.monotonic() + 30
            while running(stale["pid"]) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not running(stale["pid"]), "the orphaned server still runs"
            assert not Path(stale["root"]).exists()
            assert (parent / "arena-postgres-unrelated").is_dir()
            assert running(fresh.server_pid())
    finally:
        if running(stale["pid"]):  # the test failed: stop the orphan it made
            os.kill(stale["pid"], signal.SIGKILL)


def test_a_cluster_whose_owner_runs_is_left_alone(parent):
    with TemporaryPostgres(parent=parent) as first, TemporaryPostgres(parent=parent) as second:
        assert running(first.server_pid()) and running(second.server_pid()) and first.root.is_dir()
        assert os.getpid() == json.loads((first.root / "owner.json").read_text())["pid"]
