"""Prompt candidates (LLM-written prompts waiting for a person's check) on both database engines."""

from __future__ import annotations

import pytest

from datamodel.catalog import PromptSpec, suite_prompts
from datamodel.prompt_candidates import ReviewError, add_candidates, candidate_counts, candidates, decide

pytestmark = pytest.mark.both_engines


def specs(texts):
    return [PromptSpec("saneval", f"color-g0-{n:04d}", text, subset="color", metadata={"stratum": "1"},
                       source=f"writer #{n}") for n, text in enumerate(texts)]


def test_candidates_become_prompts_only_when_accepted(db):
    written = add_candidates(db, specs(["a pink stop sign", "a lime ceiling", "a gold stool"]), now=10.0)
    assert (written.inserted, written.unchanged) == (3, 0)
    assert suite_prompts(db, "saneval") == []
    first, second, third = (row["id"] for row in candidates(db, "saneval"))
    done = decide(db, [first, third], accept=True, reviewer="ana", now=20.0)
    assert done.accepted == 2 and len(done.prompt_ids) == 2
    assert decide(db, [second], accept=False, reviewer="ana", reason="two objects", now=30.0).rejected == 1
    assert candidate_counts(db) == {"saneval": {"pending": 0, "accepted": 2, "rejected": 1}}
    prompts = {p["item_key"]: p for p in suite_prompts(db, "saneval")}
    assert set(prompts) == {"color-g0-0000", "color-g0-0002"} and prompts["color-g0-0000"]["metadata"] == {
        "stratum": "1", "validated_by": "ana"}
    again = add_candidates(db, specs(["a pink stop sign", "a lime ceiling", "a gold stool"]))
    assert (again.inserted, again.decided) == (0, 3)
    with pytest.raises(ReviewError, match="was accepted with the text 'a pink stop sign'"):
        add_candidates(db, specs(["a blue stop sign"]))
    with pytest.raises(ReviewError, match="is already a prompt: it cannot be rejected"):
        decide(db, [first], accept=False, reviewer="bo")
    assert decide(db, [second], accept=True, reviewer="bo").accepted == 1  # a rejected one may still be accepted
    (row,) = candidates(db, ids=[second])
    assert (row["status"], row["reviewer"], row["decided_at"] is not None) == ("accepted", "bo", True)
