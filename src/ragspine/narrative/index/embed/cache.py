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

CACHE_SLICE = 64
"""Texts embedded between two cache writes: what a stopped run can lose at most."""


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
    slice_size: int = CACHE_SLICE,
) -> tuple[np.ndarray, int]:
    """Vectors for ``texts`` (restricted rows left as zeros, never embedded or cached), embedding
    only cache misses, each distinct text once; returns the matrix and the number of texts
    actually embedded.

    Misses are embedded ``slice_size`` at a time and each slice is written to the cache before
    the next starts, so a run stopped midway (an error, Ctrl-C, a killed process) keeps what it
    embedded and the next run starts where it stopped. ``progress(done, total)`` counts the
    distinct texts embedded by this call.
    """
    if len(texts) != len(levels):
        raise IngestError(f"got {len(texts)} texts but {len(levels)} levels")
    if slice_size < 1:
        raise IngestError(f"slice_size={slice_size} must be at least 1")
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    wanted = [i for i, level in enumerate(levels) if int(level) < RESTRICTED]
    hashes = {i: content_hash(texts[i]) for i in wanted}
    cached = cache.get_many(list(hashes.values()), embedder.model_id) if cache else {}
    missing: dict[str, list[int]] = {}  # distinct text hash -> rows wanting it, in input order
    for i in wanted:
        hit = cached.get(hashes[i])
        if hit is not None and hit.shape == (embedder.dim,):
            out[i] = hit
        else:
            missing.setdefault(hashes[i], []).append(i)
    distinct = list(missing.items())
    total = len({hashes[i] for i in wanted})
    ready = total - len(distinct)  # distinct texts found in the cache
    if progress is not None and ready:
        progress(ready, total)
    for start in range(0, len(distinct), slice_size):
        part = distinct[start : start + slice_size]
        done = ready + start

        def report(embedded: int, _: int, done: int = done) -> None:
            if progress is not None:
                progress(done + embedded, total)

        fresh = embedder.embed(
            [texts[rows[0]] for _, rows in part], batch_size=batch_size, progress=report
        )
        for (_, rows), vector in zip(part, fresh, strict=True):
            out[rows] = vector
        if cache is not None:
            cache.put_many(
                [digest for digest, _ in part],
                embedder.model_id,
                fresh,
                levels=[max(int(levels[i]) for i in rows) for _, rows in part],
            )
    return out, len(distinct)
