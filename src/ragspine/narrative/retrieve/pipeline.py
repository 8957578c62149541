"""The narrative retrieval path as one pure composition of stages.

question → multi-index retrieval (routing, per-library search, RRF) → chunk records → filter and
visibility re-check → expansion → post-process → final screen → snippets + trace. Search is
expected to push filters and visibility down already; the re-checks here only catch a leaky
backend. What they withhold for visibility is never counted in the trace (a count of hidden
matches is an oracle on hidden text); a re-check that fires is logged as a backend fault.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragspine.narrative.filters.expr import Filter
from ragspine.narrative.retrieve.expansion import (
    Candidate,
    ExpansionMode,
    ParentSection,
    Postprocessor,
    SentenceWindow,
    build_snippets,
    may_see,
    screen_snippets,
)
from ragspine.narrative.retrieve.multi_index import MultiIndexRetriever
from ragspine.narrative.retrieve.snippets import ChunkRecord, Snippet
from ragspine.narrative.retrieve.trace import Trace, TraceBuilder
from ragspine.security import Principal

log = logging.getLogger("ragspine.narrative")


class ChunkSource(Protocol):
    """Where chunk records, parent sections and sentence windows are read from."""

    def get_chunks(self, keys: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], ChunkRecord]:
        """Chunk records by ``(library_id, chunk_id)``; unknown keys are left out."""
        ...

    def get_parents(self, parent_ids: Sequence[str]) -> Mapping[str, ParentSection]:
        """Parent sections by id."""
        ...

    def get_windows(self, chunk_ids: Sequence[str]) -> Mapping[str, SentenceWindow]:
        """Sentence windows by child chunk id."""
        ...


@dataclass(frozen=True, slots=True)
class SnippetResult:
    """Snippets for generation and the trace of how they were found."""

    snippets: tuple[Snippet, ...]
    trace: Trace


def retrieve_snippets(
    question: str,
    *,
    retriever: MultiIndexRetriever,
    source: ChunkSource,
    principal: Principal,
    flt: Filter | None = None,
    top_k: int = 10,
    mode: ExpansionMode = ExpansionMode.PARENT,
    libraries: Sequence[str] | None = None,
    postprocess: Postprocessor | None = None,
) -> SnippetResult:
    """Run the narrative retrieval stages for ``question`` as ``principal``."""
    retrieved = retriever.retrieve(question, top_k=top_k, libraries=libraries)
    builder = TraceBuilder(filter=flt.describe() if flt is not None else None)
    builder.stages.extend(retrieved.trace.stages)
    builder.routing = retrieved.trace.routing

    with builder.timed() as timer:
        keys = [(hit.library_id, hit.chunk_id) for hit in retrieved.hits]
        records = source.get_chunks(keys)
        candidates: list[Candidate] = []
        missing = by_filter = by_visibility = 0
        for hit in retrieved.hits:
            chunk = records.get((hit.library_id, hit.chunk_id))
            if chunk is None or chunk.library_id != hit.library_id:
                missing += 1
            elif not may_see(principal, chunk):
                by_visibility += 1
            elif flt is not None and not flt.matches(chunk.metadata):
                by_filter += 1
            else:
                candidates.append(Candidate(chunk, hit.score))
    if by_visibility:
        log.warning(
            "visibility re-check withheld %d search hits a backend should have hidden",
            by_visibility,
        )
    builder.add_stage(
        "recheck",
        len(retrieved.hits) - by_visibility,
        len(candidates),
        dropped_by_filter=by_filter,
        seconds=timer.seconds,
    )
    if missing:
        builder.note("hits without a stored chunk were skipped")

    with builder.timed() as timer:
        parent_ids = sorted({c.chunk.parent_id for c in candidates if c.chunk.parent_id})
        parents = (
            source.get_parents(parent_ids)
            if mode in (ExpansionMode.PARENT, ExpansionMode.AUTO)
            else {}
        )
        windows = (
            source.get_windows([c.chunk.chunk_id for c in candidates])
            if mode in (ExpansionMode.WINDOW, ExpansionMode.AUTO)
            else {}
        )
        expansion = build_snippets(
            candidates, principal, mode=mode, parents=parents, windows=windows
        )
    if expansion.dropped_children:
        log.warning(
            "expansion withheld %d children the re-check let through", expansion.dropped_children
        )
    builder.add_stage(
        f"expand:{mode.value}", len(candidates), len(expansion.snippets), seconds=timer.seconds
    )

    with builder.timed() as timer:
        processed = (postprocess or Postprocessor())(expansion.snippets)
        final, screened = screen_snippets(processed, principal)
    if screened:
        log.warning("the final screen withheld %d snippets earlier stages let through", screened)
    builder.add_stage("postprocess", len(expansion.snippets), len(final), seconds=timer.seconds)
    return SnippetResult(final, builder.build())
