"""SemVarBench's analyses beyond Table 2, from a database: the dated evaluators of the preset, Table 4's token
accuracy (a VLM judge against the local OpenAI-compatible server), and Figures 6 and 14 as data tables and plots."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.openai_stub import colored, engine_config

from arena.reports import make_report
from core.presets import get_preset
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.judgments import Judgment, save_judgment
from datamodel.media import MediaStore
from datamodel.metrics import MetricRow, write_metrics
from judges.semvar import aggregate, item_scores

ITEMS = (("sv1", "A dog chasing a cat", "A cat chasing a dog", "A cat being chased by a dog", "absolute_location"),
         ("sv2", "A tall man beside a short boy", "A short man beside a tall boy", "Beside a short boy, a tall man",
          "height"),
         ("sv3", "A red cup on a blue book", "A blue cup on a red book", "On a blue book, a red cup", "color"))
ROLES = ("anchor", "permutation", "paraphrase")


@pytest.fixture
def arena(tmp_path):
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    specs = [PromptSpec("semvarbench", key, text, role=role, metadata={"categories": [category]})
             for key, *texts, category in ITEMS for role, text in zip(ROLES, texts)]
    ids = dict(zip(((s.item_key, s.role) for s in specs), add_prompts(db, specs).ids))
    images = {}
    for m, model in enumerate(("sdxl-base-refiner", "flux-dev")):
        model_id = add_model(db, model)
        for n, (key, prompt_id) in enumerate(ids.items()):
            images[(model, *key)] = (model_id, add_image(db, prompt_id=prompt_id, model_id=model_id,
                                                         stored=media.put_image(colored((m * 60, n * 20, 5)))))
    yield db, media, images
    db.close()


def item_judgments(db, images, judge: str, scores: dict[str, tuple]):
    """Item scores of ``judge``: {model: the seven scores (CALLS order)}, the same for every item."""
    with db.conn:
        for (model, key, role), (model_id, image_id) in images.items():
            if role != "anchor":
                continue
            seven = scores[model]
            result = item_scores(*seven)
            names = ("anchor,anchor", "permutation,permutation", "paraphrase,paraphrase", "permutation,anchor",
                     "anchor,permutation", "paraphrase,anchor", "anchor,paraphrase")
            save_judgment(db, Judgment(judge, "semvar_item", f"item:{image_id}", "ok", verdict={
                **result, "item_key": key, "categories": ["action"], "template_version": "v",
                "scores": {f"S(T_{t},I_{i})": s for (t, i), s in zip((n.split(",") for n in names), seven)}},
                image_id=image_id, model_id=model_id))
    aggregate(db, judge, "v")


def test_only_the_papers_dated_evaluators_fill_its_columns(arena):
    """Appendix D.2 names each evaluator's version; under the preset a judge of gpt-4o-2024-08-06 is not the paper's
    GPT-4o (its own column group), gpt-4o-2024-05-13 is."""
    db, _, images = arena
    assert get_preset("semvarbench-paper").get("report.evaluators")["GPT-4o"] == "gpt-4o-2024-05-13"
    seven = (0.8, 0.7, 0.75, 0.6, 0.5, 0.7, 0.72)
    item_judgments(db, images, "gpt-judge:gpt-4o-2024-08-06", {"sdxl-base-refiner": seven, "flux-dev": seven})
    later = make_report(db, "semvarbench").table("2")
    assert later.cell("SD XL 1.0", "GPT-4o|kappa").is_missing
    assert not later.cell("SD XL 1.0", "gpt-judge:gpt-4o-2024-08-06|kappa").is_missing
    item_judgments(db, images, "gpt-judge:gpt-4o-2024-05-13", {"sdxl-base-refiner": seven, "flux-dev": seven})
    table = make_report(db, "semvarbench").table("2")
    kappa = item_scores(*seven)["kappa"]
    assert table.cell("SD XL 1.0", "GPT-4o|kappa").value == pytest.approx(kappa)


def test_table_4_token_accuracy_from_the_judge(arena):
    """``judges semvar_tokens``: one question per sentence and its own image; the answer {word: shown} gives the
    image's token accuracy, and Table 4 averages T_a, T_pv and T_pi per model over Absolute Location, Height and all
    items."""
    from judges.selection import Selection
    from judges.semvar_tokens import run_semvar_tokens
    from tools.fake_openai import FakeServer, Scripted

    db, media, images = arena
    shown = {"anchor": {"dog": True, "chasing": True, "cat": True},
             "permutation": {"cat": True, "chasing": False, "dog": True, "tall": False},
             "paraphrase": {"cat": True, "chased": False}}
    texts = {text: role for *all_texts, _ in ITEMS for role, text in zip(ROLES, all_texts[1:])}

    def answer(received):
        text = received.text.split('"', 2)[1]
        return Scripted("```json\n" + json.dumps(shown[texts[text]]) + "\n```")

    with FakeServer(answer) as server:
        summary = asyncio.run(run_semvar_tokens(db, media, engine_config(server, model="gpt-4o-2024-05-13"),
                                                Selection(), env={}, progress=False, handle_signals=False))
        assert all(len(r.image_urls) == 1 for r in server.received)
        assert len(server.received) == 2 * 3 * 3
    assert (summary.done, summary.failed) == (18, 0)
    table = make_report(db, "semvarbench").table("4")
    expected = {"T_a": 1.0, "T_pv": 0.5, "T_pi": 0.5}
    for row in ("Absolute Location: SD XL 1.0", "Height: FLUX.1", "All categories: SD XL 1.0"):
        for column, value in expected.items():
            assert table.cell(row, column).value == pytest.approx(value)
    assert any("gpt-judge:gpt-4o-2024-05-13" in note for note in table.notes)


def test_figures_6_and_14_from_the_stored_similarities_and_scores(arena, tmp_path):
    """Fig. 14: 1 − cos(T_a, T_pv) per model; Fig. 6: the mean cos against S(T_p*, I_a) and γ of the GPT-4o judge.
    Both tables are printed and their plots written (``figures``)."""
    db, _, images = arena
    cosine = {"sdxl-base-refiner": {"permutation": 0.9, "paraphrase": 0.8},
              "flux-dev": {"permutation": 0.98, "paraphrase": 0.7}}
    rows = [MetricRow(model_id, "semvar_text_similarity", cosine[model][role] + 0.01 * n, "text-encoders",
                      image_id=image_id, suite="semvarbench", scorer_version="tiny", details={"role": role})
            for n, ((model, key, role), (model_id, image_id)) in enumerate(sorted(images.items()))
            if role != "anchor"]
    write_metrics(db, rows)
    scores = {"sdxl-base-refiner": (0.8, 0.7, 0.75, 0.6, 0.5, 0.7, 0.72),
              "flux-dev": (0.9, 0.8, 0.85, 0.5, 0.6, 0.85, 0.8)}
    item_judgments(db, images, "gpt-judge:gpt-4o-2024-05-13", scores)
    report = make_report(db, "semvarbench", figures=tmp_path / "figures")
    fourteen, six = report.table("F14"), report.table("F6")
    for model, label in (("sdxl-base-refiner", "SD XL 1.0"), ("flux-dev", "FLUX.1")):
        distances = [1 - r.value for r in rows if r.model_id == images[(model, "sv1", "anchor")][0]
                     and r.details["role"] == "permutation"]
        assert fourteen.cell(label, "mean").value == pytest.approx(sum(distances) / len(distances))
        assert six.cell(label, "sim_pv").value == pytest.approx(1 - sum(distances) / len(distances))
        assert six.cell(label, "S_pv_a").value == pytest.approx(scores[model][3])
        assert six.cell(label, "gamma_wo").value == pytest.approx(item_scores(*scores[model])["gamma_wo"])
    for number in ("F6", "F14"):
        path = tmp_path / "figures" / f"semvarbench-{number}.html"
        assert path.is_file() and any(note == f"Plot: {path}" for note in report.table(number).notes)
