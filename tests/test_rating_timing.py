"""The rating-page timing benchmark runs end to end on a tiny arena and prints every task at both sizes."""

import re
import shutil

import pytest

from tools.rating_timing import main


@pytest.mark.slow
def test_the_rating_timing_benchmark_prints_every_task_at_both_sizes(capsys):
    if not shutil.which("chromium"):
        pytest.fail("Debian chromium is missing: run `make test` (it installs it) or `apt-get install chromium`.")
    main(["--answers", "2", "--items", "2"])
    lines = capsys.readouterr().out.splitlines()
    timed = [re.match(r"(\d+x\d+)\s+(\w+)\s+answer → next item:\s+median\s+([\d.]+) ms", line) for line in lines]
    assert [(m[1], m[2]) for m in timed if m] == [
        (size, task) for task in ("commonsense_fit", "semvar_alignment", "saneval_adherence")
        for size in ("1280x800", "390x844")]
    assert all(0 < float(m[3]) < 30_000 for m in timed if m)


@pytest.mark.parametrize("items, answers", [(2, 20), (1, 2)])
def test_it_refuses_fewer_items_than_both_raters_need(items, answers, capsys):
    """Before, ``--items 1 --answers 2`` passed the check and the phone's rater then waited 30 s for an item: each
    item has one rater, and the desktop's had taken every one (its answers, the one on screen, the next loading)."""
    with pytest.raises(SystemExit):
        main(["--answers", str(answers), "--items", str(items)])
    assert "--items too small" in capsys.readouterr().err
