"""The narrative search pipeline of a workspace, wired onto the chunk store and lexical indexes.

question -> filter (parsed, optionally extended from the question) -> routing (a
:class:`~ragspine.narrative.library_profile.ProfileRouter` over each library's visible term
statistics; named libraries bypass it) -> per-library BM25 with the filter (as chunk keys chosen
in SQL) and the visibility limit applied before top-k -> RRF fusion over libraries -> re-check,
expansion and post-process (:func:`ragspine.narrative.pipeline.retrieve_snippets`) -> snippets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ragspine.errors import QueryError
from ragspine.narrative.chunk_source import StoreChunkSource
from ragspine.narrative.chunk_store import ChunkStore
from ragspine.narrative.expansion import ExpansionMode, Postprocessor
from ragspine.narrative.filters import Filter, all_of
from ragspine.narrative.fusion import DEFAULT_RRF_K
from ragspine.narrative.indexes import LibraryIndexes
from ragspine.narrative.library_profile import ProfileRouter
from ragspine.narrative.modes import ModePlan, RetrievalMode, plan_for
from ragspine.narrative.multi_index import MultiIndexRetriever
from ragspine.narrative.pipeline import retrieve_snippets
from ragspine.narrative.snippets import Hit, Snippet
from ragspine.narrative.trace import Trace
from ragspine.security import PUBLIC, Principal, max_visible_level

MAX_TOP_K = 10_000


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


@dataclass(slots=True)
class _Pushdown:
    """What one library's search excluded before top-k (counts of matching chunks)."""

    by_filter: int = 0
    by_visibility: int = 0


def check_libraries(store: ChunkStore, libraries: Sequence[str]) -> tuple[str, ...]:
    """The named libraries, deduplicated; an unknown one is an error listing the known ones."""
    known = store.library_names()
    unknown = [name for name in libraries if name not in known]
    if unknown:
        raise QueryError(
            f"unknown library {unknown[0]!r}: known libraries are {', '.join(known) or 'none'}"
        )
    return tuple(dict.fromkeys(libraries))


class Retriever:
    """Runs the narrative pipeline for one workspace's chunk store and indexes."""

    def __init__(self, store: ChunkStore, indexes: LibraryIndexes) -> None:
        self._store = store
        self._indexes = indexes
        self._routers: dict[tuple[object, ...], ProfileRouter] = {}

    def router(self, names: Sequence[str], max_level: int) -> ProfileRouter:
        """A profile router over ``names`` built from text at or below ``max_level`` (cached
        until a library changes)."""
        states = self._store.library_states()
        key = (max_level, *((name, *states[name]) for name in names))
        router = self._routers.get(key)
        if router is None:
            router = ProfileRouter(
                [self._store.profile(name, max_level) for name in names],
                descriptions={name: states[name][1] for name in names},
            )
            self._routers = {key: router}
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
    ) -> SearchResult:
        """Search ``libraries`` (default: the routed ones) for ``question`` as ``principal``."""
        plan = plan_for(mode)
        if plan.mode is RetrievalMode.ECONOMY:
            expansion = ExpansionMode.NONE  # economy: the child text alone, nothing read around it
        if isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
            raise QueryError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k!r}")
        explicit = check_libraries(self._store, libraries) if libraries else None
        registered = self._store.library_names()
        max_level = int(max_visible_level(principal))
        given = [f for f in (flt, extracted) if f is not None]
        combined = all_of(given) if given else None
        rebuilt_before = len(self._indexes.rebuilt)
        row_keys: dict[tuple[str, str], int] = {}
        pushdown: dict[str, _Pushdown] = {}

        def search_one(library_id: str, question: str, top_k: int) -> list[Hit]:
            return self._search_library(
                library_id, question, plan, top_k, max_level, combined, row_keys, pushdown
            )

        router = self.router(registered, max_level) if route and not explicit else None
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
            replace(
                stage,
                dropped_by_filter=pushdown[stage.name[7:]].by_filter,
                dropped_by_visibility=pushdown[stage.name[7:]].by_visibility,
            )
            if stage.name.startswith("search:") and stage.name[7:] in pushdown
            else stage
            for stage in result.trace.stages
        )
        notes = result.trace.notes
        if extracted is not None:
            notes = (f"filter taken from the question: {extracted.describe()}", *notes)
        trace = replace(
            result.trace,
            stages=stages,
            notes=notes,
            mode=plan.mode.value,
            rebuilt_indexes=tuple(self._indexes.rebuilt[rebuilt_before:]),
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
        pushdown: dict[str, _Pushdown],
    ) -> list[Hit]:
        """One library's BM25 hits: filter (as SQL-chosen keys) and visibility before top-k."""
        index = self._indexes.get(library_id, plan.fields)
        allowed = self._store.filtered_keys(library_id, flt) if flt is not None else None
        stats: dict[str, int] = {}
        pairs = index.search(question, depth, max_level=max_level, allowed=allowed, stats=stats)
        pushdown[library_id] = _Pushdown(stats.get("filtered", 0), stats.get("hidden", 0))
        ids = self._store.chunk_ids([key for key, _ in pairs])
        hits = []
        for key, score in pairs:
            found = ids.get(key)
            if found is None:
                continue
            owner, chunk_id, doc_id = found
            row_keys[(owner, chunk_id)] = key
            hits.append(Hit(chunk_id, score, owner, doc_id))
        return hits
