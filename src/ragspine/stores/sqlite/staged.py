"""Glossary texts an import's transaction stages in a folder workspace's database.

A folder workspace keeps its glossary in files, and a file cannot join a database transaction.
A dataset import therefore writes its generated glossary text into the ``staged_glossary``
table inside the one transaction that writes its facts and documents; once that has committed,
the text goes to its file and the row is deleted. Readers take a staged text over its file, so
an import killed between those two steps still shows the workspace as its commit left it; the
next writer of the glossary writes the file out (:meth:`StagedTexts.settle`). An import killed
before its commit leaves no row, no fact and no document.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragspine.stores.sqlite.connect import ThreadConnections, connect, write_transaction

_TABLE = "staged_glossary"
_CREATE = f"CREATE TABLE IF NOT EXISTS {_TABLE} (name TEXT PRIMARY KEY, body TEXT NOT NULL)"


class StagedTexts:
    """The ``staged_glossary`` rows of the database at ``path``. With ``connections`` (the chunk
    store's) it stages inside the transaction open on the calling thread's connection; without,
    it reads and settles through a connection of its own, opened for each call."""

    def __init__(self, path: Path, connections: ThreadConnections | None = None) -> None:
        self._path = path
        self._connections = connections

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection | None]:
        if self._connections is not None:
            yield self._connections.get()
            return
        if not self._path.is_file():  # a workspace not yet created has nothing staged
            yield None
            return
        db = connect(self._path)
        try:
            yield db
        finally:
            db.close()

    def in_transaction(self) -> bool:
        """Whether the calling thread has a transaction open on the given connections."""
        return self._connections is not None and self._connections.get().in_transaction

    def stage(self, name: str, text: str) -> None:
        """Stage ``text`` as the generated glossary ``name`` in the open transaction."""
        db = self._connections.get() if self._connections is not None else None
        if db is None or not db.in_transaction:
            raise RuntimeError("a glossary text is staged only inside an open transaction")
        db.execute(_CREATE)
        db.execute(f"INSERT OR REPLACE INTO {_TABLE} (name, body) VALUES (?, ?)", (name, text))

    def texts(self) -> dict[str, str]:
        """The staged texts by generated glossary name (committed ones, or this thread's)."""
        with self._connection() as db:
            return {} if db is None else _rows(db)

    def settle(self, write: Callable[[str, str], None]) -> None:
        """Write each committed staged text out with ``write(name, text)``, then delete its row
        (call it holding the glossary write lock; a kill in between writes it again later)."""
        with self._connection() as db:
            if db is None:
                return
            for name, body in _rows(db).items():
                write(name, body)
                with write_transaction(db):
                    db.execute(f"DELETE FROM {_TABLE} WHERE name = ? AND body = ?", (name, body))


def _rows(db: sqlite3.Connection) -> dict[str, str]:
    try:
        rows = db.execute(f"SELECT name, body FROM {_TABLE} ORDER BY name").fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):  # no import has staged a text in this workspace
            return {}
        raise
    return {str(name): str(body) for name, body in rows}
