"""The numeric guard on any text: what counts as a number, and what it reports as unsupported."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.answer.guard import GuardReport, check_numbers, numbers_in


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Revenue was 1,234 million.", ["1234"]),
        ("A loss of (1,234) in 2023.", ["1234", "2023"]),
        ("Margin rose to 12.5% from 11%.", ["12.5", "11"]),
        ("Sales of $3.4bn and €1,200.50m.", ["3.4", "1200.50"]),
        ("Growth of 3,4 percent.", ["34"]),  # a comma between digits is a thousands separator
        ("Version 1.2.3 shipped in Q4.", ["1.2.3", "4"]),
        ("It ended in 2023. Then 7 more.", ["2023", "7"]),
        ("No figures here.", []),
    ],
)
def test_numbers_in_reads_numbers_as_the_answer_always_has(text: str, numbers: list[str]) -> None:
    assert numbers_in(text) == numbers


def test_a_number_missing_from_the_evidence_is_reported() -> None:
    report = check_numbers("Revenue grew 12% to 1,200 million; APAC fell 7%.", ["grew 12% to 1200"])
    assert report == GuardReport(numbers=("12", "1200", "7"), unsupported=("7",))
    assert not report.supported


def test_formats_of_the_same_number_support_each_other() -> None:
    evidence = ["Net income (1,234) and a margin of 12.5%, sales $3.4bn."]
    report = check_numbers("A loss of 1234, margin 12.5 and $3.4 billion.", evidence)
    assert report.supported and report.unsupported == ()
    assert check_numbers("A margin of 12.50%.", evidence).unsupported == ("12.50",)


def test_any_evidence_text_may_support_a_number() -> None:
    assert check_numbers("5 and 6", ["only 5", "and 6 here"]).supported
    assert check_numbers("5 and 6", ["only 5"]).unsupported == ("6",)


def test_text_without_numbers_passes_and_no_evidence_supports_nothing() -> None:
    assert check_numbers("Revenue rose.", []).supported
    assert check_numbers("Revenue rose 5% and 5% again.", []).unsupported == ("5", "5")


@given(st.lists(st.integers(0, 10**9), max_size=6), st.lists(st.integers(0, 10**9), max_size=6))
def test_unsupported_is_exactly_the_numbers_absent_from_the_evidence(
    said: list[int], known: list[int]
) -> None:
    text = " and ".join(f"{n:,}" for n in said)
    report = check_numbers(text, [" ".join(map(str, known))])
    assert report.numbers == tuple(map(str, said))
    assert report.unsupported == tuple(str(n) for n in said if n not in known)
