"""Importer for TAT-QA documents: each table cell under a period column becomes a fact.

A TAT-QA document is one table plus paragraphs; its identity is the table ``uid`` (there is no
company name), so each document becomes one entity (code ``tatqa-`` + the uid, the uid as label).

Reading a table:

- Header rows are the rows before the first data row (a row with a number in a value column
  that is not itself a period). Among them, a row with only a label is a section heading.
- A column's period comes from its header cells read by the period grammar
  (:func:`ragspine.periods.parse_period`), after footnote marks such as ``(4)`` and unit marks
  such as ``€m`` or ``$'000`` are removed. A column with no period (``As Reported``,
  ``Adjustments``, ``Change``) is skipped and reported, and so are columns that share a period,
  and a lone period header over several value columns (it may span them). Columns sharing a
  period are kept when one header row of captions tells every such pair apart (``Revenues``
  over ``2019 | 2018``, ``Operating income`` over ``2019 | 2018``): each caption heads the
  columns from its own to the next, prefixes their rows' metric labels (``Revenues: Teekay
  LNG``) and sets their scale when it states one (else the one stated outside the captions).
- A table whose columns are measures (``Gross Carrying Amount | Net``) takes its period from a
  row's section, a title row or the corner cell; one that states no period anywhere (``Total |
  Less Than 1 Year | 1-3 Years``) is stored as ``undated`` (:data:`ragspine.periods.UNDATED`),
  never given a period from its paragraphs. One whose rows roll a balance forward
  (``Outstanding at September 30, 2016``, ``Granted``, ``Exercised``, ``Outstanding at
  September 30, 2017``) is read where its figures prove it (:func:`_roll_forward`).
- Data rows: the row label is the metric (a generated glossary term, the label its spelling);
  a label-only row is a section heading; a label repeated in the table is prefixed with its
  section (``Americas: Total``), and so is every row of a section stating a unit of its own
  (``... (shares, millions): Basic earnings per share``); a row without a label whose every
  value is the sum of the rows above it in its section is that section's total
  (``Inventories: Total``, its locator says so); other unlabelled rows are reported; labels
  still colliding are reported, never stored.
- Cells are read by the one number grammar (:func:`ragspine.structured.numbers.parse_value`):
  ``(27.1)`` is negative, ``$`` and thousands separators are accepted, ``12.5%`` is a percent
  (unit ``%``). A dash or an empty cell is a missing value; anything else is reported.
- The scale (thousand, million, billion) comes from the table's header texts where exactly one
  is stated (``(in millions)``, ``$'000``, ``€m``); otherwise it is not stated, the value is
  stored as written (scale one) and the locator says ``scale not stated``.

The locator names the document, the table, the row and the column.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

from ragspine.analysis import match_key
from ragspine.errors import IngestError, PeriodError
from ragspine.glossary import (
    DEFAULT_CHANNEL,
    Glossary,
    MetricKind,
    Term,
    TermType,
    entity_taken,
    name_taken,
)
from ragspine.periods import UNDATED, parse_period
from ragspine.security import Sensitivity
from ragspine.structured.convfinqa import metric_for_label
from ragspine.structured.facts import SCALE_WORDS, Fact, FactKey, Scale, heading_note, utc_now
from ragspine.structured.headers import (
    ANY_YEAR,
    INTERIM_REASON,
    MONTH_WORDS,
    captioned_period,
    date_of,
    dated_period,
    days_in,
    footnote_free,
    interim_days,
    label_stems,
    near_a_year_end,
    split_year_period,
    year_first_caption,
)
from ragspine.structured.ingest import RowProgress
from ragspine.structured.numbers import parse_value, shown
from ragspine.structured.tables import read_json_file
from ragspine.structured.texts import DocumentText

ENTITY_PREFIX = "tatqa-"
DEFAULT_LIBRARY = "tatqa"

_FOOTNOTE = re.compile(r"\(\s*[0-9a-z]{1,2}\s*\)|\s*\*+$", re.IGNORECASE)
_UNIT_MARK = re.compile(
    r"(?:[$€£¥]|usd|us\$|gbp|eur|rmb)?\s*['\u2019]\s*000s?|[$€£¥]\s*(?:m|bn|million|billion)\b"
    r"|\b(?:usd|eur|gbp|rmb)\s*(?:m|bn|million)?\b|\brestated\d*\b",
    re.IGNORECASE,
)
_SCALES: tuple[tuple[Scale, re.Pattern[str]], ...] = (
    (
        Scale.THOUSAND,
        re.compile(
            r"\bin\s*thousands?\b|\bthousands\b|['\u2019]\s*000s?\b|\(\s*000s?\s*\)|[$€£¥]\s*000\b"
            r"|[$€£¥]\s*thousands?\b",
            re.IGNORECASE,
        ),
    ),
    (
        Scale.MILLION,
        re.compile(
            r"\bin\s*millions?\b|\bmillions\b|[$€£¥]\s*millions?\b|[$€£¥]\s*m\b|\busdm\b"
            r"|\b(?:rmb|usd|us\$|hk\$)\s*['\u2019]\s*millions?\b"
            r"|^\s*\(?\s*\$?\s*million\s*\)?\s*$",
            re.IGNORECASE,
        ),
    ),
    (
        Scale.BILLION,
        re.compile(r"\bin\s*billions?\b|\bbillions\b|[$€£¥]\s*(?:bn|billions?)\b", re.IGNORECASE),
    ),
)
_PER_AMOUNT = re.compile(
    r"\bper\s+(?:[$€£¥]\s*|(?:us|usd|eur|gbp|rmb)\s+)?(?:thousands?|millions?|billions?|m|bn|000)\b",
    re.IGNORECASE,
)
"""An amount something is measured per (``Normalised per $ million of revenues``): a
denominator, no scale of the figures."""
_DASHES = {"", "-", "—", "\u2013", "n/a", "na", "nm", "n.m.", "*"}
_CURRENCY = re.compile(r"[$€£¥]")


@dataclass(frozen=True, slots=True)
class TatSkip:
    """One thing the importer left out, and why."""

    document: str
    column: str
    row: str
    reason: str


@dataclass(frozen=True, slots=True)
class TatQAImport:
    """Facts, glossary terms and paragraphs made from a TAT-QA file, and what was skipped."""

    facts: tuple[Fact, ...]
    new_terms: tuple[Term, ...]
    skipped: tuple[TatSkip, ...]
    documents: int
    texts: tuple[DocumentText, ...]
    scales: Counter[str]

    def skip_reasons(self) -> Counter[str]:
        return Counter(s.reason for s in self.skipped)


def entity_code(uid: str) -> str:
    """The entity code of the TAT-QA document with table ``uid``."""
    return ENTITY_PREFIX + re.sub(r"[^a-z0-9]+", "-", uid.casefold()).strip("-")


def load_tatqa(path: Path) -> list[Mapping[str, Any]]:
    """The list of documents of a TAT-QA JSON file, each checked for shape."""
    documents = read_json_file(path, "TAT-QA", "tatqa_dataset_dev.json")
    if not isinstance(documents, list):
        raise IngestError(f"{path.name}: expected a list of TAT-QA documents; is this TAT-QA?")
    if not documents:
        raise IngestError(f"{path.name}: the list of TAT-QA documents is empty; nothing to ingest")
    for number, doc in enumerate(documents, start=1):
        table = doc.get("table") if isinstance(doc, dict) else None
        ok = (
            isinstance(table, dict)
            and isinstance(table.get("uid"), str)
            and bool(table["uid"].strip())
            and isinstance(table.get("table"), list)
            and all(
                isinstance(row, list) and all(isinstance(c, str) for c in row)
                for row in table["table"]
            )
            and isinstance(doc.get("paragraphs", []), list)
            and all(
                isinstance(p, dict) and isinstance(p.get("text"), str)
                for p in doc.get("paragraphs", [])
            )
        )
        if not ok:
            raise IngestError(
                f"{path.name}: document {number} is not a TAT-QA document (an object with "
                "table.uid, table.table as rows of strings, and paragraphs as objects with a "
                "text); nothing was ingested"
            )
    uids = Counter(str(d["table"]["uid"]) for d in documents)
    repeated = [uid for uid, count in uids.items() if count > 1]
    if repeated:
        raise IngestError(
            f"{path.name}: table uid {shown(repeated[0])} appears {uids[repeated[0]]} times; each "
            "document needs its own uid, nothing was ingested"
        )
    return documents


_FIGURE_LIKE = re.compile(r"\d")


def _has_figures(rows: Sequence[Sequence[str]]) -> bool:
    """Whether a table has a cell beyond its first row and column with a digit in it."""
    return any(_FIGURE_LIKE.search(cell) for row in rows[1:] for cell in row[1:])


def _clean(cell: str) -> str:
    return " ".join(cell.split())


_SPACED_YEAR = re.compile(r"(?<![\w.])((?:19|20)|(?:1 9|2 0)) ?(\d) ?(\d)(?![\w.])")


_SHORT_FY = re.compile(r"f(\d{2})", re.IGNORECASE)
_RESTATED = re.compile(
    r"\(?\s*(?<!\w)(?:(?:as\s+)?restated\d*(?:\s*,?\s*(?:see\s+)?note\s*\d+)?"
    r"|(?:see\s+)?note\s*\d+)\s*\)?",
    re.IGNORECASE,
)
"""A restatement mark after a period (``Restated See note 2``, ``RESTATED3``, ``(restated, Note
3)``): the figures are restated, the period is the one named."""
_STRAY_END = re.compile(r"\s+[`\u00b4'\u2019$€£¥]+$")


def header_period(text: str, fiscal_start_month: int = 1) -> str | None:
    """The period label a column header names (``2019``, ``Fiscal Year 2018``, ``2019 €m``,
    ``2018 (4)``, ``2 0 1 9``, ``At December 31, 2019``), or None when it names none."""
    candidates = [_clean(text)]
    stripped = _clean(_UNIT_MARK.sub(" ", _FOOTNOTE.sub(" ", text)))
    stripped = _STRAY_END.sub("", stripped)  # "FY 2019 `": a currency sign lost in extraction
    if stripped != candidates[0]:
        candidates.append(stripped)
    joined = _SPACED_YEAR.sub(lambda m: m[1].replace(" ", "") + m[2] + m[3], stripped)
    if joined != stripped:
        candidates.append(joined)
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return parse_period(candidate, None, fiscal_start_month).label
        except PeriodError:
            pass
        short = _SHORT_FY.fullmatch(candidate)
        if short is not None:  # "F19" heads a fiscal year's column (AU / UK reports)
            return f"FY20{short[1]}"
        dated = dated_period(candidate, fiscal_start_month) or split_year_period(candidate)
        if dated is not None:
            return dated
    unrestated = _RESTATED.sub(" ", text)
    if unrestated != text:  # "Year-ended 31 March 2018 Restated See note 2": that year
        return header_period(unrestated, fiscal_start_month)
    return None


_EXCEPT = re.compile(r"\bexcept(?:ing)?\b(?P<clause>[^)]*)", re.IGNORECASE)
_PER_SHARE = r"(?!.*\bshares\b).*?per[\s-]*(?:(?:common|ordinary|diluted|basic)\s+)?share"
"""A per-share figure's name (``Cash dividends declared per common share``), never a number of
shares (``Shares used in computing ... per share``): matched from the start of a name."""
_PERCENT_MARK = r"(?:(?<=[^\W\d_])|(?<=\))|^)\s*%\s*$"
"""A percent sign ending a name as its unit (``Cost to income %``, ``Margin (2) %``, a column
``%``), not a rate in an instrument's name (``Senior notes 4.5%``)."""
_EXCEPTED_KINDS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (  # "(in thousands, except per share data)": "Diluted earnings per share", "Exercise price"
        re.compile(r"per[\s-]*share", re.IGNORECASE),
        re.compile(
            rf"^(?:{_PER_SHARE}|(?!.*\bshares\b).*?\beps\b|\W*(?:weighted[\s-]*average\s+)?"
            r"(?:exercise|grant(?:-date)?|share|stock|closing|strike)\s+price"
            r"(?:\s*\([^()]*\))*\W*$)",
            re.IGNORECASE,
        ),
    ),
    (  # "except share data", "except number of shares": "Number of Shares", "Shares granted"
        re.compile(r"(?<!per )\bshares?\b(?![\s-]*based)|\bnumber of\b", re.IGNORECASE),
        re.compile(
            r"^\W*(?:(?:weighted[\s-]*average\s+)?(?:number\s+of\s+)?(?:common\s+|ordinary\s+)?"
            r"shares\b|number\s+of\b)",
            re.IGNORECASE,
        ),
    ),
    (  # "except percentages", "except ratios": "Gross margin (%)", "Tax rate (percent)"
        re.compile(r"percent|%|\bratios?\b", re.IGNORECASE),
        # a label marked as a percentage, not a rate in an instrument's name ("Notes 4.5%")
        re.compile(rf"\(\s*%|{_PERCENT_MARK}|percent", re.IGNORECASE),
    ),
)
"""What a scale statement may except (its clause's pattern), and the rows or columns that are
then not at that scale (their labels' pattern: a label that says what it measures, ``Diluted
earnings per share``, ``Shares granted``, ``Gross margin (%)``; not one that only mentions it,
``Share price hedge``, ``Repurchases of common shares``, ``Gross margin`` in dollars)."""


def scale_exceptions(texts: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """The label patterns of what the header ``texts`` except from their scale: ``(in
    thousands, except per share data)`` excepts per-share figures, so ``Diluted earnings per
    share`` 1.89 is 1.89, not 1.89 thousand."""
    clauses = [found["clause"] for text in texts for found in _EXCEPT.finditer(text)]
    return tuple(
        labels
        for clause_pattern, labels in _EXCEPTED_KINDS
        if any(clause_pattern.search(clause) for clause in clauses)
    )


def stated_scale(texts: Iterable[str]) -> tuple[Scale | None, str]:
    """The one scale the header ``texts`` state, or ``(None, why)``."""
    texts = [_PER_AMOUNT.sub(" ", text) for text in texts]
    found = {scale for text in texts for scale, pattern in _SCALES if pattern.search(text)}
    if len(found) == 1:
        return found.pop(), ""
    if not found:
        return None, "not stated"
    return None, "stated differently in several places"


def _cell_value(cell: str) -> tuple[Decimal, str] | None:
    """``(value, unit)`` of a cell, None for a missing value; IngestError when not a number."""
    text = _clean(cell)
    if text.casefold() in _DASHES or re.fullmatch(r"[$€£¥(]*\s*[—\u2013-]\s*\)?", text):
        return None
    if "%" in text:
        return parse_value(text, kind=MetricKind.PERCENT), "%"
    if _CURRENCY.search(text):
        return parse_value(text, kind=MetricKind.CURRENCY), ""
    return parse_value(text), ""


def _is_number(cell: str) -> bool:
    try:
        return _cell_value(cell) is not None
    except IngestError:
        return False


@dataclass(frozen=True, slots=True)
class _Row:
    index: int
    label: str
    section: str
    cells: tuple[str, ...]
    section_row: int = -1
    """The index of the section heading's own row (-1: none)."""


def _split(rows: Sequence[Sequence[str]], fiscal_start_month: int) -> tuple[list[int], list[_Row]]:
    """Header row indexes and the data rows (with their section headings)."""
    first_data = len(rows)
    for i, row in enumerate(rows):
        values = row[1:]
        if any(_is_number(c) and header_period(c, fiscal_start_month) is None for c in values):
            first_data = i
            break
    header = []
    section, section_row = "", -1
    data: list[_Row] = []
    for i, row in enumerate(rows):
        label = _clean(row[0]) if row else ""
        rest = [_clean(c) for c in row[1:]]
        if i < first_data:
            if any(rest):
                header.append(i)
            elif label:
                section, section_row = label, i
            continue
        if label and not any(rest):
            section, section_row = label, i
            continue
        data.append(_Row(i, label, section, tuple(row[1:]), section_row))
    return header, data


def row_label(text: str) -> str:
    """A row label without footnote marks (``Tax Fees (2)`` is ``Tax Fees``)."""
    return footnote_free(text)


_OWN_UNIT = re.compile(
    r"\(\s*(?:shares?|cents?|units?|days?|headcount|employees)(?!\w)[^()]*\)", re.IGNORECASE
)
"""A section heading's note of a unit that is no amount of money (``(shares, millions)``,
``(cents per share)``; not ``(in millions, except per share amounts)``): its rows measure
what the heading names, and in the scale it states (none: as written), not what their labels
alone say (``Basic earnings per share`` under ``Weighted average number of shares used in earnings
per share (shares, millions)`` is a number of shares)."""
_LABEL_UNIT = re.compile(
    r"\(\s*(?:%|per\s*cent|percent(?:age)?|bps|basis\s+points|pence|times)(?!\w)[^()]*\)"
    rf"|{_PERCENT_MARK}|\(\s*(?:in\s+)?(?:years?|months?|weeks?)\s*\)",
    re.IGNORECASE,
)
"""A row label's own note of a unit that is no amount of money at the table's scale
(``ROFE (%)``, ``Gross margin (% of sales)``, ``Cost to income %``, ``Expected term (in
years)``), besides those of :data:`_OWN_UNIT` (``Basic earnings per share (cents)``): under
``$ million`` its figures are as written, never millions. Not a rate in an instrument's name
(``Senior notes 4.5%``), nor a scale statement's exception (``In millions, except %``)."""
_NEVER_SCALED = re.compile(
    r"^\W*(?:(?:basic|diluted)\s+(?:and\s+diluted\s+)?)?(?:net\s+)?(?:earnings|income|loss"
    r"|\(loss\)|dividends?|cash\s+dividends?|(?:tangible\s+)?book\s+value|net\s+asset\s+value)"
    r"(?:\s+(?:\(loss\)|declared|paid))*\s+per\s+"
    r"(?:(?:basic|diluted|common|ordinary)\s+)?share\b(?:\s*[-:,]?\s*(?:basic|diluted))?"
    r"\s*(?:\([^()]*\)\s*)*$|^\W*(?:(?:basic|diluted)\s+)?eps\s*(?:\([^()]*\)\s*)*$",
    re.IGNORECASE,
)
"""A row that is a per-share figure by its whole name (``Diluted earnings per share``, ``Cash
dividends declared per common share``, ``Basic EPS``; not ``Net income used in computing basic
earnings per share``): read in units even where the table says ``(in millions)`` and forgets
``except per share data``, unless its own label or its section heading states a scale. A
rate or a count of days is not read so: under ``(in millions)`` such a row is often an amount
(``Effect of foreign tax rates``, ``Past due over 90 days``)."""
_NOT_MONEY = re.compile(
    r"^\W*(?:(?:total|average)\s+)?(?:number\s+of\s+)?(?:full[- ]time\s+)?(?:employees|headcount)"
    r"\W*$|^\W*(?:(?:total|average)\s+)?number\s+of\s+(?:full[- ]time\s+)?(?:staff|personnel"
    r"|associates)\W*$"
    r"|^\W*(?:days?\s+(?:sales|payables?|inventory|receivables?)(?:\s+outstanding)?|dso|dpo|dio)"
    r"(?:\s*\([^()]*\))?\W*$"
    r"|^\W*(?:[\w-]+\s+){0,4}ratio(?:\s*\([^()]*\))?\W*$|^\W*ratio\s+of\b"
    r"|^\W*return\s+on\s+(?:average\s+)?(?:(?:common|shareholders'?|stockholders'?)\s+)?"
    r"(?:equity|assets|invested\s+capital|capital\s+employed)\b"
    r"|\bper\s+(?:user|subscriber|customer|unit|square\s+(?:foot|feet|metre|meter)|barrel|boe"
    r"|employee|store)\b"
    r"|^\W*(?:average\s+)?(?:selling|sales|realized|realised)\s+price\b"
    r"|^\W*(?:weighted[\s-]+average\s+)?(?:effective\s+)?(?:income\s+)?(?:tax|interest"
    r"|discount|growth|inflation|churn|attrition|occupancy|utilization|utilisation|default"
    r"|coupon|loss)\s+rate(?:\s*\([^()]*\))?\W*$"
    r"|^\W*(?:(?:ebitda|earnings|interest|fixed[\s-]+charge|debt[\s-]+service)\s+)+coverage"
    r"(?:\s+ratio)?(?:\s*\([^()]*\))?\W*$"
    r"|^\W*inventory\s+(?:turns|turnover)(?:\s*\([^()]*\))?\W*$",
    re.IGNORECASE,
)
"""A row that by its whole name is a count of people, a number of days, a ratio, a rate, a
coverage, a turnover, a return on equity or assets, or a figure per user, unit or store
(``Number of employees``, ``Days sales outstanding``, ``Debt to equity ratio``, ``Effective
tax rate``, ``Interest coverage``, ``Inventory turns``, ``Average revenue per user``; not
``Effect of foreign tax rate``, ``Tax at statutory rate`` or debt at a ``Fixed rate``,
amounts): a table's money
scale (``(in millions)``) is not its scale, so none is stated for it unless its own label or
section heading states one, never ``12,000 million`` employees."""
_IN_UNITS = re.compile(
    r"\(\s*(?:in\s+)?(?:[a-z]{2,3}\s*)?(?:dollars?|euros?|pounds?|yen|yuan|rupees?|francs?"
    rf"|[$€£¥])\s*\)|^{_PER_SHARE}\b",
    re.IGNORECASE,
)
"""Where no scale is stated, a row or column name saying its figures are plain currency units
(``(NT dollars)``, ``(US$)``) or per share (``Cash dividend per share``; never a number of
shares): such figures are as written, not at an unknown scale. A section heading saying so
(``Earnings per share computation:``) may head a net income: it is not read."""
_YEAR_NAMED = re.compile(
    r"^\W*(?:(?:last|first|final|latest|earliest)\s+)?(?:fiscal\s+)?years?\s+of\s+"
    r"(?:expir|maturit)\w*(?:\s*\([^()]*\))*\W*$"
    r"|^\W*(?:expir\w*|maturity)\s+(?:years?|dates?)(?:\s*\([^()]*\))*\W*$",
    re.IGNORECASE,
)
"""A column whose name says its cells are years (``Last Fiscal Year of Expiration``,
``Maturity date``): no amount at the table's scale."""


def _own_unit(label: str) -> bool:
    """Whether a row label, heading or column name states a unit of its own
    (:data:`_OWN_UNIT`, :data:`_LABEL_UNIT`): its figures are read in it (at the scale it
    states, if any), never at the table's."""
    if _EXCEPT.search(label):  # "(In millions, except %)" states the table's scale
        return False
    return bool(_OWN_UNIT.search(label) or _LABEL_UNIT.search(label))


def _labels(data: list[_Row], fiscal_start_month: int) -> tuple[dict[int, str], dict[int, str]]:
    """The metric label of each data row: its own (footnote marks removed), or
    ``section: label`` when repeated or when the section states a unit of its own; and an
    unlabelled row that is its section's total (:func:`_section_totals`). Second: the
    locator's note on each such total row."""
    own = {r.index: row_label(r.label) for r in data if r.label}
    counts = Counter(label.casefold() for label in own.values())
    labels: dict[int, str] = {}
    for r in data:
        if r.index not in own:
            continue
        label = own[r.index]
        if r.section and (counts[label.casefold()] > 1 or _OWN_UNIT.search(r.section)):
            labels[r.index] = f"{_section_label(r.section)}: {label}"
        else:
            labels[r.index] = label
    notes: dict[int, str] = {}
    taken = {label.casefold() for label in labels.values()}
    for index, (label, note) in _section_totals(data, fiscal_start_month).items():
        if label.casefold() not in taken:
            labels[index], notes[index] = label, note
    return labels, notes


def _headed_rows(data: list[_Row]) -> set[int]:
    """The rows that are read under their section heading: those before the section's first
    total (a row without a label, or one whose label starts with ``Total``). A table lists no
    end of a section, and what follows its total (``Provision for income taxes`` after
    ``Total deferred``, a grand ``Total``) is often no longer part of it."""
    closed: set[str] = set()
    headed: set[int] = set()
    for row in data:
        if not row.section or row.section in closed:
            continue
        if not row.label or row_label(row.label).casefold().startswith("total"):
            closed.add(row.section)
            continue
        headed.add(row.index)
    return headed


def _section_label(section: str) -> str:
    return row_label(section).rstrip(":").strip()


def _section_totals(data: list[_Row], fiscal_start_month: int) -> dict[int, tuple[str, str]]:
    """Unlabelled rows that are their section's total: ``Inventories:`` over ``Raw material``,
    ``Finished goods`` and a row without a label, last of its section, whose every value is the
    sum of the rows above it in that section. Such a row is ``Inventories: Total`` (the table's
    own figure, checked by the sum; a row failing it, one outside a section, or one followed by
    more rows of its section (a subtotal) stays unread)."""
    found: dict[int, tuple[str, str]] = {}
    for at, row in enumerate(data):
        if row.label or not row.section or header_period(row.section, fiscal_start_month):
            continue
        above: list[_Row] = []
        for earlier in reversed(data[:at]):
            if not earlier.label or earlier.section != row.section:
                break
            above.append(earlier)
        later = data[at + 1] if at + 1 < len(data) else None
        if later is not None and later.section == row.section:
            continue  # rows of the section follow: a subtotal, not the section's total
        if above and _sums_rows(row, above):
            first, last = above[-1].index + 1, above[0].index + 1
            span = f"row {first}" if first == last else f"rows {first}-{last}"
            note = f"a row without a label, the sum of {span} under {row.section!r}"
            found[row.index] = (f"{_section_label(row.section)}: Total", note)
    return found


def _sums_rows(row: _Row, above: list[_Row]) -> bool:
    """Every value of ``row`` is the sum of the values of ``above`` in its column (one value
    at least)."""
    summed = 0
    for column, cell in enumerate(row.cells):
        try:
            total = _cell_value(cell)
            parts = [_cell_value(r.cells[column]) for r in above if column < len(r.cells)]
        except IngestError:
            return False
        if total is None:
            continue
        values = [p for p in parts if p is not None]
        if not values or any(unit != total[1] for _, unit in values):
            return False
        if sum((v for v, _ in values), Decimal(0)) != total[0]:
            return False
        summed += 1
    return summed > 0


@dataclass(frozen=True, slots=True)
class _Caption:
    """The caption heading one group of columns (``Revenues`` over ``2019 | 2018``)."""

    row: int
    text: str
    label: str
    """The caption without scale and unit marks: the prefix of its rows' metric labels."""
    scale: Scale | None


_NOT_LABEL = re.compile(r"\([^()]*\)")


_DATE_FRAGMENT = re.compile(
    r"^(?:(?:at|as\s+of|as\s+at|ended|ending)\s+)?(?:\d{1,2}\s+)?(?:"
    + "|".join(sorted(MONTH_WORDS, key=len, reverse=True))
    + r")\.?(?:\s+\d{1,2})?,?$",
    re.IGNORECASE,
)


def _caption_label(text: str) -> str:
    """``text`` without parenthesised scale or currency notes (``(in thousand NT dollars)``)
    and without a repeat of itself (a merged cell read twice)."""
    kept = _NOT_LABEL.sub(
        lambda m: " " if any(p.search(m[0]) for _, p in _SCALES) or "dollar" in m[0] else m[0],
        text,
    )
    words = footnote_free(_clean(kept)).split()
    half = len(words) // 2
    if half and len(words) % 2 == 0 and words[:half] == words[half:]:
        words = words[:half]
    return " ".join(words).rstrip(":").strip()


def _captions_apart(
    rows: Sequence[Sequence[str]],
    header: Sequence[int],
    width: int,
    periods: Mapping[int, str],
    fiscal_start_month: int,
) -> dict[int, _Caption]:
    """Per period column, the caption of its group, when the columns sharing a period (``2019``
    under ``Revenues`` and under ``Income from operations``) are told apart by one header row
    of captions: each caption heads the columns from its own to the next caption. Empty when
    no such row separates every pair: those columns stay ambiguous."""
    for i in header:
        named = [c for c in range(1, width) if _clean(rows[i][c])]
        if len(named) < 2 or any(header_period(rows[i][c], fiscal_start_month) for c in named):
            continue
        if any(_DATE_FRAGMENT.match(_clean(rows[i][c])) for c in named):
            continue  # "September 29," over a year: part of a date, no caption
        captions: dict[int, _Caption] = {}
        current: _Caption | None = None
        for column in range(1, width):
            text = _clean(rows[i][column])
            if text:
                scale, _ = stated_scale([text])
                current = _Caption(i, text, _caption_label(text), scale)
            if current is not None and column in periods and current.label:
                captions[column] = current
        pairs = {(periods[c], captions[c].label) for c in periods if c in captions}
        if len(captions) == len(periods) and len(pairs) == len(periods):
            return captions
    return {}


_SHORTER_CAPTION = re.compile(
    r"(?<!\w)(?:(?:three|six|nine|[1-9]|1[01])[\s-]+months?"
    r"|(?:twelve|thirteen|sixteen|twenty[\s-]*four|twenty[\s-]*six|[1-9]|[1-4][0-9])[\s-]+weeks?"
    r"|quarters?|quarterly|half[\s-]+years?|half[\s-]+yearly|semi[\s-]*annual|first\s+half"
    r"|second\s+half|interim|ytd"
    r"|year[\s-]+to[\s-]+date|q[1-4]|h[12]|(?:tre|sei|nove)\s+mesi|semestr[ei]|trimestr[ei])(?!\w)",
    re.IGNORECASE,
)
"""A caption naming a span shorter than a year (``Six Months Ended``, ``Three-Month Periods
Ended``, ``Quarters Ended``, ``Thirteen Weeks Ended``, ``Second Quarter``, ``Year to date``,
``Semestre chiuso``), not a 52/53-week or twelve-month year: the columns under it are those
spans, not fiscal years."""


def _shorter_columns(
    rows: Sequence[Sequence[str]], header: Sequence[int], periods: Mapping[int, str], fiscal: int
) -> set[int]:
    """The period columns under a caption naming a span shorter than a year
    (:data:`_SHORTER_CAPTION`), in the header row of their period or one above it, where a
    caption heads the columns from its own to the next (``Three Months Ended December 31, | |
    Year Ended December 31, |`` over ``2019 | 2018 | 2019 | 2018``: the first two). A caption
    below a column's period (``Fiscal 2019`` over ``Third Quarter``) names a measure of that
    year, kept in its rows' names, and is not looked at, but a column's own cell below its
    year is (``2019`` over ``Q4 | Full year``: the first column is the quarter); nor is the
    corner cell of a header row (``Three Months Ended June 30,`` beside ``2019 | 2018``)."""
    found: set[int] = set()
    years = [c for c, period in periods.items() if re.fullmatch(r"FY\d{4}", period)]
    for column in years:
        own = [i for i in header if header_period(rows[i][column], fiscal)]
        for i in header:
            if own and i > own[0] and len(years) < 2:
                break  # one year over measures ("Fiscal 2019" over "First Quarter | ... | Total")
            if own and i > own[0]:  # below the year: only the column's own cell ("2019" over
                if _SHORTER_CAPTION.search(rows[i][column]):  # "Q4 | Full year": its Q4)
                    found.add(column)
                    break
                continue
            left = column
            while left > 1 and not _clean(rows[i][left]):
                left -= 1
            if _SHORTER_CAPTION.search(rows[i][left]) or _SHORTER_CAPTION.search(rows[i][0]):
                found.add(column)
                break
    return found


def _span_lost(
    rows: Sequence[Sequence[str]], header: Sequence[int], width: int, names: Mapping[int, str]
) -> bool:
    """Whether a caption naming a span shorter than a year heads a measure column whose name
    lacks it (``Three months ended June 30,`` over ``Revenue | Cost of sales``): its figures
    would be stored as years. A caption kept in every name it heads (``First Quarter``) is
    read as before."""
    for i in header:
        for column in range(1, width):
            cell = _clean(rows[i][column])
            if not cell or not _SHORTER_CAPTION.search(cell):
                continue
            end = column + 1
            while end < width and not _clean(rows[i][end]):
                end += 1
            if any(
                c in names and cell.casefold() not in names[c].casefold()
                for c in range(column, end)
            ):
                return True
    return False


def _captioned_columns(
    rows: Sequence[Sequence[str]], header: Sequence[int], width: int, fiscal_start_month: int
) -> dict[int, tuple[str, _Caption]]:
    """Per column, its period and caption where one header row heads two columns or more with
    one caption and a year each (``Fiscal 2019 Net Sales | Fiscal 2018 Net Sales``, ``Balances,
    January 31, 2019 | ...``: :func:`~ragspine.structured.headers.year_first_caption`,
    :func:`~ragspine.structured.headers.captioned_period`), every year once and every header
    of that row naming a year read so; empty otherwise (two captions are two different
    things, and neither is read). The years must follow each other, as a report's columns do
    (``2019 Notes | 2021 Notes | 2024 Notes`` are notes by maturity)."""
    for i in header:
        named = {c: _clean(rows[i][c]) for c in range(1, width) if _clean(rows[i][c])}
        found = {
            c: year_first_caption(text) or captioned_period(text, fiscal_start_month)
            for c, text in named.items()
            if ANY_YEAR.search(text)
        }
        read = {c: pair for c, pair in found.items() if pair is not None}
        if len(read) < 2 or len(read) < len(found):
            continue  # "2016 high | 2016 low | 2016 dividend": not one caption over years
        labels = {_caption_label(caption).casefold() for caption, _ in read.values()}
        years = sorted(int(period.removeprefix("FY")) for _, period in read.values())
        following = all(b == a + 1 for a, b in itertools.pairwise(years))
        if len(labels) != 1 or not following or not next(iter(labels)):
            continue  # "2019 Notes | 2021 Notes": years that skip name instruments
        return {
            c: (period, _Caption(i, named[c], _caption_label(caption), None))
            for c, (caption, period) in read.items()
        }
    return {}


def _spanned_periods(
    rows: Sequence[Sequence[str]],
    header: Sequence[int],
    width: int,
    periods: Mapping[int, str],
    fiscal_start_month: int,
) -> dict[int, tuple[int, str]]:
    """``(first column, caption)`` of the columns a period header spans after its own (merged cells
    read into their first column: ``December 31, 2019 | | December 31, 2018 |`` over
    ``Carrying Amount | Fair Value | Carrying Amount | Fair Value``). A header row whose period
    cells are each followed by the same number of empty cells spans them, when a header row
    below gives each column of every span a caption of its own (``Fair Value``; not a unit
    such as ``$`` or ``%``, nor a period). The first column of a span stays the period's own
    (read as before, its caption named in the locator), unless a caption of the span is
    ``Total`` (then every column is a part or the total); each other one is a figure of its
    own, its caption before the row label (``Fair Value: Total debt``). A caption naming a share
    (``% of total revenue``) or no measure (``Amount``) is not read (its column maps to an
    empty caption); beside such a caption the first column is named by its own (``Shares:
    Common stock``), never taken for the row's amount. ``F19 | F18 | |`` (one column per
    period, then others) spans nothing."""
    for i in header:
        filled = [c for c in range(1, width) if _clean(rows[i][c])]
        dated = [
            c for c in filled if c in periods and header_period(rows[i][c], fiscal_start_month)
        ]
        if len(dated) < 2:
            continue
        ends = {c: next((f for f in filled if f > c), width) for c in dated}
        widths = {ends[c] - c for c in dated}
        if len(widths) != 1 or widths == {1}:
            continue
        spans = [range(c, ends[c]) for c in dated]
        below = [
            k
            for k in header
            if k > i and all(_names_each(rows[k], span, fiscal_start_month) for span in spans)
        ]
        if not below:
            continue
        captions = {c: _caption_label(_clean(rows[below[0]][c])) for span in spans for c in span}
        spanned: dict[int, tuple[int, str]] = {}
        for span in spans:
            # "Domestic | Foreign | Total": the first column is a part, not the row's figure;
            # "Shares | Amount": the plain "Amount" is unread, so the first column is named
            # by its caption ("Shares: Common stock"), never taken for "the amount of ..."
            parts = any(_TOTAL_CAPTION.match(captions[c]) for c in span)
            plain = any(_PLAIN_CAPTION.match(captions[c]) for c in span[1:])
            for c in span if parts or plain else span[1:]:
                if not _SHARE_CAPTION.search(captions[c]) and not _PLAIN_CAPTION.match(captions[c]):
                    spanned[c] = (span[0], captions[c])
                else:
                    spanned[c] = (span[0], "")  # in the span, not read
        return spanned
    return {}


_TOTAL_CAPTION = re.compile(r"^\W*totals?\W*$", re.IGNORECASE)
"""A caption naming the total of the span's other columns: its first column is then one part
(``Domestic: Revenue``), and the total is ``Total: Revenue``."""


_SHARE_CAPTION = re.compile(r"%|\bpercent", re.IGNORECASE)
"""A column caption naming a percentage (``% of total revenue``): a share of a total, often
with ``%`` on some rows only, so its cells cannot be told from amounts; not read."""
_PLAIN_CAPTION = re.compile(r"^\W*(?:(?:amounts?|values?|balances?|numbers?)\W*)+$", re.I)
"""A caption that names no measure of its own (``Amount``): a question cannot name it apart
from the span's first column, so it is not read."""


def _names_each(row: Sequence[str], columns: Sequence[int], fiscal_start_month: int) -> bool:
    """Whether ``row`` gives each of ``columns`` a caption of its own: a name, not a unit or a
    period, and no two alike (``Years | Years`` is a unit row repeated, not two measures)."""
    labels = []
    for column in columns:
        text = _clean(row[column])
        if not text or _UNIT_ONLY.match(text) or header_period(text, fiscal_start_month):
            return False
        labels.append(_caption_label(text).casefold())
    return all(labels) and len(set(labels)) == len(labels)


@dataclass(frozen=True, slots=True)
class _Measures:
    """A table whose columns are measures (``Amortized Cost | Fair Value``) and whose period is
    stated elsewhere: by each row's section heading, a title row or the corner cell, or by the
    row's own label (``2021`` over ``Operating Leases | Finance Leases``)."""

    names: dict[int, str]
    """Each value column's measure name (its header texts, without periods and units)."""
    periods: dict[int, str]
    """Each data row's period (by row index)."""
    by_label: frozenset[int] = frozenset()
    """Rows whose own label is their period: their figures are the columns' measures."""
    labels: Mapping[int, str] = field(default_factory=dict)
    """Rows read by a roll-forward (:func:`_roll_forward`): each row's own label for its
    metric (a balance's caption without its date)."""
    notes: Mapping[int, str] = field(default_factory=dict)
    """The locator's note on each such row (the balances a movement lies between)."""
    within: Mapping[int, str] = field(default_factory=dict)
    """Each movement row's balance caption (``Non-vested``): its metric's alias is prefixed
    with it (``Non-vested: Granted: Shares``), so that a question naming both is read as the
    movement, not the balance."""


_UNIT_ONLY = re.compile(
    r"^\W*(?:[$€£¥]|usd|us\$|gbp|eur|rmb|['\u2019]?000s?|m|bn|%|in\s+\w+)?\W*$"
    r"|^\W*(?:[$€£¥]|usd|us\$|gbp|eur|rmb)\s*['\u2019]?\s*(?:000s?|m|bn|million|millions)\W*$",
    re.IGNORECASE,
)


_MONEY_NOTE = re.compile(
    r"\b(?:rmb|usd|us\$|hk\$|gbp|eur)\s*['\u2019]\s*(?:000s?|millions?|billions?)\b",
    re.IGNORECASE,
)
"""A currency and scale note inside a column header (``USD denominated RMB'Million``)."""


_CHANGE_COLUMN = re.compile(
    r"(?<!\w)(?:change|changes|increase|decrease|variance|var|adjustments?|growth|yoy"
    r"|inc\.?\s*\(?dec|better|worse)(?!\w)",
    re.IGNORECASE,
)
"""A measure column holding a change, not a level (``Increase / (Decrease)``, ``Effect of
Change``, ``Growth``, ``% Inc (Dec)``, ``Better/(Worse)``); ``Tax effect`` is a level."""
_ORDINAL_QUARTER = re.compile(r"(?:first|second|third|fourth|1st|2nd|3rd|4th)", re.IGNORECASE)


def _measure_name(texts: Iterable[str], fiscal_start_month: int) -> str:
    """A column's measure name from its header cells: periods, scale and unit notes left out."""
    kept = []
    for text in texts:
        cleaned = _clean(_MONEY_NOTE.sub(" ", text))
        if not cleaned or header_period(cleaned, fiscal_start_month) is not None:
            continue
        if _UNIT_ONLY.match(cleaned) or stated_scale([cleaned])[0] is not None:
            continue
        kept.append(_caption_label(cleaned))
    name = " ".join(k for k in kept if k)
    if _ORDINAL_QUARTER.fullmatch(name):  # "First" over a year's quarters
        name = f"{name} quarter"
    return name


def _measure_layout(
    rows: Sequence[Sequence[str]],
    header: Sequence[int],
    data: Sequence[_Row],
    width: int,
    periods: Mapping[int, str],
    with_data: Sequence[int],
    fiscal_start_month: int,
) -> _Measures | None:
    """The measure reading of a table none of whose value columns is a period, or whose one
    period header stands alone in its row above several value columns (``As of December 31,
    2019`` over ``Amortized Cost | Fair Value``); None for every other table. The period comes
    from each row's section heading (``December 31, 2019``, then ``December 31, 2018``), else
    from that title row, else from the header's corner cell (``30 June 2019``). Every value
    column needs a measure name; otherwise the table is not read this way. A table that states
    no period at all is read as :data:`~ragspine.periods.UNDATED`."""
    title: str | None = None
    if len(periods) == 1 and len(with_data) > 1:
        (column,) = periods
        titled = [i for i in header if header_period(rows[i][column], fiscal_start_month)]
        alone = all(not _clean(rows[titled[0]][c]) for c in range(1, width) if c != column)
        if not alone:
            return None  # "Total | 2020 | 2021-2022": a bucket among others, not a title
        title = periods[column]
    elif periods:
        return None
    names = {}
    for column in with_data:
        texts = [rows[i][column] for i in header]
        names[column] = _measure_name(texts, fiscal_start_month)
    if not names or not all(names.values()) or len(set(names.values())) < len(names):
        return None
    # a change is no level to look up ("Increase / (Decrease)", "Effect of Change"): left out
    names = {c: name for c, name in names.items() if not _CHANGE_COLUMN.search(name)}
    if not names:
        return None
    corner = [p for i in header if (p := header_period(rows[i][0], fiscal_start_month))]
    by_row: dict[int, str] = {}
    headings: set[int] = set()
    for row in data:
        filled = [_clean(c) for c in row.cells if _clean(c)]
        heading = header_period(filled[0], fiscal_start_month) if len(filled) == 1 else None
        if not row.label and heading is not None:  # "As of December 31, 2018" over a block
            title = heading
            headings.add(row.index)
            continue
        section = header_period(row.section, fiscal_start_month) if row.section else None
        period = section or title or (corner[0] if len(set(corner)) == 1 else None)
        if period is not None:
            by_row[row.index] = period
    valued = [
        r
        for r in data
        if r.index not in headings and any(r.cells[c - 1].strip() for c in with_data)
    ]
    by_label: dict[int, str] = {}
    corner_texts = [_clean(rows[i][0]) for i in header if _clean(rows[i][0])]
    if not by_row and title is None and all(_PERIOD_CORNER.match(t) for t in corner_texts):
        # rows that are years ("2021", "2022", then "Thereafter", "Total") under measures
        # ("Operating Leases | Finance Leases"): each year's figure is the column's measure;
        # the other rows name no period and stay unread. Only a label that is a period and
        # nothing else ("Balance at December 31, 2019" is a balance), under a corner that
        # says nothing else ("Grant year", "Year of expiration" name what the years are)
        by_label = {
            r.index: period
            for r in valued
            if r.label and (period := _bare_period(r.label, fiscal_start_month))
        }
        kinds = {parse_period(p, None, fiscal_start_month).kind for p in by_label.values()}
        if len(by_label) >= 2 and len(set(by_label.values())) == len(by_label) and len(kinds) == 1:
            return _Measures(names, by_label, frozenset(by_label))
    if not by_row and title is None and not corner:
        rolled = _roll_forward(valued, names, fiscal_start_month)
        if rolled is not None:
            return rolled
    # a year anywhere in the table's texts ("2021", "Balance at December 31, 2018", "Fiscal
    # 2019 Net Sales", a corner "Fiscal year 2019 (in thousands)", a title "As of December
    # 31, 2019 and 2018") states periods the layout does not read: not undated
    texts = [rows[i][c] for i in header for c in range(width)]
    texts += [t for r in data for t in (r.label, r.section) if t]
    stated = any(ANY_YEAR.search(t) for t in texts)
    if valued and not by_row and title is None and not corner and not stated:
        # no period stated anywhere ("Total | Less Than 1 Year | 1-3 Years"): undated, never
        # guessed from the paragraphs
        by_row = {r.index: UNDATED for r in valued}
    if not valued or any(r.index not in by_row for r in valued):
        return None
    return _Measures(names, by_row)


_AT_DATE = re.compile(r"\s+(?:at|as\s+of|as\s+at|on)$", re.IGNORECASE)
_AT = re.compile(r"\s+(?:at|as\s+of|as\s+at)$", re.IGNORECASE)
_AT_START = re.compile(r"^(?:at|as\s+of|as\s+at)\s+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Dated:
    """A row label that is a caption at a date (``Outstanding at September 30, 2017``)."""

    caption: str
    """The caption without its joining word (``Outstanding``)."""
    period: str
    day: date | None
    """The day it names (None for a bare year)."""
    balance: bool
    """Joined by ``at`` / ``as of`` / ``as at``: a balance at that day (``on`` names an event:
    ``Reassignment on October 1, 2017``)."""


def _dated(label: str, fiscal_start_month: int) -> _Dated | None:
    """The caption, period and day of a row label that is a caption at a date, else None."""
    text = row_label(label)
    found = captioned_period(text, fiscal_start_month)
    if found is None:
        return None
    caption = _AT_DATE.sub("", found[0]).strip(" ,")
    if not caption:
        return None
    rest = text[len(found[0]) :].strip(" ,")
    at = bool(_AT.search(found[0]) or _AT_START.match(rest))
    return _Dated(caption, found[1], date_of(_AT_START.sub("", rest)), at)


def _rolls(opening: _Row, moves: Sequence[_Row], closing: _Row, column: int) -> bool:
    """Whether ``column`` rolls forward: the opening balance plus the movements (a dash or an
    empty cell is nil) is exactly the closing balance, the two balances and at least one
    movement holding a number."""
    try:
        start, end = _cell_value(opening.cells[column - 1]), _cell_value(closing.cells[column - 1])
        parts = [_cell_value(r.cells[column - 1]) for r in moves]
    except IngestError:
        return False
    values = [p for p in parts if p is not None]
    if start is None or end is None or not values:
        return False
    if any(unit != start[1] for _, unit in (*values, end)):
        return False
    return start[0] + sum((v for v, _ in values), Decimal(0)) == end[0]


def _roll_forward(
    valued: Sequence[_Row], names: Mapping[int, str], fiscal_start_month: int
) -> _Measures | None:
    """The reading of a roll-forward under measure columns: balances at dates (``Outstanding
    at September 30, 2016``, then ``2017`` ...) with the movements of each year between them
    (``Granted``, ``Exercised``, ``Canceled``). A balance is its caption in its date's fiscal
    year (``Outstanding: Number of Shares`` in FY2017); a movement is its own label in the
    year that ends at the next balance (``Granted: Number of Shares`` in FY2017).

    Only what the table proves is read: the first row is a balance, every two balances of the
    caption are a fiscal year apart, and across each year at least one column rolls forward
    exactly (:func:`_rolls`: the opening balance plus the movements is the closing one). Rows
    after the last balance are read only when they are balances themselves (``Exercisable at
    September 30, 2019``). Anything else: None (the table is not read this way)."""
    dated = {
        r.index: found for r in valued if r.label and (found := _dated(r.label, fiscal_start_month))
    }
    if not valued or valued[0].index not in dated or not dated[valued[0].index].balance:
        return None
    caption = dated[valued[0].index].caption
    chain = [
        r
        for r in valued
        if r.index in dated
        and dated[r.index].balance
        and dated[r.index].caption.casefold() == caption.casefold()
    ]
    if len(chain) < 2:
        return None
    labels: dict[int, str] = {}
    notes: dict[int, str] = {}
    within: dict[int, str] = {}
    periods: dict[int, str] = {}
    position = {r.index: at for at, r in enumerate(valued)}
    for opening, closing in pairwise(chain):
        first, last = dated[opening.index], dated[closing.index]
        if not _a_year_apart(first, last, fiscal_start_month):
            return None  # a quarter, two years, an adoption-date restatement: not one year
        moves = valued[position[opening.index] + 1 : position[closing.index]]
        if not moves or not any(_rolls(opening, moves, closing, c) for c in names):
            return None
        period = last.period
        between = f" (between {opening.label!r} and {closing.label!r})"
        for row in moves:
            if not row.label or (row.index in dated and dated[row.index].balance):
                return None  # unlabelled, or a balance of another caption among the movements
            labels[row.index] = row_label(row.label)
            within[row.index] = caption
            notes[row.index] = f"{row_label(row.label)!r}{between}"
            periods[row.index] = period
    for row in valued:
        if row.index in periods:
            continue
        if row.index not in dated or not dated[row.index].balance:
            return None  # after the last balance, a row that is no balance itself
        labels[row.index], periods[row.index] = dated[row.index].caption, dated[row.index].period
        notes[row.index] = repr(row.label)
    return _Measures(dict(names), periods, labels=labels, notes=notes, within=within)


_A_YEAR = (timedelta(days=364 - 7), timedelta(days=366 + 7))
"""How far apart two balances of a year are: a calendar year, or a fiscal year of 52 or 53
weeks (``December 30, 2018`` to ``December 29, 2019``)."""


def _a_year_apart(first: _Dated, last: _Dated, fiscal_start_month: int) -> bool:
    """Whether two balances are a year apart, in consecutive fiscal years, neither of them in
    the first week of its fiscal year (``January 1, 2018`` may close a 52-week year 2017 while
    its date reads 2018: which year its movements belong to is not known)."""
    if first.day is None or last.day is None:
        return False
    if not _A_YEAR[0] <= last.day - first.day <= _A_YEAR[1]:
        return False
    if any(d.month == fiscal_start_month and d.day <= 7 for d in (first.day, last.day)):
        return False
    years = [re.fullmatch(r"FY(\d{4})", d.period) for d in (first, last)]
    return all(years) and int(years[1][1]) == int(years[0][1]) + 1  # type: ignore[index]


def _shared_stems(labels: Iterable[str]) -> frozenset[str]:
    """Stems that two or more of a roll-forward's distinct row labels share (``option`` of
    ``Options granted``, ``Options exercised``, ``Options outstanding``)."""
    counts = Counter(stem for label in set(labels) for stem in label_stems(label))
    return frozenset(stem for stem, n in counts.items() if n > 1)


def _own_words(name: str, names: Iterable[str]) -> frozenset[str]:
    """The stems that tell a column's ``name`` from the table's other columns' ``names``: a
    caption spanning them all (``Options Outstanding`` over ``Number of Shares`` and
    ``Weighted-Average Exercise Price``) names no column apart. A lone column keeps all."""
    every = [label_stems(n) for n in names]
    common = frozenset.intersection(*every) if len(every) > 1 else frozenset()
    return label_stems(name) - common or label_stems(name)


def _said_by(label: str, name: frozenset[str], shared: frozenset[str] = frozenset()) -> bool:
    """Whether the words that tell ``label`` from its table's other rows (its stems less the
    ``shared`` ones) are all among its column's own stems ``name`` (:func:`_own_words`):
    ``Exercised`` or ``Options exercised`` under ``Weighted-Average Exercise Price``. Such a
    row's figure in that column could not be told from the column's other figures by any
    question."""
    own = label_stems(label) - shared or label_stems(label)  # "Balance" beside "Balance adjustment"
    return own <= name


def _alias(metric: str, spelling: str, new_metrics: dict[str, Term]) -> None:
    """Add ``spelling`` to a new metric term's aliases (a term the glossary already has is
    left as it is)."""
    term = new_metrics.get(metric)
    if term is None or spelling == term.label or spelling in term.aliases:
        return
    new_metrics[metric] = replace(term, aliases=(*term.aliases, spelling))


_PERIOD_CORNER = re.compile(
    r"^\W*(?:(?:fiscal\s+)?(?:years?|periods?|quarters?|months?)\W*)?(?:\(?\s*in\s+\w+\s*\)?)?\W*$",
    re.IGNORECASE,
)
"""A corner cell that says nothing of what the rows are beyond periods: empty, ``Year``,
``Fiscal year``, or a scale note (``(in millions)``)."""


def _bare_period(label: str, fiscal_start_month: int) -> str | None:
    """The period a row label is and nothing else (``2021``, ``FY2021``, ``Q1 2019``,
    ``October 2019``; a footnote mark aside), or None."""
    try:
        return parse_period(row_label(label), None, fiscal_start_month).label
    except PeriodError:
        return None


def _own_labels(data: list[_Row]) -> dict[int, str]:
    """Each data row's own label (footnote marks removed): in a measure table the section
    heading is a period, not a prefix; a label given twice under one period collides."""
    return {r.index: row_label(r.label) for r in data if r.label}


def import_tatqa(
    documents: Iterable[Mapping[str, Any]],
    glossary: Glossary,
    *,
    progress: RowProgress | None = None,
) -> TatQAImport:
    """Turn TAT-QA documents into facts, entity and metric terms and paragraph texts.

    ``progress(done, total)`` is called after each document.
    """
    now = utc_now()
    fiscal = glossary.fiscal_year_start_month
    new_metrics: dict[str, Term] = {}
    new_entities: dict[str, Term] = {}
    facts: dict[FactKey, Fact] = {}
    skipped: list[TatSkip] = []
    texts: list[DocumentText] = []
    scales: Counter[str] = Counter()
    ordered = list(documents)
    spelled: dict[str, str] = {}  # each entity made so far, by the match key of its names
    for done, document in enumerate(ordered):
        if progress is not None:
            progress(done, len(ordered))
        table = document["table"]
        uid = str(table["uid"]).strip()
        entity = entity_code(uid)
        other = entity_taken(entity, uid, glossary.entities.terms, new_entities)
        if other is not None:
            reason = f"its entity {entity!r} is document {other!r}'s: rename one of the two"
            skipped.append(TatSkip(uid, "", "", reason))
            continue
        owner = name_taken(entity, uid, glossary.entities, spelled)
        if owner is not None:  # "acme" beside the glossary's ACME, "x" beside "tatqa-x"
            reason = f"its uid already names the entity {owner!r}: left out, never merged"
            skipped.append(TatSkip(uid, "", "", reason))
            continue
        spelled.update({match_key(entity): entity, match_key(uid): entity})
        if entity not in glossary.entities.terms:
            new_entities.setdefault(entity, Term(TermType.ENTITY, entity, uid))
        reported = len(skipped)  # what this document's table adds to the report
        rows: list[list[str]] = [list(r) for r in table["table"]]
        width = max((len(r) for r in rows), default=0)
        rows = [r + [""] * (width - len(r)) for r in rows]
        header, data = _split(rows, fiscal)
        # a row's own note ("Gross profit (in thousands)") states its own scale, not the
        # table's: the price in the row below it is no thousands
        skipped_rows = {*header, *(r.index for r in data)}
        headings = [r.section for r in data if r.section]
        headings += [rows[i][0] for i in range(len(rows)) if i not in skipped_rows and rows[i]]
        # a heading stating its own unit ("(shares, thousands)") speaks for its rows only;
        # a column header's note ("(Shares in thousands)") is the table's when no other is
        header_texts = [c for i in header for c in rows[i]]
        header_texts += [t for t in headings if not _own_unit(t)]
        scale, why = stated_scale(t for t in header_texts if t.strip() and not _is_number(t))
        scales[scale.value if scale else f"scale {why}"] += 1
        # only the header states exceptions ("Revenue from all regions except U.S." does not)
        excepted = scale_exceptions(c for i in header for c in rows[i] if not _is_number(c))
        mark = len(skipped)
        named_periods = {
            column: {p for i in header if (p := header_period(rows[i][column], fiscal))}
            for column in range(1, width)
        }
        periods: dict[int, str] = {
            c: next(iter(found)) for c, found in named_periods.items() if len(found) == 1
        }
        grouped = {} if periods else _captioned_columns(rows, header, width, fiscal)
        periods.update({column: period for column, (period, _) in grouped.items()})
        spanned = _spanned_periods(rows, header, width, periods, fiscal)
        unread = {c for c, (_, caption) in spanned.items() if not caption}
        for column in range(1, width):
            found = named_periods[column]
            name = " / ".join(_clean(rows[i][column]) for i in header if rows[i][column].strip())
            if column in unread and any(r.cells[column - 1].strip() for r in data):
                reason = "column caption is a share or names no measure of its own"
                skipped.append(TatSkip(uid, name, "", reason))
            if column in periods or column in spanned:
                continue
            if any(r.cells[column - 1].strip() for r in data):
                reason = (
                    "column header names several periods"
                    if found
                    else "column header is not a period"
                )
                skipped.append(TatSkip(uid, name, "", reason))
        by_period = Counter(periods.values())
        captions = (
            _captions_apart(rows, header, width, periods, fiscal)
            if any(n > 1 for n in by_period.values())
            else {}
        )
        if captions:  # each group's own scale, else the one stated outside the captions
            caption_row = next(iter(captions.values())).row
            caption_texts = {rows[caption_row][c] for c in captions}
            outside = [t for t in header_texts if t not in caption_texts]
            scale, why = stated_scale(t for t in outside if t.strip() and not _is_number(t))
            by_period = Counter()
        # a half-year column beside a year end ("June 30, 2019 | December 31, 2018"); a column
        # naming no day may stand under a caption that names it ("Years Ended September 30,"
        # over "2019 | 2018 | 2017"), so only columns naming their day are compared
        heads = {c: " ".join(rows[i][c] for i in header) for c in periods}
        dated = {c: said[0] for c in periods if (said := days_in(heads[c]))}
        interims = interim_days(dated, fiscal)
        shorter = _shorter_columns(rows, header, periods, fiscal)
        period_headed: set[int] = set()  # columns headed by a year of their own, not read
        for column, period in list(periods.items()):
            name = " / ".join(_clean(rows[i][column]) for i in header if rows[i][column])
            if column in shorter:  # "Six Months Ended" over "June 30, 2019 | June 30, 2018"
                skipped.append(TatSkip(uid, name, "", "a header names a span shorter than a year"))
            elif column in interims:
                skipped.append(TatSkip(uid, name, "", INTERIM_REASON))
                period_headed.add(column)
            elif by_period[period] > 1:
                skipped.append(
                    TatSkip(uid, name, "", "another column has the same period (ambiguous)")
                )
                said = days_in(heads[column])  # "FY18 | FY18": restated; "December 31, 2018 |
                if not said or near_a_year_end(said[0], fiscal):  # January 1, 2018": IFRS 16
                    period_headed.add(column)  # (not quarters' ends: "October 27, 2018")
            else:
                continue
            del periods[column]
        captions.update({column: caption for column, (_, caption) in grouped.items()})
        with_data = [c for c in range(1, width) if any(r.cells[c - 1].strip() for r in data)]
        measures = _measure_layout(rows, header, data, width, periods, with_data, fiscal)
        if measures is not None and _span_lost(rows, header, width, measures.names):
            # "Three months ended June 30," over "Revenue | Cost of sales", rows 2019, 2018
            skipped.append(TatSkip(uid, "", "", "a header names a span shorter than a year"))
            measures = None
        elif measures is not None:  # the columns were measures, not unread periods
            del skipped[mark:]
            periods.clear()
        elif len(periods) == 1 and set(with_data) - set(periods) - period_headed:
            # One period header over several value columns ("As of February 28, 2019" above
            # "As reported | Adjustments | Adoption") may span them all: which one it names
            # is not known. Columns headed by a period of their own (two `FY18` columns, left
            # out as ambiguous; an interim day) are not under it.
            column = next(iter(periods))
            name = " / ".join(_clean(rows[i][column]) for i in header if rows[i][column])
            skipped.append(
                TatSkip(uid, name, "", "the only period header may span several columns")
            )
            periods.clear()
        labels, notes = _labels(data, fiscal) if measures is None else (_own_labels(data), {})
        if measures is not None:  # a roll-forward's balances and movements
            notes.update(measures.notes)
        headed = _headed_rows(data)
        made: dict[FactKey, list[Fact]] = {}
        for row in data:
            label = labels.get(row.index)
            columns: dict[int, str] = dict(periods)
            columns.update(
                {c: periods[first] for c, (first, _) in spanned.items() if first in periods}
            )
            if measures is not None:
                stated = measures.periods.get(row.index)
                columns = {c: stated for c in measures.names} if stated else {}
                if measures.by_label and not stated and row.label:
                    reason = "row names no period in a table whose rows are periods"
                    skipped.append(TatSkip(uid, "", repr(row.label), reason))
            if label is None:
                if any(row.cells[c - 1].strip() for c in columns):
                    skipped.append(TatSkip(uid, "", f"row {row.index + 1}", "empty row label"))
                continue
            plain = metric_for_label(label, glossary, new_metrics)
            for column, period in columns.items():
                if column in unread:
                    continue
                metric = plain
                caption = captions.get(column)
                if caption is not None:  # "Revenues: Teekay LNG"
                    metric = metric_for_label(f"{caption.label}: {label}", glossary, new_metrics)
                if measures is not None:  # "Trade receivables: Fair value"
                    # a roll-forward's balance by its caption ("Outstanding: Number of Shares")
                    own = measures.labels.get(row.index, label)
                    if row.index in measures.labels and _said_by(
                        own,
                        _own_words(measures.names[column], measures.names.values()),
                        _shared_stems(measures.labels.values()),
                    ):
                        # "Granted" under "Weighted-Average Grant Date Fair Value": no question
                        # could tell its figure from the other rows' under that column
                        reason = "row label says nothing its column's name does not"
                        skipped.append(TatSkip(uid, measures.names[column], label, reason))
                        continue
                    named = f"{own}: {measures.names[column]}"
                    if row.index in measures.by_label:  # "2021": "Operating Leases" in FY2021
                        named = measures.names[column]
                    metric = metric_for_label(named, glossary, new_metrics)
                    if row.index in measures.within:
                        _alias(metric, f"{measures.within[row.index]}: {named}", new_metrics)
                if column in spanned:  # "Fair Value: Total debt"
                    metric = metric_for_label(
                        f"{spanned[column][1]}: {label}", glossary, new_metrics
                    )
                cell = row.cells[column - 1]
                header_name = " / ".join(
                    _clean(rows[i][column]) for i in header if rows[i][column].strip()
                )
                if caption is not None and not rows[caption.row][column].strip():
                    header_name = f"{caption.text} / {header_name}"
                if measures is not None:  # the block's own title, not the first one's
                    header_name = f"{measures.names[column]} ({period})"
                if column in spanned:  # under the period header of the span's first column
                    header_name = f"{header_name} ({period})"
                column_scale = caption.scale or scale if caption is not None else scale
                if row.section and _OWN_UNIT.search(row.section):  # "(cents per share)"
                    column_scale = stated_scale([row.section])[0] or Scale.ONE
                own_scale = stated_scale([row.label])[0]
                if own_scale is not None:  # "Gross profit (in thousands)"
                    column_scale = own_scale
                elif _own_unit(row.label):  # "ROFE (%)", "Basic earnings per share (cents)"
                    column_scale = Scale.ONE
                for name in header_name.split(" / "):  # "Weighted-Average Life (in years)"
                    if _YEAR_NAMED.match(name) or _own_unit(name):
                        column_scale = stated_scale([name])[0] or Scale.ONE
                section = row.section if row.index in headed else ""  # not past its total
                named_by = [label, section, *header_name.split(" / ")]
                named_by = [t for t in named_by if t and not _EXCEPT.search(t)]
                if any(p.search(t) for p in excepted for t in named_by):
                    column_scale = Scale.ONE  # "(in thousands, except per share data)"
                elif own_scale is None and stated_scale([row.section])[0] is None:
                    whole_name = row_label(row.label)
                    if _NEVER_SCALED.search(whole_name):  # "Diluted earnings per share"
                        column_scale = Scale.ONE  # under "(in millions)" with no "except"
                    elif column_scale in SCALE_WORDS and _NOT_MONEY.search(whole_name):
                        column_scale = None  # "Number of employees" under "(in millions)":
                        # not millions of people; a "%" column's rate stays as written
                names = [label, *header_name.split(" / ")]  # not a heading over other rows
                if column_scale is None and any(_IN_UNITS.search(t) for t in names if t):
                    column_scale = Scale.ONE  # "Cash dividend per share (NT dollars)"
                try:
                    parsed = _cell_value(cell)
                except IngestError:
                    skipped.append(TatSkip(uid, header_name, label, "cell is not a number"))
                    continue
                if parsed is None:
                    continue
                value, unit = parsed
                named_row = notes.get(row.index, repr(label))
                if row.index in headed:  # the heading it is read under
                    named_row += heading_note(row.section, row.section_row + 1)
                where = (
                    f"TAT-QA document {uid}, table, row {row.index + 1} {named_row}, "
                    f"column {column + 1} {header_name!r}"
                )
                if column_scale is None:
                    where += ", scale not stated"
                fact = Fact(
                    metric,
                    entity,
                    period,
                    DEFAULT_CHANNEL,
                    value,
                    unit,
                    "",
                    Scale.ONE if unit == "%" else column_scale or Scale.UNKNOWN,
                    uid,
                    where,
                    Sensitivity.PUBLIC,
                    "",
                    now,
                )
                made.setdefault(fact.key, []).append(fact)
        if not made and len(skipped) == reported and _has_figures(rows):
            # "1.234.567", "12,5%": cells a header or a label cannot be, none read as a number
            reason = "no cell of the table reads as a number (another number format?)"
            skipped.append(TatSkip(uid, "", "", reason))
        for key, candidates in made.items():
            if len(candidates) == 1:
                facts[key] = candidates[0]
                continue
            for fact in candidates:
                skipped.append(
                    TatSkip(
                        uid,
                        key.period,
                        fact.locator,
                        "another row gives the same metric and period (ambiguous)",
                    )
                )
        paragraphs = sorted(
            (p for p in document.get("paragraphs", []) if isinstance(p, Mapping)),
            key=lambda p: int(p.get("order", 0)) if str(p.get("order", "0")).isdigit() else 0,
        )
        texts.append(
            DocumentText(
                uid,
                entity,
                tuple(str(p.get("text", "")).strip() for p in paragraphs if p.get("text")),
            )
        )
    if progress is not None:
        progress(len(ordered), len(ordered))
    return TatQAImport(
        tuple(facts.values()),
        (*new_metrics.values(), *new_entities.values()),
        tuple(skipped),
        len(ordered),
        tuple(texts),
        scales,
    )
