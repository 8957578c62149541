"""The chunk store seam: libraries, documents, parent sections and chunks, and their row types.

:class:`ChunkStore` is what the narrative channel (ingest, index upkeep, retrieval, the catalog)
asks of a backend; ``ragspine.stores.sqlite.chunks.SQLiteChunkStore`` implements it today. Every
row crossing the seam is a frozen dataclass defined here, so callers never read a tuple by
position and a second backend returns the very same types. The contract every backend must keep
is written once, as tests, in ``tests/stores/contracts/chunk_store.py``.

Levels are :class:`~ragspine.security.Sensitivity` values (or their integers); a reader at
``max_level`` sees the chunks stored at or below it. A chunk is stored at least at its document's
level. Each library carries a ``generation`` that every change bumps, from one workspace-wide
counter, so an index can tell it is stale and a number is never given twice.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ragspine.analysis import routing_term_counts
from ragspine.errors import ConfigError, quote_input
from ragspine.narrative.filters.expr import Filter
from ragspine.security import Sensitivity

_LIBRARY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_library_name(name: str) -> str:
    """``name`` when it is a valid library name, else a :class:`ConfigError` saying what is."""
    if not isinstance(name, str) or not _LIBRARY_NAME.fullmatch(name):
        raise ConfigError(
            f"invalid library name {quote_input(name)}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


@dataclass(frozen=True, slots=True)
class Library:
    """A named collection of documents; the description is used for routing."""

    library_id: str
    description: str
    default_sensitivity: Sensitivity
    created_at: str
    generation: int
    vectors: bool = False
    """Whether the library keeps chunk embeddings (computed at ingest) for vector search."""


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """The stored identity of a document, enough to decide whether re-ingest is a no-op."""

    library_id: str
    doc_id: str
    title: str
    content_hash: str
    fingerprint: str
    sensitivity: Sensitivity
    source: str = ""
    """Where the stored version was read from (a file path, or the BEIR corpus name)."""


@dataclass(frozen=True, slots=True)
class ParentRow:
    """A section to insert: its id, heading, locator and full text."""

    parent_id: str
    heading: str
    locator: dict[str, Any]
    text: str


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """A child chunk to insert, with the title and level it is stored under."""

    chunk_id: str
    ordinal: int
    text: str
    heading: str
    title: str
    locator: dict[str, Any]
    parent_id: str
    window_text: str | None
    content_hash: str
    level: Sensitivity


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A child chunk as stored, with its document's metadata and its parent's locator."""

    key: int
    chunk_id: str
    doc_id: str
    library_id: str
    text: str
    heading: str
    title: str
    source_locator: dict[str, Any]
    parent_id: str
    parent_locator: dict[str, Any]
    window_text: str | None
    metadata: dict[str, Any]
    sensitivity: Sensitivity
    content_hash: str
    section_levels: tuple[tuple[str, int], ...] = ()
    """The document's section levels (heading name, level), for screening names."""


@dataclass(frozen=True, slots=True)
class IndexRow:
    """What the lexical and vector indexes need of one chunk."""

    key: int
    title: str
    heading: str
    text: str
    sensitivity: int


@dataclass(frozen=True, slots=True)
class ChunkIdentity:
    """Where a chunk key belongs: its library, chunk id and document."""

    library_id: str
    chunk_id: str
    doc_id: str


@dataclass(frozen=True, slots=True)
class VisibleCounts:
    """What a reader at one level sees of a library: documents and sections holding a visible
    chunk, the visible chunks, and those chunks per level (levels without chunks absent)."""

    documents: int
    parents: int
    chunks: int
    chunks_by_level: Mapping[Sensitivity, int] = field(default_factory=dict)


ChunkColumn = Literal["parent_id", "doc_id"]
"""The chunk fields :meth:`ChunkStore.chunks_where` selects by."""


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A document to insert with its parents, chunks, metadata and section levels."""

    document: StoredDocument
    source: str
    metadata: dict[str, Any]
    parents: Sequence[ParentRow]
    chunks: Sequence[ChunkRow]
    section_levels: Sequence[tuple[str, int]] = ()


def profile_text(title: str, text: str) -> str:
    """The text a chunk contributes to its library's routing profile (its stored title,
    screened for its level, and its text)."""
    return f"{title}\n{text}"


def profile_rows(documents: Iterable[NewDocument]) -> list[tuple[int, str]]:
    """``(level, profile text)`` of every chunk of ``documents``: what a store counts when it
    inserts them (a chunk is stored at least at its document's level)."""
    return [
        (
            max(int(new.document.sensitivity), int(chunk.level)),
            profile_text(chunk.title, chunk.text),
        )
        for new in documents
        for chunk in new.chunks
    ]


def count_terms(rows: Iterable[tuple[int, str]]) -> dict[int, Counter[str]]:
    """Routing-term counts per sensitivity level of ``(level, text)`` rows."""
    texts: dict[int, list[str]] = {}
    for level, text in rows:
        texts.setdefault(int(level), []).append(text)
    return {level: routing_term_counts(group) for level, group in texts.items()}


class ChunkStore(Protocol):
    """Libraries, documents, parents and chunks of one workspace.

    Writes that must land together run inside :meth:`transaction`; a store shared between
    threads keeps each thread's transaction to that thread.
    """

    def close(self) -> None:
        """Release the store's connections."""

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write: everything the calling thread writes inside commits together or,
        when the block raises, not at all."""

    # libraries ---------------------------------------------------------------------------------

    def create_library(
        self,
        name: str,
        *,
        description: str = "",
        default_sensitivity: str | Sensitivity = "public",
        vectors: bool = False,
    ) -> Library:
        """Register a new library (:class:`ConfigError` for a bad or used name)."""

    def set_vectors(self, name: str, vectors: bool) -> Library:
        """Turn a library's vector search on or off."""

    def library(self, name: str) -> Library:
        """The library called ``name``; a :class:`QueryError` listing the known ones if none."""

    def library_names(self) -> list[str]:
        """Names of every library, sorted."""

    def all_libraries(self) -> list[Library]:
        """Every library's settings, sorted by name."""

    def generation(self, library_id: str) -> int:
        """The library's change counter (0 for an unknown library)."""

    def bump_generation(self, library_id: str) -> int:
        """Advance the library's generation past every number given before, in this workspace,
        to any library (call inside the writing transaction); returns the new generation."""

    def delete_library(self, library_id: str) -> int:
        """Remove a library with everything it holds, atomically; returns its document count."""

    # documents ---------------------------------------------------------------------------------

    def document(self, library_id: str, doc_id: str) -> StoredDocument | None:
        """The stored document, or ``None`` when it was never ingested."""

    def chunk_keys(self, library_id: str, doc_id: str) -> list[int]:
        """Integer keys of a document's chunks, ascending."""

    def delete_document(self, library_id: str, doc_id: str) -> list[int]:
        """Remove a document with its parents and chunks; returns the removed chunk keys."""

    def insert_document(
        self,
        document: StoredDocument,
        *,
        source: str,
        metadata: dict[str, Any],
        parents: Sequence[ParentRow],
        chunks: Sequence[ChunkRow],
        section_levels: Sequence[tuple[str, int]] = (),
    ) -> list[int]:
        """Insert a document with its parents and chunks (each chunk at least at the document's
        level); returns new chunk keys, in chunk order, never used before in this store."""

    def insert_documents(
        self,
        documents: Sequence[NewDocument],
        *,
        term_counts: Mapping[int, Counter[str]] | None = None,
    ) -> list[list[int]]:
        """Insert several documents (distinct ids, none stored yet) as :meth:`insert_document`
        would one by one, in fewer round trips; returns each one's new chunk keys.

        ``term_counts``, when given, are ``count_terms(profile_rows(documents))`` computed by the
        caller (the documents must then share one library); otherwise the store counts."""

    def documents(self, library_id: str, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """The stored documents among ``doc_ids`` (ids never ingested are absent)."""

    # reading chunks ----------------------------------------------------------------------------

    def index_rows(self, library_id: str) -> Iterator[IndexRow]:
        """Every chunk of a library in key order, as the indexes need it."""

    def chunks_by_key(self, keys: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks with the given keys (missing keys are absent)."""

    def filtered_keys(self, library_id: str, flt: Filter) -> list[int]:
        """Keys of the library's chunks whose document metadata ``flt`` matches: exactly those
        for which :meth:`Filter.matches` is true."""

    def term_counts(self, library_id: str, max_level: int) -> dict[str, int]:
        """How often each analysed term occurs in the library's chunks (stored title and text)
        at or below ``max_level``; terms that do not occur are absent."""

    def chunks_where(self, column: ChunkColumn, values: Sequence[str]) -> list[StoredChunk]:
        """Chunks whose ``parent_id`` or ``doc_id`` is one of ``values``, in document order."""

    def chunk_ids(self, keys: Sequence[int]) -> dict[int, ChunkIdentity]:
        """Library, chunk id and document of the given keys (missing keys absent)."""

    def keys_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Integer keys of the given chunk ids (unknown ids absent)."""

    def has_chunks(self, library_id: str, max_level: int) -> bool:
        """Whether the library holds a chunk at or below ``max_level``."""

    def visible_counts(self, library_id: str, max_level: int) -> VisibleCounts:
        """What a reader at ``max_level`` sees of the library."""


def stored_chunks(rows: Iterable[Sequence[Any]]) -> dict[int, StoredChunk]:
    """Chunk rows as stored chunks by key, in row order. Each row holds, in order: chunk key,
    chunk id, doc id, library id, text, heading, title, source locator (JSON), parent id, parent
    locator (JSON), window text, document metadata (JSON), level, content hash and the
    document's section levels (JSON); both backends select these columns."""
    shared: dict[str, Any] = {}  # metadata and parent locators repeat across chunks

    def decode_shared(raw: str) -> Any:
        if raw not in shared:
            shared[raw] = json.loads(raw)
        return shared[raw]

    def decode_levels(raw: str) -> tuple[tuple[str, int], ...]:
        return tuple((str(name), int(level)) for name, level in decode_shared(raw))

    return {
        int(row[0]): StoredChunk(
            key=int(row[0]),
            chunk_id=row[1],
            doc_id=row[2],
            library_id=row[3],
            text=row[4],
            heading=row[5],
            title=row[6],
            source_locator=json.loads(row[7]),
            parent_id=row[8],
            parent_locator=decode_shared(row[9]),
            window_text=row[10],
            metadata=decode_shared(row[11]),
            sensitivity=Sensitivity(int(row[12])),
            content_hash=row[13],
            section_levels=decode_levels(row[14]),
        )
        for row in rows
    }
