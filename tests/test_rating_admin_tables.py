"""The admin tab's Human ratings tables speak plainly (issue 29's "human headers everywhere"): their headers in words,
as on the other tabs (the flagged votes: "Vote", "When (UTC)", "By an admin"), and the flags as yes or no."""

import random
from types import SimpleNamespace

from support.ratings import build_rating_arena

from arena import rating_session as raters
from arena.web.rating_admin import flagged_frame, status_frame
from datamodel.human_ratings import set_assignment
from datamodel.quality import QualityRules


def test_the_rating_admin_tables_have_headers_in_words(tmp_path):
    arena = build_rating_arena(tmp_path, generations=2)
    db = arena.db
    set_assignment(db, "commonsense_fit", raters_per_item=2)
    pool, rng = raters.RatingPool(), random.Random(0)
    session = raters.next_question(db, rng, raters.start(db, "rater", "token-0001", open_signup=True), pool=pool,
                                   now=1000.0)
    rules = QualityRules(fast_streak=5, fast_seconds=5.0)
    for k in range(6):  # a run of six fast answers: all flagged
        session = raters.answer(db, session, {"fit": k % 2}, pool=pool, rng=rng, rules=rules, now=1001.0 + k)
    page = SimpleNamespace(store=SimpleNamespace(db=lambda: db))  # what the two tables read of the app
    flagged = flagged_frame(page)
    for name, table in (("study", status_frame(page, pool)), ("flagged ratings", flagged)):
        coded = [header for header in table.columns if "_" in header or not header[:1].isupper()]
        assert not coded, f"the {name} table's headers are not in words: {coded}"
    assert list(flagged.columns) == ["Rating", "Rater", "Task", "Answer", "When (UTC)", "Excluded", "By an admin",
                                     "Reason"]
    assert len(flagged) == 6 and set(flagged["Excluded"]) == {"yes"} and set(flagged["By an admin"]) == {"no"}
    db.close()
