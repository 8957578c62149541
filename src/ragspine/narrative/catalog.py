"""What a principal may know about libraries: which exist, what they say and what they hold.

A library has the sensitivity of its default level. A principal *sees* a library when they may
see that level or at least one of its chunks (every snippet names its library); its name and
settings are shown to whoever sees it. A library a principal does not see behaves exactly like
one that does not exist: it is not listed, searched, routed to or described, and naming it is
the same "unknown library" error, which lists only the libraries the principal sees. Its
description is content at the library's level, shown only to those who may see that level.
Counts (documents, sections, chunks, chunks per level) cover only what the principal may see,
with one entry per level they may see whether or not it holds anything, so nothing about hidden
content shows (contract 11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragspine.errors import QueryError
from ragspine.security import Principal, Sensitivity, max_visible_level, visible
from ragspine.stores.chunks import ChunkStore, Library


@dataclass(frozen=True, slots=True)
class LibrarySummary:
    """A library as one principal may see it: settings and counts of visible content only."""

    library_id: str
    description: str
    default_sensitivity: Sensitivity
    created_at: str
    vectors: bool
    documents: int
    chunks: int


def sees_library(store: ChunkStore, library: Library, principal: Principal) -> bool:
    """Whether ``principal`` may know that ``library`` exists."""
    if visible(principal, library.default_sensitivity):
        return True
    return store.has_chunks(library.library_id, max_visible_level(principal))


def visible_libraries(store: ChunkStore, principal: Principal) -> list[Library]:
    """The libraries ``principal`` sees, sorted by name."""
    return [lib for lib in store.all_libraries() if sees_library(store, lib, principal)]


def check_libraries(
    store: ChunkStore, names: Sequence[str], principal: Principal
) -> tuple[str, ...]:
    """``names`` deduplicated; one ``principal`` does not see is an error listing those it does."""
    known = [lib.library_id for lib in visible_libraries(store, principal)]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise QueryError(
            f"unknown library {unknown[0]!r}: known libraries are {', '.join(known) or 'none'}"
        )
    return tuple(dict.fromkeys(names))


def description_for(library: Library, principal: Principal) -> str:
    """The library's description when ``principal`` may see its default level, else ``""``."""
    return library.description if visible(principal, library.default_sensitivity) else ""


def summaries(store: ChunkStore, principal: Principal) -> list[LibrarySummary]:
    """Every library ``principal`` sees, with counts of what they may see."""
    max_level = max_visible_level(principal)
    result = []
    for library in visible_libraries(store, principal):
        counts = store.visible_counts(library.library_id, max_level)
        result.append(
            LibrarySummary(
                library.library_id,
                description_for(library, principal),
                library.default_sensitivity,
                library.created_at,
                library.vectors,
                counts.documents,
                counts.chunks,
            )
        )
    return result


def describe(store: ChunkStore, name: str, principal: Principal) -> dict[str, Any]:
    """One library's settings and the counts of what ``principal`` may see in it."""
    (name,) = check_libraries(store, [name], principal)
    library = store.library(name)
    max_level = max_visible_level(principal)
    counts = store.visible_counts(name, max_level)
    per_level = {
        f"chunks_{level.label}": counts.chunks_by_level.get(level, 0)
        for level in Sensitivity
        if visible(principal, level)
    }
    return {
        "library_id": library.library_id,
        "description": description_for(library, principal),
        "default_sensitivity": library.default_sensitivity.label,
        "created_at": library.created_at,
        "vectors": library.vectors,
        "documents": counts.documents,
        "parents": counts.parents,
        "chunks": counts.chunks,
        **per_level,
    }
