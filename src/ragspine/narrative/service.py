"""The narrative channel of one workspace: libraries, ingest and search behind one object."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ragspine.errors import QueryError, quote_input
from ragspine.locks import write_lock
from ragspine.narrative import catalog
from ragspine.narrative.catalog import LibrarySummary
from ragspine.narrative.filters.expr import parse_filter
from ragspine.narrative.filters.extraction import extract_filter
from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
from ragspine.narrative.index.vector.library_vectors import EmbedProgress, LibraryVectors
from ragspine.narrative.ingest.chunking import ChunkingOptions
from ragspine.narrative.ingest.ingestor import (
    BEIR_BATCH,
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
from ragspine.narrative.retrieve.expansion import Postprocessor
from ragspine.narrative.retrieve.modes import RetrievalMode
from ragspine.narrative.retrieve.postprocess import snippet_postprocessor
from ragspine.narrative.retrieve.retriever import Retriever, SearchResult
from ragspine.security import PUBLIC, Principal, Sensitivity
from ragspine.stores.chunks import ChunkStore, Library, check_library_name
from ragspine.stores.sqlite.chunks import SQLiteChunkStore


class Narrative:
    """Libraries, documents, lexical and vector search stored in one workspace.

    Every change to a library runs under that library's write lock (one writer at a time,
    across threads and processes); searches take no lock and read the last committed state.
    """

    def __init__(self, db_path: Path, index_dir: Path, lock_dir: Path | None = None) -> None:
        self.store: ChunkStore = SQLiteChunkStore(db_path)
        self.indexes = LibraryIndexes(self.store, index_dir)
        self.vectors = LibraryVectors(self.store, index_dir)
        self._lock_dir = lock_dir if lock_dir is not None else index_dir.parent / "locks"
        self._ingestor = Ingestor(self.store, self.indexes, self.vectors)
        self._retriever = Retriever(self.store, self.indexes, self.vectors)

    @contextmanager
    def writing(self, library_id: str) -> Iterator[None]:
        """Hold the write lock of ``library_id`` (waits while another writer holds it)."""
        check_library_name(library_id)
        with write_lock(
            self._lock_dir / f"library-{library_id}.lock", resource=f"library {library_id!r}"
        ):
            yield

    def close(self) -> None:
        """Release the database connection and the embedding cache."""
        self.vectors.close()
        self.store.close()

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
            return self.store.create_library(
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
            library = self.store.set_vectors(name, vectors)
            if vectors:
                self.vectors.refresh(name, progress=progress)
            else:
                self.vectors.drop(name)
            return library

    def reembed(self, name: str, *, progress: EmbedProgress | None = None) -> int:
        """Rebuild a library's vector index with the current embedding model (after a model
        change); returns the number of vectors stored."""
        with self.writing(name):
            return self.vectors.reembed(name, progress=progress)

    def delete_library(self, name: str) -> int:
        """Delete a library with its documents, chunks and indexes; returns how many documents
        it held."""
        with self.writing(name):
            documents = self.store.delete_library(name)
            self.indexes.drop(name)
            self.vectors.drop(name)
            return documents

    def delete_documents(self, library: str, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents (with their parents and chunks) from ``library`` in one transaction
        and update its indexes; returns the ids deleted. An unknown id is an error and
        nothing is deleted."""
        with self.writing(library):
            stored = self.store.library(library)
            missing = [d for d in doc_ids if self.store.document(library, d) is None]
            if missing:
                shown = ", ".join(quote_input(d) for d in missing[:5])
                raise QueryError(
                    f"library {library!r} has no document {shown}; list its documents with "
                    f"'ragspine library describe {library}'"
                )
            since = self.store.generation(library)
            removed: list[int] = []
            with self.store.transaction():
                for doc_id in dict.fromkeys(doc_ids):
                    removed += self.store.delete_document(library, doc_id)
                    self.store.bump_generation(library)
            generation = self.store.generation(library)
            self.indexes.apply(library, removed, (), since=since, generation=generation)
            if stored.vectors:
                self.vectors.apply(library, removed, (), since=since, generation=generation)
            return list(dict.fromkeys(doc_ids))

    def libraries(self, *, principal: Principal = PUBLIC) -> list[LibrarySummary]:
        """The libraries ``principal`` sees, sorted by name, with counts of what they may see
        (see :mod:`ragspine.narrative.catalog`)."""
        return catalog.summaries(self.store, principal)

    def describe_library(self, name: str, *, principal: Principal = PUBLIC) -> dict[str, Any]:
        """A library's settings and the counts (documents, parents, chunks, chunks per level)
        of what ``principal`` may see; a library they do not see is an unknown library."""
        return catalog.describe(self.store, name, principal)

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
        return self._ingest(library, sources, options, total, 1, progress, vectors, embed_progress)

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
        return self._ingest(
            library, sources, options, total, BEIR_BATCH, progress, vectors, embed_progress
        )

    def _ingest(
        self,
        library: str,
        sources: Iterable[DocumentSource | DocumentOutcome],
        options: ChunkingOptions,
        total: int,
        batch_size: int,
        progress: Progress | None,
        vectors: bool | None,
        embed_progress: EmbedProgress | None,
    ) -> IngestReport:
        """Write ``sources`` into ``library`` under its write lock."""
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
            )

    def search(
        self,
        question: str,
        *,
        libraries: Sequence[str] | None = None,
        mode: str | RetrievalMode = RetrievalMode.BM25,
        top_k: int = 10,
        filters: object = None,
        principal: Principal = PUBLIC,
        route: bool = True,
        vocabularies: Mapping[str, Mapping[str, Any]] | None = None,
        lexical_weight: float = 1.0,
        vector_weight: float = 1.0,
        near_duplicates: float | None = None,
        diversity: float | None = None,
    ) -> SearchResult:
        """Search the narrative channel; filtered-out and invisible chunks never take a slot.

        ``vocabularies`` (field -> alias -> value) turns aliases named in the question into
        filter conditions (see :func:`~ragspine.narrative.filters.extraction.extract_filter`).
        ``lexical_weight`` / ``vector_weight`` weigh the channels of ``hybrid`` fusion.
        ``near_duplicates`` (a Jaccard threshold in (0, 1]) drops snippets nearly identical to
        a better one; ``diversity`` (0..1) reorders by MMR. Both are off by default.
        """
        flt = parse_filter(filters) if filters is not None else None
        extracted = None
        if vocabularies is not None:
            extracted = extract_filter(question, vocabularies).filter
        return self._retriever.search(
            question,
            libraries=libraries,
            mode=mode,
            top_k=top_k,
            flt=flt,
            extracted=extracted,
            principal=principal,
            route=route,
            lexical_weight=lexical_weight,
            vector_weight=vector_weight,
            postprocess=_postprocessor(near_duplicates, diversity),
        )


def _postprocessor(near_duplicates: float | None, diversity: float | None) -> Postprocessor | None:
    """The post-fusion stage for the given options (None: the default, de-duplication only)."""
    if near_duplicates is None and diversity is None:
        return None
    return snippet_postprocessor(near_duplicates=near_duplicates, diversity=diversity)
