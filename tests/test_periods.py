from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.errors import PeriodError
from ragspine.periods import (
    UNDATED,
    Period,
    PeriodKind,
    parse_period,
    period_of_date,
    shift_period,
    suggest_periods,
)

FORMS = {
    "FY2024": "FY2024",
    "FY24": "FY2024",
    "fy 2024": "FY2024",
    "2024": "FY2024",
    "2024Q3": "FY2024-Q3",
    "Q3 2024": "FY2024-Q3",
    "2024-Q3": "FY2024-Q3",
    "Q3 FY24": "FY2024-Q3",
    "FY2024-Q3": "FY2024-Q3",
    "H1 2024": "FY2024-H1",
    "2024H1": "FY2024-H1",
    "2024-03": "2024-03",
    "March 2024": "2024-03",
    "mar 2024": "2024-03",
}


@pytest.mark.parametrize(("raw", "label"), FORMS.items())
def test_grammar(raw: str, label: str) -> None:
    assert parse_period(raw).label == label


@pytest.mark.parametrize(
    ("raw", "start", "label"),
    [
        ("this year", 1, "FY2024"),
        ("last year", 1, "FY2023"),
        ("last quarter", 1, "FY2024-Q3"),
        ("previous half", 1, "FY2024-H1"),
        ("this year", 10, "FY2025"),
        ("last quarter", 10, "FY2024-Q4"),
        ("previous half", 10, "FY2024-H2"),
        ("last year", 7, "FY2024"),
        ("last month", 4, "2024-10"),
    ],
)
def test_relative_forms_against_reference(raw: str, start: int, label: str) -> None:
    assert parse_period(raw, date(2024, 11, 15), start).label == label


def test_relative_needs_reference_and_garbage_fails() -> None:
    with pytest.raises(PeriodError, match="reference date"):
        parse_period("last quarter")
    with pytest.raises(PeriodError, match="unrecognized period 'Q5 2024'"):
        parse_period("Q5 2024")


def test_fiscal_quarter_dates_follow_start_month() -> None:
    q1 = parse_period("Q1 FY2024", None, 10)
    assert q1.date_range(10) == (date(2023, 10, 1), date(2023, 12, 31))
    assert parse_period("FY2024").date_range() == (date(2024, 1, 1), date(2024, 12, 31))


periods = st.one_of(
    st.builds(Period, st.just(PeriodKind.YEAR), st.integers(1970, 2069)),
    st.builds(Period, st.just(PeriodKind.HALF), st.integers(1970, 2069), st.integers(1, 2)),
    st.builds(Period, st.just(PeriodKind.QUARTER), st.integers(1970, 2069), st.integers(1, 4)),
    st.builds(Period, st.just(PeriodKind.MONTH), st.integers(1970, 2069), st.integers(1, 12)),
)


@given(periods, st.integers(1, 12))
def test_label_round_trips(period: Period, start: int) -> None:
    assert parse_period(period.label, None, start) == period


@given(
    st.dates(date(1971, 1, 1), date(2068, 12, 31)),
    st.integers(1, 12),
    st.sampled_from([kind for kind in PeriodKind if kind is not PeriodKind.UNDATED]),
)
def test_period_of_date_contains_the_date(day: date, start: int, kind: PeriodKind) -> None:
    period = period_of_date(day, kind, start)
    first, last = period.date_range(start)
    assert first <= day <= last
    assert parse_period(period.label, None, start) == period


def fullwidth(text: str) -> str:
    """``text`` with ASCII letters and digits typed as their full-width forms."""
    return "".join(chr(ord(ch) + 0xFEE0) if ch.isalnum() else ch for ch in text)


@pytest.mark.parametrize(
    ("raw", "label"),
    [
        (fullwidth("FY2024"), "FY2024"),
        (fullwidth("FY24"), "FY2024"),
        ("Q\uff13 2024", "FY2024-Q3"),
        ("Q3\u00a02024", "FY2024-Q3"),
        ("H1\u30002024", "FY2024-H1"),
        (fullwidth("2024-03"), "2024-03"),
        ("FY\u201924", "FY2024"),
        (fullwidth("March") + " 2024", "2024-03"),
        ("fiscal\u00a0year\u00a02024", "FY2024"),
    ],
)
def test_unicode_spellings_parse_like_their_plain_forms(raw: str, label: str) -> None:
    assert parse_period(raw).label == label


@pytest.mark.parametrize(
    ("raw", "first"),
    [
        ("FY20244", "FY2024"),
        ("lst quarter", "last quarter"),
        ("next yaer", "next year"),
        ("2024/03", "2024-03"),
        ("Marhc 2024", "2024-03"),
        ("Q3 2O24", "FY2024-Q3"),
        (fullwidth("FY2O24"), "FY2024"),
    ],
)
def test_suggestions_are_valid_periods_closest_first(raw: str, first: str) -> None:
    suggestions = suggest_periods(raw, date(2025, 2, 1))
    assert suggestions[0] == first
    assert 1 <= len(suggestions) <= 3 and len(set(suggestions)) == len(suggestions)
    for suggestion in suggestions:
        parse_period(suggestion, date(2025, 2, 1))


def test_suggestions_break_ties_by_label_and_need_some_likeness() -> None:
    # Q1..Q4 2024 are equally close to "Q7 2024": the smallest labels win, in order
    assert suggest_periods("Q7 2024") == ["FY2024-Q1", "FY2024-Q2", "FY2024-Q3"]
    assert suggest_periods("banana") == []
    assert suggest_periods("x" * 100_000) == []
    assert suggest_periods("Q3", date(2025, 2, 1)) == ["FY2025-Q3"]


def test_undated_is_a_period_with_no_place_in_time() -> None:
    """A figure whose source states no period (a maturity table) is stored as ``undated``:
    the grammar reads it back in any case, and it has no days, no neighbours and no day
    falls in it."""
    undated = parse_period("Undated")
    assert undated == parse_period(UNDATED) and undated.label == UNDATED
    assert undated.kind is PeriodKind.UNDATED
    with pytest.raises(PeriodError, match="no calendar days"):
        undated.date_range()
    with pytest.raises(PeriodError, match="no period before or after it"):
        shift_period(undated, 1)
    with pytest.raises(PeriodError, match="holds no day"):
        period_of_date(date(2024, 1, 1), PeriodKind.UNDATED)
    with pytest.raises(PeriodError, match="or undated"):
        parse_period("sometime")


def test_a_huge_period_fails_fast_with_a_short_message() -> None:
    for raw in ("9" * 1_000_000, "FY" + " " * 1_000_000 + "2024"):
        with pytest.raises(PeriodError) as err:
            parse_period(raw)
        assert len(str(err.value)) < 300 and "characters)" in str(err.value)
