"""The embedding-cache contract run against PostgreSQL, and what is particular to it."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from ragspine.stores.embeddings import EmbeddingCache
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.embeddings import PostgresEmbeddingCache
from ragspine.stores.postgres.migrate import migrate
from stores.contracts.embedding_cache import EmbeddingCacheContract, digest, vectors


@pytest.fixture()
def database(postgres_url: str) -> Iterator[Database]:
    db = Database(postgres_url)
    migrate(db)
    yield db
    db.close()


class TestPostgresEmbeddingCache(EmbeddingCacheContract):
    @pytest.fixture
    def cache(self, database: Database) -> Iterator[EmbeddingCache]:
        instance = PostgresEmbeddingCache(database)
        yield instance
        instance.close()


def test_restricted_vectors_never_reach_the_database(database: Database) -> None:
    cache = PostgresEmbeddingCache(database)
    marker = np.full((1, 16), 0.123456789, dtype=np.float32)
    assert cache.put_many([digest("secret")], "m", marker, levels=[3]) == 0
    with database.connection() as conn:
        assert conn.execute("SELECT count(*) FROM embedding_cache").fetchone() == (0,)


def test_two_writes_in_one_transaction_keep_their_own_models(database: Database) -> None:
    cache = PostgresEmbeddingCache(database)
    with database.transaction():
        cache.put_many([digest("a")], "m1", vectors(1, seed=1), levels=[0])
        cache.put_many([digest("b")], "m2", vectors(1, seed=2), levels=[0])
    assert sorted(cache.get_many([digest("a"), digest("b")], "m2")) == [digest("b")]
    assert len(cache) == 2


def test_extreme_floats_read_back_exactly(database: Database) -> None:
    cache = PostgresEmbeddingCache(database)
    info = np.finfo(np.float32)
    stored = np.array([[info.tiny, info.max, -info.max, info.eps, 1 / 3, -0.0]], dtype=np.float32)
    cache.put_many([digest("x")], "m", stored, levels=[0])
    np.testing.assert_array_equal(cache.get_many([digest("x")], "m")[digest("x")], stored[0])
