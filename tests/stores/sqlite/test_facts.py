"""SQLiteFactStore: the fact-store contract, proofs that the contract catches broken stores, and
what is particular to SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from ragspine.errors import IngestError, StoreError
from ragspine.stores.facts import FactStore, StoredFact, WriteSummary
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.structured.facts import Fact, FactKey
from stores.contracts.fact_store import (
    EVERYTHING,
    FactAtomicityContract,
    FactStoreContract,
    FactVisibilityContract,
    a_fact,
    sample_facts,
)


class TestSQLiteFactStore(FactStoreContract):
    @pytest.fixture()
    def store(self, tmp_path: Path) -> Iterator[FactStore]:
        instance = SQLiteFactStore(tmp_path / "facts.db")
        yield instance
        instance.close()


class VisibilityBlindStore(SQLiteFactStore):
    """Broken on purpose: hands out every fact whatever the asker's level."""

    def lookup(self, key: FactKey, *, max_level: int) -> StoredFact | None:
        return super().lookup(key, max_level=EVERYTHING)

    def lookup_many(self, keys: Iterable[FactKey], *, max_level: int) -> dict[FactKey, StoredFact]:
        return super().lookup_many(keys, max_level=EVERYTHING)

    def scan(
        self,
        *,
        max_level: int,
        metric: str | None = None,
        entity: str | None = None,
        period: str | None = None,
    ) -> Iterator[Fact]:
        return super().scan(max_level=EVERYTHING, metric=metric, entity=entity, period=period)

    def metrics_of(self, entity: str, *, max_level: int) -> frozenset[str]:
        return super().metrics_of(entity, max_level=EVERYTHING)


class PiecemealStore(SQLiteFactStore):
    """Broken on purpose: commits fact by fact, so a failure midway keeps what came before."""

    def write(self, facts: Iterable[Fact]) -> WriteSummary:
        summaries = [super(PiecemealStore, self).write([fact]) for fact in facts]
        return WriteSummary(
            sum(s.added for s in summaries),
            sum(s.replaced for s in summaries),
            sum(s.unchanged for s in summaries),
        )


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="the store ignores max_level")
class TestContractCatchesAVisibilityBlindStore(FactVisibilityContract):
    @pytest.fixture()
    def store(self, tmp_path: Path) -> Iterator[FactStore]:
        instance = VisibilityBlindStore(tmp_path / "facts.db")
        yield instance
        instance.close()


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="the store's write is not atomic")
class TestContractCatchesAPiecemealWrite(FactAtomicityContract):
    @pytest.fixture()
    def store(self, tmp_path: Path) -> Iterator[FactStore]:
        instance = PiecemealStore(tmp_path / "facts.db")
        yield instance
        instance.close()


def test_visibility_is_decided_in_the_query(tmp_path: Path) -> None:
    """Lookup and scan send the asker's level to SQLite: a hidden row never reaches Python."""
    store = SQLiteFactStore(tmp_path / "facts.db")
    store.write(sample_facts())
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    store.lookup(a_fact().key, max_level=0)
    list(store.scan(max_level=0, metric="revenue"))
    store.close()
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 2
    assert all("sensitivity<=0" in s.replace(" ", "") for s in selects), selects


def test_a_store_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "facts.db"
    SQLiteFactStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE fact_store_meta SET value='99' WHERE key='schema_version'")
    db.close()
    with pytest.raises(StoreError, match="schema version 99 is not the supported 1"):
        SQLiteFactStore(path)


def test_source_and_locator_are_mandatory() -> None:
    with pytest.raises(IngestError, match="source_doc_id and locator"):
        a_fact(locator="")
    with pytest.raises(IngestError, match="finite"):
        a_fact("NaN")


def test_fact_values_are_bounded() -> None:
    """A value that would take gigabytes to write out never becomes a fact (or a stored row)."""
    with pytest.raises(IngestError, match="too large or too small"):
        a_fact("1E+999999999")
    with pytest.raises(IngestError, match="31 significant digits"):
        a_fact("1" * 31)
    assert a_fact("9" * 30).value == Decimal("9" * 30)
