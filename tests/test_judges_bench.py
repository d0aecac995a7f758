"""``python -m tools.judges_bench`` on a tiny configuration: every line it prints, and which line carries which
target."""

from __future__ import annotations

import re

import pytest

from tools import judges_bench as bench


def test_interrupted_lines_carry_their_targets():
    result = {"before_stop": 12, "stored": 10, "in_flight": 2, "total": 22, "repeated": 2, "votes": 20}
    sigint = bench.interrupted_line("SIGINT (Ctrl-C)", result, 4)
    assert sigint.endswith("target: repeated requests after kill and restart: expected 0 (NOT met)")
    assert bench.interrupted_line("SIGINT (Ctrl-C)", result | {"repeated": 0}, 4).endswith("expected 0 (met)")
    sigkill = bench.interrupted_line("SIGKILL (crash)", result, 4)
    assert "expected 0" not in sigkill
    assert sigkill.endswith("expected at most 2 repeats (the in-flight count; --concurrency 4) (as expected)")
    assert bench.interrupted_line("SIGKILL (crash)", result | {"repeated": 3}, 4).endswith("(MORE than expected)")


@pytest.mark.slow
def test_a_tiny_bench_prints_every_line(capsys):
    assert bench.main(["--n", "20", "--latency", "0.01", "--concurrency", "2", "--prompts", "10", "--models", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("machine: ")
    assert lines[1] == "run 1: 20 judgments (0 failed), 20 requests at concurrency 2, 10 ms per reply"
    assert re.fullmatch(r"       wall [\d.]+ s; ideal 20 x 0.01 s / 2 = 0.10 s; ratio [\d.]+ \(target <= 1.30\)",
                        lines[2])
    assert lines[3].startswith("run 2 (same battles, another judge name): 20 of 20 requests answered by the cache, "
                               "0 sent to the server")
    sigint = re.fullmatch(r"SIGINT \(Ctrl-C\) at (\d+) requests \((\d+) answers stored, (\d+) in flight\), then the "
                          r"same command again: 0 requests received twice, 20 in all, 20 votes; target: repeated "
                          r"requests after kill and restart: expected 0 \(met\)", lines[4])
    assert sigint, lines[4]
    sigkill = re.fullmatch(r"SIGKILL \(crash\) at (\d+) requests \((\d+) answers stored, (\d+) in flight\), then the "
                           r"same command again: (\d+) requests received twice, (\d+) in all, 20 votes; a crash loses "
                           r"its requests in flight, so expected at most (\d+) repeats \(the in-flight count; "
                           r"--concurrency 2\) \(as expected\)", lines[5])
    assert sigkill, lines[5]
    at, stored, in_flight, repeated, total, expected = map(int, sigkill.groups())
    assert in_flight == at - stored == expected <= 2 and repeated <= in_flight and total == 20 + repeated
    assert len(lines) == 6
