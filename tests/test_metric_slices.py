"""The leaderboard's metric columns, and their correlations with the ELO, follow its suite, subset and variant."""

from __future__ import annotations

from support.arena import make_image

from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard
from datamodel.catalog import PromptSpec, add_image, add_prompts
from datamodel.metrics import MetricRow, model_metric_table, write_metrics
from judges.selection import image_rows


def sliced_arena(arena):
    """Taxonomy prompts of two subsets and both variants; an image-level score that differs by slice (100 for Easy
    with the definition, 1 elsewhere) and model-level FIDs: pooled, per variant, per subset and variant."""
    specs = [PromptSpec("taxonomy", key, f"An image of {key}" + (" (def)" if variant == "with_definition" else ""),
                        subset=subset, variant=variant, metadata={"lemma": key})
             for key, subset in (("cat", "Easy"), ("emu", "Hypernymy")) for variant in ("with_definition",
                                                                                       "without_definition")]
    ids = add_prompts(arena.db, specs).ids
    for m, model_id in enumerate(arena.model_ids.values()):
        for p, prompt_id in enumerate(ids):
            add_image(arena.db, prompt_id=prompt_id, model_id=model_id,
                      stored=arena.media.put_image(make_image(m, p + 20)))
    rows = []
    for row in image_rows(arena.db, "taxonomy"):
        easy_def = row.subset == "Easy" and row.variant == "with_definition"
        rank = list(arena.model_ids).index(row.model)
        rows.append(MetricRow(row.model_id, "clipscore_lemma", (100.0 if easy_def else 1.0) + rank, "s",
                              image_id=row.image_id, suite="taxonomy", subset=row.subset))
    for m, model_id in enumerate(arena.model_ids.values()):
        rows += [MetricRow(model_id, "fid", 10.0 + m, "inc", suite="taxonomy"),
                 MetricRow(model_id, "fid", 20.0 + m, "inc", suite="taxonomy", variant="with_definition"),
                 MetricRow(model_id, "fid", 30.0 - m, "inc", suite="taxonomy", subset="Easy",
                           variant="with_definition")]
    write_metrics(arena.db, rows)


def test_the_metric_table_of_a_slice_means_that_slices_images_and_takes_its_model_level_rows(small_arena):
    sliced_arena(small_arena)
    whole = model_metric_table(small_arena.db, suite="taxonomy").set_index("model")
    assert whole.loc["alpha-model", "fid"] == 10.0  # pooled row only
    sliced = model_metric_table(small_arena.db, suite="taxonomy", subset="Easy",
                                variant="with_definition").set_index("model")
    assert sliced.loc["bravo-model", "clipscore_lemma"] == 101.0  # the Easy images with the definition only
    assert sliced.loc["bravo-model", "fid"] == 29.0  # the Easy / with-definition row
    variant = model_metric_table(small_arena.db, suite="taxonomy", variant="with_definition").set_index("model")
    # clipscore_lemma (101 + 101 + 2) / 3: cat, coin, emu
    assert variant.loc["bravo-model", "fid"] == 21.0 and variant.loc["bravo-model", "clipscore_lemma"] == 68.0
    assert model_metric_table(small_arena.db, subset="Easy", variant="with_definition").attrs["slice"] == \
        "subset Easy, variant with_definition"


def test_leaderboard_metric_columns_and_correlations_follow_its_filters(small_arena):
    sliced_arena(small_arena)
    board = compute_leaderboard(small_arena.db, LeaderboardOptions(suite="taxonomy", subset="Easy",
                                                                   variant="with_definition", rounds=10))
    table = board.table.set_index("model")
    assert table.loc["bravo-model", "clipscore_lemma"] == 101.0
    assert table.loc["delta-model", "fid"] == 27.0
    from arena.leaderboard.text import summary_text

    options = LeaderboardOptions(suite="taxonomy", subset="Easy", variant="with_definition", rounds=10)
    # the suite by its title since the plain labels of issue 29
    assert ("Metric columns and their correlations: suite WordNet taxonomy, subset Easy, variant with_definition"
            in summary_text(board, options))
    correlations = board.correlations.set_index("against human ELO")
    assert "fid" in correlations.index and "clipscore_lemma" in correlations.index
