"""The change logs kept bounded: ``vote_changes`` and ``kwise_vote_changes`` (:func:`datamodel.schema._vote_changes`,
:func:`datamodel.schema._four_image_vote_changes`) gain a row per vote that starts or stops counting, and
:func:`prune_change_logs` deletes the rows older than the retention (``ARENA_CHANGE_LOG_KEEP_S``), so an arena that
runs for months keeps about a retention's worth of rows instead of one per vote ever cast.

Who reads them, each from the last row it read (its own position, in memory; every process or replica has its own):

- the pairwise sampler's counts (:meth:`sampling.sampler.SamplingStats.catch_up`, every second and at each vote of
  its own, through :func:`datamodel.sampling_reads.vote_changes_since`);
- the four-image sampler's counts (:meth:`sampling.kwise_stats.KwiseStats.catch_up`, at each four-image draw,
  through :func:`datamodel.kwise.kwise_changes_since`);
- the leaderboard worker's vote arrays (:class:`datamodel.vote_arrays.VoteArraysCache`, at each snapshot).

A reader never loses a change to the pruning. Pruning deletes a prefix of the log (every row before the oldest one
logged within the retention; the newest row is always kept, so ``seq`` goes on rising: SQLite numbers a new row
from the largest one left) and records the largest ``seq`` it deleted in ``change_log_pruned``. A reader reads that
mark with its rows, in the same statement (one snapshot: :func:`pruned_mark_sql`), and :func:`missed_changes`
raises :class:`ChangesMissed` if the mark is past the last row it had read: rows it needed are gone, and the reader
reads everything again, as at start-up, so its counts equal an uncached read. A reader whose rows were pruned always
gets at least one row, and with it the mark: the newest row, which pruning keeps, comes after every row it deleted.
``seq`` follows the commit order on both engines (:func:`datamodel.schema._vote_changes`), so no row below the mark
can be committed after the pruning. (The leaderboard's vote arrays read the mark in a statement of its own, after
their rows: a pruning in between looks like a miss, one needless full read, never a miss like none.)

A reader that keeps up (the sampler reads every second while its server runs) is always past the mark; only one
that read nothing for a whole retention (a four-image suite no one drew from all day, a replica suspended) reads
everything again, once.
"""

from __future__ import annotations

import time

from datamodel.database import Database
from datamodel.dialect import pick
from datamodel.transactions import transaction

CHANGE_LOGS = ("vote_changes", "kwise_vote_changes")
PRUNE_EVERY_S = 600.0  # how often a server prunes (Store.prune_change_logs_in_background): the log holds at most
# the retention plus this much


class ChangesMissed(Exception):
    """Rows of a change log that the reader had not read were pruned (or cannot be read from the log): read
    everything again."""

    def __init__(self, log: str, after: int, reason: str):
        super().__init__(f"{log}: the rows after {after} that this reader needs {reason}; read the counts again")
        self.log, self.after = log, after


def pruned_through(db: Database, log: str) -> int:
    """The largest ``seq`` of ``log`` that pruning deleted (0: none)."""
    mark = db.execute(f"SELECT {pruned_mark_sql(log)}").fetchone()[0]
    return 0 if mark is None else int(mark)


def pruned_mark_sql(log: str) -> str:
    """The pruning's mark of ``log`` (:func:`pruned_through`) as a scalar subquery, for a reader to select with its
    rows (NULL: nothing pruned yet)."""
    return f"(SELECT through_seq FROM change_log_pruned WHERE log = '{log}')"


def missed_changes(log: str, after: int, mark: int | None) -> None:
    """Raise :class:`ChangesMissed` if ``mark`` (:func:`pruned_mark_sql`, read with the rows after ``after``) says
    rows of ``log`` after ``after`` were pruned."""
    if mark is not None and mark > after:
        raise ChangesMissed(log, after, f"were pruned (through row {mark})")


def prune_change_logs(db: Database, *, keep_s: float, now: float | None = None) -> dict[str, int]:
    """Delete the rows of each change log logged more than ``keep_s`` seconds before ``now`` (unix time; default
    the clock of this process) that come before every row logged since, keeping the newest row; record the largest
    ``seq`` deleted. One transaction per log; several replicas may run it at once. Returns the rows deleted per log."""
    cutoff = (time.time() if now is None else now) - keep_s
    deleted = {}
    for log in CHANGE_LOGS:
        with transaction(db, scope=f"prune:{log}"):  # one pruning of a log at a time (PostgreSQL: its scope's lock)
            first_kept = db.execute(
                f"SELECT coalesce((SELECT min(seq) FROM {log} WHERE logged_at >= ?), (SELECT max(seq) FROM {log}))",
                [cutoff]).fetchone()[0]
            if first_kept is None:  # an empty log
                deleted[log] = 0
                continue
            through = db.execute(f"SELECT max(seq) FROM {log} WHERE seq < ?", [first_kept]).fetchone()[0]
            if through is None:
                deleted[log] = 0
                continue
            deleted[log] = db.execute(f"DELETE FROM {log} WHERE seq <= ?", [through]).rowcount
            if db.execute("UPDATE change_log_pruned SET through_seq = ? WHERE log = ? AND through_seq < ?",
                          [through, log, through]).rowcount == 0:
                db.execute("INSERT INTO change_log_pruned (log, through_seq) SELECT ?, ? WHERE NOT EXISTS "
                           "(SELECT 1 FROM change_log_pruned WHERE log = ?)", [log, through, log])
    return deleted


def log_sizes(db: Database) -> dict[str, tuple[int, int]]:
    """(rows, bytes on disk with its indexes) per change log (SQLite's ``dbstat``: the pages its b-tree holds;
    PostgreSQL's ``pg_total_relation_size``)."""
    size = pick(db, sqlite="SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?",
                postgresql="SELECT pg_total_relation_size(?::regclass)")
    return {log: (int(db.execute(f"SELECT count(*) FROM {log}").fetchone()[0]),
                  int(db.execute(size, [log]).fetchone()[0])) for log in CHANGE_LOGS}


def date_rows_by_their_votes(db: Database) -> float:
    """Give each row of the change logs its vote's time as ``logged_at``, as if logged as the vote was cast (a
    benchmark's votes, written in bulk in one go); return the newest vote's time."""
    with db.conn:
        db.execute("UPDATE vote_changes SET logged_at = (SELECT voted_at FROM votes WHERE id = vote_id)")
        db.execute("UPDATE kwise_vote_changes SET logged_at = (SELECT voted_at FROM kwise_votes WHERE id = vote_id)")
    return float(db.execute("SELECT max(at) FROM (SELECT max(voted_at) AS at FROM votes UNION ALL "
                            "SELECT max(voted_at) FROM kwise_votes) newest").fetchone()[0])
