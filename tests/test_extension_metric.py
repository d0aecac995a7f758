"""A metric added by one declaration in this file (mean image brightness, lower is better): the metrics command runs
it, its rows are stored, and the leaderboard flips its sign in the correlations with the human ELO."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from support.votes import HUMAN_ORDER, vote_human_order

from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from datamodel.metrics import MetricRow, metric_directions, model_metric_table, write_metrics
from judges.metrics.commands import main
from judges.metrics.registry import METRICS, Metric, MetricRun, default_names, lower_is_better
from judges.selection import image_rows


def brightness(image) -> float:
    """Mean luma of an RGB image, 0 (black) to 1 (white)."""
    return float(np.asarray(image.convert("L"), dtype=float).mean() / 255)


def score_brightness(run: MetricRun, scorer: None) -> dict:
    rows = [MetricRow(row.model_id, "brightness", brightness(row.load(run.media)), "mean-luma", image_id=row.image_id,
                      suite=run.suite, subset=row.subset) for row in image_rows(run.db, run.suite, models=run.models)]
    return {"brightness": {"images": write_metrics(run.db, rows)}}


# The one declaration (registered by the fixture below, so that it is removed after each test).
BRIGHTNESS = Metric(name="brightness", title="mean image brightness (a toy)", direction="lower",
                    score=score_brightness, default=False)


@pytest.fixture
def registered():
    METRICS.register(BRIGHTNESS)
    yield BRIGHTNESS
    METRICS.unregister(BRIGHTNESS.name)


def command(arena, *args: str) -> list[str]:
    return ["--db", str(arena.settings.db_path), "--media-dir", str(arena.settings.media_dir), "--cache-dir",
            str(arena.settings.cache_dir), "--quiet", "--suite", "taxonomy", *args]


def test_one_declaration_adds_a_lower_is_better_metric(small_arena, registered, capsys):
    arena = small_arena
    assert main(command(arena, "--metrics", "brightness")) == 0
    assert "brightness: {'images': 12}" in capsys.readouterr().out

    stored = arena.db.execute("SELECT image_id, value, scorer FROM metrics WHERE name = 'brightness'").fetchall()
    images = {row.image_id: row for row in image_rows(arena.db, "taxonomy")}
    assert sorted(image_id for image_id, _, _ in stored) == sorted(images)
    for image_id, value, scorer in stored:
        assert scorer == "mean-luma" and value == pytest.approx(brightness(images[image_id].load(arena.media)))
    assert metric_directions(arena.db)["brightness"] == "lower" and lower_is_better("brightness [mean-luma]")
    assert "brightness" in model_metric_table(arena.db).attrs["lower_is_better"]

    # the direction is stored with the rows: the leaderboard needs no registry (its worker never imports this file)
    METRICS.unregister(BRIGHTNESS.name)
    vote_human_order(arena)
    board = compute_leaderboard(arena.db, LeaderboardOptions(suite="taxonomy", rounds=20, min_votes=1))
    correlations = board.correlations.set_index("against human ELO")
    means = [np.mean([value for image_id, value, _ in stored if images[image_id].model == model])
             for model in HUMAN_ORDER]
    unflipped = spearmanr([4, 3, 2, 1], means).statistic
    assert abs(unflipped) > 0.5  # the models differ in brightness, so the sign shows
    assert correlations.loc["brightness", "spearman"] == pytest.approx(-unflipped)
    assert correlations.loc["brightness", "n"] == 4


def test_the_registry_lists_it_only_while_registered(small_arena, registered, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert "brightness: mean image brightness (a toy)" in help_text
    assert "brightness" not in default_names()  # declared default=False
    METRICS.register(BRIGHTNESS)  # the same declaration again changes nothing
    with pytest.raises(ValueError, match="metric 'brightness' is declared twice. Give the new metric another name"):
        METRICS.register(Metric(name="brightness", title="another", score=score_brightness))
    METRICS.unregister(BRIGHTNESS.name)
    assert "brightness" not in METRICS and not lower_is_better("brightness")
    assert main(command(small_arena, "--metrics", "brightness")) == 2
    assert "unknown metric 'brightness'; choices: align, clip, clipscore, commonsense" in capsys.readouterr().err


def test_a_declaration_is_checked():
    with pytest.raises(ValueError, match="use one of higher, lower, none"):
        Metric(name="dimness", title="", direction="smaller", score=score_brightness)
    with pytest.raises(ValueError, match="does not store"):
        Metric(name="dimness", title="", score=score_brightness, directions={"other": "lower"})
    with pytest.raises(ValueError, match="another direction"):  # fid is a built-in, lower is better
        METRICS.register(Metric(name="fid-again", title="", stored=("fid",), direction="higher",
                                score=score_brightness))
    assert "fid-again" not in METRICS
