"""Contract suite for every FactStore implementation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ragspine.errors import IngestError
from ragspine.security import Sensitivity
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.structured.facts import Fact, FactKey, Scale
from ragspine.structured.store import FactStore
from structured.number_strategies import bounded_decimals

STORES: dict[str, Callable[[Path], FactStore]] = {"sqlite": lambda p: SQLiteFactStore(p / "f.db")}


@pytest.fixture(params=sorted(STORES))
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FactStore]:
    instance = STORES[request.param](tmp_path_factory.mktemp("store"))
    yield instance
    instance.close()


def fact(value: str = "1", **changes: object) -> Fact:
    base = Fact(
        "revenue",
        "acme",
        "FY2024",
        "total",
        Decimal(value),
        "USD",
        "USD",
        Scale.MILLION,
        "report-2024",
        "report.csv row 2",
        Sensitivity.INTERNAL,
        "2024-12-31",
        "t0",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["1234567.891", "0.30000000000000004", "-27.1", "1E+3", "0.1"])
def test_values_round_trip_exactly(store: FactStore, value: str) -> None:
    store.write([fact(value)])
    got = store.get(FactKey("revenue", "acme", "FY2024", "total"))
    assert got is not None
    assert got.value == Decimal(value) and str(got.value) == str(Decimal(value))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bounded_decimals())
def test_any_bounded_decimal_round_trips(store: FactStore, value: Decimal) -> None:
    store.write([fact(str(value))])
    got = store.get(FactKey("revenue", "acme", "FY2024", "total"))
    assert got is not None and str(got.value) == str(value)


def test_changed_value_replaces_and_keeps_history(store: FactStore) -> None:
    first = store.write([fact("10")])
    assert (first.added, first.replaced) == (1, 0)
    assert store.write([fact("10")]).unchanged == 1
    second = store.write([fact("12", source_doc_id="restated-2025", locator="r.csv row 9")])
    assert second.replaced == 1
    key = FactKey("revenue", "acme", "FY2024", "total")
    current = store.get(key)
    assert current is not None and current.value == Decimal("12")
    history = store.history(key)
    assert [h.fact.value for h in history] == [Decimal("10")]
    assert history[0].fact.source_doc_id == "report-2024"
    assert history[0].replaced_by_source_doc_id == "restated-2025"
    assert history[0].replaced_by_locator == "r.csv row 9"


def test_write_is_atomic(store: FactStore) -> None:
    store.write([fact("1")])

    def facts() -> Iterator[Fact]:
        yield fact("2")
        yield fact("3", entity="other")
        raise RuntimeError("source broke midway")

    with pytest.raises(RuntimeError):
        store.write(facts())
    assert store.count() == 1
    got = store.get(FactKey("revenue", "acme", "FY2024", "total"))
    assert got is not None and got.value == Decimal("1")


def test_source_and_locator_are_mandatory() -> None:
    with pytest.raises(IngestError, match="source_doc_id and locator"):
        fact(locator="")
    with pytest.raises(IngestError, match="finite"):
        fact("NaN")


def test_fact_values_are_bounded() -> None:
    """A value that would take gigabytes to write out never becomes a fact (or a stored row)."""
    with pytest.raises(IngestError, match="too large or too small"):
        fact("1E+999999999")
    with pytest.raises(IngestError, match="31 significant digits"):
        fact("1" * 31)
    assert fact("9" * 30).value == Decimal("9" * 30)
