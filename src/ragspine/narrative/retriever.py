"""The narrative search pipeline, one stage per function.

``resolve_libraries`` -> ``search_library`` (per library, visibility pushed into the index) ->
``fuse_candidates`` (score merge; RRF comes with vector search) -> ``build_snippets`` (security
screen, then snippet construction). Part 2 adds filters, routing, fusion and expansion between
these stages.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ragspine.errors import QueryError
from ragspine.narrative.chunk_store import ChunkStore
from ragspine.narrative.indexes import LibraryIndexes
from ragspine.narrative.modes import ModePlan, RetrievalMode, plan_for
from ragspine.security import PUBLIC, Principal, max_visible_level, visible

MAX_TOP_K = 10_000


@dataclass(frozen=True, slots=True)
class Snippet:
    """One retrieved child chunk; citations point at ``chunk_id`` and ``source_locator``."""

    text: str
    chunk_id: str
    doc_id: str
    source_locator: dict[str, Any]
    library_id: str
    score: float
    prompt_text: str
    parent_locator: dict[str, Any]
    heading: str = ""
    title: str = ""


@dataclass(frozen=True, slots=True)
class SearchTrace:
    """Counts and timings (milliseconds) of one search, stage by stage."""

    mode: RetrievalMode
    libraries: tuple[str, ...]
    max_level: int
    candidates: int
    screened_out: int
    rebuilt_indexes: tuple[str, ...]
    timings_ms: tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Snippets best first, and a trace of how they were found."""

    question: str
    snippets: tuple[Snippet, ...]
    trace: SearchTrace


@dataclass(frozen=True, slots=True)
class Candidate:
    """A chunk key that matched in one library, with its BM25 score."""

    library_id: str
    key: int
    score: float


def resolve_libraries(store: ChunkStore, libraries: Sequence[str] | None) -> tuple[str, ...]:
    """The libraries to search: the named ones (all must exist), else every library."""
    known = store.library_names()
    if libraries is None or len(libraries) == 0:
        return tuple(known)
    unknown = [name for name in libraries if name not in known]
    if unknown:
        raise QueryError(
            f"unknown library {unknown[0]!r}: known libraries are {', '.join(known) or 'none'}"
        )
    return tuple(dict.fromkeys(libraries))


def search_library(
    indexes: LibraryIndexes,
    library_id: str,
    question: str,
    plan: ModePlan,
    pool: int,
    *,
    max_level: int,
    allowed: Collection[int] | None = None,
) -> list[Candidate]:
    """BM25 candidates of one library; only chunks at or below ``max_level`` can be returned."""
    index = indexes.get(library_id, plan.fields)
    hits = index.search(question, pool, max_level=max_level, allowed=allowed)
    return [Candidate(library_id, key, score) for key, score in hits]


def fuse_candidates(per_library: Sequence[Sequence[Candidate]], top_k: int) -> list[Candidate]:
    """Merge per-library lists by score (ties by library then key) and keep ``top_k``."""
    merged = [candidate for candidates in per_library for candidate in candidates]
    merged.sort(key=lambda c: (-c.score, c.library_id, c.key))
    return merged[:top_k]


def build_snippets(
    store: ChunkStore, candidates: Sequence[Candidate], principal: Principal
) -> tuple[tuple[Snippet, ...], int]:
    """Screen candidates through the security boundary and build snippets, keeping order.

    Returns the snippets and how many candidates the screen dropped (zero when the index
    already applied visibility, as it should).
    """
    chunks = store.chunks_by_key([c.key for c in candidates])
    snippets = []
    dropped = 0
    for candidate in candidates:
        chunk = chunks.get(candidate.key)
        if chunk is None or not visible(principal, chunk.sensitivity):
            dropped += 1
            continue
        snippets.append(
            Snippet(
                text=chunk.text,
                chunk_id=chunk.chunk_id,
                doc_id=chunk.doc_id,
                source_locator=chunk.source_locator,
                library_id=chunk.library_id,
                score=candidate.score,
                prompt_text=chunk.text,
                parent_locator=chunk.parent_locator,
                heading=chunk.heading,
                title=chunk.title,
            )
        )
    return tuple(snippets), dropped


class Retriever:
    """Runs the stage pipeline for one workspace's chunk store and indexes."""

    def __init__(self, store: ChunkStore, indexes: LibraryIndexes) -> None:
        self._store = store
        self._indexes = indexes

    def search(
        self,
        question: str,
        *,
        libraries: Sequence[str] | None = None,
        mode: str | RetrievalMode = RetrievalMode.BM25,
        top_k: int = 10,
        principal: Principal = PUBLIC,
    ) -> SearchResult:
        """Search the given libraries (default: all) for ``question``."""
        plan = plan_for(mode)
        if not 1 <= top_k <= MAX_TOP_K:
            raise QueryError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
        timings: list[tuple[str, float]] = []
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings.append((stage, round((now - clock) * 1000, 3)))
            clock = now

        rebuilt_before = len(self._indexes.rebuilt)
        names = resolve_libraries(self._store, libraries)
        max_level = int(max_visible_level(principal))
        lap("resolve")
        pool = plan.pool(top_k)
        per_library = [
            search_library(self._indexes, name, question, plan, pool, max_level=max_level)
            for name in names
        ]
        lap("lexical")
        fused = fuse_candidates(per_library, top_k)
        lap("fuse")
        snippets, dropped = build_snippets(self._store, fused, principal)
        lap("snippets")
        trace = SearchTrace(
            mode=plan.mode,
            libraries=names,
            max_level=max_level,
            candidates=sum(len(c) for c in per_library),
            screened_out=dropped,
            rebuilt_indexes=tuple(self._indexes.rebuilt[rebuilt_before:]),
            timings_ms=tuple(timings),
        )
        return SearchResult(question, snippets, trace)
