"""compare: a row per item, exact differences, percentage changes, ratios, sum and average."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from conftest import shared_data
from graph.builders import PUBLIC, fact, make_workspace
from ragspine import Workspace
from ragspine.errors import QueryError
from ragspine.graph.compare import RowStatus, SetStatus
from ragspine.security import Sensitivity
from ragspine.structured.facts import Scale


def test_a_change_between_two_periods_is_exact(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [fact("revenue", "us", "0.1", period="FY2023"), fact("revenue", "us", "0.3")],
    )
    result = ws.graph.compare(
        "revenue", entities=["us"], periods=["FY2023", "FY2024"], principal=PUBLIC
    )
    assert result.status is SetStatus.COMPLETE
    (step,) = result.steps
    assert step.difference == Decimal("0.2")
    assert step.percent_change is not None and step.percent_change.value == 200
    assert step.ratio is not None and step.ratio.value == 3
    assert result.total == Decimal("0.4")
    assert result.average is not None and result.average.decimal == Decimal("0.2")
    assert [r.share.value for r in result.rows if r.share] == [25, 75]
    data = result.to_dict()
    assert data["steps"][0]["difference"] == "0.2" and data["sum"] == "0.4"
    assert "rounded half-even" in data["rounding"]


def test_entities_with_mixed_scales_and_a_non_terminating_average(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "de", "1", scale=Scale.MILLION),
            fact("revenue", "fr", "1", scale=Scale.THOUSAND),
            fact("revenue", "it", "1", scale=Scale.THOUSAND),
        ],
    )
    result = ws.graph.compare(
        "revenue", entities=["de", "fr", "it"], periods=["FY2024"], principal=PUBLIC
    )
    assert result.scale is Scale.THOUSAND and result.total == Decimal("1002")
    assert result.average is not None and result.average.value == Fraction(1002, 3)
    assert result.average.decimal == Decimal("334")
    first = result.steps[0]
    assert first.difference == Decimal("-999")
    assert first.percent_change is not None and first.percent_change.value == Fraction(-999, 10)
    assert first.ratio is not None and first.ratio.to_dict() == {
        "value": "0.001",
        "exact": True,
        "fraction": "1/1000",
    }
    share = result.rows[1].share
    assert share is not None and share.to_dict()["exact"] is False  # 100/1002 percent


def test_not_found_rows_make_the_set_partial(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "us", "10", period="FY2022"),
            fact("revenue", "us", "12", period="FY2024"),
            fact("revenue", "us", "11.77", period="FY2023", sensitivity=Sensitivity.CONFIDENTIAL),
        ],
    )
    result = ws.graph.compare(
        "revenue", entities=["us"], periods=["FY2022", "FY2023", "FY2024"], principal=PUBLIC
    )
    assert [r.status for r in result.rows] == [
        RowStatus.FOUND,
        RowStatus.NOT_FOUND,
        RowStatus.FOUND,
    ]
    assert result.status is SetStatus.PARTIAL and result.found == 2
    (step,) = result.steps  # between the found rows only
    assert (step.earlier, step.later, step.difference) == (0, 2, Decimal("2"))
    assert result.rows[1].fact is None and "11.77" not in repr(result.to_dict())
    assert all(r.share is None for r in result.rows)


def test_a_zero_base_and_different_units(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "de", "0"),
            fact("revenue", "fr", "5"),
            fact("revenue", "it", "5", unit="EUR", currency="EUR"),
        ],
    )
    result = ws.graph.compare(
        "revenue", entities=["de", "fr", "it"], periods=["FY2024"], principal=PUBLIC
    )
    zero, units = result.steps
    assert zero.difference == 5 and zero.percent_change is None and zero.ratio is None
    assert "earlier value is zero" in zero.note
    assert units.difference is None and "different units" in units.note
    assert result.status is SetStatus.NOT_COMPUTABLE and result.total is None
    assert "different units" in result.note


def test_bad_compare_arguments_are_clear_errors(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws")
    with pytest.raises(QueryError, match="at least one entity and one period"):
        ws.graph.compare("revenue", entities=["us"], principal=PUBLIC)
    with pytest.raises(QueryError, match="two items or more"):
        ws.graph.compare("revenue", entities=["us", "US"], periods=["FY2024"], principal=PUBLIC)
    with pytest.raises(QueryError, match="lists"):
        ws.graph.compare("revenue", entities="us", periods=["FY2024"], principal=PUBLIC)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match="unknown period 'next century'"):
        ws.graph.compare(
            "revenue", entities=["us"], periods=["FY2024", "next century"], principal=PUBLIC
        )


def test_convfinqa_year_over_year(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws")
    ws.ingest_convfinqa(shared_data("convfinqa", "convfinqa_dev.json"))
    result = ws.graph.compare(
        "gasoline", entities=["MRO"], periods=["FY2005", "FY2004", "FY2003"], principal=PUBLIC
    )
    values = [r.fact.value if r.fact else None for r in result.rows]
    facts = [
        ws.query_metric("gasoline", "MRO", p, principal=PUBLIC).value
        for p in ("FY2005", "FY2004", "FY2003")
    ]
    assert values == facts and values[0] == Decimal("836.0")
    found = [v for v in values if v is not None]
    assert result.total == sum(found, Decimal(0))
    for step in result.steps:
        a, b = values[step.earlier], values[step.later]
        assert a is not None and b is not None
        assert step.difference == b - a
        assert step.ratio is not None and step.ratio.value == Fraction(b) / Fraction(a)


def test_rates_are_compared_and_averaged_never_summed(tmp_path: Path) -> None:
    """A review: margins of 30, 40 and 35 % rolled up to '105 percent' and compared with 'sum
    70 percent'; a roll-up of a rate is refused, a comparison shows no sum, and its average
    names its unit (it showed 'average 810.25' with none)."""
    margins = [
        fact("gross_margin", code, value, unit="%", currency="")
        for code, value in (("de", "30"), ("fr", "40"), ("us", "35"))
    ]
    ws = make_workspace(
        tmp_path / "ws", [*margins, fact("revenue", "de", "1.5"), fact("revenue", "fr", "2")]
    )
    with pytest.raises(QueryError, match="Gross margin is a rate"):
        ws.graph.roll_up("gross_margin", "group", "FY2024", principal=PUBLIC)
    result = ws.graph.compare("gross_margin", entities=["de", "fr"], periods=["FY2024"],
                              principal=PUBLIC)  # fmt: skip
    assert result.total is None and result.average is not None
    assert "average 35 percent over 2 found item(s) (rates are not added up: no sum)" in (
        result.text
    )
    assert "70" not in result.text and all(row.share is None for row in result.rows)
    amounts = ws.graph.compare(
        "revenue", entities=["de", "fr"], periods=["FY2024"], principal=PUBLIC
    )
    assert "sum 3.5 US dollars, average 1.75 US dollars over 2 found item(s)" in amounts.text
