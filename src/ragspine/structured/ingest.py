"""Fact ingestion from CSV, XLSX and JSON/JSONL tables with a column mapping.

A mapping file (TOML) names the column for each field and defaults for absent columns::

    [columns]
    metric = "Metric"
    entity = "Company"
    period = "Period"
    value = "Amount"
    channel = "Segment"      # optional

    [defaults]
    unit = "USD"
    currency = "USD"
    scale = "million"
    source_doc_id = "acme-annual-report-2024"
    sensitivity = "internal"
    valid_as_of = "2024-12-31"
    sheet = "Facts"          # XLSX only; default the first sheet

Without a mapping, columns whose names equal the field names (any case) are used. Every row's
locator records file and row (and sheet and cell for XLSX). A bad row raises :class:`IngestError`
naming the file and row, and nothing from that file is written.
"""

from __future__ import annotations

import csv
import json
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ragspine.errors import IngestError, PeriodError
from ragspine.glossary import DEFAULT_CHANNEL, Glossary, MetricKind, Vocabulary
from ragspine.periods import parse_period
from ragspine.security import Sensitivity
from ragspine.structured.facts import Fact, FactKey, Scale, parse_decimal, utc_now

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


@dataclass(frozen=True, slots=True)
class ColumnMapping:
    """Which column feeds each fact field, and defaults for fields without a column."""

    columns: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)
    sheet: str | None = None

    @classmethod
    def load(cls, path: Path) -> ColumnMapping:
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise IngestError(f"mapping file {path} does not exist") from None
        except tomllib.TOMLDecodeError as exc:
            raise IngestError(f"mapping file {path} is not valid TOML: {exc}") from None
        return cls.from_dict(document, str(path))

    @classmethod
    def from_dict(cls, document: Mapping[str, Any], source: str = "mapping") -> ColumnMapping:
        unknown_sections = set(document) - {"columns", "defaults"}
        if unknown_sections:
            raise IngestError(
                f"{source}: unknown sections {sorted(unknown_sections)}; "
                "use [columns] and [defaults]"
            )
        columns = {str(k): str(v) for k, v in document.get("columns", {}).items()}
        defaults = {str(k): str(v) for k, v in document.get("defaults", {}).items()}
        sheet = defaults.pop("sheet", None)
        for name in [*columns, *defaults]:
            if name not in FIELDS:
                raise IngestError(
                    f"{source}: unknown field {name!r}; valid fields are {', '.join(FIELDS)}"
                )
        return cls(columns, defaults, sheet)


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One raw row and where it sits in its file."""

    values: Mapping[str, Any]
    locator: str


def _iter_csv(path: Path) -> Iterator[SourceRow]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        for number, row in enumerate(reader, start=2):
            yield SourceRow(row, f"row {number}")


def _iter_json(path: Path) -> Iterator[SourceRow]:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line, parse_float=Decimal)
            except json.JSONDecodeError as exc:
                raise IngestError(f"{path.name} line {number}: invalid JSON ({exc.msg})") from None
            if not isinstance(item, dict):
                raise IngestError(f"{path.name} line {number}: expected a JSON object")
            yield SourceRow(item, f"line {number}")
        return
    try:
        document = json.loads(text, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path.name}: invalid JSON at line {exc.lineno} ({exc.msg})") from None
    items = document.get("facts") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise IngestError(f'{path.name}: expected a list of objects or {{"facts": [...]}}')
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise IngestError(f"{path.name} item {number}: expected a JSON object")
        yield SourceRow(item, f"item {number}")


def _iter_xlsx(path: Path, sheet: str | None) -> Iterator[SourceRow]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many unrelated types for a bad file
        raise IngestError(f"{path.name}: not a readable XLSX workbook ({exc})") from None
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise IngestError(
                f"{path.name}: no sheet {sheet!r}; sheets are {', '.join(book.sheetnames)}"
            )
        ws = book[sheet] if sheet else book.worksheets[0]
        rows = ws.iter_rows(values_only=True)
        header = next(rows, None)
        if header is None:
            return
        names = [str(h).strip() if h is not None else "" for h in header]
        for number, values in enumerate(rows, start=2):
            if all(v is None for v in values):
                continue
            row = dict(zip(names, values, strict=False))
            yield SourceRow(row, f"sheet {ws.title} row {number}")
    finally:
        book.close()


def read_rows(path: Path, sheet: str | None = None) -> Iterator[SourceRow]:
    """Rows of a CSV, XLSX, JSON or JSONL file."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise IngestError(f"fact file {path} does not exist")
    if suffix == ".csv":
        return _iter_csv(path)
    if suffix in {".json", ".jsonl"}:
        return _iter_json(path)
    if suffix in {".xlsx", ".xlsm"}:
        return _iter_xlsx(path, sheet)
    raise IngestError(
        f"{path.name}: unsupported file type {suffix!r}; use .csv, .xlsx, .json or .jsonl"
    )


def _resolve(vocab: Vocabulary, raw: object, where: str) -> str:
    code = vocab.resolve(str(raw))
    if code is None:
        close = vocab.suggest(str(raw))
        hint = f" (close: {', '.join(close)})" if close else ""
        raise IngestError(
            f"{where}: unknown {vocab.type} {str(raw)!r}{hint}; add it to the glossary"
        )
    return code


def rows_to_facts(
    path: Path, glossary: Glossary, mapping: ColumnMapping | None = None
) -> list[Fact]:
    """Read and validate every row of ``path``; raise on the first bad row, writing nothing."""
    mapping = mapping or ColumnMapping()
    facts: list[Fact] = []
    seen: dict[FactKey, str] = {}
    now = utc_now()
    for row in read_rows(path, mapping.sheet):
        lower = {str(k).strip().lower(): v for k, v in row.values.items() if k is not None}

        def get(name: str, row: SourceRow = row, lower: dict[str, Any] = lower) -> Any:
            column = mapping.columns.get(name)
            if column is not None:
                if column not in row.values:
                    raise IngestError(
                        f"{row.locator}: mapped column {column!r} for {name} is missing"
                    )
                value = row.values[column]
            else:
                value = lower.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                return mapping.defaults.get(name)
            return value

        where = f"{path.name}: {row.locator}"
        for name in REQUIRED:
            if get(name) is None:
                raise IngestError(f"{where}: no {name}; map a column to it or set a default")
        metric = _resolve(glossary.metrics, get("metric"), where)
        entity = _resolve(glossary.entities, get("entity"), where)
        channel = _resolve(glossary.channels, get("channel") or DEFAULT_CHANNEL, where)
        try:
            period = parse_period(str(get("period")), None, glossary.fiscal_year_start_month).label
        except PeriodError as exc:
            raise IngestError(f"{where}: {exc}") from None
        term = glossary.metrics.terms[metric]
        unit = str(get("unit") or term.unit)
        currency = str(get("currency") or (unit if term.kind is MetricKind.CURRENCY else ""))
        extra = get("locator")
        locator = f"{path.name}: {row.locator}" + (f", {extra}" if extra else "")
        try:
            fact = Fact(
                metric,
                entity,
                period,
                channel,
                parse_decimal(get("value"), where),
                unit,
                currency,
                Scale.parse(get("scale")),
                str(get("source_doc_id") or path.name),
                locator,
                Sensitivity.parse(get("sensitivity") or "internal"),
                str(get("valid_as_of") or ""),
                now,
            )
        except IngestError as exc:
            raise IngestError(f"{where}: {exc}") from None
        except Exception as exc:
            raise IngestError(f"{where}: {exc}") from None
        if fact.key in seen:
            raise IngestError(f"{where}: repeats the key of {seen[fact.key]} ({fact.key})")
        seen[fact.key] = row.locator
        facts.append(fact)
    return facts
