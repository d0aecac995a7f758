"""T2 commonsense, T3 SemVarBench and T4 SANEval judges end to end against the local server; scores in metrics."""

import asyncio
import io
import json
import re

import pandas as pd
import pytest
from PIL import Image
from support.openai_stub import Book, FakeDetection, FakeDetector, add_item_images, colored, engine_config, pixels_key

from datamodel.catalog import PromptSpec, add_image, add_model
from datamodel.judgments import judgments
from judges.commonsense import image_rng, resolve_fits, run_commonsense
from judges.saneval import SanevalOptions, run_saneval
from judges.selection import Selection
from judges.semvar import run_semvar
from tools.fake_openai import FakeServer, Scripted

JUDGE = "gpt-judge:gpt-4o-mini"


def metrics(db, name, image_level=False):
    rows = db.execute(
        f"SELECT m.name, x.subset, x.value, x.details FROM metrics x JOIN models m ON m.id = x.model_id "
        f"WHERE x.name = ? AND x.scorer = ? AND x.image_id IS {'NOT NULL' if image_level else 'NULL'} "
        f"ORDER BY m.name, x.subset", [name, JUDGE]).fetchall()
    return {(model, subset): (value, json.loads(details)) for model, subset, value, details in rows}


def images_by_hash(db):
    return {h: (model, role, idx) for h, model, role, idx in db.execute(
        "SELECT i.media_hash, m.name, p.role, i.idx FROM images i JOIN models m ON m.id = i.model_id "
        "JOIN prompts p ON p.id = i.prompt_id")}


# --- T2 ----------------------------------------------------------------------------------------------------------

def test_commonsense_accuracy_per_model_and_category(small_arena):
    db, media = small_arena.db, small_arena.media
    alpha = small_arena.model_ids["alpha-model"]
    p1, p2 = small_arena.prompt_ids[3], small_arena.prompt_ids[4]
    for prompt_id, color in ((p1, (1, 2, 3)), (p2, (4, 5, 6))):  # a second generation of alpha, judged wrong
        add_image(db, prompt_id=prompt_id, model_id=alpha, stored=media.put_image(colored(color)), idx=1)
    owner = images_by_hash(db)

    def fit(received):
        model, role, idx = owner[received.image_hashes()[0]]
        asks_d1 = '"The lightbulb is unlit"' in received.text
        if model == "delta-model" and role == "p2":
            return Scripted("It depends on the wattage.")
        if model == "bravo-model" and role == "p1":
            return Scripted("1")  # fits both descriptions: one is kept at random
        right = (role == "p1") == asks_d1
        if model == "charlie-model" or (model == "alpha-model" and idx == 1):
            right = not right
        return Scripted("1" if right else "0")

    with FakeServer(fit) as server:
        summary = asyncio.run(run_commonsense(db, media, engine_config(server), Selection(), env={}, progress=False,
                                              handle_signals=False))
        assert len(server.received) == 5 * 4  # 5 generation pairs x 2 images x 2 descriptions
        for received in server.received:
            assert received.text.startswith("Can you tell me if the image generally fits the descriptions \"The ")
            assert len(received.image_urls) == 1 and received.image_details == ["high"]
    assert (summary.done, summary.failed) == (3, 1)
    accuracy = metrics(db, "commonsense_accuracy")
    bravo_p1 = db.execute("SELECT id FROM images WHERE prompt_id = ? AND model_id = ?",
                          [p1, small_arena.model_ids["bravo-model"]]).fetchone()[0]
    bravo_keeps_d1 = resolve_fits(1, 1, image_rng(0, bravo_p1))[0]
    assert accuracy[("alpha-model", "")][0] == 0.5  # generations 1 and 0 of the one item
    assert accuracy[("charlie-model", "")][0] == 0.0
    assert accuracy[("bravo-model", "")][0] == float(bravo_keeps_d1)
    assert ("delta-model", "") not in accuracy
    assert accuracy[("alpha-model", "Physical Laws")][0] == 0.5
    assert accuracy[("alpha-model", "")][1]["items"] == 1
    pairs = judgments(db, task="commonsense_pair")
    assert len(pairs) == 4 and {p["verdict"]["score"] for p in pairs} <= {0, 1}
    failed = [row for row in judgments(db, task="commonsense_fit") if row["status"] == "failed"]
    assert len(failed) == 2 and all(r["reason"].startswith("unparseable reply: expected the number 1 or 0")
                                    for r in failed)
    fits = db.execute("SELECT COUNT(*) FROM metrics WHERE name = 'commonsense_fit' AND image_id IS NOT NULL")
    assert fits.fetchone()[0] == 8  # both images of the 4 scored pairs
    assert any("commonsense accuracy of alpha-model: 0.500 over 1 items" in note for note in summary.notes)


def test_commonsense_failed_fits_count_as_not_fitting_under_the_published_rule(small_arena):
    """evaluate.py turns an answer that is not a number into -1, which supports no description: the pair is wrong
    (score 0) instead of left out. delta's P2 image gets a hedge; its P1 image fits D1."""
    db, media = small_arena.db, small_arena.media
    owner = images_by_hash(db)

    def fit(received):
        model, role, _ = owner[received.image_hashes()[0]]
        if model == "delta-model" and role == "p2":
            return Scripted("It depends on the wattage.")
        return Scripted("1" if (role == "p1") == ('"The lightbulb is unlit"' in received.text) else "0")

    for rule, expected in (("skip", None), ("unfit", 0.0)):
        with FakeServer(fit) as server:
            asyncio.run(run_commonsense(db, media, engine_config(server), Selection(models=("delta-model",)), env={},
                                        progress=False, handle_signals=False, failed_fit=rule, name=f"judge-{rule}"))
        rows = db.execute("SELECT x.value FROM metrics x JOIN models m ON m.id = x.model_id WHERE m.name = "
                          "'delta-model' AND x.name = 'commonsense_accuracy' AND x.subset = '' AND x.scorer = ?",
                          [f"judge-{rule}:gpt-4o-mini"]).fetchall()
        assert [row[0] for row in rows] == ([] if expected is None else [expected]), rule
    pair = judgments(db, "judge-unfit:gpt-4o-mini", "commonsense_pair")[0]["verdict"]
    assert (pair["score"], pair["fit_11"], pair["fit_22"], pair["failed_fits"]) == (0, 1, 0, 2)


# --- T3 ----------------------------------------------------------------------------------------------------------

EXAMPLES = {  # (S(Ta,Ia), S(Tpv,Ipv), S(Tpi,Ipi), S(Tpv,Ia), S(Ta,Ipv), S(Tpi,Ia), S(Ta,Ipi)) from protocols.md T3
    "model-one": (0.98, 0.95, 0.98, 0.45, 0.55, 0.98, 0.95),
    "model-two": (0.65, 0.45, 1.00, 0.35, 0.45, 0.30, 0.95),
}
CALL_ORDER = [("anchor", "anchor"), ("permutation", "permutation"), ("paraphrase", "paraphrase"),
              ("permutation", "anchor"), ("anchor", "permutation"), ("paraphrase", "anchor"), ("anchor", "paraphrase")]
TEXTS = {"anchor": "a dog chasing a cat", "permutation": "a cat chasing a dog", "paraphrase": "a cat chased by a dog"}


def test_semvar_effect_reproduces_the_worked_examples(tmp_path):
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    specs = [PromptSpec("semvarbench", "item-1", TEXTS[role], role=role, metadata={"categories": ["Action"],
                                                                                  "category": "Action"})
             for role in TEXTS]
    images = {(model, role): [colored((10 * m, 20 * r, 30))] for m, model in enumerate([*EXAMPLES, "model-three"])
              for r, role in enumerate(TEXTS)}
    add_item_images(db, media, specs, images)
    owner = images_by_hash(db)

    def score(received):
        text_role = next(role for role, text in TEXTS.items() if received.text.endswith(f"[Prompt] {text}"))
        model, image_role, _ = owner[received.image_hashes()[0]]
        if model == "model-three":
            return Scripted("Relevance: high. Object Accuracy: high.") if text_role == "paraphrase" else \
                Scripted("Relevance (0-50 points): [[40]], Object Accuracy (0-50 points): [[40]]")
        value = round(EXAMPLES[model][CALL_ORDER.index((text_role, image_role))] * 100)
        return Scripted(f"Explanation. Relevance (0-50 points): [[{value // 2}]], "
                        f"Object Accuracy (0-50 points): [[{value - value // 2}]]")

    with FakeServer(score) as server:
        summary = asyncio.run(run_semvar(db, media, engine_config(server), Selection(), env={}, progress=False,
                                         handle_signals=False))
        assert len(server.received) == 21
        assert all(r.text.startswith("Does the generated image align with the given prompt?") for r in server.received)
    assert (summary.done, summary.failed) == (2, 1)
    kappa, gamma_w, gamma_wo, mean = (metrics(db, name) for name in
                                      ("semvar_kappa", "semvar_gamma_w", "semvar_gamma_wo", "semvar_score"))
    assert kappa[("model-one", "")][0] == pytest.approx(0.90)
    assert (mean[("model-one", "")][0], gamma_w[("model-one", "")][0], gamma_wo[("model-one", "")][0]) == \
        pytest.approx((0.97, 0.93, 0.03))
    assert kappa[("model-two", "")][0] == pytest.approx(-0.70)
    assert kappa[("model-two", "Action")][0] == pytest.approx(-0.70)
    assert ("model-three", "") not in kappa
    items = {r["model_id"]: r["verdict"] for r in judgments(db, task="semvar_item")}
    assert len(items) == 2
    one = db.execute("SELECT id FROM models WHERE name = 'model-one'").fetchone()[0]
    assert items[one]["scores"]["S(T_permutation,I_anchor)"] == pytest.approx(0.45)
    assert set(metrics(db, "semvar_alignment", image_level=True)) == {("model-one", ""), ("model-two", ""),
                                                                      ("model-three", "")}
    failed = [r for r in judgments(db, task="semvar_score") if r["status"] == "failed"]
    assert len(failed) == 2 and all("expected two ratings [[n]]" in r["reason"] for r in failed)  # T_pi twice
    table = leaderboard_table(db)
    assert table.loc["model-one", "semvar_kappa"] == pytest.approx(0.90)
    assert table.loc["model-two", "semvar_kappa"] == pytest.approx(-0.70)
    assert table.loc["model-one", "semvar_score"] == pytest.approx(0.97)
    assert table.loc["model-two", "semvar_gamma_wo"] == pytest.approx(1.00)
    assert pd.isna(table.loc["model-three", "semvar_kappa"])  # no item score: a blank, not a zero
    assert table.loc["model-three", "semvar_alignment"] == pytest.approx(0.80)  # the mean of its own-prompt scores
    db.close()


def leaderboard_table(db):
    from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard

    return compute_leaderboard(db, LeaderboardOptions(rounds=10)).table.set_index("model")


# --- T4 ----------------------------------------------------------------------------------------------------------

COLORS: dict[tuple[int, ...], str] = {(255, 0, 0): "red", (0, 0, 255): "blue", (0, 160, 0): "green"}


def crop_color(received) -> str:
    image = Image.open(io.BytesIO(received.images()[0])).convert("RGB")
    pixel = image.getpixel((image.width // 2, image.height // 2))
    assert isinstance(pixel, tuple)  # an RGB image's pixel is a tuple of its bands
    return COLORS.get(pixel, "gray")


def saneval_book() -> Book:
    def synonyms(received):
        objects = re.search(r"Objects: (.*)\n", received.text).group(1).split(", ")
        return Scripted(json.dumps({"synonyms": {o: ["automobile"] if o == "car" else [] for o in objects}}))

    def rating(received):
        expected = re.search(r'The color expected by the prompt is "(.*?)"', received.text).group(1)
        answer = re.search(r'It answered: "(.*?)"', received.text).group(1)
        if expected == "purple":
            return Scripted("The answer matches somewhat.")  # no JSON: a failed step
        return Scripted(json.dumps({"score": 1.0 if expected in answer else 0.0, "detected": answer.split()[-1][:-1]}))

    return (Book()
            .add(r"^List the physical objects.*Prompt: Two cups", Scripted('{"objects": ["cup"]}'))
            .add(r"^Give how many of each object.*Prompt: Two cups", Scripted('```json\n{"counts": {"cup": 2}}\n```'))
            .add(r"other names an object detector", synonyms)
            .add(r"vision model was shown a crop", rating)
            .add(r"^What color is the object\?$", lambda r: Scripted(f"The object is {crop_color(r)}.")))


def test_saneval_scores_feedback_and_model_scores(tmp_path):
    from datamodel.catalog import add_prompts
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    specs = [
        PromptSpec("saneval", "color-0", "A red apple and a blue car", subset="color", metadata={
            "category": "color", "objects": ["apple", "car"], "attribute_kind": "color",
            "attributes": {"apple": "red", "car": "blue"}}),
        PromptSpec("saneval", "spatial-0", "A dog to the left of a chair", subset="spatial", metadata={
            "category": "spatial", "objects": ["dog", "chair"],
            "relation": {"subject": "dog", "relation": "left of", "object": "chair"}}),
        PromptSpec("saneval", "numeracy-0", "Three apples", subset="numeracy", metadata={
            "category": "numeracy", "objects": ["apple"], "counts": {"apple": 3}}),
        PromptSpec("saneval", "list-1", "Two cups", subset="numeracy", metadata={"category": "numeracy"}),
        PromptSpec("saneval", "color-1", "A purple hat", subset="color", metadata={
            "category": "color", "objects": ["hat"], "attributes": {"hat": "purple"}}),
    ]
    prompt_ids = add_prompts(db, specs).ids
    model = add_model(db, "alpha-model")
    gray = (128, 128, 128)
    pictures = [
        colored(gray, 64, (4, 4, 20, 20), (255, 0, 0)),        # red apple ...
        colored(gray, 64, (6, 30, 24, 50), (0, 0, 255)),       # dog left, chair right (drawn below)
        colored(gray, 64, (1, 1, 3, 3), (0, 0, 255)),
        colored(gray, 64, (2, 2, 5, 5), (0, 0, 255)),
        colored(gray, 64, (20, 20, 40, 40), (255, 0, 255)),
    ]
    from PIL import ImageDraw
    ImageDraw.Draw(pictures[0]).rectangle((40, 40, 60, 60), fill=(0, 160, 0))  # ... and a green car
    table = {
        pixels_key(pictures[0]): [FakeDetection("apple", 0.9, (4, 4, 20, 20)),
                                  FakeDetection("automobile", 0.8, (40, 40, 60, 60))],
        pixels_key(pictures[1]): [FakeDetection("dog", 0.9, (6, 30, 24, 50)),
                                  FakeDetection("chair", 0.7, (40, 20, 60, 60))],
        pixels_key(pictures[2]): [FakeDetection("apple", 0.9, (0, 0, 10, 10)),
                                  FakeDetection("apple", 0.8, (30, 30, 40, 40))],
        pixels_key(pictures[3]): [FakeDetection("cup", 0.9, (0, 0, 10, 10)),
                                  FakeDetection("cup", 0.6, (40, 40, 60, 60))],
        pixels_key(pictures[4]): [FakeDetection("hat", 0.9, (20, 20, 40, 40))],
    }
    for prompt_id, picture in zip(prompt_ids, pictures):
        add_image(db, prompt_id=prompt_id, model_id=model, stored=media.put_image(picture))
    detector = FakeDetector(table)

    def run():
        return asyncio.run(run_saneval(db, media, engine_config(server), Selection(), detector=detector, env={},
                                       progress=False, handle_signals=False))

    with FakeServer(saneval_book()) as server:
        summary = run()
        sent = len(server.received)
        again = run()
        assert len(server.received) == sent  # all answers and detections come back from the database
    assert (summary.done, summary.failed) == (4, 1)
    assert again.requests_sent == 0 and len(detector.calls) == 5
    assert any("automobile" in labels for labels in detector.calls)
    per_image = {row["subject"]: row for row in judgments(db, task="saneval")}
    by_text = {spec.text: per_image[f"image:{i + 1}"] for i, spec in enumerate(specs)}
    color = by_text["A red apple and a blue car"]
    assert color["verdict"]["score"] == 0.5
    assert color["verdict"]["feedback"] == ["Poor attribute binding: expected blue car, but detected green car"]
    assert by_text["A dog to the left of a chair"]["verdict"]["score"] == 1.0
    assert by_text["Three apples"]["verdict"]["score"] == 0.5
    assert by_text["Three apples"]["verdict"]["feedback"] == ["one apple missing"]
    assert by_text["Two cups"]["verdict"]["score"] == 1.0
    assert by_text["Two cups"]["verdict"]["expected"]["source"] == "llm"
    hat = by_text["A purple hat"]
    assert hat["status"] == "failed"
    assert hat["reason"].startswith("rating hat: unparseable reply: expected a JSON object")
    assert metrics(db, "saneval_color")[("alpha-model", "")][0] == 0.5
    assert metrics(db, "saneval_numeracy")[("alpha-model", "")][0] == 0.75
    assert metrics(db, "saneval_spatial")[("alpha-model", "")][0] == 1.0
    assert len(metrics(db, "saneval_image_score", image_level=True)) == 3  # keyed by (model, category)
    overall = metrics(db, "saneval_overall")[("alpha-model", "")]
    assert overall[0] == pytest.approx((0.5 + 0.75 + 1.0) / 3)
    assert overall[1]["categories"] == ["color", "numeracy", "spatial"]
    board = leaderboard_table(db).loc["alpha-model"]
    assert (board["saneval_color"], board["saneval_numeracy"], board["saneval_spatial"]) == (0.5, 0.75, 1.0)
    assert board["saneval_overall"] == pytest.approx((0.5 + 0.75 + 1.0) / 3)
    assert "saneval_shape" not in board.index  # no shape prompt was scored
    db.close()


def test_saneval_without_a_detector_says_what_to_pass(small_arena):
    with pytest.raises(ValueError, match="SANEval scoring needs a detector: pass --detector"):
        with FakeServer(lambda r: Scripted("")) as server:
            asyncio.run(run_saneval(small_arena.db, small_arena.media, engine_config(server),
                                    Selection(suite="commonsense"), detector=None, env={}, progress=False,
                                    options=SanevalOptions(), handle_signals=False))


def test_judge_scores_show_on_the_leaderboard(small_arena):
    from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard

    owner = images_by_hash(small_arena.db)

    def fit(received):  # every model right, except charlie which swaps the descriptions
        model, role, _ = owner[received.image_hashes()[0]]
        right = (role == "p1") == ('"The lightbulb is unlit"' in received.text)
        return Scripted("1" if right != (model == "charlie-model") else "0")

    with FakeServer(fit) as server:
        asyncio.run(run_commonsense(small_arena.db, small_arena.media, engine_config(server), Selection(), env={},
                                    progress=False, handle_signals=False))
    table = compute_leaderboard(small_arena.db, LeaderboardOptions(rounds=10)).table.set_index("model")
    assert table.loc["alpha-model", "commonsense_accuracy"] == 1.0
    assert table.loc["charlie-model", "commonsense_accuracy"] == 0.0


# --- T2: generations paired by index, template versions ----------------------------------------------------------

RANKING_NAMES = ("alpha-model", "bravo-model", "charlie-model", "delta-model")


def _commonsense_fit(owner, wrong=()):
    """A fit judge right about every image except those (model, role, idx) in ``wrong``."""
    def fit(received):
        model, role, idx = owner[received.image_hashes()[0]]
        right = (role == "p1") == ('"The lightbulb is unlit"' in received.text)
        return Scripted("1" if right != ((model, role, idx) in wrong) else "0")
    return fit


def test_commonsense_pairs_generations_by_index_and_skips_unmatched_ones(small_arena):
    db, media = small_arena.db, small_arena.media
    alpha, bravo = small_arena.model_ids["alpha-model"], small_arena.model_ids["bravo-model"]
    p1, p2 = small_arena.prompt_ids[3], small_arena.prompt_ids[4]
    # alpha: P1 has generations 0 and 1, P2 only 1 (its generation 0 is missing); bravo: an extra P2 generation 2
    db.execute("DELETE FROM images WHERE prompt_id = ? AND model_id = ? AND idx = 0", [p2, alpha])
    for prompt_id, model_id, idx, color in ((p1, alpha, 1, (1, 2, 3)), (p2, alpha, 1, (4, 5, 6)),
                                            (p2, bravo, 2, (7, 8, 9))):
        add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(colored(color)), idx=idx)
    db.conn.commit()
    owner = images_by_hash(db)
    # alpha's P1 generation 0 is judged wrong: paired by list position it would meet P2 generation 1 and score 0
    with FakeServer(_commonsense_fit(owner, wrong={("alpha-model", "p1", 0)})) as server:
        summary = asyncio.run(run_commonsense(db, media, engine_config(server), Selection(), env={}, progress=False,
                                              handle_signals=False))
        asked = {owner[r.image_hashes()[0]] for r in server.received}
    assert len(server.received) == 4 * 4  # one matched pair per model, 2 images x 2 descriptions
    assert ("alpha-model", "p1", 0) not in asked and ("bravo-model", "p2", 2) not in asked
    pairs = {row["model_id"]: row for row in judgments(db, task="commonsense_pair")}
    assert pairs[alpha]["verdict"]["generation"] == 1 and pairs[alpha]["verdict"]["score"] == 1
    paired = [db.execute("SELECT media_hash FROM images WHERE id = ?", [int(i)]).fetchone()[0]
              for i in pairs[alpha]["subject"].split(":")[1:]]  # subject pair:<P1 image id>:<P2 image id>
    assert [owner[h] for h in paired] == [("alpha-model", "p1", 1), ("alpha-model", "p2", 1)]
    assert metrics(db, "commonsense_accuracy")[("alpha-model", "")][0] == 1.0
    assert "item '0', model alpha-model: generation(s) 0 (P1 only) skipped (an image for only one of P1 and P2); " \
           "generate the missing image to score them." in summary.notes
    assert any(note.startswith("item '0', model bravo-model: generation(s) 2 (P2 only) skipped")
               for note in summary.notes)


def test_commonsense_accuracy_counts_only_the_current_template_version(small_arena):
    from judges.prompts import COMMONSENSE_FIT, Templates

    db, media = small_arena.db, small_arena.media
    owner = images_by_hash(db)
    reworded = Templates(commonsense_fit="Reworded. " + COMMONSENSE_FIT)

    def run(server, templates, **selection):
        return asyncio.run(run_commonsense(db, media, engine_config(server), Selection(**selection), env={},
                                           templates=templates, progress=False, handle_signals=False))

    with FakeServer(_commonsense_fit(owner)) as server:
        run(server, Templates())  # every model right under the default template
    assert {m: v for (m, s), (v, _) in metrics(db, "commonsense_accuracy").items() if s == ""} == \
        {m: 1.0 for m in RANKING_NAMES}
    wrong = {(m, role, 0) for m in ("alpha-model",) for role in ("p1", "p2")}
    with FakeServer(_commonsense_fit(owner, wrong=wrong)) as server:
        summary = run(server, reworded, models=("alpha-model",))
    accuracy = metrics(db, "commonsense_accuracy")
    assert accuracy[("alpha-model", "")][0] == 0.0  # not averaged with its default-template score
    assert accuracy[("alpha-model", "")][1]["pairs"] == 1
    # the other models were only judged with the old template: their accuracies from it are gone
    assert set(accuracy) == {("alpha-model", ""), ("alpha-model", "Physical Laws")}
    assert "3 pair scores of this judge name from another template version were left out of the model scores; " \
           "judge them again with this template to count them." in summary.notes
    versions = {row["verdict"]["template_version"] for row in judgments(db, task="commonsense_pair")}
    assert len(versions) == 2 and all(v.startswith("t2:") for v in versions)


# --- T3: template versions, leaderboard ---------------------------------------------------------------------------

def test_semvar_model_scores_count_only_the_current_template_version(tmp_path):
    from datamodel.connection import connect
    from datamodel.media import MediaStore
    from judges.prompts import SEMVAR, Templates

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    specs = [PromptSpec("semvarbench", f"item-{k}", f"{TEXTS[role]} {k}", role=role) for k in (1, 2)
             for role in TEXTS]
    for k in (1, 2):
        add_item_images(db, media, [s for s in specs if s.item_key == f"item-{k}"],
                        {("model-one", role): [colored((k * 50, r * 60, 9))] for r, role in enumerate(TEXTS)})

    def reply(value):
        return lambda received: Scripted(f"Relevance (0-50 points): [[{value}]], Object Accuracy (0-50 points): [[0]]")

    def run(server, templates, first_item_only=False):
        selection = Selection(limit=1) if first_item_only else Selection()
        return asyncio.run(run_semvar(db, media, engine_config(server), selection, env={}, templates=templates,
                                      progress=False, handle_signals=False))

    with FakeServer(reply(40)) as server:
        run(server, Templates())  # both items: S = 0.4 everywhere
    assert metrics(db, "semvar_score")[("model-one", "")][0] == pytest.approx(0.4)
    with FakeServer(reply(10)) as server:
        summary = run(server, Templates(semvar="Reworded. " + SEMVAR), first_item_only=True)
    score = metrics(db, "semvar_score")[("model-one", "")]
    assert score[0] == pytest.approx(0.1) and score[1]["items"] == 1  # not (0.1 + 0.4) / 2
    assert any(note.startswith("1 item scores of this judge name from another template version were left out")
               for note in summary.notes)
    db.close()


# --- T4: LLM extraction for binding and spatial prompts ----------------------------------------------------------

def test_saneval_llm_extracts_attributes_and_spatial_relations(tmp_path):
    from datamodel.catalog import add_prompts
    from datamodel.connection import connect
    from datamodel.media import MediaStore

    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    specs = [PromptSpec("saneval", "c", "A red apple and a blue car", subset="color", metadata={"category": "color"}),
             PromptSpec("saneval", "s", "A dog to the left of a chair", subset="spatial",
                        metadata={"category": "spatial"}),
             PromptSpec("saneval", "n", "A quiet dog and a chair", subset="spatial", metadata={"category": "spatial"})]
    model = add_model(db, "alpha-model")
    gray = (128, 128, 128)
    color = colored(gray, 64, (4, 4, 20, 20), (255, 0, 0))
    from PIL import ImageDraw
    ImageDraw.Draw(color).rectangle((40, 40, 60, 60), fill=(0, 0, 255))
    spatial = colored(gray, 64, (40, 30, 60, 50), (0, 160, 0))  # the dog is on the right: the relation fails
    quiet = colored(gray, 64, (1, 1, 9, 9), (0, 0, 255))
    for prompt_id, picture in zip(add_prompts(db, specs).ids, (color, spatial, quiet)):
        add_image(db, prompt_id=prompt_id, model_id=model, stored=media.put_image(picture))
    detector = FakeDetector({
        pixels_key(color): [FakeDetection("apple", 0.9, (4, 4, 20, 20)),
                            FakeDetection("automobile", 0.8, (40, 40, 60, 60))],
        pixels_key(spatial): [FakeDetection("dog", 0.9, (40, 30, 60, 50)),
                              FakeDetection("chair", 0.8, (2, 20, 20, 60))],
    })
    book = (saneval_book()
            .add(r"^List the physical objects.*Prompt: A red apple", Scripted('{"objects": ["apple", "Car"]}'))
            .add(r"^For each object of this text-to-image prompt, give the color.*Objects: apple, car.*Prompt: A red",
                 Scripted('Sure: {"attributes": {"apple": "Red", "car": "blue"}}'))
            .add(r"^List the physical objects.*Prompt: A (dog|quiet)", Scripted('{"objects": ["dog", "chair"]}'))
            .add(r"^Give the spatial relation.*Objects: dog, chair.*Prompt: A dog to the left",
                 Scripted('{"subject": "dog", "relation": "left of", "object": "chair"}'))
            .add(r"^Give the spatial relation.*Prompt: A quiet dog", Scripted('{"relation": null}')))
    with FakeServer(book) as server:
        summary = asyncio.run(run_saneval(db, media, engine_config(server), Selection(), detector=detector, env={},
                                          progress=False, handle_signals=False))
    rows = {row["subject"]: row for row in judgments(db, task="saneval")}
    assert (summary.done, summary.failed) == (2, 1), [row["reason"] for row in rows.values()]
    binding, relation, none = (rows[f"image:{i}"] for i in (1, 2, 3))
    assert binding["verdict"]["expected"] == {"category": "color", "objects": ["apple", "car"],
                                              "attributes": {"apple": "red", "car": "blue"}, "relation": None,
                                              "counts": {}, "source": "llm"}
    assert binding["verdict"]["score"] == 1.0 and binding["verdict"]["feedback"] == []
    assert [step["step"] for step in binding["raw"]][:2] == ["objects", "attributes"]
    assert relation["verdict"]["expected"]["relation"] == ["dog", "left of", "chair"]
    assert relation["verdict"]["expected"]["source"] == "llm"
    assert relation["verdict"]["score"] == 0.0
    assert relation["verdict"]["feedback"] == ["Wrong spatial relation: expected dog left of chair, but detected dog "
                                               "right of chair"]
    assert none["status"] == "failed" and none["reason"] == "spatial: the LLM found no spatial relation in the prompt"
    assert metrics(db, "saneval_color")[("alpha-model", "")][0] == 1.0
    assert metrics(db, "saneval_spatial")[("alpha-model", "")][0] == 0.0
    db.close()
