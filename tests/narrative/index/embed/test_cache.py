"""Embedding cache: unchanged text is never re-embedded, restricted vectors are never stored."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from ragspine.errors import IngestError
from ragspine.narrative.index.embed.cache import EmbeddingCache, content_hash, embed_with_cache
from ragspine.narrative.index.embed.model import Embedder, l2_normalize


class CountingEmbedder:
    """A deterministic stand-in embedder that records what it was asked to embed."""

    model_id = "fake-v1"
    dim = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(
        self,
        texts: Sequence[str],
        *,
        batch_size: int = 32,
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        self.seen.extend(texts)
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts
        ]
        return l2_normalize(np.array(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1)


def test_put_and_get_round_trip_per_model(tmp_path: Path) -> None:
    vectors = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    hashes = [content_hash(t) for t in ("a", "b", "c")]
    with EmbeddingCache(tmp_path / "cache.sqlite") as cache:
        assert cache.put_many(hashes, "m1", vectors, levels=[0, 1, 2]) == 3
        got = cache.get_many([*hashes, content_hash("zzz")], "m1")
        assert set(got) == set(hashes)
        np.testing.assert_array_equal(got[hashes[1]], vectors[1])
        assert cache.get_many(hashes, "m2") == {}
        assert cache.drop_model("m1") == 3 and len(cache) == 0
    with pytest.raises(IngestError, match="one of each"):
        EmbeddingCache(tmp_path / "c2.sqlite").put_many(hashes, "m1", vectors[:2], levels=[0, 0, 0])


def test_restricted_vectors_are_not_cached(tmp_path: Path) -> None:
    marker = np.full((1, 16), 0.123456789, dtype=np.float32)
    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(path) as cache:
        assert cache.put_many([content_hash("secret")], "m", marker, levels=[3]) == 0
        assert cache.get_many([content_hash("secret")], "m") == {}
    assert marker.tobytes() not in path.read_bytes()


def test_unchanged_text_is_not_re_embedded(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    assert isinstance(embedder, Embedder)
    texts = ["alpha report", "beta report", "secret memo", "gamma report"]
    levels = [0, 2, 3, 1]
    with EmbeddingCache(tmp_path / "cache.sqlite") as cache:
        first, embedded = embed_with_cache(embedder, texts, levels, cache)
        assert embedded == 3 and "secret memo" not in embedder.seen
        assert not first[2].any()  # restricted row left as zeros
        embedder.seen.clear()
        again, embedded = embed_with_cache(embedder, texts, levels, cache)
        assert embedded == 0 and embedder.seen == []
        np.testing.assert_array_equal(first, again)
        changed = ["alpha report", "beta report (revised)", "secret memo", "gamma report"]
        _, embedded = embed_with_cache(embedder, changed, levels, cache)
        assert embedded == 1 and embedder.seen == ["beta report (revised)"]
        assert len(cache) == 4
