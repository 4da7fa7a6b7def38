"""Amounts of time read and compared by what they come to (bedside.text.times, issue 45's third round)."""

from __future__ import annotations

from bedside.text.conflicts import default_guard
from bedside.text.quantities import normalise_quantities
from bedside.text.times import in_days, same_time, times_conflict


def times(text: str) -> frozenset[str]:
    return in_days(default_guard().signals(text).times)


def test_rates_over_a_week_or_longer_are_rates_not_durations() -> None:
    assert default_guard().signals("I swim twice a week").times == {"2/week"}
    assert default_guard().signals("I get about four migraines a month").times == {"4/month"}
    assert default_guard().signals("the dressing is changed every other day").times == {"every 2 day"}
    assert times("twice a week") != times("for a week")


def test_one_amount_said_two_ways_agrees() -> None:
    for one, other in (
        ("every other week", "twice a month"),
        ("every six months", "twice a year"),
        ("for a week and a half", "for 10 days"),
        ("for two months", "for eight weeks"),
        ("for a month and a half", "for six weeks"),
        ("for a few days", "for 3 days"),
    ):
        assert not times_conflict(times(one), times(other)), (one, other)


def test_different_amounts_conflict() -> None:
    for one, other in (
        ("for three weeks", "for three months"),
        ("twice a week", "three times a week"),
        ("every two weeks", "every week"),
        ("for a few days", "for three weeks"),
        ("once a month", "once a week"),
    ):
        assert times_conflict(times(one), times(other)), (one, other)


def test_labels_that_are_not_amounts_compare_as_written() -> None:
    assert in_days(frozenset({"morning", "as needed"})) == {"morning", "as needed"}
    assert same_time("morning", "morning")
    assert not same_time("morning", "evening")
    assert not times_conflict(frozenset(), frozenset({"morning"}))


def test_a_pronoun_one_stays_a_word_and_half_a_month_is_read() -> None:
    assert normalise_quantities("The left one, ten days ago now.") == "The left one, 10 days ago now."
    assert normalise_quantities("one tablet") == "1 tablet"
    assert normalise_quantities("about a month and a half ago") == "about 1.5 months ago"
