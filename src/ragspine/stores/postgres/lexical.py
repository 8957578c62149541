"""BM25 search in PostgreSQL that ranks exactly like the embedded engine.

Terms come from our own :class:`~ragspine.analysis.Analyzer` (computed in Python at ingest, the
very terms the embedded index holds) and are stored as postings ``(index, term, key, tf, level,
length)``. A search reads, in one snapshot, the statistics of the documents the asker may see
(their number and total length per level, each query term's document frequency at or below the
asker's level), computes the idf in Python with :mod:`~ragspine.narrative.index.lexical.bm25`,
and lets the server score, filter (level and ``allowed`` keys, before the cut) and cut. The
arithmetic is the engine's, operation for operation, and a document's term contributions are
summed in the engine's order (terms sorted), so scores are the same floating-point numbers and
ties break by key as there.

Each (library, field set) has a generation: a writer applies a change to the postings in one
transaction with the generation it reaches, so a reader sees the last committed state whole.
A field set no writer keeps (``economy``'s text-only index) is built in memory by the reader, as
the embedded backend does.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragspine.analysis import Analyzer
from ragspine.errors import ConfigError, QueryError
from ragspine.narrative.index.lexical import bm25
from ragspine.narrative.index.lexical.engine import LexicalIndex
from ragspine.narrative.index.lexical.library_indexes import (
    APPLY_GROUP,
    MAINTAINED_FIELDS,
    AnalyzedRows,
    IndexFields,
    TermSource,
    indexed_text,
    searchable,
)
from ragspine.narrative.index.lexical.segments import TermBatch
from ragspine.stores.chunks import ChunkStore, IndexRow
from ragspine.stores.postgres.database import Database

log = logging.getLogger("ragspine.narrative")

VACUUM_AFTER_ROWS = 2000
"""Index rows written by one change from which the postings are vacuumed and analyzed."""
_STATE = "SELECT id, generation, analyzer FROM lexical_indexes WHERE library = %s AND fields = %s"
LEVELS = (
    "SELECT coalesce(sum(documents), 0)::bigint, coalesce(sum(total_length), 0)::bigint "
    "FROM lexical_levels WHERE index_id = %(index)s AND level <= %(level)s"
)
"""The number and total length of the documents at or below the asker's level."""
POSTINGS = (
    "SELECT q.ord, count(*), string_agg(p.key || ' ' || p.tf || ' ' || p.length, ' ') {allowed}"
    "FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS q(term, ord) "
    "JOIN lexical_postings p ON p.index_id = %(index)s AND p.term = q.term "
    "WHERE p.level <= %(level)s GROUP BY q.ord ORDER BY q.ord"
)
"""Per query term: its document frequency at or below the asker's level, and the visible (and
allowed) postings as one text of ``key tf length`` triples that numpy parses in one call."""
_EXCLUDED = (
    "SELECT count(DISTINCT key) FROM lexical_postings WHERE index_id = %(index)s "
    "AND term = ANY(%(terms)s) AND level <= %(level)s AND NOT (key = ANY(%(allowed)s))"
)
_LEVELS = (
    "INSERT INTO lexical_levels (index_id, level, documents, total_length) "
    "SELECT index_id, level, count(*), sum(length) FROM lexical_documents WHERE index_id = %s "
    "GROUP BY index_id, level"
)


def allowed_keys(allowed: Collection[int] | np.ndarray) -> list[int]:
    """``allowed`` as a list of ints, or a :class:`QueryError` (as the embedded engine says)."""
    try:
        if isinstance(allowed, np.ndarray):
            return [int(k) for k in allowed.astype(np.int64, copy=False).ravel().tolist()]
        return np.fromiter(allowed, dtype=np.int64, count=len(allowed)).tolist()
    except (TypeError, ValueError, OverflowError) as exc:
        raise QueryError(f"allowed must hold integer chunk keys ({exc})") from exc


def check_search_args(top_k: object, max_level: object) -> None:
    """The embedded engine's checks of ``top_k`` and ``max_level``."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
        raise QueryError(f"top_k must be an integer >= 0, got {top_k!r}")
    if isinstance(max_level, bool) or not isinstance(max_level, int):
        raise QueryError(f"max_level must be an integer sensitivity level, got {max_level!r}")


class PostgresLexicalIndex:
    """One committed (library, field set) index in the database: what a search needs of it."""

    levels_sql = LEVELS
    """The number and total length of the documents at or below a level."""
    postings_sql = POSTINGS
    """Each query term's document frequency at or below a level and its postings there."""

    def __init__(
        self, db: Database, index_id: int, generation: int, analyzer: Analyzer, k1: float, b: float
    ) -> None:
        self._db = db
        self._id = index_id
        self.generation = generation
        self.analyzer = analyzer
        self.k1, self.b = k1, b

    def search(
        self,
        query: str,
        top_k: int,
        *,
        max_level: int,
        allowed: Collection[int] | np.ndarray | None = None,
        stats: dict[str, int] | None = None,
    ) -> list[tuple[int, float]]:
        """As :meth:`ragspine.narrative.index.lexical.engine.LexicalIndex.search`: the best
        ``top_k`` (key, score) pairs, score descending then key ascending, with BM25 statistics
        over the documents at or below ``max_level`` and ``allowed`` applied before the cut."""
        check_search_args(top_k, max_level)
        wanted = allowed_keys(allowed) if allowed is not None else None
        qterms = Counter(self.analyzer.tokens(query))
        if top_k == 0 or not qterms:
            return []
        terms = sorted(qterms)
        params: dict[str, Any] = {
            "index": self._id, "level": max_level, "terms": terms, "allowed": wanted
        }  # fmt: skip
        sql = self.postings_sql.format(
            allowed="FILTER (WHERE p.key = ANY(%(allowed)s)) " if wanted is not None else ""
        )
        # One round trip: the statements are pipelined in one read-only repeatable-read
        # transaction, so the statistics and the postings are those of one commit.
        own = not self._db.in_transaction
        with self._db.connection() as conn:
            try:
                with conn.pipeline():
                    if own:
                        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    levels = conn.execute(self.levels_sql, params)
                    fetched = conn.execute(sql, params)
                    excluded = (
                        conn.execute(_EXCLUDED, params)
                        if stats is not None and wanted is not None
                        else None
                    )
                    if own:
                        conn.execute("ROLLBACK")
                        own = False
                counts = levels.fetchone()
                per_term = fetched.fetchall()
                count = excluded.fetchone() if excluded is not None else None
            finally:
                if own:
                    conn.execute("ROLLBACK")
        n_docs, total_length = (int(counts[0]), int(counts[1])) if counts else (0, 0)
        if n_docs == 0 or not per_term or total_length <= 0:
            return []
        if stats is not None:  # set as the engine does: once some document matched
            stats["filtered"] = int(count[0]) if count else 0
        weights = {
            position: qterms[terms[position - 1]] * float(bm25.idf(int(df), n_docs))
            for position, df, _ in per_term
        }
        avgdl = total_length / n_docs
        postings = [(weights[position], text) for position, _, text in per_term if text]
        return _scored(postings, avgdl, self.k1, self.b, top_k)


def _scored(
    postings: Sequence[tuple[float, str]], avgdl: float, k1: float, b: float, top_k: int
) -> list[tuple[int, float]]:
    """The best ``top_k`` (key, score) pairs of each query term's ``(weight, "key tf length
    ...")`` postings (terms in sorted order), scored with the engine's functions in the engine's
    order (each document's contributions added one term at a time), so the scores are the
    engine's floating-point numbers and ties break by key as there."""
    if not postings:
        return []
    parts = [
        (weight, np.fromstring(text, dtype=np.int64, sep=" ").reshape(-1, 3))
        for weight, text in postings
    ]
    keys, rows = np.unique(np.concatenate([t[:, 0] for _, t in parts]), return_inverse=True)
    scores = np.zeros(len(keys), dtype=np.float64)
    start = 0
    for weight, triples in parts:
        where = rows[start : start + len(triples)]
        start += len(triples)
        norms = bm25.length_norms(triples[:, 2], avgdl, k1, b)
        scores[where] += bm25.term_scores(triples[:, 1], norms, weight)
    best = bm25.top_k(scores, keys, top_k)
    return list(zip(keys[best].tolist(), scores[best].tolist(), strict=True))


class PostgresLexicalIndexes:
    """The lexical indexes of every library, in the workspace database (the
    :class:`~ragspine.narrative.index.lexical.library_indexes.LibraryIndexes` of a PostgreSQL
    workspace)."""

    def __init__(
        self,
        db: Database,
        chunks: ChunkStore,
        *,
        k1: float = bm25.DEFAULT_K1,
        b: float = bm25.DEFAULT_B,
    ) -> None:
        self._db = db
        self._store = chunks
        self._k1, self._b = bm25.validate_params(k1, b)
        self._lock = threading.Lock()
        self._memory: dict[tuple[str, IndexFields], LexicalIndex] = {}
        self._analyzers: dict[str, Analyzer] = {}
        self._rebuilt: list[str] = []

    @property
    def rebuilt(self) -> list[str]:
        """Indexes rebuilt by this object so far (``library/fields``, with ``(in memory)`` for
        a reader's build)."""
        with self._lock:
            return list(self._rebuilt)

    def _note_rebuilt(self, name: str) -> None:
        with self._lock:
            self._rebuilt.append(name)

    def _analyzer(self, config: Any) -> Analyzer:
        text = json.dumps(config, sort_keys=True)
        analyzer = self._analyzers.get(text)
        if analyzer is None:
            analyzer = self._analyzers[text] = Analyzer.from_config(config)
        return analyzer

    def get(self, library_id: str, fields: IndexFields) -> PostgresLexicalIndex | LexicalIndex:
        """The index to search: the last committed one (never written by this call); a field
        set no writer keeps is built in memory for this process."""
        with self._db.connection() as conn:
            row = conn.execute(_STATE, (library_id, fields.value)).fetchone()
        if row is not None:
            index_id, generation, config = row
            try:
                analyzer = self._analyzer(config)
            except ConfigError as exc:  # written by another RAGSpine version: the next writer
                log.warning(  # rebuilds it; until then this process searches in memory
                    "lexical index %s/%s cannot be used (%s): searching in memory",
                    library_id,
                    fields.value,
                    exc,
                )
                return self._in_memory(library_id, fields)
            return PostgresLexicalIndex(
                self._db, index_id, int(generation), analyzer, self._k1, self._b
            )
        return self._in_memory(library_id, fields)

    def _in_memory(self, library_id: str, fields: IndexFields) -> LexicalIndex:
        generation = self._store.generation(library_id)
        key = (library_id, fields)
        cached = self._memory.get(key)
        if cached is not None and cached.generation == generation:
            return cached
        index = LexicalIndex(Path("."), k1=self._k1, b=self._b, analyzer=Analyzer())
        rows = searchable(self._store.index_rows(library_id))
        index.rebuild(
            [row.key for row in rows],
            [indexed_text(fields, row) for row in rows],
            [row.sensitivity for row in rows],
        )
        index.mark_generation(generation)
        index.flush()
        with self._lock:
            self._memory = {**self._memory, key: index}
        self._note_rebuilt(f"{library_id}/{fields.value} (in memory)")
        return index

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Iterable[IndexRow],
        *,
        since: int,
        generation: int,
        known: TermSource | None = None,
    ) -> None:
        """Bring the library's indexes to ``generation`` in one transaction (the caller holds
        the library's write lock and has committed the chunk-store changes ``removed`` /
        ``added`` that moved it from ``since``). The maintained field sets are always written,
        others only when they exist; an index that was not at ``since`` (or holds another
        analyzer's terms) is rebuilt from the chunk store."""
        rows = searchable(added)
        config = Analyzer().to_config()
        written = 0
        with self._db.transaction() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':lexical:' "
                "|| %s, 0))",
                (library_id,),
            )
            growing: list[tuple[IndexFields, int]] = []
            for fields in IndexFields:
                row = conn.execute(_STATE, (library_id, fields.value)).fetchone()
                if row is None and fields not in MAINTAINED_FIELDS:
                    continue
                if row is not None and row[1] == generation == since:
                    continue
                committed = 0 if row is None else int(row[1])
                if committed != since or (row is not None and row[2] != config):
                    fresh = committed == 0
                    (log.info if fresh else log.warning)(
                        "lexical index %s/%s is at generation %s but the chunk store is at %s: "
                        "%s it from the chunk store",
                        library_id,
                        fields.value,
                        committed,
                        generation,
                        "building" if fresh else "rebuilding",
                    )
                    index_id = self._reset(conn, library_id, fields, config)
                    every = searchable(self._store.index_rows(library_id))
                    self._write_many(conn, [(fields, index_id)], every, None)
                    written += len(every)
                    self._finish(conn, index_id, generation)
                    self._note_rebuilt(f"{library_id}/{fields.value}")
                    continue
                if row is None:  # a new index, at generation 0 like the chunk store was
                    index_id = self._reset(conn, library_id, fields, config)
                else:
                    index_id = int(row[0])
                gone = list({*map(int, removed), *(r.key for r in rows)})
                if gone:
                    conn.execute(
                        "DELETE FROM lexical_postings WHERE index_id = %s AND key = ANY(%s)",
                        (index_id, gone),
                    )
                    conn.execute(
                        "DELETE FROM lexical_documents WHERE index_id = %s AND key = ANY(%s)",
                        (index_id, gone),
                    )
                growing.append((fields, index_id))
            if growing:
                self._write_many(conn, growing, rows, known)
                written += len(rows) * len(growing)
                for _, index_id in growing:
                    self._finish(conn, index_id, generation)
        if written >= VACUUM_AFTER_ROWS and not self._db.in_transaction:
            # Searches read the postings by index-only scans, which need the visibility map,
            # and the planner needs statistics of the new chunks: set both now rather than
            # when autovacuum comes by (SciFact: 0.1-0.2 s; searches just after an ingest
            # 13.5 -> 7.9 ms).
            with self._db.connection() as conn:
                conn.execute(
                    "VACUUM (ANALYZE) lexical_postings, lexical_documents, narrative_chunks, "
                    "narrative_parents, narrative_documents"
                )

    @staticmethod
    def _reset(conn: Any, library_id: str, fields: IndexFields, config: Any) -> int:
        """An empty index row for (library, fields) with ``config``; its id."""
        row = conn.execute(
            "INSERT INTO lexical_indexes (library, fields, generation, analyzer) "
            "VALUES (%s, %s, 0, %s) ON CONFLICT (library, fields) DO UPDATE SET analyzer = "
            "excluded.analyzer RETURNING id",
            (library_id, fields.value, json.dumps(config)),
        ).fetchone()
        index_id = int(row[0])
        for table in ("lexical_postings", "lexical_documents"):
            conn.execute(f"DELETE FROM {table} WHERE index_id = %s", (index_id,))
        return index_id

    @staticmethod
    def _write_many(
        conn: Any,
        targets: Sequence[tuple[IndexFields, int]],
        rows: Sequence[IndexRow],
        known: TermSource | None,
    ) -> None:
        """Insert the postings and documents of ``rows`` into each target index. Rows are
        analyzed :data:`APPLY_GROUP` at a time, once for every field set."""
        analyzer = Analyzer()
        with conn.cursor() as cur:
            for start in range(0, len(rows), APPLY_GROUP):
                group = rows[start : start + APPLY_GROUP]
                analyzed = AnalyzedRows(group, known)
                keys = [row.key for row in group]
                levels = [row.sensitivity for row in group]
                for fields, index_id in targets:
                    batch = analyzed.batch(analyzer, fields)
                    _copy_batch(cur, index_id, keys, levels, batch)

    @staticmethod
    def _finish(conn: Any, index_id: int, generation: int) -> None:
        """Recount the per-level statistics and record ``generation``."""
        conn.execute("DELETE FROM lexical_levels WHERE index_id = %s", (index_id,))
        conn.execute(_LEVELS, (index_id,))
        conn.execute(
            "UPDATE lexical_indexes SET generation = %s WHERE id = %s", (generation, index_id)
        )

    def drop(self, library_id: str) -> None:
        """Forget and delete every index of a library (rebuilt by the next writer)."""
        with self._lock:
            self._memory = {k: v for k, v in self._memory.items() if k[0] != library_id}
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM lexical_indexes WHERE library = %s", (library_id,))


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
"""COPY text format escapes (a term never holds these, but a key must never break a row)."""


def _copy_batch(
    cur: Any, index_id: int, keys: Sequence[int], levels: Sequence[int], batch: TermBatch
) -> None:
    """COPY the documents of ``batch`` (one per key) and their postings (one per distinct term
    of a document, with its count), as text blocks (row-by-row writes cost more than the
    server's work)."""
    lengths = batch.lengths.tolist()
    with cur.copy("COPY lexical_documents (index_id, key, level, length) FROM STDIN") as copy:
        copy.write(
            "".join(
                f"{index_id}\t{key}\t{level}\t{length}\n"
                for key, level, length in zip(keys, levels, lengths, strict=True)
            )
        )
    if not len(batch.term_ids):
        return
    width = len(batch.terms)
    doc_rows = np.repeat(np.arange(len(keys), dtype=np.int64), batch.lengths)
    pairs, tfs = np.unique(doc_rows * width + batch.term_ids, return_counts=True)
    docs, term_ids = (pairs // width).tolist(), (pairs % width).tolist()
    terms = [term.translate(_COPY_ESCAPES) for term in batch.terms]
    tails = [f"\t{key}\t" for key in keys]
    ends = [f"\t{level}\t{length}\n" for level, length in zip(levels, lengths, strict=True)]
    head = f"{index_id}\t"
    with cur.copy(
        "COPY lexical_postings (index_id, term, key, tf, level, length) FROM STDIN"
    ) as copy:
        copy.write(
            "".join(
                f"{head}{terms[term_id]}{tails[doc]}{tf}{ends[doc]}"
                for doc, term_id, tf in zip(docs, term_ids, tfs.tolist(), strict=True)
            )
        )
