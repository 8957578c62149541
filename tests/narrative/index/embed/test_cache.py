"""Embedding through the cache: unchanged text is never re-embedded, restricted text never
embedded (the cache itself is checked by ``tests/stores/contracts/embedding_cache.py``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from ragspine.narrative.index.embed.cache import embed_with_cache
from ragspine.narrative.index.embed.model import Embedder, l2_normalize
from ragspine.stores.sqlite.embeddings import SQLiteEmbeddingCache


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
        if progress is not None:
            progress(len(texts), len(texts))
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts
        ]
        return l2_normalize(np.array(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1)


def test_unchanged_text_is_not_re_embedded(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    assert isinstance(embedder, Embedder)
    texts = ["alpha report", "beta report", "secret memo", "gamma report"]
    levels = [0, 2, 3, 1]
    with SQLiteEmbeddingCache(tmp_path / "cache.sqlite") as cache:
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


def test_each_distinct_text_is_embedded_once_and_shared(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    texts = ["a", "b", "a", "c", "b"]
    with SQLiteEmbeddingCache(tmp_path / "cache.sqlite") as cache:
        vectors, embedded = embed_with_cache(embedder, texts, [0] * 5, cache)
    assert embedded == 3 and embedder.seen == ["a", "b", "c"]
    assert np.array_equal(vectors[0], vectors[2]) and np.array_equal(vectors[1], vectors[4])


def test_misses_reach_the_cache_slice_by_slice_so_a_stopped_run_resumes(tmp_path: Path) -> None:
    class Interrupted(CountingEmbedder):
        def embed(self, texts: Sequence[str], **options: object) -> np.ndarray:
            if len(self.seen) >= 6:
                raise KeyboardInterrupt  # Ctrl-C in the middle of the run
            return super().embed(texts)

    texts = [f"text {i}" for i in range(10)]
    with SQLiteEmbeddingCache(tmp_path / "cache.sqlite") as cache:
        first = Interrupted()
        with pytest.raises(KeyboardInterrupt):
            embed_with_cache(first, texts, [0] * 10, cache, slice_size=3)
        assert first.seen == texts[:6] and len(cache) == 6  # two whole slices kept
        again = CountingEmbedder()
        reports: list[tuple[int, int]] = []
        vectors, embedded = embed_with_cache(
            again, texts, [0] * 10, cache, slice_size=3, progress=lambda *r: reports.append(r)
        )
        assert again.seen == texts[6:] and embedded == 4
        fresh, _ = embed_with_cache(CountingEmbedder(), texts, [0] * 10, None)
    assert np.allclose(vectors, fresh)
    # Cached texts start the count; then each embedded text, out of the distinct total.
    assert reports == [(6, 10), (9, 10), (10, 10)]
