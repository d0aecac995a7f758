"""How :func:`datamodel.vote_arrays.read_vote_arrays` reads the votes: the packed read (integers joined into text in
SQL) gives what a row-by-row read of the votes table gives, in vote order, whatever the number of packed words and
blocks; the exclusion and date filters are applied in SQL; a vote missing its facts stops the read."""

from __future__ import annotations

import random

import numpy as np
import pytest
from support.study import study_database

import datamodel.vote_arrays as vote_arrays
from datamodel.connection import connect
from datamodel.schema import OUTCOMES
from datamodel.vote_arrays import read_vote_arrays
from datamodel.votes import record_vote
from sampling.draws import serve_battle
from sampling.strategies import STRATEGIES
from tools.scale_fixture import ScaleSpec, build_scale_database

SPEC = ScaleSpec(votes=2_000, annotators=40, models=5, prompts=40, seed=5)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    db = study_database(tmp_path_factory.mktemp("study"), SPEC)
    db.execute("UPDATE votes SET excluded = 1 WHERE id % 7 = 3")
    db.execute("UPDATE votes SET strategy = 'active' WHERE id % 5 = 1")
    db.conn.commit()
    yield db
    db.close()


def row_by_row(db, where: str = "", params=()) -> dict[str, list]:
    """The votes as a plain query returns them, one row at a time, in id order (the reference)."""
    models = {i: name for i, name in db.execute("SELECT id, name FROM models")}
    rows = db.execute("SELECT v.annotator_id, v.voter, v.voter_kind, v.left_model_id, v.right_model_id, v.outcome, "
                      "v.left_image_id, v.right_image_id, v.strategy, v.excluded, v.voted_at FROM votes v "
                      f"{where} ORDER BY v.id", list(params)).fetchall()
    return {"voter": [a if kind == "human" else voter for a, voter, kind, *_ in rows],
            "model_a": [models[r[3]] for r in rows], "model_b": [models[r[4]] for r in rows],
            "outcome": [r[5] for r in rows], "image_a": [r[6] for r in rows], "image_b": [r[7] for r in rows],
            "strategy": [r[8] for r in rows], "excluded": [bool(r[9]) for r in rows], "time": [r[10] for r in rows]}


def shown(arrays) -> dict[str, list]:
    return {"voter": [int(v) if v >= 0 else arrays.judges[-1 - v] for v in arrays.voter],
            "model_a": [arrays.models[i] for i in arrays.model_a],
            "model_b": [arrays.models[i] for i in arrays.model_b],
            "outcome": [OUTCOMES[o] for o in arrays.outcome], "image_a": list(arrays.image_a),
            "image_b": list(arrays.image_b), "strategy": [arrays.strategies[s] for s in arrays.strategy],
            "excluded": list(arrays.excluded), "time": list(arrays.time)}


@pytest.mark.parametrize("word, ids", [(2**62, 1 << 20), (2**16, 300)], ids=["one word, one block", "many"])
def test_the_packed_read_is_the_row_by_row_read(study, monkeypatch, word, ids):
    """With the fields packed into one integer per vote read in one text, and with each field in its own integer read
    300 vote ids at a time: the same votes, in the same order, with the same codes."""
    monkeypatch.setattr(vote_arrays, "_WORD", word)
    monkeypatch.setattr(vote_arrays, "_IDS_PER_READ", ids)
    arrays = read_vote_arrays(study, STRATEGIES)
    assert shown(arrays) == row_by_row(study)
    assert list(arrays.vote_id) == [i for i, in study.execute("SELECT id FROM votes ORDER BY id")]
    assert set(arrays.strategies[s] for s in arrays.strategy) == {"uniform", "active"}
    judge = read_vote_arrays(study, STRATEGIES, voter="gpt-judge:scale-judge-2")
    assert shown(judge) == row_by_row(study, "WHERE v.voter = ?", ["gpt-judge:scale-judge-2"])


def test_excluded_votes_and_later_votes_are_left_out_in_sql(study):
    every = read_vote_arrays(study, STRATEGIES)
    until = float(np.median(every.time))
    kept = read_vote_arrays(study, STRATEGIES, include_excluded=False, until=until)
    assert shown(kept) == row_by_row(study, "WHERE v.excluded = 0 AND v.voted_at <= ?", [until])
    assert 0 < len(kept) < (~every.excluded).sum()


def test_times_are_read_only_when_asked(study):
    without = read_vote_arrays(study, STRATEGIES, times=False)
    assert np.isnan(without.time).all() and len(without) == SPEC.votes
    assert shown(without) | {"time": []} == row_by_row(study) | {"time": []}


def test_a_vote_cast_during_the_read_leaves_the_times_of_the_votes_read_in_place(study, monkeypatch):
    """The votes and their times are two queries; a vote cast between them (the server's worker reads while people
    vote) is not among the votes read, so each vote read keeps its own time, and the new vote is in the next read."""
    real = vote_arrays._read_packed

    def read_then_vote(*args, **kwargs):
        got = real(*args, **kwargs)
        people = [a for a, in study.execute("SELECT id FROM annotators ORDER BY id")]
        battle = serve_battle(study, random.Random(3), session_id="during-the-read", annotator_id=people[0])
        record_vote(study, battle.id, "A", session_id="during-the-read", rules=None)
        return got

    monkeypatch.setattr(vote_arrays, "_read_packed", read_then_vote)
    try:
        arrays = read_vote_arrays(study, STRATEGIES)
        times = dict(study.execute("SELECT id, voted_at FROM votes"))
        assert len(arrays) == len(times) - 1
        assert list(arrays.time) == [times[int(i)] for i in arrays.vote_id]
    finally:
        study.execute("DELETE FROM votes WHERE battle_id IN (SELECT id FROM battles WHERE session_id = ?)",
                      ["during-the-read"])
        study.conn.commit()


def test_a_vote_without_its_models_stops_the_read_with_its_id(study):
    (vote_id,) = study.execute("SELECT id FROM votes ORDER BY id LIMIT 1 OFFSET 10").fetchone()
    study.execute("UPDATE votes SET left_model_id = NULL WHERE id = ?", [vote_id])
    try:
        with pytest.raises(ValueError, match=rf"1 vote\(s\) lack .* \(ids {vote_id}, \.\.\.\)"):
            read_vote_arrays(study, STRATEGIES)
    finally:
        study.execute("UPDATE votes SET left_model_id = (SELECT model_id FROM images WHERE id = left_image_id) "
                      "WHERE id = ?", [vote_id])
        study.conn.commit()


def test_postgresql_reads_the_same_arrays(tmp_path, postgres_server):
    """The packed read in PostgreSQL's words (``string_agg`` in id order, 64-bit arithmetic): the arrays of a
    migrated copy equal SQLite's."""
    from datamodel.migrate_db import migrate_database

    root = tmp_path / "study"
    build_scale_database(ScaleSpec(votes=300, annotators=12, models=4, prompts=12, seed=2), root / "arena.db",
                         root / "media", progress=lambda *_: None)
    url = postgres_server.create_database("vote_arrays")
    try:
        migrate_database(root / "arena.db", url)
        sqlite, postgres = connect(root / "arena.db"), connect(url)
        for filters in ({}, {"suite": "taxonomy", "include_excluded": False, "until": 2e9}):
            mine, theirs = read_vote_arrays(sqlite, STRATEGIES, **filters), read_vote_arrays(postgres, STRATEGIES,
                                                                                               **filters)
            assert shown(theirs) == shown(mine) and len(mine)
        sqlite.close(), postgres.close()
    finally:
        postgres_server.drop_database("vote_arrays")
