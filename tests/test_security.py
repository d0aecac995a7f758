"""Abuse of the vote handler, the importers and the admin API: refused cleanly, nothing partial written."""

import io
import json
import random
import string

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from support.arena import build_small_arena, make_image
from support.webapp import running_app

from arena.importer import ImageImportError, import_images
from datamodel.connection import connect
from datamodel.media import MediaStore
from datamodel.votes import VoteRejected, record_vote

FAST = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@FAST
@given(battle_id=st.one_of(st.text(max_size=40), st.none(), st.integers()),
       outcome=st.one_of(st.text(max_size=10), st.none()),
       session=st.text(max_size=30))
def test_vote_handler_never_crashes_or_writes_on_bad_input(tmp_path_factory, battle_id, outcome, session):
    arena = _ARENA.get("x") or _ARENA.setdefault("x", build_small_arena(tmp_path_factory.mktemp("v")))
    before = arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]
    try:
        record_vote(arena.db, battle_id, outcome, session_id=session)
    except VoteRejected:
        pass
    else:  # only a battle of that session with a real outcome may be voted on; none was served to these ids
        raise AssertionError("a vote was accepted for a battle nobody served")
    assert arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] == before


_ARENA: dict = {}

ROW = st.fixed_dictionaries({}, optional={
    "key": st.one_of(st.text(alphabet=string.ascii_letters + "/.<>\\ \n", max_size=8), st.integers()),
    "text": st.one_of(st.text(max_size=20), st.none(), st.lists(st.integers(), max_size=2)),
    "metadata": st.one_of(st.text(max_size=10), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)),
})


def _png(seed: int) -> bytes:
    buffer = io.BytesIO()
    make_image(seed % 7, seed).save(buffer, format="PNG")
    return buffer.getvalue()


KEY = st.text(alphabet=string.ascii_letters + "_-", min_size=1, max_size=6)


@FAST
@given(images=st.lists(st.tuples(KEY, st.booleans()), max_size=3), data=st.data())
def test_importer_is_all_or_nothing_on_arbitrary_input(tmp_path_factory, images, data):
    """Arbitrary prompt rows (some matching the image keys, some not) and real or fake images: the import either
    writes every image with its prompt and media file, or raises ImageImportError having written nothing at all."""
    root = tmp_path_factory.mktemp("imp")
    written = dict(images)  # {key: real}; a key listed twice is one file, the last write
    keys = sorted(written)
    texts = data.draw(st.lists(st.text(min_size=1, max_size=20), min_size=len(keys), max_size=len(keys)))
    rows = [{"key": key, "text": text} for key, text in zip(keys, texts)]  # a valid row per image key
    rows = data.draw(st.permutations(rows[data.draw(st.integers(0, 1)):]), label="rows")  # maybe one key missing
    if data.draw(st.booleans(), label="add junk"):
        rows += data.draw(st.lists(st.one_of(ROW, st.text(max_size=15)), min_size=1, max_size=2), label="junk rows")
    (root / "prompts.jsonl").write_text("\n".join(json.dumps(r) if isinstance(r, dict) else r for r in rows))
    (root / "imgs" / "model").mkdir(parents=True)
    for n, (key, real) in enumerate(images):
        (root / "imgs" / "model" / f"{key}.png").write_bytes(_png(n) if real else b"\x89PNG not really")
    db = connect(root / "a.db")
    media = root / "media"
    try:
        result = import_images(db, MediaStore(media), root / "imgs", root / "prompts.jsonl")
    except ImageImportError:
        counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("prompts", "models", "images")]
        assert counts == [0, 0, 0]
        assert not media.exists() or not any(p.is_file() for p in media.rglob("*"))
    else:
        files = set(written)
        assert all(written.values())  # a fake image is never imported
        assert result.images == len(files) == db.execute("SELECT COUNT(*) FROM images").fetchone()[0]
        stored = db.execute("SELECT p.item_key, i.media_hash, i.media_ext FROM images i "
                            "JOIN prompts p ON p.id = i.prompt_id").fetchall()
        assert {key for key, _, _ in stored} == files  # each image under the prompt of its file's key
        assert all(MediaStore(media).path(h, ext).is_file() for _, h, ext in stored)
    finally:
        db.close()


def test_admin_endpoints_refuse_calls_without_the_password(tmp_path):
    import asyncio

    from tools.load import GradioSession, LoadError

    arena = build_small_arena(tmp_path, admin_password="correct horse")

    async def attack(url, admin_ids):
        outcomes = []
        async with httpx.AsyncClient(timeout=20) as client:
            for fn_index, inputs, name in admin_ids:
                for password in ("", "wrong", None):
                    session = GradioSession(client, url, {"admin": (fn_index, True)})
                    try:
                        outcomes.append((name, await session.call("admin", [password, None, 1, password][:inputs])))
                    except LoadError as error:
                        outcomes.append((name, str(error)))
        return outcomes

    with running_app(arena.settings) as url:
        config = httpx.get(url + "config").json()
        admin_ids = [(d["id"], len(d["inputs"]), d["api_name"]) for d in config["dependencies"]
                     if (d.get("api_name") or "").startswith("admin_")]
        # unlock, include, exclude, four exports (CSV, JSONL, Parquet, four-image), all of an annotator's (or a rule's)
        assert len(admin_ids) == 9
        outcomes = asyncio.run(attack(url, admin_ids))
        assert all(isinstance(o, str) for _, o in outcomes), outcomes  # every call failed...
        # ...because of the password (unlock), or because the page holds no admin session (every other function:
        # only unlock takes the password, tests/test_security_review.py); a page the server holds no session for is
        # refused at the front door before that (409)
        assert all(("Wrong admin password" in o) if name == "admin_unlock" else
                   ("Unlock the admin tab first" in o or "answered 409" in o) for name, o in outcomes), outcomes


def test_an_admin_export_cannot_be_fetched_without_the_password(tmp_path, monkeypatch):
    """The export file, its folders and made-up names beside it are not served, even while the file exists; the
    admin's page gets a one-time link, which serves the file once (tests/test_security_review.py)."""
    import asyncio
    import re
    import time

    from support.webapp import page_session

    from arena import session as sessions
    from arena.web import admin_tab

    arena = build_small_arena(tmp_path, admin_password="correct horse")
    s = sessions.start(arena.db, "voter", "token-001", open_signup=True)
    for i in range(3):
        s = sessions.vote(arena.db, sessions.next_battle(arena.db, random.Random(i), s), "A")
    probes, paths = [], []

    def probe(path):
        made_up = path.parent / f"votes-{time.strftime('%Y%m%d')}-000000.csv"
        for guess in (f"gradio_api/file={path}", f"gradio_api/file={path.parent}", f"gradio_api/file={made_up}",
                      f"gradio_api/file={tmp_path / 'cache' / 'exports' / path.name}",
                      f"gradio_api/file={path.parent.parent}", f"admin-export/{path.stem}",
                      f"admin-export/{path.name}", "admin-export/" + "A" * 43):
            response = httpx.get(url + guess)
            probes.append((guess, response.status_code, b"vote_id" in response.content))

    def export_and_probe(db, path, fmt, **kwargs):
        rows = export_votes(db, path, fmt, **kwargs)
        assert path.read_text().count("\n") == 4  # a real export: header and 3 votes
        paths.append(path)
        probe(path)
        return rows

    export_votes = admin_tab.export_votes
    monkeypatch.setattr(admin_tab, "export_votes", export_and_probe)

    async def export():
        async with page_session(url) as session:
            await session.call("admin_unlock", ["correct horse", None])
            return await session.call("admin_export_csv", [None]), session.cookie

    with running_app(arena.settings) as url:
        (answer,), cookie = asyncio.run(export())
        probe(paths[0])  # after the answer, while the file waits for its download
        (link,) = re.findall(r'href="(admin-export/[A-Za-z0-9_-]{43})"', str(answer))
        downloaded = httpx.get(url + link, headers={"Cookie": cookie})  # the admin's browser
        after = httpx.get(url + link, headers={"Cookie": cookie})
    assert len(probes) == 16 and all(status in (403, 404) and not leaked for _, status, leaked in probes), probes
    assert downloaded.status_code == 200 and downloaded.text.count("\n") == 4
    assert after.status_code == 404 and not paths[0].exists()
    assert "3 votes" in str(answer) and "vote_id" not in str(answer)  # a link, not the votes


def test_the_load_check_compares_receipt_ids_with_the_stored_votes():
    from tools.load import LoadReport, check_receipts

    report = LoadReport(annotators=2, seconds=1.0, acknowledged=["a", "b", "a"], vote_ids=[1, 2, 3])
    assert check_receipts(report, {1: "a", 2: "b", 3: "a"}) == []
    lost = check_receipts(report, {1: "a", 3: "a"})
    assert lost == ["1 acknowledged votes are not in the database: #2"]
    assert check_receipts(report, {1: "a", 2: "a", 3: "a"}) == [
        "1 votes are stored under another voter than the receipt's: #2 b vs a"]
    extra = {1: "a", 2: "b", 3: "a", 4: "b"}
    assert check_receipts(report, extra) == [
        "1 stored votes were never acknowledged, but only 0 vote requests failed: #4"]
    report.unanswered_votes = 1  # the client lost the answer to one vote: the server may have stored it
    assert check_receipts(report, extra) == []
    twice = LoadReport(annotators=1, seconds=1.0, acknowledged=["a", "a"], vote_ids=[1, 1])
    assert check_receipts(twice, {1: "a"}) == ["receipt #1 was acknowledged twice (a, a)"]


JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5,
)
SUITE_VALUE = st.one_of(st.sampled_from(["All suites", "taxonomy", "commonsense"]), JSON_VALUE)
REFUSALS = ("Unknown suite", "already has your vote", "No battle", "no longer on your screen")


@pytest.fixture(scope="module")
def web_arena(tmp_path_factory):
    arena = build_small_arena(tmp_path_factory.mktemp("web"), rate_limit_client_per_minute=0,
                              rate_limit_annotator_per_minute=0, rate_limit_skips_per_minute=0,
                              rate_limit_pages_per_minute=0)
    with running_app(arena.settings) as url:
        yield arena, url


@pytest.mark.slow  # sixty examples, each several HTTP calls to the app
@FAST
@given(state=JSON_VALUE, load=st.tuples(SUITE_VALUE, JSON_VALUE), vote=st.tuples(
    st.sampled_from(["vote_a", "vote_b", "vote_tie", "vote_both_bad"]), SUITE_VALUE, JSON_VALUE,
    st.one_of(JSON_VALUE, st.just("on-screen"), st.sampled_from(["@", "@-1", "@nan", "@1e400", "@0.5"]).map(
        lambda suffix: "on-screen" + suffix))))
def test_the_web_vote_handler_takes_arbitrary_input_without_crashing_or_partial_writes(web_arena, state, load, vote):
    """Arbitrary JSON in every input of the page's battle and vote events, sent as the page sends them (these
    events skip Gradio's input checks): each call is answered or refused with a message, the browser cannot put
    anything into the server-held session, and a vote is written whole or not at all."""
    import asyncio

    from support.webapp import page_session

    from tools.load import LoadError, shown_token

    arena, url = web_arena
    before = arena.db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]

    async def drive() -> tuple[list, list]:
        answered, refused = [], []

        async def call(api_name, inputs):
            try:
                outputs = await session.call(api_name, inputs)
            except LoadError as error:
                refused.append(str(error))
                return None
            answered.append((api_name, outputs))
            return outputs

        async with page_session(url) as session:
            shown = await session.call("sign_in", [f"prop-{session.session_hash}", "token-001", None, "All suites",
                                                   False])
            shown = await call("next_battle", [state, *load]) or shown
            api_name, suite, expected, screen = vote
            if isinstance(screen, str) and screen.startswith("on-screen"):  # the token the page shows
                screen = screen.replace("on-screen", shown_token(shown))
            await call(api_name, [state, suite, expected, screen])
        return answered, refused

    answered, refused = asyncio.run(drive())
    for api_name, _ in answered:
        event(f"{api_name} answered")
    for message in refused:
        event("refused: " + next((reason for reason in REFUSALS if reason in message), "other"))
    assert all(any(reason in message for reason in REFUSALS) for message in refused), refused
    votes = [outputs for api_name, outputs in answered if api_name.startswith("vote")]
    assert all(len(outputs) == (6 if api_name.startswith("vote") else 8) for api_name, outputs in answered)
    # a vote is revealed ("Your vote: ..."), or refused with the server's message on the status line (the page shows
    # a refusal inline instead of raising)
    assert all("Your vote" in str(outputs[4]) or "⚠" in str(outputs) for outputs in votes)
    rows = arena.db.execute(
        "SELECT v.outcome, b.id IS NOT NULL, v.seconds_to_vote FROM votes v LEFT JOIN battles b ON b.id = v.battle_id "
        "WHERE v.id > ? ORDER BY v.id", [before]).fetchall()
    revealed = [outputs for outputs in votes if "Your vote" in str(outputs[4])]
    assert len(rows) == len(revealed)  # one row per acknowledged vote, none for a refused one (shown inline)
    assert all(has_battle and 0 <= seconds < 3600 for _, has_battle, seconds in rows)
    if revealed:  # a vote refused inline (e.g. a token no longer on screen: '0') writes no row to compare
        expected_outcome = {"vote_a": "A", "vote_b": "B", "vote_tie": "tie", "vote_both_bad": "both_bad"}[vote[0]]
        assert rows[0][0] == expected_outcome
