"""The fact: one stored number with its keys, unit, source and lineage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from ragspine.errors import IngestError
from ragspine.security import Sensitivity


class Scale(StrEnum):
    """The multiplier a stored value is expressed in (``1,452.4`` at ``million``)."""

    ONE = "one"
    THOUSAND = "thousand"
    MILLION = "million"
    BILLION = "billion"

    @classmethod
    def parse(cls, raw: str | Scale | None) -> Scale:
        if raw is None or raw == "":
            return cls.ONE
        if isinstance(raw, Scale):
            return raw
        text = raw.strip().lower()
        aliases = {
            "units": "one",
            "unit": "one",
            "1": "one",
            "thousands": "thousand",
            "k": "thousand",
            "millions": "million",
            "m": "million",
            "mn": "million",
            "billions": "billion",
            "bn": "billion",
            "b": "billion",
        }
        try:
            return cls(aliases.get(text, text))
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise IngestError(f"unknown scale {raw!r}: use one of {valid}") from None


@dataclass(frozen=True, slots=True)
class FactKey:
    """The identity of a fact."""

    metric: str
    entity: str
    period: str
    channel: str


@dataclass(frozen=True, slots=True)
class Fact:
    """One normalized number and where it came from."""

    metric: str
    entity: str
    period: str
    channel: str
    value: Decimal
    unit: str
    currency: str
    scale: Scale
    source_doc_id: str
    locator: str
    sensitivity: Sensitivity = Sensitivity.INTERNAL
    valid_as_of: str = ""
    ingested_at: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, Decimal) or not self.value.is_finite():
            raise IngestError(f"fact value must be a finite Decimal, got {self.value!r}")
        if not self.source_doc_id or not self.locator:
            raise IngestError(
                f"fact {self.key} needs both source_doc_id and locator (where the number came from)"
            )

    @property
    def key(self) -> FactKey:
        return FactKey(self.metric, self.entity, self.period, self.channel)


def parse_decimal(raw: object, where: str) -> Decimal:
    """Read an exact decimal from a cell: ``1,234.5``, ``(27.1)``, ``$ 12``, ``7%``, ints, floats.

    Floats are read through their shortest repr, so ``0.30000000000000004`` stays exact.
    """
    if isinstance(raw, bool):
        raise IngestError(f"{where}: value {raw!r} is a boolean, not a number")
    if isinstance(raw, Decimal):
        value = raw
    elif isinstance(raw, int | float):
        value = Decimal(repr(raw)) if isinstance(raw, float) else Decimal(raw)
    elif isinstance(raw, str):
        text = raw.strip().replace(",", "").replace("$", "").replace("%", "").replace(" ", "")
        negative = text.startswith("(") and text.endswith(")")
        text = text.strip("()")
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise IngestError(f"{where}: value {raw!r} is not a number") from None
        if negative:
            value = -value
    else:
        raise IngestError(f"{where}: value {raw!r} is not a number")
    if not value.is_finite():
        raise IngestError(f"{where}: value {raw!r} is not a finite number")
    return value


def utc_now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
