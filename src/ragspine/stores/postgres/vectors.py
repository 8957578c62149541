"""Per-library vectors in pgvector, searched through an HNSW index (cosine), and the embedder.

The same upkeep as the embedded :class:`~ragspine.narrative.index.vector.library_vectors.
LibraryVectors`: chunks are embedded after they are written (title, heading path and text)
through the workspace's embedding cache, here the database's
(:class:`~ragspine.stores.postgres.embeddings.PostgresEmbeddingCache`), so every host shares
it; restricted chunks are neither embedded nor stored. Which model a library's vectors come from
(model id and dimension) and the chunk-store generation they reflect live in the database
(``vector_libraries``), never in a local file, since several hosts share them.

A writer embeds first (each slice of vectors lands in the cache as it is embedded, so a stopped
run resumes) and then, in one transaction, replaces the library's rows from the cache and records
the generation: a search sees the last committed state whole. Each library has its own HNSW
index, a partial index over ``embedding::vector(dim)``, made when its vectors are first written.

A search applies the asker's level and the ``allowed`` keys in SQL before the top-k, with
pgvector's iterative index scan (``hnsw.iterative_scan``) so a selective filter does not starve
the result; scores are cosine similarities (the inner products of the normalised vectors an
:class:`Embedder` returns), sorted descending, ties (equal to :data:`TIE_DECIMALS` decimals) by
key.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragspine.errors import ConfigError, QueryError, StoreError
from ragspine.narrative.index.embed.settings import EmbedSettings
from ragspine.narrative.index.lexical.library_indexes import searchable
from ragspine.narrative.index.vector.library_vectors import (
    ADD_SLICE,
    EmbeddingSide,
    EmbedProgress,
    default_embedder,
    embedded_text,
)
from ragspine.security import Sensitivity
from ragspine.stores.chunks import ChunkStore
from ragspine.stores.postgres.database import Database
from ragspine.stores.postgres.lexical import allowed_keys

if TYPE_CHECKING:
    from ragspine.narrative.index.embed.model import Embedder
    from ragspine.stores.embeddings import EmbeddingCache

log = logging.getLogger("ragspine.narrative")

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
EF_SEARCH = 100
"""Candidates the HNSW search keeps (at least ``top_k``); pgvector allows 1 to 1000."""
ITERATIVE_SCAN = "strict_order"
"""pgvector's ``hnsw.iterative_scan``: the index scan goes on until ``top_k`` rows pass the
filters (in distance order)."""
TIE_MARGIN = 16
"""Extra nearest rows fetched beyond ``top_k``, so rows tied at the cut are all seen and the
cut takes the smallest keys among them."""
TIE_DECIMALS = 6
"""Scores equal to this many decimals tie (and break by key): the server computes cosines in
an order of its own, so equal cosines may differ in their last bits."""
RESTRICTED = int(Sensitivity.RESTRICTED)
_STATE = "SELECT model_id, dim, generation FROM vector_libraries WHERE library = %s"


def _reembed_hint(library: str) -> str:
    return f"re-embed it with `ragspine reembed --library {library}`"


def index_name(library_id: str) -> str:
    """The name of the library's HNSW index (library names may hold '.' and '-')."""
    return "chunk_vectors_hnsw_" + hashlib.sha256(library_id.encode("utf-8")).hexdigest()[:20]


def vector_text(vector: Any) -> str:
    """A vector as pgvector's text input; float32 values round-trip exactly."""
    values = np.asarray(vector, dtype=np.float32).ravel().tolist()
    return "[" + ",".join(repr(value) for value in values) + "]"


def create_hnsw_index(conn: Any, library_id: str, dim: int) -> None:
    """Make the library's HNSW index (cosine, over ``embedding::vector(dim)``) if it has none."""
    from psycopg import sql

    conn.execute(
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS {name} ON chunk_vectors USING hnsw "
            "((embedding::vector({dim})) vector_cosine_ops) "
            "WITH (m = {m}, ef_construction = {ef}) WHERE library = {library}"
        ).format(
            name=sql.Identifier(index_name(library_id)),
            dim=sql.Literal(dim),
            m=sql.Literal(HNSW_M),
            ef=sql.Literal(HNSW_EF_CONSTRUCTION),
            library=sql.Literal(library_id),
        )
    )


class PostgresVectorIndex:
    """One library's committed vectors: what a search needs of them."""

    kind = "hnsw"

    def __init__(
        self, db: Database, library_id: str, model_id: str, dim: int, generation: int
    ) -> None:
        self._db = db
        self.library = library_id
        self.model_id = model_id
        self.dim = dim
        self.generation = generation

    def __len__(self) -> int:
        with self._db.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM chunk_vectors WHERE library = %s", (self.library,)
            ).fetchone()
        return int(row[0]) if row else 0

    def search(
        self,
        query: np.ndarray,
        top_k: int,
        *,
        max_level: int,
        allowed: Collection[int] | np.ndarray | None = None,
        exact: bool = False,
    ) -> list[tuple[int, float]]:
        """The ``top_k`` best keys with level <= ``max_level`` (and in ``allowed`` when given),
        by cosine similarity, then key; ``exact`` scans every row instead of the HNSW index
        (for measuring its recall)."""
        from psycopg import sql

        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != self.dim:
            raise QueryError(f"query vector has {q.shape[0]} dimensions, the index {self.dim}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise QueryError(f"top_k must be at least 1, got {top_k}")
        wanted = allowed_keys(allowed) if allowed is not None else None
        if wanted is not None and not wanted:
            return []
        level = min(int(max_level), RESTRICTED - 1)
        distance = sql.SQL("embedding::vector({dim}) <=> %(q)s::vector({dim})").format(
            dim=sql.Literal(self.dim)
        )
        statement = sql.SQL(
            "WITH nearest AS MATERIALIZED (SELECT key, {distance} AS distance FROM chunk_vectors "
            "WHERE library = {library} AND level <= %(level)s {allowed} "
            "ORDER BY {distance} LIMIT %(top_k)s) "
            "SELECT key, 1 - distance FROM nearest ORDER BY distance, key"
        ).format(
            distance=distance,
            library=sql.Literal(self.library),
            allowed=sql.SQL("AND key = ANY(%(allowed)s)" if wanted is not None else ""),
        )
        params = {
            "q": vector_text(q),
            "level": level,
            "top_k": top_k + TIE_MARGIN,
            "allowed": wanted,
        }
        if exact:
            settings = [("enable_indexscan", "off")]
        else:
            ef_search = min(1000, max(EF_SEARCH, top_k + TIE_MARGIN))
            settings = [("hnsw.iterative_scan", ITERATIVE_SCAN), ("hnsw.ef_search", str(ef_search))]
        own = not self._db.in_transaction
        with self._db.connection() as conn:
            with conn.pipeline():  # one round trip: the settings hold for this transaction only
                if own:
                    conn.execute("BEGIN READ ONLY")
                for name, value in settings:
                    conn.execute("SELECT set_config(%s, %s, true)", (name, value))
                found = conn.execute(statement, params, prepare=False)
                if own:
                    conn.execute("COMMIT")
            rows = found.fetchall()
        hits = [(int(key), float(score)) for key, score in rows]
        hits.sort(key=lambda hit: (-round(hit[1], TIE_DECIMALS), hit[0]))
        return hits[:top_k]


class PostgresLibraryVectors(EmbeddingSide):
    """Opens, rebuilds and updates every library's vectors in the workspace database (the
    :class:`~ragspine.narrative.index.vector.library_vectors.LibraryVectors` of a PostgreSQL
    workspace). ``local_dir`` holds nothing of the index; it is kept for the embedder's
    machine-local files."""

    def __init__(
        self,
        db: Database,
        chunks: ChunkStore,
        local_dir: Path,
        *,
        embedder_factory: Callable[[EmbedSettings], Embedder] = default_embedder,
        settings: EmbedSettings | None = None,
    ) -> None:
        super().__init__(chunks, embedder_factory, settings)
        self._db = db
        self.local_dir = Path(local_dir)

    def _open_cache(self) -> EmbeddingCache:
        from ragspine.stores.postgres.embeddings import PostgresEmbeddingCache

        return PostgresEmbeddingCache(self._db)

    # -- the indexes -----------------------------------------------------------------------

    def _state(self, library_id: str) -> tuple[str, int, int] | None:
        with self._db.connection() as conn:
            row = conn.execute(_STATE, (library_id,)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]))

    def _checked(self, library_id: str, state: tuple[str, int, int] | None) -> None:
        """A :class:`StoreError` when the library's vectors come from another model."""
        if state is None:
            return
        model_id, dim = self._identity()
        if state[0] != model_id:
            raise StoreError(
                f"the vectors of library {library_id!r} were made with embedding model "
                f"{state[0]!r} but the configured model is {model_id!r}: "
                f"{_reembed_hint(library_id)}"
            )
        if state[1] != dim:
            raise StoreError(
                f"the vectors of library {library_id!r} have {state[1]} dimensions, the model "
                f"gives {dim}: {_reembed_hint(library_id)}"
            )

    def check(self, library_id: str) -> None:
        """Fail before any write when the library's vectors come from another model."""
        self._checked(library_id, self._state(library_id))

    def get(self, library_id: str) -> PostgresVectorIndex:
        """The library's vectors as last committed (never written by this call)."""
        self._require_vectors(library_id)
        state = self._state(library_id)
        self._checked(library_id, state)
        if state is None:
            model_id, dim = self._identity()
            return PostgresVectorIndex(self._db, library_id, model_id, dim, 0)
        return PostgresVectorIndex(self._db, library_id, *state)

    def complete(self, library_id: str) -> bool:
        """Whether the library's committed vectors cover its chunk store (for writers and
        operators: it counts writes of every level, so no search depends on it)."""
        state = self._state(library_id)
        return state is not None and state[2] == self._store.generation(library_id)

    def _require_vectors(self, library_id: str) -> None:
        if not self._store.library(library_id).vectors:
            raise ConfigError(
                f"library {library_id!r} keeps no vectors: turn them on with "
                f"`ragspine library vectors {library_id} on` (or create it with --vectors), "
                "or search it in a lexical mode"
            )

    def refresh(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Bring the library's vectors up to the chunk store (the caller holds the library's
        write lock); returns the number of vectors stored."""
        self._require_vectors(library_id)
        state = self._state(library_id)
        self._checked(library_id, state)
        generation = self._store.generation(library_id)
        if state is None or state[2] != generation:
            self._rebuild(library_id, state, generation, progress)
        return len(self.get(library_id))

    def _rebuild(
        self,
        library_id: str,
        state: tuple[str, int, int] | None,
        generation: int,
        progress: EmbedProgress | None,
    ) -> None:
        fresh = state is None or state[2] == 0
        (log.info if fresh else log.warning)(
            "vectors of %s are at generation %s but the chunk store is at %s: %s them",
            library_id,
            None if state is None else state[2],
            generation,
            "building" if fresh else "rebuilding",
        )
        keys = [row.key for row in searchable(self._store.index_rows(library_id))]
        staged = self._embed_keys(keys, progress)
        self._commit(library_id, None, staged, generation)
        with self._lock:
            self._rebuilt.append(f"{library_id}/vectors")

    def _embed_keys(
        self, keys: Sequence[int], progress: EmbedProgress | None
    ) -> list[tuple[int, int, str]]:
        """Embed the chunks of ``keys`` into the cache, :data:`ADD_SLICE` at a time (so a
        stopped run keeps what it embedded); returns ``(key, level, content hash)`` of each."""
        from ragspine.narrative.index.embed.cache import content_hash

        staged: list[tuple[int, int, str]] = []
        slices = [keys[start : start + ADD_SLICE] for start in range(0, len(keys), ADD_SLICE)]
        total = len(keys)
        for number, part in enumerate(slices):
            offset = number * ADD_SLICE

            def report(done: int, _: int, offset: int = offset) -> None:
                if progress is not None:
                    progress(min(total, offset + done), total)

            rows = self._rows(part)
            texts = [embedded_text(row.title, row.heading, row.text) for row in rows]
            levels = [row.sensitivity for row in rows]
            self.embed(texts, levels, progress=report)
            staged += [
                (row.key, row.sensitivity, content_hash(text))
                for row, text in zip(rows, texts, strict=True)
            ]
        return staged

    def _commit(
        self,
        library_id: str,
        removed: Sequence[int] | None,
        staged: Sequence[tuple[int, int, str]],
        generation: int,
    ) -> None:
        """In one transaction: drop ``removed`` keys (``None``: every row) and the staged keys,
        insert the staged vectors from the cache, record the model and ``generation``, and make
        the library's HNSW index if it has none."""

        model_id, dim = self._identity()
        keys = [key for key, _, _ in staged]
        with self._db.transaction() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':vectors:' "
                "|| %s, 0))",
                (library_id,),
            )
            conn.execute(
                "INSERT INTO vector_libraries (library, model_id, dim, generation) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (library) DO UPDATE SET "
                "model_id = excluded.model_id, dim = excluded.dim, "
                "generation = excluded.generation",
                (library_id, model_id, dim, generation),
            )
            if removed is None:
                conn.execute("DELETE FROM chunk_vectors WHERE library = %s", (library_id,))
            elif removed or keys:
                conn.execute(
                    "DELETE FROM chunk_vectors WHERE library = %s AND key = ANY(%s)",
                    (library_id, [*map(int, removed), *keys]),
                )
            if staged:
                inserted = conn.execute(
                    "INSERT INTO chunk_vectors (library, key, level, embedding) "
                    "SELECT %s, k.key, k.level, c.embedding::vector "
                    "FROM unnest(%s::bigint[], %s::smallint[], %s::text[]) AS k(key, level, hash) "
                    "JOIN embedding_cache c ON c.content_hash = k.hash AND c.model_id = %s",
                    (
                        library_id,
                        keys,
                        [level for _, level, _ in staged],
                        [digest for _, _, digest in staged],
                        model_id,
                    ),
                ).rowcount
                if inserted != len(staged):
                    raise StoreError(
                        f"the embedding cache lost {len(staged) - inserted} vectors of library "
                        f"{library_id!r} while they were written (a model dropped meanwhile?): "
                        "run this again"
                    )
            create_hnsw_index(conn, library_id, dim)

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Sequence[int],
        *,
        since: int,
        generation: int,
        progress: EmbedProgress | None = None,
    ) -> None:
        """Apply committed chunk-store changes (``since`` -> ``generation``: the keys of the
        chunks ``removed`` and ``added``); vectors that were not at ``since`` are rebuilt
        instead. Searches see the change once it is committed."""
        state = self._state(library_id)
        self._checked(library_id, state)
        committed = 0 if state is None else state[2]
        if committed != since and committed != generation:
            self._rebuild(library_id, state, generation, progress)
        elif committed != generation:
            staged = self._embed_keys(list(added), progress)
            self._commit(library_id, list(removed), staged, generation)

    def reembed(self, library_id: str, *, progress: EmbedProgress | None = None) -> int:
        """Drop the library's vectors and build them again with the current embedder; returns
        the number of vectors stored."""
        self._require_vectors(library_id)
        self.drop(library_id)
        return self.refresh(library_id, progress=progress)

    def drop(self, library_id: str) -> None:
        """Delete the library's vectors and their index (rebuilt on demand)."""
        from psycopg import sql

        with self._db.transaction() as conn:
            conn.execute(
                sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(index_name(library_id)))
            )
            conn.execute("DELETE FROM vector_libraries WHERE library = %s", (library_id,))
