from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.errors import PeriodError
from ragspine.periods import Period, PeriodKind, parse_period, period_of_date

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
    st.sampled_from(list(PeriodKind)),
)
def test_period_of_date_contains_the_date(day: date, start: int, kind: PeriodKind) -> None:
    period = period_of_date(day, kind, start)
    first, last = period.date_range(start)
    assert first <= day <= last
    assert parse_period(period.label, None, start) == period
