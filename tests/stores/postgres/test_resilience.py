"""The PostgreSQL backend when the server or a connection goes away: the pool recovers, a cut
transaction leaves nothing, and the caller sees a clear error, never a psycopg traceback."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import psycopg
import pytest

from postgres_server import PostgresServer
from ragspine.errors import StoreError
from ragspine.stores.postgres.database import APPLICATION, Database
from ragspine.stores.postgres.facts import PostgresFactStore
from ragspine.stores.postgres.migrate import migrate
from stores.contracts.fact_store import EVERYTHING, a_fact


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


def test_the_pool_recovers_after_a_server_restart(
    database: Database, postgres_server: PostgresServer
) -> None:
    store = PostgresFactStore(database)
    store.write([a_fact("7")])
    assert store.lookup(a_fact().key, max_level=EVERYTHING) is not None
    postgres_server.restart()  # every pooled connection is now dead
    for _ in range(3):  # each request after the restart is answered, none fails
        found = store.lookup(a_fact().key, max_level=EVERYTHING)
        assert found is not None and found.value == Decimal("7")


def test_a_connection_cut_mid_transaction_leaves_nothing(
    database: Database, postgres_server: PostgresServer
) -> None:
    store = PostgresFactStore(database)
    store.write([a_fact("1")])
    with pytest.raises(psycopg.OperationalError), database.transaction() as conn:
        conn.execute(
            "UPDATE facts SET value = '2' WHERE metric = %s", (a_fact().metric,)
        )  # half of a write, in the transaction
        conn.execute(
            "INSERT INTO fact_history (metric, entity, period, channel, value, unit, currency, "
            "scale, source_doc_id, locator, sensitivity, valid_as_of, ingested_at, replaced_at, "
            "replaced_by_source_doc_id, replaced_by_locator) SELECT metric, entity, period, "
            "channel, value, unit, currency, scale, source_doc_id, locator, sensitivity, "
            "valid_as_of, ingested_at, 'now', 'x', 'y' FROM facts"
        )
        assert postgres_server.terminate(APPLICATION) >= 1  # the network drops here
        conn.execute("SELECT 1")
    stored = store.lookup(a_fact().key, max_level=EVERYTHING)
    assert stored is not None and stored.value == Decimal("1")  # the old value, whole
    assert store.history(a_fact().key) == []


def test_a_stopped_server_is_a_store_error_at_the_boundary(postgres_url: str) -> None:
    from ragspine import Principal, Workspace

    with Workspace.open(postgres_url) as ws:
        ws.facts.write([a_fact("3")])
        ws.backend.close()  # as if the server went away: no connection can be had
        with pytest.raises(StoreError, match="PostgreSQL workspace"):
            ws.query_metric("revenue", "acme", "FY2024", principal=Principal.of("internal"))
