"""Quality controls on human votes: flag, never delete.

Rules (thresholds in :class:`QualityRules`):

- **rate**: a vote that is the 901st or later within one hour, or the 1,801st or later within three hours, of the
  same annotator;
- **speed**: runs of at least 10 consecutive votes, each less than 5 s after the one before;
- **bias**: an annotator with at least 20 votes of which at least 80% pick the same screen side (A or B) or the same
  model: all their votes.

**Why these caps.** They are set by careful human speed, not by a guess at abuse: people who look at both images
vote about every 5 to 10 s (walked on the demo: about 5 s a vote on a phone, about 10 s at a desk). The hourly cap,
900, is one vote every 4 s for a whole hour: a careful voter at the 5 s pace casts 720 (721 counting both ends of the
hour) in any hour, a fifth below it, and a pace faster than that for an hour comes in runs the speed rule (less than
5 s apart) already catches. The three-hour cap, 1,800, is an average of 6 s a vote for three hours: a voter at 10 s a
vote (1,080) never reaches it; one who keeps the 5 s pace reaches it after two and a half hours, and votes count again
after a break. (The first caps, 30 an hour and 100 in three hours, set aside a careful voter's work after 5 minutes at
10 s a vote.) The page counts each voter's cast and counted votes, warns a tenth before a cap
(:mod:`datamodel.standing`) and says why a vote does not count.

**Per-source policy.** The defaults fit a public arena of strangers; in a study an expert annotator labelling the
taxonomy benchmark's 3,370 battles votes far beyond 30 an hour, and would lose most of their work. So accounts whose
``annotators.source`` is in :attr:`QualityRules.trusted_sources` (the configured accounts, by default:
``ARENA_QUALITY_TRUST_CONFIGURED``) are trusted: a vote that breaks only the rate or the speed rule is reported, not
excluded (``excluded = 0`` with the reason, starting "reported, not excluded", listed among the admin's flagged
votes). The bias rule excludes for every account. Accounts made by open sign-up keep the rules above. The policy is
the one in force when a vote is checked.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.settings import QualityRules
from datamodel.database import Database

RATE, SPEED, BIAS = "rate", "speed", "bias"
REPORT_ONLY = (RATE, SPEED)  # the rules that report a trusted account's votes instead of excluding them
REPORTED = "reported, not excluded (trusted account): "
# the fixed words of each rule's reasons (rule_reasons writes them, the admin's actions per rule find them)
RULE_WORDS = {RATE: ("votes in an hour", "votes in 3 hours"), SPEED: ("consecutive votes less than",),
              BIAS: ("of this annotator's votes for",)}
RULE_TITLES = {RATE: "too many votes in an hour or in 3 hours", SPEED: "runs of fast votes",
               BIAS: "one side or one model picked nearly always"}


@dataclass(frozen=True)
class VoteFact:
    vote_id: int
    voted_at: float  # unix seconds
    outcome: str  # A | B | tie | both_bad
    winner: str | None  # the model picked, for A/B votes


def bias_from_counts(total: int, sides: Counter, models: Counter, rules: QualityRules = QualityRules()) -> list[str]:
    """The bias rule on vote counts: ``total`` votes, A/B counts in ``sides``, picks per model in ``models``."""
    if total < rules.bias_min_votes:
        return []
    reasons = []
    for label, counter in (("side", sides), ("model", models)):
        top = [(value, count) for value, count in counter.items() if count > 0]
        if top:
            value, count = max(top, key=lambda item: (item[1], str(item[0])))
            if count >= rules.bias_share * total:
                reasons.append(f"at least {rules.bias_share:.0%} {RULE_WORDS[BIAS][0]} {label} {value}")
    return reasons


def bias_reasons(votes: Sequence[VoteFact], rules: QualityRules = QualityRules()) -> list[str]:
    """The bias rule over all of one annotator's votes: the reasons that apply to every one of them."""
    return bias_from_counts(len(votes), Counter(v.outcome for v in votes if v.outcome in ("A", "B")),
                            Counter(v.winner for v in votes if v.winner), rules)


def flag_reasons(
    votes: Sequence[VoteFact], rules: QualityRules = QualityRules(), bias: Sequence[str] | None = None, *,
    last: int | None = None,
) -> dict[int, str]:
    """{vote_id: reason} for the votes of one annotator (any order) that break a rule.

    ``bias`` gives the bias rule's reasons when ``votes`` is only a recent window of the annotator's votes;
    by default they are computed from ``votes``. ``last``: the reasons of the ``last`` newest votes only (the others
    are the context that the rate and speed rules look back at).
    """
    return {vote_id: "; ".join(text for _, text in parts)
            for vote_id, parts in rule_reasons(votes, rules, bias, last=last).items()}


def verdict(parts: Sequence[tuple[str, str]], trusted: bool) -> tuple[int, str]:
    """(excluded, reason) of a vote that breaks the rules ``parts`` ((rule, reason) pairs; none: (0, "")): excluded
    with every reason, unless the annotator is ``trusted`` and it breaks only rules of :data:`REPORT_ONLY`: then
    kept, the reasons reported."""
    if not parts:
        return 0, ""
    if trusted and all(rule in REPORT_ONLY for rule, _ in parts):
        return 0, REPORTED + "; ".join(text for _, text in parts)
    return 1, "; ".join(text for _, text in parts)


def rule_reasons(
    votes: Sequence[VoteFact], rules: QualityRules = QualityRules(), bias: Sequence[str] | None = None, *,
    last: int | None = None,
) -> dict[int, list[tuple[str, str]]]:
    """{vote_id: [(rule, reason), ...]} for the votes that break a rule (:data:`RATE`, :data:`SPEED`, :data:`BIAS`);
    arguments as for :func:`flag_reasons`."""
    votes = sorted(votes, key=lambda v: (v.voted_at, v.vote_id))
    first = 0 if last is None else max(0, len(votes) - last)
    reasons: dict[int, list[tuple[str, str]]] = {}

    def flag(vote: VoteFact, reason: str, rule: str) -> None:
        reasons.setdefault(vote.vote_id, [])
        if (rule, reason) not in reasons[vote.vote_id]:
            reasons[vote.vote_id].append((rule, reason))

    times = [v.voted_at for v in votes]
    for index in range(first, len(votes)):
        vote = votes[index]
        if index + 1 - bisect_left(times, vote.voted_at - 3600, 0, index + 1) > rules.max_per_hour:
            flag(vote, f"more than {rules.max_per_hour} {RULE_WORDS[RATE][0]}", RATE)
        if index + 1 - bisect_left(times, vote.voted_at - 3 * 3600, 0, index + 1) > rules.max_per_3_hours:
            flag(vote, f"more than {rules.max_per_3_hours} {RULE_WORDS[RATE][1]}", RATE)

    run_start = 0
    for index in range(1, len(votes) + 1):
        if index == len(votes) or votes[index].voted_at - votes[index - 1].voted_at >= rules.fast_seconds:
            if index - run_start >= rules.fast_streak:
                for vote in votes[max(run_start, first):index]:
                    flag(vote, f"{rules.fast_streak}+ {RULE_WORDS[SPEED][0]} {rules.fast_seconds:g} s apart", SPEED)
            run_start = index

    for reason in bias_reasons(votes, rules) if bias is None else bias:
        for vote in votes[first:]:
            flag(vote, reason, BIAS)
    return reasons


# What each vote showed is on the vote itself (datamodel.schema._study_scale): no join through its battle and images.
_VOTE_FACTS = """
    SELECT v.id, v.voted_at, v.outcome, CASE v.outcome WHEN 'A' THEN ml.name WHEN 'B' THEN mr.name END
    FROM votes v JOIN models ml ON ml.id = v.left_model_id JOIN models mr ON mr.id = v.right_model_id
    WHERE v.annotator_id = ?
"""


def annotator_votes(db: Database, annotator_id: int, since: float | None = None) -> list[VoteFact]:
    """An annotator's votes (those at ``since`` or later, if given)."""
    if since is None:
        rows = db.execute(_VOTE_FACTS, [annotator_id]).fetchall()
    else:
        rows = db.execute(_VOTE_FACTS + " AND v.voted_at >= ?", [annotator_id, since]).fetchall()
    return [VoteFact(*row) for row in rows]


def _bias_before_and_after(db: Database, annotator_id: int, rules: QualityRules):
    """The bias reasons without and with the annotator's newest vote, from aggregate counts (no per-vote rows)."""
    facts = _VOTE_FACTS.replace("v.id, v.voted_at, v.outcome,", "v.outcome,").replace(" END", " END AS winner")
    counts = db.execute(f"SELECT outcome, winner, COUNT(*) FROM ({facts}) facts GROUP BY outcome, winner",
                        [annotator_id]).fetchall()
    total, sides, models = 0, Counter[str](), Counter[str]()
    for outcome, winner, n in counts:
        total += n
        if outcome in ("A", "B"):
            sides[outcome] += n
        if winner:
            models[winner] += n
    after = bias_from_counts(total, sides, models, rules)
    newest = db.execute(_VOTE_FACTS + " ORDER BY v.voted_at DESC, v.id DESC LIMIT 1", [annotator_id]).fetchone()
    if newest is None:
        return after, after
    _, _, outcome, winner = newest
    sides[outcome] -= outcome in ("A", "B")
    models[winner] -= bool(winner)
    return bias_from_counts(total - 1, sides, models, rules), after


def apply_rules(
    db: Database, annotator_id: int, rules: QualityRules = QualityRules(), *, full: bool = False
) -> int:
    """Bring the ``excluded`` flags of an annotator's unreviewed votes in line with the rules; return changes
    (:func:`update_flags`, counted)."""
    return len(update_flags(db, annotator_id, rules, full=full))


def update_flags(
    db: Database, annotator_id: int, rules: QualityRules = QualityRules(), *, full: bool = False
) -> dict[int, tuple[int, int]]:
    """Bring the ``excluded`` flags of an annotator's unreviewed votes in line with the rules; return
    {vote id: (excluded before, excluded after)} of the votes it changed (their flag, or only their reason).

    Called after each new vote (:func:`datamodel.votes.record_vote`, which hands the flipped flags on to the sampler's
    counts). A new vote that is the annotator's latest in time changes at most the flags of the ``fast_streak``
    newest votes: a vote's rate flags depend only on the votes before it, and a speed run it completes flags its
    members, of which those further back already belonged to a run as long as the streak. So unless the bias rule's
    verdict changed with the newest vote (or ``full``), only those are re-examined, with 3 hours of context before
    them; a vote recorded out of time order re-examines the last 3 hours (with 3 more of context). The cost stays
    flat however many votes the annotator has. An annotator whose account's source is trusted
    (:attr:`QualityRules.trusted_sources`) gets :func:`verdict`'s reports instead of rate and speed exclusions.
    """
    changes = update_flags_with_reasons(db, annotator_id, rules, full=full)
    return {vote_id: (before, after) for vote_id, (before, after, _) in changes.items()}


def update_flags_with_reasons(db: Database, annotator_id: int, rules: QualityRules, *,
                  full: bool = False) -> dict[int, tuple[int, int, str]]:
    """:func:`update_flags`, each changed vote's new reason besides its flag before and after."""
    with db.conn:
        # the account's source, the newest voting time, and the voting time of the vote stored last: one read
        source, newest, latest = db.execute(
            "SELECT (SELECT source FROM annotators WHERE id = ?), (SELECT max(voted_at) FROM votes WHERE "
            "annotator_id = ?), (SELECT voted_at FROM votes WHERE annotator_id = ? ORDER BY id DESC LIMIT 1)",
            [annotator_id] * 3).fetchone()
        trusted = source in rules.trusted_sources
        before, after = _bias_before_and_after(db, annotator_id, rules)
        recent = None  # the newest votes whose flags may change
        if not full and before == after and latest is not None and latest == newest:
            recent = db.execute("SELECT id, voted_at FROM votes WHERE annotator_id = ? ORDER BY voted_at DESC, id "
                                "DESC LIMIT ?", [annotator_id, rules.fast_streak]).fetchall()
        window = None if full or before != after or newest is None else newest - 3 * 3600
        if recent:
            window = min(at for _, at in recent)
        context = None if window is None else window - 3 * 3600
        reasons = rule_reasons(annotator_votes(db, annotator_id, since=context), rules, bias=after,
                               last=len(recent) if recent else None)
        sql = "SELECT id, excluded, excluded_reason FROM votes WHERE annotator_id = ? AND reviewed = 0"
        if recent:
            ids = [vote_id for vote_id, _ in recent]
            rows = db.execute(f"{sql} AND id IN ({', '.join('?' * len(ids))})", [annotator_id, *ids]).fetchall()
        else:
            rows = db.execute(sql if window is None else sql + " AND voted_at >= ?",
                              [annotator_id] if window is None else [annotator_id, window]).fetchall()
        changed: dict[int, tuple[int, int, str]] = {}
        for vote_id, excluded, reason in rows:
            wanted = verdict(reasons.get(vote_id, ()), trusted)
            if (excluded, reason) != wanted:
                db.execute("UPDATE votes SET excluded = ?, excluded_reason = ? WHERE id = ? AND reviewed = 0",
                           [*wanted, vote_id])
                changed[vote_id] = (excluded, *wanted)
    return changed


def update_four_image_flags(db: Database, annotator_id: int,
                            rules: QualityRules = QualityRules()) -> dict[int, tuple[int, str]]:
    """Bring the ``excluded`` flags of an annotator's four-image votes (``kwise_votes``) in line with the rules; return
    {vote id: (excluded, reason)} of those it changed. Call inside the vote's transaction.

    The same rate and speed rules as for pairwise votes, over the annotator's four-image votes (each mode is paced
    on its own); the bias rule on the slot picked best (1-4, the "side"; the slots are shuffled, so an annotator who
    looks picks each about a quarter of the time). Not the bias rule's "same model": with four of a suite's models in
    every vote, a clearly best model is shown, and rightly picked, in most votes where a suite has few models. A
    trusted account's rate and speed flags are reported, not excluded (:func:`verdict`). Every vote of the
    annotator is re-read: four-image votes come at most one every few seconds. A vote an admin reviewed
    (``reviewed``, :func:`datamodel.reviews.review_votes`) keeps the admin's decision, and still counts towards its
    neighbours' rate, speed and bias, as a pairwise one does."""
    source = db.execute("SELECT source FROM annotators WHERE id = ?", [annotator_id]).fetchone()
    trusted = source is not None and source[0] in rules.trusted_sources
    rows = db.execute("SELECT id, voted_at, best, excluded, excluded_reason, reviewed FROM kwise_votes WHERE "
                      "annotator_id = ?", [annotator_id]).fetchall()
    facts = [VoteFact(row[0], row[1], f"slot {row[2]}", None) for row in rows]
    bias = bias_from_counts(len(rows), Counter(str(row[2]) for row in rows), Counter(), rules)
    reasons = rule_reasons(facts, rules, bias)
    changed = {}
    for vote_id, _, _, excluded, reason, reviewed in rows:
        wanted = verdict(reasons.get(vote_id, ()), trusted)
        if not reviewed and (excluded, reason) != wanted:
            db.execute("UPDATE kwise_votes SET excluded = ?, excluded_reason = ? WHERE id = ? AND reviewed = 0",
                       [*wanted, vote_id])
            changed[vote_id] = wanted
    return changed


def review_vote(db: Database, vote_id: int, *, exclude: bool, note: str = "") -> None:
    """An admin's final word on one vote: exclude it (with ``note``) or include it despite the rules.

    A server's sampler counts only non-excluded votes: the admin tab has it read them again afterwards
    (:meth:`sampling.sampler.SamplingStats.reload`)."""
    with db.conn:
        cursor = db.execute(
            "UPDATE votes SET excluded = ?, reviewed = 1, excluded_reason = ? WHERE id = ?",
            [int(exclude), (note or "excluded by an admin") if exclude else (note or "included by an admin"), vote_id],
        )
        if cursor.rowcount == 0:
            raise LookupError(f"No vote with id {vote_id}. Copy the id from the flagged votes table.")
