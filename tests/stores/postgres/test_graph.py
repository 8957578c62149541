"""PostgresRelationStore: the relation-store contract on a real server, and joining the chunk
store's transactions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragspine.graph.relations import EdgeQuery
from ragspine.stores.graph import RelationStore
from ragspine.stores.postgres.chunks import PostgresChunkStore
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.graph import PostgresRelationStore
from ragspine.stores.postgres.migrate import migrate
from stores.contracts.relation_store import (
    EVERYTHING,
    RelationAtomicityContract,
    RelationDeletionContract,
    RelationGlossaryContract,
    RelationStoreContract,
    RelationVerificationContract,
    RelationVisibilityContract,
    an_edge,
)


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


class _Postgres:
    @pytest.fixture
    def store(self, database: Database) -> Iterator[RelationStore]:
        instance = PostgresRelationStore(database)
        yield instance
        instance.close()


class TestPostgresRelationStore(_Postgres, RelationStoreContract):
    pass


class TestPostgresRelationVisibility(_Postgres, RelationVisibilityContract):
    pass


class TestPostgresRelationVerification(_Postgres, RelationVerificationContract):
    pass


class TestPostgresRelationDeletion(_Postgres, RelationDeletionContract):
    pass


class TestPostgresRelationGlossary(_Postgres, RelationGlossaryContract):
    pass


class TestPostgresRelationAtomicity(_Postgres, RelationAtomicityContract):
    pass


def test_edges_written_in_the_chunk_transaction_go_with_it(database: Database) -> None:
    chunks = PostgresChunkStore(database)
    relations = PostgresRelationStore(database)
    with pytest.raises(RuntimeError), chunks.transaction():
        chunks.create_library("lib")
        relations.add_edges([an_edge()])
        raise RuntimeError("stop")
    assert relations.count() == 0 and chunks.library_names() == []
    with chunks.transaction():
        chunks.create_library("lib")
        relations.add_edges([an_edge()])
    assert relations.count() == 1 and chunks.library_names() == ["lib"]


def test_adjacency_queries_use_the_indexes(database: Database) -> None:
    store = PostgresRelationStore(database)
    store.add_edges(
        [an_edge(f"document:lib:d{i}", f"entity:e{i}", doc=f"d{i}") for i in range(300)]
    )
    with database.transaction() as conn:  # the plan a large graph gets, on a small one
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            row[0]
            for row in conn.execute(
                "EXPLAIN SELECT edge_id FROM graph_edges "
                "WHERE source = ANY(%s::text[]) OR target = ANY(%s::text[])",
                (["entity:e1"], ["entity:e1"]),
            )
        )
    assert "graph_edges_source" in plan and "graph_edges_target" in plan, plan
    found = store.edges(EdgeQuery(nodes=("entity:e1",)), max_level=EVERYTHING)
    assert [e.source for e in found] == ["document:lib:d1"]
