"""Human rating tasks (issue 27): storage, the refusals of bad input, the draw by unit, the quality rules, progress.

Every refusal is a :class:`datamodel.rating_scales.RatingRejected` with a message that says what to do, and stores
nothing: each test counts the ratings before and after.
"""

import random

import pytest
from conftest import engine_settings
from support.arena import demo_arena
from support.ratings import build_rating_arena

from arena import rating_session as raters
from datamodel.human_ratings import (
    assignments,
    flagged_ratings,
    load_serving,
    record_rating,
    record_serving,
    review_rating,
    set_assignment,
)
from datamodel.quality import QualityRules
from datamodel.rating_scales import RatingRejected
from judges.rating_tasks import COMMONSENSE, RATING_TASKS, SANEVAL, SEMVAR

pytestmark = pytest.mark.both_engines

FIT, SCORES, LIKERT = COMMONSENSE.scale, SEMVAR.scale, SANEVAL.scale


@pytest.fixture
def arena(tmp_path, engine, request):
    built = build_rating_arena(tmp_path, generations=2, **engine_settings(engine, request))
    yield built
    built.db.close()


def count(db) -> int:
    return db.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]


def signed_in(db, name="rater", task=None, **assignment):
    for declared in RATING_TASKS.values():
        if task is None or declared.name == task:
            set_assignment(db, declared.name, **{"raters_per_item": 2, **assignment})
    return raters.start(db, name, "token-0001", open_signup=True)


def an_answer(task_name: str):
    return {"commonsense_fit": {"fit": 1}, "semvar_alignment": {"object_accuracy": 40, "relevance": 30},
            "saneval_adherence": {"likert": 4}}[task_name]


def test_the_three_tasks_are_declared_with_the_papers_words_and_scales():
    assert COMMONSENSE.question == "Does the content in the image fit the description?"  # Commonsense-T2I §3.1
    assert SEMVAR.question == "Does the generated image align with the given text?"  # SemVarBench Figure 13
    assert [s.label for s in SCORES.scores] == ["Object Accuracy", "Relevance"]  # Table 13's Score 1 and Score 2
    assert (SCORES.low, SCORES.high) == (0, 50)
    assert FIT.values == (1, 0) and LIKERT.values == (1, 2, 3, 4, 5)
    assert LIKERT.points[0].label.endswith("Poor") and LIKERT.points[-1].label.endswith("Perfect")
    assert (COMMONSENSE.raters, SEMVAR.raters) == (2, 3)  # two experts (§3.1), three raters (Appendix E.2)
    # the value on [0, 1]: S(T, I) = (Relevance + Object Accuracy) / 100; Likert (L - 1) / 4
    assert SCORES.value({"object_accuracy": 40, "relevance": 30}) == pytest.approx(0.7)
    assert LIKERT.value({"likert": 4}) == 0.75 and FIT.value({"fit": 0}) == 0.0
    with pytest.raises(LookupError, match="commonsense_fit, semvar_alignment, saneval_adherence"):
        RATING_TASKS["nonsense"]


def test_units_are_the_judges_own(arena):
    db = arena.db
    pairs = COMMONSENSE.units(db)
    assert len(pairs) == 2 * 4 * 2  # two items, four models, two generations
    unit = pairs[0]
    first, second = (int(x) for x in unit.key.split(":")[1:])
    assert {q.subject for q in unit.questions} == {f"image:{i}:{d}" for i in (first, second) for d in ("d1", "d2")}
    items = SEMVAR.units(db)
    assert len(items) == 2 * 4 and all(len(u.questions) == 7 for u in items)
    assert len(SANEVAL.units(db)) == 3 * 4 * 2
    assert len(COMMONSENSE.units(db, ("alpha-model",))) == 4  # a model filter


@pytest.mark.parametrize("task, given, words", [
    ("commonsense_fit", {"fit": 2}, "is not on this question's scale"),
    ("commonsense_fit", {"fit": 0.5}, "is not on this question's scale"),
    ("commonsense_fit", "not json", "could not be read"),
    ("commonsense_fit", {"fit": True}, "is not on this question's scale"),
    ("saneval_adherence", {"likert": 6}, "answer one of 1 · Poor, 2 · Weak, 3 · Partial, 4 · Good, 5 · Perfect"),
    ("commonsense_fit", {"fit": -1}, r"answer one of Fits \(1\), Does not fit \(0\)"),
    ("saneval_adherence", {"likert": 0}, "is not on this question's scale"),
    ("semvar_alignment", {"object_accuracy": 51, "relevance": 30}, "Object Accuracy 51 is off the scale"),
    ("semvar_alignment", {"object_accuracy": -1, "relevance": 30}, "off the scale"),
    ("semvar_alignment", {"object_accuracy": 40}, "Give Relevance"),
    ("semvar_alignment", {"object_accuracy": 40, "relevance": 30, "beauty": 5}, "has no beauty"),
    ("semvar_alignment", {"object_accuracy": 40.5, "relevance": 30}, "whole number from 0 to 50"),
])
def test_an_answer_outside_the_scale_is_refused_and_nothing_is_stored(arena, task, given, words):
    db = arena.db
    session = raters.next_question(db, random.Random(0), signed_in(db, task=task), pool=raters.RatingPool())
    with pytest.raises(RatingRejected, match=words):
        raters.answer(db, session, given, pool=raters.RatingPool(), rng=random.Random(1))
    assert count(db) == 0
    done = raters.answer(db, session, an_answer(task), pool=raters.RatingPool(), rng=random.Random(1))
    assert count(db) == 1 and done.receipt.task == task


def test_a_question_not_served_to_that_rater_is_refused(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    alice = raters.next_question(db, rng, signed_in(db, "alice"), pool=pool)
    bob = raters.next_question(db, rng, signed_in(db, "bob"), pool=pool)
    scale = RATING_TASKS[alice.current.task].scale
    # Bob answers Alice's question by its id: the same words as for an id that does not exist
    for serving_id in (alice.current.id, "made-up-serving-id-0000"):
        with pytest.raises(RatingRejected, match="This question was not shown to you"):
            record_rating(db, serving_id, an_answer(alice.current.task), scale=scale, session_id=bob.session_id)
    # and through the session: a media token that is not the question on Bob's screen
    with pytest.raises(RatingRejected, match="no longer on your screen"):
        raters.answer(db, bob, an_answer(bob.current.task), pool=pool, rng=rng, on_screen=alice.current.media_token)
    with pytest.raises(RatingRejected, match="No question to answer"):
        record_rating(db, "", {"fit": 1}, scale=FIT, session_id=bob.session_id)
    assert count(db) == 0


def test_a_second_answer_to_the_same_question_is_refused(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, signed_in(db, task="commonsense_fit"), pool=pool)
    first = session.current
    answered = raters.answer(db, session, {"fit": 1}, pool=pool, rng=rng, on_screen=first.media_token)
    assert count(db) == 1
    # the same serving again (a double click that reaches the server)
    with pytest.raises(RatingRejected, match="already has your answer"):
        record_rating(db, first.id, {"fit": 0}, scale=FIT, session_id=session.session_id)
    with pytest.raises(RatingRejected, match="already has your answer"):
        raters.answer(db, answered, {"fit": 0}, pool=pool, rng=rng, on_screen=first.media_token)
    # the same question served again, to another session of the same rater
    again = record_serving(db, task=first.task, unit=first.unit, subject=first.subject, image_id=first.image_id,
                           text_prompt_id=first.text_prompt_id, shown_text=first.shown_text,
                           annotator_id=session.annotator.id, session_id="another-session")
    with pytest.raises(RatingRejected, match="already answered this question"):
        record_rating(db, again.id, {"fit": 0}, scale=FIT, session_id="another-session")
    assert count(db) == 1
    assert db.execute("SELECT answer FROM ratings").fetchone()[0] == '{"fit": 1}'


def test_a_rating_after_sign_out_is_refused(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.issue_resume(db, signed_in(db), days=30)
    session = raters.next_question(db, rng, session, pool=pool)
    raters.sign_out(db, session)  # revokes the stay-signed-in token (as the Sign out button does)
    with pytest.raises(RatingRejected, match="You have signed out"):
        raters.answer(db, session, an_answer(session.current.task), pool=pool, rng=rng)
    with pytest.raises(RatingRejected, match="You have signed out"):
        raters.next_question(db, rng, session, pool=pool)
    with pytest.raises(RatingRejected, match="Sign in with your name and token first"):
        raters.answer(db, raters.sign_out(db, session), {"fit": 1}, pool=pool, rng=rng)
    assert count(db) == 0
    assert raters.resume(db, session.resume_token, open_signup=True) is None


def test_a_skipped_question_takes_no_answer(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, signed_in(db, task="saneval_adherence"), pool=pool)
    skipped = session.current
    session = raters.skip(db, rng, session, pool=pool)
    assert session.current.unit != skipped.unit
    with pytest.raises(RatingRejected, match="You skipped this question"):
        record_rating(db, skipped.id, {"likert": 3}, scale=LIKERT, session_id=session.session_id)
    assert count(db) == 0


def _rate_all(db, session, pool, rng, *, limit=1000, answer=an_answer, now=0.0):
    """Answer every question the session is given; return (session, answered questions in order)."""
    session = raters.next_question(db, rng, session, pool=pool, now=now)
    order = []
    while session.current is not None and len(order) < limit:
        order.append(session.current)
        session = raters.answer(db, session, answer(session.current.task), pool=pool, rng=rng, rules=None,
                                now=now + 60 * len(order))
    return session, order


def test_a_rater_answers_a_unit_whole_before_the_next(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(3)
    _, order = _rate_all(db, signed_in(db, task="semvar_alignment"), pool, rng)
    units = [q.unit for q in order]
    assert len(order) == 8 * 7 == count(db)  # every question of every unit, once
    runs = [units[i] for i in range(len(units)) if i == 0 or units[i] != units[i - 1]]
    assert len(runs) == len(set(units)) == 8  # each unit in one run of seven questions
    assert not raters.open_tasks(db) == {}


def test_raters_per_item_is_the_admins_and_a_third_rater_gets_nothing(arena):
    db = arena.db
    pool = raters.RatingPool()
    set_assignment(db, "saneval_adherence", raters_per_item=2, models=["alpha-model", "bravo-model"])
    assert assignments(db)["saneval_adherence"].models == ("alpha-model", "bravo-model")
    sessions = [raters.start(db, name, "token-0001", open_signup=True) for name in ("a", "b", "c")]
    _, first = _rate_all(db, sessions[0], pool, random.Random(1))
    _, second = _rate_all(db, sessions[1], pool, random.Random(2))
    assert len(first) == len(second) == 3 * 2 * 2  # three prompts, two models, two generations
    with pytest.raises(raters.NoQuestionAvailable, match="Nothing left to rate"):
        raters.next_question(db, random.Random(3), sessions[2], pool=pool)
    status = {row["task"]: row for row in raters.study_status(db, pool)}["saneval_adherence"]
    assert (status["items"], status["items_complete"], status["raters"], status["ratings"]) == (12, 12, 2, 24)
    set_assignment(db, "saneval_adherence", raters_per_item=3, models=["alpha-model", "bravo-model"])
    _, third = _rate_all(db, sessions[2], pool, random.Random(4))
    assert len(third) == 12  # a third rater per item once the admin asks for one


def test_no_open_task_and_a_closed_task(arena):
    db = arena.db
    session = raters.start(db, "early", "token-0001", open_signup=True)
    with pytest.raises(raters.NoQuestionAvailable, match="No rating task is open yet"):
        raters.next_question(db, random.Random(0), session, pool=raters.RatingPool())
    set_assignment(db, "commonsense_fit", raters_per_item=1, active=False)
    with pytest.raises(raters.NoQuestionAvailable, match="No rating task is open yet"):
        raters.next_question(db, random.Random(0), session, pool=raters.RatingPool())
    with pytest.raises(ValueError, match="from 1 to 10"):
        set_assignment(db, "commonsense_fit", raters_per_item=0)
    with pytest.raises(LookupError, match="Unknown model 'nope'"):
        set_assignment(db, "commonsense_fit", models=["nope"])


def test_the_model_is_told_only_after_the_answer(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, signed_in(db), pool=pool)
    shown = session.current
    assert not any(name in repr(shown) for name in arena.model_ids)  # the serving names no model
    done = raters.answer(db, session, an_answer(shown.task), pool=pool, rng=rng)
    model = db.execute("SELECT m.name FROM images i JOIN models m ON m.id = i.model_id WHERE i.id = ?",
                       [shown.image_id]).fetchone()[0]
    assert done.receipt.model == model
    assert done.current is not None and done.current.id == session.upcoming.id  # the preloaded one comes next


def test_a_reload_finds_the_question_on_screen(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.issue_resume(db, signed_in(db), days=30)
    session = raters.next_question(db, rng, session, pool=pool)
    session = raters.answer(db, session, an_answer(session.current.task), pool=pool, rng=rng)
    back = raters.resume(db, session.resume_token, open_signup=True)
    # the newest unanswered question of the session: the one drawn after the screen's (the page shows it again)
    assert back.current is not None and back.current.id in (session.current.id, session.upcoming.id)
    back = raters.next_question(db, rng, back, pool=pool)
    raters.answer(db, back, an_answer(back.current.task), pool=pool, rng=rng)
    assert count(db) == 2


def test_fast_answers_are_flagged_like_fast_votes_and_an_admin_decides(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    rules = QualityRules(fast_streak=5, fast_seconds=5.0)
    session = raters.next_question(db, rng, signed_in(db, task="commonsense_fit"), pool=pool, now=1000.0)
    for k in range(6):
        session = raters.answer(db, session, {"fit": k % 2}, pool=pool, rng=rng, rules=rules, now=1001.0 + k)
    excluded = [row[0] for row in db.execute("SELECT excluded FROM ratings ORDER BY id")]
    assert excluded == [1] * 6  # a run of 6 answers less than 5 s apart
    assert "5+ consecutive votes less than 2 s apart" in flagged_ratings(db)[0]["reason"]  # the task's pace
    assert session.fast_run == 6
    first = db.execute("SELECT min(id) FROM ratings").fetchone()[0]
    review_rating(db, first, exclude=False)
    session = raters.answer(db, session, {"fit": 1}, pool=pool, rng=rng, rules=rules, now=1008.0)
    assert db.execute("SELECT excluded, reviewed FROM ratings WHERE id = ?", [first]).fetchone() == (0, 1)
    with pytest.raises(LookupError, match="No rating with id 999"):
        review_rating(db, 999, exclude=True)


def test_a_trusted_account_is_reported_and_straight_lining_is_excluded(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    rules = QualityRules(fast_streak=3, fast_seconds=5.0, bias_min_votes=6, bias_share=0.8)
    db.execute("INSERT INTO annotators (name, token_hash, source) VALUES ('expert', 'x', 'config')")
    expert = raters.RatingSession(annotator=raters.Annotator(
        db.execute("SELECT id FROM annotators WHERE name = 'expert'").fetchone()[0], "expert", "config"))
    set_assignment(db, "saneval_adherence", raters_per_item=2)
    session = raters.next_question(db, rng, expert, pool=pool, now=0.0)
    for k in range(4):  # fast, varied answers: reported, not excluded
        session = raters.answer(db, session, {"likert": 1 + k}, pool=pool, rng=rng, rules=rules, now=1.0 + k)
    rows = db.execute("SELECT excluded, excluded_reason FROM ratings").fetchall()
    assert all(excluded == 0 and reason.startswith("reported, not excluded") for excluded, reason in rows)
    for k in range(6):  # slow now, but every answer a 5: at least 80% of 10 answers the same
        session = raters.answer(db, session, {"likert": 5}, pool=pool, rng=rng, rules=rules, now=100.0 + 60 * k)
    reasons = [row[0] for row in db.execute("SELECT excluded_reason FROM ratings WHERE excluded = 1")]
    assert len(reasons) == 0  # 6 of 10 answers are 5: below 80%
    for k in range(10):
        session = raters.answer(db, session, {"likert": 5}, pool=pool, rng=rng, rules=rules, now=1000.0 + 60 * k)
    reasons = [row[0] for row in db.execute("SELECT excluded_reason FROM ratings WHERE excluded = 1")]
    assert len(reasons) == 20 and all("saneval_adherence answers are {\"likert\": 5}" in r for r in reasons)


def test_progress_counts_the_raters_items(arena):
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, signed_in(db, task="saneval_adherence"), pool=pool)
    assert raters.progress(db, session, "saneval_adherence", pool) == (0, 24)
    session = raters.answer(db, session, {"likert": 3}, pool=pool, rng=rng)
    assert raters.progress(db, session, "saneval_adherence", pool) == (1, 24)


def test_the_serving_knows_what_it_shows(arena):
    db = arena.db
    session = raters.next_question(db, random.Random(5), signed_in(db, task="semvar_alignment"),
                                   pool=raters.RatingPool())
    serving = load_serving(db, session.current.id)
    texts = {row[0] for row in db.execute("SELECT text FROM prompts WHERE suite = 'semvarbench'")}
    assert serving.shown_text in texts and serving.suite == "semvarbench"
    assert serving.subject.startswith(f"text:{serving.text_prompt_id}:image:{serving.image_id}")


@pytest.mark.slow
def test_the_commonsense_task_runs_on_the_shipped_demo(tmp_path):
    from judges import human_stats

    db = demo_arena(tmp_path).db  # the shipped demo, loaded once per process
    set_assignment(db, "commonsense_fit", raters_per_item=2)
    pool = raters.RatingPool()
    units = COMMONSENSE.units(db)
    assert len(units) == 14 * 4  # the demo's 14 Commonsense-T2I items, four models, one generation each
    for name in ("ann", "ben"):
        session = raters.next_question(db, random.Random(name), raters.start(db, name, "token-0001",
                                                                              open_signup=True), pool=pool)
        for k in range(8):  # two whole units each
            session = raters.answer(db, session, {"fit": int(session.current.subject.endswith(":d1") ^
                                                            (k % 3 == 0))}, pool=pool, rng=random.Random(k),
                                    rules=None)
    table = human_stats.commonsense_human(db)
    assert not table.empty and set(table["category"]) >= {""}
    assert (table["raters"] >= 1).all() and table["accuracy"].between(0, 1).all()
    db.close()


@pytest.mark.parametrize("hidden", ["UPDATE images SET withheld = 'published' WHERE id = ?",
                                    "UPDATE images SET rendition = NULL WHERE id = ?"])
def test_units_hold_only_images_a_battle_may_show(arena, hidden):
    """A rating question shows its image as a battle does: never one withheld (published with its model's name) nor
    one without its display rendition (its first request would be timed: the third security review's finding 1)."""
    db = arena.db
    unit = COMMONSENSE.units(db)[0]
    image_id = unit.questions[0].image_id
    assert any(q.image_id == image_id for u in SANEVAL.units(db) + SEMVAR.units(db) + COMMONSENSE.units(db)
               for q in u.questions)
    with db.conn:  # one write transaction on either engine
        db.execute(hidden, [image_id])
    shown = {q.image_id for task in RATING_TASKS.values() for u in task.units(db) for q in u.questions}
    assert image_id not in shown
    assert unit.key not in {u.key for u in COMMONSENSE.units(db)}  # the pair goes whole, not half
    assert len(COMMONSENSE.units(db)) == 2 * 4 * 2 - 1


def _demo_rater_answer(db, serving, rater: str) -> dict:
    """What a scripted rater who looks at a demo image answers: it sees which demo model drew it (the painter draws
    the prompt, the scribble ignores it) and, for SemVarBench, whether the text means what the image's prompt
    means (anchor and paraphrase mean the same; the permutation means something else)."""
    model, image_role = db.execute(
        "SELECT m.name, p.role FROM images i JOIN models m ON m.id = i.model_id JOIN prompts p ON p.id = i.prompt_id "
        "WHERE i.id = ?", [serving.image_id]).fetchone()
    shift = 10 if rater == "ben" else 0  # the second rater is a little harsher, so the raters do not agree exactly
    if serving.task == "saneval_adherence":
        return {"likert": {"demo-painter": 5, "demo-lookalike": 3}.get(model, 1) - (shift // 10 if model ==
                                                                                    "demo-painter" else 0)}
    text_role = db.execute("SELECT role FROM prompts WHERE id = ?", [serving.text_prompt_id]).fetchone()[0]
    same_meaning = (text_role == "permutation") == (image_role == "permutation")
    if model == "demo-painter":
        score = 50 - shift if same_meaning else 10
    elif model == "demo-lookalike":
        score = 40 - shift if same_meaning else 30
    else:
        score = 10
    return {"object_accuracy": score, "relevance": score}


@pytest.mark.slow
def test_the_semvar_and_saneval_tasks_run_on_the_shipped_demo(tmp_path):
    """Issue 27: the SemVarBench and SANEval tasks work end to end on the shipped demo: two raters answer every
    question of two demo models, and SemVarEffect from human scores (SemVarBench Tables 11-12, human column), the
    SANEval human scores per category (Table 4, human column) and the agreement between the raters come out."""
    from datamodel.human_ratings import ratings_frame
    from judges import human_stats

    db = demo_arena(tmp_path).db  # the shipped demo, loaded once per process
    models = ("demo-painter", "demo-scribble")
    for task in (SEMVAR, SANEVAL):
        assert task.units(db, models), f"the shipped demo has nothing to rate for {task.name}"
        set_assignment(db, task.name, raters_per_item=2, models=models)
    pool = raters.RatingPool()
    questions = sum(len(u.questions) for task in (SEMVAR, SANEVAL) for u in task.units(db, models))
    for name in ("ann", "ben"):
        session = raters.next_question(db, random.Random(name), raters.start(db, name, "token-0001",
                                                                              open_signup=True), pool=pool)
        answered = 0
        while session.current is not None:  # every question of both tasks: whole units
            session = raters.answer(db, session, _demo_rater_answer(db, session.current, name), pool=pool,
                                    rng=random.Random(answered), rules=None)
            answered += 1
        assert answered == questions

    semvar = human_stats.semvar_human(db)  # Table 11 from human scores, per model and category
    overall = semvar[semvar["subset"] == ""].set_index("model")
    assert set(overall.index) == set(models)
    assert (overall["items"] == len(SEMVAR.units(db, ("demo-painter",)))).all()
    assert overall[["mean", "gamma_w", "gamma_wo"]].apply(lambda c: c.between(0, 2)).all().all()
    # the painter follows the words, so a change of meaning moves its scores; the scribble reacts to nothing
    assert overall.loc["demo-painter", "kappa"] > 0.5 and overall.loc["demo-scribble", "kappa"] == 0
    assert set(semvar["subset"]) - {""}, "no SemVarBench category rows: the demo sample's items have categories"

    saneval = human_stats.saneval_human(db).set_index("model")  # Table 4 from human ratings
    from suites.saneval import CATEGORIES
    assert set(saneval.index) == set(models)
    assert saneval[list(CATEGORIES)].notna().all().all(), "every SANEval category is in the demo"
    assert saneval.loc["demo-painter", "total"] > 0.8 and saneval.loc["demo-scribble", "total"] == 0

    for task in (SEMVAR, SANEVAL):  # two raters on every question: agreement is defined and not perfect
        agreement = human_stats.rater_agreement(ratings_frame(db, task=task.name), task.scale)
        assert agreement["raters"] == 2 and agreement["shared"] == agreement["questions"] > 0
        assert 0 < agreement["alpha"] < 1
    db.close()


def test_each_task_has_its_own_pace_rule(arena):
    """A careful rater answers a one-image yes/no question 2.5-4.5 s apart (issue 41's walk): the battles' 5-second
    rule set such answers aside; each task declares its own pace (docs/human-ratings.md says why)."""
    db = arena.db
    pool, rng = raters.RatingPool(), random.Random(0)
    assert {name: task.pace for name, task in RATING_TASKS.items()} == {
        "commonsense_fit": 2.0, "semvar_alignment": 4.0, "saneval_adherence": 2.5, "saneval_adherence_10": 3.0}
    rules = QualityRules(fast_streak=5, fast_seconds=5.0)  # the battles' rule, a shorter run
    session = raters.next_question(db, rng, signed_in(db, task="commonsense_fit"), pool=pool, now=1000.0)
    for k in range(6):  # 2.5 s apart: careful, counted
        session = raters.answer(db, session, {"fit": k % 2}, pool=pool, rng=rng, rules=rules, now=1002.5 + 2.5 * k)
    assert session.fast_run == 1
    for k in range(6):  # 1.5 s apart: faster than the task's pace, a run of 6 from the first of them
        session = raters.answer(db, session, {"fit": k % 2}, pool=pool, rng=rng, rules=rules, now=1020.0 + 1.5 * k)
    excluded = [row[0] for row in db.execute("SELECT excluded FROM ratings ORDER BY id")]
    assert excluded == [0] * 6 + [1] * 6
    assert "5+ consecutive votes less than 2 s apart" in flagged_ratings(db)[0]["reason"]
    assert session.fast_run == 6


def test_the_rating_pool_reads_the_units_again_when_the_catalogs_counter_is_missing(arena):
    """Without the ``catalog`` row of ``data_versions`` (deleted by hand) nothing says when the images changed: the
    pool plans the units at every call instead of keeping its first plan for ever (it compared "no counter" with
    the "no counter" it kept, and found them equal)."""
    db, pool = arena.db, raters.RatingPool()
    with db.conn:
        db.execute("DELETE FROM data_versions WHERE name = 'catalog'")
    first = pool.units(db, COMMONSENSE, ())
    unit = next(iter(first.values()))
    with db.conn:  # a change no counter records
        db.execute("UPDATE images SET withheld = 'published' WHERE id = ?", [unit.questions[0].image_id])
    assert unit.key not in pool.units(db, COMMONSENSE, ())
    assert list(pool.units(db, COMMONSENSE, ())) == [u.key for u in COMMONSENSE.units(db)]
