from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from ragspine import Principal, Workspace
from ragspine.errors import IngestError
from ragspine.structured.facts import FactKey
from ragspine.structured.ingest import ColumnMapping

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
