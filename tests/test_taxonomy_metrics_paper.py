"""The taxonomy paper's metrics: CLIPScore with the authors' texts, FID/IS per slice as fid_is.py, reward on lemmas."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import numpy as np
import pytest
import torch
from support.arena import make_image

from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.metrics import MetricRow, write_metrics
from judges.metrics.clip_scores import build_tiny_clip, load_clip
from judges.metrics.clipscore import (
    CAPTION_PREFIX,
    clipscore,
    concept_texts,
    core_lemma,
    score_clipscore,
    scores_for,
    synset_name,
)
from judges.metrics.fid_is import (
    dedup_by_lemma,
    paper_slices,
    score_fid_is,
    score_fid_is_slices,
    tiny_feature_network,
    to_float01,
)
from judges.metrics.reward import score_rewards
from judges.selection import image_rows


@pytest.fixture(scope="session")
def tiny_clip_dir(tmp_path_factory):
    return build_tiny_clip(tmp_path_factory.mktemp("clip") / "open-clip-tiny")


# --- CLIPScore ----------------------------------------------------------------------------------------------------


def test_clipscore_is_two_and_a_half_times_the_positive_cosine():
    assert clipscore(0.3) == pytest.approx(0.75) and clipscore(-0.2) == 0.0 and clipscore(0.0) == 0.0
    # Hessel et al.: the paper's 0.55-0.76 are cosines of 0.22-0.30
    assert clipscore(0.304) == pytest.approx(0.76) and clipscore(0.22) == pytest.approx(0.55)


class PinnedEncoder:
    """An encoder whose text vectors are given: a constructed (image, text) pair with a known cosine."""

    def __init__(self, vectors):
        self.vectors = vectors
        from judges.metrics.clip_scores import EncoderCounts

        self.counts = EncoderCounts()

    def encode_texts(self, texts):
        return torch.stack([self.vectors[text] for text in texts])


def test_the_four_scores_of_a_constructed_embedding_pair():
    image = torch.tensor([1.0, 0.0, 0.0])
    metadata = {"core_lemma": "cigar_lighter", "hypernyms": ["lighter.n.02"],
                "cohyponyms": ["spill.n.04", "igniter.n.01"]}
    texts = concept_texts(metadata)
    angle = lambda cos: torch.tensor([cos, float(np.sqrt(1 - cos ** 2)), 0.0])  # noqa: E731  unit, cos to image
    encoder = PinnedEncoder({texts.lemma: angle(0.28), texts.hypernyms[0]: angle(0.24),
                             texts.cohyponyms[0]: angle(0.20), texts.cohyponyms[1]: angle(-0.1)})
    values, details = scores_for(image, encoder, texts)
    assert values["clipscore_lemma"] == pytest.approx(0.70)
    assert values["clipscore_hypernym"] == pytest.approx(0.60)
    assert details["cohyponyms"] == pytest.approx([0.50, 0.0])  # a negative cosine scores 0
    assert values["clipscore_cohyponym"] == pytest.approx(0.25)
    assert values["clipscore_specificity"] == pytest.approx(0.70 / 0.25)


def test_the_texts_are_the_authors(tmp_path):
    texts = concept_texts({"core_lemma": "cigar_lighter", "hypernyms": ["working_dog.n.01", "st._john's_wort.n.01"],
                           "cohyponyms": ["coffee.n.01"]})
    assert texts.lemma == "A photo depicts an image of cigar_lighter"
    assert texts.hypernyms == ("A photo depicts an image of working_dog", "A photo depicts an image of st")
    assert texts.cohyponyms == ("A photo depicts an image of coffee",)
    assert concept_texts({"lemma": "cigar lighter", "synset": "cigar_lighter.n.01"}, prefix="").lemma == \
        "an image of cigar_lighter"  # a concept built from WordNet: its lemma with WordNet's underscores
    assert core_lemma({"lemma": "inherited disorder"}) == "inherited disorder"  # a predicted concept: as given
    assert concept_texts({"text": "no concept"}) is None and synset_name("coin.n.01") == "coin"


def taxonomy_arena(arena, *, retrieval: bool = True):
    """Concepts of two subsets and both variants (two share the lemma 'penny'), one image per model and prompt, and
    a retrieval model with its own images."""
    concepts = [("1", "Easy", "penny", ["coin.n.01"], ["dime.n.01", "nickel.n.02"]),
                ("2", "Easy", "dime", ["coin.n.01"], ["penny.n.02", "nickel.n.02"]),
                ("3", "Hypernymy", "penny", ["cent.n.01"], []),
                ("4", "Hypernymy", "espresso", ["coffee.n.01"], ["cappuccino.n.01"])]
    specs = []
    for key, subset, lemma, hypernyms, cohyponyms in concepts:
        for variant, text in (("with_definition", f"An image of {lemma} (a thing)"),
                              ("without_definition", f"An image of {lemma}")):
            specs.append(PromptSpec("taxonomy", key, text, subset=subset, variant=variant, metadata={
                "core_lemma": lemma, "lemma": lemma, "definition": "a thing", "hypernyms": hypernyms,
                "cohyponyms": cohyponyms, "published": "main_bench.csv"}))
    ids = add_prompts(arena.db, specs).ids
    models = dict(arena.model_ids)
    if retrieval:
        models["retrieval"] = add_model(arena.db, "retrieval")
    for m, model_id in enumerate(models.values()):
        for p, prompt_id in enumerate(ids):
            add_image(arena.db, prompt_id=prompt_id, model_id=model_id,
                      stored=arena.media.put_image(make_image(m + 1, p * 3 + 11)))
    return ids


def test_score_clipscore_matches_an_independent_open_clip_computation(small_arena, tiny_clip_dir):
    import open_clip

    taxonomy_arena(small_arena)
    encoder = load_clip(f"local-dir:{tiny_clip_dir}", None, batch_size=3)
    report = score_clipscore(small_arena.db, small_arena.media, encoder, "taxonomy")
    rows = [row for row in image_rows(small_arena.db, "taxonomy") if concept_texts(row.metadata)]
    assert report["images"] == len(rows) == 52 and report["rows"] == 208 and report["scorer"] == encoder.name
    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{tiny_clip_dir}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{tiny_clip_dir}")
    model.eval()
    row = next(r for r in rows if r.item_key == "1" and r.model == "bravo-model" and r.variant == "with_definition")
    with torch.no_grad():
        image = model.encode_image(preprocess(row.load(small_arena.media)).unsqueeze(0))
        texts = model.encode_text(tokenizer(["A photo depicts an image of penny", "A photo depicts an image of coin",
                                             "A photo depicts an image of dime", "A photo depicts an image of nickel"]))
    image, texts = image / image.norm(dim=-1, keepdim=True), texts / texts.norm(dim=-1, keepdim=True)
    expected = [2.5 * max(float(c), 0.0) for c in (texts @ image.T).squeeze(1)]
    stored = dict(small_arena.db.execute(
        "SELECT name, value FROM metrics WHERE image_id = ? AND name LIKE 'clipscore_%'", [row.image_id]).fetchall())
    assert stored["clipscore_lemma"] == pytest.approx(expected[0], abs=1e-5)
    assert stored["clipscore_hypernym"] == pytest.approx(expected[1], abs=1e-5)
    assert stored["clipscore_cohyponym"] == pytest.approx((expected[2] + expected[3]) / 2, abs=1e-5)
    if stored["clipscore_cohyponym"]:
        assert stored["clipscore_specificity"] == pytest.approx(stored["clipscore_lemma"]
                                                                / stored["clipscore_cohyponym"])
    details = json.loads(small_arena.db.execute(
        "SELECT details FROM metrics WHERE image_id = ? AND name = 'clipscore_lemma'", [row.image_id]).fetchone()[0])
    assert details["cohyponyms"] == pytest.approx(expected[2:], abs=1e-5)
    espresso = next(r for r in rows if r.item_key == "3")  # no cohyponyms: no cohyponym mean, no specificity
    assert small_arena.db.execute("SELECT value FROM metrics WHERE image_id = ? AND name = 'clipscore_specificity'",
                                  [espresso.image_id]).fetchone()[0] is None
    again = score_clipscore(small_arena.db, small_arena.media, encoder, "taxonomy")
    assert (again["images"], again["skipped"]) == (0, 52)
    other = score_clipscore(small_arena.db, small_arena.media, encoder, "taxonomy", prefix="")
    assert other["images"] == 52 and other["scorer"] == f"{encoder.name} [prefix 'none']"  # rows never mix
    assert CAPTION_PREFIX == "A photo depicts "


# --- FID and IS as fid_is.py ---------------------------------------------------------------------------------------


def test_dedup_by_lemma_keeps_what_fid_is_py_keeps():
    rows = [(("Easy", str(i)), lemma) for i, lemma in enumerate(
        ["cat", "dog", "cat", "cow", "dog", "cat", "emu", "dog", "cat"])]
    # the script's way, written independently: the global random module seeded once, lists per lemma, shuffle
    random.seed(42)
    groups = defaultdict(list)
    for item, lemma in rows:
        groups[lemma].append(item)
    expected = set()
    for items in groups.values():
        random.shuffle(items)
        expected.add(items[0])
    assert dedup_by_lemma(rows, 42) == expected
    assert len(expected) == 4 and dedup_by_lemma(rows, 42) == dedup_by_lemma(list(rows), 42)


def test_paper_slices_give_each_variant_its_full_set_and_subsets_and_leave_pooled_rows_alone(small_arena):
    taxonomy_arena(small_arena)
    ids = small_arena.model_ids
    write_metrics(small_arena.db, [MetricRow(ids["alpha-model"], "fid", 123.0, "tiny", suite="taxonomy")])
    rows = image_rows(small_arena.db, "taxonomy")
    assert paper_slices(rows) == [("", "with_definition"), ("Easy", "with_definition"),
                                  ("Hypernymy", "with_definition"), ("", "without_definition"),
                                  ("Easy", "without_definition"), ("Hypernymy", "without_definition")]
    report = score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy", fid_network=tiny_feature_network(8),
                                 is_network=tiny_feature_network(5, scale=4.0), scorer="tiny", input_mode="float01",
                                 dedup_seed=42, is_seed=42)
    assert set(report.fid) == {(m, s, v) for m in ids for s, v in paper_slices(rows)}  # retrieval: no FID
    assert ("retrieval", "", "with_definition") in report.inception_score  # ... but an IS (Tables 7, 9)
    stored = small_arena.db.execute(
        "SELECT subset, variant, value, details FROM metrics x JOIN models m ON m.id = x.model_id "
        "WHERE m.name = 'bravo-model' AND x.name = 'fid' ORDER BY subset, variant").fetchall()
    assert [(s, v) for s, v, _, _ in stored] == [("", "with_definition"), ("", "without_definition"),
                                                 ("Easy", "with_definition"), ("Easy", "without_definition"),
                                                 ("Hypernymy", "with_definition"), ("Hypernymy", "without_definition")]
    full = json.loads(stored[0][3])
    # coin of the small arena too; penny once; retrieval has no coin
    assert (full["concepts"], full["images"], full["reference_images"], full["input"]) == (4, 4, 3, "float01")
    assert small_arena.db.execute("SELECT value FROM metrics WHERE name = 'fid' AND subset = '' AND variant = '' "
                                  "AND model_id = ?", [ids["alpha-model"]]).fetchone()[0] == 123.0


def test_every_subsets_fid_is_against_the_full_deduplicated_retrieval_set(small_arena):
    """fid_is_subsets.py (TaxoGen, development repository) loads real_images_no_duble_tensors.pkl, the full
    deduplicated retrieval set fid_is.py saved, as FID's real set for every subset; only the generated side is the
    subset's. --fid-subset-reference subset keeps the other reading: the subset's own retrieval images."""
    from torchmetrics.image.fid import FrechetInceptionDistance

    from judges.metrics.fid_is import normalized_uint8

    taxonomy_arena(small_arena)
    network = tiny_feature_network(8)
    kwargs = dict(fid_network=network, scorer="tiny", input_mode="float01", dedup_seed=42)
    published = score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy", **kwargs)
    rows = sorted(image_rows(small_arena.db, "taxonomy"), key=lambda r: r.prompt_id)

    def kept(subset: str) -> set:  # a slice's concepts, deduplicated by lemma on their own (as fid_is_subsets.py)
        return dedup_by_lemma([((r.subset, r.item_key), r.metadata.get("core_lemma") or r.metadata["lemma"])
                               for r in rows if r.variant == "with_definition" and subset in ("", r.subset)], 42)

    def fid_of(model: str, fake_items: set, real_items: set) -> float:
        fid = FrechetInceptionDistance(feature=network)
        for row in rows:
            image = normalized_uint8(to_float01(row.load(small_arena.media)).unsqueeze(0))
            if row.variant != "with_definition":
                continue
            if row.model == "retrieval" and (row.subset, row.item_key) in real_items:
                fid.update(image, real=True)
            elif row.model == model and (row.subset, row.item_key) in fake_items:
                fid.update(image, real=False)
        return float(fid.compute())

    full, easy = kept(""), kept("Easy")
    retrieved = {(r.subset, r.item_key) for r in rows if r.model == "retrieval"}
    assert len(full & retrieved) == 3 and len(easy & retrieved) == 2 and (full & retrieved) - easy
    stored = small_arena.db.execute(
        "SELECT x.details FROM metrics x JOIN models m ON m.id = x.model_id WHERE m.name = 'bravo-model' "
        "AND x.name = 'fid' AND x.subset = 'Easy' AND x.variant = 'with_definition'").fetchone()[0]
    assert json.loads(stored)["reference_images"] == 3 and json.loads(stored)["reference_set"] == "full"
    assert published.fid[("bravo-model", "Easy", "with_definition")] == pytest.approx(
        fid_of("bravo-model", easy, full), rel=1e-5)
    own = score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy", subset_reference="subset", **kwargs)
    assert own.fid[("bravo-model", "Easy", "with_definition")] == pytest.approx(
        fid_of("bravo-model", easy, easy), rel=1e-5)
    assert own.fid[("bravo-model", "", "with_definition")] == published.fid[("bravo-model", "", "with_definition")]
    with pytest.raises(ValueError, match="unknown FID subset reference 'mine'; choose one of full, subset"):
        score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy", subset_reference="mine", **kwargs)


def test_float01_input_is_torchmetrics_normalize_true_on_totensor_images(small_arena):
    """The full-set FID of one model, recomputed the way fid_is.py computes it: ToTensor images, normalize=True,
    i.e. (x * 255).byte() before torchmetrics' own Inception network (torchmetrics skips that step for a network
    given as a module, so the reference applies it as its built-in path does)."""
    from torchmetrics.image.fid import FrechetInceptionDistance
    from torchvision.transforms import ToTensor

    taxonomy_arena(small_arena)
    network = tiny_feature_network(8)
    report = score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy", fid_network=network, scorer="tiny",
                                 input_mode="float01", dedup_seed=None)
    rows = [r for r in image_rows(small_arena.db, "taxonomy") if r.variant == "with_definition"]
    fid = FrechetInceptionDistance(feature=network)
    for row in rows:
        tensor = ToTensor()(row.load(small_arena.media)).unsqueeze(0)
        assert torch.equal(tensor[0], to_float01(row.load(small_arena.media)))
        if row.model == "retrieval":
            fid.update((tensor * 255).byte(), real=True)
        elif row.model == "charlie-model":
            fid.update((tensor * 255).byte(), real=False)
    assert report.fid[("charlie-model", "", "with_definition")] == pytest.approx(float(fid.compute()), rel=1e-5)


def test_the_pooled_fid_is_keeps_its_numbers_and_can_seed_its_inception_score(small_arena):
    taxonomy_arena(small_arena)
    kwargs = dict(is_network=tiny_feature_network(5, scale=4.0), scorer="tiny", image_size=32)
    first = score_fid_is(small_arena.db, small_arena.media, "taxonomy", is_seed=42, **kwargs).inception_score
    second = score_fid_is(small_arena.db, small_arena.media, "taxonomy", is_seed=42, **kwargs).inception_score
    assert first == second


# --- reward -------------------------------------------------------------------------------------------------------


class RecordingReward:
    name, version = "stub-reward", "1"

    def __init__(self):
        self.texts = []

    def score(self, prompt, images):
        self.texts.append(prompt)
        return [float(len(prompt))] * len(images)


def test_the_reward_reads_the_core_lemma_and_is_stored_under_its_own_scorer(small_arena):
    taxonomy_arena(small_arena)
    model = RecordingReward()
    written = score_rewards(small_arena.db, small_arena.media, model, "taxonomy", prompt="lemma")
    assert written == 52 and sorted(set(model.texts)) == ["coin", "dime", "espresso", "penny", "sofa"]
    scorers = {row[0] for row in small_arena.db.execute("SELECT DISTINCT scorer FROM metrics WHERE name = 'reward'")}
    assert scorers == {"stub-reward:lemma-prompt"}
    assert score_rewards(small_arena.db, small_arena.media, model, "taxonomy") == 52  # the prompts: new rows
    with pytest.raises(ValueError, match="unknown reward prompt 'concept'"):
        score_rewards(small_arena.db, small_arena.media, model, "taxonomy", prompt="concept")


@pytest.mark.slow
def test_the_papers_fid_and_is_run_through_the_real_inception_network(small_arena, random_inception_weights,
                                                                     monkeypatch, tmp_path):
    """float01 images of their own sizes go through torchmetrics' InceptionV3 (random weights: the shapes and the
    path, not the values), which resizes them itself. One model and the reference on every slice: the slicing over all
    four models is the tiny network's test above (a 2048-feature FID alone costs a second or two of CPU)."""
    from judges.metrics.fid_is import inception_network

    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    taxonomy_arena(small_arena)
    models = ("alpha-model",)
    report = score_fid_is_slices(small_arena.db, small_arena.media, "taxonomy",
                                 fid_network=inception_network("2048", random_inception_weights),
                                 is_network=inception_network("logits_unbiased", random_inception_weights),
                                 scorer="inception-v3", input_mode="float01", dedup_seed=42, is_seed=42, models=models)
    slices = paper_slices(image_rows(small_arena.db, "taxonomy"))
    assert set(report.fid) == {(model, *slice_) for model in models for slice_ in slices} and not report.skipped
    assert set(report.inception_score) == {(model, *slice_) for model in (*models, "retrieval") for slice_ in slices}
    assert all(np.isfinite(v) for v in [*report.fid.values(), *report.inception_score.values()])
