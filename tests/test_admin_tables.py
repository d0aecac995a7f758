"""The admin's review tables: the data model returns named columns, the arena puts the page's headings on them."""

from __future__ import annotations

from support.votes import add_votes

from arena.admin_tables import ACTION_HEADINGS, ANNOTATOR_HEADINGS, admin_actions, annotator_flags
from datamodel import reviews


def test_the_data_model_names_columns_and_the_page_heads_them(small_arena):
    add_votes(small_arena)  # alice and bob vote on 18 battles each
    db = small_arena.db
    reviews.review_votes(db, exclude=True, reason="a test", annotator="bob", now=86400.0)

    flags = reviews.annotator_flags(db)
    assert tuple(flags.columns) == reviews.ANNOTATOR_FLAG_COLUMNS == tuple(ANNOTATOR_HEADINGS)
    assert sorted(flags[flags["votes"] > 0]["annotator"]) == ["alice", "bob"]
    shown = annotator_flags(db)
    assert list(shown.columns[:5]) == ["Annotator", "Account", "Votes", "Counted",
                                  "Median s (pairwise)"]
    assert shown.set_index("Annotator").loc["bob", "Excluded by admin"] == 18

    actions = reviews.admin_actions(db)
    assert tuple(actions.columns) == reviews.ADMIN_ACTION_COLUMNS
    assert tuple(ACTION_HEADINGS) == tuple(column for column in actions.columns if column != "vote_kind")
    assert admin_actions(db).iloc[0].to_dict() == {
        "When (UTC)": "1970-01-02 00:00:00", "Action": "exclude", "Annotator": "bob", "Rule": "", "Vote": None,
        "Reason": "a test", "Votes": 18, "Changed": 18}
