"""The judge engine against a local OpenAI-compatible server: cache, retries, timeouts, concurrency, secrets, stop."""

import asyncio
import logging
import time

import pytest
from PIL import Image
from support.openai_stub import engine_config

from datamodel import judge_requests as cache
from datamodel.connection import connect
from judges.client import Engine, EngineConfig, JudgeConfigError
from judges.request import ChatRequest, ImageInput
from tools.fake_openai import FakeServer, Scripted

SECRET = "sk-test-DO-NOT-LEAK-0123456789"


@pytest.fixture
def db():
    database = connect(":memory:")
    yield database
    database.close()


def request(text="Is this a coin?", color=(200, 10, 10)) -> ChatRequest:
    return ChatRequest((text, ImageInput.from_pil(Image.new("RGB", (8, 8), color))), max_tokens=10)


def ask(db, config, *requests, env=None, dry_run=False):
    async def go():
        async with Engine(db, config, env=env or {}, dry_run=dry_run) as engine:
            replies = await asyncio.gather(*(engine.ask(r) for r in requests))
            return replies, engine.stats
    return asyncio.run(go())


def test_answers_are_cached_with_usage_and_cost_and_a_rerun_sends_nothing(db):
    with FakeServer(lambda r: Scripted("1", prompt_tokens=1000, completion_tokens=2)) as server:
        config = engine_config(server)
        (first,), stats = ask(db, config, request())
        assert (first.status, first.text, first.cached, stats.sent) == ("ok", "1", False, 1)
        (again,), stats = ask(db, config, request())
        assert (again.text, again.cached, stats.sent, stats.cached) == ("1", True, 0, 1)
        assert len(server.received) == 1
    row = db.execute("SELECT prompt_tokens, completion_tokens, total_tokens, cost_usd, request "
                     "FROM judge_requests").fetchone()
    assert row[:3] == (1000, 2, 1002)
    assert row[3] == pytest.approx((1000 * 0.15 + 2 * 0.60) / 1e6)
    assert "base64" not in row[4] and ImageInput.from_pil(Image.new("RGB", (8, 8), (200, 10, 10))).sha256 in row[4]
    assert cache.usage(db)["requests"] == 1


def test_429_and_5xx_are_retried_and_retry_after_is_honoured(db):
    def respond(received):
        return [Scripted(status=429, headers={"retry-after": "0.3"}), Scripted(status=503), Scripted("0")][
            min(received.attempt, 2)]

    with FakeServer(respond) as server:
        (reply,), stats = ask(db, engine_config(server, retry_max_s=1.0), request())
        times = [r.at for r in server.received]
    assert (reply.status, reply.text, reply.attempts, stats.retries) == ("ok", "0", 3, 2)
    assert times[1] - times[0] >= 0.28  # waited for Retry-After, not the 0.01 s backoff


def test_timeouts_are_retried(db):
    def respond(received):
        return Scripted("1", delay=1.0) if received.attempt == 0 else Scripted("1")

    with FakeServer(respond) as server:
        started = time.monotonic()
        (reply,), stats = ask(db, engine_config(server, timeout_s=0.2), request())
        assert time.monotonic() - started < 0.9
        assert len(server.received) == 2
    assert (reply.status, stats.retries) == ("ok", 1)


def test_an_error_after_the_last_retry_is_reported_and_not_cached(db):
    with FakeServer(lambda r: Scripted("overloaded", status=500)) as server:
        (reply,), stats = ask(db, engine_config(server, max_retries=2), request())
        assert len(server.received) == 3
    assert reply.status == "error"
    assert reply.reason.startswith("API error after 3 attempts: InternalServerError")
    assert (stats.failed, stats.sent) == (1, 0)
    assert db.execute("SELECT COUNT(*) FROM judge_requests").fetchone()[0] == 0


def test_client_errors_are_not_retried(db):
    with FakeServer(lambda r: Scripted("bad request", status=400)) as server:
        (reply,), _ = ask(db, engine_config(server), request())
        assert len(server.received) == 1
    assert reply.reason.startswith("API error after 1 attempt: BadRequestError")


def test_a_reply_that_is_not_a_chat_completion_is_an_error_and_not_cached(db):
    with FakeServer(lambda r: Scripted(raw_body={"object": "list", "data": []})) as server:
        (reply,), stats = ask(db, engine_config(server), request())
    assert reply.status == "error" and reply.reason.startswith("the API's answer is not a chat completion")
    assert db.execute("SELECT COUNT(*) FROM judge_requests").fetchone()[0] == 0


def test_at_most_concurrency_requests_are_in_flight(db):
    with FakeServer(lambda r: Scripted("1"), latency=0.15) as server:
        requests = [request(f"question {i}") for i in range(9)]
        started = time.monotonic()
        replies, stats = ask(db, engine_config(server, concurrency=3), *requests)
        wall = time.monotonic() - started
        arrivals = sorted(r.at for r in server.received)
    assert stats.sent == 9 and all(r.ok for r in replies)
    assert wall >= 3 * 0.15
    assert all(arrivals[i + 3] - arrivals[i] >= 0.12 for i in range(len(arrivals) - 3))


def test_identical_requests_in_flight_are_sent_once(db):
    with FakeServer(lambda r: Scripted("1"), latency=0.1) as server:
        replies, stats = ask(db, engine_config(server), *[request() for _ in range(5)])
        assert len(server.received) == 1
    assert [r.text for r in replies] == ["1"] * 5
    assert (stats.sent, stats.cached) == (1, 4)


def test_the_api_key_is_sent_but_never_stored_or_logged(db, caplog):
    def respond(received):
        if received.attempt == 0:  # a server that echoes the key in its error message
            return Scripted(f"invalid header {received.headers.get('authorization')}", status=500)
        return Scripted(f"ok {received.headers.get('authorization')}"[:2])

    caplog.set_level(logging.DEBUG)
    with FakeServer(respond) as server:
        (reply,), _ = ask(db, engine_config(server, max_retries=1), request(), env={"OPENAI_API_KEY": SECRET})
        assert server.received[0].headers["authorization"] == f"Bearer {SECRET}"
    with FakeServer(lambda r: Scripted(f"invalid header {r.headers.get('authorization')}", status=401)) as server:
        (failed,), _ = ask(db, engine_config(server), request("other"), env={"OPENAI_API_KEY": SECRET})
    assert reply.ok and failed.status == "error" and "***" in failed.reason
    dump = "\n".join(db.conn.iterdump())
    assert SECRET not in dump and SECRET not in caplog.text and SECRET not in failed.reason


def test_api_openai_com_without_a_key_says_what_to_do(db):
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY is not set. Export it"):
        Engine(db, EngineConfig(base_url=""), env={})


def test_stop_lets_requests_in_flight_finish_and_sends_nothing_new(db):
    with FakeServer(lambda r: Scripted("1"), latency=0.3) as server:
        async def go():
            async with Engine(db, engine_config(server, concurrency=2), env={}) as engine:
                tasks = [asyncio.ensure_future(engine.ask(request(f"q{i}"))) for i in range(6)]
                await asyncio.sleep(0.15)
                engine.stop()
                return await asyncio.gather(*tasks)
        replies = asyncio.run(go())
        assert len(server.received) == 2
    assert [r.status for r in replies] == ["ok", "ok", "stopped", "stopped", "stopped", "stopped"]
    assert db.execute("SELECT COUNT(*) FROM judge_requests").fetchone()[0] == 2


def test_dry_run_counts_uncached_requests_and_their_cost(db):
    with FakeServer(lambda r: Scripted("1")) as server:
        config = engine_config(server)
        ask(db, config, request("cached"))
        replies, stats = ask(db, config, request("cached"), request("new 1"), request("new 2"), request("new 2"),
                             dry_run=True)
        assert len(server.received) == 1
    assert [r.status for r in replies] == ["ok", "dry_run", "dry_run", "dry_run"]
    assert (stats.planned, stats.cached) == (2, 1)
    assert stats.planned_cost_usd > 0


def test_retry_delay_doubles_up_to_the_cap_with_jitter_and_honours_a_longer_retry_after():
    import random

    from judges.client import retry_delay

    class Fixed(random.Random):
        def __init__(self, u):
            super().__init__(0)
            self.u = u

        def random(self):
            return self.u

    assert [retry_delay(n, 1.0, 5.0, Fixed(0.0)) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 2.5, 2.5]
    assert [retry_delay(n, 1.0, 5.0, Fixed(0.999)) for n in (1, 2, 3)] == pytest.approx([0.9995, 1.999, 3.998])
    assert retry_delay(1, 1.0, 5.0, Fixed(0.0), retry_after=3.0) == 3.0  # longer than the backoff: honoured
    assert retry_delay(3, 1.0, 5.0, Fixed(0.0), retry_after=0.5) == 2.0  # shorter: the backoff wins
    assert retry_delay(1, 1.0, 5.0, Fixed(0.0), retry_after=60.0) == 5.0  # never past the cap


def test_the_engine_waits_the_backoff_between_retries(db):
    import random

    waits = []

    async def wait(seconds):  # injected: record the delay instead of sleeping
        waits.append(seconds)
        return False

    def respond(received):
        return Scripted(status=503) if received.attempt < 5 else Scripted("1")

    with FakeServer(respond) as server:
        config = engine_config(server, retry_base_s=1.0, retry_max_s=5.0, max_retries=5)

        async def go():
            async with Engine(db, config, env={}, rng=random.Random(7), wait=wait) as engine:
                return await engine.ask(request())

        started = time.monotonic()
        reply = asyncio.run(go())
        assert time.monotonic() - started < 5  # 1 + 2 + 4 + 5 + 5 s of backoff were not slept
    assert (reply.status, reply.attempts) == ("ok", 6)
    jitter = random.Random(7)
    expected = [min(5.0, 2 ** k) * (0.5 + 0.5 * jitter.random()) for k in range(5)]
    assert waits == pytest.approx(expected)
    factors = [w / min(5.0, 2 ** k) for k, w in enumerate(waits)]
    assert all(0.5 <= f < 1.0 for f in factors) and len(set(factors)) == 5  # jittered, never the same factor
    assert waits[0] < waits[1] < waits[2]  # exponential growth (1, 2, 4 nominal) beats the jitter here


def test_stop_during_a_backoff_wait_answers_stopped(db):
    async def wait(seconds):
        return True  # the run was stopped while waiting

    with FakeServer(lambda r: Scripted(status=503)) as server:
        async def go():
            async with Engine(db, engine_config(server), env={}, wait=wait) as engine:
                return await engine.ask(request()), engine.stats

        reply, stats = asyncio.run(go())
        assert len(server.received) == 1
    assert reply.status == "stopped" and reply.reason.startswith("run stopped while waiting to retry")
    assert stats.stopped == 1
