"""Reading fact tables (CSV, XLSX, JSON, JSONL) as rows of named cells, strictly.

Every row carries its locator (``row 4``, ``sheet Facts row 2``, ``item 3``, ``line 7``); CSV and
XLSX rows are numbered like a spreadsheet shows them (the header is row 1). A file that is not a
clean table raises :class:`IngestError` naming the file and row, before any fact is made from it:
text that is not UTF-8 (or a binary file), a CSV row with more or fewer fields than the header, a
quote still open at the end of the file (a truncated file), text after a closing quote, a header
or JSON object naming a column twice, invalid JSON.
"""

from __future__ import annotations

import codecs
import csv
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ragspine.errors import IngestError


@dataclass(frozen=True, slots=True)
class SourceRow:
    """One raw row and where it sits in its file."""

    values: Mapping[str, Any]
    locator: str


@dataclass(frozen=True, slots=True)
class Table:
    """The rows of one file, read lazily, and about how many there are (None when unknown)."""

    rows: Iterator[SourceRow]
    expected: int | None


def open_table(path: Path, sheet: str | None = None) -> Table:
    """The rows of a CSV, XLSX, JSON or JSONL file."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise IngestError(f"fact file {path} is a folder: give one table file")
    if not path.is_file():
        raise IngestError(f"fact file {path} does not exist")
    if path.stat().st_size == 0:  # nothing to import is a mistake, not "0 added"
        raise IngestError(f"fact file {path} is empty: give a table with a header row and rows")
    try:
        if suffix == ".csv":
            return Table(_iter_csv(path), max(_count_lines(path) - 1, 0))
        if suffix == ".jsonl":
            return Table(_iter_jsonl(path), _count_lines(path))
        if suffix == ".json":
            return _json_table(path)
    except OSError as exc:
        raise IngestError(f"cannot read fact file {path}: {exc.strerror}") from None
    if suffix in {".xlsx", ".xlsm"}:
        return _xlsx_table(path, sheet)
    raise IngestError(
        f"{path.name}: unsupported file type {suffix!r}; use .csv, .xlsx, .json or .jsonl"
    )


def read_text_file(path: Path, what: str, not_utf8: str) -> str:
    """The text of a UTF-8 file; :class:`IngestError` when it is missing or unreadable (naming
    it ``{what} file``) or not UTF-8 (saying ``not_utf8``)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IngestError(f"{what} file {path} does not exist") from None
    except UnicodeDecodeError:
        raise IngestError(not_utf8) from None
    except OSError as exc:
        raise IngestError(f"cannot read {what} file {path}: {exc.strerror}") from None


def read_json_file(path: Path, what: str, example: str) -> Any:
    """The parsed JSON of a UTF-8 file; :class:`IngestError` naming the file when it is
    missing, unreadable, not UTF-8 (suggesting ``example``), invalid, or too large or deep."""
    text = read_text_file(
        path, what, f"{path.name}: is not UTF-8 text; pass a {what} JSON file such as {example}"
    )
    try:
        parsed = json.loads(text.removeprefix("\ufeff"))  # a byte order mark: saved on Windows
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path.name}: invalid JSON at line {exc.lineno} ({exc.msg})") from None
    except (ValueError, RecursionError):  # an integer beyond the digit limit, deep nesting
        raise IngestError(f"{path.name}: JSON too large or too deeply nested to read") from None
    if _SURROGATE_ESCAPE.search(text):  # a pair is a character; a lone half is no text
        try:
            json.dumps(parsed, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise IngestError(
                f"{path.name}: a string holds a lone surrogate escape (such as \\ud800), "
                "which is no character; fix the file's text, nothing was ingested"
            ) from None
    return parsed


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def check_header(names: Iterable[str], where: str) -> None:
    """Raise if two column names are equal up to case and surrounding white space."""
    seen: set[str] = set()
    for name in names:
        key = name.strip().casefold()
        if key and key in seen:
            raise IngestError(f"{where}: the header names column {name.strip()!r} twice")
        seen.add(key)


def _count_lines(path: Path) -> int:
    lines, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def _not_utf8(path: Path) -> IngestError:
    """The error for a file that is not UTF-8, naming the first bad byte and its line."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    where = "a character cut off at the end"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 16):
            pending = decoder.getstate()[0]
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                data = pending + chunk
                line += data.count(b"\n", 0, exc.start)
                where = f"byte 0x{data[exc.start]:02x} on line {line}"
                break
            line += chunk.count(b"\n")
    return IngestError(
        f"{path.name}: is not UTF-8 text ({where}); if it is a table, save it as UTF-8"
    )


_CSV_PROBLEMS = {
    "unexpected end of data": (
        "the file ends inside a quoted cell: a closing quote is missing or the file was cut off"
    ),
    "',' expected after '\"'": "has text after a closing quote; quote the whole cell",
    "line contains NUL": "contains a NUL byte; is this a binary file?",
}


def _next_record(reader: Iterator[list[str]], path: Path, number: int) -> list[str] | None:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        problem = _CSV_PROBLEMS.get(str(exc), str(exc))
        raise IngestError(f"{path.name}: row {number}: {problem}") from None
    except UnicodeDecodeError:
        raise _not_utf8(path) from None


def _iter_csv(path: Path) -> Iterator[SourceRow]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle, strict=True)
        header = _next_record(reader, path, 1)
        if header is None:
            return
        check_header(header, f"{path.name}: row 1")
        width = len(header)
        number = 1
        while True:
            number += 1
            fields = _next_record(reader, path, number)
            if fields is None:
                return
            if not fields:  # a blank line
                continue
            if len(fields) != width:
                hint = (
                    'quote cells that contain a comma, e.g. "1,234"'
                    if len(fields) > width
                    else "a cell or a separator is missing"
                )
                raise IngestError(
                    f"{path.name}: row {number}: has {len(fields)} fields but the header has "
                    f"{width}; {hint}"
                )
            yield SourceRow(dict(zip(header, fields, strict=True)), f"row {number}")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; a key given twice (up to case) is an error, not last-wins."""
    item = dict(pairs)
    if len(item) != len(pairs) or len({k.strip().casefold() for k in item}) != len(item):
        seen: set[str] = set()
        for key, _ in pairs:
            if key.strip().casefold() in seen:
                raise IngestError(f"an object names {key.strip()!r} twice")
            seen.add(key.strip().casefold())
    return item


def _json_loads(text: str, where: str) -> Any:
    try:
        return json.loads(text, parse_float=Decimal, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"{where}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})"
        ) from None
    except IngestError as exc:
        raise IngestError(f"{where}: {exc}") from None
    except ValueError:  # an integer beyond Python's digit limit
        raise IngestError(f"{where}: holds a number with too many digits") from None
    except RecursionError:
        raise IngestError(f"{where}: JSON nested too deeply") from None


def _iter_jsonl(path: Path) -> Iterator[SourceRow]:
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise IngestError(
                    f"{path.name}: line {number}: is not UTF-8 text "
                    f"(byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
                ) from None
            if not line.strip():
                continue
            item = _json_loads(line, f"{path.name}: line {number}")
            if not isinstance(item, dict):
                raise IngestError(f"{path.name}: line {number}: expected a JSON object")
            yield SourceRow(item, f"line {number}")


def _json_table(path: Path) -> Table:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IngestError(
            f"{path.name}: is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); "
            "save it as UTF-8"
        ) from None
    document = _json_loads(text, path.name)
    items = document.get("facts") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise IngestError(f'{path.name}: expected a list of objects or {{"facts": [...]}}')

    def rows() -> Iterator[SourceRow]:
        for number, item in enumerate(items, start=1):
            if not isinstance(item, dict):
                raise IngestError(f"{path.name}: item {number}: expected a JSON object")
            yield SourceRow(item, f"item {number}")

    return Table(rows(), len(items))


def _xlsx_table(path: Path, sheet: str | None) -> Table:
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many unrelated types for a bad file
        raise IngestError(f"{path.name}: not a readable XLSX workbook ({exc})") from None
    if sheet is not None and sheet not in book.sheetnames:
        book.close()
        raise IngestError(
            f"{path.name}: no sheet {sheet!r}; sheets are {', '.join(book.sheetnames)}"
        )
    ws = book[sheet] if sheet else book.worksheets[0]
    expected = ws.max_row - 1 if ws.max_row else None

    def rows() -> Iterator[SourceRow]:
        try:
            cells = ws.iter_rows(values_only=True)
            header = next(cells, None)
            if header is None:
                return
            names = [str(h).strip() if h is not None else "" for h in header]
            check_header(names, f"{path.name}: sheet {ws.title} row 1")
            for number, values in enumerate(cells, start=2):
                if all(v is None for v in values):
                    continue
                row = dict(zip(names, values, strict=False))
                yield SourceRow(row, f"sheet {ws.title} row {number}")
        finally:
            book.close()

    return Table(rows(), expected)
