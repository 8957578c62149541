"""The chunk store in PostgreSQL: libraries, documents, parents, chunks and routing term counts.

The same tables as the SQLite store (schema v0002), read and written through the workspace's
:class:`~ragspine.stores.postgres.database.Database`. A :meth:`PostgresChunkStore.transaction`
is the database's transaction of the calling thread, so the other stores written inside it (the
relation graph, the lexical postings) commit or roll back with the chunks. Chunk keys come from
an identity and library generations from one sequence: never given twice. Document metadata
filters run in SQL (:mod:`ragspine.stores.postgres.filter_sql`), and so does visibility.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
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
    profile_text,
    stored_chunks,
)
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.filter_sql import filter_json, filter_to_sql

_LEVELS = {int(level): level for level in Sensitivity}
_JSON = json.JSONEncoder(ensure_ascii=False).encode
_SORTED_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_PAGE = 5000
"""Chunks read per query by :meth:`PostgresChunkStore.index_rows` (no connection is held
between pages)."""
_LIBRARY_COLUMNS = "library_id, description, default_sensitivity, created_at, generation, vectors"
_CHUNK_SELECT = (
    "SELECT c.chunk_key, c.chunk_id, c.doc_id, c.library_id, c.text, c.heading, c.title, "
    "c.source_locator, c.parent_id, p.parent_locator, c.window_text, d.metadata_json, "
    "c.sensitivity, c.content_hash, d.section_levels FROM narrative_chunks c "
    "JOIN narrative_documents d ON d.library_id = c.library_id AND d.doc_id = c.doc_id "
    "JOIN narrative_parents p ON p.parent_id = c.parent_id "
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _library_of(row: Sequence[Any]) -> Library:
    return Library(row[0], row[1], Sensitivity(row[2]), row[3], int(row[4]), bool(row[5]))


def _document_row(new: NewDocument, now: str) -> tuple[Any, ...]:
    metadata = _SORTED_JSON(new.metadata)
    return (
        new.document.library_id,
        new.document.doc_id,
        new.document.title,
        new.source,
        new.document.content_hash,
        new.document.fingerprint,
        filter_json(new.metadata, metadata),
        metadata,
        int(new.document.sensitivity),
        now,
        _JSON([[str(name), int(level)] for name, level in new.section_levels]),
    )


def _chunk_row(key: int, new: NewDocument, chunk: ChunkRow) -> tuple[Any, ...]:
    return (
        key,
        chunk.chunk_id,
        new.document.library_id,
        new.document.doc_id,
        chunk.ordinal,
        chunk.text,
        chunk.heading,
        _JSON(chunk.locator),
        chunk.parent_id,
        chunk.window_text,
        max(int(new.document.sensitivity), int(chunk.level)),
        chunk.content_hash,
        chunk.title,
    )


class PostgresChunkStore:
    """The :class:`~ragspine.stores.chunks.ChunkStore` in the workspace's PostgreSQL database.

    Safe to share between threads: a :meth:`transaction` belongs to the thread that opened it,
    and no other thread sees its rows before it commits. The schema is the migrations' work
    (``ragspine migrate``); the store only reads and writes.
    """

    def __init__(self, db: Database) -> None:
        self._db = db

    def close(self) -> None:
        """The database (and its pool) belongs to the backend, which closes it."""

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write: everything this thread writes inside (through any store of this
        database) commits together or not at all; inside one already open, it joins that one."""
        with self._db.transaction():
            yield

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._db.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self._db.connection() as conn:
            row: tuple[Any, ...] | None = conn.execute(sql, params).fetchone()
            return row

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        with self._db.connection() as conn:
            return conn.execute(sql, params).rowcount

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
        created = self._write(
            "INSERT INTO narrative_libraries (library_id, description, default_sensitivity, "
            "created_at, vectors) VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (name, description, int(level), _now(), bool(vectors)),
        )
        if not created:
            raise ConfigError(f"library {name!r} already exists: pick another name")
        return self.library(name)

    def set_vectors(self, name: str, vectors: bool) -> Library:
        """Turn a library's vector search on or off (the index follows at the next use)."""
        self.library(name)  # an unknown name is an error listing the known ones
        self._write(
            "UPDATE narrative_libraries SET vectors = %s WHERE library_id = %s",
            (bool(vectors), name),
        )
        return self.library(name)

    def library(self, name: str) -> Library:
        """The library called ``name``; the error lists the known libraries."""
        row = self._one(
            f"SELECT {_LIBRARY_COLUMNS} FROM narrative_libraries WHERE library_id = %s", (name,)
        )
        if row is None:
            known = ", ".join(self.library_names()) or "none yet"
            raise QueryError(
                f"unknown library {name!r} (known: {known}); create it with "
                f"'ragspine library create {name}'"
            )
        return _library_of(row)

    def library_names(self) -> list[str]:
        """Names of every library, sorted."""
        rows = self._rows("SELECT library_id FROM narrative_libraries ORDER BY library_id")
        return [row[0] for row in rows]

    def all_libraries(self) -> list[Library]:
        """Every library's settings, sorted by name (no counts: see :meth:`visible_counts`)."""
        rows = self._rows(f"SELECT {_LIBRARY_COLUMNS} FROM narrative_libraries ORDER BY library_id")
        return [_library_of(row) for row in rows]

    def generation(self, library_id: str) -> int:
        """The library's change counter (the lexical index must carry the same number)."""
        row = self._one(
            "SELECT generation FROM narrative_libraries WHERE library_id = %s", (library_id,)
        )
        return int(row[0]) if row else 0

    def bump_generation(self, library_id: str) -> int:
        """Advance the library's generation (call inside the writing transaction) to the next
        number of the workspace-wide sequence, so a number is never given twice, not even to a
        library deleted and created again under the same name."""
        row = self._one(
            "WITH next AS (SELECT nextval('narrative_generations') AS generation), "
            "bumped AS (UPDATE narrative_libraries SET generation = next.generation FROM next "
            "WHERE library_id = %s) SELECT generation FROM next",
            (library_id,),
        )
        assert row is not None
        return int(row[0])

    def delete_library(self, library_id: str) -> int:
        """Remove a library with all its documents, parents, chunks and routing profile in one
        transaction; returns how many documents it held."""
        self.library(library_id)  # an unknown name is an error listing the known ones
        with self.transaction(), self._db.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM narrative_documents WHERE library_id = %s", (library_id,)
            ).fetchone()
            documents = int(row[0]) if row else 0
            self.bump_generation(library_id)  # advances the sequence past this library for good
            for table in (
                "narrative_chunks",
                "narrative_parents",
                "narrative_documents",
                "narrative_profiles",
                "narrative_libraries",
            ):
                conn.execute(f"DELETE FROM {table} WHERE library_id = %s", (library_id,))
        return documents

    # documents ---------------------------------------------------------------------------------

    def document(self, library_id: str, doc_id: str) -> StoredDocument | None:
        """The stored document, or ``None`` when it was never ingested."""
        return self.documents(library_id, [doc_id]).get(doc_id)

    def chunk_keys(self, library_id: str, doc_id: str) -> list[int]:
        """Integer keys of a document's chunks, ascending."""
        rows = self._rows(
            "SELECT chunk_key FROM narrative_chunks WHERE library_id = %s AND doc_id = %s "
            "ORDER BY chunk_key",
            (library_id, doc_id),
        )
        return [int(row[0]) for row in rows]

    def delete_document(self, library_id: str, doc_id: str) -> list[int]:
        """Remove a document with its parents and chunks; return the removed chunk keys."""
        with self.transaction(), self._db.connection() as conn:
            rows = conn.execute(
                "DELETE FROM narrative_chunks WHERE library_id = %s AND doc_id = %s "
                "RETURNING chunk_key, sensitivity, title, text",
                (library_id, doc_id),
            ).fetchall()
            old = count_terms(
                (int(level), profile_text(title, text)) for _, level, title, text in rows
            )
            _apply_counts(conn, library_id, old, -1)
            for table in ("narrative_parents", "narrative_documents"):
                conn.execute(
                    f"DELETE FROM {table} WHERE library_id = %s AND doc_id = %s",
                    (library_id, doc_id),
                )
        return sorted(int(row[0]) for row in rows)

    def documents(self, library_id: str, doc_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """The stored documents among ``doc_ids`` (ids never ingested are absent)."""
        wanted = list(dict.fromkeys(doc_ids))
        if not wanted:
            return {}
        rows = self._rows(
            "SELECT doc_id, title, content_hash, fingerprint, sensitivity, source "
            "FROM narrative_documents WHERE library_id = %s AND doc_id = ANY(%s::text[])",
            (library_id, wanted),
        )
        return {
            row[0]: StoredDocument(
                library_id, row[0], row[1], row[2], row[3], _LEVELS[row[4]], row[5]
            )
            for row in rows
        }

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
        document's level); returns the new chunk keys in chunk order."""
        new = NewDocument(document, source, metadata, parents, chunks, section_levels)
        return self.insert_documents([new])[0]

    def insert_documents(
        self,
        documents: Sequence[NewDocument],
        *,
        term_counts: Mapping[int, Counter[str]] | None = None,
    ) -> list[list[int]]:
        """Insert documents with their parents and chunks in one transaction: a ``COPY`` per
        table and one query for the keys; returns each document's new chunk keys in chunk
        order. The libraries' term profiles follow (from ``term_counts`` when given)."""
        if not documents:
            return []
        libraries = {new.document.library_id for new in documents}
        if term_counts is not None and len(libraries) != 1:
            raise StoreError(
                f"term_counts given for documents of {len(libraries)} libraries: "
                "insert one library's documents at a time"
            )
        now = _now()
        total = sum(len(new.chunks) for new in documents)
        with self.transaction(), self._db.connection() as conn:
            # Keys drawn from the identity in one query, ascending, so each document's keys
            # follow its chunk order; a key drawn is never drawn again, even after a rollback.
            fetched = conn.execute(
                "SELECT nextval(pg_get_serial_sequence('narrative_chunks', 'chunk_key')) "
                "FROM generate_series(1, %s)",
                (total,),
            ).fetchall()
            drawn = iter(sorted(int(row[0]) for row in fetched))
            keys = [[next(drawn) for _ in new.chunks] for new in documents]
            with conn.cursor() as cur:
                with cur.copy(
                    "COPY narrative_documents (library_id, doc_id, title, source, content_hash, "
                    "fingerprint, metadata, metadata_json, sensitivity, ingested_at, "
                    "section_levels) FROM STDIN"
                ) as copy:
                    for new in documents:
                        copy.write_row(_document_row(new, now))
                with cur.copy(
                    "COPY narrative_parents (parent_id, library_id, doc_id, heading, "
                    "parent_locator, text) FROM STDIN"
                ) as copy:
                    for new in documents:
                        for p in new.parents:
                            copy.write_row(
                                (
                                    p.parent_id,
                                    new.document.library_id,
                                    new.document.doc_id,
                                    p.heading,
                                    _JSON(p.locator),
                                    p.text,
                                )
                            )
                with cur.copy(
                    "COPY narrative_chunks (chunk_key, chunk_id, library_id, doc_id, ordinal, "
                    "text, heading, source_locator, parent_id, window_text, sensitivity, "
                    "content_hash, title) FROM STDIN"
                ) as copy:
                    for new, doc_keys in zip(documents, keys, strict=True):
                        for key, chunk in zip(doc_keys, new.chunks, strict=True):
                            copy.write_row(_chunk_row(key, new, chunk))
            if term_counts is not None:
                _apply_counts(conn, next(iter(libraries)), term_counts, 1)
            else:
                for library_id in sorted(libraries):
                    ours = [new for new in documents if new.document.library_id == library_id]
                    _apply_counts(conn, library_id, count_terms(profile_rows(ours)), 1)
        return keys

    # reading chunks ----------------------------------------------------------------------------

    def index_rows(self, library_id: str) -> Iterator[IndexRow]:
        """Every chunk of a library in key order, as the lexical index needs it (read a page at
        a time)."""
        after = 0
        while True:
            rows = self._rows(
                "SELECT chunk_key, title, heading, text, sensitivity FROM narrative_chunks "
                "WHERE library_id = %s AND chunk_key > %s ORDER BY chunk_key LIMIT %s",
                (library_id, after, _PAGE),
            )
            for row in rows:
                yield IndexRow(int(row[0]), row[1], row[2], row[3], int(row[4]))
            if len(rows) < _PAGE:
                return
            after = int(rows[-1][0])

    def chunks_by_key(self, keys: Sequence[int]) -> dict[int, StoredChunk]:
        """The chunks with the given keys (missing keys are simply absent)."""
        if not keys:
            return {}
        rows = self._rows(
            _CHUNK_SELECT + "WHERE c.chunk_key = ANY(%s::bigint[])", ([int(k) for k in keys],)
        )
        return stored_chunks(rows)

    def filtered_keys(self, library_id: str, flt: Filter) -> list[int]:
        """Keys of the library's chunks whose document metadata matches ``flt`` (in SQL)."""
        where, params = filter_to_sql(flt, "d.metadata")
        rows = self._rows(
            "SELECT c.chunk_key FROM narrative_chunks c JOIN narrative_documents d "
            "ON d.library_id = c.library_id AND d.doc_id = c.doc_id "
            f"WHERE c.library_id = %s AND d.library_id = %s AND ({where}) ORDER BY c.chunk_key",
            [library_id, library_id, *params],
        )
        return [int(row[0]) for row in rows]

    def term_counts(self, library_id: str, max_level: int) -> dict[str, int]:
        """The library's term counts over chunks at or below ``max_level`` (for routing)."""
        rows = self._rows(
            "SELECT term, sum(count) FROM narrative_profiles WHERE library_id = %s "
            "AND level <= %s GROUP BY term HAVING sum(count) > 0 ORDER BY term",
            (library_id, max_level),
        )
        return {term: int(n) for term, n in rows}

    def chunks_where(self, column: ChunkColumn, values: Sequence[str]) -> list[StoredChunk]:
        """Chunks whose ``parent_id`` or ``doc_id`` is one of ``values``, in document order."""
        if column not in ("parent_id", "doc_id") or not values:
            return []
        rows = self._rows(
            _CHUNK_SELECT + f"WHERE c.{column} = ANY(%s::text[]) "
            "ORDER BY c.library_id, c.doc_id, c.ordinal",
            (list(values),),
        )  # one round trip: the rows and their order
        return list(stored_chunks(rows).values())

    def chunk_ids(self, keys: Sequence[int]) -> dict[int, ChunkIdentity]:
        """Library, chunk id and document of the given keys (missing ones absent)."""
        if not keys:
            return {}
        rows = self._rows(
            "SELECT chunk_key, library_id, chunk_id, doc_id FROM narrative_chunks "
            "WHERE chunk_key = ANY(%s::bigint[])",
            ([int(k) for k in keys],),
        )
        return {int(row[0]): ChunkIdentity(row[1], row[2], row[3]) for row in rows}

    def keys_of(self, chunk_ids: Sequence[str]) -> dict[str, int]:
        """Integer keys of the given chunk ids (unknown ids are absent)."""
        if not chunk_ids:
            return {}
        rows = self._rows(
            "SELECT chunk_id, chunk_key FROM narrative_chunks WHERE chunk_id = ANY(%s::text[])",
            (list(chunk_ids),),
        )
        return {row[0]: int(row[1]) for row in rows}

    def has_chunks(self, library_id: str, max_level: int) -> bool:
        """Whether the library holds a chunk at or below ``max_level``."""
        row = self._one(
            "SELECT EXISTS (SELECT 1 FROM narrative_chunks WHERE library_id = %s "
            "AND sensitivity <= %s)",
            (library_id, max_level),
        )
        return bool(row and row[0])

    def visible_counts(self, library_id: str, max_level: int) -> VisibleCounts:
        """Documents, parents (sections) and chunks of a library that hold a chunk at or below
        ``max_level``, and those chunks per level."""
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT count(DISTINCT doc_id), count(DISTINCT parent_id), count(*) "
                "FROM narrative_chunks WHERE library_id = %s AND sensitivity <= %s",
                (library_id, max_level),
            ).fetchone()
            levels = conn.execute(
                "SELECT sensitivity, count(*) FROM narrative_chunks WHERE library_id = %s "
                "AND sensitivity <= %s GROUP BY sensitivity ORDER BY sensitivity",
                (library_id, max_level),
            ).fetchall()
        assert row is not None
        by_level = {_LEVELS[level]: int(count) for level, count in levels}
        return VisibleCounts(int(row[0]), int(row[1]), int(row[2]), by_level)


def _apply_counts(
    conn: Any, library_id: str, counts: Mapping[int, Counter[str]], sign: int
) -> None:
    """Add (``sign=1``) or subtract (``sign=-1``) routing term counts, one statement per level
    (terms in order, so two writers of one library lock rows in the same order)."""
    for level, counter in sorted(counts.items()):
        if not counter:
            continue
        terms = sorted(counter)
        conn.execute(
            "INSERT INTO narrative_profiles (library_id, level, term, count) "
            "SELECT %s, %s, term, n FROM unnest(%s::text[], %s::bigint[]) AS t(term, n) "
            "ON CONFLICT (library_id, level, term) "
            "DO UPDATE SET count = narrative_profiles.count + excluded.count",
            (library_id, level, terms, [sign * counter[term] for term in terms]),
        )
        if sign < 0:
            conn.execute(
                "DELETE FROM narrative_profiles WHERE library_id = %s AND level = %s "
                "AND term = ANY(%s::text[]) AND count <= 0",
                (library_id, level, terms),
            )
