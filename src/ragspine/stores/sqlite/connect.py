"""Opening the workspace's SQLite file the same way for every store, one connection per thread.

One setting for everyone: autocommit (stores open their own transactions with ``BEGIN
IMMEDIATE``), write-ahead logging so readers never wait for a writer, and a busy timeout so a
writer waits for another process's (or thread's) transaction instead of failing at once.

A connection is never shared between threads: on a shared one, a reader's query would run inside
a writer's open transaction (and see its uncommitted rows), and two threads' statements would
interleave on it. :class:`ThreadConnections` gives each thread its own.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

BUSY_TIMEOUT = 60.0
"""Seconds a write waits for another process's transaction before failing."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the workspace database at ``path``.

    It may be closed from any thread (see :class:`ThreadConnections`) but is used by one only.
    """
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT)
    _use_wal(db)
    db.execute("PRAGMA synchronous=NORMAL")
    return db


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch a new database to write-ahead logging. The switch needs the database to itself
    and SQLite refuses it at once, without the busy timeout, while another connection (of a
    process creating the same new workspace) uses it: try again until one of them made it."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    while db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One atomic write on ``db`` (``BEGIN IMMEDIATE``, ``COMMIT``; ``ROLLBACK`` on any
    error); inside a transaction already open on it, this joins that one."""
    if db.in_transaction:
        yield
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:  # the body failed, or COMMIT did (a full disk): nothing stays open
            with contextlib.suppress(sqlite3.Error):  # the first error is the one to report
                db.execute("ROLLBACK")
        raise


def has_tables(db: sqlite3.Connection, names: Iterable[str]) -> bool:
    """Whether every table in ``names`` exists (so opening needs no schema write)."""
    existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return set(names) <= existing


class ThreadConnections:
    """One connection per thread, made by ``open_connection`` on the thread's first use.

    :meth:`close` closes every one of them, other threads' included: call it once those threads
    are done with the store. A connection left by a thread that has ended is closed when the
    next thread opens its own, so a server starting a thread per request keeps one connection per
    live thread. Schema work belongs to the store's constructor (the first connection), not to
    ``open_connection``.
    """

    def __init__(self, open_connection: Callable[[], sqlite3.Connection]) -> None:
        self._open_connection = open_connection
        self._local = threading.local()
        self._lock = threading.Lock()
        self._by_thread: dict[threading.Thread, sqlite3.Connection] = {}
        self._closed = False

    def get(self) -> sqlite3.Connection:
        """The calling thread's connection (opened on first use)."""
        try:
            connection: sqlite3.Connection = self._local.connection
        except AttributeError:
            connection = self._open_for_this_thread()
        return connection

    def _open_for_this_thread(self) -> sqlite3.Connection:
        with self._lock:
            self._check_open()
            ended = [t for t in self._by_thread if not t.is_alive()]
            finished = [self._by_thread.pop(thread) for thread in ended]
        for connection in finished:
            connection.close()  # its thread has ended, so nothing is using it
        connection = self._open_connection()  # outside the lock: opening may wait for a writer
        with self._lock:
            if self._closed:
                connection.close()
                self._check_open()
            self._by_thread[threading.current_thread()] = connection
        self._local.connection = connection
        return connection

    def _check_open(self) -> None:
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")

    def close(self) -> None:
        """Close every thread's connection; later use raises ``sqlite3.ProgrammingError``."""
        with self._lock:
            self._closed = True
            connections = list(self._by_thread.values())
            self._by_thread.clear()
        for connection in connections:
            connection.close()
