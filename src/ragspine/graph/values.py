"""Exact numbers for graph results: Decimal sums with exact scale conversion, rational quotients,
rounding only when shown, and the lineage of every stored number used.

Sums and differences of stored values stay :class:`~decimal.Decimal` under a context that traps
any rounding; anything with a division (ratios, percentage changes, averages, derivations) is an
:class:`ExactNumber`, a fraction that is shown as a decimal, exactly when it has a finite decimal
form and otherwise rounded half-even to a stated number of places beside the fraction itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import (
    Context,
    Decimal,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
    Rounded,
    Underflow,
)
from fractions import Fraction
from typing import Any

from ragspine.errors import QueryError
from ragspine.glossary import MetricKind
from ragspine.stores.facts import StoredFact
from ragspine.structured.facts import FactKey, Scale
from ragspine.structured.query import render_amount

EXACT = Context(
    prec=4000,
    Emax=999_999,
    Emin=-999_999,
    traps=[Inexact, Rounded, InvalidOperation, DivisionByZero, Overflow, Underflow],
)
"""The arithmetic context of graph sums: wide enough for any stored value (at most a few hundred
digits written out) and trapping every rounding, so a result is exact or an error, never close."""

JSON_PLACES = 20
"""Decimal places of a value with no finite decimal form in ``to_dict`` (the fraction is given
beside it)."""

TEXT_PLACES = 2
"""Decimal places of such a value in human-readable text."""

ROUNDING_NOTE = (
    "values are exact; a value with no finite decimal form (a ratio such as 1/3) is shown "
    f"rounded half-even to {JSON_PLACES} decimal places in 'value' (to {TEXT_PLACES} in text), "
    "with 'exact': false and its exact 'fraction'"
)

_EXPONENT = {Scale.ONE: 0, Scale.THOUSAND: 3, Scale.MILLION: 6, Scale.BILLION: 9}


_UNSTATED = (
    "the scale of some figures is not stated in their source; they combine only with "
    "figures of the same source"
)


def finest(scales: Iterable[Scale]) -> Scale:
    """The scale with the smallest multiplier among ``scales`` (``ONE`` when there are none);
    ``UNKNOWN`` when all are, and a :class:`QueryError` when only some are (check with
    :func:`scales_combine` first)."""
    scales = list(scales)
    if Scale.UNKNOWN in scales:
        if all(scale is Scale.UNKNOWN for scale in scales):
            return Scale.UNKNOWN
        raise QueryError(_UNSTATED)
    return min(scales, key=_EXPONENT.__getitem__, default=Scale.ONE)


def scales_combine(facts: Iterable[FactRef]) -> bool:
    """Whether ``facts`` can be put on one scale: every scale stated, or none stated and all
    from one source document (one table's unstated scale; two tables' may differ)."""
    facts = list(facts)
    unstated = sum(1 for fact in facts if fact.scale is Scale.UNKNOWN)
    if not unstated:
        return True
    return unstated == len(facts) and len({fact.stored.source_doc_id for fact in facts}) == 1


def _shift(source: Scale, target: Scale) -> int:
    if Scale.UNKNOWN in (source, target):
        raise QueryError(_UNSTATED)
    return _EXPONENT[source] - _EXPONENT[target]


def convert(value: Decimal, source: Scale, target: Scale) -> Decimal:
    """``value`` at scale ``source`` expressed at scale ``target``, exactly (a power of ten);
    an unstated scale converts only to itself (a :class:`QueryError` otherwise)."""
    if source is target:
        return value
    shift = _shift(source, target)
    return value if shift == 0 else value.scaleb(shift, EXACT)


def convert_fraction(value: Fraction, source: Scale, target: Scale) -> Fraction:
    if source is target:
        return value
    return value * Fraction(10) ** _shift(source, target)


def exact_sum(values: Iterable[Decimal]) -> Decimal:
    """The exact sum of ``values`` (``0`` for none)."""
    total = Decimal(0)
    for value in values:
        total = EXACT.add(total, value)
    return total


def exact_difference(a: Decimal, b: Decimal) -> Decimal:
    """``a - b``, exactly."""
    return EXACT.subtract(a, b)


def plain(value: Decimal) -> str:
    """Decimal text without exponent (``1E+3`` is ``1000``), digits as computed."""
    return format(value, "f")


def _terminating(value: Fraction) -> Decimal | None:
    """``value`` as an exact decimal, or ``None`` when it has no finite decimal form."""
    denominator = value.denominator
    twos = fives = 0
    while denominator % 2 == 0:
        denominator //= 2
        twos += 1
    while denominator % 5 == 0:
        denominator //= 5
        fives += 1
    if denominator != 1:
        return None
    places = max(twos, fives)
    scaled = value.numerator * 10**places // value.denominator
    return Decimal(scaled).scaleb(-places, EXACT)


@dataclass(frozen=True, slots=True)
class ExactNumber:
    """An exact rational result; rounded only when shown, and the rounding is said."""

    value: Fraction

    @classmethod
    def of(cls, value: Decimal | int | Fraction) -> ExactNumber:
        return cls(Fraction(value))

    @property
    def decimal(self) -> Decimal | None:
        """The exact decimal, or ``None`` when the value has no finite decimal form."""
        return _terminating(self.value)

    @property
    def is_terminating(self) -> bool:
        return self.decimal is not None

    def rounded(self, places: int) -> Decimal:
        """Rounded half-even to ``places`` decimal places (for display only; one rounding, in
        integers, so no double rounding)."""
        return Decimal(round(self.value * 10**places)).scaleb(-places, EXACT)

    def shown(self, places: int = JSON_PLACES) -> str:
        """The exact decimal text, or the value rounded to ``places`` when it has none."""
        exact = self.decimal
        if exact is not None:
            return plain(exact.normalize(EXACT) if exact else Decimal(0))
        return plain(self.rounded(places))

    def text(self, unit: str = "") -> str:
        """For people: exact digits, or ``33.33 (rounded; exactly 100/3)``; ``unit`` (e.g.
        ``million US dollars``) goes after the number, before the note."""
        exact = self.decimal
        after = f" {unit}" if unit else ""
        if exact is not None:
            return format(exact.normalize(EXACT) if exact else Decimal(0), ",f") + after
        number = format(self.rounded(TEXT_PLACES), ",f")
        return f"{number}{after} (rounded; exactly {self.value})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.shown(),
            "exact": self.is_terminating,
            "fraction": f"{self.value.numerator}/{self.value.denominator}",
        }


@dataclass(frozen=True, slots=True)
class FactRef:
    """One stored fact a result used: its key, value and where it came from (lineage).

    Two fields, read through properties: roll-ups make one per leaf, thousands per call.
    """

    key: FactKey
    stored: StoredFact

    @classmethod
    def of(cls, key: FactKey, stored: StoredFact) -> FactRef:
        return cls(key, stored)

    @property
    def metric(self) -> str:
        return self.key.metric

    @property
    def entity(self) -> str:
        return self.key.entity

    @property
    def period(self) -> str:
        return self.key.period

    @property
    def channel(self) -> str:
        return self.key.channel

    @property
    def value(self) -> Decimal:
        return self.stored.value

    @property
    def unit(self) -> str:
        return self.stored.unit

    @property
    def currency(self) -> str:
        return self.stored.currency

    @property
    def scale(self) -> Scale:
        return self.stored.scale

    @property
    def source_doc_id(self) -> str:
        return self.stored.source_doc_id

    @property
    def locator(self) -> str:
        return self.stored.locator

    @property
    def valid_as_of(self) -> str:
        return self.stored.valid_as_of

    @property
    def measure(self) -> Measure:
        return Measure(self.unit, self.currency)

    def amount(self, kind: MetricKind = MetricKind.NUMBER) -> str:
        """The stored value with scale, currency and unit spelled out."""
        return render_amount(self.value, self.unit, self.currency, self.scale, kind)

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "entity": self.entity,
            "period": self.period,
            "channel": self.channel,
            "value": plain(self.value),
            "unit": self.unit,
            "currency": self.currency,
            "scale": self.scale.value,
            "source_doc_id": self.source_doc_id,
            "locator": self.locator,
            "valid_as_of": self.valid_as_of,
        }


@dataclass(frozen=True, slots=True, order=True)
class Measure:
    """What a number counts: its unit and currency (scales convert; measures do not)."""

    unit: str
    currency: str

    def __str__(self) -> str:
        if self.currency and self.currency != self.unit:
            return f"{self.unit or '-'} ({self.currency})"
        return self.unit or self.currency or "no unit"


def is_rate(kind: MetricKind, units: Iterable[str]) -> bool:
    """Whether a metric of ``kind`` measured in ``units`` is a rate (a percentage or a ratio):
    its values are compared, never summed (30 % + 40 % is no 70 % of anything)."""
    return kind in (MetricKind.PERCENT, MetricKind.RATIO) or any(
        unit in {"%", "percent"} for unit in units
    )


def check_one_measure(facts: Iterable[FactRef], what: str) -> Measure | None:
    """The one measure of ``facts`` (``None`` when there are none); a
    :class:`~ragspine.errors.QueryError` naming each measure and the entities (and channels)
    using it when they differ."""
    facts = list(facts)
    kinds = {(fact.unit, fact.currency) for fact in facts}
    if len(kinds) <= 1:
        return Measure(*kinds.pop()) if kinds else None
    users: dict[Measure, list[str]] = {}
    for fact in facts:
        name = fact.entity if fact.channel == "total" else f"{fact.entity}/{fact.channel}"
        users.setdefault(fact.measure, []).append(name)
    parts = []
    for measure in sorted(users):
        names = users[measure]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        parts.append(f"{measure}: {shown}")
    raise QueryError(
        f"cannot {what}: the facts have different units ({'; '.join(parts)}); "
        "units and currencies never convert: restate the facts in one unit"
    )


def check_scales(facts: Iterable[FactRef], what: str) -> None:
    """A :class:`~ragspine.errors.QueryError` naming the facts whose scale their source does
    not state, unless :func:`scales_combine` holds."""
    facts = list(facts)
    if scales_combine(facts):
        return
    unstated = sorted(
        f"{fact.entity} ({fact.stored.source_doc_id})"
        for fact in {f.key: f for f in facts if f.scale is Scale.UNKNOWN}.values()
    )
    shown = ", ".join(unstated[:8]) + (
        f" and {len(unstated) - 8} more" if len(unstated) > 8 else ""
    )
    raise QueryError(
        f"cannot {what}: the scale of {shown} is not stated in its source, so it never "
        "converts and combines only with figures of the same source: store the scale"
    )
