"""A fake run of the commonsense-paper and consistency-paper presets on the demo (issue 26): every preset model on
its tiny stand-in (API models against the project's fake OpenAI server), the fake server as judge, the tiny CLIP and
ALIGN scorers, then each report, which must fill every cell it can and say why for every other.

Run with ``-s`` to see the reports (they are printed)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from support.arena import demo_arena
from support.shared import SHARED

from core.presets import get_preset
from core.settings import load_settings
from datamodel.connection import connect
from generators.registry import builtin_models
from generators.smoke import stand_in
from tools.fake_openai import FakeServer, Scripted

# a fake end-to-end run of a whole published preset on the demo (tiny models, fake OpenAI server): minutes
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PARAPHRASES = SHARED / "data" / "hollinger" / "abstract_vs_realistic.tsv"


@pytest.fixture(scope="module")
def project_cache() -> Path:
    cache = load_settings().cache_dir
    return cache if cache.is_absolute() else ROOT / cache


def tiny_models_file(path: Path, preset: str) -> Path:
    """A models file putting every model of ``preset`` on its tiny stand-in (API models asking for 64 px images);
    steps at most 2 where the preset keeps the registry's (it sets its own where the paper does)."""
    registry = builtin_models()
    lines = []
    for name in get_preset(preset).get("generation.models"):
        spec = registry[name]
        lines.append(f'[models."{name}"]')
        if spec.kind == "api":
            lines.append("resolution = 64")
            continue
        tiny, _ = stand_in(spec)
        lines += [f'tiny = "{tiny.tiny}"', f'variant = "{tiny.variant}"', f"resolution = {list(tiny.resolution)}",
                  f"steps = {tiny.steps}", f"call_kwargs = {json.dumps(tiny.call_kwargs)}".replace(":", " =")]
    path.write_text("\n".join(lines) + "\n")
    return path


def fit_by_hash(received) -> Scripted:
    """A judge that answers 1 or 0 by a hash of the image and the description: reproducible, not constant."""
    digest = hashlib.sha256((received.image_hashes()[0] + received.text).encode()).digest()
    return Scripted("1" if digest[0] % 2 else "0", prompt_tokens=100, completion_tokens=1)


@pytest.fixture
def demo(tmp_path, monkeypatch, project_cache):
    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(tmp_path / "media"))
    monkeypatch.setenv("ARENA_CACHE_DIR", str(project_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    demo_arena(tmp_path).db.close()  # the shipped demo, loaded once per process
    return tmp_path


def report_text(capsys, name: str) -> str:
    from arena.commands import main

    capsys.readouterr()
    assert main(["report", name, "--compare-published"]) == 0
    text = capsys.readouterr().out
    print(text)  # the report, for the log (pytest -s)
    return text


def row_cells(text: str, table: str, row: str) -> list[str]:
    section = text.split(f"## Table {table}:", 1)[1].split("\n## ", 1)[0]
    line = next(line for line in section.splitlines() if line.startswith(f"| {row} |"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_commonsense_paper_preset_fake_run_fills_its_report(demo, tmp_path, capsys):
    from generators.commands import main as generate
    from judges.commands import main as judge
    from judges.metrics.commands import main as metrics

    models = tiny_models_file(tmp_path / "models.toml", "commonsense-paper")
    with FakeServer(fit_by_hash) as server:
        import os

        os.environ["ARENA_IMAGE_API_BASE_URL"] = server.base_url
        try:
            code = generate(["run", "--preset", "commonsense-paper", "--suite", "commonsense", "--subset",
                             "Physical Laws", "--limit", "2", "--models-file", str(models), "--quiet",
                             "--device", "cpu"])
        finally:
            del os.environ["ARENA_IMAGE_API_BASE_URL"]
        out, err = capsys.readouterr()
        assert code == 0, out + err
        assert "96 images made" in out and "preset commonsense-paper (published protocol)" in out
        images = server.images()
        assert len(images) == 16 and {r.body["model"] for r in images} == {"dall-e-3"}  # 2 prompts x 4 x 2 models
        assert sum(r.body["prompt"].startswith("I NEED to test") for r in images) == 8
        assert judge(["commonsense", "--preset", "commonsense-paper", "--suite", "commonsense", "--base-url",
                      server.base_url, "--no-progress"]) == 0
        chat = [r for r in server.snapshot() if r.endpoint == "chat"]
        assert {r.body["model"] for r in chat} == {"gpt-4o"} and {d for r in chat for d in r.image_details} == {"low"}
    assert metrics(["--suite", "commonsense", "--preset", "commonsense-paper", "--tiny", "--quiet"]) == 0
    db = connect(tmp_path / "arena.db")
    params = {name: json.loads(p) for name, p in db.execute(
        "SELECT m.name, i.params FROM images i JOIN models m ON m.id = i.model_id WHERE i.idx = 3 "
        "AND i.prompt_id = (SELECT MIN(prompt_id) FROM images WHERE json_extract(params, '$.preset') = "
        "'commonsense-paper')")}  # the demo's own images record preset 'arena' since the bundle was remade
    db.close()
    assert params["sdxl"]["steps"] == 28 and params["sdxl"]["guidance"] == 7.0  # generate_images.py, not the card
    assert params["sdxl-partner-negative"]["negative_prompt"] == "A lightbulb with electricity"
    assert params["dall-e-3"]["revised_prompt"].startswith("A lightbulb without electricity.")
    assert all(p["preset"] == "commonsense-paper" for p in params.values()) and len(params) == 12

    text = report_text(capsys, "commonsense")
    assert "Protocol: preset commonsense-paper (published protocol)" in text
    paper_rows = ["SD-21", "SD-XL", "SD-XL w/ negative prompt", "Openjourney v4", "Playground v2.5", "LCMs", "SD-3",
                  "SD-3 w/ negative prompt", "Flux Dev", "Flux Schenel", "DALL-E 3", "DALL-E 3 w/o revision"]
    header = next(line for line in text.split("## Table 2:", 1)[1].splitlines() if line.startswith("| **Model**"))
    labels = [cell.strip().strip("*") for cell in header.strip("|").split("|")]
    gpt4o, tiny_clip = labels.index("GPT-4o") - 1, labels.index("CLIP [open_clip:open-clip-tiny]") - 1
    for row in [*paper_rows, "demo-painter", "demo-tiny-unet"]:
        cells = row_cells(text, "2", row)
        for column in (gpt4o, tiny_clip):  # filled: a percentage of one item's four generations (or of 14 items)
            assert re.fullmatch(r"\d+\.\d\d( \(paper \d+\.\d\d\))?", cells[column]), (row, cells)
        assert cells[labels.index("Human") - 1].startswith("—["), (row, cells)
    assert re.search(r"\[\d\] no commonsense_clip_accuracy from open_clip:ViT-L-14:openai: python -m judges metrics "
                     r"--suite commonsense --preset commonsense-paper", text)
    assert "no human fit judgments of this model yet: open the task (python -m arena ratings assign commonsense_fit)" \
        in text
    percents = [float(row_cells(text, "1", c)[1].split()[0]) for c in
                ("Physical Laws", "Human Practices", "Biological Laws", "Daily Items", "Animal Behaviors")]
    assert sum(percents) == pytest.approx(100, abs=0.3) and "14 items in the database (the paper: 150)." in text


def test_consistency_paper_preset_fake_run_fills_its_report(demo, tmp_path, capsys):
    if not PARAPHRASES.is_file():
        pytest.skip(f"{PARAPHRASES} is missing: the consistency benchmark's prompts (../shared/data/hollinger)")
    from arena.commands import main as arena
    from generators.commands import main as generate
    from judges.metrics.commands import main as metrics

    assert arena(["suites", "import", "paraphrase", str(PARAPHRASES)]) == 0
    models = tiny_models_file(tmp_path / "models.toml", "consistency-paper")
    import os

    with FakeServer() as server:
        os.environ["ARENA_IMAGE_API_BASE_URL"] = server.base_url
        try:
            for subset in ("abstract", "realistic"):  # one object of each category, two of its wordings (CPU time)
                assert generate(["run", "--preset", "consistency-paper", "--suite", "paraphrase", "--subset", subset,
                                 "--limit", "2", "--models-file", str(models), "--quiet", "--device", "cpu"]) == 0
        finally:
            del os.environ["ARENA_IMAGE_API_BASE_URL"]
        assert len(server.images()) == 4
    capsys.readouterr()
    assert metrics(["--suite", "paraphrase", "--preset", "consistency-paper", "--tiny", "--quiet"]) == 0
    db = connect(tmp_path / "arena.db")
    steps = dict(db.execute("SELECT m.name, json_extract(i.params, '$.steps') FROM images i JOIN models m "
                            "ON m.id = i.model_id JOIN prompts p ON p.id = i.prompt_id WHERE p.suite = 'paraphrase'"))
    db.close()
    assert steps == {"sd-2": 50, "sd-2-1": 50, "sd3": 50, "dall-e-3": None}  # the paper's 50 steps (and 7.5)

    text = report_text(capsys, "consistency")
    assert "Protocol: preset consistency-paper (published protocol)" in text
    header = next(line for line in text.split("## Table 1:", 1)[1].splitlines() if line.startswith("| **Model**"))
    labels = [cell.strip().strip("*") for cell in header.strip("|").split("|")]
    for row in ("SD2", "SD2.1", "SD3-medium", "DALL-E 3"):
        cells = row_cells(text, "1", row)
        for stat in ("std", "min", "med"):
            assert re.fullmatch(r"-?\d+\.\d\d", cells[labels.index(f"{stat} [align:align-tiny/align_score]") - 1])
        assert cells[labels.index("std") - 1].startswith("—[")  # the paper's score is the real ALIGN
        figure = row_cells(text, "F3", row)
        assert all(re.fullmatch(r"-?\d+\.\d\d", cell) for cell in figure if not cell.startswith("—["))
    assert "(paper -0.86)" in row_cells(text, "1", "SD3-medium")[0]
    assert re.search(r"no consistency metrics from align:kakaobrain/align-base/align_score: python -m judges "
                     r"metrics --suite paraphrase --preset consistency-paper", text)
