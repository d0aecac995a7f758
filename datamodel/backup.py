"""A consistent online copy of the database (``python -m arena backup DEST``), taken while the app serves.

SQLite's online backup API (``sqlite3.Connection.backup``, https://sqlite.org/backup.html) copies the pages of one
read transaction: the copy is the database as of one moment, with every transaction committed before the copy began
and none half-written. Copying in steps would restart whenever the app writes between them, so the copy runs in one
step (``pages=-1``), which holds a WAL read snapshot and never blocks the app's writers (its WAL keeps the
newer pages meanwhile). The copy is written to a temporary file beside ``dest``, checked with ``PRAGMA
integrity_check``, switched to a rollback journal (one self-contained file) and then renamed into place, so
``dest`` is either absent or a whole, checked copy.

The copy holds what the database holds (token hashes included), so the temporary file and the copy are readable by
their owner only (mode 0600), and a temporary file that a killed backup left beside ``dest`` is deleted by the next
backup. The source is opened read-only by a URI whose path is percent-encoded, so a ``#``, ``?`` or ``%`` in a file
name is part of the name (unencoded, ``#`` would end the path and ``%41`` name another file).

For continuous replication to object storage use Litestream (docs/deploying.md, "Backups"); this command is the plain
point-in-time copy for a cron job or before an upgrade.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path


class BackupError(ValueError):
    """A backup that could not be made or did not pass its check; the message says what to do."""


@dataclass(frozen=True)
class Backup:
    path: Path
    votes: int
    integrity: str
    seconds: float


def backup_database(source: str | Path, dest: str | Path, *, overwrite: bool = False) -> Backup:
    """Copy the SQLite database ``source`` to ``dest`` consistently while others read and write it (module
    docstring); the copy's vote count and ``integrity_check`` result."""
    source, dest = Path(source), Path(dest)
    if not source.exists():
        raise BackupError(f"No database at {source}: check ARENA_DB (or --config), then back up again.")
    if dest.exists() and not overwrite:
        raise BackupError(f"{dest} already exists. Use --overwrite to replace it, or choose another path.")
    if dest.resolve() == source.resolve():
        raise BackupError(f"{dest} is the database itself: choose another path for the copy.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(dest)
    partial = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    started = time.perf_counter()
    reader = sqlite3.connect(read_only_uri(source), uri=True, timeout=30.0)
    try:
        partial.unlink(missing_ok=True)
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))  # private before a byte is copied
        writer = sqlite3.connect(partial)
        try:
            reader.backup(writer, pages=-1)
            writer.execute("PRAGMA journal_mode = DELETE")  # a copy is one self-contained file, no -wal beside it
            integrity = writer.execute("PRAGMA integrity_check").fetchone()[0]
            votes = writer.execute("SELECT count(*) FROM votes").fetchone()[0] if writer.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'votes'").fetchone() else 0
        finally:
            writer.close()
        if integrity != "ok":
            raise BackupError(f"The copy of {source} failed its integrity check ({integrity}); the source may be "
                              f"damaged: run `sqlite3 {source} 'PRAGMA integrity_check'` and restore a backup.")
        for leftover in (dest.with_name(dest.name + "-wal"), dest.with_name(dest.name + "-shm")):
            leftover.unlink(missing_ok=True)  # an old copy's WAL would be replayed onto the new file
        os.replace(partial, dest)
    except sqlite3.Error as error:
        raise BackupError(f"Backing up {source} to {dest} failed ({error}); check the disk space and permissions "
                          f"at {dest.parent}, then try again.") from None
    finally:
        reader.close()
        partial.unlink(missing_ok=True)
    return Backup(dest, votes, integrity, time.perf_counter() - started)


def read_only_uri(path: str | Path) -> str:
    """An SQLite URI opening the file ``path`` read-only, its path percent-encoded (``#``, ``?`` and ``%`` included)."""
    return f"file:{urllib.parse.quote(str(Path(path).resolve()), safe='/')}?mode=ro"


def _remove_abandoned(dest: Path) -> None:
    """Delete the temporary copies that backups to ``dest`` killed before their rename left behind (their process is
    gone)."""
    for leftover in dest.parent.glob(f".{dest.name}.partial-*"):
        pid = leftover.name.rpartition("-")[2]
        if pid.isdigit() and not _running(int(pid)):
            leftover.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
