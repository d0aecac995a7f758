"""Exports peers read (issue 19): FastChat's battle records, fed to FastChat's own rating code (the ``fschat``
package), give our ratings; the Hugging Face folder loads with ``datasets.load_dataset`` and holds the original image
bytes; the optional push goes through ``huggingface_hub`` (mocked: no network here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from support.cache import build_once

from arena.commands import main
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.vote_table import FASTCHAT_WINNER, export_votes, votes_frame
from ratings.elo import online_elo
from ratings.leaderboard import fit_leaderboard
from tools.scale_fixture import ScaleSpec, build_scale_database

ROOT = Path(__file__).resolve().parents[1]
FASTCHAT_PINS = (["fschat==0.2.36"], ["scikit-learn==1.9.1", "threadpoolctl"])  # elo_analysis needs sklearn

# Run by the project's interpreter with fschat on PYTHONPATH: FastChat's elo_analysis on the exported file, read and
# filtered as its report_elo_analysis_results does (sorted by tstamp, anonymous battles only).
FASTCHAT_RUN = r"""
import importlib.util, json, sys, types
from pathlib import Path
import pandas as pd
spec = importlib.util.find_spec("fastchat")
package = types.ModuleType("fastchat.model")  # skip fastchat.model's __init__ (torch model adapters), as the bench
package.__path__ = [str(Path(spec.origin).parent / "model")]
sys.modules.setdefault("fastchat.model", package)
from fastchat.serve.monitor import elo_analysis
battles = pd.read_json(sys.argv[1])
battles = battles.sort_values(ascending=True, by=["tstamp"])
battles = battles[battles["anony"]].reset_index(drop=True)
print(json.dumps({"online": elo_analysis.compute_elo(battles),
                  "mle": elo_analysis.compute_elo_mle_with_tie(battles).to_dict(), "n": len(battles)}))
"""


def fastchat_path() -> Path:
    """fschat 0.2.36 and scikit-learn, pip-installed (without their torch/gradio dependencies) into a folder of the
    test artefact cache once per set of pins; skips when pip cannot reach them."""

    def install(target: Path) -> None:
        for packages in FASTCHAT_PINS:
            done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                                   str(target), *packages], capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                pytest.skip(f"cannot install {' '.join(packages)} (no network or index?): {done.stderr[-300:]}")

    return build_once("fastchat", (), install, extra=f"{sys.version_info[:2]} {FASTCHAT_PINS}")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("peers")
    build_scale_database(ScaleSpec(votes=1_500, annotators=30, models=5, prompts=30), root / "arena.db",
                         root / "media", progress=lambda *_: None)
    db = connect(root / "arena.db")
    with db.conn:  # distinct vote times (FastChat sorts by tstamp with an unstable sort) and a language on one prompt
        db.execute("UPDATE votes SET voted_at = 1790000000 + id * 1.5")
        db.execute("UPDATE prompts SET metadata = json_set(metadata, '$.language', 'German') WHERE id = 1")
    frame = votes_frame(db)
    assert frame["excluded"].any() and set(frame["outcome"]) == set(FASTCHAT_WINNER)
    yield db, MediaStore(root / "media"), root
    db.close()


def test_the_fastchat_export_has_fastchats_fields_and_meanings(study, tmp_path):
    db, media, _ = study
    assert export_votes(db, tmp_path / "battles.json", "fastchat") == int((~votes_frame(db)["excluded"]).sum())
    battles = json.loads((tmp_path / "battles.json").read_text())
    frame = votes_frame(db, include_excluded=False)
    assert len(battles) == len(frame)
    first, row = battles[0], frame.iloc[0]
    assert {"question_id", "model_a", "model_b", "winner", "judge", "turn", "anony", "language", "tstamp"} <= set(first)
    assert first["judge"] == row["voter"] and first["turn"] == 1 and first["anony"] is True
    assert first["winner"] == FASTCHAT_WINNER[row["outcome"]]
    assert first["tstamp"] == db.execute("SELECT voted_at FROM votes WHERE id = ?", [int(row["vote_id"])]).fetchone()[0]
    assert {b["winner"] for b in battles} == {"model_a", "model_b", "tie", "tie (bothbad)"}
    assert {b["language"] for b in battles} == {"German", "unknown"}
    judges = {b["judge"] for b in battles if b["voter_kind"] == "judge"}
    assert judges and all(judges)  # the voter, for judges too


@pytest.mark.install
def test_fastchats_own_rating_code_gives_our_ratings(study, tmp_path):
    db, _, _ = study
    export_votes(db, tmp_path / "battles.json", "fastchat")
    done = subprocess.run([sys.executable, "-c", FASTCHAT_RUN, str(tmp_path / "battles.json")], capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(fastchat_path()), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    votes = votes_frame(db, include_excluded=False)
    assert theirs["n"] == len(votes)
    # Online Elo (K=4, ties and both-bad as half a win): the same sequential updates, so the same numbers.
    ours = online_elo(votes, tie_policy="half")
    assert theirs["online"] == pytest.approx(ours.to_dict(), abs=1e-9)
    # Bradley-Terry: FastChat's logistic regression keeps scikit-learn's L2 penalty (C=1), which pulls the ratings
    # slightly toward 1000; with 1,500 votes the two fits agree to a fraction of an Elo point and in order.
    board = fit_leaderboard(votes, tie_policy="half", rounds=1, min_votes=0).set_index("model")["rating"]
    mle = pd.Series(theirs["mle"])
    assert list(mle.sort_values().index) == list(board.sort_values().index)
    assert (mle - board.reindex(mle.index)).abs().max() < 1.0


def test_the_cli_writes_fastchat_and_refuses_a_push_without_hf(study, tmp_path, monkeypatch, capsys):
    db, _, root = study
    monkeypatch.setenv("ARENA_DB", str(root / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(root / "media"))
    assert main(["export", str(tmp_path / "b.json"), "--format", "fastchat"]) == 0
    assert "votes to" in capsys.readouterr().out
    assert main(["export", str(tmp_path / "b.json"), "--format", "fastchat", "--push-to", "me/votes"]) == 2
    assert "add --format hf" in capsys.readouterr().err


def test_the_hf_folder_loads_with_datasets_and_holds_the_original_images(study, tmp_path):
    datasets = pytest.importorskip("datasets")
    db, media, _ = study
    folder = tmp_path / "hf"
    rows = export_votes(db, folder, "hf", media=media)
    frame = votes_frame(db, include_excluded=False)
    assert rows == len(frame)
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0\n") and "| `image_a` | image |" in card
    cache = str(tmp_path / "cache")  # not the user's ~/.cache
    for loaded in (datasets.load_dataset(str(folder), split="train", cache_dir=cache),
                   datasets.load_dataset("parquet", data_files=str(folder / "data" / "*.parquet"), split="train",
                                         cache_dir=cache)):
        assert loaded.num_rows == len(frame)
        assert isinstance(loaded.features["image_a"], datasets.Image)
        assert loaded[0]["image_a"].size[0] > 0  # decoded as a PIL image
    raw = (loaded.cast_column("image_a", datasets.Image(decode=False))
           .cast_column("image_b", datasets.Image(decode=False)))
    paths = dict(db.execute("SELECT id, media_hash || '.' || media_ext FROM images").fetchall())
    for k in (0, len(frame) // 2, len(frame) - 1):
        row, vote = raw[k], frame.iloc[k]
        assert row["vote_id"] == vote["vote_id"] and row["prompt"] == vote["prompt"]
        assert (row["model_a"], row["model_b"]) == (vote["model_a"], vote["model_b"])
        assert row["winner"] == FASTCHAT_WINNER[vote["outcome"]]
        assert (row["voter_kind"], row["suite"], row["subset"]) == (vote["voter_kind"], vote["suite"], vote["subset"])
        for side, image_id in (("image_a", vote["image_a_id"]), ("image_b", vote["image_b_id"])):
            name = paths[int(image_id)]
            assert row[side]["bytes"] == media.path(*name.split(".")).read_bytes()  # the original bytes


def test_the_push_uploads_the_folder_through_huggingface_hub(tmp_path, monkeypatch):
    import huggingface_hub

    from datamodel.hf_export import push_to_hub

    calls = []

    class FakeApi:
        def __init__(self, token=None):
            calls.append(("token", token))

        def create_repo(self, repo_id, **kwargs):
            calls.append(("create", repo_id, kwargs["repo_type"], kwargs["private"]))

        def upload_folder(self, **kwargs):
            calls.append(("upload", kwargs["folder_path"], kwargs["repo_id"], kwargs["repo_type"]))

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    assert push_to_hub(tmp_path, "me/arena-votes", token="hf_x") == "https://huggingface.co/datasets/me/arena-votes"
    assert calls == [("token", "hf_x"), ("create", "me/arena-votes", "dataset", True),
                     ("upload", str(tmp_path), "me/arena-votes", "dataset")]


def test_a_push_without_a_token_says_how_to_log_in(tmp_path, monkeypatch):
    import huggingface_hub
    from huggingface_hub.errors import LocalTokenNotFoundError

    from datamodel.hf_export import push_to_hub

    class NoToken:
        def __init__(self, token=None):
            pass

        def create_repo(self, *args, **kwargs):
            raise LocalTokenNotFoundError("no token")

    monkeypatch.setattr(huggingface_hub, "HfApi", NoToken)
    with pytest.raises(ValueError, match="set HF_TOKEN"):
        push_to_hub(tmp_path, "me/arena-votes")
