"""What app replicas share through the database (datamodel.limits, datamodel.admin_state), on both engines, with two
connections standing for two replicas."""

from __future__ import annotations

import threading

import pytest

from datamodel import admin_state
from datamodel.connection import connect
from datamodel.limits import (
    attempt_state,
    begin_attempts,
    end_attempts,
    rate_hit,
    sweep_attempts,
    sweep_rate_events,
    throttle_transaction,
)

pytestmark = pytest.mark.both_engines


@pytest.fixture
def replicas(database_url):
    connections = [connect(database_url) for _ in range(2)]
    yield connections
    for db in connections:
        db.close()


def test_a_rate_limit_counts_every_replicas_requests_in_its_window(replicas):
    first, second = replicas
    assert [rate_hit(replicas[k % 2], "votes per annotator", "ann", now=100.0 + k, window=60.0, limit=3)
            for k in range(4)] == [0.0, 0.0, 0.0, 57.0]  # the fourth in a minute waits until the first leaves
    assert rate_hit(second, "votes per annotator", "ben", now=104.0, window=60.0, limit=3) == 0.0  # its own count
    assert rate_hit(first, "votes from one address", "ann", now=104.0, window=60.0, limit=3) == 0.0  # another limit
    assert rate_hit(second, "votes per annotator", "ann", now=160.5, window=60.0, limit=3) == 0.0  # 100 has left
    assert sweep_rate_events(first, before=1000.0) == 5


def test_concurrent_requests_of_one_key_on_two_replicas_pass_the_limit_exactly(database_url):
    connect(database_url).close()  # the schema, before the replicas
    passed = []

    def client(k: int) -> None:
        db = connect(database_url, migrate_schema=False)
        try:
            for step in range(10):
                if rate_hit(db, "votes per annotator", "ann", now=1000.0 + step / 100, window=60.0, limit=12) == 0:
                    passed.append(k)
        finally:
            db.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(passed) == 12


def test_sign_in_attempts_are_counted_across_replicas(replicas):
    first, second = replicas
    with throttle_transaction(first, "sign-ins"):
        assert attempt_state(first, "sign-ins", ["1.2.3.4", "*"], now=10.0, window=900.0) == {
            "1.2.3.4": (0, None, 0), "*": (0, None, 0)}
        ids = begin_attempts(first, "sign-ins", ["1.2.3.4", "*"], now=10.0)
    with throttle_transaction(second, "sign-ins"):  # another replica sees the attempt in flight
        assert attempt_state(second, "sign-ins", ["1.2.3.4"], now=11.0, window=900.0) == {"1.2.3.4": (0, None, 1)}
        late = begin_attempts(second, "sign-ins", ["1.2.3.4"], now=11.0)
    end_attempts(first, ids, failed=True, now=12.0)
    end_attempts(second, late, failed=False, now=13.0)  # a success counts nothing
    assert attempt_state(second, "sign-ins", ["1.2.3.4", "*"], now=14.0, window=900.0) == {
        "1.2.3.4": (1, 12.0, 0), "*": (1, 12.0, 0)}
    assert attempt_state(first, "admin sign-ins", ["1.2.3.4"], now=14.0, window=900.0) == {"1.2.3.4": (0, None, 0)}
    assert attempt_state(first, "sign-ins", ["1.2.3.4"], now=913.0, window=900.0) == {"1.2.3.4": (0, None, 0)}
    stale = begin_attempts(first, "sign-ins", ["5.6.7.8"], now=20.0)  # its replica dies: it stops counting later
    assert attempt_state(second, "sign-ins", ["5.6.7.8"], now=81.0, window=900.0) == {"5.6.7.8": (0, None, 0)}
    assert stale and sweep_attempts(first, before=1000.0) == 3


def test_admin_sessions_and_export_links_hold_across_replicas(replicas):
    first, second = replicas
    admin_state.open_session(first, "session-1", client="10.0.0.1", browser="cookie", now=0.0)
    assert admin_state.session_live(second, "session-1", client="10.0.0.1", browser="cookie", now=5.0, idle_s=60.0)
    assert not admin_state.session_live(second, "session-1", client="10.0.0.1", browser="other", now=5.0, idle_s=60.0)
    assert not admin_state.session_live(second, "session-2", client="10.0.0.1", browser="cookie", now=5.0, idle_s=60.0)
    assert admin_state.put_offer(first, "link-1", session_id="session-1", client="10.0.0.1", browser="cookie",
                                 path="/tmp/votes.csv", name="votes.csv", media_type="text/csv", expires_at=600.0)
    assert admin_state.claim_offer(second, "link-1", client="10.0.0.9", browser=None, now=10.0) is None  # not theirs
    assert admin_state.claim_offer(second, "link-1", client="10.0.0.1", browser="cookie", now=10.0) == (
        "/tmp/votes.csv", "votes.csv", "text/csv")
    assert admin_state.claim_offer(first, "link-1", client="10.0.0.1", browser="cookie", now=11.0) is None  # once
    admin_state.put_offer(first, "link-2", session_id="session-1", client="10.0.0.1", browser="cookie",
                          path="/tmp/votes.parquet", name="votes.parquet", media_type="application/octet-stream",
                          expires_at=600.0)
    # idle beyond the limit (the last use was at 5 s): the session ends on every replica, its offer is withdrawn
    assert admin_state.end_idle_sessions(second, now=70.0, idle_s=60.0) == ["/tmp/votes.parquet"]
    assert not admin_state.session_live(first, "session-1", client="10.0.0.1", browser="cookie", now=70.0, idle_s=60.0)
    assert not admin_state.put_offer(first, "link-3", session_id="session-1", client="10.0.0.1", browser="cookie",
                                     path="/tmp/x", name="x", media_type="text/csv", expires_at=600.0)


def test_the_login_throttle_holds_across_replicas(database_url):
    """The throttle's rules (back-off per address, one guess each past the overall limit, attempts in flight) with
    each attempt on the other of two replicas: as on one server."""
    from arena.ratelimit import LoginThrottle, RateLimited
    from datamodel.connection import Store

    connect(database_url).close()
    now = [0.0]
    replicas = [LoginThrottle("sign-ins", max_failures=3, max_failures_overall=5, window_s=900, lockout_s=30,
                              clock=lambda: now[0], store=Store(database_url)) for _ in range(2)]
    for k in range(3):
        replicas[k % 2].attempt("a").failed()
    for replica in replicas:
        with pytest.raises(RateLimited, match=r"Too many failed sign-ins from your address\. Wait 30 s"):
            replica.attempt("a")
    replicas[1].attempt("b").succeeded()  # another address may go on, and a success is not a failure
    now[0] = 31.0
    replicas[0].attempt("a").failed()  # a fourth failure: the wait doubles, on the other replica too
    with pytest.raises(RateLimited, match="Wait 60 s"):
        replicas[1].attempt("a")
    now[0] = 92.0
    replicas[1].attempt("a").failed()  # the fifth failure on the servers: from now on one guess per address
    replicas[0].attempt("c").failed()  # a fresh address still has its one guess ...
    with pytest.raises(RateLimited, match=r"from your address\. Wait 30 s"):
        replicas[1].attempt("c")  # ... and then waits, on the other replica too
    now[0] = 92.0 + 901.0  # the window has passed: everything is forgotten
    replicas[0].attempt("a").succeeded()
    # attempts in flight on one replica count on the other
    replicas[1].attempt("d").failed()
    pending = [replicas[0].attempt("d"), replicas[1].attempt("d")]
    with pytest.raises(RateLimited, match="being checked right now"):
        replicas[0].attempt("d")
    for attempt in pending:
        attempt.succeeded()
    replicas[1].attempt("d").succeeded()
    # a burst at one account is held across replicas; another name from that address passes (people arriving)
    burst = [replicas[k % 2].attempt("e", account="alice") for k in range(3)]
    with pytest.raises(RateLimited, match="at this account"):
        replicas[1].attempt("e", account="Alice ")
    replicas[1].attempt("e", account="bob").succeeded()
    for attempt in burst:
        attempt.succeeded()


def test_admin_sessions_and_export_links_of_the_app_hold_across_replicas(database_url, tmp_path):
    """The app's AdminSessions attached to the database: a session opened on one replica is live on the other for its
    holder only and kept alive by a call on either; an export link works once, for its holder, on the replica holding
    its file; idleness ends the session and its links on both; a replica stopping ends the sessions it opened."""
    from arena.web.admin_session import AdminSessions, Holder, SessionEnded
    from datamodel.connection import Store

    connect(database_url).close()
    now = [1000.0]
    replicas = []
    for _ in range(2):
        admins = AdminSessions(idle_s=100, clock=lambda: now[0], offer_s=60)
        admins.attach(Store(database_url))
        replicas.append(admins)
    first, second = replicas
    admin, other = Holder("10.0.0.1", "cookie"), Holder("10.0.0.1", "another cookie")
    session_id = first.open(admin)
    assert second.live(session_id, admin) and not second.live(session_id, other)
    assert not second.live("made-up", admin)

    def export(replica) -> object:
        with replica.offer(session_id, ".csv", name="v.csv", media_type="text/csv", holder=admin) as offer:
            offer.path.write_text("vote_id\n")
        return offer

    offer = export(second)  # the session was opened on the first replica
    assert first.claim(offer.token, admin) is None  # the file is on the second: nothing here, and the link is used
    offer = export(second)
    assert second.claim(offer.token, other) is None  # another browser uses nothing up
    claimed = second.claim(offer.token, admin)
    assert claimed is not None and claimed.path.read_text() == "vote_id\n"
    assert second.claim(offer.token, admin) is None  # once
    now[0] += 90
    assert first.live(session_id, admin)  # kept alive on the first: the second's clock of it moves too
    now[0] += 90
    assert second.live(session_id, admin, touch=False)
    waiting = export(second)
    now[0] += 101  # idle on both: the session ends, and its link and file with it
    assert not first.live(session_id, admin) and not second.live(session_id, admin)
    assert second.claim(waiting.token, admin) is None and not waiting.path.exists()
    with pytest.raises(SessionEnded):
        export(second)
    kept = first.open(admin)
    first.close()  # the first replica stops: the sessions it opened end everywhere
    assert not second.live(kept, admin)
    second.close()
