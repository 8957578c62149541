"""The relation store: edges of the relation graph in the workspace's SQLite file.

One table, ``graph_edges``, with adjacency indexes on ``(source, kind)`` and ``(target, kind)``
and an index on the document each edge was derived from; ``graph_meta`` keeps the schema
version and the fingerprint of the glossary edges. Opened beside the chunk store it uses the
chunk store's per-thread connections, so its writes inside the chunk store's transaction commit
or roll back with the chunks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ragspine.errors import StoreError
from ragspine.graph.relations import (
    GLOSSARY_LIBRARY,
    Edge,
    EdgeQuery,
    NewEdge,
    Origin,
)
from ragspine.security import Sensitivity
from ragspine.stores.graph import edge_conditions, edge_from_row, edge_row
from ragspine.stores.sqlite.connect import ThreadConnections, connect, has_tables, write_transaction
from ragspine.stores.sqlite.errors import sqlite_error

SCHEMA_VERSION = 1
_TABLES = ("graph_meta", "graph_edges")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_edges (
    edge_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    origin TEXT NOT NULL,
    verified INTEGER NOT NULL,
    verified_by TEXT NOT NULL DEFAULT '',
    verified_at TEXT NOT NULL DEFAULT '',
    sensitivity INTEGER NOT NULL,
    groups TEXT NOT NULL DEFAULT '[]',
    library_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    locator TEXT NOT NULL,
    weight INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graph_edges_source ON graph_edges (source, kind);
CREATE INDEX IF NOT EXISTS graph_edges_target ON graph_edges (target, kind);
CREATE INDEX IF NOT EXISTS graph_edges_document ON graph_edges (library_id, doc_id);
"""
_COLUMNS = (
    "edge_id, kind, source, target, origin, verified, verified_by, verified_at, sensitivity, "
    "groups, library_id, doc_id, chunk_id, run_id, locator, weight"
)
_IN_LIMIT = 400
"""Node ids bound in one ``IN (...)`` list (SQLite caps the parameters of a statement)."""


class SQLiteRelationStore:
    """The :class:`~ragspine.stores.graph.RelationStore` in the workspace's SQLite file.

    ``connections`` shares another store's per-thread connections (the chunk store's, so that
    edges are written in its transactions); that store then owns and closes them.
    """

    def __init__(self, db_path: Path, connections: ThreadConnections | None = None) -> None:
        self._owns = connections is None
        self._connections = connections or ThreadConnections(lambda: connect(db_path))
        try:
            if not has_tables(self._db, _TABLES):  # a reader of a ready store writes nothing
                # The tables and their version row in one transaction: another process opening
                # the store meanwhile sees both or neither.
                self._db.executescript(
                    f"BEGIN IMMEDIATE;\n{_SCHEMA}\nINSERT OR IGNORE INTO graph_meta (key, value) "
                    f"VALUES ('schema_version', '{SCHEMA_VERSION}');\nCOMMIT;"
                )
            row = self._db.execute(
                "SELECT value FROM graph_meta WHERE key = 'schema_version'"
            ).fetchone()
        except sqlite3.Error as exc:
            self.close()
            raise sqlite_error(exc, db_path.parent, name_writers=False) from None
        if row is None or int(row[0]) != SCHEMA_VERSION:
            self.close()
            raise StoreError(
                f"the relation tables in {db_path} have schema version "
                f"{row[0] if row else 'none'}, this version of RAGSpine reads {SCHEMA_VERSION}: "
                "upgrade RAGSpine, or ingest again into a new workspace"
            )

    @property
    def _db(self) -> sqlite3.Connection:
        return self._connections.get()

    def close(self) -> None:
        """Close the connections this store opened (shared ones are their owner's to close)."""
        if self._owns:
            self._connections.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write; joins a transaction already open on this thread's connection."""
        with write_transaction(self._db):
            yield

    def add_edges(self, edges: Sequence[NewEdge]) -> int:
        """Store new edges (restricted ones never; model-derived ones unverified)."""
        rows = [edge_row(edge) for edge in edges if edge.sensitivity < Sensitivity.RESTRICTED]
        if not rows:
            return 0
        with self.transaction():
            before = self._db.total_changes
            self._db.executemany(
                f"INSERT OR IGNORE INTO graph_edges ({_COLUMNS}, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, '', '', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            return self._db.total_changes - before

    def delete_documents(self, library_id: str, doc_ids: Sequence[str]) -> int:
        """Remove the edges derived from these documents."""
        with self.transaction():
            return self._db.executemany(
                "DELETE FROM graph_edges WHERE library_id = ? AND doc_id = ?",
                [(library_id, doc_id) for doc_id in dict.fromkeys(doc_ids)],
            ).rowcount

    def delete_library(self, library_id: str, *, origin: Origin | None = None) -> int:
        """Remove the edges derived from the library's documents (of ``origin`` only)."""
        if library_id == GLOSSARY_LIBRARY:
            return 0
        sql, params = "DELETE FROM graph_edges WHERE library_id = ?", [library_id]
        if origin is not None:
            sql += " AND origin = ?"
            params.append(origin.value)
        with self.transaction():
            return self._db.execute(sql, params).rowcount

    def replace_glossary_edges(self, edges: Sequence[NewEdge], fingerprint: str) -> bool:
        """Replace the glossary's edges when ``fingerprint`` differs from the stored one."""
        if not self._db.in_transaction and self.glossary_fingerprint() == fingerprint:
            return False  # unchanged: no write lock taken
        with self.transaction():
            if self.glossary_fingerprint() == fingerprint:
                return False
            self._db.execute("DELETE FROM graph_edges WHERE library_id = ?", (GLOSSARY_LIBRARY,))
            self.add_edges(edges)
            self._db.execute(
                "INSERT OR REPLACE INTO graph_meta (key, value) VALUES ('glossary', ?)",
                (fingerprint,),
            )
        return True

    def glossary_fingerprint(self) -> str:
        row = self._db.execute("SELECT value FROM graph_meta WHERE key = 'glossary'").fetchone()
        return str(row[0]) if row else ""

    def edges(self, query: EdgeQuery, *, max_level: int) -> list[Edge]:
        """Matching edges at or below ``max_level``, ordered by kind, source, target, id."""
        where, params = edge_conditions(query, max_level, "?")
        if query.nodes is None:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM graph_edges WHERE {where}", params
            ).fetchall()
        else:
            rows = []
            nodes = sorted(set(query.nodes))
            for start in range(0, len(nodes), _IN_LIMIT):
                part = nodes[start : start + _IN_LIMIT]
                marks = ", ".join("?" * len(part))
                rows += self._db.execute(
                    f"SELECT {_COLUMNS} FROM graph_edges WHERE source IN ({marks}) AND {where} "
                    f"UNION SELECT {_COLUMNS} FROM graph_edges WHERE target IN ({marks}) "
                    f"AND {where}",
                    (*part, *params, *part, *params),
                ).fetchall()
        edges = {row[0]: edge_from_row(row) for row in rows}
        return sorted(edges.values(), key=lambda e: (e.kind, e.source, e.target, e.edge_id))

    def edge(self, edge_id: str, *, max_level: int) -> Edge | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM graph_edges WHERE edge_id = ? AND sensitivity <= ?",
            (edge_id, max_level),
        ).fetchone()
        return edge_from_row(row) if row is not None else None

    def verify(self, edge_id: str, *, by: str, at: str) -> Edge | None:
        with self.transaction():
            self._db.execute(
                "UPDATE graph_edges SET verified = 1, verified_by = ?, verified_at = ? "
                "WHERE edge_id = ? AND verified = 0",
                (by, at, edge_id),
            )
        return self.edge(edge_id, max_level=int(Sensitivity.RESTRICTED))

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM graph_edges").fetchone()[0])
