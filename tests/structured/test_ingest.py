from __future__ import annotations

import csv
import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import ragspine
from ragspine import Principal, Workspace
from ragspine.errors import IngestError
from ragspine.glossary import MetricKind
from ragspine.structured.convfinqa import load_filings
from ragspine.structured.facts import FactKey
from ragspine.structured.ingest import ColumnMapping
from ragspine.structured.numbers import parse_value
from structured.number_strategies import bounded_decimals

INTERNAL = Principal.of("internal")

CSV = """Metric,Company,Period,Amount,Segment
Revenue,ACME,FY2024,"1,234,567.891",Online
net profit,ACME Corp,2024Q3,(27.1),
Gross margin,ACME CN,H1 2024,41.5,stores
"""

MAPPING = """
[columns]
metric = "Metric"
entity = "Company"
period = "Period"
value = "Amount"
channel = "Segment"

[defaults]
scale = "million"
source_doc_id = "acme-ar-2024"
"""


@pytest.fixture()
def ws(tmp_path: Path) -> Workspace:
    return Workspace.init(tmp_path / "ws")


def write_mapping(tmp_path: Path) -> Path:
    path = tmp_path / "map.toml"
    path.write_text(MAPPING, encoding="utf-8")
    return path


def test_csv_with_mapping_records_locators(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "acme.csv"
    src.write_text(CSV, encoding="utf-8")
    summary = ws.ingest_facts(src, mapping=write_mapping(tmp_path))
    assert summary.added == 3
    online = ws.facts.get(FactKey("revenue", "acme", "FY2024", "online"))
    assert online is not None
    assert online.value == Decimal("1234567.891")
    assert online.currency == "USD" and online.locator == "acme.csv: row 2"
    assert online.source_doc_id == "acme-ar-2024"
    loss = ws.facts.get(FactKey("net_income", "acme", "FY2024-Q3", "total"))
    assert loss is not None and loss.value == Decimal("-27.1")
    res = ws.query_metric("revenue", "acme", "FY24", "web", principal=INTERNAL)
    assert res.status == "found"
    assert res.text.startswith(
        "ACME Corp's Revenue (Online) in FY2024 was 1,234,567.891 million US dollars."
    )
    assert res.text.endswith("Source: acme-ar-2024, acme.csv: row 2.")


def test_bad_row_names_file_and_row_and_writes_nothing(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "bad.csv"
    src.write_text(CSV + "Revenue,ACME,FY2023,12,Wholesale\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"bad\.csv: row 5: unknown channel 'Wholesale'"):
        ws.ingest_facts(src, mapping=write_mapping(tmp_path))
    assert ws.facts.count() == 0
    src.write_text(CSV + "Revenue,ACME,FY2023,twelve,\n", encoding="utf-8")
    with pytest.raises(IngestError, match=r"row 5: value 'twelve' is not a number"):
        ws.ingest_facts(src, mapping=write_mapping(tmp_path))
    assert ws.facts.count() == 0


def test_duplicate_key_in_one_file_is_an_error(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "dup.csv"
    src.write_text(
        "metric,entity,period,value\nrevenue,acme,2024,1\nsales,ACME,FY24,2\n", encoding="utf-8"
    )
    with pytest.raises(IngestError, match="row 3: repeats the key of row 2"):
        ws.ingest_facts(src)


def test_json_and_jsonl_keep_exact_decimals(ws: Workspace, tmp_path: Path) -> None:
    rows = [
        {"metric": "revenue", "entity": "acme", "period": "2024", "value": 0.30000000000000004},
        {"metric": "headcount", "entity": "acme", "period": "2024-03", "value": 1200},
    ]
    (tmp_path / "f.json").write_text(json.dumps({"facts": rows}), encoding="utf-8")
    (tmp_path / "f.jsonl").write_text(
        "\n".join(json.dumps({**r, "entity": "acme_cn"}) for r in rows), encoding="utf-8"
    )
    ws.ingest_facts(tmp_path / "f.json")
    ws.ingest_facts(tmp_path / "f.jsonl")
    a = ws.facts.get(FactKey("revenue", "acme", "FY2024", "total"))
    b = ws.facts.get(FactKey("headcount", "acme_cn", "2024-03", "total"))
    assert a is not None and str(a.value) == "0.30000000000000004"
    assert a.locator == "f.json: item 1"
    assert b is not None and b.locator == "f.jsonl: line 2" and b.unit == "employees"


def test_xlsx_with_sheet(ws: Workspace, tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "Notes"
    sheet = book.create_sheet("Facts")
    sheet.append(["Metric", "Company", "Period", "Amount"])
    sheet.append(["revenue", "ACME", "FY2023", 1234567.891])
    sheet.append(["revenue", "ACME", "FY2022", 0.1])
    book.save(tmp_path / "f.xlsx")
    mapping = ColumnMapping.from_dict(
        {
            "columns": {
                "metric": "Metric",
                "entity": "Company",
                "period": "Period",
                "value": "Amount",
            },
            "defaults": {"sheet": "Facts"},
        }
    )
    assert ws.ingest_facts(tmp_path / "f.xlsx", mapping=mapping).added == 2
    got = ws.facts.get(FactKey("revenue", "acme", "FY2023", "total"))
    assert got is not None and got.value == Decimal("1234567.891")
    assert got.locator == "f.xlsx: sheet Facts row 2"
    bad = ColumnMapping.from_dict({"defaults": {"sheet": "Nope"}})
    with pytest.raises(IngestError, match="no sheet 'Nope'"):
        ws.ingest_facts(tmp_path / "f.xlsx", mapping=bad)


def test_mapping_with_unknown_field_is_rejected() -> None:
    with pytest.raises(IngestError, match="unknown field 'amount'"):
        ColumnMapping.from_dict({"columns": {"amount": "Value"}})


def test_unreadable_mapping_and_convfinqa_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "latin1.toml").write_bytes(b'[columns]\nmetric = "M\xe9trique"\n')
    (tmp_path / "latin1.json").write_bytes(b'[{"id": "\xe9"}]')
    cases = [
        (ColumnMapping.load, "missing.toml", "mapping file .*missing.toml does not exist"),
        (ColumnMapping.load, "latin1.toml", "latin1.toml is not UTF-8 text: write it as a UTF-8"),
        (ColumnMapping.load, ".", "cannot read mapping file"),
        (load_filings, "missing.json", "ConvFinQA file .*missing.json does not exist"),
        (load_filings, "latin1.json", "latin1.json: is not UTF-8 text; pass a ConvFinQA JSON"),
        (load_filings, ".", "cannot read ConvFinQA file"),
    ]
    for load, name, message in cases:
        with pytest.raises(IngestError, match=message):
            load(tmp_path / name)


# --- Strict reading: each finding of the hardening review, on real files -----------------------

HEADER = "metric,entity,period,value\n"


def ingest_csv(ws: Workspace, tmp_path: Path, body: str, name: str = "acme.csv") -> None:
    src = tmp_path / name
    src.write_text(HEADER + body, encoding="utf-8")
    ws.ingest_facts(src)


def rejected(ws: Workspace, tmp_path: Path, body: str, message: str) -> None:
    """``body`` fails the whole file with ``message`` and leaves the store as it was."""
    before = ws.facts.count()
    with pytest.raises(IngestError) as caught:
        ingest_csv(ws, tmp_path, body)
    assert message in str(caught.value)
    assert ws.facts.count() == before


def test_unquoted_thousands_make_a_ragged_row(ws: Workspace, tmp_path: Path) -> None:
    # csv.DictReader read this as value '(1' and dropped '234)': the fact became 1.
    rejected(
        ws,
        tmp_path,
        "revenue,acme,FY2023,12\nrevenue,acme,FY2024,(1,234)\n",
        "acme.csv: row 3: has 5 fields but the header has 4; quote cells that contain a comma",
    )


def test_rows_with_too_few_fields_are_rejected(ws: Workspace, tmp_path: Path) -> None:
    rejected(
        ws, tmp_path, "revenue,acme,12\n", "acme.csv: row 2: has 3 fields but the header has 4"
    )


def test_decimal_comma_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    # Was stored as 1.2345.
    rejected(
        ws,
        tmp_path,
        'revenue,acme,FY2024,"1.234,5"\n',
        "acme.csv: row 2: value '1.234,5' has ',' after the decimal point",
    )
    rejected(
        ws,
        tmp_path,
        'revenue,acme,FY2024,"1,23"\n',
        "acme.csv: row 2: value '1,23' has a comma group that is not three digits",
    )


def test_unbalanced_parenthesis_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    # '(5' was stored as 5 and '(1,234' (quoted) as 1234.
    rejected(ws, tmp_path, "revenue,acme,FY2024,(5\n", "row 2: value '(5' has an unbalanced")
    rejected(
        ws,
        tmp_path,
        'revenue,acme,FY2023,1\nrevenue,acme,FY2024,"(1,234"\n',
        "acme.csv: row 3: value '(1,234' has an unbalanced parenthesis",
    )


@pytest.mark.parametrize(
    "tail", ['"12,000,000', '"12,000,000\n', '"12,000,000\nrevenue,acme,FY23,1']
)
def test_file_cut_inside_a_quote_is_rejected(ws: Workspace, tmp_path: Path, tail: str) -> None:
    # The csv module accepted the open quote at the end of the file: 12 million was stored.
    rejected(
        ws,
        tmp_path,
        "revenue,acme,FY2023,1\nrevenue,acme,FY2024," + tail,
        "acme.csv: row 3: the file ends inside a quoted cell",
    )


def test_text_after_a_closing_quote_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    rejected(ws, tmp_path, 'revenue,acme,FY2024,"12"5\n', "row 2: has text after a closing quote")


def test_huge_exponent_is_rejected_fast(ws: Workspace, tmp_path: Path) -> None:
    # Was accepted; a later lookup of it took 69 s and 6.9 GB.
    start = time.perf_counter()
    rejected(ws, tmp_path, "revenue,acme,FY2024,1e999999999\n", "row 2: value '1e999999999'")
    (tmp_path / "big.jsonl").write_text(
        '{"metric": "revenue", "entity": "acme", "period": "FY2024", "value": 1e999999999}\n',
        encoding="utf-8",
    )
    with pytest.raises(
        IngestError, match=re.escape("big.jsonl: line 1: value 1E+999999999 is too large")
    ):
        ws.ingest_facts(tmp_path / "big.jsonl")
    assert time.perf_counter() - start < 2
    assert ws.facts.count() == 0


def test_long_raw_values_are_cut_in_messages(ws: Workspace, tmp_path: Path) -> None:
    # A 200-digit value was stored; now it is refused and the message stays short.
    with pytest.raises(IngestError) as caught:
        ingest_csv(ws, tmp_path, "revenue,acme,FY2024," + "9" * 200 + "\n")
    message = str(caught.value)
    assert message.startswith("acme.csv: row 2: value '999") and "…'" in message
    assert len(message) < 160


def test_header_naming_a_column_twice_is_rejected(ws: Workspace, tmp_path: Path) -> None:
    # csv.DictReader kept the last 'Value' silently.
    src = tmp_path / "dup.csv"
    src.write_text(HEADER.strip() + ",Value\nrevenue,acme,FY2024,1,2\n", encoding="utf-8")
    with pytest.raises(
        IngestError, match=re.escape("dup.csv: row 1: the header names column 'Value' twice")
    ):
        ws.ingest_facts(src)
    src = tmp_path / "dup.json"
    src.write_text(
        '[{"metric": "revenue", "entity": "acme", "period": "2024", "value": 1, "value": 2}]',
        encoding="utf-8",
    )
    with pytest.raises(IngestError, match=re.escape("dup.json: an object names 'value' twice")):
        ws.ingest_facts(src)


def test_rows_are_numbered_like_a_spreadsheet(ws: Workspace, tmp_path: Path) -> None:
    """Blank lines count as rows, as a spreadsheet shows them (the header is row 1)."""
    with pytest.raises(IngestError, match=re.escape("acme.csv: row 4: value 'x'")):
        ingest_csv(ws, tmp_path, "revenue,acme,FY2024,1\n\nrevenue,acme,FY2023,x\n")


@pytest.mark.parametrize(
    ("extra_header", "extra", "message"),
    [
        (",valid_as_of", ",31/12/2024", "valid_as_of '31/12/2024' is not an ISO date (YYYY-MM-DD"),
        (",valid_as_of", ",2024-02-30", "valid_as_of '2024-02-30' is not a real date"),
        (",valid_as_of", ",2024", "valid_as_of '2024' is not an ISO date"),
        (",currency", ",dollars", "currency 'dollars' is not a three-letter ISO code"),
        (",unit,currency", ",EUR,USD", "unit EUR and currency USD disagree"),
    ],
)
def test_other_fields_are_checked(
    ws: Workspace, tmp_path: Path, extra_header: str, extra: str, message: str
) -> None:
    src = tmp_path / "f.csv"
    src.write_text(HEADER.strip() + extra_header + "\nrevenue,acme,FY2024,12" + extra + "\n")
    with pytest.raises(IngestError) as caught:
        ws.ingest_facts(src)
    assert str(caught.value).startswith("f.csv: row 2: ") and message in str(caught.value)
    assert ws.facts.count() == 0


def test_messages_cut_long_raw_fields(ws: Workspace, tmp_path: Path) -> None:
    long = "x" * 500
    for header, cell, start in [
        ("metric", long, "unknown metric 'xxx"),
        ("period", long, "period 'xxx"),
        ("scale", long, "unknown scale 'xxx"),
        ("sensitivity", long, "unknown sensitivity 'xxx"),
        ("valid_as_of", long, "valid_as_of 'xxx"),
        ("currency", long, "currency 'xxx"),
    ]:
        src = tmp_path / "f.csv"
        row = {"metric": "revenue", "entity": "acme", "period": "FY2024", "value": "1"}
        row[header] = cell
        src.write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n", encoding="utf-8")
        with pytest.raises(IngestError) as caught:
            ws.ingest_facts(src)
        message = str(caught.value)
        assert message.startswith(f"f.csv: row 2: {start}") and "x" * 60 not in message, message
        assert "…'" in message and len(message) < 200


def test_valid_as_of_keeps_iso_dates(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "f.csv"
    src.write_text(HEADER.strip() + ",valid_as_of\nrevenue,acme,FY2024,12,2024-12-31\n")
    ws.ingest_facts(src)
    got = ws.facts.get(FactKey("revenue", "acme", "FY2024", "total"))
    assert got is not None and got.valid_as_of == "2024-12-31"


def test_currency_belongs_to_currency_metrics(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "f.csv"
    src.write_text(HEADER.strip() + ",currency\nheadcount,acme,FY2024,12,USD\n")
    with pytest.raises(
        IngestError,
        match=re.escape(
            "f.csv: row 2: metric 'headcount' is a count metric, so it has no currency"
        ),
    ):
        ws.ingest_facts(src)
    src.write_text(HEADER + "headcount,acme,FY2024,$12\n")
    with pytest.raises(IngestError, match=re.escape("row 2: value '$12' has a currency")):
        ws.ingest_facts(src)
    src.write_text(HEADER + "revenue,acme,FY2024,7%\n")
    with pytest.raises(IngestError, match=re.escape("row 2: value '7%' has a percent sign")):
        ws.ingest_facts(src)
    src.write_text(HEADER + "revenue,acme,FY2024,€7\n")
    with pytest.raises(
        IngestError, match=re.escape("row 2: value '€7' is in € but the fact's currency is USD")
    ):
        ws.ingest_facts(src)
    assert ws.facts.count() == 0


def test_currency_column_sets_the_unit_of_currency_metrics(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "f.csv"
    src.write_text(
        HEADER.strip()
        + ",currency\nrevenue,acme_cn,FY2024,€7,eur\ngross_margin,acme,FY2024,41.5%,\n"
    )
    mapping = ColumnMapping.from_dict({"defaults": {"currency": "USD", "scale": "million"}})
    assert ws.ingest_facts(src, mapping=mapping).added == 2
    revenue = ws.facts.get(FactKey("revenue", "acme_cn", "FY2024", "total"))
    assert revenue is not None and (revenue.unit, revenue.currency) == ("EUR", "EUR")
    # A default currency fills currency metrics only; the percent metric keeps its unit.
    margin = ws.facts.get(FactKey("gross_margin", "acme", "FY2024", "total"))
    assert margin is not None and (margin.value, margin.unit, margin.currency) == (
        Decimal("41.5"),
        "%",
        "",
    )


@pytest.mark.parametrize(
    ("value", "scale", "message"),
    [
        ("12.5", "one", "value 12.5 is not a whole number, but a count must be"),
        ("-3", "one", "value -3 is negative, but a count cannot be"),
        ("1.0005", "thousand", "value 1.0005 is not a whole number at scale thousand"),
    ],
)
def test_counts_are_whole_and_not_negative(
    ws: Workspace, tmp_path: Path, value: str, scale: str, message: str
) -> None:
    src = tmp_path / "f.csv"
    src.write_text(f"{HEADER.strip()},scale\nheadcount,acme,FY2024,{value},{scale}\n")
    with pytest.raises(IngestError, match=f"f.csv: row 2: {re.escape(message)}"):
        ws.ingest_facts(src)
    src.write_text(f"{HEADER.strip()},scale\nheadcount,acme,FY2024,1.5,thousand\n")
    assert ws.ingest_facts(src).added == 1


def test_boolean_cells_are_not_numbers(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "f.jsonl"
    src.write_text('{"metric": "revenue", "entity": "acme", "period": "2024", "value": true}\n')
    with pytest.raises(IngestError, match=re.escape("f.jsonl: line 1: value True is a boolean")):
        ws.ingest_facts(src)


# --- Properties: accepted cells round-trip through the store, rejected ones name their row ------


@pytest.fixture(scope="module")
def shared_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with Workspace.init(tmp_path_factory.mktemp("prop") / "ws") as workspace:
        yield workspace


def write_cells(path: Path, cells: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["metric", "entity", "period", "value"])
        for year, cell in enumerate(cells, start=2001):
            writer.writerow(["revenue", "acme", f"FY{year}", cell])


_CELLS = st.one_of(
    st.text(alphabet="0123456789,.-()$€%eE USD\t", max_size=20),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30),
    st.builds(lambda d: format(d, ",f"), bounded_decimals()),
    st.builds(str, bounded_decimals()),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_CELLS, min_size=1, max_size=4))
def test_cells_round_trip_through_the_store_or_fail_naming_their_row(
    shared_ws: Workspace, tmp_path_factory: pytest.TempPathFactory, cells: list[str]
) -> None:
    src = tmp_path_factory.mktemp("cells") / "p.csv"
    write_cells(src, cells)
    expected: list[Decimal] = []
    for row, cell in enumerate(cells, start=2):
        try:
            expected.append(parse_value(cell, kind=MetricKind.CURRENCY, currency="USD"))
        except IngestError:
            before = shared_ws.facts.count()
            with pytest.raises(IngestError, match=rf"^p\.csv: row {row}: "):
                shared_ws.ingest_facts(src)
            assert shared_ws.facts.count() == before
            event("rejected")
            return
    event("accepted")
    shared_ws.ingest_facts(src)
    for year, value in enumerate(expected, start=2001):
        got = shared_ws.facts.get(FactKey("revenue", "acme", f"FY{year}", "total"))
        assert got is not None and str(got.value) == str(value)
        answer = shared_ws.query_metric("revenue", "acme", f"FY{year}", principal=INTERNAL)
        assert answer.value is not None and answer.value.as_tuple() == value.as_tuple()


# --- Progress ------------------------------------------------------------------------------------


def test_progress_follows_reading_and_writing(ws: Workspace, tmp_path: Path) -> None:
    src = tmp_path / "many.csv"
    months = [f"{year}-{month:02d}" for year in range(2000, 2025) for month in range(1, 13)]
    rows = [
        f"{m},{e},{p},{n}"
        for m in ("revenue", "net_income")
        for e in ("acme", "acme_cn")
        for n, p in enumerate(months)
    ]
    src.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    read: list[tuple[int, int | None]] = []
    written: list[tuple[int, int | None]] = []
    summary = ws.ingest_facts(
        src, progress=lambda *a: read.append(a), write_progress=lambda *a: written.append(a)
    )
    assert summary.added == len(rows) == 1200
    assert read == [(0, 1200), (1000, 1200), (1200, 1200)]
    assert written == [(0, 1200), (1000, 1200), (1200, 1200)]


def test_convfinqa_progress_counts_filings(ws: Workspace) -> None:
    sample = Path(ragspine.__file__).parent / "data" / "convfinqa_sample.json"
    filings: list[tuple[int, int | None]] = []
    written: list[tuple[int, int | None]] = []
    result, _, _ = ws.ingest_convfinqa(
        sample, progress=lambda *a: filings.append(a), write_progress=lambda *a: written.append(a)
    )
    assert filings == [(n, 12) for n in range(13)]
    assert written == [(0, len(result.facts)), (len(result.facts), len(result.facts))]


def test_dates_from_xlsx_cells_and_toml_mappings(ws: Workspace, tmp_path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["metric", "entity", "period", "value", "valid_as_of"])
    book.active.append(["revenue", "acme", "FY2023", 5, datetime(2023, 12, 31)])
    book.active.append(["revenue", "acme", "FY2022", 4, None])
    book.save(tmp_path / "f.xlsx")
    (tmp_path / "map.toml").write_text("[defaults]\nvalid_as_of = 2022-12-31\n", encoding="utf-8")
    assert ws.ingest_facts(tmp_path / "f.xlsx", mapping=tmp_path / "map.toml").added == 2
    dates = [
        ws.facts.get(FactKey("revenue", "acme", f"FY{year}", "total")) for year in (2023, 2022)
    ]
    assert [f.valid_as_of for f in dates if f] == ["2023-12-31", "2022-12-31"]
    book.active.append(["revenue", "acme", "FY2021", 3, datetime(2021, 12, 31, 17, 30)])
    book.save(tmp_path / "f.xlsx")
    with pytest.raises(IngestError, match=r"f\.xlsx: sheet Sheet row 4: valid_as_of .* time of"):
        ws.ingest_facts(tmp_path / "f.xlsx")
