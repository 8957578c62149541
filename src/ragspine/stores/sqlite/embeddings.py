"""The SQLite :class:`~ragspine.stores.embeddings.EmbeddingCache`: one table in its own file
(``indexes/embedding-cache.sqlite``). Restricted vectors are never stored.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragspine.errors import StoreError
from ragspine.stores.embeddings import storable
from ragspine.stores.sqlite.connect import ThreadConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    content_hash TEXT NOT NULL,
    model_id     TEXT NOT NULL,
    dim          INTEGER NOT NULL,
    vector       BLOB NOT NULL,
    PRIMARY KEY (content_hash, model_id)
) WITHOUT ROWID
"""


class SQLiteEmbeddingCache:
    """Float32 vectors in one SQLite table, looked up by content hash and model id.

    Safe to share between threads: each thread uses its own connection.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # Closed by close() from whichever thread calls it; used only by the thread that opened it.
        self._connections = ThreadConnections(
            lambda: sqlite3.connect(self.path, check_same_thread=False)
        )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._db:
                self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            self._connections.close()
            raise StoreError(f"cannot open embedding cache {self.path}: {exc}") from exc

    @property
    def _db(self) -> sqlite3.Connection:
        """The calling thread's connection."""
        return self._connections.get()

    def close(self) -> None:
        """Close every thread's database connection."""
        self._connections.close()

    def __enter__(self) -> SQLiteEmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, hashes: Sequence[str], model_id: str) -> dict[str, np.ndarray]:
        """Cached vectors of ``hashes`` for ``model_id``; absent hashes are left out."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):  # stay under SQLite's variable limit
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT content_hash, dim, vector FROM embedding_cache "
                f"WHERE model_id = ? AND content_hash IN ({marks})",
                [model_id, *chunk],
            )
            for digest, dim, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape != (dim,):
                    raise StoreError(
                        f"embedding cache {self.path} has a damaged row for {digest}: "
                        "delete the file to rebuild it"
                    )
                found[digest] = vector.copy()
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
        rows = [
            (digest, model_id, len(vector), vector.tobytes())
            for digest, vector in storable(hashes, vectors, levels)
        ]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO embedding_cache VALUES (?, ?, ?, ?)", rows)
        return len(rows)

    def drop_model(self, model_id: str) -> int:
        """Delete every vector of ``model_id`` (after a model change); returns rows deleted."""
        with self._db:
            cursor = self._db.execute("DELETE FROM embedding_cache WHERE model_id = ?", (model_id,))
        return cursor.rowcount

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0])
