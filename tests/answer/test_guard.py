"""The numeric guard on any text: what counts as a number, and what it reports as unsupported."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.answer.guard import (
    PERCENT,
    DraftSentence,
    GuardReport,
    check_numbers,
    guard_sentences,
    numbers_in,
    stated_numbers,
)


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


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("Revenue was 1,234 million.", [("1234", "million")]),
        ("Sales of $3.4bn and €1,200.50m.", [("3.4", "billion"), ("1200.50", "million")]),
        ("Margin rose to 12.5% from 11 per cent.", [("12.5", PERCENT), ("11", PERCENT)]),
        (
            "Costs of 5k, 4mm and 7 Thousand.",
            [("5", "thousand"), ("4", "million"), ("7", "thousand")],
        ),
        ("Ricavi di 2,4 milioni e 3 miliardi.", [("24", "million"), ("3", "billion")]),
        ("It took 12 months and 3 m of cable.", [("12", ""), ("3", "")]),  # "m" only glued
        ("In 2019 many more, 5 millionths.", [("2019", ""), ("5", "")]),  # a whole word only
        (
            "$40B, 40 bln, 40 mio, 40 Mrd, a $40-billion deal.",
            [("40", "billion")] * 2 + [("40", "million"), ("40", "billion"), ("40", "billion")],
        ),
        (
            "1 miliardo, 2 milione, 5 pct, 6 per  cent, 7 per cento.",
            [("1", "billion"), ("2", "million"), ("5", PERCENT), ("6", PERCENT), ("7", PERCENT)],
        ),
        (
            "It was 40\u200bbillion and 9\u202fmillion; 40 B of Class B.",
            [("40", "billion"), ("9", "million"), ("40", "")],
        ),  # a spaced letter is no magnitude
        (
            "From 2019-2020 on the 10-K, a 5-year plan.",
            [("2019", ""), ("2020", ""), ("10", ""), ("5", "")],
        ),
    ],
)
def test_stated_numbers_reads_the_magnitude_written_after_a_number(
    text: str, stated: list[tuple[str, str]]
) -> None:
    assert stated_numbers(text) == stated
    assert [n for n, _ in stated_numbers(text)] == numbers_in(text)


def test_a_magnitude_the_evidence_contradicts_is_unsupported() -> None:
    evidence = ["Revenue was 2,455 million and the margin 31.5%; the table: 80"]
    assert check_numbers("Revenue was 2,455 million.", evidence).supported
    assert check_numbers("Revenue was $2,455m.", evidence).supported
    assert check_numbers("Revenue was 2,455.", evidence).supported
    assert check_numbers("Revenue was 2,455 billion.", evidence).unsupported == ("2455",)
    assert check_numbers("The margin was 31.5 million.", evidence).unsupported == ("31.5",)
    assert check_numbers("Revenue was 31.5%.", evidence).supported
    assert check_numbers("Revenue was 80 billion.", evidence).supported  # a bare number


def test_magnitudes_found_by_the_second_review() -> None:
    # a table's text: the next row's label after a cell leaves the cell bare
    table = "Results (in millions) Net sales | 2,455 | 2,100 Cost of sales | 1,200 | 1,100"
    assert check_numbers("Net sales were $2,100 million.", [table]).supported
    assert check_numbers("Cost of sales was $1,100 million.", [table]).supported
    # a verbatim copy of "per\ncent" is a percentage on both sides
    assert check_numbers(
        "The margin rose 12 per cent.", ["The margin rose 12 per\ncent."]
    ).supported
    # spaced letters after a currency, other dashes, basis points
    million = ["Revenue was $40 million; the margin 12%."]
    for said in ("$40 B", "€ 40 MM", "$40\u2011billion", "$40\u2013billion"):
        expected = () if said == "€ 40 MM" else ("40",)
        assert check_numbers(f"Revenue was {said}.", million).unsupported == expected, said
    assert check_numbers("The margin fell 12 bps.", million).unsupported == ("12",)
    assert check_numbers("A class 40 B share.", million).supported  # no currency: a name


@pytest.mark.parametrize(
    ("text", "stated"),
    [
        ("€m 40, £bn 1.2, USD bn 2.5, $ m 3", "40 million|1.2 billion|2.5 billion|3 million"),
        ("EUR 40 m and USD mln 4.5 and EUR thousands 30", "40 million|4.5 million|30 thousand"),
        ("2,455 USD million; 7 EUR bn", "2455 million|7 billion"),
        ("In 2019 USD 40 m; in 2018 USD bn 3", "2019 |40 million|2018 |3 billion"),
        ("40 MM, 40 mm of rain, 40 thousand million", "40 million|40 |40 billion"),
        ("3.5 trn, Rs 40 crore, 9 lakhs", "3.5 trillion|40 crore|9 lakh"),
        ("eur 40 m, 40 usd bn, $m 40 million", "40 |40 |40 million"),
    ],
)
def test_magnitudes_written_before_the_number_or_after_a_currency_code(
    text: str, stated: str
) -> None:
    """A currency sign or code may carry the magnitude before its number (`€m 40`), and a
    code may stand between a number and its magnitude (`2,455 USD million`); codes are
    capitals only, and a code before the next number is not the previous number's word."""
    assert stated_numbers(text) == [tuple(said.split(" ")) for said in stated.split("|")]
    assert [n for n, _ in stated_numbers(text)] == numbers_in(text)


def test_a_magnitude_before_the_number_or_after_a_code_must_agree_with_the_evidence() -> None:
    """Each was read as a bare number before, which any passage holding the digits supported:
    `USD bn 40` passed against `USD 40 million`."""
    million = ["Revenue was USD 40 million, costs 2,455 thousand and 9 lakh of units."]
    for said in ("USD bn 40", "€bn 40", "40 thousand million", "2,455 USD million", "9 crore"):
        assert check_numbers(f"It was {said}.", million).unsupported, said
    for said in ("USD m 40", "€m 40", "40 MM", "2,455 USD thousand", "EUR 40 m", "9 lakhs"):
        assert check_numbers(f"It was {said}.", million).supported, said
    # in the evidence, a magnitude before the number is read as well: it supports only itself
    assert check_numbers("It was 40 billion.", ["Revenue: €m 40."]).unsupported == ("40",)
    assert check_numbers("It was 40 million.", ["Revenue: €m 40."]).supported


def test_magnitudes_before_the_number_found_by_the_review() -> None:
    # a heading's scale run into a count is not the count's magnitude
    assert check_numbers("Operating profit was £52m.", ["£m 52 weeks to 30 March"]).unsupported
    assert check_numbers("It grew USD 12 million.", ["All in USD m. 12 months ended"]).unsupported
    # a code before the next row's capitalised label leaves a cell bare, as any label does
    table = ["Net sales 2,455 USD Operating income 300 USD"]
    assert check_numbers("Net sales were 2,455 million.", table).supported
    # every magnitude word may stand before the number
    for said, evidence in (
        ("USD bln 40", "USD 40 million"),
        ("USD trn 3", "USD 3 million"),
        ("INR crore 40", "INR 40 lakh"),
        ("EUR Mio. 40", "EUR 40 billion"),
        ("€m\u202f40", "€40bn"),
    ):
        assert check_numbers(f"It was {said}.", [evidence]).unsupported, said
    # a text reads the same whatever else is in it: "$40-m" with or without a "€m 5" beside it
    decision = guard_sentences(
        [DraftSentence("Revenue was $40-m and costs were €m 5.", (1, 2))],
        {1: "Revenue was $40-m.", 2: "Costs were €m 5."},
    )
    assert decision[0].kept
    for text in ("$40\u2009m", "$40-m", "40\u202fUSD million"):
        alone = stated_numbers(text, worded=True)
        assert stated_numbers(f"{text}; EUR 5 m", worded=True)[: len(alone)] == alone, text


def test_a_number_followed_by_another_word_supports_no_magnitude() -> None:
    """'12 months' states 12 of something else: '12 billion' is not in it. A joining word
    after a number leaves it bare ('2,455 in 2019': the heading may say 'in millions')."""
    assert check_numbers("Revenue was 12 billion.", ["over 12 months"]).unsupported == ("12",)
    assert check_numbers("Revenue was 12.", ["over 12 months"]).supported
    assert check_numbers("Revenue was 2,455 million.", ["Revenue 2,455 in 2019"]).supported
    assert check_numbers("Revenue was 2,455 million.", ["| Revenue | 2,455 |"]).supported


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


_PIECES = st.sampled_from(
    [
        *"0123456789,.-%$€£ kmbKMB\u2011\u2013\u00a0\u200b\n",
        *("per", "cent", "basis", "points", "bps", "million", "bn", "Class", "of", "in"),
        *("USD", "EUR", "thousand", "MM", "trn", "crore", "mln"),
    ]
)


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_magnitudes_read_the_same_numbers_and_any_text_supports_itself(text: str) -> None:
    """The magnitude reading finds exactly the numbers numbers_in finds, in order, and a text
    copied verbatim from its evidence is always supported (the guard never drops a sentence
    for repeating its cited passage)."""
    for worded in (False, True):
        assert [n for n, _ in stated_numbers(text, worded=worded)] == numbers_in(text)
    assert check_numbers(text, [text]).supported
