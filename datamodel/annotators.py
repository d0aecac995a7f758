"""Annotator accounts: sign-in with a name and a token.

Accounts come from configuration (``ARENA_ANNOTATORS``); when none are configured anyone signs up by choosing a name
and a token, and later sign-ins under that name need the same token. Tokens are stored as salted scrypt hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Mapping

import sqlite_utils

NAME_PATTERN = re.compile(r"^[\w .@-]{1,64}$")


class SignInError(ValueError):
    """Sign-in refused; the message says why and what to do."""


@dataclass(frozen=True)
class Annotator:
    id: int
    name: str


def hash_token(token: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(token.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${salt.hex()}${digest.hex()}"


def token_matches(token: str, stored: str) -> bool:
    _, salt, _ = stored.split("$")
    return hmac.compare_digest(hash_token(token, bytes.fromhex(salt)), stored)


def sync_accounts(db: sqlite_utils.Database, accounts: Mapping[str, str]) -> None:
    """Create or update the configured accounts so their configured token is the valid one."""
    with db.conn:
        for name, token in accounts.items():
            row = db.execute("SELECT token_hash FROM annotators WHERE name = ?", [name]).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO annotators (name, token_hash, source) VALUES (?, ?, 'config')", [name, hash_token(token)]
                )
            elif not token_matches(token, row[0]):
                db.execute(
                    "UPDATE annotators SET token_hash = ?, source = 'config' WHERE name = ?", [hash_token(token), name]
                )


def sign_in(db: sqlite_utils.Database, name: str, token: str, *, open_signup: bool) -> Annotator:
    """Return the annotator for (name, token); with ``open_signup`` an unknown name becomes a new account."""
    name, token = (name or "").strip(), (token or "").strip()
    if not NAME_PATTERN.match(name):
        raise SignInError("Enter a name of 1 to 64 letters, digits, spaces or . @ - _ characters.")
    if len(token) < 4:
        raise SignInError("Enter a token of at least 4 characters (your password for this arena).")
    row = db.execute("SELECT id, token_hash FROM annotators WHERE name = ?", [name]).fetchone()
    if row is None:
        if not open_signup:
            raise SignInError(f"No annotator account named {name!r}. Ask the arena's admin for an account.")
        token_hash = hash_token(token)
        with db.conn:
            db.execute(
                "INSERT INTO annotators (name, token_hash, source) VALUES (?, ?, 'signup') ON CONFLICT (name) DO NOTHING",
                [name, token_hash],
            )
        row = db.execute("SELECT id, token_hash FROM annotators WHERE name = ?", [name]).fetchone()
        if row[1] == token_hash:  # ours, not a concurrent sign-up of the same name
            return Annotator(id=row[0], name=name)
    if not token_matches(token, row[1]):
        raise SignInError(f"Wrong token for {name!r}. Try again, or pick another name if this one is not yours.")
    return Annotator(id=row[0], name=name)
