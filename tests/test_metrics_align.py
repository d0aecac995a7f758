"""The consistency paper's score (Hollinger §2, eq. 1; protocols.md T5): ALIGN's logits_per_image of each image with
its own prompt wording, here on a tiny random ALIGN built from a config and loaded with from_pretrained, and the
consistency metrics taken over it (s_i as pandas' sample std, ddof 1)."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from support.arena import make_image

from datamodel.catalog import PromptSpec, add_image, add_prompts
from judges.metrics.align_scores import build_tiny_align, load_align, score_align
from judges.metrics.consistency import consistency_summary, group_statistic, score_consistency


@pytest.fixture(scope="module")
def tiny_align(tmp_path_factory):
    return load_align(str(build_tiny_align(tmp_path_factory.mktemp("cache") / "align-tiny")), batch_size=3)


def test_batched_scores_are_the_authors_logits_per_image(tiny_align):
    """ALIGNScore.calculate_score: processor(text=prompt, images=image, padding=True), model(**inputs),
    logits_per_image.item(), one pair at a time; ours encode in batches, each text once."""
    texts = ["A red 3d-rendered pyramid on a grey background", "A blue cube.", "A cat sitting on a sofa in a room",
             "A blue cube."]
    images = [make_image(i, 3 * i + 1).resize((48 + 8 * i, 40)) for i in range(4)]
    ours = tiny_align.scores(images, texts)
    for image, text, value in zip(images, texts, ours):
        inputs = tiny_align.processor(text=text, images=image, return_tensors="pt", padding=True)
        with torch.inference_mode():
            theirs = tiny_align.model(**inputs).logits_per_image.item()
        assert value == pytest.approx(theirs, abs=1e-5)
    assert tiny_align.name == "align:align-tiny" and len(set(round(v, 6) for v in ours)) == 4


def test_align_scores_feed_the_consistency_metrics(small_arena, tiny_align):
    arena = small_arena
    specs = [PromptSpec("paraphrase", str(i), f"object {i} said way {v}", subset=cat, role=str(v),
                        metadata={"category": cat}) for i, cat in ((0, "abstract"), (1, "realistic")) for v in range(5)]
    ids = add_prompts(arena.db, specs).ids
    model_id = arena.model_ids["alpha-model"]
    for n, prompt_id in enumerate(ids):
        add_image(arena.db, prompt_id=prompt_id, model_id=model_id, stored=arena.media.put_image(make_image(1, n)))
    report = score_align(arena.db, arena.media, tiny_align, "paraphrase")
    assert (report.images, report.rows) == (10, 10)
    assert score_align(arena.db, arena.media, tiny_align, "paraphrase").images == 0  # scored once
    values = pd.DataFrame(arena.db.query(
        "SELECT p.item_key, p.subset, m.value FROM metrics m JOIN images i ON i.id = m.image_id "
        "JOIN prompts p ON p.id = i.prompt_id WHERE m.name = 'align_score' ORDER BY p.id"))
    results = score_consistency(arena.db, "paraphrase", source="align_score")
    expected = {cat: values[values.subset == cat]["value"].std() for cat in ("abstract", "realistic")}  # ddof 1
    row = results["std"].iloc[0]
    assert row["S_a"] == pytest.approx(expected["abstract"]) and row["S_r"] == pytest.approx(expected["realistic"])
    assert row["S_final"] == pytest.approx(expected["realistic"] - expected["abstract"])
    stored = dict(arena.db.execute("SELECT name, value FROM metrics WHERE scorer = 'align:align-tiny/align_score'"))
    assert stored["consistency_std_S_final"] == pytest.approx(row["S_final"])
    medians = results["median"].iloc[0]
    assert medians["S_a"] == pytest.approx(values[values.subset == "abstract"]["value"].median())


def test_s_i_is_pandas_sample_std_and_equation_2_as_printed_would_be_zero():
    """Eq. 2 prints s_i = sqrt(1/(m−1) Σ (v_ij − v̄_i)) without the square: that sum is 0 for any scores, so the
    authors' code (pandas .std(), ddof 1) is what made Table 1."""
    values = [14.1, 12.7, 15.3, 9.8, 13.0]
    mean = sum(values) / len(values)
    assert sum(v - mean for v in values) == pytest.approx(0.0, abs=1e-12)
    assert group_statistic(values, "std") == pytest.approx(pd.Series(values).std(ddof=1))
    assert group_statistic(values, "std") == pytest.approx((sum((v - mean) ** 2 for v in values) / 4) ** 0.5)
    assert group_statistic(values, "min") == 9.8 and group_statistic(values, "median") == 13.0
    frame = pd.DataFrame([("m", "0", "abstract", v) for v in values] + [("m", "1", "realistic", 1.0)] * 5,
                         columns=["model", "item_key", "category", "value"])
    row = consistency_summary(frame, "std").iloc[0]
    assert row["S_r"] == 0.0 and row["S_final"] == pytest.approx(-pd.Series(values).std())


def test_the_metric_runs_offline_on_the_tiny_stand_in(tmp_path, small_arena, capsys):
    from judges.metrics.commands import main

    arena = small_arena
    code = main(["--db", str(arena.settings.db_path), "--media-dir", str(arena.settings.media_dir), "--cache-dir",
                 str(tmp_path / "cache"), "--suite", "taxonomy", "--metrics", "align", "--tiny", "--quiet"])
    assert code == 0, capsys.readouterr()
    assert arena.db.execute("SELECT COUNT(*) FROM metrics WHERE name = 'align_score' AND scorer = "
                            "'align:align-tiny'").fetchone()[0] == 3 * 4

def test_a_missing_model_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OSError, match=r"hf download kakaobrain/align-base --local-dir FOLDER\) and pass "
                                      r"--align-model FOLDER"):
        load_align(str(tmp_path / "no-such-folder"))
