"""``ratio``: one stored fact divided by another (a share in percent, or a plain ratio).

Both facts are read with one ``FactStore.lookup_many`` at the asker's level, so a hidden fact
reads exactly like a missing one. The quotient is exact (a fraction), computed at scale one after
exact scale conversion; the two facts must share a unit and currency (units never convert).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from ragspine.graph.values import (
    ROUNDING_NOTE,
    ExactNumber,
    FactRef,
    convert_fraction,
    scales_combine,
)
from ragspine.stores.facts import FactStore
from ragspine.structured.facts import FactKey, Scale


class RatioStatus(StrEnum):
    FOUND = "found"
    NOT_FOUND = "not_found"  # a fact is missing or not visible
    NOT_COMPUTABLE = "not_computable"  # different units, or the denominator is zero


@dataclass(frozen=True, slots=True)
class RatioResult:
    """``numerator / denominator`` (times 100 when ``percent``), with both facts as lineage."""

    status: RatioStatus
    numerator: FactKey
    denominator: FactKey
    percent: bool
    value: ExactNumber | None
    numerator_fact: FactRef | None
    denominator_fact: FactRef | None
    reason: str

    @property
    def lineage(self) -> tuple[FactRef, ...]:
        return tuple(f for f in (self.numerator_fact, self.denominator_fact) if f is not None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "ratio",
            "status": self.status.value,
            "percent": self.percent,
            "value": None if self.value is None else self.value.to_dict(),
            "numerator": None if self.numerator_fact is None else self.numerator_fact.to_dict(),
            "denominator": None
            if self.denominator_fact is None
            else self.denominator_fact.to_dict(),
            "reason": self.reason,
            "rounding": ROUNDING_NOTE,
        }


def ratio(
    store: FactStore,
    *,
    numerator: FactKey,
    denominator: FactKey,
    percent: bool,
    max_level: int,
) -> RatioResult:
    """``numerator / denominator`` (``* 100`` when ``percent``) of two stored facts."""
    stored = store.lookup_many([numerator, denominator], max_level=max_level)
    top = FactRef.of(numerator, stored[numerator]) if numerator in stored else None
    bottom = FactRef.of(denominator, stored[denominator]) if denominator in stored else None

    def result(status: RatioStatus, value: ExactNumber | None, reason: str) -> RatioResult:
        return RatioResult(status, numerator, denominator, percent, value, top, bottom, reason)

    if top is None or bottom is None:
        return result(RatioStatus.NOT_FOUND, None, "missing")
    if top.measure != bottom.measure:
        return result(RatioStatus.NOT_COMPUTABLE, None, "units")
    if not scales_combine((top, bottom)):
        return result(RatioStatus.NOT_COMPUTABLE, None, "scale")
    if top.scale is Scale.UNKNOWN:  # one table's unstated scale: it cancels out
        a, b = Fraction(top.value), Fraction(bottom.value)
    else:
        a = convert_fraction(Fraction(top.value), top.scale, Scale.ONE)
        b = convert_fraction(Fraction(bottom.value), bottom.scale, Scale.ONE)
    if b == 0:
        return result(RatioStatus.NOT_COMPUTABLE, None, "zero")
    quotient = a / b * (100 if percent else 1)
    return result(RatioStatus.FOUND, ExactNumber(quotient), "")
