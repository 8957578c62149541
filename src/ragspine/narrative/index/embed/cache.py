"""Embedding through a cache: only texts whose (content hash, model id) is not cached are given
to the embedder; restricted texts are never embedded nor cached. The cache itself is a store
(:class:`ragspine.stores.embeddings.EmbeddingCache`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from ragspine.errors import IngestError
from ragspine.narrative.index.embed.model import Embedder
from ragspine.stores.embeddings import RESTRICTED, EmbeddingCache


def content_hash(text: str) -> str:
    """The cache key of the exact text given to the embedder (sha256, hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_with_cache(
    embedder: Embedder,
    texts: Sequence[str],
    levels: Sequence[int],
    cache: EmbeddingCache | None,
    *,
    batch_size: int = 32,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[np.ndarray, int]:
    """Vectors for ``texts`` (restricted rows left as zeros, never embedded or cached), embedding
    only cache misses; returns the matrix and the number of texts actually embedded.
    """
    if len(texts) != len(levels):
        raise IngestError(f"got {len(texts)} texts but {len(levels)} levels")
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    wanted = [i for i, level in enumerate(levels) if int(level) < RESTRICTED]
    hashes = {i: content_hash(texts[i]) for i in wanted}
    cached = cache.get_many(list(hashes.values()), embedder.model_id) if cache else {}
    missing: list[int] = []
    for i in wanted:
        hit = cached.get(hashes[i])
        if hit is not None and hit.shape == (embedder.dim,):
            out[i] = hit
        else:
            missing.append(i)
    if missing:
        fresh = embedder.embed(
            [texts[i] for i in missing], batch_size=batch_size, progress=progress
        )
        out[missing] = fresh
        if cache is not None:
            cache.put_many(
                [hashes[i] for i in missing],
                embedder.model_id,
                fresh,
                levels=[int(levels[i]) for i in missing],
            )
    return out, len(missing)
