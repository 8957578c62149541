"""Versioned schema migrations of the PostgreSQL backend.

Each migration is a module ``ragspine.stores.postgres.schema.vNNNN_<name>`` holding one ``SQL``
script; ``NNNN`` is its version. The table ``ragspine_schema`` records which versions ran. A
migration runs in one transaction with its row in ``ragspine_schema``, under a transaction-level
advisory lock, so two ``ragspine migrate`` at once apply each version once and a failure leaves the
schema at the last whole version. A database whose schema is newer than this code is refused:
old code must not write tables it does not know.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from functools import cache

from ragspine.errors import StoreError
from ragspine.stores.postgres import schema as schema_package
from ragspine.stores.postgres.database import Database, is_postgres_error

VERSION_TABLE = "ragspine_schema"
_MODULE = re.compile(r"^v(?P<version>\d{4})_(?P<name>[a-z0-9_]+)$")
_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || ':migrate', 0))"


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema version."""

    version: int
    name: str
    sql: str


@cache
def migrations() -> tuple[Migration, ...]:
    """Every migration this code knows, in version order (each version once)."""
    found = []
    for info in pkgutil.iter_modules(schema_package.__path__):
        match = _MODULE.match(info.name)
        if match is None:
            continue
        module = importlib.import_module(f"{schema_package.__name__}.{info.name}")
        found.append(Migration(int(match["version"]), match["name"], module.SQL))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions) or not versions or versions[0] < 1:
        raise RuntimeError(f"schema migrations must have distinct versions >= 1: {versions}")
    return tuple(found)


def latest_version() -> int:
    """The schema version this code writes."""
    return migrations()[-1].version


def current_version(db: Database) -> int:
    """The schema version of the database (0: no RAGSpine schema yet)."""
    with db.connection() as conn:
        exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (VERSION_TABLE,)).fetchone()
        if not exists or not exists[0]:
            return 0
        row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {VERSION_TABLE}").fetchone()
    return int(row[0]) if row else 0


def migrate(db: Database) -> list[Migration]:
    """Bring the schema to :func:`latest_version`; returns the migrations applied (none when it
    is current). A newer schema is a :class:`StoreError`."""
    applied = []
    if current_version(db) < latest_version():
        _ensure_pgvector(db)  # before any migration: none is left half-applied without it
    for migration in migrations():
        with db.transaction() as conn:
            conn.execute(_LOCK)  # concurrent migrators wait here, then find the version done
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (version integer PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {VERSION_TABLE}").fetchone()
            have = int(row[0]) if row else 0
            if have > latest_version():
                raise _newer(db, have)
            if have >= migration.version:
                continue
            conn.execute(migration.sql)
            conn.execute(
                f"INSERT INTO {VERSION_TABLE} (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            applied.append(migration)
    return applied


def check_version(db: Database) -> int:
    """The database's schema version when this code can use it; else a :class:`StoreError`
    saying to run ``ragspine migrate`` (older) or to upgrade RAGSpine (newer)."""
    have = current_version(db)
    latest = latest_version()
    if have > latest:
        raise _newer(db, have)
    if have < latest:
        raise StoreError(
            f"the PostgreSQL workspace {db.shown} has schema version {have}, this RAGSpine "
            f"needs {latest}: run 'ragspine --workspace URL migrate'"
        )
    return have


def _ensure_pgvector(db: Database) -> None:
    """Create the ``vector`` extension the search tables need, or a :class:`StoreError`
    saying how to get it (installed on the server, created by a superuser)."""
    with db.transaction() as conn:
        row = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is not None:
            return
        available = conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    fix = (
        "install pgvector >= 0.8 on the server (Debian: postgresql-NN-pgvector; or the "
        "pgvector/pgvector image)"
        if available is None
        else "have a superuser run CREATE EXTENSION vector; in that database"
    )
    try:
        with db.transaction() as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except Exception as exc:
        if not is_postgres_error(exc):
            raise
        raise StoreError(
            f"the PostgreSQL workspace {db.shown} needs the pgvector extension, which this "
            f"user cannot create there: {fix}, then run 'ragspine --workspace URL migrate' "
            "again; nothing was changed"
        ) from None


def _newer(db: Database, have: int) -> StoreError:
    return StoreError(
        f"the PostgreSQL workspace {db.shown} has schema version {have}, newer than this "
        f"RAGSpine knows ({latest_version()}): upgrade RAGSpine (pip install -U ragspine) "
        "before using it; nothing was changed"
    )
