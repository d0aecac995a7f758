"""What the annotator's page says, without a browser (issue 17): the definition once, the guidelines and their
configuration, the status line's own count and progress, the reveal without the global vote id, and whether the
expected outcome was shown, stored with the vote and exported."""

import random

import pytest

from arena import session as sessions
from arena.web.render import guidelines_markdown, load_guidelines, prompt_markdown, reveal_html, status_markdown
from datamodel.battles import Battle, ShownImage
from datamodel.standing import Standing
from datamodel.vote_table import votes_frame
from suites.registry import SUITES

pytestmark = pytest.mark.both_engines


def _battle(text: str, metadata: dict, suite: str = "taxonomy") -> Battle:
    return Battle("b", 1, suite, "Easy", "", text, metadata, ShownImage(1, "0" * 64, "png"),
                  ShownImage(2, "1" * 64, "png"), 0.0, "tok")


def test_the_definition_is_shown_once():
    meta = {"lemma": "coin", "definition": "a flat metal piece used as money"}
    with_definition = prompt_markdown(_battle("An image of coin (a flat metal piece used as money)", meta))
    assert with_definition.count("flat metal piece") == 1, with_definition
    assert "**Concept:** coin" in with_definition
    without = prompt_markdown(_battle("An image of coin", meta))  # the prompt lacks it: the caption gives it
    assert without.count("flat metal piece") == 1 and "**Concept:** coin" in without


def test_guidelines_name_each_suite_by_its_title_with_its_criteria(tmp_path):
    text = guidelines_markdown(["commonsense", "taxonomy"])
    assert "Tie" in text and "Both are bad" in text
    for name in ("commonsense", "taxonomy"):
        assert SUITES[name].title.replace("-", "\\-") in text
    assert "lightbulb without electricity is dark" in text
    configured = tmp_path / "guidelines.toml"
    configured.write_text('general = "Our own rules."\n[criteria]\ncommonsense = "Count the lit bulbs."\n')
    text = guidelines_markdown(["commonsense", "taxonomy"], load_guidelines(configured))
    assert text.startswith("Our own rules\\.") and "Count the lit bulbs\\." in text
    assert "lightbulb without electricity" not in text and "named concept" in text  # taxonomy keeps its own
    configured.write_text("criteria = 3\n")
    with pytest.raises(ValueError, match="guidelines file"):
        load_guidelines(configured)
    assert load_guidelines(None) == {}


def test_the_status_line_counts_the_annotators_own_votes_and_progress():
    line = status_markdown("ann", Standing(cast=11, counted=11), progress=(12, 76, "Commonsense-T2I"))
    assert "11 votes cast, all count" in line and "12 of 76 prompts in Commonsense\\-T2I" in line
    assert "every prompt" not in line
    done = status_markdown("ann", Standing(cast=76, counted=76), progress=(76, 76, "Commonsense-T2I"))
    assert "You have voted on every prompt in Commonsense\\-T2I" in done
    refused = status_markdown("ann", Standing(cast=3, counted=3), error="Slow down: vote again in 19 s.")
    # escaped as Markdown, colon included (no autolink); the wait counts down
    assert 'Slow down\\: vote again in <span class="countdown">19</span> s\\.' in refused


def test_expected_shown_is_stored_and_exported_and_progress_counts_prompts(small_arena):
    db = small_arena.db
    s = sessions.start(db, "ann", "token-001", open_signup=True)
    s = sessions.next_battle(db, random.Random(1), s, suite="commonsense")
    assert sessions.progress(db, s.annotator.id, "commonsense") == (0, 2)
    s = sessions.vote(db, s, "A", expected_shown=True)
    assert "Vote #" not in reveal_html(s.receipt) and "Your vote" in reveal_html(s.receipt)
    assert sessions.progress(db, s.annotator.id, "commonsense") == (1, 2)
    s = sessions.vote(db, sessions.next_battle(db, random.Random(2), s, suite="commonsense"), "B",
                      expected_shown=False)
    assert sessions.progress(db, s.annotator.id, "commonsense") == (2, 2)
    assert [row[0] for row in db.execute("SELECT expected_shown FROM votes ORDER BY id")] == [1, 0]
    assert votes_frame(db)["expected_shown"].tolist() == [1, 0]


def test_a_reload_reveals_only_a_vote_of_its_own_page_session(small_arena):
    """A reloaded page names the battle it showed (its media token, kept in the browser): the server shows that
    battle's reveal only when this page session voted on it; a battle not voted on, another session's battle or an
    unknown token reveal nothing."""
    db = small_arena.db
    s = sessions.next_battle(db, random.Random(3), sessions.start(db, "reloader", "token-001", open_signup=True))
    shown = s.battle.media_token
    assert sessions.revealed_vote(db, s, shown) is None  # not voted on yet
    s = sessions.vote(db, s, "B")
    battle, receipt = sessions.revealed_vote(db, s, shown)
    assert battle.media_token == shown
    assert (receipt.vote_id, receipt.battle_id, receipt.outcome, receipt.model_a, receipt.model_b, receipt.excluded) \
        == (s.receipt.vote_id, s.receipt.battle_id, "B", s.receipt.model_a, s.receipt.model_b, s.receipt.excluded)
    other = sessions.start(db, "someone-else", "token-002", open_signup=True)
    assert sessions.revealed_vote(db, other, shown) is None  # the same annotator's or another's: never
    assert sessions.revealed_vote(db, s, "x" * 24) is None and sessions.revealed_vote(db, s, "") is None
