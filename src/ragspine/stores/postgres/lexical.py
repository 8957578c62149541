"""BM25 search in PostgreSQL that ranks exactly like the embedded engine.

Terms come from our own :class:`~ragspine.analysis.Analyzer` (computed in Python at ingest, the
very terms the embedded index holds). An index is a set of immutable segments, as the embedded
engine keeps in files: each holds the documents of one sensitivity level written by one change,
and per term one block of packed ``(key, tf, length)`` postings; removed documents become the
segment's tombstones, and segments merge in tiers by the embedded engine's policy. A search reads,
in one round trip and one snapshot, the segments at or below the asker's level (their live
documents, total length and tombstones) and the blocks of the query terms in them, and scores in
Python with :mod:`~ragspine.narrative.index.lexical.bm25`: the arithmetic is the engine's,
operation for operation, and a document's term contributions are summed in the engine's order
(terms sorted), so scores are the same floating-point numbers and ties break by key as there.
Segments above the asker's level are never read.

Each (library, field set) has a generation: a writer applies a change to the segments in one
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragspine.analysis import Analyzer
from ragspine.errors import ConfigError, QueryError, StoreError
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
from ragspine.narrative.index.lexical.segments import (
    Segment,
    SegmentBuilder,
    apply_merge_policy,
    extend_by_level,
)
from ragspine.stores.chunks import ChunkStore, IndexRow
from ragspine.stores.postgres.database import Database

log = logging.getLogger("ragspine.narrative")

VACUUM_AFTER_ROWS = 2000
"""Index rows written by one change from which the postings are vacuumed and analyzed."""
_STATE = "SELECT id, generation, analyzer FROM lexical_indexes WHERE library = %s AND fields = %s"
POSTING = np.dtype([("key", "<i8"), ("tf", "<i4"), ("length", "<i4")])
"""One posting of a block: a document's key, the term's count in it and the document's length."""
DEAD = np.dtype("<i8")
"""A tombstone: the key of a document removed from its segment."""
INDEX = (
    "WITH i AS (SELECT id, generation, analyzer FROM lexical_indexes "
    "WHERE library = %(library)s AND fields = %(fields)s) "
    "SELECT i.analyzer::text, NULL::integer, i.generation, "
    "CASE WHEN i.generation >= COALESCE((SELECT generation FROM narrative_libraries "
    "WHERE library_id = %(library)s), 0) THEN 0 "
    "WHEN EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
    "AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = "
    "hashtextextended(current_schema() || ':library-' || %(library)s, 0)) THEN 0 "
    "ELSE 1 END::bigint, NULL::bytea FROM i"
)
"""The index's row (no segment): its analyzer (as JSON text), its generation, and 1 when it is
behind its library's row with no writer holding the library's lock (``Database.advisory_lock``:
``pg_locks`` shows a bigint key as its high and low 32 bits), i.e. left behind by a writer
killed between its two commits."""
SEGMENTS = (
    "SELECT NULL::text, segment, live::bigint, live_length, dead FROM i JOIN lexical_segments s "
    "ON s.index_id = i.id WHERE level <= %(level)s"
)
"""The segments the asker may read (no term): their live documents, total length and
tombstones."""
BLOCKS = (
    "SELECT b.term, b.segment, NULL::bigint, NULL::bigint, b.postings FROM i "
    "JOIN lexical_blocks b ON b.index_id = i.id "
    "JOIN lexical_segments s ON s.index_id = b.index_id AND s.segment = b.segment "
    "WHERE b.term = ANY(%(terms)s) AND s.level <= %(level)s"
)
"""The query terms' blocks in the segments the asker may read (a term and a segment)."""


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
    """One (library, field set) index in the database, searched as last committed."""

    index_sql = INDEX
    """The index row: its analyzer and generation."""
    segments_sql = SEGMENTS
    """The segments at or below a level, with their statistics and tombstones."""
    blocks_sql = BLOCKS
    """The query terms' blocks in the segments at or below a level."""

    def __init__(
        self,
        indexes: PostgresLexicalIndexes,
        library_id: str,
        fields: IndexFields,
        analyzer: Analyzer,
        k1: float,
        b: float,
    ) -> None:
        self._indexes = indexes
        self._db = indexes.db
        self._library = library_id
        self._fields = fields
        self.analyzer = analyzer
        """The analyzer of the index when last read (the query's terms are its terms)."""
        self.k1, self.b = k1, b

    @property
    def generation(self) -> int:
        """The chunk-store generation the committed index reflects (0: none)."""
        with self._db.connection() as conn:
            row = conn.execute(_STATE, (self._library, self._fields.value)).fetchone()
        return 0 if row is None else int(row[1])

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
        over the documents at or below ``max_level`` and ``allowed`` applied before the cut.

        One statement, so one snapshot and one round trip: the index row, its segments and the
        query terms' blocks of one commit. The query is analyzed with the analyzer the index
        had when last read; when a writer has since rebuilt it with another, it is analyzed
        again and read again; when the index is gone, or a writer killed between its two
        commits left it behind its library, it is searched in memory."""
        check_search_args(top_k, max_level)
        wanted = allowed_keys(allowed) if allowed is not None else None
        if top_k == 0:
            return []
        for _ in range(2):
            analyzer = self.analyzer
            qterms = Counter(analyzer.tokens(query))
            terms = sorted(qterms)  # none: the index row still says whether the analyzer holds
            params: dict[str, Any] = {
                "library": self._library, "fields": self._fields.value, "level": max_level,
                "terms": terms,
            }  # fmt: skip
            with self._db.connection() as conn:
                found = conn.execute(
                    f"{self.index_sql} UNION ALL {self.segments_sql} UNION ALL {self.blocks_sql}",
                    params,
                    binary=True,
                ).fetchall()
            state = next((row for row in found if row[1] is None), None)
            committed = self._indexes.committed_analyzer(
                self._library, self._fields, json.loads(state[0]) if state else None
            )
            if committed is None or committed == analyzer:
                break
            self.analyzer = committed
        if committed is None or committed != analyzer or (state is not None and state[3] == 1):
            fallback = self._indexes.in_memory(self._library, self._fields)
            return fallback.search(query, top_k, max_level=max_level, allowed=allowed, stats=stats)
        if not qterms:
            return []
        visible = [row[1:] for row in found if row[0] is None]
        blocks = [row[:2] + row[4:] for row in found if row[0] is not None and row[1] is not None]
        n_docs = sum(int(row[1]) for row in visible)
        total_length = sum(int(row[2]) for row in visible)
        per_term = _live_postings(
            {int(row[0]): _unpacked(row[3], DEAD, f"segment {row[0]}") for row in visible}, blocks
        )
        if n_docs == 0 or not per_term or total_length <= 0:
            return []
        if wanted is not None:
            keep = np.asarray(wanted, dtype=np.int64)
            if stats is not None:  # set as the engine does: once some document matched
                matched = np.unique(np.concatenate([p["key"] for p in per_term.values()]))
                stats["filtered"] = int(np.count_nonzero(~np.isin(matched, keep)))
        elif stats is not None:
            stats["filtered"] = 0
        postings = []
        for term in terms:  # the engine's order
            found_term = per_term.get(term)
            if found_term is None:
                continue
            weight = qterms[term] * float(bm25.idf(len(found_term), n_docs))
            if wanted is not None:
                found_term = found_term[np.isin(found_term["key"], keep)]
            if len(found_term):
                postings.append((weight, found_term))
        return _scored(postings, total_length / n_docs, self.k1, self.b, top_k)


def _unpacked(data: bytes, dtype: np.dtype[Any], what: str) -> np.ndarray:
    """The records of ``dtype`` packed in ``data``, or a :class:`StoreError` naming ``what``
    when its length says it is damaged."""
    if len(data) % dtype.itemsize:
        raise StoreError(
            f"the lexical index's {what} is damaged ({len(data)} bytes): delete the library's "
            "rows of lexical_indexes and its next writer rebuilds the index from the chunk store"
        )
    return np.frombuffer(data, dtype=dtype)


def _live_postings(
    dead: dict[int, np.ndarray], blocks: Sequence[tuple[Any, ...]]
) -> dict[str, np.ndarray]:
    """Each term's live postings (:data:`POSTING` records) from its ``(term, segment,
    postings)`` blocks, leaving out the keys ``dead`` lists for a block's segment; terms with
    none are left out."""
    parts: dict[str, list[np.ndarray]] = {}
    for term, segment, data in blocks:
        postings = _unpacked(data, POSTING, f"block {term!r} of segment {segment}")
        tombstones = dead.get(int(segment))
        if tombstones is None:  # never read what the segments read do not cover
            raise StoreError(f"lexical block of segment {segment} outside the segments read")
        if len(tombstones):
            postings = postings[~np.isin(postings["key"], tombstones)]
        if len(postings):
            parts.setdefault(term, []).append(postings)
    return {
        term: found[0] if len(found) == 1 else np.concatenate(found)
        for term, found in parts.items()
    }


def _scored(
    postings: Sequence[tuple[float, np.ndarray]], avgdl: float, k1: float, b: float, top_k: int
) -> list[tuple[int, float]]:
    """The best ``top_k`` (key, score) pairs of each query term's ``(weight, postings)`` (terms
    in sorted order, :data:`POSTING` records), scored with the engine's functions in the engine's
    order (each document's contributions added one term at a time), so the scores are the
    engine's floating-point numbers and ties break by key as there."""
    if not postings:
        return []
    keys, rows = np.unique(np.concatenate([p["key"] for _, p in postings]), return_inverse=True)
    scores = np.zeros(len(keys), dtype=np.float64)
    start = 0
    for weight, found in postings:
        where = rows[start : start + len(found)]
        start += len(found)
        norms = bm25.length_norms(found["length"], avgdl, k1, b)
        scores[where] += bm25.term_scores(found["tf"], norms, weight)
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
        self._known: dict[tuple[str, IndexFields], Analyzer] = {}
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

    @property
    def db(self) -> Database:
        return self._db

    def committed_analyzer(
        self, library_id: str, fields: IndexFields, config: Any | None
    ) -> Analyzer | None:
        """The analyzer of the committed index of (library, fields) whose analyzer config is
        ``config`` (``None``: there is none), remembered for the next :meth:`get`; ``None``
        when there is no index or its analyzer cannot be used (written by another RAGSpine
        version: the next writer rebuilds it, until then this process searches in memory)."""
        key = (library_id, fields)
        analyzer = None
        if config is not None:
            text = json.dumps(config, sort_keys=True)
            analyzer = self._analyzers.get(text)
            if analyzer is None:
                try:
                    if not isinstance(config, dict):
                        raise ConfigError(f"analyzer config is not an object: {text[:80]}")
                    analyzer = Analyzer.from_config(config)
                except ConfigError as exc:
                    log.warning(
                        "lexical index %s/%s cannot be used (%s): searching in memory",
                        library_id,
                        fields.value,
                        exc,
                    )
                else:
                    with self._lock:
                        analyzer = self._analyzers.setdefault(text, analyzer)
        if self._known.get(key) is analyzer:  # every search asks: change nothing when current
            return analyzer
        with self._lock:
            known = dict(self._known)
            if analyzer is None:
                known.pop(key, None)
            else:
                known[key] = analyzer
            self._known = known
        return analyzer

    def get(self, library_id: str, fields: IndexFields) -> PostgresLexicalIndex | LexicalIndex:
        """The index to search: the last committed one (never written by this call); a field
        set no writer keeps is built in memory for this process. An index read before costs no
        round trip here (its search reads the index row with its postings)."""
        analyzer = self._known.get((library_id, fields))
        if analyzer is None:
            with self._db.connection() as conn:
                row = conn.execute(_STATE, (library_id, fields.value)).fetchone()
            analyzer = self.committed_analyzer(
                library_id, fields, row[2] if row is not None else None
            )
            if analyzer is None:
                return self.in_memory(library_id, fields)
        return PostgresLexicalIndex(self, library_id, fields, analyzer, self._k1, self._b)

    def in_memory(self, library_id: str, fields: IndexFields) -> LexicalIndex:
        """The index of (library, fields) built in memory from the chunk store (kept while
        the library's generation stays)."""
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
                _remove(conn, index_id, {*map(int, removed), *(r.key for r in rows)})
                growing.append((fields, index_id))
            if growing:
                self._write_many(conn, growing, rows, known)
                written += len(rows) * len(growing)
                for _, index_id in growing:
                    self._finish(conn, index_id, generation)
        if written >= VACUUM_AFTER_ROWS and not self._db.in_transaction:
            # The planner needs statistics of the new chunks and blocks: set them now rather
            # than when autovacuum comes by (searches just after a SciFact ingest were 13.5 ms
            # without, 7.9 ms with).
            with self._db.connection() as conn:
                conn.execute(
                    "VACUUM (ANALYZE) lexical_blocks, lexical_segments, lexical_documents, "
                    "narrative_chunks, narrative_parents, narrative_documents"
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
        for table in ("lexical_blocks", "lexical_documents", "lexical_segments"):
            conn.execute(f"DELETE FROM {table} WHERE index_id = %s", (index_id,))
        return index_id

    @staticmethod
    def _write_many(
        conn: Any,
        targets: Sequence[tuple[IndexFields, int]],
        rows: Sequence[IndexRow],
        known: TermSource | None,
    ) -> None:
        """Write ``rows`` into each target index as new segments (one per level), then merge
        by the engine's policy. Rows are analyzed :data:`APPLY_GROUP` at a time, once for every
        field set."""
        analyzer = Analyzer()
        builders: dict[int, dict[int, SegmentBuilder]] = {index_id: {} for _, index_id in targets}
        for start in range(0, len(rows), APPLY_GROUP):
            group = rows[start : start + APPLY_GROUP]
            analyzed = AnalyzedRows(group, known)
            keys = [row.key for row in group]
            levels = [row.sensitivity for row in group]
            for fields, index_id in targets:
                extend_by_level(builders[index_id], keys, analyzed.batch(analyzer, fields), levels)
        for _, index_id in targets:
            for _, builder in sorted(builders[index_id].items()):
                _write_segment(conn, index_id, builder.build())
            _merge(conn, index_id)

    @staticmethod
    def _finish(conn: Any, index_id: int, generation: int) -> None:
        """Record ``generation``."""
        conn.execute(
            "UPDATE lexical_indexes SET generation = %s WHERE id = %s", (generation, index_id)
        )

    def drop(self, library_id: str) -> None:
        """Forget and delete every index of a library (rebuilt by the next writer)."""
        with self._lock:
            self._memory = {k: v for k, v in self._memory.items() if k[0] != library_id}
        with self._db.transaction() as conn:
            conn.execute("DELETE FROM lexical_indexes WHERE library = %s", (library_id,))


@dataclass(frozen=True, slots=True)
class StoredSegment:
    """What the merge policy reads of a segment in the database."""

    segment: int
    level: int
    n_docs: int
    n_live: int


def _remove(conn: Any, index_id: int, keys: Collection[int]) -> None:
    """Tombstone the documents ``keys`` (those the index holds) in their segments."""
    if not keys:
        return
    gone = conn.execute(
        "DELETE FROM lexical_documents WHERE index_id = %s AND key = ANY(%s) "
        "RETURNING segment, key, length",
        (index_id, list(keys)),
    ).fetchall()
    by_segment: dict[int, list[tuple[int, int]]] = {}
    for segment, key, length in gone:
        by_segment.setdefault(int(segment), []).append((int(key), int(length)))
    if by_segment:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE lexical_segments SET live = live - %s, live_length = live_length - %s, "
                "dead = dead || %s WHERE index_id = %s AND segment = %s",
                [
                    (
                        len(docs),
                        sum(length for _, length in docs),
                        np.asarray([key for key, _ in docs], dtype=DEAD).tobytes(),
                        index_id,
                        segment,
                    )
                    for segment, docs in by_segment.items()
                ],
            )


def _write_segment(conn: Any, index_id: int, segment: Segment) -> StoredSegment:
    """Store ``segment`` (built in memory, every document live) as a new segment of the index:
    its row, its documents and one block per term."""
    packed = np.empty(len(segment.post_docs), dtype=POSTING)
    packed["key"] = segment.keys[segment.post_docs]
    packed["tf"] = segment.post_tf
    packed["length"] = segment.lengths[segment.post_docs]
    ptr = segment.term_ptr.tolist()
    return _store(
        conn,
        index_id,
        segment.level,
        segment.keys,
        segment.lengths,
        ((term, packed[ptr[i] : ptr[i + 1]]) for i, term in enumerate(segment.terms)),
    )


def _store(
    conn: Any,
    index_id: int,
    level: int,
    keys: np.ndarray,
    lengths: np.ndarray,
    blocks: Iterable[tuple[str, np.ndarray]],
) -> StoredSegment:
    """A new segment of ``level`` holding the documents ``keys`` (of ``lengths``, all live)
    with the given per-term blocks of :data:`POSTING` records; COPY is the fastest way in."""
    row = conn.execute(
        "INSERT INTO lexical_segments (index_id, level, documents, live, live_length) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING segment",
        (index_id, level, len(keys), len(keys), int(lengths.sum(dtype=np.int64))),
    ).fetchone()
    segment = int(row[0])
    with conn.cursor() as cur:
        with cur.copy("COPY lexical_documents (index_id, key, segment, length) FROM STDIN") as copy:
            copy.write(
                "".join(
                    f"{index_id}\t{key}\t{segment}\t{length}\n"
                    for key, length in zip(keys.tolist(), lengths.tolist(), strict=True)
                )
            )
        with cur.copy(
            "COPY lexical_blocks (index_id, segment, term, postings) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(["int4", "int4", "text", "bytea"])
            for term, postings in blocks:
                copy.write_row((index_id, segment, term, postings.tobytes()))
    return StoredSegment(segment, level, len(keys), len(keys))


def _merge(conn: Any, index_id: int) -> None:
    """Drop the index's segments with no live document left, then merge the rest by the
    embedded engine's policy (tiers of one level, tombstone-heavy segments compacted)."""
    rows = conn.execute(
        "SELECT segment, level, documents, live FROM lexical_segments WHERE index_id = %s "
        "ORDER BY segment",
        (index_id,),
    ).fetchall()
    segments = [StoredSegment(*map(int, row)) for row in rows]
    empty = [s.segment for s in segments if s.n_live == 0]
    if empty:
        _delete_segments(conn, index_id, empty)
    apply_merge_policy(
        [s for s in segments if s.n_live > 0], lambda group: _merged(conn, index_id, group)
    )


def _merged(conn: Any, index_id: int, group: Sequence[StoredSegment]) -> StoredSegment:
    """One new segment with the live documents of ``group`` (one level), which are deleted."""
    ids = [s.segment for s in group]
    dead = {
        int(segment): _unpacked(tombstones, DEAD, f"segment {segment}")
        for segment, tombstones in conn.execute(
            "SELECT segment, dead FROM lexical_segments WHERE index_id = %s AND segment = ANY(%s)",
            (index_id, ids),
            binary=True,
        ).fetchall()
    }
    per_term = _live_postings(
        dead,
        conn.execute(
            "SELECT term, segment, postings FROM lexical_blocks "
            "WHERE index_id = %s AND segment = ANY(%s)",
            (index_id, ids),
            binary=True,
        ).fetchall(),
    )
    documents = conn.execute(
        "SELECT key, length FROM lexical_documents WHERE index_id = %s AND segment = ANY(%s) "
        "ORDER BY key",
        (index_id, ids),
    ).fetchall()
    keys = np.asarray([key for key, _ in documents], dtype=np.int64)
    lengths = np.asarray([length for _, length in documents], dtype=np.int32)
    conn.execute(
        "DELETE FROM lexical_documents WHERE index_id = %s AND segment = ANY(%s)", (index_id, ids)
    )
    _delete_segments(conn, index_id, ids)
    return _store(conn, index_id, group[0].level, keys, lengths, sorted(per_term.items()))


def _delete_segments(conn: Any, index_id: int, segments: list[int]) -> None:
    for table in ("lexical_blocks", "lexical_segments"):
        conn.execute(
            f"DELETE FROM {table} WHERE index_id = %s AND segment = ANY(%s)", (index_id, segments)
        )
