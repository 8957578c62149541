"""``ratio``: a share or ratio of two stored facts, exact, with hidden facts read as missing."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from graph.builders import fact, make_workspace
from ragspine.graph.ratio import RatioStatus, ratio
from ragspine.security import Sensitivity
from ragspine.structured.facts import FactKey, Scale

US_REVENUE = FactKey("revenue", "us", "FY2024", "total")
EU_REVENUE = FactKey("revenue", "eu", "FY2024", "total")
US_HEADS = FactKey("headcount", "us", "FY2024", "total")


def test_a_share_across_scales_is_exact(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "us", "0.1", scale=Scale.MILLION),  # 100,000
            fact("revenue", "eu", "300", scale=Scale.THOUSAND),  # 300,000
        ],
    )
    share = ratio(ws.facts, numerator=US_REVENUE, denominator=EU_REVENUE, percent=True, max_level=0)
    assert share.status is RatioStatus.FOUND
    assert share.value is not None and share.value.value == Fraction(100, 3)  # 33.33... %
    assert [f.key for f in share.lineage] == [US_REVENUE, EU_REVENUE]
    plain = ratio(
        ws.facts, numerator=EU_REVENUE, denominator=US_REVENUE, percent=False, max_level=0
    )
    assert plain.value is not None and plain.value.value == 3
    data = share.to_dict()
    assert data["status"] == "found" and data["numerator"]["source_doc_id"] == "report-us"


def test_different_units_and_a_zero_denominator_are_not_computable(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "us", "120"),
            fact("headcount", "us", "4", unit="people", currency=""),
            fact("revenue", "eu", "0"),
        ],
    )
    units = ratio(ws.facts, numerator=US_REVENUE, denominator=US_HEADS, percent=False, max_level=0)
    assert (units.status, units.reason, units.value) == (RatioStatus.NOT_COMPUTABLE, "units", None)
    zero = ratio(ws.facts, numerator=US_REVENUE, denominator=EU_REVENUE, percent=True, max_level=0)
    assert (zero.status, zero.reason, zero.value) == (RatioStatus.NOT_COMPUTABLE, "zero", None)


def test_a_hidden_fact_reads_exactly_like_a_missing_one(tmp_path: Path) -> None:
    hidden = make_workspace(
        tmp_path / "hidden",
        [
            fact("revenue", "us", "120"),
            fact("revenue", "eu", "80", sensitivity=Sensitivity.INTERNAL),
        ],
    )
    missing = make_workspace(tmp_path / "missing", [fact("revenue", "us", "120")])
    seen = [
        ratio(ws.facts, numerator=US_REVENUE, denominator=EU_REVENUE, percent=True, max_level=0)
        for ws in (hidden, missing)
    ]
    assert seen[0].status is RatioStatus.NOT_FOUND
    assert seen[0].to_dict() == seen[1].to_dict()
    inside = ratio(
        hidden.facts, numerator=US_REVENUE, denominator=EU_REVENUE, percent=True, max_level=1
    )
    assert inside.value is not None and inside.value.value == 150
