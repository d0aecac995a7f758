"""Commonsense-T2I as the authors' code ran it: the judges and CLIP see the JPEG that generate_images.py saved
(``image.save('....jpg')``: Pillow's quality 75), the fit judge asks with ``max_tokens=10`` as evaluate.py does, and
Fig. 5 (the CLIP similarity of P1 and P2 against the human score) comes out of the report."""

from __future__ import annotations

import asyncio
import io

import torch
from PIL import Image
from support.openai_stub import engine_config

from core.presets import get_preset
from judges.commonsense import run_commonsense
from judges.selection import Selection
from tools.fake_openai import FakeServer, Scripted


def authors_jpeg(path) -> bytes:
    """What generate_images.py wrote: the image saved as .jpg by Pillow with its defaults (quality 75)."""
    buffer = io.BytesIO()
    with Image.open(path) as image:
        image.convert("RGB").save(buffer, format="JPEG", quality=75)
    return buffer.getvalue()


def stored_paths(arena) -> dict[str, object]:
    """{sha256 of the image sent as PNG: its media path} of every commonsense image."""
    return {h: arena.media.path(h, ext) for h, ext in arena.db.execute(
        "SELECT i.media_hash, i.media_ext FROM images i JOIN prompts p ON p.id = i.prompt_id "
        "WHERE p.suite = 'commonsense'")}


def test_under_the_preset_the_fit_judge_sees_the_jpeg_and_asks_for_ten_tokens(small_arena):
    options = get_preset("commonsense-paper").get("judge.options")
    assert options["jpeg_quality"] == 75 and options["max_tokens"] == 10
    expected = {authors_jpeg(path) for path in stored_paths(small_arena).values()}
    with FakeServer(lambda received: Scripted("1")) as server:
        asyncio.run(run_commonsense(small_arena.db, small_arena.media, engine_config(server), Selection(), env={},
                                    progress=False, handle_signals=False, jpeg_quality=75, max_tokens=10,
                                    name="paper-judge"))
        bodies = list(server.received)
    assert bodies and all(r.body["max_tokens"] == 10 for r in bodies)
    assert all(r.image_urls[0].startswith("data:image/jpeg;base64,") for r in bodies)
    assert {r.images()[0] for r in bodies} <= expected and len({r.images()[0] for r in bodies}) == len(expected)
    versions = {v for v, in small_arena.db.execute(
        "SELECT DISTINCT scorer_version FROM metrics WHERE name = 'commonsense_fit' AND scorer LIKE 'paper-judge%'")}
    assert len(versions) == 1 and next(iter(versions)).endswith("+jpeg75")
    with FakeServer(lambda received: Scripted("1")) as server:  # the project's default: the stored PNG, 20 tokens
        asyncio.run(run_commonsense(small_arena.db, small_arena.media, engine_config(server), Selection(), env={},
                                    progress=False, handle_signals=False))
        assert all(r.image_urls[0].startswith("data:image/png") and r.body["max_tokens"] == 20
                   for r in server.received)


class RecordingEncoder:
    """Embeds texts by the word 'unlit' and images by their mean colour, recording every image it is shown."""

    name, version = "recording", "1"

    def __init__(self):
        from judges.metrics.clip_scores import EncoderCounts

        self.counts, self.seen, self.batch_size = EncoderCounts(), [], 8

    def encode_texts(self, texts):
        return torch.tensor([[1.0, 0.0] if "unlit" in t else [0.0, 1.0] for t in texts])

    def encode_images(self, images):
        self.seen += [image.tobytes() for image in images]
        return torch.nn.functional.normalize(torch.tensor(
            [[float(sum(image.convert("RGB").resize((1, 1)).getpixel((0, 0)))) + 1.0, 1.0] for image in images]),
            dim=-1)

    def encode_stored(self, media, rows):
        return self.encode_images([row.load(media) for row in rows])


def test_under_the_preset_the_clip_evaluator_sees_the_jpeg(small_arena):
    from judges.metrics.commonsense_clip import score_commonsense

    assert get_preset("commonsense-paper").get("metrics.option.commonsense_jpeg_quality") == 75
    encoder = RecordingEncoder()
    score_commonsense(small_arena.db, small_arena.media, encoder, jpeg_quality=75)
    decoded = {Image.open(io.BytesIO(authors_jpeg(path))).convert("RGB").tobytes()
               for path in stored_paths(small_arena).values()}
    assert encoder.seen and set(encoder.seen) == decoded
    versions = {v for v, in small_arena.db.execute(
        "SELECT DISTINCT scorer_version FROM metrics WHERE name = 'commonsense_clip_fit'")}
    assert versions == {"1+jpeg75"}
    stored = RecordingEncoder()
    score_commonsense(small_arena.db, small_arena.media, stored)
    assert set(stored.seen).isdisjoint(decoded)  # without the option: the stored images as they are


def test_fig_5_bins_the_normalised_prompt_similarity():
    """Fig. 5's points: the similarity min-max normalised over the items, seven equal bins, per system the mean
    human score of its items in each bin."""
    from arena.reports.commonsense import figure_5_points

    similarity = {"a": 0.70, "b": 0.80, "c": 0.90, "d": 0.95, "e": 0.99}  # normalised 0, .34, .69, .86, 1
    human = {("sdxl", "a"): 1.0, ("sdxl", "b"): 0.5, ("sdxl", "e"): 0.25, ("sdxl", "d"): 0.75,
             ("dall-e-3", "a"): 0.5, ("dall-e-3", "c"): 1.0, ("dall-e-3", "zz"): 0.0}
    points = figure_5_points(similarity, human)
    assert points["sdxl"] == {0: (1.0, 1), 2: (0.5, 1), 6: (0.5, 2)}  # d (0.86) and e (1.0) share the last bin
    assert points["dall-e-3"] == {0: (0.5, 1), 4: (1.0, 1)}  # an item without a similarity is left out


def test_fig_5_is_printed_with_its_plot_from_the_database(tmp_path, capsys, monkeypatch):
    """``python -m arena report commonsense``: Figure 5's data table from the stored prompt similarities and the
    human fit ratings, and the plot written as an HTML page beside it (``--figures``)."""
    from support.arena import command_line_env
    from support.ratings import build_rating_arena

    from arena.commands import main
    from arena.reports.commonsense import figure_5_points
    from datamodel.annotators import sign_in
    from datamodel.human_ratings import record_rating, record_serving
    from datamodel.metrics import MetricRow, write_metrics
    from judges.metrics.commonsense_clip import PROMPT_SIMILARITY
    from judges.rating_tasks import COMMONSENSE

    arena = build_rating_arena(tmp_path / "arena", items=6)
    db = arena.db
    rows = db.execute("SELECT i.id, i.model_id, p.item_key FROM images i JOIN prompts p ON p.id = i.prompt_id "
                      "WHERE p.suite = 'commonsense'").fetchall()
    cosine = {key: 0.6 + 0.05 * n for n, key in enumerate(sorted({key for _, _, key in rows}))}
    write_metrics(db, [MetricRow(model, PROMPT_SIMILARITY, cosine[key], "open_clip:ViT-L-14:openai", image_id=image,
                                 suite="commonsense") for image, model, key in rows])
    annotator = sign_in(db, "ann", "token-0001", open_signup=True)
    with db.conn:
        for unit in COMMONSENSE.units(db):
            for question in unit.questions:
                serving = record_serving(db, task=COMMONSENSE.name, unit=unit.key, subject=question.subject,
                                         image_id=question.image_id, text_prompt_id=question.text_prompt_id,
                                         shown_text=question.shown_text, annotator_id=annotator.id, session_id="ann")
                right = question.subject.endswith(":d1") == (question.image_id % 2 == 0)
                record_rating(db, serving.id, {"fit": int(right)}, scale=COMMONSENSE.scale, session_id="ann",
                              rules=None)
    db.close()
    command_line_env(arena, monkeypatch, tmp_path)
    folder = tmp_path / "figures"
    code = main(["report", "commonsense", "--figures", str(folder)])
    out = capsys.readouterr().out
    assert code == 0
    assert "## Table F5: Figure 5: CLIP embedding similarity of the prompts P1, P2" in out
    plot = folder / "commonsense-F5.html"
    assert plot.is_file() and f"Plot: {plot}" in out and "plotly" in plot.read_text()[:20000].lower()
    from datamodel.connection import connect
    from datamodel.human_ratings import ratings_frame
    from judges.human_stats import commonsense_pair_scores

    db = connect(arena.settings.db_path)
    pairs = commonsense_pair_scores(ratings_frame(db, task="commonsense_fit"))
    human = {k: float(v) for k, v in pairs.groupby(["model", "item_key"])["score"].mean().items()}
    points = figure_5_points(cosine, human)
    for by_bin in points.values():
        for mean, n in by_bin.values():
            assert f"{mean:.3f} ({n})" in out
    db.close()
