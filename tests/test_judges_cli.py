"""``python -m judges``: help for every command, dry runs, error messages, Ctrl-C and resume, metrics routing."""

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
from support.openai_stub import first_position_judge

from datamodel.vote_table import votes_frame
from judges.commands import DESCRIPTIONS, main
from tools.fake_openai import FakeServer, Scripted

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", list(DESCRIPTIONS))
def test_every_command_has_help_with_the_common_options(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for option in ("--suite", "--subset", "--model", "--limit", "--concurrency", "--dry-run", "--judge-model",
                   "--base-url"):
        assert option in text


def test_metrics_is_routed_to_the_metrics_cli(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "judges.metrics.commands",
                        types.SimpleNamespace(main=lambda argv: calls.append(argv) or 7))
    assert main(["metrics", "--suite", "taxonomy", "--tiny"]) == 7
    assert calls == [["--suite", "taxonomy", "--tiny"]]


def test_dry_run_prints_the_requests_and_the_estimated_cost(arena_env, capsys, monkeypatch):
    with FakeServer(first_position_judge) as server:
        monkeypatch.setenv("ARENA_JUDGE_BASE_URL", server.base_url)
        assert main(["pairwise", "--suite", "taxonomy", "--limit", "5", "--dry-run", "--no-progress"]) == 0
        assert server.received == []
    out = capsys.readouterr().out
    assert "requests: 10 to send, 0 answered by the cache" in out
    assert "estimated cost: $0.0274" in out  # 10 x (2 images x 8,500 tokens + ~300 text) in, 250 out


def test_a_run_prints_the_summary(arena_env, capsys, monkeypatch):
    with FakeServer(lambda r: Scripted("1")) as server:
        monkeypatch.setenv("ARENA_JUDGE_BASE_URL", server.base_url)
        assert main(["commonsense", "--no-progress", "--model", "alpha-model", "--concurrency", "2"]) == 0
        assert len(server.received) == 4
    out = capsys.readouterr().out
    assert "gpt-judge:gpt-4o-mini commonsense_fit: 1 done (0 inconsistent), 0 failed" in out
    assert "requests: 4 sent, 0 cached, 0 failed" in out
    assert "commonsense accuracy of alpha-model: " in out


@pytest.mark.parametrize("argv, env, message", [
    (["pairwise", "--model", "zulu"], {"ARENA_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"},
     "error: unknown model 'zulu'. Known models: alpha-model, bravo-model"),
    (["pairwise", "--suite", "taxonomy"], {}, "error: OPENAI_API_KEY is not set. Export it"),
    (["saneval"], {"ARENA_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"}, "error: saneval needs --detector"),
    (["semvar"], {"ARENA_JUDGE_BASE_URL": "http://127.0.0.1:9/v1"},
     "error: No semvarbench item of suite 'semvarbench' has images for all of anchor, permutation, paraphrase"),
    (["pairwise", "--concurrency", "0"], {}, "error: --concurrency must be 1 or more, got 0."),
])
def test_errors_say_what_to_do(arena_env, capsys, monkeypatch, argv, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main([*argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_stores_what_is_in_flight_and_the_same_command_resumes_without_repeats(arena_env):
    env = {**os.environ, "ARENA_JUDGE_CONCURRENCY": "2", "PYTHONPATH": str(ROOT)}
    with FakeServer(first_position_judge, latency=0.3) as server:
        env["ARENA_JUDGE_BASE_URL"] = server.base_url
        command = [sys.executable, "-m", "judges", "pairwise", "--suite", "taxonomy", "--limit", "12",
                   "--no-progress", "--single-order"]
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(server.received) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 130, err
        assert "Stopping: finishing the requests in flight" in err
        first = len(server.received)
        assert 3 <= first < 12
        resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        digests = [r.digest for r in server.received]
    assert len(digests) == len(set(digests)) == 12
    assert "not finished (stopped)" in out
    from datamodel.connection import connect
    db = connect(arena_env.settings.db_path)
    assert len(votes_frame(db)) == 12
    db.close()
