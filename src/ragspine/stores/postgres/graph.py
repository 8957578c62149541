"""The relation store in PostgreSQL: edges of the relation graph (schema v0002).

The same table as the SQLite store, ``graph_edges``, with adjacency indexes on
``(source, kind)`` and ``(target, kind)`` and an index on the document each edge was derived
from; ``graph_meta`` keeps the fingerprint of the glossary edges. Its writes go through the
database's transaction of the calling thread, so inside the chunk store's transaction they
commit or roll back with the chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ragspine.graph.relations import (
    GLOSSARY_LIBRARY,
    Edge,
    EdgeQuery,
    NewEdge,
    Origin,
)
from ragspine.security import Sensitivity
from ragspine.stores.graph import edge_conditions, edge_from_row, edge_row
from ragspine.stores.postgres.database import Database

_COLUMNS = (
    "edge_id, kind, source, target, origin, verified, verified_by, verified_at, sensitivity, "
    "groups, library_id, doc_id, chunk_id, run_id, locator, weight"
)
_INSERTED = (
    "edge_id, kind, source, target, origin, verified, sensitivity, groups, library_id, doc_id, "
    "chunk_id, run_id, locator, weight, created_at"
)
_INSERTED_TYPES = (
    "text[]", "text[]", "text[]", "text[]", "text[]", "boolean[]", "smallint[]", "text[]",
    "text[]", "text[]", "text[]", "text[]", "text[]", "integer[]", "text[]",
)  # fmt: skip
_GLOSSARY_LOCK = (
    "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':glossary-edges', 0))"
)
"""Serializes the replacers of the glossary's edges; not the glossary write lock (``glossary``):
an import replaces them inside its transaction while it holds that lock on another connection."""


class PostgresRelationStore:
    """The :class:`~ragspine.stores.graph.RelationStore` in the workspace's PostgreSQL
    database; safe to share between threads."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def close(self) -> None:
        """The database (and its pool) belongs to the backend, which closes it."""

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; joins the transaction this thread has open on the database (the
        chunk store's)."""
        with self._db.transaction():
            yield

    def add_edges(self, edges: Sequence[NewEdge]) -> int:
        """Store new edges (restricted ones never; model-derived ones unverified) in one
        statement; an edge whose id is stored already stays as it is."""
        rows = [edge_row(edge) for edge in edges if edge.sensitivity < Sensitivity.RESTRICTED]
        if not rows:
            return 0
        arrays = ", ".join(f"%s::{typ}" for typ in _INSERTED_TYPES)
        columns = [list(column) for column in zip(*rows, strict=True)]
        with self.transaction(), self._db.connection() as conn:
            return conn.execute(
                f"INSERT INTO graph_edges ({_INSERTED}) SELECT * FROM unnest({arrays}) "
                "ON CONFLICT (edge_id) DO NOTHING",
                columns,
            ).rowcount

    def delete_documents(self, library_id: str, doc_ids: Sequence[str]) -> int:
        """Remove the edges derived from these documents."""
        with self.transaction(), self._db.connection() as conn:
            return conn.execute(
                "DELETE FROM graph_edges WHERE library_id = %s AND doc_id = ANY(%s::text[])",
                (library_id, list(dict.fromkeys(doc_ids))),
            ).rowcount

    def delete_library(self, library_id: str, *, origin: Origin | None = None) -> int:
        """Remove the edges derived from the library's documents (of ``origin`` only)."""
        if library_id == GLOSSARY_LIBRARY:
            return 0
        sql, params = "DELETE FROM graph_edges WHERE library_id = %s", [library_id]
        if origin is not None:
            sql += " AND origin = %s"
            params.append(origin.value)
        with self.transaction(), self._db.connection() as conn:
            return conn.execute(sql, params).rowcount

    def replace_glossary_edges(self, edges: Sequence[NewEdge], fingerprint: str) -> bool:
        """Replace the glossary's edges when ``fingerprint`` differs from the stored one;
        replacers serialize on a transaction-level advisory lock."""
        if not self._db.in_transaction and self.glossary_fingerprint() == fingerprint:
            return False  # unchanged: no lock taken
        with self.transaction(), self._db.connection() as conn:
            conn.execute(_GLOSSARY_LOCK)
            if self.glossary_fingerprint() == fingerprint:
                return False
            conn.execute("DELETE FROM graph_edges WHERE library_id = %s", (GLOSSARY_LIBRARY,))
            self.add_edges(edges)
            conn.execute(
                "INSERT INTO graph_meta (key, value) VALUES ('glossary', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (fingerprint,),
            )
        return True

    def glossary_fingerprint(self) -> str:
        with self._db.connection() as conn:
            row = conn.execute("SELECT value FROM graph_meta WHERE key = 'glossary'").fetchone()
        return str(row[0]) if row else ""

    def edges(self, query: EdgeQuery, *, max_level: int) -> list[Edge]:
        """Matching edges at or below ``max_level``, ordered by kind, source, target, id."""
        where, params = edge_conditions(query, max_level, "%s")
        if query.nodes is not None:
            nodes = sorted(set(query.nodes))
            where += " AND (source = ANY(%s::text[]) OR target = ANY(%s::text[]))"
            params += [nodes, nodes]
        with self._db.connection() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM graph_edges WHERE {where}", params)
            edges = [edge_from_row(row) for row in rows]
        return sorted(edges, key=lambda e: (e.kind, e.source, e.target, e.edge_id))

    def edge(self, edge_id: str, *, max_level: int) -> Edge | None:
        with self._db.connection() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM graph_edges WHERE edge_id = %s AND sensitivity <= %s",
                (edge_id, max_level),
            ).fetchone()
        return edge_from_row(row) if row is not None else None

    def verify(self, edge_id: str, *, by: str, at: str) -> Edge | None:
        with self.transaction(), self._db.connection() as conn:
            conn.execute(
                "UPDATE graph_edges SET verified = true, verified_by = %s, verified_at = %s "
                "WHERE edge_id = %s AND NOT verified",
                (by, at, edge_id),
            )
        return self.edge(edge_id, max_level=int(Sensitivity.RESTRICTED))

    def count(self) -> int:
        with self._db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM graph_edges").fetchone()
        return int(row[0]) if row else 0
