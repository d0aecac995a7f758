"""Prompts waiting for a person's check: LLM-written candidates that become prompts only when accepted.

SANEval's prompts "were generated using Gemini-2.5-Flash and subsequently validated by human annotators" (§3.1). A
writer (``python -m arena suites build saneval --generator llm``) stores what the LLM wrote as *candidates*
(:func:`add_candidates`), one row of ``prompt_candidates`` per item key, status ``pending``. A person accepts or
rejects them (:func:`decide`): on the command line (``python -m arena suites review``) or in the admin tab's
prompt check (:mod:`arena.web.prompt_review`). Accepting a candidate writes its prompt (:func:`datamodel.catalog.
add_prompts`, with ``validated_by`` in its metadata) in the same transaction; a rejected one stays in the table with
who rejected it and why. Nothing is deleted. Until accepted, a candidate is no prompt: no image is generated for it
and no battle shows it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from datamodel.catalog import PromptSpec, add_prompts
from datamodel.database import Database

STATUSES = ("pending", "accepted", "rejected")
_COLUMNS = ("id", "suite", "subset", "item_key", "text", "metadata", "source", "status", "reviewer", "reason",
            "created_at", "decided_at")


class ReviewError(ValueError):
    """A candidate cannot be written or decided; the message says which and what to do. Nothing was written."""


@dataclass
class CandidateWrite:
    """What :func:`add_candidates` did: new candidates, pending ones whose text or metadata changed, candidates
    already there as they are, and decided ones left as they were decided."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    decided: int = 0


@dataclass
class Decision:
    """What :func:`decide` did: candidates accepted and rejected now, those already so, the prompts written."""

    accepted: int = 0
    rejected: int = 0
    unchanged: int = 0
    prompt_ids: list[int] = field(default_factory=list)


def add_candidates(db: Database, specs: Iterable[PromptSpec], *, now: float | None = None) -> CandidateWrite:
    """Store ``specs`` as pending candidates, in one transaction. A candidate already there keeps its status; a
    pending one takes the new text and metadata; a decided one whose text differs raises :class:`ReviewError`
    (its decision was about the old text) and nothing is written."""
    specs = list(specs)
    now = time.time() if now is None else now
    result = CandidateWrite()
    with db.conn:
        for spec in specs:
            if spec.variant or spec.role:
                raise ReviewError(f"{spec.source or spec.item_key}: a candidate is one prompt per item key, without "
                                  "variant or role.")
            metadata = json.dumps(spec.metadata, sort_keys=True)
            row = db.execute("SELECT id, text, metadata, status FROM prompt_candidates WHERE suite = ? AND item_key = ?",
                             [spec.suite, spec.item_key]).fetchone()
            if row is None:
                db.execute("INSERT INTO prompt_candidates (suite, subset, item_key, text, metadata, source, created_at) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [spec.suite, spec.subset, spec.item_key, spec.text, metadata, spec.source, now])
                result.inserted += 1
            elif row[3] != "pending":
                if row[1] != spec.text:
                    raise ReviewError(f"{spec.source or spec.item_key}: candidate {spec.suite}/{spec.item_key} was "
                                      f"{row[3]} with the text {row[1]!r}, not {spec.text!r}. Write the new ones under "
                                      "other item keys (another --seed). Nothing was written.")
                result.decided += 1
            elif (row[1], row[2]) != (spec.text, metadata):
                db.execute("UPDATE prompt_candidates SET text = ?, metadata = ?, subset = ?, source = ? WHERE id = ?",
                           [spec.text, metadata, spec.subset, spec.source, row[0]])
                result.updated += 1
            else:
                result.unchanged += 1
    return result


def _row(values: Sequence[Any]) -> dict:
    row = dict(zip(_COLUMNS, values))
    row["metadata"] = json.loads(row["metadata"] or "{}")
    return row


def candidates(db: Database, suite: str | None = None, *, status: str | None = None,
               limit: int | None = None, ids: Sequence[int] | None = None) -> list[dict]:
    """The candidates (every column; ``metadata`` decoded) of ``suite`` (None: all) with ``status`` (None: any), or
    those of ``ids``, in the order they were written."""
    if status is not None and status not in STATUSES:
        raise ReviewError(f"status must be one of {', '.join(STATUSES)}, got {status!r}.")
    where, args = [], []
    for column, value in (("suite", suite), ("status", status)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if ids is not None:
        where.append(f"id IN ({','.join('?' * len(ids)) or 'NULL'})")
        args.extend(int(i) for i in ids)
    sql = f"SELECT {', '.join(_COLUMNS)} FROM prompt_candidates"
    sql += (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(int(limit))
    return [_row(values) for values in db.execute(sql, args).fetchall()]


def candidate_counts(db: Database, suite: str | None = None) -> dict[str, dict[str, int]]:
    """{suite: {status: candidates}} (every status present, 0 when none)."""
    sql = "SELECT suite, status, COUNT(*) FROM prompt_candidates"
    args: list[Any] = []
    if suite is not None:
        sql += " WHERE suite = ?"
        args.append(suite)
    counts: dict[str, dict[str, int]] = {}
    for name, status, n in db.execute(sql + " GROUP BY suite, status ORDER BY suite", args).fetchall():
        counts.setdefault(name, dict.fromkeys(STATUSES, 0))[status] = n
    return counts


def decide(db: Database, ids: Sequence[int], *, accept: bool, reviewer: str, reason: str = "",
           now: float | None = None) -> Decision:
    """Accept (write each candidate's prompt) or reject the candidates ``ids``, in one transaction. An unknown id,
    or rejecting a candidate that is already a prompt (its images and votes may exist), raises
    :class:`ReviewError` and nothing is written. Deciding a candidate again the same way changes nothing; a rejected
    one may still be accepted."""
    reviewer = (reviewer or "").strip()
    if not reviewer:
        raise ReviewError("say who decides (a reviewer name): the decision is recorded with it.")
    wanted = list(dict.fromkeys(int(i) for i in ids))
    if not wanted:
        raise ReviewError("no candidate given: name one or more candidate ids.")
    now = time.time() if now is None else now
    result = Decision()
    with db.conn:
        rows = {row["id"]: row for row in candidates(db, ids=wanted)}
        unknown = [i for i in wanted if i not in rows]
        if unknown:
            raise ReviewError(f"no candidate {', '.join(map(str, unknown))}. Nothing was decided; list them with "
                              "python -m arena suites review SUITE.")
        for candidate_id in wanted:
            row = rows[candidate_id]
            status = "accepted" if accept else "rejected"
            if row["status"] == status:
                result.unchanged += 1
                continue
            if row["status"] == "accepted":
                raise ReviewError(f"candidate {candidate_id} ({row['item_key']}) is already a prompt: it cannot be "
                                  "rejected (its images and votes may exist). Nothing was decided.")
            if accept:
                spec = PromptSpec(row["suite"], row["item_key"], row["text"], subset=row["subset"],
                                  metadata={**row["metadata"], "validated_by": reviewer},
                                  source=row["source"] or f"candidate {candidate_id}")
                result.prompt_ids += add_prompts(db, [spec]).ids
                result.accepted += 1
            else:
                result.rejected += 1
            db.execute("UPDATE prompt_candidates SET status = ?, reviewer = ?, reason = ?, decided_at = ? WHERE id = ?",
                       [status, reviewer, reason or "", now, candidate_id])
    return result
