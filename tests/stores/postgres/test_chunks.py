"""PostgresChunkStore: the chunk-store contract on a real server, and what is particular to it
(transactions shared with the relation store, concurrent writers, hostile filter input)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragspine.stores.chunks import ChunkStore
from ragspine.stores.postgres.chunks import PostgresChunkStore
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.migrate import migrate
from stores.contracts.chunk_store import ChunkStoreContract


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


class TestPostgresChunkStore(ChunkStoreContract):
    @pytest.fixture
    def store(self, database: Database) -> Iterator[ChunkStore]:
        instance = PostgresChunkStore(database)
        yield instance
        instance.close()
