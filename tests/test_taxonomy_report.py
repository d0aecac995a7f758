"""``python -m arena report taxonomy``: a fake run of the whole taxonomy-paper preset on the demo, every table filled
or "—" with its reason, in three formats and beside the paper's numbers.

The run is the one a user makes, through the command lines: the shipped demo (24 Easy concepts, both variants,
four demo models), ``generators run --preset taxonomy-paper`` on a tiny random-weight diffusers model (28 steps,
guidance 7.0, as the preset says), the retrieval images imported for the concepts already in the database (a
stand-in: the demo look-alike's pictures), ``judges metrics --preset taxonomy-paper --tiny`` (tiny random CLIP,
Inception and reward stand-ins), ``judges pairwise --preset taxonomy-paper`` against the local fake OpenAI server
(one call per concept and variant), and human votes cast through the arena's own vote path by scripted
annotators on the same battles.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import shutil

import pytest

from arena.reports import REPORTS, make_report, missing_cells, read_published, render, with_published
from core.presets import get_preset
from datamodel.connection import connect
from datamodel.media import MediaStore
from tools.fake_openai import FakeServer, Scripted

# a fake end-to-end run of a whole published preset on the demo (tiny models, fake OpenAI server): minutes
pytestmark = pytest.mark.slow

# the scripted judges' and annotators' order of preference (lower is better)
RANKING = {"demo-painter": 0, "retrieval": 1, "demo-lookalike": 2, "demo-tiny-dit": 3, "demo-tiny-unet": 4,
           "demo-scribble": 5}


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory, artefact_cache):
    """The demo database after the whole preset ran on it (built once for the module). The tiny stand-ins come from
    the test artefact cache (conftest's ``artefact_cache``): built once per version of their recipes, not at each run
    (a fresh cache folder here rebuilt the tiny PixArt pipeline every time, seconds of CPU: issue 24)."""
    from arena.commands import main as arena
    from generators.commands import main as generators
    from judges.commands import main as judges
    from judges.metrics.commands import main as metrics

    root = tmp_path_factory.mktemp("taxonomy-run")
    saved = {name: os.environ.get(name) for name in ("ARENA_DB", "ARENA_MEDIA_DIR", "ARENA_CACHE_DIR", "ARENA_DEMO",
                                                     "OPENAI_API_KEY", "ARENA_JUDGE_BASE_URL")}
    os.environ.update(ARENA_DB=str(root / "arena.db"), ARENA_MEDIA_DIR=str(root / "media"),
                      ARENA_CACHE_DIR=str(artefact_cache), ARENA_DEMO="0", OPENAI_API_KEY="test-key")
    common = ["--db", str(root / "arena.db"), "--media-dir", str(root / "media"), "--cache-dir", str(artefact_cache)]
    try:
        assert arena(["demo"]) == 0
        # generation under the preset: a tiny PixArt-style pipeline, 28 steps / guidance 7.0, two concepts
        assert generators([*common, "run", "--preset", "taxonomy-paper", "--models", "demo-tiny-dit", "--suite",
                           "taxonomy", "--limit", "4", "--device", "cpu", "--quiet"]) == 0
        db = connect(root / "arena.db")
        media = MediaStore(root / "media")
        folder = root / "retrieval" / "retrieval"  # one retrieved picture per concept, named by its item key
        folder.mkdir(parents=True)
        for key, media_hash, ext in db.execute(
                "SELECT p.item_key, i.media_hash, i.media_ext FROM images i JOIN prompts p ON p.id = i.prompt_id "
                "JOIN models m ON m.id = i.model_id WHERE p.suite = 'taxonomy' AND p.variant = 'without_definition' "
                "AND m.name = 'demo-lookalike'"):
            shutil.copy(media.path(media_hash, ext), folder / f"{key}.{ext}")
        db.close()
        assert arena(["import-images", str(root / "retrieval"), "--suite", "taxonomy"]) == 0
        assert metrics([*common, "--suite", "taxonomy", "--preset", "taxonomy-paper", "--tiny", "--quiet"]) == 0
        with FakeServer(ranked_judge(root)) as server:
            assert judges(["pairwise", "--suite", "taxonomy", "--preset", "taxonomy-paper", "--base-url",
                           server.base_url, "--no-progress"]) == 0
            requests = list(server.received)
        vote_as_annotators(root)
        markdown = report_text(root, "--no-figures")  # the command line, once
        db = connect(root / "arena.db")
        report = make_report(db, "taxonomy", preset=get_preset("taxonomy-paper"))
        db.close()
        yield root, requests, report, markdown
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def ranked_judge(root):
    """A fake GPT judge preferring the better-ranked model's image (by the images' hashes), tie on equal ranks."""

    db = connect(root / "arena.db")
    models = dict(db.execute("SELECT i.media_hash, m.name FROM images i JOIN models m ON m.id = i.model_id"))
    db.close()

    def respond(received) -> Scripted:
        first, second = (RANKING[models[h]] for h in received.image_hashes())
        label = "A" if first < second else "B" if second < first else "C"
        return Scripted(f"One is better. [[{label}]]")

    return respond


def vote_as_annotators(root) -> None:
    """Two scripted annotators vote on the judge's battles through the arena's vote path (mostly by RANKING)."""
    from datamodel.annotators import sign_in
    from datamodel.battles import Pairing
    from datamodel.votes import record_vote
    from sampling.draws import serve_battle

    db = connect(root / "arena.db")
    battles = db.execute("SELECT b.prompt_id, b.left_image_id, b.right_image_id, l.model_id, r.model_id FROM battles b "
                         "JOIN images l ON l.id = b.left_image_id JOIN images r ON r.id = b.right_image_id "
                         "WHERE b.served_to_kind = 'judge' ORDER BY b.served_at, b.id").fetchall()
    names = dict(db.execute("SELECT id, name FROM models"))
    rng = random.Random(0)
    for n, name in enumerate(("annotator-one", "annotator-two")):
        annotator = sign_in(db, name, "a-long-token-123", open_signup=True)
        for prompt_id, left, right, left_model, right_model in battles:
            battle = serve_battle(db, rng, session_id=f"s{n}", annotator_id=annotator.id,
                                  pairing=Pairing(prompt_id, left, right))
            a, b = RANKING[names[left_model]], RANKING[names[right_model]]
            outcome = rng.choice(["tie", "both_bad"]) if rng.random() < 0.15 else ("A" if a < b else "B")
            record_vote(db, battle.id, outcome, session_id=f"s{n}", rules=None)
    db.close()


def report_text(root, *args: str) -> str:
    from arena.commands import main as arena

    out = root / f"report-{len(args)}-{'-'.join(a.strip('-') for a in args)}.txt"
    assert arena(["report", "taxonomy", *args, "--figures", str(root / "figures"), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_the_judge_asked_once_per_concept_and_variant_with_figure_7(fake_run):
    root, requests, _, _ = fake_run
    assert len(requests) == 48  # 24 concepts x 2 variants, one call each
    assert all(r.text.count("[Start of the first image]") == 2 for r in requests)
    assert all(r.image_details == ["high", "high"] and r.body["model"] == "gpt-4o-mini" for r in requests)
    users = {r.text.split("[User Prompt]\n", 1)[1].split("\n[Start", 1)[0] for r in requests}
    assert "chest of drawers (furniture with drawers for keeping clothes)" in users and "chest of drawers" in users


def test_every_table_of_the_paper_is_there_each_cell_a_value_or_a_dash_with_its_reason(fake_run):
    root, _, report, _ = fake_run
    assert [t.number for t in report.tables] == [str(n) for n in range(2, 17)] + ["F4", "F6", "F8", "F9", "R"]
    text = render(report)
    for table in report.tables:
        for label, cells in table.rows:
            for column in table.columns:
                cell = cells.get(column.key)
                assert cell is not None and (cell.text if not cell.missing else cell.missing), (table.number, label)
    footnotes = set(re.findall(r"^\[(\d+)\] ", text, flags=re.M))
    assert footnotes and all(f"—[{n}]" in text for n in footnotes)
    easy = {t.number: t for t in report.tables}
    assert not easy["3"].cell("demo-painter", "Easy").is_missing  # GPT, with the definition, Easy
    assert not easy["6"].cell("demo-painter", "Easy").is_missing  # humans, without
    assert easy["3"].cell("demo-painter", "Hypo").missing.startswith("the database has no Hyponymy concepts")
    assert not easy["7"].cell("demo-painter", "FID").is_missing and not easy["7"].cell("Retrieval", "IS").is_missing
    assert easy["7"].cell("Retrieval", "FID").missing == "Retrieval is FID's reference set (the paper prints -)"
    assert not easy["9"].cell("demo-tiny-dit", "Easy").is_missing
    for number in ("11", "12", "14", "15"):
        assert not easy[number].cell("demo-lookalike", "Easy").is_missing, number
    assert not easy["16"].cell("demo-painter", "demo-scribble").is_missing
    reasons = {reason for *_, reason in missing_cells(report)}
    assert all(reason and "Table" not in reason[:6] for reason in reasons)
    # Table 2 takes its Easy cells from the tables above
    winners = easy["2"].cell("ELO Human (w/o def)", "Easy").value
    scores = {label: float(cells["Easy"].text.split()[0]) for label, cells in easy["6"].rows
              if not cells["Easy"].is_missing}
    assert winners == sorted(m for m, v in scores.items() if v == max(scores.values()))
    assert easy["2"].cell("FID", "Easy").value == sorted(
        m for m, c in easy["10"].rows if c["Easy"].text == min(c2["Easy"].text for _, c2 in easy["10"].rows
                                                              if not c2["Easy"].is_missing))


def test_the_header_says_which_protocol_and_which_data_made_it(fake_run):
    _, _, report, text = fake_run
    assert text == render(report)
    assert "- Protocol: preset taxonomy-paper (published protocol)" in text
    assert "subsets Easy built from WordNet by this project: a reconstruction, not the published concepts" in text
    assert "demo-tiny-dit 4 (diffusers, preset taxonomy-paper)" in text and "retrieval 48 (imported, imported)" in text
    assert re.search(r"Votes: \d+ human votes with the definition, \d+ without; judge votes: 48 from "
                     r"gpt-judge-single-order:gpt-4o-mini@\w{8}, the preset's judge \(source every source: arena \d+\)",
                     text)
    assert "Ratings: protocol taxonomy-paper" in text and "clipscore_lemma by open_clip:open-clip-tiny" in text
    assert "reward by stand-in:open_clip:open-clip-tiny:lemma-prompt" in text


def test_csv_latex_and_the_papers_values_beside(fake_run):
    _, _, report, _ = fake_run
    rows = list(csv.reader(io.StringIO(render(report, "csv"))))
    assert ["Table 5: ELO score for Human Preferences for subsets with definition in input"] in rows
    latex = render(report, "latex")
    assert latex.count(r"\begin{table}") == 20 and r"\multicolumn{4}{c}{Ground Truth}" in latex
    compared = render(with_published(report, read_published(REPORTS["taxonomy"].published_path)))
    assert "| Playground | —[" in compared and "(paper 1125 (+61/-59))" in compared  # Table 3's paper rows shown
    assert re.search(r"\| FID \| [^|]* \(paper SD1\.5\) \|", compared)  # Table 2's FID Mean: ours, then the paper's


def test_under_the_arena_preset_the_tables_say_what_that_preset_lacks(fake_run):
    root, *_ = fake_run
    text = report_text(root, "--preset", "arena")
    assert "- Protocol: preset arena (project defaults)" in text
    assert (root / "figures" / "taxonomy-F4.html").is_file() and "Plot: " in text  # the figures' plots beside
    assert "Ratings: protocol arena" in text
    assert "clip_lemma (raw cosine (the arena preset's clip metrics))" in text  # the demo bundle's emoji-CLIP rows
    assert "the judge with the most votes (the preset's judge gpt-judge:" in text  # the arena preset's judge has none


def test_the_fake_run_output_for_the_closing_note(fake_run, capsys):
    """Prints the Markdown report of the fake run (pytest -s shows it)."""
    _, _, _, text = fake_run
    with capsys.disabled():
        print("\n" + text)
    assert text.startswith("# Taxonomy image generation benchmark (Tables 2-16, Figures 4, 6, 8, 9, §4.2)")


def test_the_leaderboard_rates_with_the_presets_protocol_as_table_3_does(fake_run, capsys):
    """One subset in the demo, so the leaderboard's fit of the with-definition judge votes under the preset's rating
    protocol (--preset taxonomy-paper: the protocol taxonomy-paper, its 100 rounds) is Table 3's Easy column."""
    from arena.commands import main as arena

    root, _, report, _ = fake_run
    assert arena(["leaderboard", "--suite", "taxonomy", "--variant", "with_definition", "--preset", "taxonomy-paper",
                  "--fresh", "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["protocol"] == "taxonomy-paper"
    assert board["judge"].startswith("gpt-judge-single-order")
    printed = {row["model"]: row["printed"] for row in board["judge_models"]}
    table = {t.number: t for t in report.tables}["3"]
    # the report marks what the leaderboard prints plain: demo-painter won every battle (no finite estimate)
    assert table.cell("demo-painter", "Easy").text.endswith(" †")
    assert printed["demo-painter"] == table.cell("demo-painter", "Easy").text.replace("‡", "").removesuffix(" †")
    # --protocol, when given, wins over the preset's
    assert arena(["leaderboard", "--suite", "taxonomy", "--preset", "taxonomy-paper", "--protocol", "arena",
                  "--fresh", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["protocol"] == "arena"
