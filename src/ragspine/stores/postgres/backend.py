"""The PostgreSQL backend: every store of a workspace in one database.

Opened by :func:`ragspine.stores.backend.open_backend` for a ``postgresql://`` URL. One
:class:`~ragspine.stores.postgres.database.Database` (a connection pool) is shared by every
store; writers of one library serialize on an advisory lock, so any number of processes on any
number of hosts may share the database. Nothing is kept in local files except what is the
machine's own (:attr:`PostgresBackend.local_dir`: settings files and upload staging).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from ragspine.errors import ConfigError
from ragspine.stores.postgres import migrate
from ragspine.stores.postgres.database import Database, redacted_url, shown_url

if TYPE_CHECKING:
    from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
    from ragspine.narrative.index.vector.library_vectors import LibraryVectors
    from ragspine.stores.chunks import ChunkStore
    from ragspine.stores.facts import FactStore
    from ragspine.stores.graph import RelationStore
    from ragspine.structured.glossary_files import GlossaryStorage

LOCAL_DIR_ENV = "RAGSPINE_LOCAL_DIR"
"""Names the folder of a PostgreSQL workspace's machine-local files."""


class PostgresBackend:
    """The stores of the workspace in the database at ``url``."""

    def __init__(self, url: str, db: Database) -> None:
        self.url = url
        self.db = db

    @classmethod
    def open(cls, url: str, *, create: bool = True) -> PostgresBackend:
        """Connect to ``url``. An empty database gets the schema when ``create`` (like a new
        workspace folder); a schema older than this code asks for ``ragspine migrate`` and a
        newer one is refused, before anything is read or written."""
        db = Database(url)
        try:
            version = migrate.current_version(db)
            if version == 0 and create:
                migrate.migrate(db)
            elif version == 0:
                raise ConfigError(
                    f"no RAGSpine workspace in {shown_url(url)} (the database has no RAGSpine "
                    "schema): run 'ragspine --workspace URL migrate' (or init) first"
                )
            else:
                migrate.check_version(db)
        except BaseException:
            db.close()
            raise
        return cls(url, db)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PostgresBackend) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    @property
    def location(self) -> str:
        return redacted_url(self.url)

    @property
    def local_dir(self) -> Path:
        """``$RAGSPINE_LOCAL_DIR``, else a folder under the system's temporary folder named
        after the URL (without its password)."""
        configured = os.environ.get(LOCAL_DIR_ENV)
        if configured:
            return Path(configured).expanduser()
        digest = hashlib.sha256(self.location.encode("utf-8")).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"ragspine-{digest}"

    @property
    def exists(self) -> bool:
        return migrate.current_version(self.db) > 0

    def create(self) -> None:
        """Bring the schema to this code's version (``ragspine migrate``)."""
        migrate.migrate(self.db)

    def open_facts(self) -> FactStore:
        from ragspine.stores.postgres.facts import PostgresFactStore

        return PostgresFactStore(self.db)

    def open_chunks(self) -> ChunkStore:
        from ragspine.stores.postgres.chunks import PostgresChunkStore

        return PostgresChunkStore(self.db)

    def open_relations(self, chunks: ChunkStore) -> RelationStore:
        from ragspine.stores.postgres.graph import PostgresRelationStore

        return PostgresRelationStore(self.db)

    def open_lexical(self, chunks: ChunkStore) -> LibraryIndexes:
        from ragspine.stores.postgres.lexical import PostgresLexicalIndexes

        return PostgresLexicalIndexes(self.db, chunks)  # type: ignore[return-value]

    def open_vectors(self, chunks: ChunkStore) -> LibraryVectors:
        from ragspine.stores.postgres.vectors import PostgresLibraryVectors

        return PostgresLibraryVectors(self.db, chunks, self.local_dir)  # type: ignore[return-value]

    def glossary_storage(self) -> GlossaryStorage:
        from ragspine.stores.postgres.glossary import PostgresGlossary

        return PostgresGlossary(self.db)

    def import_stores(self, chunks: ChunkStore) -> tuple[FactStore, GlossaryStorage]:
        """Every store of the database writes inside the transaction this thread has open."""
        from ragspine.stores.postgres.facts import PostgresFactStore
        from ragspine.stores.postgres.glossary import PostgresGlossary

        return PostgresFactStore(self.db), PostgresGlossary(self.db)

    def session(self) -> AbstractContextManager[None]:
        return self.db.session()

    def lock(self, name: str, *, resource: str) -> AbstractContextManager[None]:
        return self.db.advisory_lock(name, description=resource)

    def close(self) -> None:
        self.db.close()
