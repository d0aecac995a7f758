"""What the admin's coverage tables read (:mod:`sampling.coverage`): each vote's prompt, models and images, the
prompts each pair of models shares, and the prompts with images of two or more models."""

from __future__ import annotations

from datamodel.database import Database


def vote_pairs(db: Database, voter_kind: str | None, include_excluded: bool,
               suite: str | None) -> list[tuple]:
    """(prompt id, model shown left, model shown right, outcome, left image id, right image id) of each vote, by
    model name; only ``voter_kind``'s (None: any), counted ones unless ``include_excluded``, of ``suite``'s prompts."""
    clauses, params = [], []
    if voter_kind:
        clauses.append("v.voter_kind = ?")
        params.append(voter_kind)
    if not include_excluded:
        clauses.append("v.excluded = 0")
    if suite:
        clauses.append("p.suite = ?")
        params.append(suite)
    where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
    return db.execute(
        f"""
        SELECT b.prompt_id, ml.name, mr.name, v.outcome, b.left_image_id, b.right_image_id
        FROM votes v JOIN battles b ON b.id = v.battle_id JOIN prompts p ON p.id = b.prompt_id
        JOIN images l ON l.id = b.left_image_id JOIN models ml ON ml.id = l.model_id
        JOIN images r ON r.id = b.right_image_id JOIN models mr ON mr.id = r.model_id
        {where}
        """,
        params,
    ).fetchall()


def shared_prompts_per_pair(db: Database, suite: str | None) -> list[tuple[str, str, int]]:
    """(model, model, prompts with images of both) for every pair of models sharing a prompt (of ``suite``)."""
    where, params = ("WHERE p.suite = ?", [suite]) if suite else ("", [])
    return db.execute(
        f"""
        SELECT ma.name, mb.name, COUNT(DISTINCT ia.prompt_id)
        FROM images ia JOIN images ib ON ib.prompt_id = ia.prompt_id AND ib.model_id > ia.model_id
        JOIN models ma ON ma.id = ia.model_id JOIN models mb ON mb.id = ib.model_id
        JOIN prompts p ON p.id = ia.prompt_id {where}
        GROUP BY ia.model_id, ib.model_id, ma.name, mb.name
        """,
        params,
    ).fetchall()


def prompts_with_models(db: Database, suite: str | None) -> list[tuple]:
    """(prompt id, suite, subset, variant, text, models with an image) of the prompts (of ``suite``) with images of
    two or more models, by id."""
    where, params = ("AND p.suite = ?", [suite]) if suite else ("", [])
    return db.execute(
        f"""
        SELECT p.id, p.suite, p.subset, p.variant, p.text, COUNT(DISTINCT i.model_id)
        FROM prompts p JOIN images i ON i.prompt_id = p.id WHERE 1 = 1 {where}
        GROUP BY p.id HAVING COUNT(DISTINCT i.model_id) >= 2 ORDER BY p.id
        """,
        params,
    ).fetchall()
