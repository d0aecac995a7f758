"""A throwaway PostgreSQL server for the tests and the replica load test: a fresh cluster in a temporary folder on a
free port of 127.0.0.1, stopped and deleted afterwards.

The server is Debian's ``postgresql`` package (``make test`` installs it: ``test-system-deps``); its programs are
found on ``PATH`` or in ``/usr/lib/postgresql/<version>/bin`` (Debian keeps them there), the newest first.
PostgreSQL refuses to run as root, so as root the cluster belongs to an unprivileged user (``postgres``, which the
Debian package creates, else ``nobody``) and its programs run as that user; as anyone else, as themselves. The
cluster trusts connections from 127.0.0.1 only (``-A trust``; it listens on nothing else and on a Unix socket in its
own folder), and the superuser is ``arena``.

Each cluster's folder records the process that started it (``owner.json``). ``pg_ctl`` daemonises the server, so a
run killed before it could stop its cluster (kill -9, the OOM killer, a CI timeout) left the server running and its
folder behind; the next cluster started in the same folder stops and deletes such orphans first
(:func:`remove_orphans`).

``durable=False`` (the tests) turns off fsync and synchronous commit: a crash of the machine may lose the cluster,
which is thrown away anyway. The load test keeps the defaults (``durable=True``), so a vote acknowledged is on disk.

    with TemporaryPostgres() as server:
        url = server.create_database("arena")   # postgresql://arena@127.0.0.1:PORT/arena
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tools.ports import free_port

SUPERUSER = "arena"
PREFIX = "arena-postgres-"  # each cluster's folder, in the temporary folder or ``parent``
OWNER_FILE = "owner.json"  # in it: the process that started the cluster (remove_orphans)
PROGRAMS = ("initdb", "pg_ctl", "postgres")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server programs here; the message says what to install."""


def server_bin() -> Path:
    """The folder of ``initdb``, ``pg_ctl`` and ``postgres``: on PATH, else Debian's newest
    ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        folder = Path(os.path.realpath(found)).parent
        if all((folder / name).exists() for name in PROGRAMS):
            return folder
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda path: [int(part) if part.isdigit() else 0 for part in Path(path).parts[-3].split(".")])
    if versions:
        return Path(versions[-1]).parent
    raise PostgresUnavailable("No PostgreSQL server found (initdb, pg_ctl). Install Debian's postgresql package: "
                              "make test-system-deps, or apt-get install postgresql.")


def _server_user() -> pwd.struct_passwd | None:
    """The unprivileged user to run the server as when we are root (None: not root, run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresUnavailable("Running as root, and there is no 'postgres' or 'nobody' user to run PostgreSQL as "
                              "(it refuses root). Install Debian's postgresql package, which creates 'postgres'.")


def _process_identity(pid: int) -> dict | None:
    """``{"pid", "started"}`` of a running process (its start time in clock ticks since boot, from /proc, so that a
    new process given the same id is told apart), or None once it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else {"pid": pid, "started": int(fields[19])}


def remove_orphans(parent: Path, run) -> list[Path]:
    """Stop and delete the clusters in ``parent`` whose owner (the process that started them, in their
    ``owner.json``) has ended without stopping them: killed with kill -9, by the OOM killer or a CI timeout. ``pg_ctl``
    daemonises the server, so nothing else ends it. ``run`` runs a server program (as :meth:`TemporaryPostgres._run`).
    A folder without an owner file (being made, or made by another tool) is left alone. Returns the folders removed."""
    removed: list[Path] = []
    if _process_identity(os.getpid()) is None:  # no /proc here: no way to tell a live owner from a dead one
        return removed
    for root in sorted(parent.glob(PREFIX + "*")):
        try:
            owner = json.loads((root / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int) \
                or _process_identity(owner["pid"]) == owner:
            continue  # not an owner this code wrote, or one still running
        if (root / "data" / "postmaster.pid").exists():
            run("pg_ctl", "-D", str(root / "data"), "-m", "immediate", "-w", "-t", "30", "stop", cwd=root, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
        removed.append(root)
    return removed


class TemporaryPostgres:
    """A PostgreSQL cluster of its own (module docstring); :meth:`start` and :meth:`stop`, or use ``with``."""

    def __init__(self, *, durable: bool = False, max_connections: int = 300, settings: dict | None = None,
                 parent: str | Path | None = None):
        self.durable, self.max_connections = durable, max_connections
        self.settings = dict(settings or {})
        self.parent = parent
        self.bin = server_bin()
        self.user = _server_user()
        self.root: Path | None = None
        self.port: int | None = None

    @property
    def data(self) -> Path:
        if self.root is None:
            raise RuntimeError("the cluster has no folder yet: call start() first.")
        return self.root / "data"

    def _run(self, *args: str, timeout: float = 120.0, cwd: Path | None = None) -> subprocess.CompletedProcess:
        kwargs: dict[str, Any] = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        return subprocess.run([str(self.bin / args[0]), *args[1:]], capture_output=True, text=True, check=False,
                              timeout=timeout, cwd=cwd or self.root, env={**os.environ, "LC_ALL": "C.UTF-8"},
                              **kwargs)

    def start(self) -> TemporaryPostgres:
        parent = self.parent
        if parent is None and self.user is not None and Path("/tmp").is_dir():
            parent = "/tmp"  # a folder the server's user can reach whatever TMPDIR says (root's may be private)
        remove_orphans(Path(parent or tempfile.gettempdir()), self._run)
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=parent))
        (self.root / OWNER_FILE).write_text(json.dumps(_process_identity(os.getpid())))
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        init = self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                         "--locale=C.UTF-8", *(() if self.durable else ("--no-sync",)))
        if init.returncode:
            self._cleanup()
            raise PostgresUnavailable(f"initdb failed ({init.returncode}): {init.stderr.strip()[-800:]}")
        options = {"listen_addresses": "127.0.0.1", "unix_socket_directories": str(self.root),
                   "max_connections": str(self.max_connections), "shared_buffers": "128MB",
                   **({} if self.durable else {"fsync": "off", "synchronous_commit": "off",
                                                "full_page_writes": "off"}),
                   **{key: str(value) for key, value in self.settings.items()}}
        for _attempt in range(5):  # a port found free may be taken before the server binds it: try another
            self.port = free_port()
            line = " ".join(f"-c {key}={value}" for key, value in {**options, "port": self.port}.items())
            started = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                                "-t", "60", "-o", line, "start")
            if started.returncode == 0:
                return self
        server_log = self.root / "server.log"
        log = server_log.read_text(errors="replace")[-1500:] if server_log.exists() else ""
        self._cleanup()
        raise PostgresUnavailable(f"PostgreSQL did not start: {started.stderr.strip()[-500:]}\n{log}")

    def server_pid(self) -> int:
        """The process id of the cluster's server (its ``postmaster.pid``)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` (a copy of ``template``, if given); return its URL."""
        from datamodel.postgres import create_database

        create_database(self.url(), name, template=template)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        from datamodel.postgres import drop_database

        drop_database(self.url(), name)

    def stop(self) -> None:
        if self.root is None:
            return
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30", "stop", timeout=60)
        self._cleanup()

    def _cleanup(self) -> None:
        root, self.root = self.root, None
        if root is not None:
            for _ in range(3):
                shutil.rmtree(root, ignore_errors=True)
                if not root.exists():
                    break
                time.sleep(0.2)

    def __enter__(self) -> TemporaryPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
