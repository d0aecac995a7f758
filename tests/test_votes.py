import random
import threading
from collections import Counter

import pytest

from datamodel.annotators import SignInError, sign_in, sync_accounts
from datamodel.connection import connect, database_errors, is_unique_violation
from datamodel.sampling_reads import eligible_prompts
from datamodel.votes import VoteRejected, record_vote
from sampling.draws import NoBattleAvailable, draw_uniform, serve_battle
from sampling.prompt_pool import PromptPool

pytestmark = pytest.mark.both_engines


def _serve(arena, rng=None, session="s1", name="alice"):
    annotator = sign_in(arena.db, name, "token-001", open_signup=True)
    return serve_battle(arena.db, rng or random.Random(0), session_id=session, annotator_id=annotator.id)


def test_battle_shows_two_different_models_for_the_prompt(small_arena):
    db = small_arena.db
    for seed in range(30):
        battle = _serve(small_arena, random.Random(seed))
        rows = db.execute("SELECT prompt_id, model_id FROM images WHERE id IN (?, ?)",
                          [battle.left.image_id, battle.right.image_id]).fetchall()
        assert {r[0] for r in rows} == {battle.prompt_id}
        assert len({r[1] for r in rows}) == 2


def test_uniform_sampling_is_seeded_and_covers_pairs_and_sides(small_arena):
    db = small_arena.db
    first = [draw_uniform(db, random.Random(7)) for _ in range(3)]
    assert first == [draw_uniform(db, random.Random(7)) for _ in range(3)]
    rng = random.Random(1)
    models = dict(db.execute("SELECT id, model_id FROM images").fetchall())
    drawn = (draw_uniform(db, rng) for _ in range(3000))
    ordered = Counter((models[p.left_image_id], models[p.right_image_id]) for p in drawn)
    assert len(ordered) == 12  # every ordered pair of the 4 models appears
    expected = 3000 / 12
    assert all(abs(count - expected) < 5 * expected ** 0.5 for count in ordered.values())


def test_suite_filter_and_no_battle_message(small_arena):
    db = small_arena.db
    assert len(eligible_prompts(db, "commonsense")) == 2
    pairing = draw_uniform(db, random.Random(0), suite="commonsense")
    assert db.execute("SELECT suite FROM prompts WHERE id = ?", [pairing.prompt_id]).fetchone()[0] == "commonsense"
    with pytest.raises(NoBattleAvailable, match="No prompt of suite 'semvarbench' has images from two models"):
        draw_uniform(db, random.Random(0), suite="semvarbench")


def test_vote_is_recorded_once_with_models_revealed(small_arena):
    battle = _serve(small_arena)
    receipt = record_vote(small_arena.db, battle.id, "A", session_id="s1")
    row = small_arena.db.execute("SELECT voter, voter_kind, outcome, seconds_to_vote FROM votes").fetchone()
    assert row[:3] == ("alice", "human", "A") and row[3] >= 0
    names = dict(small_arena.db.execute("SELECT i.id, m.name FROM images i JOIN models m ON m.id = i.model_id"))
    assert (receipt.model_a, receipt.model_b) == (names[battle.left.image_id], names[battle.right.image_id])


@pytest.mark.parametrize(
    "battle_id, outcome, session, message",
    [
        ("forged-id-123", "A", "s1", "not shown to you"),
        (None, "A", "s2", "not shown to you"),  # someone else's battle
        (None, "C", "s1", "Unknown outcome 'C'"),
        (None, "a", "s1", "Unknown outcome"),
        ("", "A", "s1", "No battle to vote on"),
    ],
)
def test_bad_votes_are_refused_and_write_nothing(small_arena, battle_id, outcome, session, message):
    battle = _serve(small_arena)
    with pytest.raises(VoteRejected, match=message):
        record_vote(small_arena.db, battle.id if battle_id is None else battle_id, outcome, session_id=session)
    assert small_arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 0


def test_second_vote_is_refused(small_arena):
    battle = _serve(small_arena)
    record_vote(small_arena.db, battle.id, "tie", session_id="s1")
    with pytest.raises(VoteRejected, match="already has your vote"):
        record_vote(small_arena.db, battle.id, "B", session_id="s1")
    assert small_arena.db.execute("SELECT outcome FROM votes").fetchall() == [("tie",)]


def test_a_vote_refused_for_another_constraint_is_not_taken_for_a_second_vote(small_arena):
    """Only the unique vote per battle means "already voted": a vote the database refuses for another constraint
    (here NOT NULL: a human battle whose annotator is gone leaves the vote without a voter) raises the database's
    error, which the page reports as a write it could not save, and writes nothing."""
    battle = _serve(small_arena)
    db = small_arena.db
    with db.conn:
        db.execute("UPDATE battles SET annotator_id = NULL WHERE id = ?", [battle.id])
    with pytest.raises(database_errors()) as refused:
        record_vote(db, battle.id, "A", session_id="s1")
    assert not isinstance(refused.value, VoteRejected)
    assert not is_unique_violation(refused.value, "votes")
    assert "voter" in str(refused.value)
    assert db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 0


def test_a_second_vote_row_on_a_battle_is_told_apart_from_other_refusals(small_arena):
    """What the vote's insert takes for a duplicate: the unique key of ``votes`` broken, on either engine."""
    battle = _serve(small_arena)
    db = small_arena.db
    record_vote(db, battle.id, "A", session_id="s1")
    copy = ("INSERT INTO votes (battle_id, voter, voter_kind, outcome, voted_at) "
            "SELECT battle_id, {voter}, voter_kind, outcome, voted_at FROM votes")
    for voter, duplicate in (("voter", True), ("NULL", False)):
        with pytest.raises(database_errors()) as refused, db.conn:
            db.execute(copy.format(voter=voter))
        assert is_unique_violation(refused.value, "votes") is duplicate, refused.value
        assert not is_unique_violation(refused.value, "battles")
    assert db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 1


def test_concurrent_votes_on_one_battle_store_exactly_one(small_arena):
    battle = _serve(small_arena)
    path = small_arena.settings.database
    results = []

    def vote(outcome):
        db = connect(path, migrate_schema=False)
        try:
            record_vote(db, battle.id, outcome, session_id="s1")
            results.append("ok")
        except VoteRejected:
            results.append("rejected")

    threads = [threading.Thread(target=vote, args=(o,)) for o in ["A", "B", "tie", "both_bad"] * 3]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("ok") == 1
    assert small_arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 1


def test_sign_in_rules(small_arena):
    db = small_arena.db
    alice = sign_in(db, "alice", "secret-token", open_signup=True)
    assert sign_in(db, "alice", "secret-token", open_signup=True) == alice
    with pytest.raises(SignInError, match="Wrong token for 'alice'"):
        sign_in(db, "alice", "guess", open_signup=True)
    with pytest.raises(SignInError, match="Unknown name or wrong token"):  # the same words as a wrong token
        sign_in(db, "bob", "secret-token", open_signup=False)
    with pytest.raises(SignInError, match="Enter a name"):
        sign_in(db, "<script>", "secret-token", open_signup=True)
    assert "secret-token" not in str(db.execute("SELECT token_hash FROM annotators").fetchall())


def test_configured_accounts_take_their_configured_token(small_arena):
    db = small_arena.db
    sync_accounts(db, {"carol": "carol-token-1"})
    assert sign_in(db, "carol", "carol-token-1", open_signup=False).name == "carol"
    sync_accounts(db, {"carol": "carol-token-2"})
    with pytest.raises(SignInError):
        sign_in(db, "carol", "carol-token-1", open_signup=False)
    assert sign_in(db, "carol", "carol-token-2", open_signup=False).name == "carol"


def test_vote_draws_the_next_battle_in_the_same_transaction(small_arena):
    import time

    from arena import session as sessions

    db = small_arena.db
    battles = lambda: db.execute("SELECT COUNT(*) FROM battles").fetchone()[0]  # noqa: E731
    s = sessions.start(db, "alice", "token-001", open_signup=True)
    s = sessions.next_battle(db, random.Random(0), s)
    s = sessions.vote(db, s, "A", rng=random.Random(1), rules=None)
    assert s.upcoming is not None and battles() == 2
    time.sleep(0.5)  # the annotator reads the reveal
    shown = sessions.next_battle(db, random.Random(2), s)
    assert shown.battle == s.upcoming and battles() == 2  # shown, not drawn again
    voted = sessions.vote(db, shown, "B", rules=None)
    seconds, served_at, voted_at = db.execute(
        "SELECT v.seconds_to_vote, b.served_at, v.voted_at FROM votes v JOIN battles b ON b.id = v.battle_id "
        "WHERE v.id = ?", [voted.receipt.vote_id]).fetchone()
    assert seconds < 0.4 < voted_at - served_at  # time to vote counts from showing, not from drawing
    # A different suite than the one the upcoming battle was drawn for: a fresh draw.
    s = sessions.vote(db, sessions.next_battle(db, random.Random(3), voted), "tie", rng=random.Random(4), rules=None)
    before = battles()
    other = sessions.next_battle(db, random.Random(5), s, suite="commonsense")
    assert battles() == before + 1 and other.battle.suite == "commonsense"


def test_a_vote_lands_only_on_the_battle_on_screen(small_arena):
    """The page names the battle it shows; once the vote has handed out the next battle, the voted one (still on
    screen with its names) and any other token are refused and write nothing."""
    from arena import session as sessions

    db = small_arena.db
    votes = lambda: db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]  # noqa: E731
    first = sessions.next_battle(db, random.Random(0), sessions.start(db, "dora", "token-001", open_signup=True))
    with pytest.raises(VoteRejected, match="no longer on your screen"):
        sessions.vote(db, first, "A", on_screen="some-other-battle", rules=None)
    voted = sessions.vote(db, first, "A", rng=random.Random(1), on_screen=first.battle.media_token, rules=None)
    handed_out = sessions.next_battle(db, random.Random(2), voted)  # sent with the vote's answer
    assert handed_out.revealed == first.battle and handed_out.battle == voted.upcoming
    with pytest.raises(VoteRejected, match="already has your vote. Press Next battle"):
        sessions.vote(db, handed_out, "B", on_screen=first.battle.media_token, rules=None)
    assert votes() == 1
    sessions.vote(db, handed_out, "B", on_screen=handed_out.battle.media_token, rules=None)
    assert votes() == 2


@pytest.mark.parametrize("seconds_on_screen, expected", [
    (None, 10.0), (3.0, 3.0), (0.0, 0.0), (30.0, 10.0), (-1.0, 10.0), (float("inf"), 10.0), (float("nan"), 10.0),
])
def test_seconds_to_vote_counts_from_when_the_page_showed_the_battle(small_arena, seconds_on_screen, expected):
    """The page may show a battle later than the server handed it out (Next battle, in the browser): its own count
    can shorten the server's, never lengthen it, and nonsense is ignored."""
    from arena import session as sessions

    db = small_arena.db
    s = sessions.next_battle(db, random.Random(0), sessions.start(db, "erin", "token-001", open_signup=True), now=100.0)
    voted = sessions.vote(db, s, "tie", seconds_on_screen=seconds_on_screen, now=110.0, rules=None)
    assert voted.receipt.seconds_to_vote == pytest.approx(expected)


def test_a_vote_counts_even_when_no_next_battle_can_be_drawn(small_arena):
    from arena import session as sessions

    db = small_arena.db
    s = sessions.next_battle(db, random.Random(0), sessions.start(db, "bob", "token-001", open_signup=True))
    s = sessions.vote(db, s, "A", rng=random.Random(1), suite="no-such-suite", rules=None)
    assert s.upcoming is None and db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == 1


def test_prompt_pool_follows_new_images(small_arena):
    from support.arena import make_image, render_all

    from datamodel.catalog import PromptSpec, add_image, add_prompts
    from sampling.prompt_pool import PromptPool

    db, pool = small_arena.db, PromptPool()
    assert pool.eligible(db, "taxonomy") == eligible_prompts(db, "taxonomy")
    new = add_prompts(db, [PromptSpec("taxonomy", "cup.n.01", "An image of cup")]).ids[0]
    assert new not in pool.eligible(db, "taxonomy")  # no images yet
    for m, model_id in enumerate(list(small_arena.model_ids.values())[:2]):
        add_image(db, prompt_id=new, model_id=model_id, stored=small_arena.media.put_image(make_image(m, 7)))
    assert new not in pool.eligible(db, "taxonomy")  # not rendered yet: battles may not show it
    render_all(db, small_arena.media)
    assert new in pool.eligible(db, "taxonomy") and pool.eligible(db, None) == eligible_prompts(db)


@pytest.mark.parametrize("strategy", ["balanced", "active"])
def test_sessions_draw_with_the_configured_strategy_and_record_it(small_arena, strategy):
    from arena import session as sessions
    from sampling.sampler import SamplingStats

    db = small_arena.db
    sampler = sessions.Sampler(strategy, SamplingStats(), PromptPool())
    s = sessions.start(db, "carol", "token-001", open_signup=True)
    for i in range(6):
        s = sessions.next_battle(db, random.Random(i), s, sampler=sampler)
        s = sessions.vote(db, s, "A", rng=random.Random(100 + i), sampler=sampler, rules=None)
    assert {row[0] for row in db.execute("SELECT strategy FROM battles")} == {strategy}
    with pytest.raises(ValueError, match="strategy"):
        sessions.next_battle(db, random.Random(0), sessions.start(db, "carol", "token-001", open_signup=True),
                             sampler=sessions.Sampler("cleverest"))


def test_the_active_sampler_refits_outside_the_votes_write_transaction(small_arena):
    """The refit (a read and a Newton fit) must not hold SQLite's write lock: other annotators' votes wait on it."""
    from arena import session as sessions
    from sampling.sampler import SamplingStats
    from sampling.strategies import SamplingParams, fit_state

    db = small_arena.db
    seen = []

    class Watched(SamplingStats):
        def refresh(self, db, *, force=False, fit=True):
            seen.append((db.conn.in_transaction, fit))
            return super().refresh(db, force=force, fit=fit)

    stats = Watched(SamplingParams(tie_policy="half"), refresh_seconds=0.0, refit_votes=1)
    sampler = sessions.Sampler("active", stats, PromptPool())
    s = sessions.start(db, "dave", "token-001", open_signup=True)
    s = sessions.next_battle(db, random.Random(0), s, sampler=sampler)
    s = sessions.vote(db, s, "tie", rng=random.Random(1), sampler=sampler, rules=None)
    # the first refresh of the vote ran before its transaction and read the vote-less table; the draw inside the
    # transaction refreshed again (cheap: the counts only)
    assert seen[1] == (False, True)
    assert stats.state is not None and stats.params.tie_policy == "half"
    s = sessions.next_battle(db, random.Random(2), s, sampler=sampler)
    sessions.vote(db, s, "A", rng=random.Random(3), sampler=sampler, rules=None)
    stats.refresh(db, force=True)
    assert stats.tables.votes == stats.state.votes == 2
    dropped = fit_state(stats.tables.counts, params=SamplingParams(tie_policy="drop"))
    assert stats.state.fit_votes.sum() > dropped.fit_votes.sum()  # the tie entered the fit: the half policy


def test_prompt_pool_keeps_only_suites_with_battles(small_arena):
    from datamodel.sampling_reads import suites_with_battles
    from sampling.prompt_pool import PromptPool

    db, pool = small_arena.db, PromptPool()
    assert pool.suites(db) == suites_with_battles(db) and "taxonomy" in pool.suites(db)
    for made_up in ("no-such-suite", "x" * 10_000, "taxonomy "):
        assert pool.eligible(db, made_up) == []
    assert set(pool._by_suite) <= {None, *suites_with_battles(db)}  # made-up names are not kept


def test_the_pool_reads_the_catalog_when_its_change_counter_is_missing(small_arena):
    """A database without the ``catalog`` row of ``data_versions`` (deleted by hand: every migrated database has it)
    has no counter to say when the catalog changed: the pool reads the suites and prompts at every draw instead of
    keeping nothing (before, its first read compared "no counter" with "never read" and found them equal)."""
    from datamodel.sampling_reads import catalog_version, suites_with_battles

    db, pool = small_arena.db, PromptPool()
    with db.conn:
        db.execute("DELETE FROM data_versions WHERE name = 'catalog'")
    assert catalog_version(db) is None
    assert pool.suites(db) == suites_with_battles(db) and "taxonomy" in pool.suites(db)
    assert pool.eligible(db, "taxonomy") == eligible_prompts(db, "taxonomy") != []
    taxonomy = pool.eligible(db, "taxonomy")
    with db.conn:  # a catalog change no counter records
        db.execute("UPDATE images SET withheld = 'test' WHERE prompt_id = ?", [taxonomy[0]])
    assert pool.eligible(db, "taxonomy") == eligible_prompts(db, "taxonomy") == taxonomy[1:]


def test_the_pool_keeps_catalog_reads_until_the_catalog_changes(small_arena):
    """The prompt pool keeps each prompt's drawable images and other catalog reads (the reveal's model details) and
    reads them again once the catalog's change counter has moved: a withheld image is no longer drawn, a new
    description is shown."""
    from datamodel.models import model_details

    db, pool = small_arena.db, PromptPool()
    prompt = pool.eligible(db, None)[0]
    images = pool.images(db, prompt)
    assert images == db.execute("SELECT id, model_id FROM battle_images WHERE prompt_id = ? ORDER BY model_id, idx",
                                [prompt]).fetchall()
    name = next(iter(small_arena.model_ids))
    reads = []

    def details():
        reads.append(1)
        return model_details(db, [name])

    assert pool.catalog_cached(db, ("details", name), details) == pool.catalog_cached(db, ("details", name), details)
    assert len(reads) == 1  # kept
    with db.conn:
        db.execute("UPDATE images SET withheld = 'test' WHERE id = ?", [images[0][0]])
        db.execute("UPDATE models SET description = 'Paints in oils. Slowly.' WHERE name = ?", [name])
    assert pool.catalog_cached(db, ("details", name), details)[name].summary == "Paints in oils."
    assert len(reads) == 2
    pool.eligible_ids(db, None)  # a draw reads the change counter first
    assert images[0] not in pool.images(db, prompt)
    # a caller that read the counter less than max_age_s ago is answered from memory, even after a change
    with db.conn:
        db.execute("UPDATE models SET description = 'Draws.' WHERE name = ?", [name])
    assert pool.catalog_cached(db, ("details", name), details, max_age_s=60)[name].summary == "Paints in oils."
    assert pool.catalog_cached(db, ("details", name), details)[name].summary == "Draws."


def test_the_media_front_door_reads_a_battles_two_images_once(small_arena):
    from arena.web.app import BattlePairs

    class Counting:  # the database, counting what is sent to it
        def __init__(self, db):
            self.db, self.sent = db, 0

        def execute(self, sql, params=None):
            self.sent += 1
            return self.db.execute(sql, params)

    battle = _serve(small_arena)
    db, pairs = Counting(small_arena.db), BattlePairs(size=2)
    assert pairs.image(db, battle.media_token, "a") == battle.left and db.sent == 1
    assert pairs.image(db, battle.media_token, "b") == battle.right and db.sent == 1  # from memory
    assert pairs.image(db, "x" * 24, "a") is None and pairs.image(db, battle.media_token, "c") is None
    for session in ("s2", "s3"):  # two more battles push the first one out (size 2)
        other = _serve(small_arena, session=session)
        assert pairs.image(db, other.media_token, "b") == other.right
    sent = db.sent
    assert pairs.image(db, battle.media_token, "b") == battle.right and db.sent == sent + 1


def test_the_battle_drawn_with_a_vote_is_shown_as_next_battle_shows_it(small_arena):
    from arena import session as sessions

    db = small_arena.db
    s = sessions.next_battle(db, random.Random(0), sessions.start(db, "alice", "token-001", open_signup=True))
    voted = sessions.vote(db, s, "A", rng=random.Random(1), rules=None)
    assert sessions.show_upcoming(voted, now=5.0) == sessions.next_battle(db, random.Random(2), voted, now=5.0)
    with pytest.raises(ValueError):
        sessions.show_upcoming(s)  # no vote yet


def test_an_annotators_own_writes_go_on_while_another_transaction_holds_the_database(small_arena):
    """On PostgreSQL the battle served at sign-in, the stay-signed-in token, the guidelines' first sight and the
    sign-out hold the annotator's lock only: a whole-database write transaction (a sign-up checking one account per
    name) does not hold them up; a sign-up waits for it. SQLite has one writer at a time: nothing to show there."""
    from arena import session as sessions
    from datamodel.annotators import first_guidelines_visit
    from datamodel.dialect import is_postgres

    db = small_arena.db
    if not is_postgres(db):
        pytest.skip("SQLite serialises every write transaction")
    s = sessions.start(db, "alice", "token-001", open_signup=True)
    other = connect(small_arena.settings.database, migrate_schema=False)
    done = {}

    def own_writes():
        shown = sessions.next_battle(db, random.Random(0), s)
        first_guidelines_visit(db, s.annotator.id)
        sessions.issue_resume(db, shown, days=1)
        sessions.sign_out(db, shown)
        done["own"] = True

    try:
        with other.conn:  # the whole database's turn, held
            worker = threading.Thread(target=own_writes)
            worker.start()
            worker.join(timeout=20)
            assert done.get("own"), "the annotator's own writes waited for another annotator's transaction"
            signing_up = threading.Thread(target=lambda: done.update(up=sign_in(db, "bob", "token-002",
                                                                                open_signup=True)))
            signing_up.start()
            signing_up.join(timeout=1.0)
            assert "up" not in done  # a sign-up takes the whole database's turn
        signing_up.join(timeout=20)
        assert done["up"].name == "bob"
    finally:
        other.close()


def test_publishing_the_voted_images_marks_and_withholds_them_on_either_engine(small_arena):
    """An export with the models' names (the Hugging Face one) records the images of the votes it holds as published
    and withholds them from battles: on PostgreSQL as on SQLite (its statements once used SQLite's ``:name``
    parameters, which PostgreSQL's connection refuses)."""
    from datamodel.catalog import publish_images

    db = small_arena.db
    battle = _serve(small_arena)
    receipt = record_vote(db, battle.id, "A", session_id="s1")
    shown = {battle.left.image_id, battle.right.image_id}
    assert publish_images(db, receipt.vote_id, now=1000.0) == 2
    rows = db.execute("SELECT id, published_at, withheld FROM images WHERE published_at IS NOT NULL").fetchall()
    assert {row[0] for row in rows} == shown
    assert all(row[1] == 1000.0 and row[2] == "published" for row in rows)
    assert publish_images(db, receipt.vote_id) == 0  # already withheld: nothing new
