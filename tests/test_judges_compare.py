"""``python -m judges compare``: scripted judges of known behaviour, served by the local OpenAI-compatible server
under different model names, against human votes that follow a hidden ground truth; the comparison must rank them
in their known order and recover their figures.

The arena: four models of hidden rank, two suites (taxonomy with two subsets, commonsense), three images per model
and prompt; 160 human battles drawn uniformly, each won by the better-ranked model, 40 of them shown again to a
second annotator (who agrees). The judges (``--source human``, every human battle copied):

- ``always-a``: ``[[A]]`` whatever it sees: accuracy ≈ 0.5, κ ≈ 0, first-position win rate 1;
- ``oracle-80``: the better image with probability 0.8, else the worse (a hash of the request decides): accuracy
  ≈ 0.8, κ ≈ 0.6 (p_o = 0.8, p_e = 0.5);
- ``coin``: A or B at random (a hash of the request): accuracy ≈ 0.5, κ ≈ 0;
- ``swapper``: always the worse image: accuracy 0, κ ≈ −1, ρ = −1.

Tolerances: with n ≈ 200 judge-human pairs the standard error of an accuracy near 0.8 is ≈ 0.03; the tests allow
± 0.12 (4 standard errors) on accuracies and ± 0.15 on κ.
"""

from __future__ import annotations

import asyncio
import hashlib
import random

import numpy as np
import pytest
from PIL import Image, ImageDraw
from support.arena import render_all
from support.openai_stub import engine_config, hash_models

from datamodel.annotators import sign_in
from datamodel.battles import Pairing
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.judgments import judgments
from datamodel.media import MediaStore
from datamodel.votes import record_vote
from judges import commands
from judges.compare import CEILING, CompareOptions, compare_judges, forget_failed, format_table
from judges.pairwise import run_pairwise
from judges.prompts import PAIRWISE, PAIRWISE_TEMPLATE, Templates
from judges.selection import Selection
from ratings.judge_agreement import (
    VoteCodes,
    confusion_figures,
    cross_fitted_ensemble,
    ensemble_votes,
    human_ceiling,
    judge_vs_humans,
)
from sampling.draws import serve_battle
from tools.fake_openai import FakeServer, Scripted

# the hidden truth (lower is better), not in name order: oriented by name, the humans' outcomes are A and B alike
RANK = {"alpha-model": 2, "bravo-model": 0, "charlie-model": 3, "delta-model": 1}
JUDGES = ("always-a", "oracle-80", "coin", "swapper")
VERSION = PAIRWISE_TEMPLATE.version(Templates())  # of the default template: every voter name below ends with it


def voter(model: str, single_order: bool = True) -> str:
    """The voter name of scripted judge ``model`` run by :func:`run_judge` with the default template."""
    return f"judge{'-single-order' if single_order else ''}:{model}@{VERSION}"


def _image(m: int, p: int, k: int) -> Image.Image:
    image = Image.new("RGB", (16, 16), (50 * m + 10, 17 * p % 256, 40 * k + 5))
    ImageDraw.Draw(image).point((m, p % 16), fill=(255, 255, 255))
    return image


def _unit(*parts) -> float:
    """A uniform number in [0, 1) from a hash of ``parts``: the scripted judges' seeded randomness."""
    return int.from_bytes(hashlib.sha256(repr(parts).encode()).digest()[:8], "big") / 2**64


def scripted_judges(db):
    """One responder for the four judges, told apart by the model name of the request."""
    models = hash_models(db)

    def respond(received) -> Scripted:
        first, second = (RANK[models[h]] for h in received.image_hashes())
        better = "A" if first < second else "B"
        worse = "B" if better == "A" else "A"
        name, key = received.body["model"], tuple(received.image_hashes())
        label = {"always-a": "A", "swapper": worse,
                 "oracle-80": better if _unit("oracle", key) < 0.8 else worse,
                 "coin": "A" if _unit("coin", key) < 0.5 else "B"}[name]
        return Scripted(f"Looking at both images.\n\n[[{label}]]")

    return respond


def build_arena(root, battles: int = 160, replicated: int = 40, seed: int = 7):
    db = connect(root / "arena.db")
    media = MediaStore(root / "media")
    specs = [PromptSpec("taxonomy", f"t{p}.n.01", f"An image of thing {p}", subset=("Easy", "Hypernymy")[p % 2],
                        variant="without_definition") for p in range(8)]
    specs += [PromptSpec("commonsense", str(p), f"A scene number {p}", subset="Physical Laws", role=f"p{p}")
              for p in range(4)]
    prompt_ids = add_prompts(db, specs).ids
    for m, name in enumerate(sorted(RANK)):
        model_id = add_model(db, name)
        for p, prompt_id in enumerate(prompt_ids):
            for k in range(3):
                add_image(db, prompt_id=prompt_id, model_id=model_id, stored=media.put_image(_image(m, p, k)), idx=k)
    render_all(db, media)
    model_of = dict(db.execute("SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id").fetchall())
    rng = random.Random(seed)
    first = sign_in(db, "alice", "a-long-token", open_signup=True)
    second = sign_in(db, "bob", "b-long-token", open_signup=True)
    shown = []
    for _ in range(battles):
        battle = serve_battle(db, rng, session_id="s1", annotator_id=first.id)
        left, right = model_of[battle.left.image_id], model_of[battle.right.image_id]
        outcome = "A" if RANK[left] < RANK[right] else "B"
        record_vote(db, battle.id, outcome, session_id="s1", rules=None)
        shown.append((Pairing(battle.prompt_id, battle.left.image_id, battle.right.image_id), outcome))
    for pairing, outcome in shown[:replicated]:
        battle = serve_battle(db, rng, session_id="s2", annotator_id=second.id, pairing=pairing)
        record_vote(db, battle.id, outcome, session_id="s2", rules=None)
    return db, media


def run_judge(db, media, server, model, single_order=True, templates=Templates(), **config):
    config = engine_config(server, model=model, **config)
    return asyncio.run(run_pairwise(db, media, config, Selection(), source="human", single_order=single_order,
                                    name="judge", templates=templates, env={}, progress=False, handle_signals=False))


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    db, media = build_arena(root)
    with FakeServer(scripted_judges(db)) as server:
        for model in JUDGES:
            run_judge(db, media, server, model)
        run_judge(db, media, server, "always-a", single_order=False)
    yield db, root
    db.close()


def _row(table, judge, scope="all"):
    rows = table[(table["scope"] == scope) & (table["judge"] == judge)]
    assert len(rows) == 1, f"no single row for {judge} in {scope}"
    return rows.iloc[0]


@pytest.mark.slow
def test_the_scripted_judges_come_out_in_their_known_order_with_their_figures(judged):
    db, _ = judged
    table = compare_judges(db, CompareOptions(min_shared=20, rounds=100))
    overall = table[table["scope"] == "all"]
    names = {voter(m): m for m in JUDGES}
    ranked = [names.get(j, j) for j in overall["judge"]]
    assert ranked[0] == CEILING
    singles = [j for j in ranked if j in JUDGES]
    assert singles[0] == "oracle-80" and singles[-1] == "swapper"

    oracle, always, coin, swapper = (_row(table, voter(m)) for m in
                                     ("oracle-80", "always-a", "coin", "swapper"))
    assert oracle.shared_battles > 100 and not oracle.insufficient
    assert oracle.accuracy == pytest.approx(0.8, abs=0.12)
    assert oracle.kappa == pytest.approx(0.6, abs=0.15)
    assert oracle.spearman == pytest.approx(1.0) and oracle.spearman_low <= 1.0
    assert always.accuracy == pytest.approx(0.5, abs=0.12) and abs(always.kappa) < 0.15
    assert always.first_win_rate == 1.0 and always.first_win_p < 1e-6
    assert coin.accuracy == pytest.approx(0.5, abs=0.12) and abs(coin.kappa) < 0.15
    assert coin.first_win_p > 0.001
    assert swapper.accuracy == 0.0 and swapper.kappa < -0.85
    assert swapper.spearman == pytest.approx(-1.0) and swapper.kendall == pytest.approx(-1.0)
    assert swapper.spearman_high < 0
    # humans never tie here: the judges' tie rates and the humans' are 0, and accuracy with ties equals accuracy
    assert oracle.human_tie_rate == 0.0 and oracle.accuracy_ties == pytest.approx(oracle.accuracy)
    assert oracle.failed_parse_rate == 0.0 and oracle.judgments == 200
    assert np.isnan(oracle.both_order_disagreement)


@pytest.mark.slow
def test_both_orders_a_first_position_judge_always_disagrees_with_itself_and_only_ties(judged):
    db, _ = judged
    row = _row(compare_judges(db, CompareOptions(min_shared=20, rounds=0)), voter("always-a", single_order=False))
    assert row.both_order_disagreement == 1.0
    assert row.tie_rate == 1.0 and row.accuracy == 0.0 and np.isnan(row.first_win_rate)
    assert row.accuracy_ties == 0.0  # humans never tie: a tie matches nothing


def test_the_human_ceiling_row_comes_from_the_replicated_battles(judged):
    db, _ = judged
    ceiling = _row(compare_judges(db, CompareOptions(min_shared=20, rounds=0)), CEILING)
    replicated = db.execute("SELECT COUNT(DISTINCT min(left_image_id, right_image_id) || '-' || "
                            "max(left_image_id, right_image_id)) FROM votes v "
                            "JOIN annotators a ON a.id = v.annotator_id WHERE a.name = 'bob'").fetchone()[0]
    assert 30 < replicated <= 40  # 40 battles shown again; a pair of images drawn twice counts once
    assert ceiling.shared_battles == replicated and ceiling.accuracy == 1.0 and ceiling.kappa == pytest.approx(1.0)


def test_rows_per_suite_and_subset_and_insufficient_below_the_minimum(judged):
    db, _ = judged
    table = compare_judges(db, CompareOptions(min_shared=20, rounds=0))
    assert {"all", "taxonomy", "taxonomy/Easy", "taxonomy/Hypernymy", "commonsense"} <= set(table["scope"])
    tax, com = (_row(table, voter("oracle-80"), s) for s in ("taxonomy", "commonsense"))
    assert tax.shared_battles + com.shared_battles == _row(table, voter("oracle-80")).shared_battles
    strict = compare_judges(db, CompareOptions(min_shared=10_000, rounds=0, subsets=False))
    assert strict["insufficient"].all() and strict["accuracy"].isna().all() and strict["kappa"].isna().all()
    assert "insufficient" in format_table(strict)


def test_ensembles_are_rated_like_judges(judged):
    db, _ = judged
    table = compare_judges(db, CompareOptions(min_shared=20, rounds=0))
    majority, weighted = _row(table, "ensemble:majority"), _row(table, "ensemble:weighted")
    assert not majority.insufficient and np.isnan(majority.first_win_rate)
    # weighted by κ (floored at 0) the oracle dominates: the weighted ensemble votes like it (one vote per battle,
    # where the oracle has one per human battle, hence not exactly its κ), the plain majority of the four is worse
    oracle = _row(table, voter("oracle-80"))
    assert weighted.kappa == pytest.approx(oracle.kappa, abs=0.05) and majority.kappa < weighted.kappa - 0.3


def test_the_command_prints_one_row_per_judge_configuration(judged, tmp_path, capsys, monkeypatch):
    db, root = judged
    monkeypatch.setenv("ARENA_DB", str(root / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(root / "media"))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "compare.csv"
    assert commands.main(["compare", "--min-shared", "20", "--rounds", "20", "--no-subsets",
                          "--csv", str(out)]) == 0
    printed = capsys.readouterr().out
    lines = [line for line in printed.splitlines() if line.startswith("judge-single-order:")]
    assert lines[0].startswith(voter("oracle-80")) and lines[-1].startswith(voter("swapper"))
    assert "== taxonomy" in printed and "human ceiling" in printed
    assert out.read_text().splitlines()[0].startswith("scope,judge,shared_battles")
    assert commands.main(["compare", "--suite", "nope"]) == 2
    assert "No suite 'nope'" in capsys.readouterr().err


def test_retry_failed_asks_the_failed_judgments_again(tmp_path, monkeypatch):
    db, media = build_arena(tmp_path, battles=12, replicated=0)
    monkeypatch.setenv("ARENA_DB", str(tmp_path / "arena.db"))
    monkeypatch.setenv("ARENA_MEDIA_DIR", str(tmp_path / "media"))
    monkeypatch.chdir(tmp_path)
    answer = {"now": lambda received: Scripted("I cannot tell.")}  # no verdict: the judgment fails
    statuses = lambda: {row["status"] for row in judgments(db, task="pairwise")}  # noqa: E731
    with FakeServer(lambda received: answer["now"](received)) as server:
        run_judge(db, media, server, "always-a")
        assert statuses() == {"failed"}
        sent = len(server.snapshot())
        answer["now"] = scripted_judges(db)
        run_judge(db, media, server, "always-a")  # without --retry-failed the cached non-answers come back
        assert len(server.snapshot()) == sent and statuses() == {"failed"}
        keys = {key for row in judgments(db, task="pairwise") for key in row["request_keys"]}
        assert forget_failed(db, "pairwise", voter("always-b")) == (0, 0)  # another judge's: kept
        # the command line: --retry-failed drops this judge's cached non-answers, then asks them again
        assert commands.main(["pairwise", "--source", "human", "--single-order", "--judge-name", "judge",
                              "--judge-model", "always-a", "--base-url", server.base_url, "--retry-failed",
                              "--no-progress"]) == 0
        assert len(server.snapshot()) == sent + len(keys)
    assert statuses() == {"ok"}
    assert forget_failed(db, "pairwise", voter("always-a")) == (0, 0)


def test_pure_figures_on_known_counts():
    # confusion rows human, columns judge: 6 agreements of 8 decisive pairs, 1 tie-tie, 1 both_bad-tie
    confusion = np.zeros((4, 4))
    confusion[0, 0], confusion[1, 1], confusion[0, 1], confusion[1, 2] = 3, 3, 1, 1
    confusion[2, 2], confusion[3, 2] = 1, 1
    figures = confusion_figures(confusion)
    assert figures["accuracy"] == pytest.approx(6 / 8)
    assert figures["accuracy_ties"] == pytest.approx((6 + 2) / 10)
    # one human vote per battle, the judge right on each: κ = 1; majority of 3 judges (2 right, 1 wrong) is right
    keys = np.arange(40)
    model_a, model_b = keys % 2, 1 - keys % 2
    truth = (keys // 2) % 2  # oriented by name: A and B alike
    human = VoteCodes(keys, model_a, model_b, truth)
    wrong = VoteCodes(keys, model_a, model_b, 1 - truth)
    assert judge_vs_humans(human, human, 2, min_shared=10, rounds=0)["kappa"] == pytest.approx(1.0)
    majority = ensemble_votes([human, human, wrong])
    assert judge_vs_humans(human, majority, 2, min_shared=10, rounds=0, positions=False)["accuracy"] == 1.0
    split = ensemble_votes([human, wrong])
    assert set(split.outcome.tolist()) == {2}  # an even split is a tie
    assert human_ceiling(human, np.zeros(40), min_shared=1)["shared_battles"] == 0


def test_the_judges_sub_tab_shows_the_same_table_in_the_browser(tmp_path, browser):
    from support.webapp import running_app

    from core.settings import Settings
    from judges.compare import CompareOptions as Options

    db, media = build_arena(tmp_path, battles=80, replicated=0)
    with FakeServer(scripted_judges(db)) as server:
        for model in ("oracle-80", "swapper"):
            run_judge(db, media, server, model)
    expected = compare_judges(db, Options(min_shared=30, rounds=100, subsets=False))
    oracle = _row(expected, voter("oracle-80"))
    db.close()
    settings = Settings(db_path=tmp_path / "arena.db", media_dir=tmp_path / "media", cache_dir=tmp_path / "cache",
                        demo=False)
    with running_app(settings) as url:
        page = browser.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Leaderboard").click()
        page.get_by_role("tab", name="Judges").click()
        page.wait_for_function("() => document.querySelector('#lb-judges')?.innerText.includes('oracle-80')",
                               timeout=30000)
        text = page.inner_text("#lb-judges")
    assert text.index(voter("oracle-80")) < text.index(voter("swapper"))
    assert f"{oracle.kappa:.3f}" in text and f"{oracle.accuracy:.3f}" in text
    assert "human ceiling" in text and "insufficient" in text  # no replicated battle here: no ceiling figure


def noise_arena(root, *, suites: int = 20, battles: int = 48, judges: int = 11, seed: int = 3):
    """``suites`` suites of ``battles`` battles each (two models, distinct images, random sides), one human vote per
    battle and one vote of each of ``judges`` noise judges, all A or B at random: no judge carries any signal, so an
    honest ensemble of them has κ ≈ 0 with the humans (its standard error ≈ 1/√battles per suite)."""
    db = connect(root / "arena.db")
    db.execute("PRAGMA synchronous = OFF")  # a test database: ten thousand votes in seconds
    media = MediaStore(root / "media")
    rng = np.random.default_rng(seed)
    prompt_ids = add_prompts(db, [PromptSpec(f"s{s}", "k", f"noise prompt {s}") for s in range(suites)]).ids
    models = [add_model(db, name) for name in ("left-model", "right-model")]
    annotator = sign_in(db, "alice", "a-long-token", open_signup=True)
    draw = random.Random(seed)
    for s, prompt_id in enumerate(prompt_ids):
        for k in range(battles):
            images = [add_image(db, prompt_id=prompt_id, model_id=model, idx=k,
                                stored=media.put_image(Image.new("RGB", (4, 4), (s, k, m))))
                      for m, model in enumerate(models)]
            pairing = Pairing(prompt_id, *(images if rng.random() < 0.5 else images[::-1]))
            battle = serve_battle(db, draw, session_id="h", annotator_id=annotator.id, pairing=pairing)
            record_vote(db, battle.id, "AB"[rng.integers(2)], session_id="h", rules=None)
            for j in range(judges):
                battle = serve_battle(db, draw, session_id="j", judge=f"noise-{j:02d}", pairing=pairing)
                record_vote(db, battle.id, "AB"[rng.integers(2)], session_id="j", rules=None)
    return db


@pytest.mark.slow
def test_the_weighted_ensemble_is_not_fitted_to_the_votes_it_is_scored_on(tmp_path):
    # Weights estimated on the very human votes the ensemble is then scored on pick the noise judges that happen to
    # agree with them there: in-sample, the weighted ensemble of pure noise reaches κ ≈ 0.26 per suite (mean of 20
    # suites of 48 battles, standard deviation 0.024 over seeds). Weights fitted on other battles (cross-fitting)
    # know nothing of the scored votes: κ ≈ 0 (standard deviation of the mean 0.04, so ± 0.12 is 3 of them).
    db = noise_arena(tmp_path)
    table = compare_judges(db, CompareOptions(min_shared=20, rounds=0, subsets=False))
    suites = table[table["scope"] != "all"]
    judges = suites[suites["judge"].str.startswith("noise-")]
    assert len(judges) == 20 * 11 and abs(judges["kappa"].mean()) < 0.03  # no signal in any judge
    weighted = suites[suites["judge"] == "ensemble:weighted"]["kappa"]
    majority = suites[suites["judge"] == "ensemble:majority"]["kappa"]
    assert len(weighted) == 20 and abs(majority.mean()) < 0.12
    assert abs(weighted.mean()) < 0.12, f"weights fitted to the scored votes: κ {weighted.round(3).tolist()}"
    db.close()


def test_each_template_version_is_a_judge_configuration_of_its_own(tmp_path):
    db, media = build_arena(tmp_path, battles=40, replicated=0)
    reworded = Templates(pairwise=PAIRWISE.replace("Be as objective as possible.", "Be as objective as you can."))
    with FakeServer(scripted_judges(db)) as server:
        run_judge(db, media, server, "oracle-80")
        run_judge(db, media, server, "oracle-80", templates=reworded)  # same model, another template
    table = compare_judges(db, CompareOptions(min_shared=10, rounds=0, subsets=False))
    overall = table[(table["scope"] == "all") & table["judge"].str.contains("oracle-80")]
    assert len(overall) == 2, f"one row for two templates: {overall['judge'].tolist()}"
    versions = [PAIRWISE_TEMPLATE.version(t) for t in (Templates(), reworded)]
    assert versions[0] != versions[1] and all(len(v) == 8 for v in versions)  # a short hash of the text
    assert PAIRWISE_TEMPLATE.version(Templates(pairwise=PAIRWISE)) == versions[0]  # the text, not the object
    assert sorted(overall["judge"]) == sorted(f"judge-single-order:oracle-80@{v}" for v in versions)
    assert dict(zip(overall["judge"], overall["template_version"])) == {
        f"judge-single-order:oracle-80@{v}": v for v in versions}
    rows = judgments(db, task="pairwise")
    assert {(row["judge"], row["template_version"]) for row in rows} == {
        (f"judge-single-order:oracle-80@{v}", v) for v in versions}
    # a database from before template versions: its votes and judgments keep their voter name and still show
    old = f"judge-single-order:oracle-80@{versions[1]}"
    with db.conn:
        db.execute("UPDATE votes SET voter = 'judge-single-order:oracle-80' WHERE voter = ?", [old])
        db.execute("UPDATE judgments SET judge = 'judge-single-order:oracle-80', template_version = '' "
                   "WHERE judge = ?", [old])
    table = compare_judges(db, CompareOptions(min_shared=10, rounds=0, subsets=False))
    row = _row(table, "judge-single-order:oracle-80")
    assert row.template_version == "unversioned" and not row.insufficient and row.judgments == 40
    assert _row(table, "ensemble:weighted").template_version == ""
    db.close()


def test_a_battle_s_human_vote_never_shapes_the_weights_the_ensemble_votes_with_on_it():
    # cross-fitting, exactly: flip the human vote on any one battle and the weighted ensemble's vote on that battle
    # stays what it was (only the other folds' weights may move); judges of mixed quality so the weights matter
    rng = np.random.default_rng(5)
    n = 60
    keys, model_a = np.arange(n), rng.integers(0, 2, n)
    model_b, truth = 1 - model_a, rng.integers(0, 2, n)
    judges = [VoteCodes(keys, model_a, model_b, np.where(rng.random(n) < p, truth, 1 - truth))
              for p in (0.9, 0.7, 0.55, 0.5, 0.3)]

    def vote(human: VoteCodes) -> dict:
        votes = cross_fitted_ensemble(human, judges, 2, folds=5, seed=1, min_shared=5)
        return dict(zip(votes.keys.tolist(), votes.outcome.tolist()))

    base = vote(VoteCodes(keys, model_a, model_b, truth))
    assert sorted(base) == keys.tolist()
    changed = 0
    for battle in range(n):
        flipped = truth.copy()
        flipped[battle] = 1 - flipped[battle]
        other = vote(VoteCodes(keys, model_a, model_b, flipped))
        assert other[battle] == base[battle], f"battle {battle}: its own human vote moved the ensemble's vote"
        changed += sum(other[k] != base[k] for k in range(n))
    assert changed > 0  # the flipped vote does move weights, of the other folds
