"""Per-library vector indexes kept in step with the chunk store, and the workspace's embedder.

A library keeps vectors only when its ``vectors`` setting is on (``library create --vectors``).
Its chunks are embedded after they are written and indexed lexically (title, heading path and
child text; parents and windows are never embedded), through a workspace-wide cache keyed by
(text hash, model id) that is written every few dozen texts, so an unchanged text is never
embedded twice and a run stopped while embedding resumes where it stopped; restricted chunks are
neither embedded nor written. Like the lexical indexes, each vector index carries the chunk
store generation it reflects and is rebuilt (from the cache) when it is behind. While it is
behind, the library's vectors are incomplete: :meth:`LibraryVectors.get` refuses to search them
(``auto`` searches such a library lexically and says so).

This module imports no embedding code at import time: the embedder, the cache and the vector
index are loaded on first use, so lexical-only modes never pull in the embedding stack.

Threads share one :class:`LibraryVectors`: the embedder and the cache are made once, under a
lock; a writer works on an index of its own, read fresh from disk, and hands it to searches only
after it has committed it; a search loads the committed index and hands it on whole.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import ConfigError, MissingExtraError
from ragspine.narrative.index.embed.settings import EmbedSettings
from ragspine.narrative.index.lexical.library_indexes import searchable
from ragspine.stores.chunks import ChunkStore, IndexRow
from ragspine.stores.indexes import IndexStorage, index_storage

if TYPE_CHECKING:
    from ragspine.narrative.index.embed.model import Embedder
    from ragspine.narrative.index.vector.engine import ExactVectorIndex
    from ragspine.stores.embeddings import EmbeddingCache

log = logging.getLogger("ragspine.narrative")

EmbedProgress = Callable[[int, int], None]
"""``(embedded, total)`` texts of the current embedding run."""

CACHE_FILE = "embedding-cache.sqlite"
VECTORS = "vectors"
"""The name of a library's vector index folder."""
ADD_SLICE = 1024
"""Rows read, embedded and added to an index at a time: bounds the texts and vectors held in
memory (added vectors wait on disk until the index commits)."""


def embedded_text(title: str, heading: str, text: str) -> str:
    """The text embedded for a chunk: document title, heading path and child text."""
    return "\n".join(part for part in (title, heading, text) if part)


def default_embedder(settings: EmbedSettings) -> Embedder:
    """The installed ONNX embedder with ``settings.threads``; :class:`MissingExtraError` without
    ``ragspine[onnx]``."""
    from ragspine.narrative.index.embed import model as embedding

    return embedding.load_embedder(threads=settings.threads)


class EmbeddingSide:
    """What every backend's vector index set shares: the chunk store it reads, the embedder
    (loaded on first use, with :class:`EmbedSettings`) and the embedding cache its vectors go
    through. A subclass opens its
    backend's cache (:meth:`_open_cache`) and may react when the embedder changes
    (:meth:`_embedder_changed`)."""

    def __init__(
        self,
        store: ChunkStore,
        embedder_factory: Callable[[EmbedSettings], Embedder],
        settings: EmbedSettings | None,
    ) -> None:
        self._store = store
        self._factory = embedder_factory
        self._settings = settings or EmbedSettings()
        self._made = False  # whether the embedder came from the factory (and follows settings)
        self._embedder: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._lock = threading.Lock()  # guards the log, the counter and what subclasses cache
        self._making = threading.Lock()  # one thread loads the embedder or opens the cache
        self._rebuilt: list[str] = []
        self._embedded = 0

    @property
    def rebuilt(self) -> list[str]:
        """Vector indexes rebuilt by this object so far (a log: ``library/vectors``)."""
        with self._lock:
            return list(self._rebuilt)

    @property
    def embedded(self) -> int:
        """Texts actually embedded (cache misses) since this object was made."""
        return self._embedded

    @property
    def settings(self) -> EmbedSettings:
        """Texts per model call and inference threads (see :class:`EmbedSettings`)."""
        return self._settings

    def configure(self, settings: EmbedSettings) -> None:
        """Use ``settings`` from now on; an embedder loaded with other threads is loaded again
        on next use (one given to :meth:`use_embedder` is kept)."""
        with self._making:
            if self._made and settings.threads != self._settings.threads:
                self._embedder = None
                self._made = False
            self._settings = settings

    def use_embedder(self, embedder: Embedder) -> None:
        """Use ``embedder`` from now on (its ``model_id`` is stored with every vector)."""
        with self._lock:
            self._embedder = embedder
            self._made = False
            self._embedder_changed()

    def _embedder_changed(self) -> None:
        """Called, under the lock, when :meth:`use_embedder` swaps the embedder."""

    def embedder(self) -> Embedder:
        """The embedder, loaded on first use; :class:`MissingExtraError` when not installed."""
        embedder = self._embedder
        if embedder is None:
            with self._making:
                embedder = self._embedder
                if embedder is None:
                    embedder = self._embedder = self._factory(self._settings)
                    self._made = True
        return embedder

    def _identity(self) -> tuple[str, int]:
        """The embedder's model id and dimension; the default embedder is not loaded for it (a
        writer checks the model before its lexical phase, which then runs without the model's
        memory)."""
        if self._embedder is None and self._factory is default_embedder:
            from ragspine.narrative.index.embed import model as embedding

            return embedding.default_identity()
        embedder = self.embedder()
        return embedder.model_id, embedder.dim

    def available(self) -> tuple[bool, str]:
        """Whether an embedder can be loaded, and if not, why (for the trace)."""
        try:
            self.embedder()
        except MissingExtraError as exc:
            return False, str(exc)
        return True, ""

    def close(self) -> None:
        """Release the embedding cache."""
        with self._making:
            cache, self._cache = self._cache, None
        if cache is not None:
            cache.close()

    def _open_cache(self) -> EmbeddingCache:
        """The backend's embedding cache."""
        raise NotImplementedError

    def _embedding_cache(self) -> EmbeddingCache:
        cache = self._cache
        if cache is None:
            with self._making:
                cache = self._cache
                if cache is None:
                    cache = self._cache = self._open_cache()
        return cache

    def embed(
        self,
        texts: Sequence[str],
        levels: Sequence[int],
        *,
        progress: EmbedProgress | None = None,
    ) -> Any:
        """Vectors of ``texts`` through the cache (restricted rows: zeros, never embedded)."""
        from ragspine.narrative.index.embed.cache import embed_with_cache

        vectors, embedded = embed_with_cache(
            self.embedder(),
            texts,
            levels,
            self._embedding_cache(),
            batch_size=self._settings.batch_size,
            progress=progress,
        )
        with self._lock:
            self._embedded += embedded
        return vectors

    def embed_query(self, question: str) -> Any:
        """The query vector of ``question`` (not cached)."""
        return self.embedder().embed([question])[0]

    def _rows(self, keys: Sequence[int]) -> list[IndexRow]:
        """The searchable rows of ``keys``, read from the chunk store, in the order given."""
        chunks = self._store.chunks_by_key(keys)
        return searchable(
            IndexRow(key, c.title, c.heading, c.text, int(c.sensitivity))
            for key in keys
            if (c := chunks.get(key)) is not None
        )


class LibraryVectors(EmbeddingSide):
    """Opens, rebuilds and updates the vector index of every library that uses vectors."""

    def __init__(
        self,
        store: ChunkStore,
        index_dir: IndexStorage | Path,
        *,
        embedder_factory: Callable[[EmbedSettings], Embedder] = default_embedder,
        ann_threshold: int | None = None,
        settings: EmbedSettings | None = None,
    ) -> None:
        super().__init__(store, embedder_factory, settings)
        self._storage = index_storage(index_dir)
        self._ann_threshold = ann_threshold
        self._open: dict[str, ExactVectorIndex] = {}  # replaced whole, under the lock

    def _embedder_changed(self) -> None:
        self._open = {}

    def _open_cache(self) -> EmbeddingCache:
        from ragspine.stores.sqlite.embeddings import SQLiteEmbeddingCache

        return SQLiteEmbeddingCache(self._storage.shared_file(CACHE_FILE))

    # -- the indexes -----------------------------------------------------------------------

    def folder(self, library_id: str) -> Path:
        """Where the vector index of ``library_id`` lives."""
        return self._storage.folder(library_id, VECTORS)

    def _read_index(self, library_id: str) -> ExactVectorIndex:
        """The library's index as last committed, read from disk (a new object, which no other
        thread sees until :meth:`_publish`). Reading writes nothing."""
        from ragspine.narrative.index.vector.engine import DEFAULT_ANN_THRESHOLD, open_vector_index

        model_id, dim = self._identity()
        return open_vector_index(
            self.folder(library_id),
            model_id=model_id,
            dim=dim,
            library=library_id,
            ann_threshold=self._ann_threshold or DEFAULT_ANN_THRESHOLD,
        )

    def _publish(self, library_id: str, index: ExactVectorIndex) -> None:
        """Hand a whole (loaded or committed) index to searches, unless one of a newer
        generation of the same model is already there."""
        with self._lock:
            current = self._open.get(library_id)
            if (
                current is None
                or current.model_id != index.model_id
                or current.generation <= index.generation
            ):
                self._open = {**self._open, library_id: index}

    def check(self, library_id: str) -> None:
        """Fail before any write when the library's index was built with another model."""
        self._read_index(library_id)

    def get(self, library_id: str) -> ExactVectorIndex:
        """The index to search: the last committed one, reloaded when a writer committed a
        newer one (never written by this call).

        While a writer is embedding (or after one was stopped while embedding) it lacks the
        newest chunks; the lexical channel of ``hybrid`` still finds them. Searches never
        refuse or remark on that: whether the index is behind depends on writes of any level,
        so telling an asker would reveal writes they may not see (see :meth:`complete`, a
        writer's question)."""
        from ragspine.narrative.index.vector.engine import read_meta

        self._require_vectors(library_id)
        index = self._open.get(library_id)
        if index is None or index.model_id != self.embedder().model_id:
            index = self._read_index(library_id)
            self._publish(library_id, index)
        elif index.generation != self._store.generation(library_id):
            meta = read_meta(self.folder(library_id))
            if meta is not None and meta.get("generation") != index.generation:
                index = self._read_index(library_id)
                self._publish(library_id, index)
        return index

    def complete(self, library_id: str) -> bool:
        """Whether the library's committed vector index covers its chunk store (false while an
        ingest is embedding, after one was stopped while embedding, or before vectors were
        built); reads only the index's ``meta.json``. For writers and operators: it counts
        writes of every sensitivity level, so no search result or notice depends on it."""
        from ragspine.narrative.index.vector.engine import read_meta

        meta = read_meta(self.folder(library_id))
        return meta is not None and meta.get("generation") == self._store.generation(library_id)

    def refresh(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Bring the library's index up to the chunk store (the caller holds the library's
        write lock); returns the number of vectors stored."""
        self._require_vectors(library_id)
        index = self._read_index(library_id)
        generation = self._store.generation(library_id)
        if index.generation != generation:
            self._rebuild(index, library_id, generation, progress)
        self._publish(library_id, index)
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
        keys = [row.key for row in searchable(self._store.index_rows(library_id))]
        index.remove(index.keys())
        self._add_rows(index, keys, progress)
        index.commit(generation)
        with self._lock:
            self._rebuilt.append(f"{library_id}/vectors")

    def _add_rows(
        self, index: ExactVectorIndex, keys: Sequence[int], progress: EmbedProgress | None
    ) -> None:
        """Embed the chunks of ``keys`` (searchable ones: cache first, misses written to the
        cache as they are embedded) and add them to ``index``; their texts are read from the
        chunk store :data:`ADD_SLICE` chunks at a time, so memory does not grow with the
        number of chunks (a first pass counts the distinct texts, for progress)."""
        if not keys:
            return
        from ragspine.narrative.index.embed.cache import content_hash

        slices = [slice(start, start + ADD_SLICE) for start in range(0, len(keys), ADD_SLICE)]
        sizes = []
        for part in slices:
            rows = self._rows(keys[part])
            sizes.append(
                len({content_hash(embedded_text(r.title, r.heading, r.text)) for r in rows})
            )
        total = sum(sizes)
        for number, part in enumerate(slices):
            offset = sum(sizes[:number])

            def report(done: int, _: int, offset: int = offset) -> None:
                if progress is not None:
                    progress(offset + done, total)

            rows = self._rows(keys[part])
            texts = [embedded_text(row.title, row.heading, row.text) for row in rows]
            levels = [row.sensitivity for row in rows]
            vectors = self.embed(texts, levels, progress=report)
            index.add([row.key for row in rows], vectors, levels)

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Sequence[int],
        *,
        since: int,
        generation: int,
        progress: EmbedProgress | None = None,
    ) -> None:
        """Apply committed chunk-store changes (``since`` -> ``generation``: the keys of the
        chunks ``removed`` and ``added``) to the index; an index that was not at ``since`` is
        rebuilt instead. Searches get the index once it is committed."""
        index = self._read_index(library_id)  # from disk: another process may have committed
        if index.generation != since and index.generation != generation:
            self._rebuild(index, library_id, generation, progress)
        elif index.generation != generation:
            if removed:
                index.remove(list(removed))
            self._add_rows(index, added, progress)
            index.commit(generation)
        self._publish(library_id, index)

    def reembed(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Drop the library's vector index and build it again with the current embedder;
        returns the number of vectors stored."""
        self._require_vectors(library_id)
        self.drop(library_id)
        return self.refresh(library_id, progress=progress)

    def drop(self, library_id: str) -> None:
        """Forget and delete the library's vector index (rebuilt on demand)."""
        with self._lock:
            self._open = {name: index for name, index in self._open.items() if name != library_id}
        self._storage.drop(library_id, VECTORS)
