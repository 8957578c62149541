"""Period grammar: parse many spellings of a reporting period into one normalized form.

Normalized labels: ``FY2024`` (fiscal year), ``FY2024-H1`` (fiscal half), ``FY2024-Q3`` (fiscal
quarter), ``2024-03`` (calendar month) and ``undated`` (:data:`UNDATED`: a figure whose source
states no period, such as a maturity table; it has no place in time). A fiscal year is named by
the calendar year in which it ends, so with a fiscal year starting in October, FY2024 runs from
2023-10-01 to 2024-09-30. With the default January start, fiscal and calendar years coincide.
Two-digit years map to 2000-2069 (``00``-``69``) and 1970-1999 (``70``-``99``).

Input is read in its matching form (:func:`ragspine.analysis.match_key`), so full-width digits
and letters, no-break spaces and case do not matter: a full-width ``FY2024`` is ``FY2024``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum
from functools import lru_cache

from ragspine.analysis import match_key
from ragspine.errors import PeriodError, quote_input
from ragspine.text import closest


class PeriodKind(StrEnum):
    YEAR = "year"
    HALF = "half"
    QUARTER = "quarter"
    MONTH = "month"
    UNDATED = "undated"


UNDATED = "undated"
"""The label of the period of a figure whose source states none (a contractual-obligations
table by maturity, a purchase price allocation): never guessed, never a year, never shifted,
and never among the periods a question picks by default unless nothing dated is stored."""


@dataclass(frozen=True, slots=True, order=True)
class Period:
    """One reporting period; ``year`` is fiscal except for months, which are calendar months."""

    kind: PeriodKind
    year: int
    number: int = 0

    @property
    def label(self) -> str:
        """The normalized label; :func:`parse_period` reads it back to the same period."""
        if self.kind is PeriodKind.YEAR:
            return f"FY{self.year}"
        if self.kind is PeriodKind.HALF:
            return f"FY{self.year}-H{self.number}"
        if self.kind is PeriodKind.QUARTER:
            return f"FY{self.year}-Q{self.number}"
        if self.kind is PeriodKind.UNDATED:
            return UNDATED
        return f"{self.year:04d}-{self.number:02d}"

    def __str__(self) -> str:
        return self.label

    def date_range(self, fiscal_start_month: int = 1) -> tuple[date, date]:
        """First and last calendar day of the period (an undated one has none: PeriodError)."""
        if self.kind is PeriodKind.UNDATED:
            raise PeriodError("an undated period has no calendar days")
        if self.kind is PeriodKind.MONTH:
            last = calendar.monthrange(self.year, self.number)[1]
            return date(self.year, self.number, 1), date(self.year, self.number, last)
        months = {PeriodKind.YEAR: 12, PeriodKind.HALF: 6, PeriodKind.QUARTER: 3}[self.kind]
        offset = (self.number - 1) * months if self.number else 0
        first_year = self.year if fiscal_start_month == 1 else self.year - 1
        start_index = first_year * 12 + (fiscal_start_month - 1) + offset
        end_index = start_index + months - 1
        end_year, end_month = divmod(end_index, 12)
        start = date(start_index // 12, start_index % 12 + 1, 1)
        end_day = calendar.monthrange(end_year, end_month + 1)[1]
        return start, date(end_year, end_month + 1, end_day)


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
ITALIAN_MONTHS = (
    "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno",
    "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre",
)  # fmt: skip
"""The Italian month names, in full (an answer locale's: ``31 dicembre 2019``); their
abbreviations are English words (``ago``, ``set``) and are not read."""
_MONTHS.update((name, number) for number, name in enumerate(ITALIAN_MONTHS, 1))
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))

_Y = r"(?P<y>\d{4}|\d{2})"
_FY = r"(?:fy\s*'?|fiscal\s+(?:year\s+)?)"
_PATTERNS: tuple[tuple[PeriodKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rf"^(?:{pattern})$"))
    for kind, pattern in (
        (PeriodKind.YEAR, rf"{_FY}{_Y}|(?P<y4>\d{{4}})"),
        (PeriodKind.QUARTER, rf"(?:{_FY})?{_Y}\s*-?\s*q(?P<n>[1-4])"),
        (PeriodKind.QUARTER, rf"q(?P<n>[1-4])\s*[-/ ]?\s*(?:{_FY})?{_Y}"),
        (PeriodKind.HALF, rf"(?:{_FY})?{_Y}\s*-?\s*h(?P<n>[12])"),
        (PeriodKind.HALF, rf"h(?P<n>[12])\s*[-/ ]?\s*(?:{_FY})?{_Y}"),
        (PeriodKind.MONTH, r"(?P<y4>\d{4})-(?P<m>0[1-9]|1[0-2])"),
        (PeriodKind.MONTH, rf"(?P<mn>{_MONTH_ALT})\.?\s*,?\s*(?P<y4>\d{{4}})"),
    )
)
RELATIVE_SHIFTS = {
    **{"this": 0, "current": 0, "last": -1, "previous": -1, "prior": -1, "preceding": -1},
    **{"next": 1, "following": 1, "subsequent": 1},
}
"""How many periods a word naming one relative to another moves it (``prior year``)."""
_RELATIVE = re.compile(
    rf"^(?P<which>{'|'.join(RELATIVE_SHIFTS)})[\s-]+"
    r"(?:fiscal\s+)?(?P<unit>year|half|quarter|month)$"
)


def full_year(digits: str) -> int:
    """A year written in two or four digits (``19`` is 2019, ``98`` is 1998)."""
    value = int(digits)
    if len(digits) == 4:
        return value
    return 2000 + value if value < 70 else 1900 + value


def period_of_date(day: date, kind: PeriodKind, fiscal_start_month: int = 1) -> Period:
    """The period of ``kind`` that contains ``day`` (no undated one does: PeriodError)."""
    if kind is PeriodKind.UNDATED:
        raise PeriodError("an undated period holds no day")
    if kind is PeriodKind.MONTH:
        return Period(kind, day.year, day.month)
    offset = (day.month - fiscal_start_month) % 12
    fiscal_year = (
        day.year if fiscal_start_month == 1 or day.month < fiscal_start_month else (day.year + 1)
    )
    number = {PeriodKind.YEAR: 0, PeriodKind.HALF: offset // 6 + 1}.get(kind, offset // 3 + 1)
    return Period(kind, fiscal_year, number)


def shift_period(period: Period, steps: int) -> Period:
    """The period ``steps`` periods of the same kind after (or before, if negative) ``period``."""
    if period.kind is PeriodKind.UNDATED:
        raise PeriodError("an undated period has no period before or after it")
    per_year = {PeriodKind.YEAR: 1, PeriodKind.HALF: 2, PeriodKind.QUARTER: 4, PeriodKind.MONTH: 12}
    count = per_year[period.kind]
    if count == 1:
        return Period(period.kind, period.year + steps)
    index = period.year * count + (period.number - 1) + steps
    return Period(period.kind, index // count, index % count + 1)


MAX_PERIOD_CHARS = 64
"""Longest period text read; every spelling of the grammar is far shorter."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def _normalize(raw: str) -> str:
    return match_key(raw.translate(_APOSTROPHES))


@lru_cache(maxsize=65536)
def parse_period(
    raw: str, reference_date: date | None = None, fiscal_start_month: int = 1
) -> Period:
    """Parse ``raw`` into a :class:`Period`; relative forms need ``reference_date``."""
    if not 1 <= fiscal_start_month <= 12:
        raise PeriodError(f"fiscal-year start month must be 1..12, got {fiscal_start_month}")
    if len(raw) > 4 * MAX_PERIOD_CHARS:
        raise _unrecognized(raw)
    text = _normalize(raw)
    if len(text) > MAX_PERIOD_CHARS:
        raise _unrecognized(raw)
    if text == UNDATED:
        return Period(PeriodKind.UNDATED, 0)
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        year_digits = groups.get("y") or groups.get("y4")
        assert year_digits is not None
        year = full_year(year_digits)
        if kind is PeriodKind.MONTH:
            month = int(groups["m"]) if groups.get("m") else _MONTHS[groups["mn"]]
            return Period(kind, year, month)
        return Period(kind, year, int(groups.get("n") or 0))
    relative = _RELATIVE.match(text)
    if relative is not None:
        if reference_date is None:
            raise PeriodError(
                f"relative period {quote_input(raw)} needs a reference date: pass reference_date"
            )
        current = period_of_date(reference_date, PeriodKind(relative["unit"]), fiscal_start_month)
        return shift_period(current, RELATIVE_SHIFTS[relative["which"]])
    raise _unrecognized(raw)


def _unrecognized(raw: str) -> PeriodError:
    return PeriodError(
        f"unrecognized period {quote_input(raw)}: use forms such as FY2024, FY24, 2024, 2024Q3, "
        "Q3 2024, 2024-Q3, Q3 FY24, H1 2024, 2024H1, 2024-03, March 2024, last quarter, or "
        "undated (no period stated)"
    )


PERIOD_EXAMPLES = ("FY2024", "2024Q3", "H1 2024", "2024-03", "last quarter")

_DIGITS = re.compile(r"[0-9]+")
_RELATIVE_SPELLINGS = tuple(
    f"{which} {unit}"
    for which in ("this", "last", "next")
    for unit in ("year", "half", "quarter", "month")
)


def _years_named(text: str) -> list[int]:
    """Four-digit years (1000-9999) a malformed period text seems to name, in order, at most 3."""
    years: list[int] = []
    for run in _DIGITS.findall(text):
        if len(run) == 2:
            candidates = [full_year(run)]
        elif len(run) >= 4:
            candidates = [int(run[:4]), int(run[-4:])]
        else:
            continue
        years.extend(y for y in candidates if 1000 <= y <= 9999 and y not in years)
    return years[:3]


def _spellings(year: int) -> list[tuple[str, str]]:
    """``(spelling, normalized label)`` for every period of ``year`` in the common spellings."""
    pairs = [(f"FY{year}", f"FY{year}"), (str(year), f"FY{year}")]
    for half in (1, 2):
        label = f"FY{year}-H{half}"
        pairs += [(label, label), (f"H{half} {year}", label), (f"{year}H{half}", label)]
    for quarter in range(1, 5):
        label = f"FY{year}-Q{quarter}"
        pairs += [(label, label), (f"Q{quarter} {year}", label), (f"{year}Q{quarter}", label)]
    for month in range(1, 13):
        label = f"{year}-{month:02d}"
        pairs += [(label, label), (f"{calendar.month_name[month]} {year}", label)]
    return pairs


def suggest_periods(raw: str, reference_date: date | None = None, limit: int = 3) -> list[str]:
    """Up to ``limit`` valid period spellings closest to a malformed ``raw`` (for the user only).

    Candidates come from the grammar alone: the normalized labels of the years ``raw`` names
    (else of ``reference_date``'s year, else this year's) and the relative forms, ranked by
    :func:`ragspine.text.closest`. Nothing stored is consulted, so a suggestion reveals nothing.
    """
    text = _normalize(raw[: 4 * MAX_PERIOD_CHARS])
    if not text or len(text) > MAX_PERIOD_CHARS:
        return []
    years = _years_named(text) or [(reference_date or date.today()).year]
    candidates = [pair for year in years for pair in _spellings(year)]
    candidates += [(phrase, phrase) for phrase in _RELATIVE_SPELLINGS]
    return closest(text, candidates, limit=limit)
