"""Annotator accounts: sign-in with a name and a token.

Accounts come from configuration (``ARENA_ANNOTATORS``, ``source = 'config'``); when none are configured anyone signs
up by choosing a name and a token (``source = 'signup'``), and later sign-ins under that name need the same token.

- **Closed accounts.** With accounts configured, only they sign in: an account made earlier by open sign-up, or a
  configured one the admin has since removed from the configuration (``source = 'retired'``), is refused and told to
  ask the admin. :func:`sync_accounts` brings the table in line with the configuration at every start.
- **Tokens** are stored as salted scrypt hashes, ``scrypt:N:r:p$salt$digest`` (hex), each with the cost it was
  made with (:data:`TOKEN_HASH_COST` for new ones; a hash without its cost, ``scrypt$salt$digest``, was made at
  N = 2**14, r = 8, p = 1), so a cost raised later still checks every stored token. A token that is chosen (at
  sign-up, or in the configuration) needs at least ``min_token_length`` characters (``ARENA_MIN_TOKEN_LENGTH``, 8
  or more). Tokens chosen before that minimum still open their own accounts: refusing them would lock their owners
  out, with no admin to reset them.
- **Names are not told apart** by the answer: an unknown name costs one scrypt hash of a dummy, as a known name costs
  one of its stored hash, and with configured accounts an unknown name and a wrong token get the same words.
- **One person, one name.** A name is looked up by its key: NFKC, case-folded, spaces collapsed (:func:`name_key`), so
  "Alice", "ALICE" and the full-width "ａｌｉｃｅ" are the account "alice". A new name is refused when it looks like an
  existing one: its Unicode TR39 confusable skeleton (:func:`skeletons`, from the ``disarm`` library, with TR39's
  digit classes 0 ≡ O and 1 ≡ l) equals an existing account's, as "аlice" with a Cyrillic а does. The skeleton is taken
  of the name as written (a capital I looks like a small l) and of its key (case folded first), and both are compared
  with both of every account's.
- **Accounts made before names were normalised** keep working: the oldest account of a key holds it; a younger one
  whose key collides (say "Alice" beside "alice") keeps ``name_key`` empty and signs in under its exact name only.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass
from typing import Mapping

from disarm import skeleton_key

from datamodel.database import Database
from datamodel.transactions import annotator_transaction
from datamodel.dialect import pick

NAME_PATTERN = re.compile(r"^[\w .@-]{1,64}$")
MIN_TOKEN_LENGTH = 8  # the default of ARENA_MIN_TOKEN_LENGTH, and the least it may be
CLOSED_REFUSAL = "Unknown name or wrong token. Check both, or ask the arena's admin for an account."


class SignInError(ValueError):
    """Sign-in refused; the message says why and what to do. ``guess`` is false when the input was refused before any
    token was checked (a name that is not allowed, no token, a token too short to sign up with): not a guess at a
    secret, so a throttle need not count it."""

    def __init__(self, message: str, *, guess: bool = True):
        super().__init__(message)
        self.guess = guess


@dataclass(frozen=True)
class Annotator:
    id: int
    name: str
    source: str = "signup"  # config | signup | retired (see the module docstring)


@dataclass(frozen=True)
class ScryptCost:
    """scrypt's work factors (RFC 7914): CPU/memory cost ``n`` (a power of 2), block size ``r``, parallelism ``p``;
    the defaults take about 128 × n × r bytes = 16 MiB and tens of milliseconds per hash."""

    n: int = 2**14
    r: int = 8
    p: int = 1

    def scheme(self) -> str:
        return f"scrypt:{self.n}:{self.r}:{self.p}"


TOKEN_HASH_COST = ScryptCost()  # what new hashes cost (the test suite lowers it for its own throwaway accounts)
_UNSTATED_COST = ScryptCost(2**14, 8, 1)  # hashes stored as scrypt$salt$digest, before they said their cost


def hash_token(token: str, salt: bytes | None = None, cost: ScryptCost | None = None) -> str:
    """``token``'s salted scrypt hash as stored, ``scrypt:N:r:p$salt$digest``, at ``cost`` (default
    :data:`TOKEN_HASH_COST`)."""
    cost = cost or TOKEN_HASH_COST
    salt = salt or secrets.token_bytes(16)
    return f"{cost.scheme()}${salt.hex()}${_digest(token, salt, cost).hex()}"


def _digest(token: str, salt: bytes, cost: ScryptCost) -> bytes:
    memory = 128 * cost.r * (cost.n + cost.p)  # what scrypt needs (RFC 7914); OpenSSL refuses above its maxmem
    return hashlib.scrypt(token.encode(), salt=salt, n=cost.n, r=cost.r, p=cost.p, maxmem=2 * memory + 2**20)


def token_matches(token: str, stored: str) -> bool:
    """Whether ``token`` hashes to ``stored`` at the salt and cost ``stored`` holds."""
    scheme, salt, digest = stored.split("$")
    if scheme == "scrypt":
        cost = _UNSTATED_COST
    else:
        n, r, p = (int(part) for part in scheme.removeprefix("scrypt:").split(":"))
        cost = ScryptCost(n, r, p)
    return hmac.compare_digest(_digest(token, bytes.fromhex(salt), cost), bytes.fromhex(digest))


def _dummy_hash() -> str:
    """What an unknown name's token is checked against (salt and digest zero: no token matches it), at the cost of a
    new account's hash, so an unknown name costs what a known one costs: one scrypt hash."""
    return f"{TOKEN_HASH_COST.scheme()}${'00' * 16}${'00' * 64}"


def display_name(name: str) -> str:
    """The name as an account keeps it: NFKC (full-width and styled letters become plain ones), spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name or "").split())


def name_key(name: str) -> str:
    """What a name is looked up by: its :func:`display_name`, case-folded (NFKC again after the fold)."""
    return unicodedata.normalize("NFKC", display_name(name).casefold())


def skeletons(name: str) -> tuple[str, str]:
    """The TR39 confusable skeletons of ``name`` as written and of its :func:`name_key`; two names whose skeletons
    meet look alike."""
    return (skeleton_key(display_name(name), digit_policy="tr39"), skeleton_key(name_key(name), digit_policy="tr39"))


_ACCOUNT = "SELECT id, name, token_hash, source FROM annotators"


def _find(db: Database, name: str):
    """The account of ``name``: the one of that exact name, else the one holding its key; None if neither."""
    row = db.execute(f"{_ACCOUNT} WHERE name = ?", [name.strip()]).fetchone()
    return row or db.execute(f"{_ACCOUNT} WHERE name_key = ?", [name_key(name)]).fetchone()


def _lookalike(db: Database, name: str) -> str | None:
    """The name of an account that ``name`` looks like (a skeleton in common), if any."""
    both = list(skeletons(name))
    for column in ("name_skeleton", "key_skeleton"):  # by index, whatever the statistics (stale after a fill) say
        hint = pick(db, sqlite=f" INDEXED BY annotators_{column}", postgresql="")
        row = db.execute(f"SELECT name FROM annotators{hint} WHERE {column} IN (?, ?) LIMIT 1", both).fetchone()
        if row:
            return row[0]
    return None


def fill_name_keys(db: Database) -> int:
    """Give every account its ``name_key`` and skeletons where missing or out of date; return the rows changed.

    Accounts are taken oldest first and a key stays with the account that holds it, so an account whose key another
    already holds keeps ``name_key`` empty (it signs in under its exact name). Run by the migration that added the
    columns and at every start (:func:`sync_accounts`): that also keys rows written by other tools and follows a new
    Unicode or ``disarm`` version. Call it inside a transaction."""
    rows = db.execute("SELECT id, name, name_key, name_skeleton, key_skeleton FROM annotators ORDER BY id").fetchall()
    held = {key: account for account, _, key, _, _ in rows if key is not None}
    changed = 0
    for account, name, key, name_skeleton, key_skeleton in rows:
        wanted = name_key(name)
        if wanted != key and held.get(wanted, account) != account:
            wanted = None  # another account holds the key: this one signs in under its exact name
        if wanted != key:
            if key is not None and held.get(key) == account:
                del held[key]
            if wanted is not None:
                held[wanted] = account
        marks = skeletons(name)
        if (wanted, *marks) != (key, name_skeleton, key_skeleton):
            db.execute("UPDATE annotators SET name_key = ?, name_skeleton = ?, key_skeleton = ? WHERE id = ?",
                       [wanted, *marks, account])
            changed += 1
    return changed


def _check_name(name: str, where: str = "") -> str:
    name = display_name(name)
    if not NAME_PATTERN.match(name):
        raise SignInError(f"{where}Enter a name of 1 to 64 letters, digits, spaces or . @ - _ characters.",
                          guess=False)
    return name


def sync_accounts(db: Database, accounts: Mapping[str, str], *,
                  min_token_length: int = MIN_TOKEN_LENGTH) -> None:
    """Bring the accounts in line with the configuration ``accounts`` ({name: token}); run at every start.

    Each configured name gets an account with its configured token (an existing account of that name, or of its key,
    becomes the configured one, keeping its votes); an account whose token changes is signed out everywhere (its
    stay-signed-in tokens revoked, its open sessions ended: :func:`arena.session.check_signed_in`); a configured
    account no longer listed becomes ``retired``, which cannot sign in while accounts are configured. Raises ValueError, naming the account (never the token), when a
    token is shorter than ``min_token_length`` or two names have one key."""
    keys: dict[str, str] = {}
    for name, token in accounts.items():
        if len(token) < min_token_length:
            raise ValueError(f"ARENA_ANNOTATORS: the token of {name!r} has {len(token)} characters; tokens need at "
                             f"least {min_token_length}. Give {name!r} a longer token.")
        key = name_key(_check_name(name, f"ARENA_ANNOTATORS: {name!r} is not a valid name. "))
        if key in keys:
            raise ValueError(f"ARENA_ANNOTATORS names {keys[key]!r} and {name!r}, which both normalise to {key!r}: "
                             "one person, one account. Keep one of them.")
        keys[key] = name
    with db.conn:
        fill_name_keys(db)
        configured = []
        for name, token in accounts.items():
            row = _find(db, name)
            if row is None:
                name = display_name(name)
                configured.append(db.execute(
                    "INSERT INTO annotators (name, name_key, name_skeleton, key_skeleton, token_hash, source) "
                    "VALUES (?, ?, ?, ?, ?, 'config') RETURNING id",
                    [name, name_key(name), *skeletons(name), hash_token(token)]).fetchone()[0])
                continue
            account, _, token_hash, source = row
            if not token_matches(token, token_hash):  # a new token: every sign-in made with the old one ends
                now = time.time()
                db.execute("UPDATE annotators SET token_hash = ?, signed_out_at = ? WHERE id = ?",
                           [hash_token(token), now, account])
                db.execute("UPDATE annotator_sessions SET revoked_at = ? WHERE annotator_id = ? AND revoked_at IS NULL",
                           [now, account])
            if source != "config":
                db.execute("UPDATE annotators SET source = 'config' WHERE id = ?", [account])
            configured.append(account)
        kept = f" AND id NOT IN ({', '.join('?' * len(configured))})" if configured else ""
        db.execute(f"UPDATE annotators SET source = 'retired' WHERE source = 'config'{kept}", configured)


def sign_in(db: Database, name: str, token: str, *, open_signup: bool,
            min_token_length: int = MIN_TOKEN_LENGTH) -> Annotator:
    """Return the annotator for (name, token).

    With ``open_signup`` (no accounts configured) an unknown name becomes a new account, unless it looks like an
    existing one or its token is shorter than ``min_token_length``. Without it only configured accounts sign in, and
    an unknown name and a wrong token get the same answer after the same work."""
    raw, token = (name or "").strip(), (token or "").strip()
    name = _check_name(raw)
    if not token:
        raise SignInError("Enter your token (your password for this arena).", guess=False)
    row = _find(db, raw)
    if row is None and not open_signup:
        token_matches(token, _dummy_hash())  # the same work as a known name
        raise SignInError(CLOSED_REFUSAL)
    if row is None:
        created, row = _sign_up(db, raw, name, token, min_token_length)
        if created:
            return Annotator(id=row[0], name=row[1], source=row[3])
    account, stored_name, token_hash, source = row
    if not token_matches(token, token_hash):
        if not open_signup:
            raise SignInError(CLOSED_REFUSAL)
        raise SignInError(f"Wrong token for {stored_name!r}. Try again, or pick another name if this one is not yours.")
    if not open_signup and source != "config":
        why = ("was made by open sign-up, and this arena now admits only the accounts its admin configured"
               if source == "signup" else "is no longer among the accounts this arena's admin configured")
        raise SignInError(f"The account {stored_name!r} {why}. Ask the arena's admin for an account.")
    return Annotator(id=account, name=stored_name, source=source)


def _sign_up(db: Database, raw: str, name: str, token: str, min_token_length: int):
    """(True, the new account's row), or (False, the row of an account of that name signed up meanwhile)."""
    if len(token) < min_token_length:
        raise SignInError(f"Choose a token of at least {min_token_length} characters: it is your password for this "
                          "arena, and you will need it again to sign in.", guess=False)
    token_hash = hash_token(token)  # before the write transaction: it takes tens of milliseconds
    with db.conn:
        row = _find(db, raw)
        if row is not None:  # a concurrent sign-up of the same name
            return False, row
        similar = _lookalike(db, name)
        if similar is not None:
            raise SignInError(f"The name {name!r} looks like the existing name {similar!r}. Pick another name (or, "
                              f"if {similar!r} is yours, sign in with exactly that name).", guess=False)
        db.execute("INSERT INTO annotators (name, name_key, name_skeleton, key_skeleton, token_hash, source) "
                   "VALUES (?, ?, ?, ?, ?, 'signup')", [name, name_key(name), *skeletons(name), token_hash])
        return True, _find(db, name)


def first_guidelines_visit(db: Database, annotator_id: int, now: float | None = None) -> bool:
    """Whether this is the first time the arena page shows ``annotator_id`` its guidelines: True once per annotator
    (and records when, ``annotators.guidelines_seen_at``), False on every later call, however many votes they have.
    The page opens the guidelines on the first visit and folds them afterwards."""
    with annotator_transaction(db, annotator_id):
        changed = db.execute("UPDATE annotators SET guidelines_seen_at = ? WHERE id = ? AND guidelines_seen_at IS NULL",
                             [time.time() if now is None else now, annotator_id]).rowcount
    return changed == 1


def annotator_names(db: Database) -> dict[int, str]:
    """{id: name} of every annotator."""
    return dict(db.execute("SELECT id, name FROM annotators ORDER BY id").fetchall())


def annotator_name_list(db: Database) -> list[str]:
    """Every annotator's name, sorted."""
    return [name for name, in db.execute("SELECT name FROM annotators ORDER BY name")]
