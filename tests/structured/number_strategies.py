"""Hypothesis strategies for fact values within the bounds of the number grammar."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import strategies as st

from ragspine.structured.numbers import MAX_DIGITS, MAX_WRITTEN_DIGITS


@st.composite
def bounded_decimals(draw: st.DrawFn) -> Decimal:
    """Finite Decimals within the grammar: MAX_DIGITS significant, MAX_WRITTEN_DIGITS written."""
    size = draw(st.integers(1, MAX_DIGITS))
    coefficient = draw(st.integers(0, 10**size - 1))
    digits = tuple(int(c) for c in str(coefficient))
    digits += (0,) * draw(st.integers(0, MAX_WRITTEN_DIGITS - len(digits)))
    # Written out: max(n + e, 1) integer digits plus max(-e, 0) fraction digits.
    exponent = draw(st.integers(-(MAX_WRITTEN_DIGITS - 1), MAX_WRITTEN_DIGITS - len(digits)))
    return Decimal((draw(st.integers(0, 1)), digits, exponent))
