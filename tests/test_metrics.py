"""Model-based metrics with tiny random scorers: CLIP (T1), commonsense CLIP (T2), FID/IS, reward, consistency (T5),
detection (T4), the metrics CLI and the model × metric table."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from support.arena import make_image

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.metrics import MetricRow, model_metric_table, write_metrics
from judges.metrics.clip_scores import build_tiny_clip, lemma_text, load_clip, score_clip
from judges.metrics.commonsense_clip import item_score, score_commonsense
from judges.metrics.consistency import consistency_summary, group_statistic, score_consistency
from judges.metrics.fid_is import score_fid_is, tiny_feature_network
from judges.metrics.registry import lower_is_better
from judges.metrics.reward import (
    EXTRA_HELP,
    ImageRewardModel,
    RewardModel,
    mann_whitney_table,
    reward_comparisons,
    score_rewards,
    store_comparisons,
    stored_comparisons,
)
from judges.selection import image_rows


@pytest.fixture(scope="session")
def tiny_clip_dir(tmp_path_factory):
    return build_tiny_clip(tmp_path_factory.mktemp("clip") / "open-clip-tiny")


@pytest.fixture
def clip(tiny_clip_dir):
    return load_clip(f"local-dir:{tiny_clip_dir}", None, batch_size=4)


def add_taxonomy_concepts(arena):
    """Two taxonomy concepts with hypernyms and cohyponyms, one image per model."""
    specs = [
        PromptSpec("taxonomy", "penny.n.02", "An image of penny", subset="Easy", variant="without_definition",
                   metadata={"synset": "penny.n.02", "lemma": "penny", "hypernyms": ["coin.n.01"],
                             "cohyponyms": ["dime.n.01", "nickel.n.02"]}),
        PromptSpec("taxonomy", "dime.n.01", "An image of dime", subset="Easy", variant="without_definition",
                   metadata={"synset": "dime.n.01", "lemma": "dime", "hypernyms": ["coin.n.01"],
                             "cohyponyms": ["penny.n.02", "nickel.n.02"]}),
    ]
    ids = add_prompts(arena.db, specs).ids
    for m, model_id in enumerate(arena.model_ids.values()):
        for p, prompt_id in enumerate(ids):
            add_image(arena.db, prompt_id=prompt_id, model_id=model_id,
                      stored=arena.media.put_image(make_image(m, p + 7)))
    return ids


# --- store --------------------------------------------------------------------------------------------------------


def test_write_metrics_replaces_the_same_key(small_arena):
    db, model_id = small_arena.db, small_arena.model_ids["alpha-model"]
    write_metrics(db, [MetricRow(model_id, "fid", 3.0, "x", suite="taxonomy")])
    write_metrics(db, [MetricRow(model_id, "fid", 2.0, "x", suite="taxonomy", details={"n": 1})])
    write_metrics(db, [MetricRow(model_id, "fid", 5.0, "y", suite="taxonomy")])
    rows = db.execute("SELECT scorer, value, details FROM metrics ORDER BY scorer").fetchall()
    assert rows == [("x", 2.0, '{"n": 1}'), ("y", 5.0, "{}")]


def test_model_metric_table_means_image_metrics_and_labels_ambiguities(small_arena):
    db, ids = small_arena.db, small_arena.model_ids
    image = {row["model"]: row for row in image_rows(db, "taxonomy")}  # one image row per model suffices here
    rows = []
    for model, value in (("alpha-model", 1.0), ("bravo-model", 3.0)):
        for row in image_rows(db, "taxonomy", models=[model]):
            rows.append(MetricRow(ids[model], "clip_score", value + row["id"] % 2, "clipA", image_id=row["id"]))
        rows.append(MetricRow(ids[model], "fid", value * 10, "inc", suite="taxonomy"))
        rows.append(MetricRow(ids[model], "fid", value * 20, "inc", suite="commonsense"))
        rows.append(MetricRow(ids[model], "fid", 99.0, "inc", suite="taxonomy", subset="Easy"))  # not overall
    rows.append(MetricRow(ids["alpha-model"], "reward", 0.5, "r1", image_id=image["alpha-model"]["id"]))
    rows.append(MetricRow(ids["alpha-model"], "reward", 0.7, "r2", image_id=image["alpha-model"]["id"]))
    write_metrics(db, rows)
    table = model_metric_table(db).set_index("model")
    assert list(table.index) == sorted(small_arena.model_ids)
    assert {"clip_score", "fid (taxonomy)", "fid (commonsense)", "reward [r1]", "reward [r2]"} <= set(table.columns)
    alpha_images = [r["id"] for r in image_rows(db, "taxonomy", models=["alpha-model"])]
    assert table.loc["alpha-model", "clip_score"] == pytest.approx(np.mean([1.0 + i % 2 for i in alpha_images]))
    assert table.loc["bravo-model", "fid (taxonomy)"] == 30.0
    assert math.isnan(table.loc["charlie-model", "clip_score"])
    assert set(model_metric_table(db).attrs["lower_is_better"]) == {"fid (taxonomy)", "fid (commonsense)"}
    only = model_metric_table(db, suite="taxonomy")
    assert "fid" in only.columns and "fid (taxonomy)" not in only.columns


def test_lower_is_better():
    assert lower_is_better("fid") and lower_is_better("consistency_std_S_r") and lower_is_better("fid [x]")
    assert not lower_is_better("consistency_std_S_final") and not lower_is_better("clip_score")


# --- CLIP ---------------------------------------------------------------------------------------------------------


def test_lemma_text():
    assert lemma_text("cigar_lighter.n.01") == "cigar lighter" and lemma_text("ice cream") == "ice cream"


def test_tiny_clip_loads_from_a_folder_with_the_real_tokenizer(clip, tiny_clip_dir):
    import open_clip

    assert (tiny_clip_dir / "open_clip_config.json").exists() and clip.name == "open_clip:open-clip-tiny"
    reference = open_clip.get_tokenizer("ViT-B-32")(["a cappuccino"])
    assert torch.equal(clip.tokenizer(["a cappuccino"]), reference)


def test_texts_are_encoded_once(clip):
    first = clip.encode_texts(["a coin", "a dime", "a coin"])
    assert clip.counts.texts_encoded == 2 and torch.allclose(first[0], first[2])
    again = clip.encode_texts(["a dime", "a coin"])
    assert clip.counts.texts_encoded == 2 and torch.allclose(again[1], first[0])
    assert torch.allclose(first.norm(dim=-1), torch.ones(3))


def test_score_clip_taxonomy_metrics_and_encoder_counts(small_arena, clip):
    arena = small_arena
    add_taxonomy_concepts(arena)
    report = score_clip(arena.db, arena.media, clip, "taxonomy")
    images = len(image_rows(arena.db, "taxonomy"))
    assert report.images == images == 4 * 5
    # texts: 5 prompt texts + lemmas coin, sofa, penny, dime + hypernym coin + cohyponyms nickel → 9 distinct...
    # once each
    distinct = {"An image of coin (a flat metal piece used as money)", "An image of coin", "An image of sofa",
                "An image of penny", "An image of dime", "coin", "sofa", "penny", "dime", "nickel"}
    assert clip.counts.texts_encoded == len(distinct)
    assert clip.counts.images_encoded == images and clip.counts.image_batches == math.ceil(images / 4)
    assert clip.counts.text_lookups == 4 * (2 * 2 + 2 * 1 + 2 * 5)  # naive: one encoding per (image, text)
    values = {(r[0], r[1]): r[2] for r in arena.db.execute("SELECT image_id, name, value FROM metrics")}
    penny = image_rows(arena.db, "taxonomy", models=["alpha-model"])[-2]
    assert penny["metadata"]["lemma"] == "penny"
    lemma, cohyponym = values[(penny["id"], "clip_lemma")], values[(penny["id"], "clip_cohyponym")]
    assert values[(penny["id"], "clip_specificity")] == pytest.approx(lemma / cohyponym)
    text = clip.encode_texts(["penny"])[0]
    image = clip.encode_stored(arena.media, [penny])[0]
    assert lemma == pytest.approx(float(text @ image), abs=1e-5)
    coin_no_concept = [r for r in image_rows(arena.db, "taxonomy") if r["item_key"] == "sofa.n.01"][0]
    assert values[(coin_no_concept["id"], "clip_hypernym")] is None  # no hypernyms in its metadata
    assert score_clip(arena.db, arena.media, clip, "taxonomy").images == 0  # already scored: skipped


# --- commonsense --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cosines, expected", [
    ((0.9, 0.1, 0.2, 0.8), 1),  # each image closer to its own description
    ((0.9, 0.1, 0.9, 0.1), 0),  # both images show D1
    ((0.1, 0.9, 0.8, 0.2), 0),  # swapped
    ((0.5, 0.5, 0.2, 0.8), 0),  # a tie fits neither
])
def test_item_score(cosines, expected):
    assert item_score(*cosines) == expected


class FakeEncoder:
    """Embeds descriptions and images in 2-D: 'unlit' → e1, 'lit' → e2; an image's vector is chosen per model."""

    name, version = "fake", "1"

    def __init__(self, vectors):
        from judges.metrics.clip_scores import EncoderCounts

        self.vectors, self.counts = vectors, EncoderCounts()

    def encode_texts(self, texts):
        return torch.tensor([[1.0, 0.0] if "unlit" in t else [0.0, 1.0] for t in texts])

    def encode_stored(self, media, rows):
        return torch.tensor([self.vectors[(row["model"], row["role"])] for row in rows])


def test_commonsense_accuracy_known_answer(small_arena):
    arena = small_arena
    right, wrong, half = [1.0, 0.1], [0.1, 1.0], [0.5, 0.5]
    vectors = {}
    for model, (p1, p2) in {"alpha-model": (right, wrong), "bravo-model": (wrong, right),
                            "charlie-model": (right, right), "delta-model": (half, wrong)}.items():
        vectors[(model, "p1")], vectors[(model, "p2")] = p1, p2
    # p1 "without electricity" expects unlit (e1); p2 expects lit (e2)
    report = score_commonsense(arena.db, arena.media, FakeEncoder(vectors))
    assert report.accuracy == {"alpha-model": 1.0, "bravo-model": 0.0, "charlie-model": 0.0, "delta-model": 0.0}
    rows = arena.db.execute("SELECT subset, COUNT(*) FROM metrics WHERE name = 'commonsense_clip_accuracy' "
                            "GROUP BY subset").fetchall()
    assert rows == [("", 4), ("Physical Laws", 4)]
    fits = dict(arena.db.execute("SELECT m.name || '/' || p.role, x.value FROM metrics x JOIN images i ON "
                                 "i.id = x.image_id JOIN prompts p ON p.id = i.prompt_id JOIN models m ON "
                                 "m.id = x.model_id WHERE x.name = 'commonsense_clip_fit'").fetchall())
    assert fits["alpha-model/p1"] == 1 and fits["charlie-model/p2"] == 0 and fits["delta-model/p1"] == 0


# --- FID and IS ---------------------------------------------------------------------------------------------------


def test_fid_and_inception_score_with_a_tiny_network(small_arena):
    arena = small_arena
    # the reference model's images are the same pictures as alpha's: FID(alpha) ~ 0
    reference = add_model(arena.db, "retrieval")
    for row in image_rows(arena.db, "taxonomy", models=["alpha-model"]):
        with open(arena.media.path(row["media_hash"], row["media_ext"]), "rb") as handle:
            add_image(arena.db, prompt_id=row["prompt_id"], model_id=reference, stored=arena.media.put(handle.read()))
    report = score_fid_is(arena.db, arena.media, "taxonomy", fid_network=tiny_feature_network(8),
                          is_network=tiny_feature_network(5, scale=4.0), scorer="tiny", image_size=32)
    assert set(report.fid) == set(arena.model_ids)  # not the reference itself
    assert report.fid["alpha-model"] == pytest.approx(0.0, abs=1e-3)
    assert min(report.fid[m] for m in ("bravo-model", "charlie-model", "delta-model")) > 1e-3
    assert all(value >= 1.0 - 1e-6 for value in report.inception_score.values())
    stored = arena.db.execute("SELECT COUNT(*) FROM metrics WHERE name IN ('fid', 'inception_score') "
                              "AND image_id IS NULL").fetchone()[0]
    assert stored == 8


def test_fid_without_reference_images_says_what_to_do(small_arena):
    report = score_fid_is(small_arena.db, small_arena.media, "taxonomy", fid_network=tiny_feature_network(8),
                          scorer="tiny", image_size=32)
    assert "import-images" in report.skipped["*"] and report.fid == {}


def test_real_inception_needs_the_extra_or_says_so(monkeypatch):
    import torchmetrics.utilities.imports

    from judges.metrics.fid_is import inception_network

    monkeypatch.setattr(torchmetrics.utilities.imports, "_TORCH_FIDELITY_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match="pip install torch-fidelity"):
        inception_network()


def test_missing_inception_weights_name_the_flags(tmp_path, monkeypatch):
    pytest.importorskip("torch_fidelity")
    from judges.metrics.fid_is import INCEPTION_WEIGHTS_FILE, cached_inception_weights, inception_network

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))  # an empty hub cache: nothing downloaded yet
    assert cached_inception_weights() == tmp_path / "torch-home" / "hub" / "checkpoints" / INCEPTION_WEIGHTS_FILE
    with pytest.raises(FileNotFoundError, match="fix --inception-weights"):
        inception_network("2048", tmp_path / "nowhere.pth")
    with pytest.raises(FileNotFoundError, match="pass --inception-weights .*or --inception-download"):
        inception_network("2048")


@pytest.mark.slow
def test_real_inception_network_builds_from_a_local_weights_file(random_inception_weights, monkeypatch, tmp_path):
    from torchmetrics.image.fid import NoTrainInceptionV3

    from judges.metrics.fid_is import inception_network

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    network = inception_network("2048", random_inception_weights)
    assert isinstance(network, NoTrainInceptionV3) and not network.training
    with torch.inference_mode():
        features = network(torch.zeros((1, 3, 64, 64), dtype=torch.uint8))
    assert features.shape == (1, 2048)


class FakeTerminal:
    """A stderr that claims to be a terminal, so tqdm draws its bars into it."""

    def __init__(self):
        import io

        self.buffer = io.StringIO()

    def isatty(self):
        return True

    def write(self, text):
        return self.buffer.write(text)

    def flush(self):
        pass


def test_progress_bars_are_off_when_asked_or_without_a_terminal(monkeypatch):
    from judges.metrics.progress import progress_bar

    with progress_bar(3, "x", progress=False) as bar:
        assert bar.disable
    monkeypatch.setattr("sys.stderr", __import__("io").StringIO())  # not a TTY: tqdm turns itself off
    with progress_bar(3, "x", progress=True) as bar:
        assert bar.disable
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with progress_bar(3, "x", progress=True) as bar:
        assert not bar.disable


def test_fid_is_commonsense_and_consistency_show_progress(small_arena, monkeypatch):
    arena = small_arena
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    score_fid_is(arena.db, arena.media, "taxonomy", fid_network=tiny_feature_network(8),
                 is_network=tiny_feature_network(5, scale=4.0), scorer="tiny", image_size=32, pooled_reference=True,
                 reference_model=None, progress=True)
    vectors = {(m, r): [1.0, 0.0] for m in arena.model_ids for r in ("p1", "p2")}
    score_commonsense(arena.db, arena.media, FakeEncoder(vectors), progress=True)
    write_metrics(arena.db, [MetricRow(row["model_id"], "clip_score", float(row["id"]), "c", image_id=row["id"],
                                       suite="taxonomy") for row in image_rows(arena.db, "taxonomy")])
    score_consistency(arena.db, "taxonomy", progress=True)
    shown = terminal.buffer.getvalue()
    # FID: 12 reference images + 12 model images; IS: 12 model images
    assert "fid/is taxonomy: 100%" in shown and "36/36" in shown
    assert "commonsense commonsense: 100%" in shown and "8/8" in shown
    assert "consistency taxonomy: 100%" in shown and "12/12" in shown


# --- reward -------------------------------------------------------------------------------------------------------


class TinyReward:
    """A stand-in reward model: mean brightness, higher for longer prompts."""

    name, version = "tiny-reward", "0"

    def __init__(self):
        self.calls = 0

    def score(self, prompt, images):
        self.calls += 1
        return [float(np.asarray(image).mean() / 255 + len(prompt) / 100) for image in images]


def test_score_rewards_once_per_prompt_and_compare(small_arena):
    arena = small_arena
    model = TinyReward()
    assert isinstance(model, RewardModel)
    assert score_rewards(arena.db, arena.media, model, "taxonomy") == 12 and model.calls == 3
    assert score_rewards(arena.db, arena.media, model, "taxonomy") == 0  # already scored
    table = reward_comparisons(arena.db, suite="taxonomy")
    assert len(table) == 6 and table["p_value"].between(0, 1).all()


def test_reward_comparisons_are_stored_and_read_back(small_arena):
    arena = small_arena
    score_rewards(arena.db, arena.media, TinyReward(), "taxonomy")
    table = reward_comparisons(arena.db, scorer="tiny-reward", suite="taxonomy")
    assert store_comparisons(arena.db, table, scorer="tiny-reward", suite="taxonomy", version="0") == 6
    assert store_comparisons(arena.db, table, scorer="tiny-reward", suite="taxonomy") == 6  # rerun: replaced
    stored = stored_comparisons(arena.db, suite="taxonomy")
    assert len(stored) == 6 and set(stored["scorer"]) == {"tiny-reward"}
    pd.testing.assert_frame_equal(stored.drop(columns="scorer"), table, check_dtype=False)
    row = arena.db.execute("SELECT m.name, x.subset, x.value, x.details FROM metrics x JOIN models m ON "
                           "m.id = x.model_id WHERE x.name = 'reward_mann_whitney_p' ORDER BY x.id LIMIT 1").fetchone()
    assert row[:2] == ("alpha-model", "vs bravo-model") and json.loads(row[3])["model_b"] == "bravo-model"
    assert "reward_mann_whitney_p" not in model_metric_table(arena.db).columns  # not a leaderboard column


def test_mann_whitney_known_answer():
    from scipy.stats import mannwhitneyu

    table = mann_whitney_table({"a": [1, 2, 3, 4, 5], "b": [6, 7, 8, 9, 10], "c": [1, 2, 3, 4, 5]})
    ab = table[(table.model_a == "a") & (table.model_b == "b")].iloc[0]
    assert ab["U"] == 0.0 and ab["p_value"] == pytest.approx(mannwhitneyu([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]).pvalue)
    assert ab["p_value"] < 0.05
    assert table[(table.model_a == "a") & (table.model_b == "c")].iloc[0]["p_value"] == pytest.approx(1.0)


def test_image_reward_is_an_optional_extra():
    try:
        import ImageReward  # noqa: F401
    except ImportError:
        with pytest.raises(ModuleNotFoundError, match="separate virtualenv"):
            ImageRewardModel()
    else:
        pytest.skip("ImageReward installed")
    assert "timm==0.6.13" in EXTRA_HELP


# --- consistency --------------------------------------------------------------------------------------------------


def test_group_statistics():
    assert group_statistic([1.0, 2.0, 3.0], "std") == pytest.approx(1.0)
    assert group_statistic([1.0], "std") is None and group_statistic([3.0, 1.0, 2.0], "min") == 1.0
    assert group_statistic([3.0, 1.0, 2.0, 10.0], "median") == 2.5


def test_consistency_s_a_s_r_s_final_known_answer():
    frame = pd.DataFrame([
        ("m", "o1", "abstract", v) for v in (1.0, 2.0, 3.0)] + [
        ("m", "o2", "abstract", v) for v in (1.0, 1.0, 1.0)] + [
        ("m", "o3", "realistic", v) for v in (2.0, 4.0, 6.0)], columns=["model", "item_key", "category", "value"])
    row = consistency_summary(frame, "std").iloc[0]
    assert row["S_a"] == pytest.approx(0.5) and row["S_r"] == pytest.approx(2.0)
    assert row["S_final"] == pytest.approx(1.5) and row["groups"] == 3


def test_score_consistency_writes_model_metrics(small_arena):
    arena = small_arena
    specs = [PromptSpec("paraphrase", str(i), f"object {i} variation {v}", subset=cat, role=str(v),
                        metadata={"category": cat}) for i, cat in ((1, "abstract"), (2, "realistic")) for v in range(3)]
    ids = add_prompts(arena.db, specs).ids
    model_id = arena.model_ids["alpha-model"]
    rows = []
    for n, prompt_id in enumerate(ids):
        image_id = add_image(arena.db, prompt_id=prompt_id, model_id=model_id,
                             stored=arena.media.put_image(make_image(1, n)))
        rows.append(MetricRow(model_id, "clip_score", [1.0, 2.0, 3.0, 2.0, 4.0, 6.0][n], "c", image_id=image_id,
                              suite="paraphrase"))
    write_metrics(arena.db, rows)
    score_consistency(arena.db, "paraphrase")
    values = dict(arena.db.execute("SELECT name, value FROM metrics "
                                   "WHERE image_id IS NULL AND scorer = 'c/clip_score'"))
    assert values["consistency_std_S_a"] == pytest.approx(1.0) and values["consistency_std_S_r"] == pytest.approx(2.0)
    assert values["consistency_std_S_final"] == pytest.approx(1.0) and values["consistency_min_S_a"] == 1.0
    with pytest.raises(LookupError, match="--metrics clip"):
        score_consistency(arena.db, "taxonomy", source="nothing")


def test_consistency_writes_no_null_rows_for_a_model_missing_a_category(small_arena):
    """pandas turns a missing S_r into NaN (not None): such a model gets only its overall consistency rows."""
    arena = small_arena
    specs = [PromptSpec("paraphrase", str(i), f"object {i} variation {v}", subset=cat, role=str(v),
                        metadata={"category": cat}) for i, cat in ((1, "abstract"), (2, "realistic")) for v in range(2)]
    ids = add_prompts(arena.db, specs).ids
    rows = []
    for model, prompts in (("alpha-model", ids), ("bravo-model", ids[:2])):  # bravo: abstract only
        for n, prompt_id in enumerate(prompts):
            image_id = add_image(arena.db, prompt_id=prompt_id, model_id=arena.model_ids[model],
                                 stored=arena.media.put_image(make_image(2, n)))
            rows.append(MetricRow(arena.model_ids[model], "clip_score", [1.0, 2.0, 1.0, 4.0][n], "c",
                                  image_id=image_id, suite="paraphrase"))
    write_metrics(arena.db, rows)
    score_consistency(arena.db, "paraphrase")
    assert arena.db.execute("SELECT COUNT(*) FROM metrics WHERE value IS NULL").fetchone()[0] == 0
    names = lambda model: {r[0] for r in arena.db.execute(  # noqa: E731
        "SELECT x.name FROM metrics x JOIN models m ON m.id = x.model_id WHERE m.name = ? AND x.image_id IS NULL "
        "AND x.name LIKE 'consistency_std%'", [model])}
    assert names("bravo-model") == {"consistency_std"}
    assert names("alpha-model") == {"consistency_std", "consistency_std_S_a", "consistency_std_S_r",
                                    "consistency_std_S_final"}


# --- detection ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_tiny_owlv2_detector_round_trip(tmp_path):
    from PIL import Image

    from judges.metrics.detection import Detection, Detector, TransformersDetector, build_tiny_owlv2

    folder = build_tiny_owlv2(tmp_path / "owlv2")
    assert (folder / "config.json").exists()
    detector = TransformersDetector(folder, threshold=0.0)
    assert isinstance(detector, Detector)
    image = Image.new("RGB", (80, 48), (200, 30, 30))
    found = detector.detect(image, ["a red apple", "a dog"])
    assert found and all(isinstance(d, Detection) and d.label in ("a red apple", "a dog") for d in found)
    assert all(0 <= d.box[0] <= d.box[2] <= 80 and 0 <= d.box[1] <= d.box[3] <= 48 for d in found)
    assert found == sorted(found, key=lambda d: -d.score)
    assert detector.detect(image, []) == []
    assert TransformersDetector(folder, threshold=1.01).detect(image, ["a dog"]) == []


def test_tiny_grounding_dino_detector_round_trip(tmp_path):
    """Grounding DINO, the third transformers detector SANEval's modular framework takes (§3.3), through its own path:
    one text "a red apple. a dog.", the phrases it returns mapped back to the labels asked."""
    from PIL import Image

    from judges.metrics.detection import TransformersDetector, build_tiny_grounding_dino

    folder = build_tiny_grounding_dino(tmp_path / "gdino")
    detector = TransformersDetector(folder, threshold=0.0)
    assert detector.model_type == "grounding-dino" and detector.name == "grounding-dino:gdino"
    image = Image.new("RGB", (80, 48), (200, 30, 30))
    found = detector.detect(image, ["a red apple", "a dog"])
    assert found and all(d.label in ("a red apple", "a dog") for d in found)
    assert all(0 <= d.box[0] <= d.box[2] <= 80 and 0 <= d.box[1] <= d.box[3] <= 48 for d in found)
    assert found == sorted(found, key=lambda d: -d.score)
    assert detector.detect(image, [" "]) == []
    assert TransformersDetector(folder, threshold=1.01).detect(image, ["a dog"]) == []
    assert TransformersDetector._match("Dog", ["a red apple", "a dog"]) == "a dog"  # a phrase inside a label


def test_owl_target_size_pads_only_for_owlv2():
    from PIL import Image

    from judges.metrics.detection import owl_target_size

    wide, tall = Image.new("RGB", (80, 48)), Image.new("RGB", (30, 50))
    assert owl_target_size("owlv2", wide) == (80, 80) and owl_target_size("owlv2", tall) == (50, 50)
    assert owl_target_size("owlvit", wide) == (48, 80) and owl_target_size("owlvit", tall) == (50, 30)


def test_tiny_owlvit_boxes_are_scaled_to_the_image_not_a_padded_square(tmp_path):
    """OWL-ViT v1 resizes without padding: its normalised boxes scale by (width, height) of a non-square image."""
    from PIL import Image
    from transformers.image_transforms import center_to_corners_format

    from judges.metrics.detection import TransformersDetector, build_tiny_owl

    detector = TransformersDetector(build_tiny_owl(tmp_path / "owlvit", version="owlvit"), threshold=0.0)
    assert detector.model_type == "owlvit"
    image = Image.new("RGB", (80, 48), (30, 160, 30))
    found = detector.detect(image, ["a green field"])
    inputs = detector.processor(images=image, text=[["a green field"]], return_tensors="pt")
    with torch.inference_mode():
        outputs = detector.model(**inputs)
    boxes = center_to_corners_format(outputs.pred_boxes[0]) * torch.tensor([80.0, 48.0, 80.0, 48.0])
    boxes = torch.minimum(boxes.clamp(min=0), torch.tensor([80.0, 48.0, 80.0, 48.0]))
    scores = torch.sigmoid(outputs.logits[0, :, 0])
    expected = sorted(zip(scores.tolist(), boxes.tolist()), key=lambda pair: -pair[0])
    assert len(found) == len(expected) == 16
    for detection, (score, box) in zip(found, expected):
        assert detection.score == pytest.approx(score, abs=1e-5)
        assert detection.box == pytest.approx(tuple(box), abs=1e-3)


# --- CLI and demo -------------------------------------------------------------------------------------------------


def test_metrics_cli_with_tiny_scorers(small_arena, capsys):
    from judges.metrics.commands import main

    arena = small_arena
    add_taxonomy_concepts(arena)
    common = ["--db", str(arena.settings.db_path), "--media-dir", str(arena.settings.media_dir),
              "--cache-dir", str(arena.settings.cache_dir), "--tiny", "--quiet"]
    assert main([*common, "--suite", "taxonomy", "--fid-reference", "*"]) == 0
    out = capsys.readouterr().out
    assert "encoded 10 distinct texts" in out and "reward_mann_whitney" in out
    assert main([*common, "--suite", "commonsense", "--metrics", "clip"]) == 0
    assert "accuracy" in capsys.readouterr().out
    assert main([*common, "--suite", "taxonomy", "--metrics", "clip,bogus"]) == 2
    assert "unknown metric 'bogus'; choices: align, clip" in capsys.readouterr().err
    stored = stored_comparisons(arena.db, suite="taxonomy")
    assert len(stored) == 6 and set(stored["scorer"]) == {"stand-in:open_clip:open-clip-tiny"}
    table = model_metric_table(arena.db)
    for column in ("clip_score", "clip_lemma", "clip_hypernym", "clip_cohyponym", "clip_specificity", "fid",
                   "inception_score", "reward", "consistency_std", "commonsense_clip_accuracy"):
        assert column in table.columns, column
    assert table["clip_lemma"].notna().all()


def test_metrics_cli_skips_metrics_whose_extras_or_weights_are_missing(small_arena, tiny_clip_dir, capsys,
                                                                     monkeypatch, tmp_path):
    """Real scorers: CLIP from a local folder runs; FID/IS without Inception weights and ImageReward (not installed
    here) are skipped with one line each naming the fix; the run still succeeds."""
    pytest.importorskip("torch_fidelity")
    from judges.metrics.commands import EXIT_NOTHING_RAN, main

    try:
        import ImageReward  # noqa: F401
        pytest.skip("ImageReward installed")
    except ImportError:
        pass
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch-home"))  # no cached Inception weights
    arena = small_arena
    common = ["--db", str(arena.settings.db_path), "--media-dir", str(arena.settings.media_dir), "--quiet",
              "--suite", "taxonomy", "--clip-model", f"local-dir:{tiny_clip_dir}"]
    assert main(common) == 0  # the default metrics: clip, fid, is, reward, consistency
    captured = capsys.readouterr()
    skipped = [line for line in captured.err.splitlines() if line.startswith("skipped ")]
    assert [line.split(":")[0] for line in skipped] == ["skipped fid", "skipped is", "skipped reward"]
    assert "--inception-weights" in skipped[0] and "--inception-download" in skipped[0]
    assert "ImageReward is not installed" in skipped[2] and "--reward-model clip" in skipped[2]
    assert "clip: {'images': 12" in captured.out and "consistency:" in captured.out
    assert arena.db.execute("SELECT COUNT(*) FROM metrics WHERE name = 'fid'").fetchone()[0] == 0

    assert main([*common, "--metrics", "clip,reward", "--strict"]) == EXIT_NOTHING_RAN  # strict: any skip fails
    assert "skipped reward: ImageReward is not installed" in capsys.readouterr().err
    assert main([*common, "--metrics", "reward,fid"]) == EXIT_NOTHING_RAN  # only missing ones asked for
    err = capsys.readouterr().err
    assert "none of the requested metrics (reward, fid) could run" in err and "skipped fid:" in err
    assert main([*common, "--metrics", "reward", "--reward-model", "clip"]) == 0  # the stand-in needs only CLIP

    import torchmetrics.utilities.imports

    monkeypatch.setattr(torchmetrics.utilities.imports, "_TORCH_FIDELITY_AVAILABLE", False)
    assert main([*common, "--metrics", "is,clip"]) == 0
    assert "skipped is: the real Inception network needs torch-fidelity: pip install torch-fidelity" in \
        capsys.readouterr().err


def test_metrics_cli_help(capsys):
    from judges.metrics.commands import main

    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--metrics" in capsys.readouterr().out


@pytest.mark.slow
def test_demo_metrics_fill_every_column(small_arena, artefact_cache):
    from arena.demo.metrics import compute_demo_metrics

    arena = small_arena  # the artefact cache: the demo CLIP is trained there once, not per test
    summary = compute_demo_metrics(arena.db, arena.media, cache_dir=artefact_cache)
    assert set(summary) == {"taxonomy", "commonsense"}
    table = model_metric_table(arena.db)
    assert table.set_index("model").notna().all().all(), table
    details = json.loads(arena.db.execute("SELECT details FROM metrics WHERE name = 'fid' LIMIT 1").fetchone()[0])
    assert details["reference"] == "all models' taxonomy images"
