"""The narrative channel of one workspace: libraries, ingest and search behind one object."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragspine.narrative.chunk_store import ChunkStore, Library
from ragspine.narrative.chunking import ChunkingOptions
from ragspine.narrative.filter_extraction import extract_filter
from ragspine.narrative.filters import parse_filter
from ragspine.narrative.indexes import LibraryIndexes
from ragspine.narrative.ingest import (
    BEIR_BATCH,
    Ingestor,
    IngestReport,
    Progress,
    beir_corpus,
    beir_sources,
    file_sources,
)
from ragspine.narrative.loaders import iter_document_files
from ragspine.narrative.modes import RetrievalMode
from ragspine.narrative.retriever import Retriever, SearchResult
from ragspine.security import PUBLIC, Principal, Sensitivity


class Narrative:
    """Libraries, documents and lexical search stored in one workspace."""

    def __init__(self, db_path: Path, index_dir: Path) -> None:
        self.store = ChunkStore(db_path)
        self.indexes = LibraryIndexes(self.store, index_dir)
        self._ingestor = Ingestor(self.store, self.indexes)
        self._retriever = Retriever(self.store, self.indexes)

    def close(self) -> None:
        """Release the database connection."""
        self.store.close()

    def create_library(
        self, name: str, *, description: str = "", default_sensitivity: str | Sensitivity = "public"
    ) -> Library:
        """Register a library with a routing description and a default sensitivity."""
        return self.store.create_library(
            name, description=description, default_sensitivity=default_sensitivity
        )

    def libraries(self) -> list[Library]:
        """Every library, sorted by name."""
        return self.store.libraries()

    def describe_library(self, name: str) -> dict[str, Any]:
        """A library's settings and counts (documents, parents, chunks per sensitivity)."""
        library = self.store.library(name)
        return {
            "library_id": library.library_id,
            "description": library.description,
            "default_sensitivity": library.default_sensitivity.label,
            "created_at": library.created_at,
            "generation": library.generation,
            **self.store.counts(name),
        }

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
    ) -> IngestReport:
        """Ingest files and folders of documents; each document lands fully or not at all."""
        options = ChunkingOptions(max_words=max_words, window=window)
        total = sum(
            sum(1 for _ in iter_document_files(Path(root))) if Path(root).exists() else 1
            for root in paths
        )
        sources = file_sources(paths, metadata=metadata, sensitivity=sensitivity)
        return self._ingestor.ingest_sources(
            library, sources, options=options, total=total, progress=progress
        )

    def ingest_beir(
        self,
        folder: str | Path,
        *,
        library: str,
        max_words: int = ChunkingOptions().max_words,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest a BEIR corpus folder (``corpus.jsonl``); ``_id`` becomes the document id."""
        options = ChunkingOptions(max_words=max_words)
        corpus = beir_corpus(Path(folder))
        with corpus.open("rb") as lines:
            total = sum(1 for line in lines if line.strip())
        sources = beir_sources(corpus)
        return self._ingestor.ingest_sources(
            library,
            sources,
            options=options,
            total=total,
            progress=progress,
            batch_size=BEIR_BATCH,
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
    ) -> SearchResult:
        """Search the narrative channel; filtered-out and invisible chunks never take a slot.

        ``vocabularies`` (field -> alias -> value) turns aliases named in the question into
        filter conditions (see :func:`~ragspine.narrative.filter_extraction.extract_filter`).
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
        )
