"""Slicing the vote table (datamodel.vote_table): suite, subset, prompt variant, category, voter kind, voter, exclusion.

A small database holds one vote per row of :data:`VOTES`; each slice must keep exactly the votes listed for it. The
category slice is also checked on the real SemVarBench files, where an item may be in several categories.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest
from support.shared import SEMVARBENCH, SEMVARBENCH_CATEGORIES, shared_file

import ratings
from datamodel.battles import Pairing
from datamodel.catalog import PromptSpec, add_image, add_model, add_prompts
from datamodel.connection import connect
from datamodel.media import StoredImage
from datamodel.vote_table import SLICES, category_choices, slice_where, votes_frame
from datamodel.votes import record_vote
from sampling.draws import serve_battle
from suites import semvarbench

pytestmark = pytest.mark.both_engines

JUDGE = "gpt-judge:gpt-4o-mini"

PROMPTS = {  # name: the prompt
    "coin+def": PromptSpec("taxonomy", "coin.n.01", "An image of coin (a flat metal piece used as money)",
                           subset="Easy", variant="with_definition"),
    "coin": PromptSpec("taxonomy", "coin.n.01", "An image of coin", subset="Easy", variant="without_definition"),
    "cappuccino+def": PromptSpec("taxonomy", "cappuccino.n.01", "An image of cappuccino (espresso with milk)",
                                 subset="Hypernymy", variant="with_definition"),
    "red-cat": PromptSpec("semvarbench", "a", "A red cat on a blue mat.", role="anchor",
                          metadata={"categories": ["color"], "category": "color"}),
    "tall-red": PromptSpec("semvarbench", "b", "A tall man in red beside a short man in blue.", role="anchor",
                           metadata={"categories": ["color", "height"]}),
    "bulb": PromptSpec("commonsense", "0", "A lightbulb without electricity", subset="Physical Laws", role="p1",
                       metadata={"category": "Physical Laws"}),
}
VOTES = {  # vote label: (prompt, voter, outcome); a voter named like the judge is a judge, the others people
    "v1": ("coin+def", "alice", "A"),
    "v2": ("coin", "alice", "B"),
    "v3": ("coin+def", JUDGE, "A"),
    "v4": ("coin", JUDGE, "tie"),
    "v5": ("cappuccino+def", "bob", "both_bad"),
    "v6": ("red-cat", "alice", "A"),
    "v7": ("tall-red", "bob", "B"),
    "v8": ("tall-red", JUDGE, "A"),
    "v9": ("bulb", "bob", "A"),
    "v10": ("bulb", JUDGE, "B"),
}
EXCLUDED = {"v5"}


def _stored(name: str) -> StoredImage:
    return StoredImage(hashlib.sha256(name.encode()).hexdigest(), "png", 8, 8)


def add_votes(db, votes: dict[str, tuple[int, str, str]]) -> dict[int, str]:
    """One battle and one vote per entry {label: (prompt id, voter, outcome)}; returns {vote id: label}.

    Every prompt gets an image of models m1 and m2 (added if missing); a voter named like :data:`JUDGE` votes as a
    judge, any other name as a person.
    """
    models = [add_model(db, name) for name in ("m1", "m2")]
    labels = {}
    for index, (label, (prompt_id, voter, outcome)) in enumerate(votes.items()):
        left, right = (add_image(db, prompt_id=prompt_id, model_id=m, stored=_stored(f"{prompt_id}:{m}"))
                       for m in models)
        who: dict[str, Any]  # serve_battle's judge or annotator_id
        if voter == JUDGE:
            who = {"judge": JUDGE}
        else:
            db.execute("INSERT OR IGNORE INTO annotators (name, token_hash, source) VALUES (?, 'x', 'config')", [voter])
            who = {"annotator_id": db.execute("SELECT id FROM annotators WHERE name = ?", [voter]).fetchone()[0]}
        session = f"session-{index}"
        pairing = Pairing(prompt_id, *((left, right) if index % 2 else (right, left)))
        battle = serve_battle(db, random.Random(index), session_id=session, pairing=pairing, **who)
        labels[record_vote(db, battle.id, outcome, session_id=session, rules=None).vote_id] = label
    return labels


@pytest.fixture(scope="module")
def sliced():
    db = connect(":memory:")
    ids = dict(zip(PROMPTS, add_prompts(db, PROMPTS.values()).ids))
    labels = add_votes(db, {label: (ids[prompt], voter, outcome) for label, (prompt, voter, outcome) in VOTES.items()})
    with db.conn:
        for vote_id, label in labels.items():
            if label in EXCLUDED:
                db.execute("UPDATE votes SET excluded = 1, excluded_reason = 'test' WHERE id = ?", [vote_id])
    yield db, labels
    db.close()


ALL = set(VOTES)
HUMAN = {label for label, (_, voter, _) in VOTES.items() if voter != JUDGE}


@pytest.mark.parametrize(
    "filters, expected",
    [
        ({}, ALL),
        ({"suite": "taxonomy"}, {"v1", "v2", "v3", "v4", "v5"}),
        ({"suite": ["semvarbench", "commonsense"]}, {"v6", "v7", "v8", "v9", "v10"}),
        ({"subset": "Easy"}, {"v1", "v2", "v3", "v4"}),
        ({"subset": "Hypernymy"}, {"v5"}),
        ({"variant": "with_definition"}, {"v1", "v3", "v5"}),
        ({"variant": "without_definition"}, {"v2", "v4"}),
        ({"category": "color"}, {"v6", "v7", "v8"}),  # "a" by its category, "b" by its categories list
        ({"category": "height"}, {"v7", "v8"}),
        ({"category": "Physical Laws"}, {"v9", "v10"}),
        ({"category": ["height", "Physical Laws"]}, {"v7", "v8", "v9", "v10"}),
        ({"category": "Easy"}, set()),  # a subset is not a category
        ({"voter_kind": "judge"}, {"v3", "v4", "v8", "v10"}),
        ({"voter_kind": "human"}, HUMAN),
        ({"voter": "alice"}, {"v1", "v2", "v6"}),
        ({"voter": ["bob", JUDGE]}, {"v3", "v4", "v5", "v7", "v8", "v9", "v10"}),
        ({"suite": "taxonomy", "variant": "with_definition", "voter_kind": "human"}, {"v1", "v5"}),
        ({"category": "color", "voter": "bob"}, {"v7"}),
        ({"include_excluded": False}, ALL - EXCLUDED),
        ({"subset": "Hypernymy", "include_excluded": False}, set()),
        ({"voter": "nobody"}, set()),
    ],
    ids=lambda value: repr(value) if isinstance(value, dict) else None,
)
def test_each_slice_keeps_exactly_its_votes(sliced, filters, expected):
    db, labels = sliced
    frame = votes_frame(db, **filters)
    assert {labels[vote_id] for vote_id in frame["vote_id"]} == expected
    assert list(frame["vote_id"]) == sorted(frame["vote_id"])  # oldest first
    # the pure slicer of the ratings package, on the exported table, keeps the same votes
    pure = ratings.slice_votes(votes_frame(db), include_excluded=filters.get("include_excluded", True),
                               **{k: v for k, v in filters.items() if k != "include_excluded"})
    assert {labels[vote_id] for vote_id in pure["vote_id"]} == expected


def test_sliced_rows_carry_their_prompt_and_voter(sliced):
    db, labels = sliced
    row = votes_frame(db, voter="bob", category="height").iloc[0]
    assert (row.suite, row.item_key, row.role, row.voter, row.voter_kind, row.outcome) == (
        "semvarbench", "b", "anchor", "bob", "human", "B")
    assert row.category is None  # several categories: no single one
    assert {row.winner} <= {row.model_a, row.model_b}


def test_unknown_slices_are_refused():
    with pytest.raises(ValueError, match="Cannot slice votes by colour: use suite, subset, variant, category"):
        slice_where(colour="red")
    assert slice_where() == ("", [])
    assert set(SLICES) == {"suite", "subset", "variant", "category", "voter_kind", "voter"}


def test_category_choices_list_every_category(sliced):
    db, _ = sliced
    assert category_choices(db) == ["Physical Laws", "color", "height"]


# --- the real SemVarBench files ---------------------------------------------------------------------------------------


def test_a_semvarbench_item_is_found_under_each_of_its_categories():
    folder = shared_file(SEMVARBENCH_CATEGORIES)
    expected: dict[str, set[str]] = {}  # category: item ids, read straight from the category files
    for path in sorted(folder.glob("*.tsv")):
        expected[path.stem] = {line.split("\t")[0] for line in path.read_text().splitlines() if line.strip()}
    db = connect(":memory:")
    semvarbench.import_semvarbench(db, shared_file(SEMVARBENCH))
    anchors = dict(db.execute("SELECT item_key, id FROM prompts WHERE suite = 'semvarbench' AND role = 'anchor'"))
    labels = add_votes(db, {key: (prompt_id, "alice", "A") for key, prompt_id in anchors.items()})
    assert len(labels) == 684

    several = {key for key in anchors if sum(key in ids for ids in expected.values()) > 1}
    assert len(several) == 118 and "183_263_136" in several
    for category, ids in expected.items():
        found = {labels[vote_id] for vote_id in votes_frame(db, category=category)["vote_id"]}
        assert found == ids, category
    for category in ("absolute_location", "height"):
        assert "183_263_136" in set(votes_frame(db, category=category)["item_key"])
    assert category_choices(db) == sorted(expected) and len(expected) == 20


def test_the_leaderboard_lists_every_category():
    from arena.web import leaderboard_tab

    assert leaderboard_tab.FILTERS["Category"] is category_choices
    db = connect(":memory:")
    semvarbench.import_semvarbench(db, shared_file(SEMVARBENCH))
    assert "height" in leaderboard_tab.FILTERS["Category"](db)
    assert leaderboard_tab.FILTERS["Prompt variant"](db) == []
    assert leaderboard_tab.FILTERS["Suite"](db) == ["semvarbench"]


def test_the_leaderboard_slices_a_category_like_the_vote_table(sliced):
    from arena.leaderboard.compute import LeaderboardOptions, compute_leaderboard

    db, labels = sliced
    for options, expected in ((LeaderboardOptions(category="height", rounds=10), {"v7", "v8"}),
                              (LeaderboardOptions(category="color", rounds=10, voter="alice"), {"v6"})):
        board = compute_leaderboard(db, options)
        shown = votes_frame(db)[lambda frame, expected=expected: frame["vote_id"].map(labels).isin(expected)]
        assert board.counts.sum() == len(expected)  # the item in color and height; alice's vote in color
        assert board.votes == shown["voter_kind"].value_counts().reindex(["human", "judge"], fill_value=0).to_dict()
        assert set(board.models) == set(shown["model_a"]) | set(shown["model_b"])
