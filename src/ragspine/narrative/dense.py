"""Per-library vector indexes kept in step with the chunk store, and the workspace's embedder.

A library keeps vectors only when its ``vectors`` setting is on (``library create --vectors``).
Its chunks are embedded at ingest (title, heading path and child text), through a workspace-wide
cache keyed by (text hash, model id), so an unchanged text is never embedded twice; restricted
chunks are neither embedded nor written. Like the lexical indexes, each vector index carries the
chunk store generation it reflects and is rebuilt (from the cache) when it is behind.

This module imports no embedding code at import time: the embedder, the cache and the vector
index are loaded on first use, so lexical-only modes never pull in the embedding stack.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import ConfigError, MissingExtraError
from ragspine.narrative.chunk_store import ChunkStore, IndexRow
from ragspine.narrative.indexes import searchable

if TYPE_CHECKING:
    from ragspine.narrative.embedding import Embedder
    from ragspine.narrative.embedding_cache import EmbeddingCache
    from ragspine.narrative.vector import ExactVectorIndex

log = logging.getLogger("ragspine.narrative")

EmbedProgress = Callable[[int, int], None]
"""``(embedded, total)`` texts of the current embedding run."""

CACHE_FILE = "embedding-cache.sqlite"
EMBED_BATCH = 32


def embedded_text(title: str, heading: str, text: str) -> str:
    """The text embedded for a chunk: document title, heading path and child text."""
    return "\n".join(part for part in (title, heading, text) if part)


def default_embedder() -> Embedder:
    """The installed ONNX embedder; :class:`MissingExtraError` without ``ragspine[onnx]``."""
    from ragspine.narrative import embedding

    return embedding.load_embedder()


class LibraryVectors:
    """Opens, rebuilds and updates the vector index of every library that uses vectors."""

    def __init__(
        self,
        store: ChunkStore,
        index_dir: Path,
        *,
        embedder_factory: Callable[[], Embedder] = default_embedder,
        ann_threshold: int | None = None,
    ) -> None:
        self._store = store
        self._index_dir = index_dir
        self._factory = embedder_factory
        self._ann_threshold = ann_threshold
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._open: dict[str, ExactVectorIndex] = {}
        self.rebuilt: list[str] = []
        self.embedded = 0
        """Texts actually embedded (cache misses) since this object was made."""

    # -- the embedder ----------------------------------------------------------------------

    def use_embedder(self, embedder: Embedder) -> None:
        """Use ``embedder`` from now on (its ``model_id`` is stored with every vector)."""
        self._embedder = embedder
        self._open.clear()

    def embedder(self) -> Embedder:
        """The embedder, loaded on first use; :class:`MissingExtraError` when not installed."""
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    def available(self) -> tuple[bool, str]:
        """Whether an embedder can be loaded, and if not, why (for the trace)."""
        try:
            self.embedder()
        except MissingExtraError as exc:
            return False, str(exc)
        return True, ""

    def close(self) -> None:
        """Release the embedding cache."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def _embedding_cache(self) -> EmbeddingCache:
        if self._cache is None:
            from ragspine.narrative.embedding_cache import EmbeddingCache

            self._cache = EmbeddingCache(self._index_dir / CACHE_FILE)
        return self._cache

    def embed(
        self,
        texts: Sequence[str],
        levels: Sequence[int],
        *,
        progress: EmbedProgress | None = None,
    ) -> Any:
        """Vectors of ``texts`` through the cache (restricted rows: zeros, never embedded)."""
        from ragspine.narrative.embedding_cache import embed_with_cache

        vectors, embedded = embed_with_cache(
            self.embedder(),
            texts,
            levels,
            self._embedding_cache(),
            batch_size=EMBED_BATCH,
            progress=progress,
        )
        self.embedded += embedded
        return vectors

    def embed_query(self, question: str) -> Any:
        """The query vector of ``question`` (not cached)."""
        return self.embedder().embed([question])[0]

    # -- the indexes -----------------------------------------------------------------------

    def folder(self, library_id: str) -> Path:
        """Where the vector index of ``library_id`` lives."""
        return self._index_dir / library_id / "vectors"

    def _open_index(self, library_id: str, *, fresh: bool = False) -> ExactVectorIndex:
        """The library's index as last committed (``fresh``: read from disk again, as a writer
        must). Opening writes nothing."""
        from ragspine.narrative.vector import DEFAULT_ANN_THRESHOLD, open_vector_index

        embedder = self.embedder()
        index = None if fresh else self._open.get(library_id)
        if index is None or index.model_id != embedder.model_id:
            index = open_vector_index(
                self.folder(library_id),
                model_id=embedder.model_id,
                dim=embedder.dim,
                library=library_id,
                ann_threshold=self._ann_threshold or DEFAULT_ANN_THRESHOLD,
            )
            self._open[library_id] = index
        return index

    def check(self, library_id: str) -> None:
        """Fail before any write when the library's index was built with another model."""
        self._open_index(library_id, fresh=True)

    def get(self, library_id: str) -> ExactVectorIndex:
        """The index to search: the last committed one, reloaded when a writer committed a
        newer one (never written by this call)."""
        from ragspine.narrative.vector import read_meta

        self._require_vectors(library_id)
        index = self._open_index(library_id)
        if index.generation != self._store.generation(library_id):
            meta = read_meta(self.folder(library_id))
            if meta is not None and meta.get("generation") != index.generation:
                index = self._open_index(library_id, fresh=True)
        return index

    def refresh(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Bring the library's index up to the chunk store (the caller holds the library's
        write lock); returns the number of vectors stored."""
        self._require_vectors(library_id)
        index = self._open_index(library_id, fresh=True)
        generation = self._store.generation(library_id)
        if index.generation != generation:
            self._rebuild(index, library_id, generation, progress)
        return len(index)

    def _require_vectors(self, library_id: str) -> None:
        if not self._store.library(library_id).vectors:
            raise ConfigError(
                f"library {library_id!r} keeps no vectors: turn them on with "
                f"`ragspine library vectors {library_id} on` (or create it with --vectors), "
                "or search it in a lexical mode"
            )

    def _rebuild(
        self,
        index: ExactVectorIndex,
        library_id: str,
        generation: int,
        progress: EmbedProgress | None,
    ) -> None:
        fresh = index.generation == 0 and len(index) == 0
        (log.info if fresh else log.warning)(
            "vector index of %s is at generation %s but the chunk store is at %s: %s it",
            library_id,
            index.generation,
            generation,
            "building" if fresh else "rebuilding",
        )
        rows = searchable(self._store.index_rows(library_id))
        index.remove(index.keys())
        self._add_rows(index, rows, progress)
        index.commit(generation)
        self.rebuilt.append(f"{library_id}/vectors")

    def _add_rows(
        self, index: ExactVectorIndex, rows: Sequence[IndexRow], progress: EmbedProgress | None
    ) -> None:
        if not rows:
            return
        texts = [embedded_text(row.title, row.heading, row.text) for row in rows]
        levels = [row.sensitivity for row in rows]
        vectors = self.embed(texts, levels, progress=progress)
        index.add([row.key for row in rows], vectors, levels)

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Iterable[IndexRow],
        *,
        since: int,
        generation: int,
        progress: EmbedProgress | None = None,
    ) -> None:
        """Apply committed chunk-store changes (``since`` -> ``generation``) to the index; an
        index that was not at ``since`` is rebuilt instead."""
        index = self._open_index(library_id, fresh=True)
        if index.generation == generation:
            return
        if index.generation != since:
            self._rebuild(index, library_id, generation, progress)
            return
        if removed:
            index.remove(list(removed))
        self._add_rows(index, searchable(added), progress)
        index.commit(generation)

    def reembed(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Drop the library's vector index and build it again with the current embedder;
        returns the number of vectors stored."""
        self._require_vectors(library_id)
        self.drop(library_id)
        return self.refresh(library_id, progress=progress)

    def drop(self, library_id: str) -> None:
        """Forget and delete the library's vector index (rebuilt on demand)."""
        self._open.pop(library_id, None)
        shutil.rmtree(self.folder(library_id), ignore_errors=True)
