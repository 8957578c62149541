"""The narrative search pipeline of a workspace, wired onto the chunk store and lexical indexes.

question -> filter (parsed, optionally extended from the question) -> the libraries the asker
sees (:mod:`ragspine.narrative.catalog`; the others are never named, routed to or searched) ->
routing (a :class:`~ragspine.narrative.retrieve.profile_router.ProfileRouter` over each library's
visible term statistics and the descriptions the asker may see; named libraries bypass it) ->
per-library BM25 and/or vector search (by mode) with the filter (as chunk keys chosen in SQL) and
the visibility limit applied inside each search, before top-k and before any statistic; in
``hybrid`` the two channels are fused per library by weighted RRF -> RRF fusion over libraries
-> re-check, expansion and post-process
(:func:`ragspine.narrative.retrieve.pipeline.retrieve_snippets`) -> snippets. Trace counts
cover only what the asker may see (contract 11).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.catalog import check_libraries, description_for, visible_libraries
from ragspine.narrative.filters.expr import Filter, all_of
from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
from ragspine.narrative.index.vector.library_vectors import LibraryVectors
from ragspine.narrative.retrieve.chunk_source import StoreChunkSource
from ragspine.narrative.retrieve.expansion import ExpansionMode, Postprocessor
from ragspine.narrative.retrieve.fusion import DEFAULT_RRF_K, fuse_keyed
from ragspine.narrative.retrieve.modes import ModePlan, RetrievalMode, plan_for
from ragspine.narrative.retrieve.multi_index import MultiIndexRetriever
from ragspine.narrative.retrieve.pipeline import retrieve_snippets
from ragspine.narrative.retrieve.profile_router import LibraryProfile, ProfileRouter
from ragspine.narrative.retrieve.snippets import Hit, Snippet
from ragspine.narrative.retrieve.trace import Trace
from ragspine.security import PUBLIC, Principal, max_visible_level
from ragspine.stores.chunks import ChunkStore, Library

MAX_TOP_K = 10_000
ROUTERS_KEPT = 4
"""Routers cached at once: one per clearance level that searches (sharing a workspace between
threads, askers of different levels would otherwise rebuild them in turn)."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Snippets best first, and a trace of how they were found (counts and names only)."""

    question: str
    snippets: tuple[Snippet, ...]
    trace: Trace

    def to_dict(self, *, timings: bool = True) -> dict[str, object]:
        """A JSON-ready form (``timings=False`` zeroes the trace timings)."""
        trace = self.trace if timings else self.trace.without_timings()
        return {
            "question": self.question,
            "snippets": [snippet.to_dict() for snippet in self.snippets],
            "trace": trace.to_dict(),
        }


class Retriever:
    """Runs the narrative pipeline for one workspace's chunk store and indexes."""

    def __init__(
        self, store: ChunkStore, indexes: LibraryIndexes, vectors: LibraryVectors | None = None
    ) -> None:
        self._store = store
        self._indexes = indexes
        self._vectors = vectors
        # Replaced whole, never changed in place, so a search on another thread sees the old
        # map or the new one; a router is built whole and never changes after.
        self._routers: dict[tuple[object, ...], ProfileRouter] = {}

    def router(self, libraries: Sequence[Library], principal: Principal) -> ProfileRouter:
        """A profile router over ``libraries`` built from the text and descriptions
        ``principal`` may see (cached until a library changes)."""
        max_level = max_visible_level(principal)
        descriptions = {lib.library_id: description_for(lib, principal) for lib in libraries}
        key = (max_level, *((lib.library_id, lib.generation) for lib in libraries))
        key += tuple(sorted(descriptions.items()))
        router = self._routers.get(key)
        if router is None:
            store = self._store
            router = ProfileRouter(
                [LibraryProfile.stored(store, lib.library_id, max_level) for lib in libraries],
                descriptions=descriptions,
            )
            routers = {**self._routers, key: router}
            while len(routers) > ROUTERS_KEPT:  # the oldest go first (stale generations)
                del routers[next(iter(routers))]
            self._routers = routers
        return router

    def search(
        self,
        question: str,
        *,
        libraries: Sequence[str] | None = None,
        mode: str | RetrievalMode = RetrievalMode.BM25,
        top_k: int = 10,
        flt: Filter | None = None,
        extracted: Filter | None = None,
        principal: Principal = PUBLIC,
        route: bool = True,
        expansion: ExpansionMode = ExpansionMode.AUTO,
        postprocess: Postprocessor | None = None,
        weights: Mapping[str, float] | None = None,
        rrf_k: float = DEFAULT_RRF_K,
        lexical_weight: float = 1.0,
        vector_weight: float = 1.0,
    ) -> SearchResult:
        """Search ``libraries`` (default: the routed ones) for ``question`` as ``principal``.

        ``lexical_weight`` / ``vector_weight`` weigh the two channels in ``hybrid`` (and
        ``auto``) fusion within each library.
        """
        plan = plan_for(mode)
        for name, value in (("lexical_weight", lexical_weight), ("vector_weight", vector_weight)):
            if isinstance(value, bool) or not 0 <= value < float("inf"):
                raise QueryError(f"{name} must be a finite number >= 0, got {value!r}")
        if plan.mode is RetrievalMode.ECONOMY:
            expansion = ExpansionMode.NONE  # economy: the child text alone, nothing read around it
        if isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
            raise QueryError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k!r}")
        seen = visible_libraries(self._store, principal)
        explicit = check_libraries(self._store, libraries, principal) if libraries else None
        registered = [lib.library_id for lib in seen]
        max_level = int(max_visible_level(principal))
        given = [f for f in (flt, extracted) if f is not None]
        combined = all_of(given) if given else None
        row_keys: dict[tuple[str, str], int] = {}
        filtered: dict[str, int] = {}
        dense = _DenseChannel(self._store, self._vectors, plan, question)
        channel_weights = (lexical_weight, vector_weight)

        def search_one(library_id: str, question: str, top_k: int) -> list[Hit]:
            return self._search_library(
                library_id,
                question,
                plan,
                top_k,
                max_level,
                combined,
                row_keys,
                filtered,
                dense,
                channel_weights,
                rrf_k,
            )

        router = self.router(seen, principal) if route and not explicit else None
        retriever = MultiIndexRetriever(
            search_one,
            registered,
            router=router,
            k=rrf_k,
            weights=weights,
            candidates_per_library=plan.pool(top_k),
        )
        result = retrieve_snippets(
            question,
            retriever=retriever,
            source=StoreChunkSource(self._store, row_keys),
            principal=principal,
            flt=combined,
            top_k=top_k,
            mode=expansion,
            libraries=explicit,
            postprocess=postprocess,
        )
        stages = tuple(
            replace(stage, dropped_by_filter=filtered[stage.name[7:]])
            if stage.name.startswith("search:") and stage.name[7:] in filtered
            else stage
            for stage in result.trace.stages
        )
        notes = (*dense.notes, *result.trace.notes)
        if extracted is not None:
            notes = (f"filter taken from the question: {extracted.describe()}", *notes)
        trace = replace(
            result.trace,
            stages=stages,
            notes=notes,
            mode=plan.mode.value,
        )
        return SearchResult(question, result.snippets, trace)

    def _search_library(
        self,
        library_id: str,
        question: str,
        plan: ModePlan,
        depth: int,
        max_level: int,
        flt: Filter | None,
        row_keys: dict[tuple[str, str], int],
        filtered: dict[str, int],
        dense: _DenseChannel,
        channel_weights: tuple[float, float],
        rrf_k: float,
    ) -> list[Hit]:
        """One library's hits by mode (BM25, vector, or both fused by RRF): the filter (as
        SQL-chosen keys) and visibility are applied inside each search, before top-k."""
        allowed = self._store.filtered_keys(library_id, flt) if flt is not None else None
        use_dense = dense.use(library_id)
        lists: list[list[tuple[int, float]]] = []
        weights: list[float] = []
        stats: dict[str, int] = {}
        if plan.lexical:
            index = self._indexes.get(library_id, plan.fields)
            lists.append(
                index.search(question, depth, max_level=max_level, allowed=allowed, stats=stats)
            )
            weights.append(channel_weights[0])
        if use_dense:
            lists.append(dense.search(library_id, depth, max_level, allowed))
            weights.append(channel_weights[1])
        filtered[library_id] = stats.get("filtered", 0)
        if not lists:
            return []
        pairs = lists[0] if len(lists) == 1 else fuse_keyed(lists, k=rrf_k, weights=weights)
        pairs = pairs[:depth]
        ids = self._store.chunk_ids([key for key, _ in pairs])
        hits = []
        for key, score in pairs:
            found = ids.get(key)
            if found is None:
                continue
            row_keys[(found.library_id, found.chunk_id)] = key
            hits.append(Hit(found.chunk_id, score, found.library_id, found.doc_id))
        return hits


class _DenseChannel:
    """The vector side of one search: which libraries use it, the query vector (embedded once)
    and the notes saying what ``auto`` / ``hybrid`` decided."""

    def __init__(
        self, store: ChunkStore, vectors: LibraryVectors | None, plan: ModePlan, question: str
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._plan = plan
        self._question = question
        self._query: Any = None
        self._installed: bool | None = None
        self._why = ""
        self.notes: list[str] = []
        if plan.dense and plan.mode is not RetrievalMode.AUTO:
            if vectors is None:
                raise ConfigError("vector search is not set up for this workspace")
            vectors.embedder()  # MissingExtraError naming pip install 'ragspine[onnx]'

    def use(self, library_id: str) -> bool:
        """Whether ``library_id`` is searched by vector in this request."""
        if not self._plan.dense:
            return False
        has_vectors = self._store.library(library_id).vectors
        mode = self._plan.mode
        if mode is RetrievalMode.VECTOR:
            if not has_vectors:
                raise ConfigError(
                    f"library {library_id!r} keeps no vectors, so mode 'vector' cannot search "
                    f"it: turn them on with `ragspine library vectors {library_id} on`"
                )
            return True
        if not has_vectors:
            self.notes.append(f"{mode.value}: library {library_id} keeps no vectors: lexical")
            return False
        if mode is RetrievalMode.AUTO:
            if self._installed is None:
                self._installed, self._why = (
                    self._vectors.available() if self._vectors else (False, "no embedder set up")
                )
            if not self._installed:
                self.notes.append(f"auto: {library_id} searched lexical ({self._why})")
                return False
            self.notes.append(f"auto: {library_id} searched hybrid (lexical + vector)")
        return True

    def search(
        self, library_id: str, depth: int, max_level: int, allowed: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        """The library's vector hits, restricted to ``allowed`` and ``max_level`` before top-k."""
        assert self._vectors is not None
        index = self._vectors.get(library_id)
        if self._query is None:
            self._query = self._vectors.embed_query(self._question)
        return index.search(self._query, depth, max_level=max_level, allowed=allowed)
