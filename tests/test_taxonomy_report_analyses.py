"""The taxonomy report's analyses beyond Tables 2-16: the pooled ELO of Figures 4, 8 and 9 with the human-GPT rank
correlation, Figure 6 (battle wins with and without the definition), the rank correlations of §4.2 and §5, the CLIP
tables' variant (--variant), and the ratings without a finite estimate flagged.

The arena is made through the product's commands: the concepts imported as the authors' main_bench.csv, the labelled
battles as their main_reproducing.csv (import-votes --format taxonomy), the images and metric rows written as the
metric commands write them. Each number is recomputed here from the files the test wrote.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from support.arena import empty_arena_env, make_image

from arena.commands import main as arena
from arena.reports import make_report, render
from arena.reports.taxonomy import PAPER_LABELS
from core.presets import get_preset
from core.protocols import get_protocol
from datamodel.catalog import add_image, add_model
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, write_metrics

pytestmark = pytest.mark.slow  # eight taxonomy-paper fits of 100 rounds each, and the report built four times

# the authors' hub folders (the taxonomy-paper preset maps them) and the registry names they become
SYSTEMS = {"playgroundai_playground-v2.5-1024px-aesthetic": "playground-v2.5",
           "black-forest-labs_FLUX.1-dev": "flux-dev",
           "runwayml_stable-diffusion-v1-5": "sd-v1-5", "retrieval": "retrieval"}
STRENGTH = {  # (kind, variant) -> the systems' strengths (higher wins more often)
    ("human", "def"): [1.0, 1.5, 0.0, -0.5], ("human", "nodef"): [1.2, 0.6, -0.2, 0.1],
    ("gpt", "def"): [1.6, 1.0, 0.1, -0.6], ("gpt", "nodef"): [1.4, 0.4, 0.3, -0.4]}
SUBSETS = {"appendix": "Easy", "predict_hypernym": "Hypernymy"}


def write_files(root: Path) -> tuple[Path, Path, pd.DataFrame]:
    """main_bench.csv (8 concepts per subset) and the labelled battles (4 per concept): FLUX wins every Easy battle
    with the definition in the human labels (no finite estimate there), and loses some elsewhere."""
    rng = random.Random(7)
    folders = list(SYSTEMS)
    bench, battles = [], []
    for subset in SUBSETS:
        for k in range(8):
            wordnet_id = str(1000 + 100 * list(SUBSETS).index(subset) + k)
            lemma = f"thing_{subset[:4]}_{k}"
            bench.append({"wordnet_id": wordnet_id, "core_lemma": lemma, "definition": f"a kind of thing {k}",
                          "hypernym_synsets": "['thing.n.01']", "cohyponym_synsets": "['object.n.01']",
                          "subset": subset, "core_synset": f"{lemma}.n.01"})
            for n in range(4):
                a, b = rng.sample(range(4), 2)
                row = {"id": f"{wordnet_id}{n}", "subset": subset, "wordnet_id": wordnet_id,
                       "core_synset": f"{lemma}.n.01", "model_a": folders[a], "model_b": folders[b]}
                for (kind, variant), strength in STRENGTH.items():
                    p = 1 / (1 + np.exp(strength[b] - strength[a]))
                    draw = rng.random()
                    label = 0 if draw < 0.85 * p else 1 if draw < 0.85 else rng.choice([2, 3])
                    if kind == "human" and variant == "def" and subset == "appendix" and 1 in (a, b):
                        label = 0 if a == 1 else 1  # FLUX never loses an Easy battle with the definition
                    row[f"result_{kind}_{variant}"] = f"{label}.0" if kind == "human" else str(label)
                battles.append(row)
    bench_path, battles_path = root / "main_bench.csv", root / "main_reproducing.csv"
    pd.DataFrame(bench).to_csv(bench_path, index=False)
    pd.DataFrame(battles).to_csv(battles_path, index=False)
    return bench_path, battles_path, pd.DataFrame(battles)


def clip_value(model: int, variant: str, image: int) -> float:
    return 0.55 + 0.02 * model + (0.05 if variant == "without_definition" else 0.0) + 0.001 * (image % 5)


def reward_value(model: int, variant: str, image: int) -> float:
    return [0.8, 1.1, -0.2, -0.9][model] + (0.1 if variant == "with_definition" else 0.0) + 0.01 * (image % 7)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        root = empty_arena_env(monkeypatch, tmp_path_factory.mktemp("analyses"))
        bench, labelled, battles = write_files(root)
        assert arena(["suites", "import", "taxonomy-bench", str(bench)]) == 0
        assert arena(["import-votes", str(labelled), "--format", "taxonomy", "--quiet"]) == 0
        db = connect(root / "arena.db")
        media = MediaStore(root / "media")
        prompts = db.execute("SELECT id, subset, variant FROM prompts WHERE suite = 'taxonomy' ORDER BY id").fetchall()
        rows = []
        for m, name in enumerate(SYSTEMS.values()):
            model_id = db.execute("SELECT id FROM models WHERE name = ?", [name]).fetchone()
            model_id = model_id[0] if model_id else add_model(db, name)
            for p, (prompt_id, subset, variant) in enumerate(prompts):
                image = add_image(db, prompt_id=prompt_id, model_id=model_id,
                                  stored=media.put_image(make_image(m, p)))
                value = clip_value(m, variant, p)
                for role, stored in (("lemma", value), ("hypernym", value - 0.05), ("cohyponym", value - 0.1),
                                     ("specificity", value / (value - 0.1))):
                    rows.append(MetricRow(model_id, f"clipscore_{role}", stored, "open_clip:ViT-B-32", image_id=image,
                                          suite="taxonomy", subset=subset, variant=variant))
                rows.append(MetricRow(model_id, "reward", reward_value(m, variant, p), "ImageReward:lemma-prompt",
                                      image_id=image, suite="taxonomy", subset=subset, variant=variant))
            for variant in ("with_definition", "without_definition"):
                if name != "retrieval":
                    rows.append(MetricRow(model_id, "fid", 60.0 + 7 * m, "inception-v3", suite="taxonomy",
                                          variant=variant))
                    rows.append(MetricRow(model_id, "fid", 120.0 + m, "inception-v3", suite="taxonomy",
                                          subset="Easy", variant=variant, details={"reference_set": "full"}))
                rows.append(MetricRow(model_id, "inception_score", 20.0 - m, "inception-v3", suite="taxonomy",
                                      variant=variant))
        write_metrics(db, rows)
        report = make_report(db, "taxonomy")
        yield root, db, battles, report, prompts
        db.close()


def pooled(battles: pd.DataFrame, column: str) -> pd.DataFrame:
    """The taxonomy-paper fit of one label column over every subset, registry names, the votes in file order."""
    outcome = {0: "A", 1: "B", 2: "tie", 3: "both_bad"}
    frame = pd.DataFrame({"model_a": battles["model_a"].map(SYSTEMS), "model_b": battles["model_b"].map(SYSTEMS),
                          "outcome": battles[column].astype(float).astype(int).map(outcome)})
    return get_protocol("taxonomy-paper").rate_frame(frame).set_index("model")


def test_figures_4_and_8_are_the_pooled_fits_with_their_rank_correlation(run):
    _, _, battles, report, _ = run
    for number, suffix in (("F4", "def"), ("F8", "nodef")):
        figure = report.table(number)
        human, gpt = pooled(battles, f"result_human_{suffix}"), pooled(battles, f"result_gpt_{suffix}")
        for model in SYSTEMS.values():
            assert figure.cell(PAPER_LABELS[model], "human").text.rstrip(" †") == human.loc[model, "printed"]
            assert figure.cell(PAPER_LABELS[model], "gpt").text.rstrip(" †") == gpt.loc[model, "printed"]
        rho, p = spearmanr(human.loc[list(SYSTEMS.values()), "rating"], gpt.loc[list(SYSTEMS.values()), "rating"])
        assert f"Spearman ρ of the human and GPT-4 rankings: {rho:.2f} (p = {p:.2g}, 4 models)" in " ".join(
            figure.notes)
    assert "the paper: 0.92 (Figure 4's caption; §5 says 0.88)" in " ".join(report.table("F4").notes)
    assert "the paper: 0.73" in " ".join(report.table("F8").notes)


def test_figure_9_adds_qwen_image_to_the_gpt_fit_without_the_definition(run):
    _, _, battles, report, _ = run
    figure = report.table("F9")
    gpt = pooled(battles, "result_gpt_nodef")
    assert figure.cell("FLUX", "gpt").text == gpt.loc["flux-dev", "printed"]
    assert "no GPT-4 votes of qwen-image without the definition" in figure.cell("Qwen-Image", "gpt").missing


def test_figure_6_counts_the_battles_won_with_and_without_the_definition(run):
    _, _, battles, report, _ = run
    figure = report.table("F6")
    for folder, model in SYSTEMS.items():
        for kind in ("human", "gpt"):
            won = {}
            for suffix in ("def", "nodef"):
                labels = battles[f"result_{kind}_{suffix}"].astype(float).astype(int)
                won[suffix] = int((((battles["model_a"] == folder) & (labels == 0))
                                   | ((battles["model_b"] == folder) & (labels == 1))).sum())
            row = PAPER_LABELS[model]
            assert figure.cell(row, f"{kind} def").value == won["def"]
            assert figure.cell(row, f"{kind} nodef").value == won["nodef"]
            assert figure.cell(row, f"{kind} change").value == won["def"] - won["nodef"]


def test_the_rank_correlations_of_section_4_2_and_5(run):
    _, db, battles, report, prompts = run
    table = report.table("R")
    human = pooled(battles, "result_human_def")
    order = list(SYSTEMS.values())
    rewards = {model: np.mean([reward_value(m, variant, p) for p, (_, _, variant) in enumerate(prompts)
                               if variant == "with_definition"]) for m, model in enumerate(order)}
    rho = spearmanr([rewards[m] for m in order], human.loc[order, "rating"])[0]
    assert table.cell("Reward", "human def").value == pytest.approx(rho)
    fid = {model: 60.0 + 7 * m for m, model in enumerate(order[:3])}  # lower is better: the sign turned
    rho_fid = spearmanr([-fid[m] for m in order[:3]], human.loc[order[:3], "rating"])[0]
    assert table.cell("FID", "human def").value == pytest.approx(rho_fid)
    assert table.cell("GPT-4 ELO", "gpt def").missing  # a ranking is not compared with itself
    gpt = pooled(battles, "result_gpt_def")
    assert table.cell("GPT-4 ELO", "human def").value == pytest.approx(
        spearmanr(human.loc[order, "rating"], gpt.loc[order, "rating"])[0])


def test_the_clip_tables_read_the_presets_variant_and_offer_the_other(run):
    root, db, _, report, prompts = run
    assert get_preset("taxonomy-paper").get("report.variant") == "without_definition"
    twelve = report.table("12")
    other = make_report(db, "taxonomy", variant="with_definition")
    for m, model in enumerate(SYSTEMS.values()):
        for table, wanted in ((twelve, "without_definition"), (other.table("12"), "with_definition")):
            expected = np.mean([clip_value(m, variant, p) for p, (_, subset, variant) in enumerate(prompts)
                                if (subset, variant) == ("Easy", wanted)])
            assert table.cell(PAPER_LABELS[model], "Easy").value == pytest.approx(expected), (model, wanted)
    note = " ".join(twelve.notes)
    assert "Images made without the definition (the preset taxonomy-paper's report.variant" in note
    assert "--variant with_definition prints the images made with the definition" in note
    assert "Images made with the definition (--variant)" in " ".join(other.table("13").notes)
    arena_preset = make_report(db, "taxonomy", preset=get_preset("arena"))
    assert "Images made with the definition (the preset arena names no report.variant)" in " ".join(
        arena_preset.table("13").notes)
    with pytest.raises(ValueError, match="report taxonomy has no --variant 'def': choose one of with_definition, "
                                         "without_definition"):
        make_report(db, "taxonomy", variant="def")
    with pytest.raises(ValueError, match="report saneval has no --variant 'with_definition': its tables fix"):
        make_report(db, "saneval", variant="with_definition")


def test_a_rating_without_a_finite_estimate_is_flagged_and_named(run):
    _, _, battles, report, _ = run
    five = report.table("5")
    flux = five.cell("FLUX", "Easy")
    assert flux.text.endswith(" †") and float(flux.text.split()[0]) > 2000  # FLUX never lost: it ran off
    assert not five.cell("FLUX", "Hyper").text.endswith("†")
    note = " ".join(five.notes)
    assert ("† Easy: no finite estimate (the unpenalised fit): FLUX never lost a battle to the other models; its "
            "rating ran off where lbfgs stopped, and the others are shifted with it") in note
    assert "‡ a bound read from bootstrap rounds without a finite estimate" in note
    markdown = render(report)
    assert "| FLUX |" in markdown and " †" in markdown


def test_the_figures_are_written_beside_their_tables(run, tmp_path):
    _, db, *_ = run
    report = make_report(db, "taxonomy", figures=tmp_path)
    for number in ("F4", "F6", "F8", "F9"):
        path = tmp_path / f"taxonomy-{number}.html"
        assert path.is_file() and path.stat().st_size > 1000, number
        assert f"Plot: {path}" in report.table(number).notes
    assert not (tmp_path / "taxonomy-R.html").exists()  # a table, not a figure


def test_the_command_prints_every_figure_and_takes_variant(run, capsys):
    root, *_ = run
    out = root / "report.json"
    assert arena(["report", "taxonomy", "--json", "--no-figures", "--variant", "with_definition", "-o", str(out)]) == 0
    numbers = [table["number"] for table in json.loads(out.read_text())["tables"]]
    assert numbers == [str(n) for n in range(2, 17)] + ["F4", "F6", "F8", "F9", "R"]
    assert arena(["report", "taxonomy", "--variant", "bogus"]) == 2
    assert "report taxonomy has no --variant 'bogus'" in capsys.readouterr().err


def test_table_10_says_which_real_images_each_subsets_fid_used(run):
    _, _, _, report, _ = run
    ten = report.table("10")
    assert ten.cell("FLUX", "Easy").text == "121"
    assert ("FID's real set on each subset: the whole deduplicated retrieval set, as the authors' "
            "fid_is_subsets.py.") in ten.notes
