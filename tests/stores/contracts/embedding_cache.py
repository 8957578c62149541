"""The contract every :class:`~ragspine.stores.embeddings.EmbeddingCache` backend keeps, written
once.

A backend's test module subclasses :class:`EmbeddingCacheContract` and adds one fixture,
``cache``, that yields a fresh, empty cache (and closes it). ``tests/stores/sqlite/
test_embeddings.py`` does it for SQLite; a future PostgreSQL backend reuses the suite by adding
its own ``cache`` fixture the same way. Expected results are computed in plain Python from what
the test stored; the backend module also runs chosen tests against deliberately broken caches,
marked ``xfail(strict=True)``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np
import pytest

from ragspine.errors import IngestError
from ragspine.stores.embeddings import RESTRICTED, EmbeddingCache


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vectors(rows: int, dim: int = 6, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)


class EmbeddingCacheContract:
    """Tests every embedding-cache backend must pass; subclasses provide the ``cache`` fixture."""

    @pytest.fixture
    def cache(self) -> Iterator[EmbeddingCache]:
        raise NotImplementedError("a backend's test class provides the 'cache' fixture")

    def test_vectors_read_back_exactly_per_model(self, cache: EmbeddingCache) -> None:
        hashes = [digest(t) for t in ("a", "b", "c")]
        stored = vectors(3)
        assert cache.put_many(hashes, "m1", stored, levels=[0, 1, 2]) == 3
        got = cache.get_many([*hashes, digest("absent"), hashes[0]], "m1")
        assert sorted(got) == sorted(hashes)
        for i, h in enumerate(hashes):
            assert got[h].dtype == np.float32
            np.testing.assert_array_equal(got[h], stored[i])
        assert cache.get_many(hashes, "m2") == {}
        assert cache.get_many([], "m1") == {}
        assert len(cache) == 3

    def test_a_vector_stored_again_replaces_the_old_one(self, cache: EmbeddingCache) -> None:
        h = digest("a")
        old, new = vectors(1, seed=1), vectors(1, seed=2)
        cache.put_many([h], "m", old, levels=[0])
        cache.put_many([h], "m", new, levels=[0])
        np.testing.assert_array_equal(cache.get_many([h], "m")[h], new[0])
        assert len(cache) == 1

    def test_restricted_vectors_are_never_stored(self, cache: EmbeddingCache) -> None:
        levels = [0, RESTRICTED, 1, RESTRICTED + 1, 2]
        hashes = [digest(f"t{i}") for i in range(len(levels))]
        kept = [h for h, level in zip(hashes, levels, strict=True) if level < RESTRICTED]
        assert cache.put_many(hashes, "m", vectors(len(hashes)), levels=levels) == len(kept)
        assert sorted(cache.get_many(hashes, "m")) == sorted(kept)
        assert len(cache) == len(kept)

    def test_dropping_a_model_keeps_the_others(self, cache: EmbeddingCache) -> None:
        written = {"m1": 3, "m2": 2, "m3": 4}
        for model, n in written.items():
            hashes = [digest(f"{model}-{i}") for i in range(n)]
            cache.put_many(hashes, model, vectors(n), levels=[0] * n)
        assert cache.drop_model("m2") == written["m2"]
        assert len(cache) == written["m1"] + written["m3"]
        assert cache.get_many([digest("m2-0")], "m2") == {}
        assert len(cache.get_many([digest(f"m3-{i}") for i in range(4)], "m3")) == written["m3"]
        assert cache.drop_model("m2") == 0

    def test_many_hashes_at_once(self, cache: EmbeddingCache) -> None:
        n = 1_234
        hashes = [digest(str(i)) for i in range(n)]
        stored = vectors(n, dim=4)
        assert cache.put_many(hashes, "m", stored, levels=[0] * n) == n
        got = cache.get_many(hashes, "m")
        assert len(got) == n
        np.testing.assert_array_equal(np.stack([got[h] for h in hashes]), stored)

    def test_mismatched_lengths_are_an_ingest_error(self, cache: EmbeddingCache) -> None:
        hashes = [digest(t) for t in ("a", "b", "c")]
        with pytest.raises(IngestError, match="one of each"):
            cache.put_many(hashes, "m", vectors(2), levels=[0, 0, 0])
        with pytest.raises(IngestError):
            cache.put_many(hashes, "m", vectors(3), levels=[0, 0])
        assert len(cache) == 0
