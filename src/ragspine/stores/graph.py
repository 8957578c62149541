"""The relation-store seam: every backend implements :class:`RelationStore`.

Edges of the relation graph (:mod:`ragspine.graph.relations`) with adjacency by source and by
target. A backend opened beside the chunk store (``SQLiteBackend.open_relations(chunks)``) writes
inside the chunk store's transaction, so a document's edges land, change and go with its chunks.
The contract every backend keeps is written once, as tests, in
``tests/stores/contracts/relation_store.py``.

``max_level`` is the highest sensitivity the asker may see
(:func:`ragspine.security.max_visible_level`); a store applies it in its own query, and the
caller still passes every edge through :func:`ragspine.security.visible` (groups).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from ragspine.graph.relations import (
    Edge,
    EdgeKind,
    EdgeQuery,
    Lineage,
    NewEdge,
    Origin,
    locator_text,
)
from ragspine.security import Sensitivity


class RelationStore(Protocol):
    """Edges by id, by the nodes they join and by the document they were derived from."""

    def close(self) -> None:
        """Release the store's connections (none when they belong to the chunk store)."""

    def transaction(self) -> AbstractContextManager[None]:
        """One atomic write; inside a transaction already open on the same connection (the
        chunk store's), it joins that one."""

    def add_edges(self, edges: Sequence[NewEdge]) -> int:
        """Store ``edges``; returns how many were new. An edge whose id is stored already is
        kept as it is (a verified edge stays verified). Restricted edges are never stored, and
        a model-derived edge is stored unverified whatever its ``verified`` says."""

    def delete_documents(self, library_id: str, doc_ids: Sequence[str]) -> int:
        """Remove every edge derived from these documents (any origin); returns how many."""

    def delete_library(self, library_id: str, *, origin: Origin | None = None) -> int:
        """Remove every edge derived from the library's documents (of ``origin`` only, when
        given); returns how many."""

    def replace_glossary_edges(self, edges: Sequence[NewEdge], fingerprint: str) -> bool:
        """Replace the edges the glossary declares and remember ``fingerprint``, atomically;
        returns whether anything changed (the same fingerprint changes nothing)."""

    def glossary_fingerprint(self) -> str:
        """The fingerprint stored with the glossary edges ("" when none were stored)."""

    def edges(self, query: EdgeQuery, *, max_level: int) -> list[Edge]:
        """Edges ``query`` matches of sensitivity at most ``max_level``, ordered by
        (kind, source, target, edge id)."""

    def edge(self, edge_id: str, *, max_level: int) -> Edge | None:
        """The edge with this id if its sensitivity is at most ``max_level``, else ``None``."""

    def verify(self, edge_id: str, *, by: str, at: str) -> Edge | None:
        """Mark an edge verified by ``by`` at ``at`` (an edge verified already keeps who and
        when); ``None`` for an unknown id."""

    def count(self) -> int:
        """Number of stored edges (for upkeep and tests; never shown to an asker)."""


def edge_row(edge: NewEdge) -> tuple[Any, ...]:
    """The stored columns of a new edge, in the tables' column order (both backends)."""
    lineage = edge.lineage
    return (
        edge.edge_id,
        edge.kind.value,
        edge.source,
        edge.target,
        edge.origin.value,
        bool(edge.stored_verified),
        int(edge.sensitivity),
        json.dumps(sorted(edge.groups)),
        lineage.library_id,
        lineage.doc_id,
        lineage.chunk_id,
        lineage.run_id,
        locator_text(lineage.locator),
        int(edge.weight),
        datetime.now(UTC).isoformat(timespec="seconds"),
    )


def edge_from_row(row: Sequence[Any]) -> Edge:
    """An edge from its stored columns (both backends)."""
    (
        edge_id, kind, source, target, origin, verified, verified_by, verified_at, level,
        groups, library_id, doc_id, chunk_id, run_id, locator, weight,
    ) = row  # fmt: skip
    return Edge(
        edge_id,
        source,
        target,
        EdgeKind(kind),
        Origin(origin),
        bool(verified),
        Lineage(library_id, doc_id, chunk_id, run_id, json.loads(locator)),
        Sensitivity(int(level)),
        frozenset(json.loads(groups)),
        int(weight),
        verified_by,
        verified_at,
    )


def edge_conditions(query: EdgeQuery, max_level: int, mark: str) -> tuple[str, list[Any]]:
    """The SQL condition and parameters of ``query``'s kind, origin and verification at or
    below ``max_level``; ``mark`` is the backend's parameter mark (``?`` or ``%s``)."""
    clauses: list[str] = [f"sensitivity <= {mark}"]
    params: list[Any] = [max_level]
    for column, wanted in (
        ("kind", None if query.kind is None else query.kind.value),
        ("origin", None if query.origin is None else query.origin.value),
        ("verified", None if query.verified is None else bool(query.verified)),
    ):
        if wanted is not None:
            clauses.append(f"{column} = {mark}")
            params.append(wanted)
    return " AND ".join(clauses), params
