"""The PostgreSQL :class:`~ragspine.stores.embeddings.EmbeddingCache`: one table shared by every
host of the workspace, vectors kept exactly (``real[]``). Restricted vectors are never stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragspine.stores.embeddings import storable
from ragspine.stores.postgres.database import Database

_BATCH = 5000
"""Hashes per statement when reading many at once."""


class PostgresEmbeddingCache:
    """Float32 vectors looked up by content hash and model id, in the workspace database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_many(self, hashes: Sequence[str], model_id: str) -> dict[str, np.ndarray]:
        """Cached vectors of ``hashes`` for ``model_id``; absent hashes are left out."""
        unique = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        with self._db.connection() as conn:
            for start in range(0, len(unique), _BATCH):
                rows = conn.execute(
                    "SELECT content_hash, embedding FROM embedding_cache "
                    "WHERE model_id = %s AND content_hash = ANY(%s)",
                    (model_id, unique[start : start + _BATCH]),
                ).fetchall()
                for digest, embedding in rows:
                    found[digest] = np.asarray(embedding, dtype=np.float32)
        return found

    def put_many(
        self,
        hashes: Sequence[str],
        model_id: str,
        vectors: np.ndarray,
        *,
        levels: Sequence[int],
    ) -> int:
        """Store vectors by hash for ``model_id``, skipping restricted ones; returns rows stored."""
        # one row per hash: the last vector given wins
        kept = {digest: vector.tolist() for digest, vector in storable(hashes, vectors, levels)}
        if not kept:
            return 0
        with self._db.transaction() as conn, conn.cursor() as cur:
            cur.execute(
                "CREATE TEMP TABLE IF NOT EXISTS incoming_embeddings (content_hash text, "
                "embedding real[]) ON COMMIT DELETE ROWS"
            )
            cur.execute("TRUNCATE incoming_embeddings")  # an outer transaction may have used it
            with cur.copy("COPY incoming_embeddings (content_hash, embedding) FROM STDIN") as copy:
                for digest, vector in kept.items():
                    copy.write_row((digest, vector))
            cur.execute(
                "INSERT INTO embedding_cache (content_hash, model_id, embedding) "
                "SELECT content_hash, %s, embedding FROM incoming_embeddings "
                "ON CONFLICT (content_hash, model_id) DO UPDATE SET embedding = excluded.embedding",
                (model_id,),
            )
        return len(kept)

    def drop_model(self, model_id: str) -> int:
        """Delete every vector of ``model_id`` (after a model change); returns rows deleted."""
        with self._db.connection() as conn:
            cursor = conn.execute("DELETE FROM embedding_cache WHERE model_id = %s", (model_id,))
        return cursor.rowcount

    def __len__(self) -> int:
        with self._db.connection() as conn:
            row = conn.execute("SELECT count(*) FROM embedding_cache").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """The database (and its pool) belongs to the backend, which closes it."""
