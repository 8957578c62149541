from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from conftest import shared_data
from ragspine import Principal, Workspace
from ragspine.glossary import load_glossary
from ragspine.structured.convfinqa import DASH_PLACEHOLDER

PUBLIC = Principal.of("public")


def test_full_convfinqa_import(tmp_path: Path) -> None:
    source = shared_data("convfinqa", "convfinqa_dev.json")
    ws = Workspace.init(tmp_path / "ws")
    result, summary = ws.ingest_convfinqa(source)
    assert result.filings == 421
    assert summary.added == len(result.facts) > 900
    reasons = result.skip_reasons()
    assert reasons["column header is not a year or a year-end date"] > 0
    assert reasons["2014.0 stands for a dash (missing value)"] > 0
    assert all(f.value != DASH_PLACEHOLDER for f in result.facts)
    assert all(f.period.startswith("FY") and len(f.period) == 6 for f in result.facts)
    generated = load_glossary(tmp_path / "ws" / "glossary.d" / "convfinqa.toml")
    assert len(generated.metrics.terms) > 100
    # A row label becomes a metric code with the label as alias; the ticker is the entity.
    res = ws.query_metric("tier 1 capital", "C", "FY2008", principal=PUBLIC)
    assert res.status == "found" and res.value == Decimal("71.0")
    assert res.source_doc_id == "Double_C/2008/page_102.pdf"
    assert res.locator is not None and "page 102" in res.locator and "'2008'" in res.locator
    # Re-importing the same file changes nothing.
    _, again = ws.ingest_convfinqa(source)
    assert (again.added, again.replaced) == (0, 0)
