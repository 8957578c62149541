"""One PostgreSQL database shared by every store of a workspace: a connection pool, transactions
that stores join, advisory locks for writers, and the errors a caller sees.

Connections are autocommit; :meth:`Database.transaction` opens a transaction on one pooled
connection and, while it is open, every :meth:`Database.connection` call of the same thread gets
that connection, so stores written in one transaction (chunks, postings, edges) commit together.
A connection is checked when it leaves the pool, so a restarted server costs one reconnect, not an
error.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ragspine.errors import MissingExtraError, StoreError, quote_input

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

POOL_MAX = 8
"""Connections one workspace keeps at most (per process)."""
CONNECT_TIMEOUT_S = 10
LOCK_WAIT = "10min"
"""How long a writer waits for another writer of the same resource before giving up."""
APPLICATION = "ragspine"
_LOCK_KEY = "hashtextextended(current_schema() || ':' || %s, 0)"
"""The advisory lock key of a name: per schema, so workspaces in two schemas never collide."""


_USER_INFO_PASSWORD = re.compile(r"(?<=://)([^/@:?#\s]*):([^@]*)@")
_QUERY_PASSWORD = re.compile(r"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)")


def url_secrets(url: str) -> list[str]:
    """Every password ``url`` holds, as written and decoded (``user:PW@``, ``?password=PW``,
    a libpq ``password=PW`` pair), found by pattern so that a URL no parser reads still
    gives them up: each is scrubbed from any message (a driver's too)."""
    found = [m.group(2) for m in _USER_INFO_PASSWORD.finditer(url)]
    found += [m.group(2).strip("'") for m in _QUERY_PASSWORD.finditer(url)]
    found += [unquote(secret) for secret in found]
    return sorted({secret for secret in found if secret}, key=len, reverse=True)


def redacted_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (in its user info, its query or a
    connection string, whether or not the URL parses)."""
    url = _USER_INFO_PASSWORD.sub(lambda m: f"{m.group(1)}:***@", url)
    return _QUERY_PASSWORD.sub(lambda m: f"{m.group(1)}***", url)


def scrubbed(text: str, url: str) -> str:
    """``text`` without any password of ``url`` (a driver's message may quote it)."""
    for secret in url_secrets(url):
        text = text.replace(secret, "***")
    return redacted_url(text)


def shown_url(url: str) -> str:
    """``url`` for a message: quoted, cut when long, with any password replaced by ``***``."""
    return quote_input(redacted_url(url))


def require_psycopg() -> Any:
    """The ``psycopg`` module, or :class:`MissingExtraError` naming the ``postgres`` extra."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401 - part of the extra
    except ImportError:
        raise MissingExtraError("the PostgreSQL backend", "postgres") from None
    return psycopg


def is_postgres_error(exc: BaseException) -> bool:
    """Whether ``exc`` comes from psycopg or its pool (checked without importing them)."""
    return type(exc).__module__.split(".")[0] in ("psycopg", "psycopg_pool")


def postgres_error_types() -> tuple[type[Exception], ...]:
    """The base classes of psycopg's and its pool's errors (none without the extra)."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        return ()
    return (psycopg.Error, psycopg_pool.PoolTimeout)


def postgres_error(exc: BaseException, url: str) -> StoreError:
    """A :class:`StoreError` for a psycopg error, saying what happened and what to do."""
    where = f"the PostgreSQL workspace {shown_url(url)}" if url else "the PostgreSQL workspace"
    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else name
    text = scrubbed(text, url)  # "invalid percent-encoded token: <the password>"
    if name in ("OperationalError", "PoolTimeout", "TooManyConnections", "AdminShutdown"):
        return StoreError(
            f"{where} is unreachable ({text}): check that the server is running and the URL, "
            "user and password are right"
        )
    if name in ("UndefinedTable", "UndefinedColumn", "UndefinedFunction"):
        return StoreError(
            f"{where} has no RAGSpine schema, or an old one ({text}): run "
            "'ragspine --workspace URL migrate'"
        )
    if name in ("LockNotAvailable", "QueryCanceled"):
        return StoreError(f"{where} stayed locked by another writer; run this again later")
    if name in ("InsufficientPrivilege",):
        return StoreError(f"{where} refused access ({text}): grant the user rights on it")
    if name in ("DiskFull", "OutOfMemory"):
        return StoreError(f"{where} could not be written ({text}): check the server's disk")
    return StoreError(f"{where} failed: {text}")


class Database:
    """A pool of connections to the database at ``url`` (a ``postgresql://`` URL or a libpq
    connection string); safe to share between threads."""

    def __init__(self, url: str, *, max_size: int = POOL_MAX) -> None:
        module = require_psycopg()
        from psycopg_pool import ConnectionPool

        self.url = url
        self._psycopg = module
        self._local = threading.local()
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={
                "autocommit": True,
                "connect_timeout": CONNECT_TIMEOUT_S,
                "application_name": APPLICATION,
            },
            check=ConnectionPool.check_connection,
            timeout=CONNECT_TIMEOUT_S,
            open=False,
            name="ragspine",
        )
        try:
            # One plain connection first: a wrong URL, password or host fails at once with the
            # server's reason, instead of the pool retrying until its timeout.
            module.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except Exception as exc:
            self._pool.close(timeout=0)
            if is_postgres_error(exc):
                raise postgres_error(exc, url) from None
            raise

    @property
    def shown(self) -> str:
        """The URL for messages (no password)."""
        return shown_url(self.url)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection: this thread's open transaction's or :meth:`session`'s, else an
        autocommit one from the pool."""
        local = self._local.__dict__
        current = local.get("conn") or local.get("pinned")
        if current is not None:
            yield current
            return
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def session(self) -> Iterator[None]:
        """Every :meth:`connection` and :meth:`transaction` of this thread inside uses one
        pooled connection, taken (and checked) once: a search makes a dozen small reads."""
        local = self._local.__dict__
        if local.get("conn") is not None or local.get("pinned") is not None:
            yield
            return
        with self._pool.connection() as conn:
            local["pinned"] = conn
            try:
                yield
            finally:
                local["pinned"] = None

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """One atomic write: commits when the body ends, rolls back when it raises. Inside a
        transaction of the same thread already open, it joins that one (a savepoint-free
        nesting: the outer one decides)."""
        local = self._local.__dict__
        current = local.get("conn")
        if current is not None:
            yield current
            return
        pinned = local.get("pinned")
        with (
            nullcontext(pinned) if pinned is not None else self._pool.connection() as conn,
            conn.transaction(),
        ):
            local["conn"] = conn
            try:
                yield conn
            finally:
                local["conn"] = None

    @property
    def in_transaction(self) -> bool:
        """Whether this thread has a transaction open."""
        return self._local.__dict__.get("conn") is not None

    @contextmanager
    def advisory_lock(
        self, name: str, *, description: str | None = None, wait: str = LOCK_WAIT
    ) -> Iterator[None]:
        """Hold the database-wide lock ``name`` (e.g. ``library-notes``) for the body:
        one holder across every process and host using this database (per schema). It is held
        by a connection of its own, so the server releases it when a killed holder's connection
        goes. Re-entrant within a thread. ``wait`` is a PostgreSQL interval; ``"0"`` fails at once
        when another holder has it."""
        held: dict[str, int] = self._local.__dict__.setdefault("locks", {})
        if held.get(name):
            held[name] += 1
            try:
                yield
            finally:
                held[name] -= 1
            return
        conn = self._psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=f"{APPLICATION} lock {name}"[:63],
        )
        try:
            if wait == "0":  # lock_timeout 0 would mean "wait forever": try once instead
                row = conn.execute(f"SELECT pg_try_advisory_lock({_LOCK_KEY})", (name,)).fetchone()
                if not row or not row[0]:
                    raise StoreError(f"{description or name} is held by another writer")
            else:
                row = conn.execute(f"SELECT pg_try_advisory_lock({_LOCK_KEY})", (name,)).fetchone()
                if not row or not row[0]:  # said once, as a folder workspace's writer says it
                    logging.getLogger("ragspine.locks").warning(
                        "waiting for %s: it is being written by another process (at most %s)",
                        description or name,
                        wait,
                    )
                conn.execute("SELECT set_config('lock_timeout', %s, false)", (wait,))
                try:
                    if not row or not row[0]:
                        conn.execute(f"SELECT pg_advisory_lock({_LOCK_KEY})", (name,))
                except self._psycopg.errors.LockNotAvailable:
                    raise StoreError(
                        f"{description or name} stayed locked by another writer for {wait}; run "
                        "this again when it finishes"
                    ) from None
            held[name] = 1
            try:
                yield
            finally:
                del held[name]
        finally:
            conn.close()  # ends the session: the lock goes with it

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()
