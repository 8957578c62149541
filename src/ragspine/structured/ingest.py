"""Fact ingestion from CSV, XLSX and JSON/JSONL tables with a column mapping.

A mapping file (TOML) names the column for each field and defaults for absent columns::

    [columns]
    metric = "Metric"
    entity = "Company"
    period = "Period"
    value = "Amount"
    channel = "Segment"      # optional

    [defaults]
    currency = "USD"
    scale = "million"
    source_doc_id = "acme-annual-report-2024"
    sensitivity = "internal"
    valid_as_of = "2024-12-31"
    sheet = "Facts"          # XLSX only; default the first sheet

Without a mapping, columns whose names equal the field names (any case) are used. Every row's
locator records file and row (and sheet and cell for XLSX). A bad row raises :class:`IngestError`
naming the file and row, and nothing from that file is written.

Values follow the one grammar of :mod:`ragspine.structured.numbers`. The other fields are checked
too: ``valid_as_of`` is an ISO date (``YYYY-MM-DD``); a currency is a three-letter ISO code and
only currency metrics have one; for a currency metric it comes from the currency field, else from
a unit that is a currency code, else from the glossary unit, and a unit that is a currency code
must equal it; count metrics are whole (at their scale) and not negative.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from ragspine.errors import IngestError, RagSpineError
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, MetricKind, Term, Vocabulary
from ragspine.periods import parse_period
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, FactKey, Scale, utc_now
from ragspine.structured.numbers import SHOWN_LENGTH, is_currency_code, parse_value, shown
from ragspine.structured.tables import SourceRow, open_table, read_text_file

FIELDS = (
    "metric",
    "entity",
    "period",
    "channel",
    "value",
    "unit",
    "currency",
    "scale",
    "source_doc_id",
    "locator",
    "sensitivity",
    "valid_as_of",
)
REQUIRED = ("metric", "entity", "period", "value")
PROGRESS_EVERY = 1000
"""Rows between two progress reports."""

RowProgress = Callable[[int, int | None], None]
"""``progress(done, total)``: rows handled so far and the expected total (None when unknown).
The first call has ``done == 0``, the last ``done == total``."""

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """Which column feeds each fact field, and defaults for fields without a column."""

    columns: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)
    sheet: str | None = None

    @classmethod
    def load(cls, path: Path) -> ColumnMapping:
        text = read_text_file(
            path, "mapping", f"mapping file {path} is not UTF-8 text: write it as a UTF-8 TOML file"
        )
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise IngestError(f"mapping file {path} is not valid TOML: {exc}") from None
        return cls.from_dict(document, str(path))

    @classmethod
    def from_dict(cls, document: Mapping[str, Any], source: str = "mapping") -> ColumnMapping:
        """A mapping from a parsed TOML document; anything but string values is an error."""
        if not isinstance(document, Mapping):
            raise IngestError(f"{source}: expected a table with [columns] and [defaults]")
        unknown_sections = set(document) - {"columns", "defaults"}
        if unknown_sections:
            raise IngestError(
                f"{source}: unknown sections {sorted(unknown_sections)}; "
                "use [columns] and [defaults]"
            )
        columns = _string_table(document, "columns", source)
        defaults = _string_table(document, "defaults", source)
        sheet = defaults.pop("sheet", None)
        for name in [*columns, *defaults]:
            if name not in FIELDS:
                raise IngestError(
                    f"{source}: unknown field {name!r}; valid fields are {', '.join(FIELDS)}"
                )
        return cls(columns, defaults, sheet)


def _string_table(document: Mapping[str, Any], section: str, source: str) -> dict[str, str]:
    table = document.get(section, {})
    example = 'value = "Amount"' if section == "columns" else 'scale = "million"'
    if not isinstance(table, Mapping):
        raise IngestError(
            f"{source}: {section} must be a table such as [{section}] {example}, "
            f"not a {_toml_type(table)}"
        )
    strings = {}
    for key, value in table.items():
        if isinstance(value, date) and not isinstance(value, datetime):
            value = value.isoformat()  # valid_as_of = 2024-12-31 (a TOML date)
        if not isinstance(value, str):
            raise IngestError(
                f"{source}: [{section}] {key} must be a string such as {example.split(' = ')[1]}, "
                f"not a {_toml_type(value)}"
            )
        strings[str(key)] = value
    return strings


def _toml_type(value: object) -> str:
    names = {
        bool: "boolean",
        int: "number",
        float: "number",
        str: "string",
        list: "list",
        dict: "table",
    }
    return names.get(type(value), type(value).__name__)


def _resolve(vocab: Vocabulary, raw: object) -> str:
    code = vocab.resolve(str(raw))
    if code is None:
        close = vocab.suggest(str(raw))
        hint = f" (close: {', '.join(close)})" if close else ""
        raise IngestError(f"unknown {vocab.type} {shown(str(raw))}{hint}; add it to the glossary")
    return code


def _text(raw: object) -> str:
    return "" if raw is None else str(raw).strip()


def unit_and_currency(term: Term, unit_raw: object, currency_raw: object) -> tuple[str, str]:
    """The unit and currency of a fact of metric ``term`` (see the module docstring)."""
    unit = _text(unit_raw)
    currency = _text(currency_raw).upper()
    if currency and not is_currency_code(currency):
        raise IngestError(
            f"currency {shown(currency_raw)} is not a three-letter ISO code such as USD"
        )
    if term.kind is not MetricKind.CURRENCY:
        if currency:
            raise IngestError(
                f"metric {term.code!r} is a {term.kind.value} metric, so it has no currency "
                f'(got {currency}); remove the currency or set kind = "currency" for it in the '
                "glossary"
            )
        return unit or term.unit, ""
    if not currency:
        for candidate in (unit, term.unit):
            if is_currency_code(candidate.upper()):
                currency = candidate.upper()
                break
        else:
            raise IngestError(
                f"metric {term.code!r} is a currency metric but no currency is given; add a "
                'currency column or [defaults] currency = "USD" to the mapping'
            )
    if not unit:
        unit = term.unit if term.unit and not is_currency_code(term.unit) else currency
    if is_currency_code(unit.upper()) and unit.upper() != currency:
        raise IngestError(f"unit {unit} and currency {currency} disagree; give one currency")
    return unit, currency


def check_count(value: Decimal, scale: Scale) -> None:
    """Raise unless a count is whole at ``scale`` and not negative."""
    numerator, denominator = value.as_integer_ratio()
    if numerator < 0:
        raise IngestError(f"value {value} is negative, but a count cannot be")
    if scale is Scale.UNKNOWN:
        return  # whole at a scale nobody stated: not known either way
    if numerator * scale.multiplier % denominator:
        at = "" if scale is Scale.ONE else f" at scale {scale.value}"
        raise IngestError(f"value {value} is not a whole number{at}, but a count must be")


def iso_date(raw: object) -> str:
    """``raw`` as ``YYYY-MM-DD`` (a date cell or ISO text), or "" when absent."""
    if raw is None:
        return ""
    if isinstance(raw, datetime):
        if raw.time() != datetime.min.time():
            raise IngestError(f"valid_as_of {shown(raw)} has a time of day; give a date")
        return raw.date().isoformat()
    if isinstance(raw, date):
        return raw.isoformat()
    text = str(raw).strip()
    problem = "is not an ISO date (YYYY-MM-DD, e.g. 2024-12-31)"
    if _ISO_DATE.fullmatch(text):
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            problem = "is not a real date"
    raise IngestError(f"valid_as_of {shown(raw)} {problem}")


class _FactReader:
    """Turns the rows of one file into facts, checking every field.

    Work that depends only on a column layout or on a repeated cell (which column feeds which
    field, glossary codes, unit and currency) is done once and remembered: a fact file has many
    rows but few distinct metrics, entities, scales and currencies.
    """

    def __init__(self, path: Path, glossary: Glossary, mapping: ColumnMapping) -> None:
        self._file = path.name
        self._glossary = glossary
        self._mapping = mapping
        self._now = utc_now()
        self._layouts: dict[tuple[str, ...], dict[str, str]] = {}
        self._codes: dict[tuple[str, str], str] = {}
        self._units: dict[tuple[str, str, str], tuple[str, str]] = {}
        self._scales: dict[str, Scale] = {}
        self._levels: dict[str, Sensitivity] = {}

    def _layout(self, keys: tuple[str, ...]) -> dict[str, str]:
        """Field -> the key of the cell that feeds it, for rows with these keys."""
        layout = self._layouts.get(keys)
        if layout is None:
            lower = {str(k).strip().lower(): k for k in keys}
            layout = {}
            for name in FIELDS:
                column = self._mapping.columns.get(name)
                if column is not None and column not in lower.values():
                    raise IngestError(f"mapped column {column!r} for {name} is missing")
                key = column if column is not None else lower.get(name)
                if key is not None:
                    layout[name] = key
            self._layouts[keys] = layout
        return layout

    def _code(self, vocab: Vocabulary, raw: object) -> str:
        text = str(raw)
        code = self._codes.get((vocab.type, text))
        if code is None:
            code = self._codes[vocab.type, text] = _resolve(vocab, text)
        return code

    def _scale(self, raw: object) -> Scale:
        text = _text(raw)
        scale = self._scales.get(text)
        if scale is None:
            try:
                scale = self._scales[text] = Scale.parse(text)
            except IngestError:
                valid = ", ".join(s.value for s in Scale)
                raise IngestError(f"unknown scale {shown(text)}: use one of {valid}") from None
        return scale

    def _sensitivity(self, raw: object) -> Sensitivity:
        text = _text(raw) or "internal"
        level = self._levels.get(text)
        if level is None:
            try:
                level = self._levels[text] = Sensitivity.parse(text)
            except RagSpineError:
                valid = ", ".join(s.label for s in Sensitivity)
                raise IngestError(
                    f"unknown sensitivity {shown(text)}: use one of {valid}"
                ) from None
        return level

    def _period(self, raw: object) -> str:
        text = str(raw)
        if len(text) > SHOWN_LENGTH:  # no period is this long; keep the message short
            raise IngestError(
                f"period {shown(text)} is too long to be a period; use forms such as FY2024, "
                "2024Q3, H1 2024 or 2024-03"
            )
        return parse_period(text, None, self._glossary.fiscal_year_start_month).label

    def fact(self, row: SourceRow) -> Fact:
        """The fact of one row; raises naming file and row."""
        where = f"{self._file}: {row.locator}"
        try:
            return self._fact(row, where)
        except RagSpineError as exc:
            raise IngestError(f"{where}: {exc}") from None

    def _fact(self, row: SourceRow, where: str) -> Fact:
        values = row.values
        cells: dict[str, Any] = {}
        for name, key in self._layout(tuple(values)).items():
            cell = values[key]
            if cell is not None and not (isinstance(cell, str) and not cell.strip()):
                cells[name] = cell
        defaults = self._mapping.defaults
        fields = {**defaults, **cells}
        for name, cell in fields.items():  # no text; a PostgreSQL text field cannot hold one
            if isinstance(cell, str) and "\x00" in cell:
                raise IngestError(f"{name} holds a NUL character (U+0000): remove it")
        for name in REQUIRED:
            if fields.get(name) is None:
                raise IngestError(f"no {name}; map a column to it or set a default")
        glossary = self._glossary
        metric = self._code(glossary.metrics, fields["metric"])
        entity = self._code(glossary.entities, fields["entity"])
        channel = self._code(glossary.channels, fields.get("channel") or DEFAULT_CHANNEL)
        period = self._period(fields["period"])
        term = glossary.metrics.terms[metric]
        scale = self._scale(fields.get("scale"))
        # A default currency fills currency metrics only; a currency cell is always checked.
        currency = cells.get("currency")
        if currency is None and term.kind is MetricKind.CURRENCY:
            currency = defaults.get("currency")
        unit_key = (metric, _text(fields.get("unit")), _text(currency))
        unit_currency = self._units.get(unit_key)
        if unit_currency is None:
            unit_currency = unit_and_currency(term, fields.get("unit"), currency)
            self._units[unit_key] = unit_currency
        unit, currency = unit_currency
        value = parse_value(fields["value"], kind=term.kind, currency=currency)
        if term.kind is MetricKind.COUNT:
            check_count(value, scale)
        extra = fields.get("locator")
        return Fact(
            metric,
            entity,
            period,
            channel,
            value,
            unit,
            currency,
            scale,
            str(fields.get("source_doc_id") or self._file),
            where + (f", {extra}" if extra else ""),
            self._sensitivity(fields.get("sensitivity")),
            iso_date(fields.get("valid_as_of")),
            self._now,
        )


def rows_to_facts(
    path: Path,
    glossary: Glossary,
    mapping: ColumnMapping | None = None,
    *,
    progress: RowProgress | None = None,
) -> list[Fact]:
    """Read and validate every row of ``path``; raise on the first bad row, writing nothing."""
    mapping = mapping or ColumnMapping()
    table = open_table(path, mapping.sheet)
    if progress is not None:
        progress(0, table.expected)
    reader = _FactReader(path, glossary, mapping)
    facts: list[Fact] = []
    seen: dict[FactKey, str] = {}
    for row in table.rows:
        fact = reader.fact(row)
        if fact.key in seen:
            raise IngestError(
                f"{path.name}: {row.locator}: repeats the key of {seen[fact.key]} ({fact.key})"
            )
        seen[fact.key] = row.locator
        facts.append(fact)
        if progress is not None and len(facts) % PROGRESS_EVERY == 0:
            expected = table.expected
            progress(len(facts), None if expected is None else max(expected, len(facts)))
    if progress is not None:
        progress(len(facts), len(facts))
    return facts


def with_progress(facts: Sequence[Fact], progress: RowProgress | None) -> Iterator[Fact]:
    """``facts`` one by one, reporting ``progress(done, total)`` as a consumer takes them."""
    total = len(facts)
    if progress is not None:
        progress(0, total)
    for done, fact in enumerate(facts, start=1):
        yield fact
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress(done, total)
    if progress is not None:
        progress(total, total)
