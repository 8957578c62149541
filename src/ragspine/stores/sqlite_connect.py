"""Opening the workspace's SQLite file the same way for every store.

One setting for everyone: autocommit (stores open their own transactions with ``BEGIN
IMMEDIATE``), write-ahead logging so readers never wait for a writer, and a busy timeout so a
writer waits for another process's transaction instead of failing at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

BUSY_TIMEOUT = 60.0
"""Seconds a write waits for another process's transaction before failing."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the workspace database at ``path`` (usable from any thread)."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT)
    if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def has_tables(db: sqlite3.Connection, names: Iterable[str]) -> bool:
    """Whether every table in ``names`` exists (so opening needs no schema write)."""
    existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return set(names) <= existing
