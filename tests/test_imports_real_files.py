"""Real files in: a peer arena's battle log and the taxonomy paper's public labelled battles import as released, say
what they held, and reach every report that reads votes.

The taxonomy rows are the authors' own (tests/data/taxonomy/SOURCE.md); the peer log is written here in the exact
shape of a FastChat ``clean_battle`` log of a text-to-image arena (about 2,000 battles, one a model against itself,
cast in a side-by-side session with the names shown), since such logs are not redistributable.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.arena import empty_arena_env

from arena.commands import main as arena
from datamodel.connection import connect

DATA = Path(__file__).parent / "data" / "taxonomy"
PUBLIC = DATA / "public_battles.csv"
REPEATED = DATA / "repeated_concepts.csv"
REGISTRY = {"sd-v1-5", "sdxl", "sdxl-turbo", "kandinsky-3", "playground-v2.5", "openjourney", "deepfloyd-if", "sd3",
            "pixart-sigma-512", "hunyuan-dit", "flux-dev", "retrieval"}
PAPER_NAMES = {"SD1.5", "SDXL", "SDXL-turbo", "Kandinsky3", "Playground", "Openjourney", "DeepFloyd", "SD3", "PixArt",
               "HDiT", "FLUX", "Retrieval"}


@pytest.fixture
def env(tmp_path, monkeypatch):
    return empty_arena_env(monkeypatch, tmp_path)


def run(capsys, *argv: str, command=arena) -> str:
    capsys.readouterr()
    assert command(list(argv)) == 0, capsys.readouterr().err
    return capsys.readouterr().out


# --- a peer arena's FastChat log with a self-battle -----------------------------------------------------------------

T2I_MODELS = ["SDXL-Lightning", "PlayGround V2.5", "StableCascade", "SD3", "PixArt-Sigma", "Kolors", "FLUX.1-schnell",
              "SDXL-turbo", "LCM(v1.5/XL)", "OpenJourney"]


def peer_log(path: Path, battles: int = 2000, self_battle_at: int = 1234) -> Path:
    """FastChat's clean_battle records as a text-to-image arena publishes them: question_id, model_a, model_b,
    winner (model_a | model_b | tie | tie (bothbad)), judge, turn, anony, language, tstamp; mostly anonymous battles,
    some side-by-side ones (names shown), and at ``self_battle_at`` a side-by-side battle of a model with itself."""
    rng = np.random.default_rng(20240601)
    strength = dict(zip(T2I_MODELS, np.linspace(900, 1150, len(T2I_MODELS))))
    records = []
    for k in range(battles):
        a, b = rng.choice(T2I_MODELS, 2, replace=False)
        anony = bool(rng.random() < 0.8)
        if k == self_battle_at:
            a, b, anony = "SD3", "SD3", False
        p_a = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        draw = rng.random()
        winner = ("tie" if draw < 0.1 else "tie (bothbad)" if draw < 0.18 else
                  "model_a" if rng.random() < p_a else "model_b")
        records.append({"question_id": f"{rng.integers(1 << 60):016x}", "model_a": str(a), "model_b": str(b),
                        "winner": winner, "judge": f"arena_user_{rng.integers(400)}", "turn": 1, "anony": anony,
                        "language": "English", "tstamp": 1717200000.0 + 37.5 * k})
    path.write_text(json.dumps(records, indent=1))
    return path


def compute_elo_mle_with_tie(battles: pd.DataFrame) -> pd.Series:
    """FastChat's compute_elo_mle_with_tie as published (elo_analysis.py, Dec 2023): the battles duplicated, the
    design X[i, a] = +ln 10 then X[i, b] = -ln 10, y = 1 for a model_a win and for the first copy of a tie,
    scikit-learn's LogisticRegression(fit_intercept=False) with its defaults, 400 w + 1000."""
    from sklearn.linear_model import LogisticRegression

    models = pd.concat([battles["model_a"], battles["model_b"]]).unique()
    column = pd.Series(np.arange(len(models)), index=models)
    doubled = pd.concat([battles, battles], ignore_index=True)
    n = len(doubled)
    x = np.zeros([n, len(models)])
    x[np.arange(n), column[doubled["model_a"]]] = +math.log(10)
    x[np.arange(n), column[doubled["model_b"]]] = -math.log(10)
    y = np.zeros(n)
    y[(doubled["winner"] == "model_a").to_numpy()] = 1.0
    tie = doubled["winner"].isin(["tie", "tie (bothbad)"]).to_numpy().copy()
    tie[len(tie) // 2:] = False
    y[tie] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = LogisticRegression(fit_intercept=False).fit(x, y)
    return pd.Series(400 * fitted.coef_[0] + 1000, index=models)


def board(capsys, *options: str) -> pd.Series:
    out = run(capsys, "leaderboard", "--fresh", "--json", "--rounds", "10", *options)
    return pd.Series({row["model"]: row["rating"] for row in json.loads(out)["models"]})


def test_a_peer_arenas_log_with_a_self_battle_imports_and_rates_as_its_board_did(env, capsys):
    pytest.importorskip("sklearn", reason="scikit-learn (the dev extra) is FastChat's own fit")
    log = peer_log(env / "clean_battle_t2i.json")
    out = run(capsys, "import-votes", str(log), "--format", "fastchat", "--source", "peer", "--quiet")
    assert "Imported 2000 of 2000 votes (2000 records)" in out
    assert "Flagged: 1 record(s) self_battle (model_a and model_b are the same model): kept, flagged" in out
    battles = pd.DataFrame(json.loads(log.read_text()))
    # the "all votes" board counts the self-battle as FastChat's fit does
    ours = board(capsys, "--source", "peer", "--protocol", "fastchat-2023")
    reference = compute_elo_mle_with_tie(battles)
    assert np.abs(ours - reference.reindex(ours.index)).max() < 0.01
    without = compute_elo_mle_with_tie(battles[battles["model_a"] != battles["model_b"]])
    assert np.abs(ours - without.reindex(ours.index)).max() > 0.01  # deleting the record by hand is off
    # the anonymous board, where the record does not occur, is the same either way
    anonymous = board(capsys, "--source", "peer", "--protocol", "fastchat-2023", "--anonymous-only")
    only = compute_elo_mle_with_tie(battles[battles["anony"]])
    assert np.abs(anonymous - only.reindex(anonymous.index)).max() < 0.01
    # the arena's own protocol leaves it out, and says so
    summary = json.loads(run(capsys, "leaderboard", "--fresh", "--json", "--rounds", "10", "--source", "peer"))
    assert summary["flagged"] == {"self_battle": 1} and summary["flagged_rule"].startswith("left out of the fit")
    text = run(capsys, "leaderboard", "--fresh", "--rounds", "10", "--source", "peer")
    assert "1 imported vote flagged (self_battle 1): left out of the fit" in text


def test_refuse_and_skip_say_what_they_did_with_the_self_battle(env, capsys):
    log = peer_log(env / "clean_battle_t2i.json", battles=300, self_battle_at=120)
    assert arena(["import-votes", str(log), "--format", "fastchat", "--invalid", "refuse", "--quiet"]) == 2
    error = capsys.readouterr().err
    assert f"{log}: record 121: model_a and model_b are the same model (model_a 'SD3', model_b 'SD3'" in error
    assert "Nothing was imported" in error
    out = run(capsys, "import-votes", str(log), "--format", "fastchat", "--invalid", "skip", "--quiet")
    assert "Imported 299 of 299 votes (300 records)" in out and "skipped: not imported" in out


# --- the taxonomy paper's public labelled battles -------------------------------------------------------------------

def public_rows() -> list[dict]:
    with PUBLIC.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_public_taxonomy_battles_import_under_the_registry_names(env, capsys):
    out = run(capsys, "import-votes", str(PUBLIC), "--format", "taxonomy", "--quiet")
    assert "Imported 6884 of 6884 votes (1721 records)" in out  # four labelled columns per battle
    assert "mapped with the aliases of preset taxonomy-paper" in out
    db = connect(env / "arena.db")
    assert {name for name, in db.execute("SELECT name FROM models")} == REGISTRY
    assert db.execute("SELECT count(DISTINCT battle_key) FROM imported_votes").fetchone()[0] == 2 * 1721


def test_a_labelled_file_without_an_id_column_names_its_battles_by_row(env, capsys):
    rows = public_rows()
    path = env / "labels_without_id.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, [c for c in rows[0] if c != "id"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    out = run(capsys, "import-votes", str(path), "--format", "taxonomy", "--quiet")
    assert "Imported 6884 of 6884 votes (1721 records)" in out
    first = connect(env / "arena.db").execute("SELECT original_id FROM imported_votes ORDER BY id LIMIT 1")
    assert first.fetchone()[0] == "row 1:result_human_def"


def test_repeated_concepts_of_the_benchmark_merge_into_one_concept(env, capsys):
    """In the public rows 130 (subset, wordnet_id) concepts were battled twice (again when FLUX was added): the
    benchmark import keeps one concept with the same two prompts for each, and says how many rows it merged."""
    out = run(capsys, "suites", "import", "taxonomy-bench", str(REPEATED))
    assert "260 prompts written (260 new" in out
    assert "130 rows repeat a concept of an earlier row (subset and wordnet_id): merged into it" in out
    db = connect(env / "arena.db")
    assert db.execute("SELECT count(DISTINCT item_key || subset) FROM prompts WHERE suite = 'taxonomy'").fetchone()[
        0] == 130
    assert arena(["suites", "import", "taxonomy-bench", str(REPEATED), "--invalid", "refuse"]) == 2
    error = capsys.readouterr().err
    assert "repeated_concepts.csv:7: subset appendix, wordnet_id 7922764 repeats the concept first at line 5" in error


def report_json(capsys, *options: str) -> dict:
    return json.loads(run(capsys, "report", "taxonomy", "--json", "--no-figures", *options))


def table_of(report: dict, number: str) -> dict:
    return next(table for table in report["tables"] if table["number"] == number)


def test_the_taxonomy_report_reads_the_imported_votes_under_the_papers_names(env, capsys):
    run(capsys, "import-votes", str(PUBLIC), "--format", "taxonomy", "--quiet")
    report = report_json(capsys, "--compare-published")
    assert any("1721 human votes with the definition" in line for line in report["provenance"]), report["provenance"]
    for number in ("3", "4", "5", "6"):
        table = table_of(report, number)
        assert {row["label"] for row in table["rows"]} == PAPER_NAMES
        for row in table["rows"]:
            for key in ("Easy", "Hypo", "Hyper", "Mix", "P-Easy", "P-Hypo", "P-Hyper", "P-Mix"):
                cell = row["cells"][key]
                assert cell["value"] is not None and cell["paper"], (number, row["label"], key, cell)
    # --source like the leaderboard's: the arena's own votes alone have nothing to rate
    own = report_json(capsys, "--source", "arena")
    assert all(cell["value"] is None for row in table_of(own, "5")["rows"] for cell in row["cells"].values())
    imported = report_json(capsys, "--source", "taxonomy")
    assert table_of(imported, "5") == table_of(report_json(capsys), "5")
