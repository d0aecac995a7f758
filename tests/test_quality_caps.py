"""The quality rules' caps fit careful human speed, and an annotator's standing says what counts (issue 29).

The first caps (30 votes an hour, 100 in three hours) set aside a careful voter's work after 5 minutes at 10 s a vote.
The caps are now set by careful human speed: one vote every 4 s for a whole hour (900; a careful voter at 5 s a vote
casts 720), an average of 6 s a vote for three hours (1,800). These tests hold the numbers to that reasoning, and the
page's words to the standing.
"""

import random

from arena import session as sessions
from arena.web.render import cap_notice, set_aside_text, votes_text
from core.settings import Settings
from datamodel.quality import QualityRules, VoteFact, flag_reasons
from datamodel.standing import ADMIN, Standing, cap_margin, standing


def _paced(seconds: float, count: int, start: float = 0.0) -> list[VoteFact]:
    return [VoteFact(i + 1, start + i * seconds, "tie", None) for i in range(count)]


def test_the_defaults_are_the_documented_caps():
    assert (QualityRules().max_per_hour, QualityRules().max_per_3_hours) == (900, 1800)
    rules = Settings().quality_rules
    assert (rules.max_per_hour, rules.max_per_3_hours, rules.fast_seconds, rules.fast_streak) == (900, 1800, 5.0, 10)


def test_a_careful_phone_voter_at_five_seconds_a_vote_loses_nothing_for_two_and_a_half_hours():
    votes = _paced(5.0, 1800)  # the careful phone pace, never "fast" (less than 5 s apart): 2.5 hours
    assert flag_reasons(votes) == {}
    assert flag_reasons(votes + [VoteFact(1801, 1799 * 5.0 + 5.0, "tie", None)]) == {
        1801: "more than 1800 votes in 3 hours"}  # then a break


def test_a_voter_at_ten_seconds_a_vote_loses_nothing_in_three_hours():
    assert flag_reasons(_paced(10.0, 1080)) == {}  # the careful desktop pace, three hours on end


def test_the_hourly_cap_is_one_vote_every_four_seconds():
    votes = _paced(4.0, 901)  # 901 votes within one hour: the speed rule is lifted to see the cap alone
    flags = flag_reasons(votes, QualityRules(fast_streak=10_000))
    assert flags == {901: "more than 900 votes in an hour"}


def test_the_standing_counts_cast_and_counted_votes_and_why(small_arena):
    db = small_arena.db
    rules = QualityRules(max_per_hour=3, max_per_3_hours=100)
    s = sessions.start(db, "ann", "token-001", open_signup=True)
    now = 1_000_000.0
    for i in range(5):
        s = sessions.vote(db, sessions.next_battle(db, random.Random(i), s, now=now + i * 60), "A" if i % 2 else "B",
                          rules=rules, now=now + i * 60 + 30)
    assert s.receipt.excluded and s.receipt.reason == "more than 3 votes in an hour"
    shown = standing(db, s.annotator.id, rules, now=now + 4 * 60 + 31)
    assert (shown.cast, shown.counted, shown.excluded, shown.last_hour) == (5, 3, 2, 5)
    assert shown.set_aside == {"rate": 2}
    assert shown.hour_frees_at == now + 2 * 60 + 30 + 3600  # the third newest vote leaves the window then
    assert votes_text(shown) == "5 votes cast, 3 count"
    assert set_aside_text(shown, rules) == "2 of your votes do not count: 2 past 3 votes in an hour or 100 in 3 hours."
    notice = cap_notice(shown, rules)
    assert notice.startswith("Your next votes do not count: you have cast 5 votes in the last hour, and this arena "
                             "counts 3 in an hour.") and "about 58 minutes" in notice
    assert cap_notice(shown, rules, trusted=True) == ""  # a trusted account's rate flags only note its votes
    # an admin's exclusion is told apart from the rules'
    db.execute("UPDATE votes SET excluded = 1, reviewed = 1, excluded_reason = 'spam' WHERE id = 1")
    assert standing(db, s.annotator.id, rules, now=now + 4 * 60 + 31).set_aside == {"rate": 2, ADMIN: 1}


def test_the_warning_comes_a_tenth_before_a_cap_and_names_what_still_counts():
    rules = QualityRules()
    assert cap_margin(900) == 90 and cap_margin(5) == 3
    assert cap_notice(Standing(cast=809, counted=809, last_hour=809, last_3_hours=809), rules) == ""
    near = cap_notice(Standing(cast=810, counted=810, last_hour=810, last_3_hours=810), rules)
    assert near == ("You have cast 810 votes in the last hour: votes past 900 in an hour do not count. 90 more count "
                    "now, then take a break.")
    three = cap_notice(Standing(cast=1700, counted=1700, last_hour=500, last_3_hours=1700), rules)
    assert "votes past 1,800 in 3 hours do not count. 100 more count now" in three


def test_the_page_warns_before_the_bias_rule_sets_every_vote_aside():
    rules = QualityRules()
    leaning = Standing(cast=10, counted=10, side=("A", 9), model=("m1", 4))
    assert cap_notice(leaning, rules).startswith("9 of your 10 votes pick side A. From 20 votes on")
    balanced = Standing(cast=10, counted=10, side=("A", 6), model=("m1", 4))
    assert cap_notice(balanced, rules) == ""
    too_early = Standing(cast=4, counted=4, side=("A", 4), model=("m1", 2))
    assert cap_notice(too_early, rules) == ""  # from half the rule's 20 votes on
