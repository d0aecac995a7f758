"""The admin tab's tables of annotators and of actions, with the headings the page shows over
:mod:`datamodel.reviews`' columns."""

from __future__ import annotations

import pandas as pd

from datamodel import reviews

ANNOTATOR_HEADINGS = {
    "annotator": "Annotator", "account": "Account", "votes": "Votes", "counted": "Counted",
    "median_seconds": "Median s / vote", "rate_rule": "Rate rule", "speed_rule": "Speed rule", "bias_rule": "Bias rule",
    "excluded_by_admin": "Excluded by admin", "included_by_admin": "Included by admin",
    "noted_trusted": "Noted (trusted)", "last_vote": "Last vote",
}
ACTION_HEADINGS = {
    "acted_at": "When (UTC)", "action": "Action", "annotator": "Annotator", "rule": "Rule", "vote_id": "Vote",
    "reason": "Reason", "votes": "Votes", "changed": "Changed",
}


def annotator_flags(db) -> pd.DataFrame:
    """:func:`datamodel.reviews.annotator_flags` under the page's headings (the name column is ``Annotator``)."""
    return reviews.annotator_flags(db).rename(columns=ANNOTATOR_HEADINGS)


def admin_actions(db, limit: int = 50) -> pd.DataFrame:
    """:func:`datamodel.reviews.admin_actions` under the page's headings."""
    return reviews.admin_actions(db, limit).rename(columns=ACTION_HEADINGS)
