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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ragspine.errors import ConfigError
from ragspine.narrative.catalog import check_libraries, description_for, visible_libraries
from ragspine.narrative.filters.expr import Filter, all_of
from ragspine.narrative.filters.extraction import extract_filter
from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
from ragspine.narrative.index.vector.library_vectors import LibraryVectors
from ragspine.narrative.retrieve.chunk_source import StoreChunkSource
from ragspine.narrative.retrieve.expansion import ExpansionMode
from ragspine.narrative.retrieve.fusion import fuse_keyed
from ragspine.narrative.retrieve.modes import ModePlan, RetrievalMode, plan_for
from ragspine.narrative.retrieve.multi_index import LibrarySearchResult, MultiIndexRetriever
from ragspine.narrative.retrieve.options import SearchOptions
from ragspine.narrative.retrieve.pipeline import retrieve_snippets
from ragspine.narrative.retrieve.profile_router import LibraryProfile, ProfileRouter
from ragspine.narrative.retrieve.snippets import LibraryHit, Snippet
from ragspine.narrative.retrieve.trace import Trace
from ragspine.security import PUBLIC, Principal, max_visible_level
from ragspine.stores.chunks import ChunkStore, Library

ROUTERS_KEPT = 4
"""Routers cached at once: one per clearance level that searches (sharing a workspace between
threads, askers of different levels would otherwise rebuild them in turn)."""

FILTER_KEYS_KEPT = 16
"""Filters whose chunk keys are kept per library generation: choosing them in SQL reads every
chunk's document metadata (about 1.7 ms per 1,000 chunks), so a filter repeated across searches
(a fixed facet, a paged listing) is chosen once per library change."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Snippets best first, and a trace of how they were found (counts and names only).

    ``notices`` say, for the person asking, where the search ran differently from its mode:
    ``auto`` searching a library lexically because it keeps no vectors or the embedder is not
    installed (each notice also appears in ``trace.notes``). Empty when nothing fell back.
    """

    question: str
    snippets: tuple[Snippet, ...]
    trace: Trace
    notices: tuple[str, ...] = ()

    def to_dict(self, *, timings: bool = True) -> dict[str, object]:
        """A JSON-ready form (``timings=False`` zeroes the trace timings)."""
        trace = self.trace if timings else self.trace.without_timings()
        return {
            "question": self.question,
            "snippets": [snippet.to_dict() for snippet in self.snippets],
            "notices": list(self.notices),
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
        self._filter_keys: dict[tuple[str, int, str], np.ndarray | None] = {}  # whole too

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

    def filtered_keys(self, library_id: str, flt: Filter) -> np.ndarray | None:
        """Keys of the library's chunks whose document metadata matches ``flt``, whatever their
        level (the searches apply the asker's level), kept until the library changes."""
        generation = self._store.generation(library_id)  # read first: a later write misses
        key = (library_id, generation, repr(flt))  # repr tells 1, 1.0 and True apart
        known = self._filter_keys  # one map throughout: another thread may replace it
        if key in known:
            return known[key]
        found = self._store.filtered_keys(library_id, flt)
        keys = None  # None: a store that does not filter
        if found is not None:  # int64 (8 bytes a key, not a tuple of ints), read-only: shared
            keys = np.fromiter(found, dtype=np.int64, count=len(found))
            keys.flags.writeable = False
        kept = {**self._filter_keys, key: keys}
        while len(kept) > FILTER_KEYS_KEPT:  # the oldest go first (stale generations)
            del kept[next(iter(kept))]
        self._filter_keys = kept
        return keys

    def search(
        self,
        question: str,
        options: SearchOptions | None = None,
        *,
        principal: Principal = PUBLIC,
        vocabularies: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> SearchResult:
        """Search for ``question`` as ``principal`` with ``options`` (default
        :class:`SearchOptions`); filtered-out and invisible chunks never take a slot.

        With ``options.extract_filters``, ``vocabularies`` (field -> alias -> value) turns
        aliases named in the question into filter conditions (see
        :func:`~ragspine.narrative.filters.extraction.extract_filter`).
        """
        options = options if options is not None else SearchOptions()
        plan = plan_for(options.mode)
        expansion = options.expansion
        if plan.mode is RetrievalMode.ECONOMY:
            expansion = ExpansionMode.NONE  # economy: the child text alone, nothing read around it
        extracted = None
        if options.extract_filters and vocabularies is not None:
            extracted = extract_filter(question, vocabularies).filter
        seen = visible_libraries(self._store, principal)
        explicit = (
            check_libraries(self._store, options.libraries, principal)
            if options.libraries
            else None
        )
        given = [f for f in (options.filters, extracted) if f is not None]
        combined = all_of(given) if given else None
        dense = _DenseChannel(self._store, self._vectors, plan, question)
        dense.check(seen if explicit is None else [self._store.library(n) for n in explicit])
        call = _LibrarySearch(
            store=self._store,
            filtered_keys=self.filtered_keys,
            indexes=self._indexes,
            plan=plan,
            max_level=int(max_visible_level(principal)),
            flt=combined,
            dense=dense,
            channel_weights=(options.lexical_weight, options.vector_weight),
            rrf_k=options.rrf_k,
        )
        router = self.router(seen, principal) if options.route and not explicit else None
        retriever = MultiIndexRetriever(
            call.search,
            [lib.library_id for lib in seen],
            router=router,
            k=options.rrf_k,
            weights=options.weights,
            candidates_per_library=plan.pool(options.top_k),
        )
        result = retrieve_snippets(
            question,
            retriever=retriever,
            source=StoreChunkSource(self._store, call.row_keys),
            principal=principal,
            flt=combined,
            top_k=options.top_k,
            mode=expansion,
            libraries=explicit,
            postprocess=options.postprocessor(),
        )
        notes = (*call.dense.notes, *result.trace.notes)
        if extracted is not None:
            notes = (f"filter taken from the question: {extracted.describe()}", *notes)
        trace = replace(result.trace, notes=notes, mode=plan.mode.value)
        return SearchResult(question, result.snippets, trace, tuple(call.dense.notices))


@dataclass(slots=True)
class _LibrarySearch:
    """What every library's search shares within one request; :meth:`search` runs one."""

    store: ChunkStore
    filtered_keys: Callable[[str, Filter], np.ndarray | None]
    indexes: LibraryIndexes
    plan: ModePlan
    max_level: int
    flt: Filter | None
    dense: _DenseChannel
    channel_weights: tuple[float, float]
    rrf_k: float
    row_keys: dict[tuple[str, str], int] = field(default_factory=dict)
    """``(library_id, chunk_id)`` -> chunk key, for reading the chunks found."""

    def search(self, library_id: str, question: str, top_k: int) -> LibrarySearchResult:
        """One library's best ``top_k`` hits by mode (BM25, vector, or both fused by RRF): the
        filter (as SQL-chosen keys) and visibility are applied inside each search, before
        top-k."""
        depth = top_k
        store = self.store
        allowed = self.filtered_keys(library_id, self.flt) if self.flt is not None else None
        use_dense = self.dense.use(library_id)
        lists: list[list[tuple[int, float]]] = []
        weights: list[float] = []
        stats: dict[str, int] = {}
        if self.plan.lexical:
            index = self.indexes.get(library_id, self.plan.fields)
            lists.append(
                index.search(
                    question, depth, max_level=self.max_level, allowed=allowed, stats=stats
                )
            )
            weights.append(self.channel_weights[0])
        if use_dense:
            lists.append(self.dense.search(library_id, depth, self.max_level, allowed))
            weights.append(self.channel_weights[1])
        dropped = stats.get("filtered", 0)
        if not lists:
            return LibrarySearchResult((), dropped)
        pairs = lists[0] if len(lists) == 1 else fuse_keyed(lists, k=self.rrf_k, weights=weights)
        pairs = pairs[:depth]
        ids = store.chunk_ids([key for key, _ in pairs])
        hits = []
        for key, score in pairs:
            found = ids.get(key)
            if found is None:
                continue
            self.row_keys[(found.library_id, found.chunk_id)] = key
            hits.append(LibraryHit(found.chunk_id, score, found.library_id, found.doc_id))
        return LibrarySearchResult(hits, dropped)


class _DenseChannel:
    """The vector side of one search: which libraries use it, the query vector (embedded once)
    and the notes saying what ``auto`` / ``hybrid`` decided (``notices``: where ``auto`` fell
    back to lexical, for the asker; ``notes``: every decision, for the trace)."""

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
        self.notices: list[str] = []
        if plan.dense and plan.mode is not RetrievalMode.AUTO and vectors is None:
            raise ConfigError("vector search is not set up for this workspace")

    def check(self, libraries: Sequence[Library]) -> None:
        """Fail before searching when ``vector`` / ``hybrid`` would search a library that keeps
        no vectors (``libraries``: those the request may search, all visible to the asker) or
        the embedder is not installed."""
        if not self._plan.dense or self._plan.mode is RetrievalMode.AUTO:
            return
        without = [lib.library_id for lib in libraries if not lib.vectors]
        if without:
            raise _no_vectors_error(self._plan.mode, without)
        assert self._vectors is not None
        self._vectors.embedder()  # MissingExtraError naming pip install 'ragspine[onnx]'

    def use(self, library_id: str) -> bool:
        """Whether ``library_id`` is searched by vector in this request."""
        if not self._plan.dense:
            return False
        has_vectors = self._store.library(library_id).vectors
        mode = self._plan.mode
        if mode is not RetrievalMode.AUTO:
            if not has_vectors:  # turned off since :meth:`check`
                raise _no_vectors_error(mode, [library_id])
            return True
        if not has_vectors:
            self._fell_back(
                f"auto: library {library_id} keeps no vectors, searched lexical "
                f"(turn them on with `ragspine library vectors {library_id} on`)"
            )
            return False
        if self._installed is None:
            self._installed, self._why = (
                self._vectors.available() if self._vectors else (False, "no embedder set up")
            )
        if not self._installed:
            self._fell_back(f"auto: library {library_id} searched lexical ({self._why})")
            return False
        self.notes.append(f"auto: {library_id} searched hybrid (lexical + vector)")
        return True

    def _fell_back(self, notice: str) -> None:
        self.notices.append(notice)
        self.notes.append(notice)

    def search(
        self, library_id: str, depth: int, max_level: int, allowed: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """The library's vector hits, restricted to ``allowed`` and ``max_level`` before top-k."""
        assert self._vectors is not None
        index = self._vectors.get(library_id)
        if self._query is None:
            self._query = self._vectors.embed_query(self._question)
        return index.search(self._query, depth, max_level=max_level, allowed=allowed)


def _no_vectors_error(mode: RetrievalMode, library_ids: Sequence[str]) -> ConfigError:
    """The error for ``vector`` / ``hybrid`` over libraries that keep no vectors."""
    names = ", ".join(repr(name) for name in library_ids)
    first = library_ids[0]
    plural = "libraries" if len(library_ids) > 1 else "library"
    keeps = "keep" if len(library_ids) > 1 else "keeps"
    return ConfigError(
        f"mode {mode.value!r} needs vectors, and {plural} {names} {keeps} none: turn them on "
        f"with `ragspine library vectors {first} on`, name libraries that keep vectors, "
        "or use mode 'auto' (lexical where there are none)"
    )
