"""The four-image votes' export (``python -m arena export FILE --format four-image``): one JSON object per vote in the
documented shape (docs/running-a-study.md#exports-other-tools-read), the models and image ids of the four slots."""

import json
import random

from support.arena import command_line_env
from support.votes import four_image_votes

from arena import session as sessions
from arena.commands import main
from arena.four_image_session import next_four, vote_four
from datamodel.kwise import KWISE_COLUMNS


def test_the_export_carries_each_vote_with_its_slots_models_and_image_ids(small_arena, monkeypatch, tmp_path,
                                                                            capsys):
    db = small_arena.db
    session = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    sitting, picks = None, [(2, 4), (1, None)]
    for best, worst in picks:
        sitting = next_four(db, random.Random(best), session, sitting, suites=["taxonomy"], strategy="ksort-ucb")
        sitting = vote_four(db, session, sitting, best=best, worst=worst, on_screen=sitting.battle.media_token)
    model_of = dict(db.execute("SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id").fetchall())
    db.close()
    command_line_env(small_arena, monkeypatch, tmp_path)
    assert main(["export", str(tmp_path / "four.jsonl"), "--format", "four-image"]) == 0
    assert "Wrote 2 votes" in capsys.readouterr().out
    lines = [json.loads(line) for line in (tmp_path / "four.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [list(line) for line in lines] == [list(KWISE_COLUMNS)] * 2
    for line, (best, worst) in zip(lines, picks):
        images = [line[f"image_id_{slot}"] for slot in range(1, 5)]
        assert [line[f"model_{slot}"] for slot in range(1, 5)] == [model_of[i] for i in images]
        assert (line["best"], line["worst"]) == (best, worst)
        assert line["best_model"] == model_of[images[best - 1]]
        assert line["worst_model"] == (None if worst is None else model_of[images[worst - 1]])
        assert line["annotator"] == "kim" and line["suite"] == "taxonomy" and line["excluded"] is False
        assert line["strategy"] == "ksort-ucb" and line["prompt"]
    assert main(["export", str(tmp_path / "pairs.jsonl")]) == 0  # the pairwise export holds no four-image vote
    assert (tmp_path / "pairs.jsonl").read_text(encoding="utf-8") == ""


def test_the_export_says_why_a_vote_does_not_count_as_the_pairwise_export_does(small_arena, monkeypatch, tmp_path):
    """``excluded_reason`` and ``reviewed``, with the pairwise export's values: the rules' reason of a set-aside vote,
    an admin's decision before it ("included by an admin: ... (was: ...)"), empty for a vote that counts unremarked."""
    from datamodel.reviews import review_votes

    db = small_arena.db
    kim = sessions.start(db, "kim", "a-long-token-1", open_signup=True)
    ids = four_image_votes(db, kim, 12, start=1000.0, every=2.0)  # the speed rule sets all twelve aside
    first, last = ids[0], ids[-1]
    review_votes(db, exclude=False, reason="a careful voter", vote_id=first, vote_kind="four-image")
    stored = {row[0]: tuple(row[1:]) for row in db.execute(
        "SELECT id, excluded, excluded_reason, reviewed FROM kwise_votes").fetchall()}
    db.close()
    command_line_env(small_arena, monkeypatch, tmp_path)
    assert main(["export", str(tmp_path / "four.jsonl"), "--format", "four-image"]) == 0
    lines = {line["vote_id"]: line for line in map(json.loads, (tmp_path / "four.jsonl").read_text(
        encoding="utf-8").splitlines())}
    assert list(lines[first])[-3:] == ["excluded", "excluded_reason", "reviewed"]
    assert {vote_id: (int(line["excluded"]), line["excluded_reason"], line["reviewed"])
            for vote_id, line in lines.items()} == stored
    assert lines[first]["excluded"] is False and lines[first]["reviewed"] == 1
    assert lines[first]["excluded_reason"].startswith("included by an admin: a careful voter (was: 10+ consecutive "
                                                      "votes less than 5 s apart")
    assert lines[last]["excluded"] is True and lines[last]["reviewed"] == 0
    assert lines[last]["excluded_reason"] == "10+ consecutive votes less than 5 s apart"


def test_a_refused_four_image_export_writes_no_file(small_arena, monkeypatch, tmp_path, capsys):
    small_arena.db.close()
    command_line_env(small_arena, monkeypatch, tmp_path)
    assert main(["export", str(tmp_path / "four.jsonl"), "--format", "four-image", "--keep-in-battles"]) == 2
    assert "--keep-in-battles is for the formats that publish images" in capsys.readouterr().err
    assert not (tmp_path / "four.jsonl").exists()
