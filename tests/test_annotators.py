"""Annotator accounts: closed accounts, token length, answers that do not tell names apart, look-alike names."""

import hashlib
import statistics
import time

import pytest

import datamodel.annotators as annotators
from core.settings import Settings, SettingsError
from datamodel.annotators import SignInError, sign_in, sync_accounts
from datamodel.connection import connect

pytestmark = pytest.mark.both_engines

TOKEN = "alice-token-1"


def _count(db, table="annotators") -> int:
    return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


# --- finding 2: with configured accounts, only they sign in -----------------------------------------------------------

def test_configured_accounts_refuse_an_account_made_by_open_sign_up(db):
    mallory = sign_in(db, "mallory", "mallory-token", open_signup=True)  # while the arena was open
    sync_accounts(db, {"alice": TOKEN})  # then the admin configured accounts
    with pytest.raises(SignInError, match=r"open sign-up.*[Aa]sk the arena's admin for an account"):
        sign_in(db, "mallory", "mallory-token", open_signup=False)
    assert sign_in(db, "alice", TOKEN, open_signup=False).name == "alice"
    assert sign_in(db, "mallory", "mallory-token", open_signup=True).id == mallory.id  # open again: it is back


def test_an_account_removed_from_the_configuration_no_longer_signs_in(db):
    sync_accounts(db, {"alice": TOKEN, "bob": "bob-token-1"})
    sync_accounts(db, {"alice": TOKEN})  # the admin removed bob
    with pytest.raises(SignInError, match="[Aa]sk the arena's admin"):
        sign_in(db, "bob", "bob-token-1", open_signup=False)
    sync_accounts(db, {"alice": TOKEN, "bob": "bob-token-1"})  # and put him back
    assert sign_in(db, "bob", "bob-token-1", open_signup=False).name == "bob"


# --- finding 4: token length ------------------------------------------------------------------------------------------

def test_a_four_character_token_is_refused_for_a_new_account(db):
    with pytest.raises(SignInError, match="at least 8 characters"):
        sign_in(db, "newbie", "abcd", open_signup=True)
    with pytest.raises(SignInError, match="at least 12 characters"):
        sign_in(db, "newbie", "abcdefgh", open_signup=True, min_token_length=12)
    assert _count(db) == 0
    assert sign_in(db, "newbie", "abcdefgh", open_signup=True).name == "newbie"


def test_configured_tokens_shorter_than_the_minimum_stop_the_start(db):
    with pytest.raises(SettingsError, match=r"ARENA_ANNOTATORS: the token of 'bob' has 4 characters.*at least 8"):
        Settings(annotators="alice:long-enough-1,bob:abcd")
    with pytest.raises(SettingsError, match="at least 10"):
        Settings(annotators="alice:ninechars", min_token_length=10)
    with pytest.raises(SettingsError, match="ARENA_MIN_TOKEN_LENGTH"):
        Settings(min_token_length=4)
    assert Settings(annotators="alice:long-enough").annotator_accounts == {"alice": "long-enough"}
    with pytest.raises(ValueError, match="the token of 'bob' has 4 characters; tokens need at least 8"):
        sync_accounts(db, {"bob": "abcd"})  # the library checks too


# --- finding 4: unknown and known names answer alike ------------------------------------------------------------------

def _closed_arena(db):
    sync_accounts(db, {"alice": TOKEN, "bob": "bob-token-1"})


def test_unknown_and_known_names_get_the_same_answer_and_one_hash_each(db, monkeypatch):
    _closed_arena(db)
    calls = []
    real = hashlib.scrypt
    monkeypatch.setattr(hashlib, "scrypt", lambda *a, **k: calls.append(k["n"]) or real(*a, **k))
    answers, costs = {}, {}
    for name in ("alice", "nobody"):
        calls.clear()
        with pytest.raises(SignInError) as refused:
            sign_in(db, name, "wrong-token-9", open_signup=False)
        answers[name], costs[name] = (len(calls), str(refused.value)), list(calls)
    assert answers["alice"][0] == answers["nobody"][0] == 1  # one scrypt each, known name or not ...
    assert costs["alice"] == costs["nobody"] == [annotators.TOKEN_HASH_COST.n]  # ... at the same cost
    assert answers["alice"][1] == answers["nobody"][1]  # and the same words
    assert "alice" not in answers["alice"][1]


@pytest.fixture
def real_hash_cost(monkeypatch):
    """New tokens hashed at the arena's own scrypt cost (the test suite lowers it: tests/conftest.py)."""
    monkeypatch.setattr(annotators, "TOKEN_HASH_COST", annotators.ScryptCost())


def test_a_token_hash_says_its_cost_and_is_checked_at_it_whatever_the_cost_of_new_ones(real_hash_cost, monkeypatch):
    real = annotators.hash_token(TOKEN)
    assert real.startswith("scrypt:16384:8:1$")  # RFC 7914's N = 2**14, r = 8, p = 1: about 16 MiB per hash
    _, salt, digest = real.split("$")
    assert hashlib.scrypt(TOKEN.encode(), salt=bytes.fromhex(salt), n=2**14, r=8, p=1).hex() == digest
    unstated = f"scrypt${salt}${digest}"  # as stored before hashes said their cost
    cheap = annotators.hash_token(TOKEN, cost=annotators.ScryptCost(n=16))
    for stored in (real, unstated, cheap):
        assert annotators.token_matches(TOKEN, stored) and not annotators.token_matches("alice-token-2", stored)
    monkeypatch.setattr(annotators, "TOKEN_HASH_COST", annotators.ScryptCost(n=2**15))  # a cost raised later
    assert all(annotators.token_matches(TOKEN, stored) for stored in (real, unstated, cheap))
    assert annotators.hash_token(TOKEN).startswith("scrypt:32768:8:1$")


def test_unknown_and_known_names_take_about_the_same_time(db, real_hash_cost):
    """Medians over interleaved tries; before, an unknown name answered in ~3 ms and a known one in ~54 ms."""
    _closed_arena(db)

    def seconds(name):
        start = time.perf_counter()
        with pytest.raises(SignInError):
            sign_in(db, name, "wrong-token-9", open_signup=False)
        return time.perf_counter() - start

    known, unknown = [], []
    for _ in range(7):
        known.append(seconds("alice"))
        unknown.append(seconds("nobody"))
    ratio = statistics.median(known) / statistics.median(unknown)
    assert 1 / 3 < ratio < 3, f"known {statistics.median(known) * 1e3:.1f} ms, unknown " \
                               f"{statistics.median(unknown) * 1e3:.1f} ms"


# --- finding 4: look-alike names --------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["Alice", "ALICE", "ａｌｉｃｅ", " alice ", "Ａｌｉｃｅ", "a\u217cice",
                                     "\U0001d41alice"])
def test_case_and_width_variants_are_the_same_account(db, variant):
    alice = sign_in(db, "alice", TOKEN, open_signup=True)
    assert sign_in(db, variant, TOKEN, open_signup=True) == alice
    with pytest.raises(SignInError, match="Wrong token for 'alice'"):
        sign_in(db, variant, "someone-else", open_signup=True)
    assert _count(db) == 1


@pytest.mark.parametrize("lookalike", ["\u0430lice", "\u0430l\u0456\u0441\u0435", "aIice", "\u0251lice"])
def test_look_alikes_of_an_existing_name_are_refused(db, lookalike):
    sign_in(db, "alice", TOKEN, open_signup=True)
    with pytest.raises(SignInError, match="looks like the existing name 'alice'.*[Pp]ick another name"):
        sign_in(db, lookalike, "mallory-token", open_signup=True)
    assert _count(db) == 1


def test_look_alikes_are_refused_whichever_came_first(db):
    sign_in(db, "Ian", "ian-token-1", open_signup=True)
    with pytest.raises(SignInError, match="looks like the existing name 'Ian'"):
        sign_in(db, "lan", "lan-token-1", open_signup=True)  # a capital I looks like a small l
    sign_in(db, "ALICE", TOKEN, open_signup=True)
    with pytest.raises(SignInError, match="looks like the existing name 'ALICE'"):
        sign_in(db, "\u0430lice", "mallory-token", open_signup=True)
    assert sign_in(db, "alice", TOKEN, open_signup=True).name == "ALICE"
    assert sign_in(db, "bob", "bob-token-1", open_signup=True).name == "bob"  # a different name is fine


def test_configured_names_are_matched_the_same_way(db):
    _closed_arena(db)
    assert sign_in(db, "Alice", TOKEN, open_signup=False).name == "alice"
    with pytest.raises(SignInError, match="Unknown name or wrong token"):
        sign_in(db, "\u0430lice", TOKEN, open_signup=False)
    with pytest.raises(ValueError, match="both normalise to 'alice'"):
        sync_accounts(db, {"alice": TOKEN, "Alice": "other-token-1"})


def test_the_migration_keys_existing_accounts_and_keeps_colliding_ones(tmp_path):
    """Accounts made before names were normalised: 'Alice' and 'alice' both exist. The older keeps the normalised
    name; the newer still signs in under its exact name."""
    from datamodel.annotators import hash_token
    from datamodel.schema import MIGRATIONS, _annotator_identity, migrate

    path = tmp_path / "old.db"
    db = connect(path, migrate_schema=False)
    for migration in MIGRATIONS[:MIGRATIONS.index(_annotator_identity)]:
        with db.conn:
            migration(db)
            db.execute(f"PRAGMA user_version = {MIGRATIONS.index(migration) + 1}")
    with db.conn:
        for name, token in (("alice", "old-token-1"), ("Alice", "old-token-2"), ("bob", "old")):
            db.execute("INSERT INTO annotators (name, token_hash) VALUES (?, ?)", [name, hash_token(token)])
    migrate(db)
    rows = db.execute("SELECT name, name_key FROM annotators ORDER BY id").fetchall()
    assert rows == [("alice", "alice"), ("Alice", None), ("bob", "bob")]
    assert sign_in(db, "ALICE", "old-token-1", open_signup=True).name == "alice"
    assert sign_in(db, "Alice", "old-token-2", open_signup=True).name == "Alice"
    assert sign_in(db, "bob", "old", open_signup=True).name == "bob"  # a token chosen before the minimum still works
    db.close()
