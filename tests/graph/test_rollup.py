"""roll_up: exact sums over the entity tree, partial results, units, and hidden facts that read
exactly like missing ones."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest

from graph.builders import CONFIDENTIAL, PUBLIC, fact, make_workspace
from ragspine.errors import QueryError
from ragspine.graph.rollup import NOT_VISIBLE_OR_MISSING, RollUpAxis, RollUpStatus
from ragspine.security import Sensitivity
from ragspine.stores.facts import StoredFact
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.structured.facts import Fact, FactKey, Scale


def test_a_sum_that_breaks_floats_is_exact(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [fact("revenue", "de", "0.1"), fact("revenue", "fr", "0.2"), fact("revenue", "it", "0")],
    )
    result = ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC)
    assert result.status is RollUpStatus.COMPLETE
    assert result.value == Decimal("0.3") and str(result.value) == "0.3"
    assert result.to_dict()["value"] == "0.3"
    assert [f.entity for f in result.lineage] == ["de", "fr", "it"]
    assert {f.source_doc_id for f in result.lineage} == {"report-de", "report-fr", "report-it"}
    assert all(f.locator for f in result.lineage)


def test_thirty_digit_values_and_mixed_scales_sum_exactly(tmp_path: Path) -> None:
    big = "12345678901234567890123456789.5"  # 30 significant digits: beyond float and Decimal's 28
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "de", big, scale=Scale.THOUSAND),
            fact("revenue", "fr", "1.000001", scale=Scale.MILLION),
            fact("revenue", "it", "0.000000001", scale=Scale.BILLION),
            fact("revenue", "us", "2", scale=Scale.BILLION),
        ],
    )
    result = ws.graph.roll_up("revenue", "group", "FY2024", principal=PUBLIC)
    assert result.scale is Scale.THOUSAND  # the finest scale among the facts
    expected = Fraction(big) + Fraction("1000.001") + Fraction("0.001") + Fraction(2_000_000)
    assert result.value is not None and Fraction(result.value) == expected
    assert str(result.value) == "12345678901234567890125457789.502"
    eu = result.tree.children[0]
    assert eu.code == "eu" and eu.value is not None
    assert Fraction(eu.value) == Fraction(big) + Fraction("1000.002")


def test_missing_children_make_a_partial_result_that_lists_them(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "de", "5"), fact("revenue", "us", "7")])
    result = ws.graph.roll_up("revenue", "group", "FY2024", principal=PUBLIC)
    assert result.status is RollUpStatus.PARTIAL
    assert result.value == 12 and result.missing == ("fr", "it")
    assert "partial sum" in result.text and "not a total" in result.text
    assert NOT_VISIBLE_OR_MISSING.capitalize() in result.text
    data = result.to_dict()
    assert data["status"] == "partial" and data["notice"] == NOT_VISIBLE_OR_MISSING
    eu = result.tree.children[0]
    assert (eu.status, eu.missing) == (RollUpStatus.PARTIAL, ("fr", "it"))


def test_no_child_fact_at_all_is_not_found(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "eu", "100")])
    result = ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC)
    assert result.status is RollUpStatus.NOT_FOUND and result.value is None
    assert result.missing == ("de", "fr", "it") and result.scale is None
    assert result.reported is not None and result.difference is None  # shown, nothing to compare


def test_reported_figures_sit_beside_computed_ones(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "de", "1", scale=Scale.MILLION),
            fact("revenue", "fr", "250", scale=Scale.THOUSAND),
            fact("revenue", "it", "0.25", scale=Scale.MILLION),
            fact("revenue", "eu", "1.5", scale=Scale.MILLION),
            fact("revenue", "us", "3", scale=Scale.MILLION),
            fact("revenue", "group", "4.6", scale=Scale.MILLION),
        ],
    )
    result = ws.graph.roll_up("revenue", "group", "FY2024", principal=PUBLIC)
    assert result.value == Decimal("4500") and result.scale is Scale.THOUSAND
    assert result.reported is not None and result.reported.value == Decimal("4.6")
    assert result.difference == Decimal("100")  # 4,600 thousand reported - 4,500 computed
    eu = result.tree.children[0]
    assert eu.fact is not None and eu.difference == 0
    assert [f.entity for f in result.lineage] == ["de", "fr", "it", "us"]  # leaves only
    assert "Reported: 4.6 million US dollars" in result.text
    assert "reported minus computed: 100 thousand US dollars" in result.text


def test_different_units_are_an_error_naming_children_and_units(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "de", "1"),
            fact("revenue", "fr", "2", unit="EUR", currency="EUR"),
            fact("revenue", "it", "3", unit="EUR", currency="EUR"),
        ],
    )
    with pytest.raises(QueryError) as caught:
        ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC)
    message = str(caught.value)
    assert "cannot roll up revenue under eu" in message
    assert "EUR: fr, it" in message and "USD: de" in message


def test_a_leaf_rolls_up_to_its_own_fact(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path / "ws", [fact("revenue", "us", "7")])
    result = ws.graph.roll_up("revenue", "us", "FY2024", principal=PUBLIC)
    assert (result.status, result.value, result.reported) == (RollUpStatus.COMPLETE, 7, None)


def test_roll_up_over_the_channel_tree(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path / "ws",
        [
            fact("revenue", "us", "0.1", channel="online"),
            fact("revenue", "us", "0.2", channel="retail"),
            fact("revenue", "us", "9", channel="all_sales"),
        ],
    )
    result = ws.graph.roll_up(
        "revenue", "us", "FY2024", "all_sales", principal=PUBLIC, axis="channel"
    )
    assert result.axis is RollUpAxis.CHANNEL and result.value == Decimal("0.3")
    assert result.difference == Decimal("8.7")
    assert "summed over 2 channels for ACME US" in result.text
    with pytest.raises(QueryError, match="unknown roll-up axis 'planet'"):
        ws.graph.roll_up("revenue", "us", "FY2024", principal=PUBLIC, axis="planet")


# --- access control: a hidden child reads exactly like a missing one -------------------------

HIDDEN_VALUE = "987654.321"


def _facts(
    child_fr: str, unit: str = "EUR", level: Sensitivity = Sensitivity.CONFIDENTIAL
) -> list[Fact]:
    """EU children; France's fact is ``hidden`` (confidential, in ``unit``) or ``missing``."""
    facts = [
        fact("revenue", "de", "100", scale=Scale.THOUSAND),
        fact("revenue", "it", "0.5", scale=Scale.MILLION),
        fact("revenue", "eu", "1", scale=Scale.MILLION),
    ]
    if child_fr == "hidden":
        facts.append(
            fact(
                "revenue",
                "fr",
                HIDDEN_VALUE,
                scale=Scale.ONE,  # a finer scale would change the result's scale if it leaked
                unit=unit,  # a different unit would raise if it were read
                currency=unit,
                sensitivity=level,
            )
        )
    return facts


def _public_outputs(
    tmp_path: Path,
    child_fr: str,
    unit: str = "EUR",
    level: Sensitivity = Sensitivity.CONFIDENTIAL,
) -> tuple[dict[str, object], str]:
    ws = make_workspace(
        tmp_path / f"{child_fr}-{unit}-{level.label}", _facts(child_fr, unit, level)
    )
    try:
        result = ws.graph.roll_up("revenue", "eu", "FY2024", principal=PUBLIC)
        return result.to_dict(), result.text
    finally:
        ws.close()


@pytest.mark.parametrize(
    "level", [Sensitivity.INTERNAL, Sensitivity.CONFIDENTIAL, Sensitivity.RESTRICTED]
)
@pytest.mark.parametrize("unit", ["USD", "EUR"])
def test_a_hidden_child_fact_reads_exactly_like_a_missing_one(
    tmp_path: Path, unit: str, level: Sensitivity
) -> None:
    hidden = _public_outputs(tmp_path, "hidden", unit, level)
    missing = _public_outputs(tmp_path, "missing", unit, level)
    assert hidden == missing
    data, text = hidden
    assert data["status"] == "partial" and data["missing"] == ["fr"]
    assert data["notice"] == NOT_VISIBLE_OR_MISSING
    serialized = repr(data) + text
    assert HIDDEN_VALUE not in serialized and "987" not in serialized and "EUR" not in serialized
    assert level.label not in serialized


def test_a_cleared_asker_sees_the_child(tmp_path: Path) -> None:
    facts = [
        f
        if f.entity != "fr"
        else fact("revenue", "fr", "0.4", scale=Scale.MILLION, sensitivity=Sensitivity.CONFIDENTIAL)
        for f in _facts("hidden")
    ]
    ws = make_workspace(tmp_path / "ws", facts)
    result = ws.graph.roll_up("revenue", "eu", "FY2024", principal=CONFIDENTIAL)
    assert result.status is RollUpStatus.COMPLETE and result.value == Decimal("1000")
    assert result.difference == 0


class LeakyLookupStore(SQLiteFactStore):
    """Broken on purpose: reads every fact whatever the asker's level."""

    def lookup_many(self, keys: Iterable[FactKey], *, max_level: int) -> dict[FactKey, StoredFact]:
        return super().lookup_many(keys, max_level=int(Sensitivity.RESTRICTED))


@pytest.mark.xfail(strict=True, raises=(AssertionError, QueryError), reason="the store leaks")
@pytest.mark.parametrize("unit", ["USD", "EUR"])  # a leaked value; a leaked unit (an error)
def test_the_hidden_versus_missing_check_catches_a_leaky_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unit: str
) -> None:
    monkeypatch.setattr("ragspine.stores.backend.SQLiteFactStore", LeakyLookupStore)
    test_a_hidden_child_fact_reads_exactly_like_a_missing_one(
        tmp_path, unit, Sensitivity.RESTRICTED
    )
