"""The change logs the samplers and the leaderboard's vote cache follow (``vote_changes``, ``kwise_vote_changes``)
stay bounded (:mod:`datamodel.change_logs` prunes the rows older than the retention), and a reader that had not
read the rows pruned finds out and reads everything again, so its counts still equal a fresh full read, on SQLite
and PostgreSQL."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from support.arena import seven_models
from support.votes import four_image_votes

import sampling.kwise_stats
from arena import session as sessions
from datamodel.annotators import sign_in
from datamodel.change_logs import (
    CHANGE_LOGS,
    ChangesMissed,
    date_rows_by_their_votes,
    log_sizes,
    prune_change_logs,
    pruned_through,
)
from datamodel.connection import Store, connect
from datamodel.sampling_reads import vote_changes_since
from datamodel.vote_arrays import VoteArraysCache, read_vote_arrays
from datamodel.votes import record_vote
from sampling.draws import draw_uniform, serve_battle
from sampling.kwise_stats import KwiseStats
from sampling.sampler import SamplingStats

pytestmark = pytest.mark.both_engines

KEEP_S = 3600.0
NOW = 2_000_000_000.0  # the pruning clock of most tests (2033): every row the tests log is older than NOW - KEEP_S...
RECENT = NOW - 60.0  # ...but those set to this time
LONG_AGO = 1_000_000_000.0  # what _age_all sets: older than the retention by any clock


def _pairwise_votes(db, name: str, count: int, seed: int) -> list[int]:
    annotator = sign_in(db, name, f"token-for-{name}", open_signup=True).id
    rng, ids = random.Random(seed), []
    for _ in range(count):
        battle = serve_battle(db, rng, session_id=name, annotator_id=annotator, pairing=draw_uniform(db, rng))
        ids.append(record_vote(db, battle.id, rng.choice(["A", "B", "tie", "both_bad"]), session_id=name,
                               rules=None).vote_id)
    return ids


def _four_image_votes(db, name: str, count: int, start: float) -> list[int]:
    session = sessions.start(db, name, "a-long-token-1", open_signup=True)
    return four_image_votes(db, session, count, start=start, every=60.0)


def _rows(db, log: str) -> list[int]:
    return [seq for seq, in db.execute(f"SELECT seq FROM {log} ORDER BY seq")]


def _age_all(db) -> None:
    """Every row logged so far as logged long before the retention."""
    with db.conn:
        for log in CHANGE_LOGS:
            db.execute(f"UPDATE {log} SET logged_at = ?", [LONG_AGO])


def _assert_sampler_current(stats: SamplingStats, db) -> None:
    fresh = SamplingStats().refresh(db, force=True).tables
    tables = stats.tables
    assert tables is not None and fresh is not None and tables.votes == fresh.votes
    for name in ("counts", "pair_counts", "prompt_pair_counts", "prompt_counts"):
        np.testing.assert_array_equal(getattr(tables, name), getattr(fresh, name), err_msg=name)


def _assert_kwise_current(stats: KwiseStats, db) -> None:
    fresh = KwiseStats().refresh(db, force=True)
    models = tuple(sorted(fresh.known_models()))
    cached, uncached = stats.state(models), fresh.state(models)
    assert cached.total == uncached.total
    np.testing.assert_array_equal(cached.appearances, uncached.appearances)
    np.testing.assert_array_equal(cached.pair_counts, uncached.pair_counts)
    index = [stats._index[m] for m in models]
    np.testing.assert_array_equal(stats.wins[np.ix_(index, index)],
                                  fresh.wins[np.ix_([fresh._index[m] for m in models], [fresh._index[m] for m in
                                                                                         models])])


def test_pruning_deletes_the_rows_older_than_the_retention_and_no_newer_one(small_arena):
    db = seven_models(small_arena)
    _pairwise_votes(db, "ann", 6, seed=1)
    _four_image_votes(db, "kim", 5, start=1_700_000_000.0)
    _age_all(db)
    _pairwise_votes(db, "ben", 3, seed=2)
    _four_image_votes(db, "lee", 2, start=1_700_100_000.0)
    with db.conn:
        for log in CHANGE_LOGS:  # the newest rows: inside the retention
            db.execute(f"UPDATE {log} SET logged_at = ? WHERE logged_at > ?", [RECENT, LONG_AGO])
    before = {log: _rows(db, log) for log in CHANGE_LOGS}
    assert [len(before[log]) for log in CHANGE_LOGS] == [9, 7]
    deleted = prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    assert deleted == {"vote_changes": 6, "kwise_vote_changes": 5}
    for log in CHANGE_LOGS:
        kept = before[log][deleted[log]:]
        assert _rows(db, log) == kept  # the rows inside the retention, every one of them
        assert pruned_through(db, log) == before[log][deleted[log] - 1]
    assert prune_change_logs(db, keep_s=KEEP_S, now=NOW) == {"vote_changes": 0, "kwise_vote_changes": 0}


def test_the_log_stays_bounded_and_keeps_its_newest_row(small_arena):
    """However many votes come, a pruned log holds the retention's rows; when every row is older, it keeps the newest
    one, so the next row's ``seq`` continues the numbering (SQLite gives a new row the largest ``seq`` plus one)."""
    db = small_arena.db
    sizes = []
    for day in range(4):
        _pairwise_votes(db, f"voter{day}", 8, seed=day)
        _age_all(db)
        prune_change_logs(db, keep_s=KEEP_S, now=NOW)
        sizes.append(len(_rows(db, "vote_changes")))
    assert sizes == [1, 1, 1, 1]
    newest = _rows(db, "vote_changes")[0]
    assert newest == 32 and pruned_through(db, "vote_changes") == 31
    _pairwise_votes(db, "late", 1, seed=9)
    assert _rows(db, "vote_changes") == [32, 33]
    sizes = log_sizes(db)
    assert sizes["vote_changes"][0] == 2 and sizes["kwise_vote_changes"][0] == 0
    assert sizes["vote_changes"][1] > 0  # bytes: the benchmark's figure


def test_a_benchmark_dates_the_rows_by_their_votes(small_arena):
    db = seven_models(small_arena)
    _pairwise_votes(db, "ann", 3, seed=1)
    _four_image_votes(db, "kim", 2, start=1_700_000_000.0)
    assert date_rows_by_their_votes(db) == max(
        db.execute("SELECT max(voted_at) FROM votes").fetchone()[0], 1_700_000_060.0)
    assert db.execute("SELECT count(*) FROM kwise_vote_changes c JOIN kwise_votes v ON v.id = c.vote_id "
                      "WHERE c.logged_at = v.voted_at").fetchone()[0] == 2


def test_a_reader_behind_the_pruned_rows_is_told(small_arena):
    db = small_arena.db
    _pairwise_votes(db, "ann", 4, seed=1)
    assert [row[0] for row in vote_changes_since(db, 0)] == [1, 2, 3, 4]
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    with pytest.raises(ChangesMissed, match="vote_changes"):
        vote_changes_since(db, 2)
    assert [row[0] for row in vote_changes_since(db, 3)] == [4]  # read up to row 3: nothing it needs is gone


def test_a_sampler_behind_the_pruned_rows_reads_again_and_counts_as_a_fresh_read(small_arena):
    db = small_arena.db
    now = [0.0]
    stats = SamplingStats(clock=lambda: now[0]).refresh(db)
    votes = _pairwise_votes(db, "ann", 10, seed=1)  # another replica's votes, its flag flips and a deletion
    with db.conn:
        db.execute("UPDATE votes SET excluded = 1 WHERE id IN (?, ?)", votes[:2])
        db.execute("DELETE FROM votes WHERE id = ?", [votes[2]])
    _pairwise_votes(db, "ben", 3, seed=2)
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    assert len(_rows(db, "vote_changes")) == 1
    tables = stats.tables
    now[0] = 10.0
    stats.refresh(db)
    stats.wait(30)
    assert stats.tables is not tables  # read again...
    _assert_sampler_current(stats, db)  # ...so it counts what a fresh read counts: 10 - 2 excluded - 1 deleted + 3
    assert stats.tables.votes == 10
    _pairwise_votes(db, "cat", 2, seed=3)  # and it goes on by the log
    tables = stats.tables
    now[0] = 20.0
    stats.refresh(db)
    assert stats.tables is tables and stats.tables.votes == 12
    _assert_sampler_current(stats, db)


def test_a_current_sampler_is_unaffected_by_pruning(small_arena):
    db = small_arena.db
    now = [0.0]
    stats = SamplingStats(clock=lambda: now[0]).refresh(db)
    _pairwise_votes(db, "ann", 6, seed=1)
    now[0] = 10.0
    stats.refresh(db)
    tables = stats.tables
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    votes = _pairwise_votes(db, "ben", 3, seed=2)
    with db.conn:
        db.execute("UPDATE votes SET excluded = 1 WHERE id = ?", [votes[0]])
    now[0] = 20.0
    stats.refresh(db)
    assert stats.tables is tables and tables.votes == 8  # no full read: the rows it needs are all there
    _assert_sampler_current(stats, db)


def test_a_four_image_reader_behind_the_pruned_rows_reads_again(small_arena, monkeypatch):
    db = seven_models(small_arena)
    stats = KwiseStats().refresh(db)
    votes = _four_image_votes(db, "kim", 8, start=1_700_000_000.0)
    with db.conn:
        db.execute("UPDATE kwise_votes SET excluded = 1 WHERE id = ?", [votes[0]])
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    reads = []
    monkeypatch.setattr(sampling.kwise_stats, "kwise_counts_read",
                        lambda db, read=sampling.kwise_stats.kwise_counts_read: reads.append(1) or read(db))
    stats.refresh(db)
    assert reads == [1] and stats.total == 7
    _assert_kwise_current(stats, db)


def test_threads_that_find_the_four_image_counts_behind_read_them_once(small_arena, monkeypatch):
    db = seven_models(small_arena)
    stats = KwiseStats().refresh(db)
    _four_image_votes(db, "kim", 4, start=1_700_000_000.0)
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    reads = []
    monkeypatch.setattr(sampling.kwise_stats, "kwise_counts_read",
                        lambda db, read=sampling.kwise_stats.kwise_counts_read: reads.append(1) or read(db))
    start = threading.Barrier(4)

    def draw() -> None:
        own = connect(small_arena.settings.database)
        try:
            start.wait()
            stats.refresh(own)
        finally:
            own.close()

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert reads == [1] and stats.total == 4  # one read; the threads that waited for it went on by the log
    _assert_kwise_current(stats, db)


def test_a_current_four_image_reader_is_unaffected_by_pruning(small_arena, monkeypatch):
    db = seven_models(small_arena)
    _four_image_votes(db, "kim", 5, start=1_700_000_000.0)
    stats = KwiseStats().refresh(db)
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    _four_image_votes(db, "lee", 3, start=1_700_100_000.0)
    reads = []
    monkeypatch.setattr(sampling.kwise_stats, "kwise_counts_read", lambda db: reads.append(1))
    stats.refresh(db)
    assert reads == [] and stats.total == 8
    monkeypatch.undo()
    _assert_kwise_current(stats, db)


def test_a_four_image_vote_deleted_with_its_battle_is_not_lost(small_arena):
    """Deleting a counted four-image vote and then its battle (an erasure) leaves a −1 row whose battle is gone: the
    reader cannot count it from the log, so it reads everything again instead of skipping it."""
    db = seven_models(small_arena)
    votes = _four_image_votes(db, "kim", 6, start=1_700_000_000.0)
    stats = KwiseStats().refresh(db)
    assert stats.total == 6
    with db.conn:
        battle, = db.execute("SELECT battle_id FROM kwise_votes WHERE id = ?", [votes[1]]).fetchone()
        db.execute("DELETE FROM kwise_votes WHERE id = ?", [votes[1]])
        db.execute("DELETE FROM kwise_battles WHERE id = ?", [battle])
    stats.refresh(db)
    assert stats.total == 5
    _assert_kwise_current(stats, db)


def test_the_leaderboard_cache_reads_a_slice_again_after_pruning_past_it(small_arena):
    db = small_arena.db
    cache = VoteArraysCache()
    _pairwise_votes(db, "ann", 5, seed=1)
    held = cache.read(db)
    votes = _pairwise_votes(db, "ben", 4, seed=2)
    with db.conn:
        db.execute("UPDATE votes SET excluded = 1 WHERE id = ?", [votes[0]])
    _age_all(db)
    prune_change_logs(db, keep_s=KEEP_S, now=NOW)
    arrays = cache.read(db)
    fresh = read_vote_arrays(db)
    assert arrays is not held and len(arrays) == len(fresh) == 9
    np.testing.assert_array_equal(arrays.vote_id, fresh.vote_id)
    np.testing.assert_array_equal(arrays.excluded, fresh.excluded)


def test_the_server_prunes_in_the_background(small_arena):
    db = small_arena.db
    _pairwise_votes(db, "ann", 5, seed=1)
    _age_all(db)
    store = Store(small_arena.settings.database)
    try:
        store.prune_change_logs_in_background(keep_s=KEEP_S, every_s=0.05)
        for _ in range(200):
            if len(_rows(db, "vote_changes")) == 1:
                break
            store._stop.wait(0.05)
        assert _rows(db, "vote_changes") == [5]
    finally:
        store.close()


def test_the_retention_setting_refuses_a_negative_time():
    from core.settings import Settings, SettingsError

    assert Settings().change_log_keep_s == 86_400.0
    with pytest.raises(SettingsError, match="ARENA_CHANGE_LOG_KEEP_S"):
        Settings(change_log_keep_s=-1.0)
