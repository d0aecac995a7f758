"""The admin tab's tables of annotators, of flagged votes and of actions, with the headings the page shows over
:mod:`datamodel.reviews`' columns. Pairwise and four-image votes share the tables; a vote is named by its kind and
id, as the review box takes it (:func:`datamodel.reviews.vote_label`: ``pairwise 12``, ``four-image 12``)."""

from __future__ import annotations

import pandas as pd

from datamodel import reviews

ANNOTATOR_HEADINGS = {
    "annotator": "Annotator", "account": "Account", "votes": "Votes", "counted": "Counted",
    "median_seconds": "Median s (pairwise)", "four_image": "Four-image",
    "four_image_median_seconds": "Median s (four-image)", "rate_rule": "Rate rule", "speed_rule": "Speed rule",
    "bias_rule": "Bias rule", "excluded_by_admin": "Excluded by admin", "included_by_admin": "Included by admin",
    "noted_trusted": "Noted (trusted)", "last_vote": "Last vote",
}
ACTION_HEADINGS = {
    "acted_at": "When (UTC)", "action": "Action", "annotator": "Annotator", "rule": "Rule", "vote_id": "Vote",
    "reason": "Reason", "votes": "Votes", "changed": "Changed",
}  # the vote's kind is in its name
FLAGGED_HEADINGS = {
    "vote_id": "Vote", "voter": "Voter", "outcome": "Outcome", "voted_at": "When (UTC)", "excluded": "Excluded",
    "reviewed": "By an admin", "reason": "Reason", "models": "Models",
}  # the vote's kind is in its name


def annotator_flags(db) -> pd.DataFrame:
    """:func:`datamodel.reviews.annotator_flags` under the page's headings (the name column is ``Annotator``)."""
    return reviews.annotator_flags(db).rename(columns=ANNOTATOR_HEADINGS)


def flagged_table(db) -> pd.DataFrame:
    """:func:`datamodel.reviews.flagged_votes` under the page's headings: each vote named by its kind and id, as the
    review box takes it, the flags as yes or no."""
    table = reviews.flagged_votes(db)
    table["vote_id"] = [reviews.vote_label(kind, vote_id) for kind, vote_id in zip(table["kind"], table["vote_id"])]
    for column in ("excluded", "reviewed"):
        table[column] = ["yes" if value else "no" for value in table[column]]
    return table[list(FLAGGED_HEADINGS)].rename(columns=FLAGGED_HEADINGS)


def admin_actions(db, limit: int = 50) -> pd.DataFrame:
    """:func:`datamodel.reviews.admin_actions` under the page's headings, a one-vote action's vote named as the
    flagged votes name it."""
    table = reviews.admin_actions(db, limit)
    table["vote_id"] = [None if vote_id is None or pd.isna(vote_id) else reviews.vote_label(kind, int(vote_id))
                        for kind, vote_id in zip(table["vote_kind"], table["vote_id"])]
    return table[list(ACTION_HEADINGS)].rename(columns=ACTION_HEADINGS)
