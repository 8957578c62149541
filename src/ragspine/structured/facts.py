"""The fact: one stored number with its keys, unit, source and lineage."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from ragspine.errors import IngestError
from ragspine.security import Sensitivity
from ragspine.structured.numbers import check_bounds


class Scale(StrEnum):
    """The multiplier a stored value is expressed in (``1,452.4`` at ``million``).

    ``UNKNOWN``: the source states none (a table with no ``in millions`` anywhere): the value
    is as written, at a scale nobody stated. It is never converted; figures at it combine only
    with figures of the same source document (the same table's one unstated scale), and an
    answer says the scale is not stated."""

    ONE = "one"
    THOUSAND = "thousand"
    MILLION = "million"
    BILLION = "billion"
    UNKNOWN = "unknown"

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
            "not stated": "unknown",
        }
        try:
            return cls(aliases.get(text, text))
        except ValueError:
            valid = ", ".join(s.value for s in cls)
            raise IngestError(f"unknown scale {raw!r}: use one of {valid}") from None

    @property
    def multiplier(self) -> int:
        """What one unit at this scale is worth (``1000`` for ``thousand``); a ValueError for
        :attr:`UNKNOWN`, which is worth nothing anyone stated."""
        if self is Scale.UNKNOWN:
            raise ValueError("the scale is not stated: it has no multiplier")
        return _MULTIPLIERS[self]


SCALE_WORDS = frozenset({Scale.THOUSAND, Scale.MILLION, Scale.BILLION})
"""The scales a scale word states (``in thousands``, ``$ million``): a figure at one is an
amount, never a percentage, a rate or a count of people."""

_MULTIPLIERS = {
    Scale.ONE: 1,
    Scale.THOUSAND: 1_000,
    Scale.MILLION: 1_000_000,
    Scale.BILLION: 1_000_000_000,
}


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
        check_bounds(self.value)
        if not self.source_doc_id or not self.locator:
            raise IngestError(
                f"fact {self.key} needs both source_doc_id and locator (where the number came from)"
            )

    @property
    def key(self) -> FactKey:
        return FactKey(self.metric, self.entity, self.period, self.channel)


_HEADING = re.compile(
    r" under (?P<quote>['\"])(?P<heading>.*?)(?P=quote)(?: \(row (?P<row>\d+)\))?(?:,|$)"
)


def heading_note(heading: str, row: int | None = None) -> str:
    """The locator's note of the section heading a table row is read under (``under
    'Inventories:'``, and the heading's own row number when known: ``under 'Inventories:' (row
    4)``): importers that read headings write it with this, so that answering can tell what the
    heading says about the row (:func:`locator_heading`) and which rows follow it."""
    return f" under {heading!r}" + (f" (row {row})" if row is not None else "")


def locator_heading(locator: str) -> str | None:
    """The section heading a locator names (:func:`heading_note`), if any."""
    found = _HEADING.search(locator)
    return found["heading"] if found is not None else None


_COLUMN = re.compile(r", column (?:\d+ )?(?P<quote>['\"])(?P<column>.*?)(?P=quote)(?:,|$)")


def locator_column(locator: str) -> str:
    """The column header a locator quotes (``..., column 2 '1 January 2019'``: the TAT-QA and
    ConvFinQA importers write one), or an empty string."""
    found = _COLUMN.search(locator)
    return found["column"] if found is not None else ""


def locator_heading_row(locator: str) -> int | None:
    """The row number of the heading a locator names, when the importer recorded it."""
    found = _HEADING.search(locator)
    return int(found["row"]) if found is not None and found["row"] else None


def utc_now() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
