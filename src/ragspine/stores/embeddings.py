"""The embedding cache seam: vectors kept by (content hash, model id), so unchanged text is never
embedded twice.

:class:`EmbeddingCache` is what vector indexing asks of a backend;
``ragspine.stores.sqlite.embeddings.SQLiteEmbeddingCache`` implements it today. Hashing texts and
deciding what to embed stay with the embedding stage
(:func:`ragspine.narrative.index.embed.cache.embed_with_cache`). The contract every backend must
keep is written once, as tests, in ``tests/stores/contracts/embedding_cache.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ragspine.errors import IngestError
from ragspine.security import Sensitivity

RESTRICTED = int(Sensitivity.RESTRICTED)
"""Vectors of texts at this level or above are never stored."""


class EmbeddingCache(Protocol):
    """Float32 vectors looked up by content hash and model id."""

    def get_many(self, hashes: Sequence[str], model_id: str) -> dict[str, np.ndarray]:
        """Cached vectors of ``hashes`` for ``model_id``; absent hashes are left out."""

    def put_many(
        self,
        hashes: Sequence[str],
        model_id: str,
        vectors: np.ndarray,
        *,
        levels: Sequence[int],
    ) -> int:
        """Store one vector per hash for ``model_id`` (replacing an older one), skipping those
        whose level is restricted; returns how many were stored. Mismatched lengths are an
        :class:`~ragspine.errors.IngestError`."""

    def drop_model(self, model_id: str) -> int:
        """Delete every vector of ``model_id``; returns how many were deleted."""

    def __len__(self) -> int:
        """Vectors stored, over every model."""

    def close(self) -> None:
        """Release the cache's connections."""


def storable(
    hashes: Sequence[str], vectors: np.ndarray, levels: Sequence[int]
) -> list[tuple[str, np.ndarray]]:
    """``(hash, float32 vector)`` of each item :meth:`EmbeddingCache.put_many` may store, in the
    order given (restricted ones left out); mismatched lengths are an :class:`IngestError`."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or not len(hashes) == len(levels) == matrix.shape[0]:
        raise IngestError(
            f"put_many() got {len(hashes)} hashes, {len(levels)} levels and vectors of shape "
            f"{matrix.shape}: pass one of each per item"
        )
    return [
        (digest, matrix[i])
        for i, (digest, level) in enumerate(zip(hashes, levels, strict=True))
        if int(level) < RESTRICTED
    ]
