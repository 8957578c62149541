"""Per-library term counts (what routing builds its library profiles from), kept in the chunk
store's SQLite file.

Counts are kept per library *and sensitivity level*, so a router built for a principal only ever
uses the text that principal may see. They change in the same transaction as the chunks they
count (atomic with ingest), and are rebuilt from the chunks once for a store that predates them.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Mapping
from itertools import repeat

from ragspine.stores.chunks import count_terms, profile_text
from ragspine.stores.sqlite.connect import write_transaction

PROFILE_SCHEMA = """
CREATE TABLE IF NOT EXISTS narrative_profiles (
    library_id TEXT NOT NULL,
    level INTEGER NOT NULL,
    term TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (library_id, level, term)
) WITHOUT ROWID;
"""
PROFILE_META_KEY = "profiles_version"
PROFILE_VERSION = "1"


def apply_counts(
    db: sqlite3.Connection, library_id: str, counts: Mapping[int, Counter[str]], sign: int
) -> None:
    """Add (``sign=1``) or subtract (``sign=-1``) term counts; call inside a transaction."""
    for level, counter in counts.items():
        db.executemany(
            "INSERT INTO narrative_profiles (library_id, level, term, count) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (library_id, level, term) DO UPDATE SET count = count + excluded.count",
            zip(
                repeat(library_id),
                repeat(level),
                counter.keys(),
                counter.values() if sign == 1 else [sign * n for n in counter.values()],
            ),
        )
    if sign < 0:
        db.execute(
            "DELETE FROM narrative_profiles WHERE library_id = ? AND count <= 0", (library_id,)
        )


def chunk_rows(
    db: sqlite3.Connection, library_id: str, doc_id: str | None
) -> list[tuple[int, str]]:
    """``(level, profile text)`` of a document's chunks (every chunk when ``doc_id`` is None)."""
    sql = "SELECT sensitivity, title, text FROM narrative_chunks WHERE library_id = ?"
    params: list[object] = [library_id]
    if doc_id is not None:
        sql += " AND doc_id = ?"
        params.append(doc_id)
    return [
        (int(level), profile_text(title, text)) for level, title, text in db.execute(sql, params)
    ]


def backfill(db: sqlite3.Connection) -> None:
    """Build every library's counts from its chunks once (for stores written before profiles)."""
    row = db.execute(
        "SELECT value FROM narrative_meta WHERE key = ?", (PROFILE_META_KEY,)
    ).fetchone()
    if row is not None:
        return
    with write_transaction(db):
        done = db.execute(  # another connection may have counted while this one waited
            "SELECT 1 FROM narrative_meta WHERE key = ?", (PROFILE_META_KEY,)
        ).fetchone()
        if done is not None:
            return
        db.execute("DELETE FROM narrative_profiles")
        for (library_id,) in db.execute("SELECT library_id FROM narrative_libraries").fetchall():
            apply_counts(db, library_id, count_terms(chunk_rows(db, library_id, None)), 1)
        db.execute(
            "INSERT INTO narrative_meta (key, value) VALUES (?, ?)",
            (PROFILE_META_KEY, PROFILE_VERSION),
        )


def load_counts(db: sqlite3.Connection, library_id: str, max_level: int) -> dict[str, int]:
    """The library's term counts over the chunks at or below ``max_level`` (sorted by term)."""
    rows = db.execute(
        "SELECT term, SUM(count) FROM narrative_profiles WHERE library_id = ? AND level <= ? "
        "GROUP BY term ORDER BY term",
        (library_id, max_level),
    )
    return {term: int(n) for term, n in rows if n > 0}
