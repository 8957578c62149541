"""Every change to a document library, each under that library's write lock.

:class:`LibraryWriter` is the one place that takes a library's write lock (one writer at a time,
across threads and processes; see :mod:`ragspine.locks`): creating and deleting libraries,
turning vectors on or off, re-embedding, deleting documents and ingesting. Readers take no lock
and read the last committed state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import QueryError, quote_input
from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
from ragspine.narrative.index.vector.library_vectors import EmbedProgress, LibraryVectors
from ragspine.narrative.ingest.chunking import ChunkingOptions
from ragspine.narrative.ingest.ingestor import (
    BEIR_BATCH,
    DEFAULT_CHUNKING,
    DocumentOutcome,
    DocumentSource,
    Ingestor,
    IngestReport,
    Progress,
    beir_corpus,
    beir_sources,
    file_sources,
    scan_beir_corpus,
)
from ragspine.narrative.ingest.loaders import iter_document_files
from ragspine.security import Sensitivity
from ragspine.stores.chunks import ChunkStore, Library, check_library_name

if TYPE_CHECKING:
    from ragspine.graph.upkeep import RelationUpkeep


class LibraryWriter:
    """Writes libraries, documents and their indexes; holds each library's write lock
    (``lock("library-<name>")``: a lock file of the workspace, or a PostgreSQL advisory lock)
    while it does."""

    def __init__(
        self,
        store: ChunkStore,
        indexes: LibraryIndexes,
        vectors: LibraryVectors,
        lock: Callable[..., AbstractContextManager[None]],
        relations: RelationUpkeep | None = None,
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._vectors = vectors
        self._lock = lock
        self._relations = relations  # the relation graph's edges of documents go with them
        self._ingestor = Ingestor(store, indexes, vectors, relations)

    @contextmanager
    def writing(self, library_id: str) -> Iterator[None]:
        """Hold the write lock of ``library_id`` (waits while another writer holds it)."""
        check_library_name(library_id)
        with self._lock(f"library-{library_id}", resource=f"library {library_id!r}"):
            yield

    def catch_up(self, library_id: str) -> None:
        """Bring the library's lexical indexes to its chunk store's generation, rebuilding any
        that is missing or missed a change (after a schema migration dropped them, or a writer
        killed between its two commits)."""
        with self.writing(library_id):
            generation = self._store.generation(library_id)
            self._indexes.apply(library_id, (), (), since=generation, generation=generation)

    def create_library(
        self,
        name: str,
        *,
        description: str = "",
        default_sensitivity: str | Sensitivity = "public",
        vectors: bool = False,
    ) -> Library:
        """Register a library with a routing description and a default sensitivity;
        ``vectors`` keeps chunk embeddings (computed at ingest) for vector and hybrid search."""
        with self.writing(name):
            return self._store.create_library(
                name,
                description=description,
                default_sensitivity=default_sensitivity,
                vectors=vectors,
            )

    def set_vectors(
        self, name: str, vectors: bool, *, progress: EmbedProgress | None = None
    ) -> Library:
        """Turn a library's vectors on (embedding its chunks now) or off (deleting its index)."""
        with self.writing(name):
            library = self._store.set_vectors(name, vectors)
            if vectors:
                self._vectors.refresh(name, progress=progress)
            else:
                self._vectors.drop(name)
            return library

    def reembed(self, name: str, *, progress: EmbedProgress | None = None) -> int:
        """Rebuild a library's vector index with the current embedding model (after a model
        change); returns the number of vectors stored."""
        with self.writing(name):
            return self._vectors.reembed(name, progress=progress)

    def delete_library(self, name: str) -> int:
        """Delete a library with its documents, chunks and indexes; returns how many documents
        it held."""
        with self.writing(name):
            with self._store.transaction():
                documents = self._store.delete_library(name)
                if self._relations is not None:
                    self._relations.library_deleted(name)
            self._indexes.drop(name)
            self._vectors.drop(name)
            return documents

    def delete_documents(self, library: str, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents (with their parents and chunks) from ``library`` in one transaction
        and update its indexes; returns the ids deleted. An unknown id is an error and
        nothing is deleted."""
        store = self._store
        with self.writing(library):
            stored = store.library(library)
            missing = [d for d in doc_ids if store.document(library, d) is None]
            if missing:
                shown = ", ".join(quote_input(d) for d in missing[:5])
                raise QueryError(
                    f"library {library!r} has no document {shown}: a document's id is its path "
                    "relative to the folder ingested (or its file name, or a BEIR _id), as "
                    f"'ragspine search ... --library {library}' shows it"
                )
            since = store.generation(library)
            removed: list[int] = []
            with store.transaction():
                for doc_id in dict.fromkeys(doc_ids):
                    removed += store.delete_document(library, doc_id)
                    store.bump_generation(library)
                if self._relations is not None:
                    self._relations.documents_deleted(library, list(dict.fromkeys(doc_ids)))
            generation = store.generation(library)
            self._indexes.apply(library, removed, (), since=since, generation=generation)
            if stored.vectors:
                self._vectors.apply(library, removed, (), since=since, generation=generation)
            return list(dict.fromkeys(doc_ids))

    def ingest_documents(
        self,
        paths: Sequence[str | Path],
        *,
        library: str,
        metadata: Mapping[str, Any] | None = None,
        sensitivity: str | Sensitivity | None = None,
        window: int = 0,
        max_words: int = ChunkingOptions().max_words,
        progress: Progress | None = None,
        vectors: bool | None = None,
        embed_progress: EmbedProgress | None = None,
    ) -> IngestReport:
        """Ingest files and folders of documents; each document lands fully or not at all.

        ``vectors`` sets the library's vector setting (``None`` keeps it; new libraries start
        without); in a library with vectors, chunks are embedded at ingest.
        """
        options = ChunkingOptions(max_words=max_words, window=window)
        total = sum(
            sum(1 for _ in iter_document_files(Path(root))) if Path(root).exists() else 1
            for root in paths
        )  # every file met, skipped ones included: each becomes one outcome
        sources = file_sources(paths, metadata=metadata, sensitivity=sensitivity)
        return self.ingest_sources(
            library,
            sources,
            options=options,
            total=total,
            progress=progress,
            vectors=vectors,
            embed_progress=embed_progress,
        )

    def ingest_beir(
        self,
        folder: str | Path,
        *,
        library: str,
        max_words: int = ChunkingOptions().max_words,
        progress: Progress | None = None,
        vectors: bool | None = None,
        embed_progress: EmbedProgress | None = None,
    ) -> IngestReport:
        """Ingest a BEIR corpus folder (``corpus.jsonl``); ``_id`` becomes the document id."""
        options = ChunkingOptions(max_words=max_words)
        corpus = beir_corpus(Path(folder))
        total = scan_beir_corpus(corpus)
        sources = beir_sources(corpus)
        return self.ingest_sources(
            library,
            sources,
            options=options,
            total=total,
            progress=progress,
            batch_size=BEIR_BATCH,
            vectors=vectors,
            embed_progress=embed_progress,
        )

    def ingest_sources(
        self,
        library: str,
        sources: Iterable[DocumentSource | DocumentOutcome],
        *,
        options: ChunkingOptions = DEFAULT_CHUNKING,
        total: int | None = None,
        progress: Progress | None = None,
        batch_size: int = 1,
        vectors: bool | None = None,
        embed_progress: EmbedProgress | None = None,
        before_commit: Callable[[], None] | None = None,
    ) -> IngestReport:
        """Write prepared ``sources`` into ``library`` under its write lock (see
        :meth:`~ragspine.narrative.ingest.ingestor.Ingestor.ingest_sources`; ``before_commit``
        makes it one transaction that runs it last)."""
        with self.writing(library):
            return self._ingestor.ingest_sources(
                library,
                sources,
                options=options,
                total=total,
                progress=progress,
                batch_size=batch_size,
                vectors=vectors,
                embed_progress=embed_progress,
                before_commit=before_commit,
            )
