"""The page-timing benchmark runs end to end on a tiny arena and prints both timings at both sizes."""

import re
import shutil

import pytest

from tools.page_timing import main


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_timing_benchmark_prints_both_timings_at_both_sizes(capsys):
    if not shutil.which("chromium"):
        pytest.fail("Debian chromium is missing: run `make test` (it installs it) or `apt-get install chromium`.")
    main(["--votes", "2", "--prompts", "4"])
    lines = capsys.readouterr().out.splitlines()
    timed = [re.match(r"(\d+x\d+)\s+(vote → names|Next → images):\s+median\s+([\d.]+) ms", line) for line in lines]
    assert [(m[1], m[2]) for m in timed if m] == [("1280x800", "vote → names"), ("1280x800", "Next → images"),
                                                   ("390x844", "vote → names"), ("390x844", "Next → images")]
    assert all(0 < float(m[3]) < 30_000 for m in timed)


def test_it_refuses_fewer_prompts_than_votes():
    with pytest.raises(SystemExit):
        main(["--votes", "5", "--prompts", "4"])
