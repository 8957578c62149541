"""Exact values: scale conversion, sums that break floats, rational results shown with stated
rounding, and the unit check."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragspine.errors import QueryError
from ragspine.graph.values import (
    JSON_PLACES,
    ExactNumber,
    FactRef,
    check_one_measure,
    convert,
    convert_fraction,
    exact_sum,
    finest,
)
from ragspine.security import Sensitivity
from ragspine.stores.facts import StoredFact
from ragspine.structured.facts import FactKey, Scale


def test_float_breaking_sums_are_exact() -> None:
    assert 0.1 + 0.2 != 0.3  # the float trap this module avoids
    assert exact_sum([Decimal("0.1"), Decimal("0.2")]) == Decimal("0.3")
    thirty = Decimal("123456789012345678901234567890.123456789012345678901234567891")
    total = exact_sum([thirty, thirty, Decimal("-0.000000000000000000000000000001")])
    assert str(total) == "246913578024691357802469135780.246913578024691357802469135781"
    assert exact_sum([]) == 0


def test_scales_convert_exactly() -> None:
    assert convert(Decimal("1.5"), Scale.MILLION, Scale.THOUSAND) == Decimal("1500")
    assert convert(Decimal("1"), Scale.THOUSAND, Scale.BILLION) == Decimal("0.000001")
    assert convert(
        Decimal("0.123456789012345678901234567891"), Scale.BILLION, Scale.ONE
    ) == Decimal("123456789.012345678901234567891")
    assert finest([Scale.BILLION, Scale.THOUSAND, Scale.MILLION]) is Scale.THOUSAND
    assert finest([]) is Scale.ONE
    assert convert_fraction(Fraction(1, 3), Scale.THOUSAND, Scale.ONE) == Fraction(1000, 3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.decimals(
            allow_nan=False, allow_infinity=False, places=6, max_value=10**20, min_value=-(10**20)
        ),
        max_size=20,
    ),
    st.sampled_from([s for s in Scale if s is not Scale.UNKNOWN]),
    st.sampled_from([s for s in Scale if s is not Scale.UNKNOWN]),
)
def test_sum_and_conversion_agree_with_fractions(
    values: list[Decimal], source: Scale, target: Scale
) -> None:
    converted = [convert(v, source, target) for v in values]
    expected = sum(
        (Fraction(v) * source.multiplier / target.multiplier for v in values), Fraction(0)
    )
    assert Fraction(exact_sum(converted)) == expected


@pytest.mark.parametrize("stated", [s for s in Scale if s is not Scale.UNKNOWN])
def test_a_scale_no_source_states_converts_only_to_itself(stated: Scale) -> None:
    """A value whose source states no scale is worth no multiple of a stated one: converting
    either way, or taking the finest of both, is an error rather than a silent 'one'."""
    assert convert(Decimal("1.5"), Scale.UNKNOWN, Scale.UNKNOWN) == Decimal("1.5")
    assert finest([Scale.UNKNOWN, Scale.UNKNOWN]) is Scale.UNKNOWN
    for source, target in ((Scale.UNKNOWN, stated), (stated, Scale.UNKNOWN)):
        with pytest.raises(QueryError, match="not stated in their source"):
            convert(Decimal("1.5"), source, target)
        with pytest.raises(QueryError, match="not stated in their source"):
            convert_fraction(Fraction(3, 2), source, target)
    with pytest.raises(QueryError, match="not stated in their source"):
        finest([Scale.UNKNOWN, stated])
    with pytest.raises(ValueError, match="not stated"):
        _ = Scale.UNKNOWN.multiplier


def test_exact_numbers_show_exact_digits_or_say_they_round() -> None:
    assert ExactNumber(Fraction(3, 10)).to_dict() == {
        "value": "0.3",
        "exact": True,
        "fraction": "3/10",
    }
    third = ExactNumber(Fraction(100, 3)).to_dict()
    assert third == {
        "value": "33." + "3" * JSON_PLACES,
        "exact": False,
        "fraction": "100/3",
    }
    assert ExactNumber(Fraction(2, 3)).text() == "0.67 (rounded; exactly 2/3)"
    assert ExactNumber(Fraction(1000)).text() == "1,000"
    assert ExactNumber.of(Decimal("-0.00")).shown() == "0"


def test_rounding_is_half_even_and_never_double() -> None:
    # 0.134999...9 (just under the tie) must go down, not up via 0.135.
    just_under = ExactNumber(Fraction(135, 1000) - Fraction(1, 10**40))
    assert just_under.rounded(2) == Decimal("0.13")
    assert ExactNumber(Fraction(1, 6)).rounded(2) == Decimal("0.17")
    assert ExactNumber(Fraction(-1, 6)).rounded(2) == Decimal("-0.17")


def _ref(entity: str, unit: str, currency: str) -> FactRef:
    key = FactKey("revenue", entity, "FY2024", "total")
    stored = StoredFact(Decimal(1), unit, currency, Scale.ONE, "d", "l", Sensitivity.PUBLIC, "")
    return FactRef(key, stored)


def test_one_measure_or_an_error_naming_who_uses_which() -> None:
    assert check_one_measure([], "sum") is None
    same = [_ref("a", "USD", "USD"), _ref("b", "USD", "USD")]
    assert str(check_one_measure(same, "sum")) == "USD"
    with pytest.raises(QueryError) as caught:
        check_one_measure([*same, _ref("c", "EUR", "EUR"), _ref("d", "people", "")], "roll up x")
    message = str(caught.value)
    assert "cannot roll up x" in message
    assert "EUR: c" in message and "USD: a, b" in message and "people: d" in message
