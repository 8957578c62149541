"""PostgresFactStore: the fact-store contract on a real server, and what is particular to it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from decimal import Decimal

import pytest

from ragspine.stores.facts import FactStore
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.facts import PostgresFactStore
from ragspine.stores.postgres.migrate import migrate
from stores.contracts.fact_store import EVERYTHING, FactStoreContract, a_fact


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


class TestPostgresFactStore(FactStoreContract):
    @pytest.fixture()
    def store(self, database: Database) -> Iterator[FactStore]:
        instance = PostgresFactStore(database)
        yield instance
        instance.close()


def test_two_writers_at_once_count_against_each_others_result(database: Database) -> None:
    """Writers serialize: of two writers of the same new fact, one adds it and the other finds
    it unchanged (never two adds, never a lost history entry)."""
    store = PostgresFactStore(database)
    summaries = []
    barrier = threading.Barrier(2)

    def write() -> None:
        barrier.wait()
        summaries.append(store.write([a_fact("5")]))

    threads = [threading.Thread(target=write) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted((s.added, s.unchanged) for s in summaries) == [(0, 1), (1, 0)]
    assert store.count() == 1


def test_a_failed_write_leaves_nothing(database: Database) -> None:
    store = PostgresFactStore(database)
    store.write([a_fact("1")])

    def facts() -> Iterator[object]:
        yield a_fact("2")
        raise RuntimeError("the input broke half way")

    with pytest.raises(RuntimeError):
        store.write(facts())  # type: ignore[arg-type]
    stored = store.lookup(a_fact().key, max_level=EVERYTHING)
    assert stored is not None and stored.value == Decimal("1")
    assert store.history(a_fact().key) == []
