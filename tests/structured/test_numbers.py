"""The fact-value grammar: what is a number, what is not, and why."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragspine.errors import IngestError
from ragspine.glossary import MetricKind
from ragspine.structured.numbers import MAX_TEXT_LENGTH, check_bounds, parse_value
from ragspine.structured.query import format_value
from structured.number_strategies import bounded_decimals

CURRENCY = MetricKind.CURRENCY
PERCENT = MetricKind.PERCENT
NUMBER = MetricKind.NUMBER


@pytest.mark.parametrize(
    ("text", "kind", "currency", "expected"),
    [
        ("1234.5", NUMBER, "", "1234.5"),
        ("1,234,567.89", NUMBER, "", "1234567.89"),
        ("1,234", NUMBER, "", "1234"),
        ("-27.1", NUMBER, "", "-27.1"),
        ("(27.1)", NUMBER, "", "-27.1"),
        # The typographic minus sign (U+2212) of European reports.
        ("\u2212298", NUMBER, "", "-298"),
        ("\u2212\u20ac5", CURRENCY, "EUR", "-5"),
        ("  (1,234)\t", NUMBER, "", "-1234"),
        ("0.30000000000000004", NUMBER, "", "0.30000000000000004"),
        ("1.50", NUMBER, "", "1.50"),
        ("1.5E+3", NUMBER, "", "1.5E+3"),
        ("2e-3", NUMBER, "", "0.002"),
        ("007", NUMBER, "", "7"),
        ("$12", CURRENCY, "USD", "12"),
        ("$ 12", CURRENCY, "USD", "12"),
        ("$ 12", CURRENCY, "CAD", "12"),
        ("-$1,234.5", CURRENCY, "USD", "-1234.5"),
        ("($1,234)", CURRENCY, "USD", "-1234"),
        ("$(1,234)", CURRENCY, "USD", "-1234"),
        ("$ (1,234)", CURRENCY, "USD", "-1234"),
        ("USD 12", CURRENCY, "USD", "12"),
        ("EUR12", CURRENCY, "EUR", "12"),
        ("€5", CURRENCY, "EUR", "5"),
        ("£5", CURRENCY, "GBP", "5"),
        ("¥5", CURRENCY, "JPY", "5"),
        ("7.5%", PERCENT, "", "7.5"),
        ("(7.5%)", PERCENT, "", "-7.5"),
        ("7.5", PERCENT, "", "7.5"),
        # 30 digits negated exactly (unary minus would round to 28 digits).
        ("(123456789012345678901234567890)", NUMBER, "", "-123456789012345678901234567890"),
        ("1e39", NUMBER, "", "1E+39"),
        ("1" + "0" * 39, NUMBER, "", "1" + "0" * 39),
        ("1" + ",000" * 13, NUMBER, "", "1" + "0" * 39),
        ("1e-39", NUMBER, "", "1E-39"),
    ],
)
def test_accepted_text(text: str, kind: MetricKind, currency: str, expected: str) -> None:
    value = parse_value(text, kind=kind, currency=currency)
    assert value == Decimal(expected) and value.as_tuple() == Decimal(expected).as_tuple()


@pytest.mark.parametrize(
    ("text", "kind", "currency", "why"),
    [
        ("(1,234", NUMBER, "", "has an unbalanced parenthesis"),
        ("(5", NUMBER, "", "has an unbalanced parenthesis"),
        ("5)", NUMBER, "", "has an unbalanced parenthesis"),
        (")5(", NUMBER, "", "has an unbalanced parenthesis"),
        ("((5))", NUMBER, "", "has nested parentheses"),
        ("(-5)", NUMBER, "", "has both a minus sign and parentheses"),
        ("-(5)", NUMBER, "", "has both a minus sign and parentheses"),
        ("--5", NUMBER, "", "has more than one minus sign"),
        ("-\u22125", NUMBER, "", "has more than one minus sign"),
        ("(\u22125)", NUMBER, "", "has both a minus sign and parentheses"),
        ("5\u2212", NUMBER, "", "minus sign that is not at the start"),
        ("\u2013298", NUMBER, "", "is not a number"),
        ("+5", NUMBER, "", "has a plus sign"),
        ("-+5", NUMBER, "", "has a plus sign"),
        ("5-", NUMBER, "", "minus sign that is not at the start"),
        ("$-12", CURRENCY, "USD", "minus sign that is not at the start"),
        ("1,23", NUMBER, "", "comma group that is not three digits"),
        ("1234,567", NUMBER, "", "comma group that is not three digits"),
        ("1,,234", NUMBER, "", "comma group that is not three digits"),
        ("0,123", NUMBER, "", "',' is ambiguous"),
        ("1.234,5", NUMBER, "", "has ',' after the decimal point"),
        ("1.234.567", NUMBER, "", "has more than one '.'"),
        ("5.", NUMBER, "", "digits on both sides of the decimal point"),
        (".5", NUMBER, "", "digits on both sides of the decimal point"),
        ("1 234", NUMBER, "", "white space inside the number"),
        ("$  12", CURRENCY, "USD", "white space inside the number"),
        ("7.5 %", PERCENT, "", "white space inside the number"),
        ("NaN", NUMBER, "", "is not a finite number"),
        ("-Infinity", NUMBER, "", "is not a finite number"),
        ("inf", NUMBER, "", "is not a finite number"),
        ("1e999999999", NUMBER, "", "exponent out of range"),
        ("1e", NUMBER, "", "exponent without digits"),
        ("1e40", NUMBER, "", "written out it needs 41 digits"),
        ("1e-40", NUMBER, "", "written out it needs 41 digits"),
        ("1" * 31, NUMBER, "", "has 31 significant digits; at most 30"),
        ("0.1" + "0" * 30 + "1", NUMBER, "", "has 32 significant digits"),
        ("twelve", NUMBER, "", "is not a number"),
        ("12 USD", CURRENCY, "USD", "is not a number"),
        ("%5", PERCENT, "", "percent sign that is not at the end"),
        ("", NUMBER, "", "is empty"),
        ("7.5%", NUMBER, "", "has a percent sign, which only percent metrics accept"),
        ("7.5%", CURRENCY, "USD", "has a percent sign, which only percent metrics accept"),
        ("$12", NUMBER, "", "has a currency ($), which only currency metrics accept"),
        ("USD 12", MetricKind.COUNT, "", "which only currency metrics accept"),
        ("€5", CURRENCY, "USD", "is in € but the fact's currency is USD"),
        ("USD 5", CURRENCY, "EUR", "is in USD but the fact's currency is EUR"),
        ("$5", CURRENCY, "EUR", "is in $ but the fact's currency is EUR"),
    ],
)
def test_rejected_text_says_why(text: str, kind: MetricKind, currency: str, why: str) -> None:
    with pytest.raises(IngestError, match=r"^value ") as caught:
        parse_value(text, kind=kind, currency=currency)
    assert why in str(caught.value)
    assert repr(text) in str(caught.value)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (1200, "1200"),
        (0.1, "0.1"),
        (0.30000000000000004, "0.30000000000000004"),
        (-2.5e-7, "-2.5E-7"),
        (Decimal("1234.500"), "1234.500"),
        (10**39, "1" + "0" * 39),
    ],
)
def test_numeric_cells_are_exact(cell: object, expected: str) -> None:
    assert str(parse_value(cell)) == expected


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        (True, "is a boolean, not a number"),
        (False, "is a boolean, not a number"),
        (float("nan"), "is not a finite number"),
        (float("inf"), "is not a finite number"),
        (Decimal("NaN"), "is not a finite number"),
        (Decimal("1E+999999999"), "written out it needs 1,000,000,000 digits"),
        (1e300, "written out it needs 301 digits"),
        (10**40, "written out it needs 41 digits"),
        (10**4000, "has more than 40 digits"),
        (10**35 + 1, "has 36 significant digits"),
        ([1], "is a list, not a number"),
    ],
)
def test_numeric_cells_are_bounded(cell: object, why: str) -> None:
    with pytest.raises(IngestError, match=r"^value ") as caught:
        parse_value(cell)
    assert why in str(caught.value)


def test_long_values_are_cut_in_messages() -> None:
    with pytest.raises(IngestError) as caught:
        parse_value("9" * 70 + "x")
    message = str(caught.value)
    assert "'" + "9" * 59 + "…'" in message and "9" * 60 not in message
    with pytest.raises(IngestError, match=f"a value has at most {MAX_TEXT_LENGTH}"):
        parse_value("1" * 10_000)


def test_huge_exponents_are_rejected_fast() -> None:
    start = time.perf_counter()
    for cell in ("1e999999999", "1E+99999999999999999999", Decimal("1e999999999")):
        with pytest.raises(IngestError):
            parse_value(cell)
    with pytest.raises(IngestError):
        check_bounds(Decimal("-1e-999999999"))
    assert time.perf_counter() - start < 0.5


_STYLES = st.sampled_from(["str", "plain", "grouped"])


@st.composite
def rendered(draw: st.DrawFn) -> tuple[str, Decimal, MetricKind, str]:
    """A bounded value written in the grammar (any allowed style), with its expected Decimal."""
    value = draw(bounded_decimals())
    style = draw(_STYLES)
    magnitude = value.copy_abs()
    if style == "str":
        body, expected = str(magnitude), value
    else:
        body = format(magnitude, ",f" if style == "grouped" else "f")
        expected = Decimal(format(value, "f"))
    kind = draw(st.sampled_from([NUMBER, CURRENCY, PERCENT]))
    currency = ""
    if kind is CURRENCY:
        currency = draw(st.sampled_from(["USD", "EUR"]))
        symbol = {"USD": "$", "EUR": "€"}[currency]
        body = draw(st.sampled_from([symbol, symbol + " ", currency + " ", ""])) + body
    elif kind is PERCENT and draw(st.booleans()):
        body += "%"
    if value.is_signed():
        body = draw(st.sampled_from(["-" + body, "(" + body + ")"]))
    pad = st.sampled_from(["", " ", "\t", "  "])
    return draw(pad) + body + draw(pad), expected, kind, currency


@given(rendered())
def test_every_rendering_parses_back_to_the_same_decimal(
    case: tuple[str, Decimal, MetricKind, str],
) -> None:
    text, expected, kind, currency = case
    value = parse_value(text, kind=kind, currency=currency)
    if expected.is_zero():
        expected = expected.copy_abs()  # a signed zero is read as zero (no answer shows "-0")
    assert value == expected and value.as_tuple() == expected.as_tuple()


@pytest.mark.parametrize("cell", ["-0", "(0)", "-0.00", "($0)", "-0e3"])
def test_a_negative_zero_is_zero(cell: str) -> None:
    value = parse_value(cell, kind=CURRENCY, currency="USD")
    assert value.is_zero() and not value.is_signed()


@given(bounded_decimals())
def test_answer_rendering_reads_back(value: Decimal) -> None:
    """What an answer shows (thousands separators, no exponent) is itself a valid cell."""
    assert parse_value(format_value(value)) == value


_NEAR_NUMBERS = st.text(alphabet="0123456789,.-+()$€%eE UScn\t", max_size=24)


@given(st.one_of(_NEAR_NUMBERS, st.text(max_size=40)))
def test_any_text_is_a_bounded_value_or_an_ingest_error(text: str) -> None:
    for kind in (NUMBER, CURRENCY, PERCENT):
        try:
            value = parse_value(text, kind=kind, currency="USD")
        except IngestError as exc:
            assert str(exc).startswith("value ") and "\n" not in str(exc)
        else:
            check_bounds(value)
            assert value == parse_value(format_value(value))
