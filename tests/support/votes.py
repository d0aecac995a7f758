"""Votes and metric rows written into a small arena (support.arena) for leaderboard, export and web tests.

``add_votes``: 18 taxonomy battles voted on by two annotators and two judges, with known disagreements.
``four_image_votes``: an annotator's four-image votes at set times (a run of fast ones, for the quality rules).
``vote_human_order`` / ``store_metrics``: human votes that rank the models as :data:`HUMAN_ORDER`, and metric rows
(CLIP, reward, FID) that agree or disagree with that order in known ways.
"""

from __future__ import annotations

import itertools
import random

from datamodel.annotators import sign_in
from datamodel.battles import Pairing
from datamodel.metrics import MetricRow, write_metrics
from datamodel.votes import record_vote
from judges.selection import image_rows
from sampling.draws import serve_battle

RANKING = ["alpha-model", "bravo-model", "charlie-model", "delta-model"]  # best first
JUDGE = "gpt-judge:gpt-4o-mini"
SINGLE = "gpt-judge-single-order:gpt-4o-mini"
# (prompt, better, worse) battles on which bob votes for the worse image; alice on which she does.
BOB_WRONG = {(0, "alpha-model", "bravo-model"), (1, "charlie-model", "delta-model"), (2, "alpha-model", "delta-model")}
ALICE_WRONG = {(1, "alpha-model", "bravo-model")}

HUMAN_ORDER = ("alpha-model", "bravo-model", "charlie-model", "delta-model")  # best first
CLIP = {"alpha-model": 0.40, "bravo-model": 0.30, "charlie-model": 0.10, "delta-model": 0.20}  # one swap at the bottom
FID = {"alpha-model": 10.0, "bravo-model": 20.0, "charlie-model": 30.0, "delta-model": 40.0}  # lower is better
REWARD = {"alpha-model": 0.1, "bravo-model": 0.2, "charlie-model": 0.3}  # reversed, and delta unscored


def image_of(db, prompt_id: int, model: str) -> int:
    return db.execute("SELECT i.id FROM images i JOIN models m ON m.id = i.model_id WHERE i.prompt_id = ? AND "
                      "m.name = ? ORDER BY i.idx", [prompt_id, model]).fetchone()[0]


def vote_on(db, pairing: Pairing, outcome: str, *, annotator=None, judge=None) -> None:
    """Serve ``pairing`` to the annotator (or judge) and record its vote."""
    session = f"s-{annotator.id if annotator else judge}"
    battle = serve_battle(db, random.Random(0), session_id=session, annotator_id=annotator.id if annotator else None,
                          judge=judge, pairing=pairing)
    record_vote(db, battle.id, outcome, session_id=session, rules=None)


def add_votes(arena) -> list[tuple[int, str, str]]:
    """18 taxonomy battles (3 prompts x 6 pairs, the better model on the left every other time) voted on by two
    annotators, by JUDGE (by the ranking) and the first 6 by SINGLE (always [[A]]); returns the battles."""
    db = arena.db
    alice = sign_in(db, "alice", "alice-token", open_signup=True)
    bob = sign_in(db, "bob", "bob-token-1", open_signup=True)
    battles: list[tuple[int, str, str]] = []
    for p, (better, worse) in itertools.product(range(3), itertools.combinations(RANKING, 2)):
        prompt_id = arena.prompt_ids[p]
        left, right = (better, worse) if len(battles) % 2 == 0 else (worse, better)
        pairing = Pairing(prompt_id, image_of(db, prompt_id, left), image_of(db, prompt_id, right))
        right_side = "A" if left == better else "B"
        wrong_side = "B" if right_side == "A" else "A"
        vote_on(db, pairing, wrong_side if (p, better, worse) in ALICE_WRONG else right_side, annotator=alice)
        vote_on(db, pairing, wrong_side if (p, better, worse) in BOB_WRONG else right_side, annotator=bob)
        vote_on(db, pairing, right_side, judge=JUDGE)
        if len(battles) < 6:
            vote_on(db, pairing, "A", judge=SINGLE)
        battles.append((p, better, worse))
    return battles


def vote_human_order(arena) -> None:
    """For every pair of models, four human votes on one taxonomy prompt: the better model wins three."""
    annotator = sign_in(arena.db, "alice", "token-001", open_signup=True)
    prompt_id = image_rows(arena.db, "taxonomy")[0]["prompt_id"]
    by_model = {row["model"]: row["id"] for row in image_rows(arena.db, "taxonomy") if row["prompt_id"] == prompt_id}
    rng = random.Random(0)
    for better, worse in itertools.combinations(HUMAN_ORDER, 2):
        for n, winner_left in enumerate((True, False, True, False)):
            left, right = (better, worse) if winner_left else (worse, better)
            battle = serve_battle(arena.db, rng, session_id="s1", annotator_id=annotator.id,
                                  pairing=Pairing(prompt_id, by_model[left], by_model[right]))
            wins = n < 3  # the better model wins 3 of 4
            outcome = ("A" if winner_left else "B") if wins else ("B" if winner_left else "A")
            record_vote(arena.db, battle.id, outcome, session_id="s1", rules=None)


def store_metrics(arena) -> None:
    """Per-image CLIP and reward rows and per-model FID rows for the taxonomy images (values above)."""
    ids, rows = arena.model_ids, []
    for row in image_rows(arena.db, "taxonomy"):
        rows.append(MetricRow(row["model_id"], "clip_score", CLIP[row["model"]], "open_clip:test", image_id=row["id"],
                              suite="taxonomy"))
        if row["model"] in REWARD:
            rows.append(MetricRow(row["model_id"], "reward", REWARD[row["model"]], "tiny-reward", image_id=row["id"],
                                  suite="taxonomy"))
    for model, value in FID.items():
        rows.append(MetricRow(ids[model], "fid", value, "inception-v3", suite="taxonomy"))
    write_metrics(arena.db, rows)


def four_image_votes(db, session, count: int, *, start: float, every: float) -> list[int]:
    """``count`` four-image votes of the signed-in ``session`` on the taxonomy suite, ``every`` seconds apart from
    ``start`` (each set shown 1 s before its vote; best slot 1, 2, 3, 4, 1, ...; a worst slot on every other vote);
    their vote ids. Under 5 s apart, ten or more are a run of fast votes the speed rule sets aside."""
    from arena.four_image_session import next_four, vote_four

    sitting, ids = None, []
    for n in range(count):
        at = start + n * every
        sitting = next_four(db, random.Random(n), session, sitting, suites=["taxonomy"], strategy="uniform",
                            now=at - 1.0)
        assert sitting.battle is not None
        best = 1 + n % 4
        sitting = vote_four(db, session, sitting, best=best, worst=None if n % 2 else 1 + best % 4,
                            on_screen=sitting.battle.media_token, now=at)
        assert sitting.receipt is not None
        ids.append(sitting.receipt.vote_id)
    return ids
