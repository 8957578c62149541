"""Multi-index retrieval: route, search each library on its own, fuse with RRF."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.retrieve.fusion import DEFAULT_RRF_K, FusedHit, reciprocal_rank_fusion
from ragspine.narrative.retrieve.routing import Router, RoutingDecision, route_libraries
from ragspine.narrative.retrieve.snippets import LibraryHit
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder


@dataclass(frozen=True, slots=True)
class LibrarySearchResult:
    """One library's best hits (best first) and how many matches its metadata filter dropped
    (counted over what the asker may see); the ``search:<library>`` stage records both."""

    hits: Sequence[LibraryHit]
    dropped_by_filter: int = 0


class SearchOne(Protocol):
    """Search one library; return its best hits, best first (a plain sequence of hits, or a
    :class:`LibrarySearchResult` when a filter was applied inside the search)."""

    def __call__(
        self, library_id: str, question: str, top_k: int
    ) -> Sequence[LibraryHit] | LibrarySearchResult: ...


@dataclass(frozen=True, slots=True)
class MultiIndexResult:
    """Fused hits (each tagged with its library), the routing decision and the trace."""

    hits: tuple[FusedHit, ...]
    decision: RoutingDecision
    trace: Trace


class MultiIndexRetriever:
    """Searches the routed libraries independently and fuses their rankings.

    ``libraries`` is the registered library ids in library order (that order breaks fusion ties).
    ``candidates_per_library`` is how many hits each library contributes (default: ``top_k``).
    ``weights`` maps library ids to RRF weights (missing ones weigh 1).
    """

    def __init__(
        self,
        search_one: SearchOne,
        libraries: Sequence[str],
        *,
        router: Router | None = None,
        k: float = DEFAULT_RRF_K,
        weights: Mapping[str, float] | None = None,
        candidates_per_library: int | None = None,
    ) -> None:
        self.libraries = tuple(dict.fromkeys(libraries))
        unknown = sorted(set(weights or {}) - set(self.libraries))
        if unknown:
            raise ConfigError(
                f"weights name unknown libraries {unknown!r}: use ids from {list(self.libraries)!r}"
            )
        if candidates_per_library is not None and candidates_per_library < 1:
            raise ConfigError(
                f"candidates_per_library must be at least 1, got {candidates_per_library!r}"
            )
        reciprocal_rank_fusion([], k=k)  # validates k once, at construction
        self._search_one = search_one
        self.router = router
        self.k = k
        self.weights = dict(weights or {})
        self.candidates_per_library = candidates_per_library

    def retrieve(
        self, question: str, *, top_k: int = 10, libraries: Sequence[str] | None = None
    ) -> MultiIndexResult:
        """The fused top ``top_k`` hits for ``question`` (``libraries`` bypasses the router)."""
        if top_k < 1:
            raise QueryError(f"top_k must be at least 1, got {top_k!r}")
        builder = TraceBuilder()
        with builder.timed() as timer:
            decision = route_libraries(self.router, question, self.libraries, explicit=libraries)
        builder.set_routing(
            decision.libraries, decision.cause, decision.reason, fallback=decision.fallback
        )
        builder.add_stage(
            "route", len(self.libraries), len(decision.libraries), seconds=timer.seconds
        )
        depth = self.candidates_per_library or top_k
        ranked: list[Sequence[LibraryHit]] = []
        for library_id in decision.libraries:
            with builder.timed() as timer:
                found = self._search_one(library_id, question, depth)
            if isinstance(found, LibrarySearchResult):
                hits, dropped = list(found.hits)[:depth], found.dropped_by_filter
            else:
                hits, dropped = list(found)[:depth], 0
            builder.add_stage(
                f"search:{library_id}",
                depth,
                len(hits),
                dropped_by_filter=dropped,
                seconds=timer.seconds,
            )
            ranked.append(hits)
        with builder.timed() as timer:
            fused = reciprocal_rank_fusion(
                ranked,
                k=self.k,
                weights=[self.weights.get(lib, 1.0) for lib in decision.libraries],
                list_order=decision.libraries,
            )[:top_k]
        builder.add_stage(
            "fuse", sum(len(hits) for hits in ranked), len(fused), seconds=timer.seconds
        )
        return MultiIndexResult(tuple(fused), decision, builder.build())
