"""Writing judge results: the ``judgments`` table, and reading and pruning the judges' scores in ``metrics``.

A judgment is keyed by (judge, task, subject): re-running a judge overwrites its judgment of a subject rather than
adding a second one. The judges write their scores with :func:`datamodel.metrics.write_metrics` (keyed like the
``metrics_key`` index: model, image or none, suite, subset, name, scorer; model-level metrics have ``image_id``
None).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from datamodel.database import Database
from datamodel.dialect import is_postgres, now_text, pick

STATUSES = ("ok", "inconsistent", "failed")


@dataclass(frozen=True)
class Judgment:
    judge: str
    task: str
    subject: str
    status: str  # ok | inconsistent | failed
    reason: str = ""
    verdict: Any = field(default_factory=dict)
    raw: Any = field(default_factory=list)
    explanation: str = ""
    request_keys: tuple[str, ...] = ()
    prompt_id: int | None = None
    image_id: int | None = None
    model_id: int | None = None
    battle_id: str | None = None
    source_battle_id: str | None = None
    template_version: str = ""  # the prompt template's version ('' when the task keeps none)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"judgment status must be one of {', '.join(STATUSES)}, got {self.status!r}.")


def save_judgment(db: Database, judgment: Judgment) -> None:
    j = judgment
    with db.conn:
        db.execute(
            f"""
            INSERT INTO judgments (judge, task, subject, status, reason, verdict, raw, explanation, request_keys,
                                   prompt_id, image_id, model_id, battle_id, source_battle_id, template_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (judge, task, subject) DO UPDATE SET
                status = excluded.status, reason = excluded.reason, verdict = excluded.verdict, raw = excluded.raw,
                explanation = excluded.explanation, request_keys = excluded.request_keys,
                prompt_id = excluded.prompt_id, image_id = excluded.image_id, model_id = excluded.model_id,
                battle_id = excluded.battle_id, source_battle_id = excluded.source_battle_id,
                template_version = excluded.template_version, updated_at = {now_text(db)}
            """,
            [j.judge, j.task, j.subject, j.status, j.reason, json.dumps(j.verdict, ensure_ascii=False),
             json.dumps(j.raw, ensure_ascii=False), j.explanation, json.dumps(list(j.request_keys)), j.prompt_id,
             j.image_id, j.model_id, j.battle_id, j.source_battle_id, j.template_version],
        )


def judged_subjects(db: Database, judge: str, task: str,
                    statuses: Iterable[str] = ("ok", "inconsistent")) -> set[str]:
    """Subjects ``judge`` has a judgment of ``task`` for, with one of ``statuses``."""
    statuses = list(statuses)
    rows = db.execute(
        f"SELECT subject FROM judgments WHERE judge = ? AND task = ? AND status IN ({','.join('?' * len(statuses)) or 'NULL'})",
        [judge, task, *statuses],
    )
    return {row[0] for row in rows}


def judgments(db: Database, judge: str | None = None, task: str | None = None) -> list[dict]:
    """Judgment rows (JSON columns decoded), oldest first."""
    where, params = [], []
    for column, value in (("judge", judge), ("task", task)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows = list(db.query(f"SELECT * FROM judgments {'WHERE ' + ' AND '.join(where) if where else ''} ORDER BY id",
                         params))
    for row in rows:
        for column in ("verdict", "raw", "request_keys"):
            row[column] = json.loads(row[column])
    return rows


def metric_rows(db: Database, *, scorer: str | None, name: str, suite: str,
                image_level: bool = True) -> list[dict]:
    """Metrics of one scorer (None: every scorer) and name (image-level or model-level), details decoded."""
    rows = list(db.query(
        f"SELECT * FROM metrics WHERE {'scorer = ? AND ' if scorer is not None else ''}name = ? AND suite = ? AND "
        f"image_id IS {'NOT NULL' if image_level else 'NULL'} ORDER BY id",
        [*([scorer] if scorer is not None else []), name, suite],
    ))
    for row in rows:
        row["details"] = json.loads(row["details"])
    return rows


def other_versions_notes(rows: list[dict], what: str, redo: str = "judge them again with this template") -> list[str]:
    """The run note for the scores of other template versions that :func:`split_by_version` left out (each row of an
    aggregate carries the same ``other_versions`` count); empty when there were none."""
    left_out = max((row["other_versions"] for row in rows), default=0)
    return [f"{left_out} {what} of this judge name from another template version were left out of the model "
            f"scores; {redo} to count them."] if left_out else []


def delete_other_versions(db: Database, *, scorer: str, suite: str, names: Iterable[str],
                          version: str) -> int:
    """Delete the model-level metrics ``names`` of ``scorer`` in ``suite`` written under another scorer version
    (a model or subset that only the older template scored); return how many were deleted."""
    names = list(names)
    with db.conn:
        cursor = db.execute(
            f"DELETE FROM metrics WHERE scorer = ? AND suite = ? AND image_id IS NULL AND scorer_version != ? "
            f"AND name IN ({','.join('?' * len(names)) or 'NULL'})", [scorer, suite, version, *names])
    return cursor.rowcount


def split_by_version(rows: list[dict], version: str, get) -> tuple[list[dict], int]:
    """(rows whose version ``get(row)`` is ``version``, how many others); every row when ``version`` is ''."""
    if not version:
        return rows, 0
    kept = [row for row in rows if get(row) == version]
    return kept, len(rows) - len(kept)



def stored_verdict(db: Database, judge: str, task: str, subject: str) -> Any:
    """The decoded verdict of judge's ``ok`` judgment of ``subject`` in ``task``, or None."""
    row = db.execute("SELECT verdict FROM judgments WHERE judge = ? AND task = ? AND subject = ? AND status = 'ok'",
                     [judge, task, subject]).fetchone()
    return json.loads(row[0]) if row else None


def copied_vote_outcomes(db: Database, judge: str, task: str) -> list[tuple[str, str]]:
    """(the judge's outcome, the human's) for each of the judge's votes on a copy of a human battle."""
    return db.execute(
        """
        SELECT jv.outcome, hv.outcome FROM judgments j
        JOIN votes jv ON jv.battle_id = j.battle_id JOIN votes hv ON hv.battle_id = j.source_battle_id
        WHERE j.judge = ? AND j.task = ? AND j.source_battle_id IS NOT NULL
        """,
        [judge, task],
    ).fetchall()


def judge_figures(db: Database, task: str, unversioned: str) -> list[tuple]:
    """Per judge of ``task``, by name: (judge, judgments, its template versions comma-separated (``unversioned``
    for judgments without one), failed, inconsistent, judgments asked in both orders (two request keys or more) and
    not failed, the summed cost and latency of their cached requests)."""
    if is_postgres(db):
        requests = ("FROM judgments k CROSS JOIN LATERAL json_array_elements_text(k.request_keys::json) e(key) "
                    "JOIN judge_requests r ON r.key = e.key WHERE k.judge = j.judge AND k.task = j.task")
        sql = f"""
            SELECT j.judge, COUNT(*),
                   (SELECT string_agg(v, ',' ORDER BY v) FROM (SELECT DISTINCT CASE WHEN k.template_version = ''
                    THEN ? ELSE k.template_version END AS v FROM judgments k WHERE k.judge = j.judge
                    AND k.task = j.task) versions),
                   COUNT(*) FILTER (WHERE j.status = 'failed'), COUNT(*) FILTER (WHERE j.status = 'inconsistent'),
                   COUNT(*) FILTER (WHERE j.status != 'failed' AND json_array_length(j.request_keys::json) >= 2),
                   (SELECT SUM(r.cost_usd) {requests}), (SELECT SUM(r.latency_s) {requests})
            FROM judgments j WHERE j.task = ? GROUP BY j.judge, j.task ORDER BY j.judge"""
    else:
        requests = ("FROM judgments k, json_each(k.request_keys) e JOIN judge_requests r ON r.key = e.value "
                    "WHERE k.judge = j.judge AND k.task = j.task")
        sql = f"""
            SELECT j.judge, COUNT(*),
                   (SELECT group_concat(v, ',') FROM (SELECT DISTINCT iif(k.template_version = '', ?,
                    k.template_version) AS v FROM judgments k WHERE k.judge = j.judge AND k.task = j.task ORDER BY v)),
                   SUM(j.status = 'failed'), SUM(j.status = 'inconsistent'),
                   SUM(j.status != 'failed' AND json_array_length(j.request_keys) >= 2),
                   (SELECT SUM(r.cost_usd) {requests}), (SELECT SUM(r.latency_s) {requests})
            FROM judgments j WHERE j.task = ? GROUP BY j.judge ORDER BY j.judge"""
    return db.execute(sql, [unversioned, task]).fetchall()


def forget_failed(db: Database, task: str, judge: str) -> tuple[int, int]:
    """Delete the cached replies of judge's failed judgments of ``task`` (module :mod:`judges.compare` says why);
    return (failed judgments, cached replies deleted)."""
    where = "task = ? AND status = 'failed' AND judge = ?"
    failed = db.execute(f"SELECT COUNT(*) FROM judgments WHERE {where}", [task, judge]).fetchone()[0]
    keys = pick(db, sqlite="SELECT e.value FROM judgments, json_each(request_keys) e",
                postgresql="SELECT e.key FROM judgments, json_array_elements_text(request_keys::json) e(key)")
    with db.conn:
        cursor = db.execute(f"DELETE FROM judge_requests WHERE key IN ({keys} WHERE {where})", [task, judge])
    return int(failed), int(cursor.rowcount)
