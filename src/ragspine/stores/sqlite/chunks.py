"""The chunk store: libraries, documents, parents and chunks in the workspace's SQLite file.

Tables are prefixed ``narrative_`` and versioned by ``narrative_meta.schema_version`` (older
versions are upgraded in place by :mod:`ragspine.stores.sqlite.upgrade`). Parent text is
stored once per section; document metadata and section levels once per document (chunks read
them by join). Each chunk row carries its own heading and title as a reader of the chunk's level
may see them (see :mod:`ragspine.narrative.labels`). Chunk rows have integer keys that are never
reused; they are the lexical index's keys. Each library keeps a ``generation`` counter that
every change bumps, so an index can tell it is stale.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragspine.errors import ConfigError, QueryError, StoreError
from ragspine.narrative.filters.expr import Filter
from ragspine.security import Sensitivity
from ragspine.stores.chunks import (
    ChunkColumn,
    ChunkIdentity,
    ChunkRow,
    IndexRow,
    Library,
    NewDocument,
    ParentRow,
    StoredChunk,
    StoredDocument,
    VisibleCounts,
    check_library_name,
    count_terms,
    profile_rows,
    stored_chunks,
)
from ragspine.stores.sqlite import profiles, upgrade
from ragspine.stores.sqlite.connect import ThreadConnections, connect, has_tables, write_transaction
from ragspine.stores.sqlite.errors import sqlite_error
from ragspine.stores.sqlite.filter_sql import filter_to_sql

SCHEMA_VERSION = 2
_TABLES = (
    "narrative_meta",
    "narrative_libraries",
    "narrative_documents",
    "narrative_parents",
    "narrative_chunks",
    "narrative_profiles",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS narrative_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS narrative_libraries (
    library_id TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    default_sensitivity INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    vectors INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS narrative_documents (
    library_id TEXT NOT NULL REFERENCES narrative_libraries(library_id),
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    sensitivity INTEGER NOT NULL,
    ingested_at TEXT NOT NULL,
    section_levels TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (library_id, doc_id)
);
CREATE TABLE IF NOT EXISTS narrative_parents (
    parent_key INTEGER PRIMARY KEY AUTOINCREMENT,
    parent_id TEXT NOT NULL UNIQUE,
    library_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    parent_locator TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS narrative_parents_doc ON narrative_parents (library_id, doc_id);
CREATE TABLE IF NOT EXISTS narrative_chunks (
    chunk_key INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE,
    library_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    source_locator TEXT NOT NULL,
    parent_id TEXT NOT NULL REFERENCES narrative_parents(parent_id),
    window_text TEXT,
    sensitivity INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS narrative_chunks_doc ON narrative_chunks (library_id, doc_id);
CREATE INDEX IF NOT EXISTS narrative_chunks_parent ON narrative_chunks (parent_id);
CREATE INDEX IF NOT EXISTS narrative_chunks_level ON narrative_chunks (library_id, sensitivity);
"""

_LEVELS = {int(level): level for level in Sensitivity}
_IN_LIMIT = 500
# What json.dumps(..., ensure_ascii=False) writes, without building an encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False).encode
_SORTED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
"""Values bound in one ``IN (...)`` list (SQLite caps the parameters of a statement)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _open(db_path: Path) -> sqlite3.Connection:
    db = connect(db_path)
    db.execute("PRAGMA foreign_keys=ON")
    return db


class SQLiteChunkStore:
    """The :class:`~ragspine.stores.chunks.ChunkStore` of libraries, documents, parents and
    chunks in the workspace's SQLite file.

    Safe to share between threads: each thread reads and writes through its own connection, so
    a :meth:`transaction` belongs to the thread that opened it and no other thread sees its rows
    before it commits. The schema is written (or upgraded) once, here.
    """

    def __init__(self, db_path: Path) -> None:
        self._connections = ThreadConnections(lambda: _open(db_path))
        try:
            if not has_tables(self._db, _TABLES):  # a reader of a ready store writes nothing
                # The tables and their version row in one transaction: another connection
                # opening the new store at the same moment sees both or neither.
                self._db.executescript(
                    f"BEGIN IMMEDIATE;\n{_SCHEMA}\n{profiles.PROFILE_SCHEMA}\n"
                    "INSERT OR IGNORE INTO narrative_meta (key, value) "
                    f"VALUES ('schema_version', '{SCHEMA_VERSION}');\nCOMMIT;"
                )
        except sqlite3.Error as exc:
            self._connections.close()
            raise sqlite_error(exc, db_path.parent, name_writers=False) from None
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(narrative_libraries)")}
        if "vectors" not in columns:  # workspaces made before vector search
            self._db.execute(
                "ALTER TABLE narrative_libraries ADD COLUMN vectors INTEGER NOT NULL DEFAULT 0"
            )
        row = self._db.execute(
            "SELECT value FROM narrative_meta WHERE key = 'schema_version'"
        ).fetchone()
        if row is None:
            self._db.execute(
                "INSERT OR IGNORE INTO narrative_meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) != SCHEMA_VERSION:
            upgrade.upgrade(self._db, int(row[0]), SCHEMA_VERSION, str(db_path))
        profiles.backfill(self._db)

    @property
    def _db(self) -> sqlite3.Connection:
        """The calling thread's connection."""
        return self._connections.get()

    def close(self) -> None:
        """Close every thread's database connection."""
        self._connections.close()

    @property
    def connections(self) -> ThreadConnections:
        """The per-thread connections, for a store that writes inside this one's transactions
        (the relation store)."""
        return self._connections

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write on the calling thread's connection: everything this thread writes
        inside commits together or not at all (inside a transaction already open on it, this
        joins that one)."""
        with write_transaction(self._db):
            yield

    # libraries ---------------------------------------------------------------------------------

    def create_library(
        self,
        name: str,
        *,
        description: str = "",
        default_sensitivity: str | Sensitivity = "public",
        vectors: bool = False,
    ) -> Library:
        """Register a new library; the name must be unused."""
        check_library_name(name)
        level = Sensitivity.parse(default_sensitivity)
        if self._library_row(name) is not None:
            raise ConfigError(f"library {name!r} already exists: pick another name")
        self._db.execute(
            "INSERT INTO narrative_libraries (library_id, description, default_sensitivity, "
            "created_at, vectors) VALUES (?, ?, ?, ?, ?)",
            (name, description, int(level), _now(), int(bool(vectors))),
        )
        return self.library(name)

    def set_vectors(self, name: str, vectors: bool) -> Library:
        """Turn a library's vector search on or off (the index follows at the next use)."""
        self.library(name)  # an unknown name is an error listing the known ones
        self._db.execute(
            "UPDATE narrative_libraries SET vectors = ? WHERE library_id = ?",
            (int(bool(vectors)), name),
        )
        return self.library(name)

    _LIBRARY_COLUMNS = (
        "library_id, description, default_sensitivity, created_at, generation, vectors"
    )

    def _library_row(self, name: str) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._db.execute(
            f"SELECT {self._LIBRARY_COLUMNS} FROM narrative_libraries WHERE library_id = ?",
            (name,),
        ).fetchone()
        return row

    @staticmethod
    def _library_of(row: Sequence[Any]) -> Library:
        return Library(row[0], row[1], Sensitivity(row[2]), row[3], row[4], bool(row[5]))

    def library(self, name: str) -> Library:
        """The library called ``name``; the error lists the known libraries."""
        row = self._library_row(name)
        if row is None:
            known = ", ".join(self.library_names()) or "none yet"
            raise QueryError(
                f"unknown library {name!r} (known: {known}); create it with "
                f"'ragspine library create {name}'"
            )
        return self._library_of(row)

    def library_names(self) -> list[str]:
        """Names of every library, sorted."""
        rows = self._db.execute("SELECT library_id FROM narrative_libraries ORDER BY library_id")
        return [row[0] for row in rows]

    def all_libraries(self) -> list[Library]:
        """Every library's settings, sorted by name (no counts: see :meth:`visible_counts`)."""
        rows = self._db.execute(
            f"SELECT {self._LIBRARY_COLUMNS} FROM narrative_libraries ORDER BY library_id"
        )
        return [self._library_of(row) for row in rows]

    def generation(self, library_id: str) -> int:
        """The library's change counter (the lexical index must carry the same number)."""
        row = self._db.execute(
            "SELECT generation FROM narrative_libraries WHERE library_id = ?", (library_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def bump_generation(self, library_id: str) -> int:
        """Advance the library's generation (call inside the writing transaction).

        Generations come from one workspace-wide counter, so a number is never given twice,
        not even to a library deleted and created again under the same name: an index (or a
        reader's cached copy) of the old library can never pass for the new one.
        """
        row = self._db.execute(
            "SELECT MAX(CAST(value AS INTEGER)) FROM ("
            "SELECT value FROM narrative_meta WHERE key = 'generation_counter' "
            "UNION ALL SELECT MAX(generation) FROM narrative_libraries)"
        ).fetchone()
        generation = int(row[0] or 0) + 1
        self._db.execute(
            "INSERT OR REPLACE INTO narrative_meta (key, value) VALUES ('generation_counter', ?)",
            (str(generation),),
        )
        self._db.execute(
            "UPDATE narrative_libraries SET generation = ? WHERE library_id = ?",
            (generation, library_id),
        )
        return generation

    def delete_library(self, library_id: str) -> int:
        """Remove a library with all its documents, parents, chunks and routing profile in one
        transaction; returns how many documents it held."""
        self.library(library_id)  # an unknown name is an error listing the known ones
        with self.transaction():
            row = self._db.execute(
                "SELECT COUNT(*) FROM narrative_documents WHERE library_id = ?", (library_id,)
            ).fetchone()
            documents = int(row[0])
            self.bump_generation(library_id)  # advances the counter past this library for good
            for table in (
                "narrative_chunks",
                "narrative_parents",
                "narrative_documents",
                "narrative_profiles",
                "narrative_libraries",
            ):
                self._db.execute(f"DELETE FROM {table} WHERE library_id = ?", (library_id,))
        return documents

    # documents ---------------------------------------------------------------------------------

    def document(self, library_id: str, doc_id: str) -> StoredDocument | None:
        """The stored document, or ``None`` when it was never ingested."""
        row = self._db.execute(
            "SELECT title, content_hash, fingerprint, sensitivity, source FROM narrative_documents "
            "WHERE library_id = ? AND doc_id = ?",
            (library_id, doc_id),
        ).fetchone()
        if row is None:
            return None
        return StoredDocument(
            library_id, doc_id, row[0], row[1], row[2], Sensitivity(row[3]), row[4]
        )

    def chunk_keys(self, library_id: str, doc_id: str) -> list[int]:
        """Integer keys of a document's chunks."""
        rows = self._db.execute(
            "SELECT chunk_key FROM narrative_chunks WHERE library_id = ? AND doc_id = ? "
            "ORDER BY chunk_key",
            (library_id, doc_id),
        )
        return [row[0] for row in rows]

    def delete_document(self, library_id: str, doc_id: str) -> list[int]:
        """Remove a document with its parents and chunks; return the removed chunk keys."""
        keys = self.chunk_keys(library_id, doc_id)
        old = count_terms(profiles.chunk_rows(self._db, library_id, doc_id))
        profiles.apply_counts(self._db, library_id, old, -1)
        self._db.execute(
            "DELETE FROM narrative_chunks WHERE library_id = ? AND doc_id = ?", (library_id, doc_id)
        )
        self._db.execute(
            "DELETE FROM narrative_parents WHERE library_id = ? AND doc_id = ?",
            (library_id, doc_id),
        )
        self._db.execute(
            "DELETE FROM narrative_documents WHERE library_id = ? AND doc_id = ?",
            (library_id, doc_id),
        )
        return keys

    def documents(self, library_id: str, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """The stored documents among ``doc_ids`` (ids never ingested are absent)."""
        found: dict[str, StoredDocument] = {}
        wanted = list(dict.fromkeys(doc_ids))
        for begin in range(0, len(wanted), _IN_LIMIT):
            part = wanted[begin : begin + _IN_LIMIT]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                "SELECT doc_id, title, content_hash, fingerprint, sensitivity, source "
                f"FROM narrative_documents WHERE library_id = ? AND doc_id IN ({marks})",
                [library_id, *part],
            )
            for row in rows:
                found[row[0]] = StoredDocument(
                    library_id, row[0], row[1], row[2], row[3], Sensitivity(row[4]), row[5]
                )
        return found

    def insert_document(
        self,
        document: StoredDocument,
        *,
        source: str,
        metadata: dict[str, Any],
        parents: Sequence[ParentRow],
        chunks: Sequence[ChunkRow],
        section_levels: Sequence[tuple[str, int]] = (),
    ) -> list[int]:
        """Insert a document with its parents and chunks (each chunk at least at the
        document's level); returns the new chunk keys in chunk order. The library's term
        profile follows."""
        new = NewDocument(document, source, metadata, parents, chunks, section_levels)
        return self.insert_documents([new])[0]

    def insert_documents(
        self,
        documents: Sequence[NewDocument],
        *,
        term_counts: Mapping[int, Counter[str]] | None = None,
    ) -> list[list[int]]:
        """Insert documents with their parents and chunks (each chunk at least at its
        document's level) in one statement per table; returns each document's new chunk keys
        in chunk order. The libraries' term profiles follow, counted once for all of them
        (or taken from ``term_counts``, counted by the caller: see the Protocol)."""
        if not documents:
            return []
        libraries = {new.document.library_id for new in documents}
        if term_counts is not None and len(libraries) != 1:
            raise StoreError(
                f"term_counts given for documents of {len(libraries)} libraries: "
                "insert one library's documents at a time"
            )
        if not self._db.in_transaction:  # the keys are chosen, then used: one transaction
            with self.transaction():
                return self.insert_documents(documents, term_counts=term_counts)
        now = _now()
        self._db.executemany(
            "INSERT INTO narrative_documents (library_id, doc_id, title, source, content_hash, "
            "fingerprint, metadata, sensitivity, ingested_at, section_levels) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    new.document.library_id,
                    new.document.doc_id,
                    new.document.title,
                    new.source,
                    new.document.content_hash,
                    new.document.fingerprint,
                    _SORTED_JSON(new.metadata),
                    int(new.document.sensitivity),
                    now,
                    _JSON([[str(n), int(lv)] for n, lv in new.section_levels]),
                )
                for new in documents
            ],
        )
        self._db.executemany(
            "INSERT INTO narrative_parents (parent_id, library_id, doc_id, heading, "
            "parent_locator, text) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    p.parent_id,
                    new.document.library_id,
                    new.document.doc_id,
                    p.heading,
                    _JSON(p.locator),
                    p.text,
                )
                for new in documents
                for p in new.parents
            ],
        )
        # Keys are given here rather than by SQLite one row at a time: past both the highest
        # key ever handed out (AUTOINCREMENT's record, which the inserts below advance) and
        # the highest in use, so a key is never reused; the write transaction holds the lock.
        row = self._db.execute(
            "SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence "
            "WHERE name = 'narrative_chunks'), 0), COALESCE(MAX(chunk_key), 0)) "
            "FROM narrative_chunks"
        ).fetchone()
        next_key = int(row[0]) + 1
        keys: list[list[int]] = []
        chunk_rows: list[tuple[Any, ...]] = []
        for new in documents:
            library_id, doc_id = new.document.library_id, new.document.doc_id
            level = int(new.document.sensitivity)
            doc_keys = list(range(next_key, next_key + len(new.chunks)))
            next_key += len(new.chunks)
            keys.append(doc_keys)
            for key, chunk in zip(doc_keys, new.chunks, strict=True):
                chunk_rows.append(
                    (
                        key,
                        chunk.chunk_id,
                        library_id,
                        doc_id,
                        chunk.ordinal,
                        chunk.text,
                        chunk.heading,
                        _JSON(chunk.locator),
                        chunk.parent_id,
                        chunk.window_text,
                        max(level, int(chunk.level)),
                        chunk.content_hash,
                        chunk.title,
                    )
                )
        self._db.executemany(
            "INSERT INTO narrative_chunks (chunk_key, chunk_id, library_id, doc_id, ordinal, "
            "text, heading, source_locator, parent_id, window_text, sensitivity, content_hash, "
            "title) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            chunk_rows,
        )
        if term_counts is not None:
            profiles.apply_counts(self._db, libraries.pop(), term_counts, 1)
        else:
            for library_id in sorted(libraries):
                ours = [new for new in documents if new.document.library_id == library_id]
                profiles.apply_counts(self._db, library_id, count_terms(profile_rows(ours)), 1)
        return keys

    # reading chunks ----------------------------------------------------------------------------

    def index_rows(self, library_id: str) -> Iterator[IndexRow]:
        """Every chunk of a library in key order, as the lexical index needs it."""
        rows = self._db.execute(
            "SELECT chunk_key, title, heading, text, sensitivity FROM narrative_chunks "
            "WHERE library_id = ? ORDER BY chunk_key",
            (library_id,),
        )
        for row in rows:
            yield IndexRow(*row)

    def chunks_by_key(self, keys: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks with the given keys (missing keys are simply absent)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self._db.execute(
            "SELECT c.chunk_key, c.chunk_id, c.doc_id, c.library_id, c.text, c.heading, c.title, "
            "c.source_locator, c.parent_id, p.parent_locator, c.window_text, d.metadata, "
            "c.sensitivity, c.content_hash, d.section_levels FROM narrative_chunks c "
            "JOIN narrative_documents d ON d.library_id = c.library_id AND d.doc_id = c.doc_id "
            "JOIN narrative_parents p ON p.parent_id = c.parent_id "
            f"WHERE c.chunk_key IN ({marks})",
            list(keys),
        )
        return stored_chunks(rows)

    def filtered_keys(self, library_id: str, flt: Filter) -> list[int]:
        """Keys of the library's chunks whose document metadata matches ``flt`` (in SQL)."""
        where, params = filter_to_sql(flt, "d.metadata")
        rows = self._db.execute(
            "SELECT c.chunk_key FROM narrative_chunks c JOIN narrative_documents d "
            "ON d.library_id = c.library_id AND d.doc_id = c.doc_id "
            f"WHERE c.library_id = ? AND ({where})",
            [library_id, *params],
        )
        return [row[0] for row in rows]

    def term_counts(self, library_id: str, max_level: int) -> dict[str, int]:
        """The library's term counts over chunks at or below ``max_level`` (for routing)."""
        return profiles.load_counts(self._db, library_id, max_level)

    def chunks_where(self, column: ChunkColumn, values: Sequence[str]) -> list[StoredChunk]:
        """Chunks whose ``parent_id`` or ``doc_id`` is one of ``values``, in document order."""
        if column not in ("parent_id", "doc_id") or not values:
            return []
        marks = ",".join("?" * len(values))
        rows = self._db.execute(
            f"SELECT chunk_key FROM narrative_chunks WHERE {column} IN ({marks}) "
            "ORDER BY library_id, doc_id, ordinal",
            list(values),
        )
        keys = [row[0] for row in rows]
        found = self.chunks_by_key(keys)
        return [found[key] for key in keys if key in found]

    def chunk_ids(self, keys: Sequence[int]) -> dict[int, ChunkIdentity]:
        """Library, chunk id and document of the given keys (missing ones absent)."""
        if not keys:
            return {}
        marks = ",".join("?" * len(keys))
        rows = self._db.execute(
            "SELECT chunk_key, library_id, chunk_id, doc_id FROM narrative_chunks "
            f"WHERE chunk_key IN ({marks})",
            list(keys),
        )
        return {row[0]: ChunkIdentity(row[1], row[2], row[3]) for row in rows}

    def keys_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Integer keys of the given chunk ids (unknown ids are absent)."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self._db.execute(
            f"SELECT chunk_id, chunk_key FROM narrative_chunks WHERE chunk_id IN ({marks})",
            list(chunk_ids),
        )
        return {row[0]: int(row[1]) for row in rows}

    def has_chunks(self, library_id: str, max_level: int) -> bool:
        """Whether the library holds a chunk at or below ``max_level``."""
        row = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM narrative_chunks WHERE library_id = ? "
            "AND sensitivity <= ?)",
            (library_id, max_level),
        ).fetchone()
        return bool(row[0])

    def visible_counts(self, library_id: str, max_level: int) -> VisibleCounts:
        """Documents, parents (sections) and chunks of a library that hold a chunk at or below
        ``max_level``, and those chunks per level."""
        row = self._db.execute(
            "SELECT COUNT(DISTINCT doc_id), COUNT(DISTINCT parent_id), COUNT(*) "
            "FROM narrative_chunks WHERE library_id = ? AND sensitivity <= ?",
            (library_id, max_level),
        ).fetchone()
        by_level = {
            _LEVELS[level]: int(count)
            for level, count in self._db.execute(
                "SELECT sensitivity, COUNT(*) FROM narrative_chunks WHERE library_id = ? "
                "AND sensitivity <= ? GROUP BY sensitivity ORDER BY sensitivity",
                (library_id, max_level),
            )
        }
        return VisibleCounts(int(row[0]), int(row[1]), int(row[2]), by_level)
