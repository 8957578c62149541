"""Which storage backend a workspace location names, and opening its stores.

A location is a folder path or a URL. A folder path, or ``sqlite:///path/to/folder``, is the
embedded backend: one folder holding ``workspace.sqlite`` (facts, chunks, libraries), the
per-library index files under ``indexes/`` and the write locks under ``locks/``.
The relation store shares the chunk store's connections (see :meth:`SQLiteBackend.open_relations`).
``postgresql://...`` (or ``postgres://``) is the PostgreSQL backend
(:class:`ragspine.stores.postgres.backend.PostgresBackend`): every store in one database, writers
serialized by advisory locks, no index files.

:class:`Backend` is what the workspace asks of either.
"""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from ragspine.errors import ConfigError
from ragspine.locks import LOCK_DIR, is_held, lock_path, write_lock
from ragspine.stores.chunks import ChunkStore
from ragspine.stores.facts import FactStore
from ragspine.stores.graph import RelationStore
from ragspine.stores.postgres.database import shown_url
from ragspine.stores.sqlite.chunks import SQLiteChunkStore
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.stores.sqlite.graph import SQLiteRelationStore

if TYPE_CHECKING:
    from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes
    from ragspine.narrative.index.vector.library_vectors import LibraryVectors
    from ragspine.structured.glossary_files import GlossaryStorage

DB_FILENAME = "workspace.sqlite"
INDEX_DIRNAME = "indexes"
SQLITE_PREFIX = "sqlite://"
POSTGRES_SCHEMES = ("postgresql", "postgres")
ACCEPTED_FORMS = "a folder path, sqlite:///path/to/folder or postgresql://user@host:port/database"
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://")


def sqlite_folder(location: str | os.PathLike[str]) -> Path:
    """The workspace folder ``location`` names: a folder path or a ``sqlite://`` URL (whose
    path is the folder, e.g. ``sqlite:///srv/ragspine`` or ``sqlite://relative/folder``).

    A ``postgresql://`` URL, or any other scheme, is a :class:`ConfigError` (open those with
    :func:`open_backend`).
    """
    if isinstance(location, os.PathLike):
        return Path(location).expanduser()
    text = str(location)
    match = _URL.match(text)
    if match is None:
        return Path(text).expanduser()
    scheme = match["scheme"].lower()
    if scheme == "sqlite":
        rest = text[match.end() :]
        if not rest or "?" in rest or "#" in rest:
            raise ConfigError(
                f"cannot read the workspace URL {shown_url(text)}: use sqlite:///path/to/folder "
                "(the path of the workspace folder, with no query or fragment)"
            )
        return Path(unquote(rest)).expanduser()
    if scheme in POSTGRES_SCHEMES:
        raise ConfigError(f"{shown_url(text)} is not a workspace folder: open it with open_backend")
    raise ConfigError(f"unknown workspace location {shown_url(text)}: use {ACCEPTED_FORMS}")


def is_postgres_url(location: str | os.PathLike[str]) -> bool:
    """Whether ``location`` names the PostgreSQL backend."""
    if isinstance(location, os.PathLike):
        return False
    match = _URL.match(str(location))
    return match is not None and match["scheme"].lower() in POSTGRES_SCHEMES


class Backend(Protocol):
    """What a workspace asks of its storage backend."""

    @property
    def location(self) -> str:
        """Where the workspace lives, for messages (a folder, or a URL without its password)."""

    @property
    def local_dir(self) -> Path:
        """A folder of this machine for what is not shared: settings files, upload staging."""

    @property
    def exists(self) -> bool:
        """Whether the workspace's stores were created."""

    def create(self) -> None:
        """Create the stores' tables (or bring the schema up to date, where that is explicit)."""

    def open_facts(self) -> FactStore: ...

    def open_chunks(self) -> ChunkStore: ...

    def open_relations(self, chunks: ChunkStore) -> RelationStore: ...

    def open_lexical(self, chunks: ChunkStore) -> LibraryIndexes: ...

    def open_vectors(self, chunks: ChunkStore) -> LibraryVectors: ...

    def glossary_storage(self) -> GlossaryStorage:
        """Where the glossary texts live (files in a folder, or rows of a table)."""

    def import_stores(self, chunks: ChunkStore) -> tuple[FactStore, GlossaryStorage]:
        """A fact store and a glossary storage whose writes join the transaction ``chunks``
        has open on the calling thread: an import's facts and generated glossary land with
        its documents, or none of them does."""

    def session(self) -> AbstractContextManager[None]:
        """One connection for every store call of this thread inside (a reading call's many
        small reads), where the backend pools connections; else nothing."""

    def lock(self, name: str, *, resource: str) -> AbstractContextManager[None]:
        """Hold the write lock ``name`` (``library-NAME``, ``glossary``) across every process
        using this workspace; ``resource`` names it in messages."""

    def close(self) -> None:
        """Release what the backend holds (a connection pool)."""


def open_backend(location: str | os.PathLike[str], *, create: bool = True) -> Backend:
    """The backend ``location`` names: a folder path or ``sqlite://`` URL (see
    :func:`sqlite_folder`), or a ``postgresql://`` URL."""
    if is_postgres_url(location):
        from ragspine.stores.postgres.backend import PostgresBackend

        return PostgresBackend.open(str(location), create=create)
    return SQLiteBackend.open(location, create=create)


@dataclass(frozen=True, slots=True)
class SQLiteBackend:
    """The embedded backend: the stores of one workspace folder, all in one SQLite file."""

    folder: Path

    @classmethod
    def open(cls, location: str | os.PathLike[str], *, create: bool = True) -> SQLiteBackend:
        """The backend of the workspace at ``location`` (see :func:`sqlite_folder`);
        ``create=True`` makes the folder when missing, ``create=False`` requires an existing
        workspace."""
        folder = sqlite_folder(location)
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"workspace path {folder} is a file: pass a folder with --workspace")
        backend = cls(folder)
        if not create and not backend.exists:
            raise ConfigError(
                f"no RAGSpine workspace at {folder} (it has no {DB_FILENAME}): run "
                f"'ragspine --workspace {folder} init' first, or point --workspace (or "
                "RAGSPINE_WORKSPACE) at an existing workspace"
            )
        if not folder.exists():
            try:
                folder.mkdir(parents=True, exist_ok=True)  # another process may make it too
            except OSError as exc:
                raise ConfigError(f"cannot create the workspace {folder}: {exc.strerror}") from None
        return backend

    @property
    def location(self) -> str:
        return str(self.folder)

    @property
    def local_dir(self) -> Path:
        return self.folder

    @property
    def exists(self) -> bool:
        """Whether the workspace database exists (its stores were created)."""
        return self.db_path.is_file()

    def create(self) -> None:
        """The stores create their tables when opened (see the workspace's ``_create_stores``)."""

    @property
    def db_path(self) -> Path:
        """The SQLite file shared by the fact store and the chunk store."""
        return self.folder / DB_FILENAME

    @property
    def index_dir(self) -> Path:
        """Folder for per-library index files."""
        return self.folder / INDEX_DIRNAME

    @property
    def lock_dir(self) -> Path:
        """Folder of the write-lock files."""
        return self.folder / LOCK_DIR

    def open_facts(self) -> FactStore:
        """The fact store (creates its tables when missing)."""
        return SQLiteFactStore(self.db_path)

    def open_chunks(self) -> ChunkStore:
        """The chunk store: libraries, documents, chunks (creates its tables when missing)."""
        return SQLiteChunkStore(self.db_path)

    def open_relations(self, chunks: ChunkStore) -> RelationStore:
        """The relation store, writing inside ``chunks``' transactions (creates its tables when
        missing); ``chunks`` must be this backend's chunk store, which closes the connections."""
        if not isinstance(chunks, SQLiteChunkStore):
            raise TypeError("the SQLite relation store shares a SQLite chunk store's connections")
        return SQLiteRelationStore(self.db_path, chunks.connections)

    def open_lexical(self, chunks: ChunkStore) -> LibraryIndexes:
        """The lexical indexes: files under ``indexes/``, rebuilt from ``chunks`` when behind."""
        from ragspine.narrative.index.lexical.library_indexes import LibraryIndexes

        def writing(library: str) -> bool:
            return is_held(lock_path(self.folder, f"library-{library}"))

        return LibraryIndexes(chunks, self.index_dir, writing=writing)

    def open_vectors(self, chunks: ChunkStore) -> LibraryVectors:
        """The vector indexes and the embedding cache, under ``indexes/``."""
        from ragspine.narrative.index.vector.library_vectors import LibraryVectors

        return LibraryVectors(chunks, self.index_dir)

    def glossary_storage(self) -> GlossaryStorage:
        from ragspine.stores.sqlite.staged import StagedTexts
        from ragspine.structured.glossary_files import GlossaryFolder

        return GlossaryFolder(self.folder, StagedTexts(self.db_path))

    def import_stores(self, chunks: ChunkStore) -> tuple[FactStore, GlossaryStorage]:
        """On ``chunks``' connections: the glossary text is staged in the database until the
        transaction commits (see :mod:`ragspine.stores.sqlite.staged`)."""
        from ragspine.stores.sqlite.staged import StagedTexts
        from ragspine.structured.glossary_files import GlossaryFolder

        if not isinstance(chunks, SQLiteChunkStore):
            raise TypeError("an import writes on a SQLite chunk store's connections")
        staged = StagedTexts(self.db_path, chunks.connections)
        facts = SQLiteFactStore(self.db_path, chunks.connections)
        return facts, GlossaryFolder(self.folder, staged)

    def session(self) -> AbstractContextManager[None]:
        return nullcontext()  # each thread keeps its own connections already

    def lock(self, name: str, *, resource: str) -> AbstractContextManager[None]:
        return write_lock(self.lock_dir / f"{name}.lock", resource=resource)

    def close(self) -> None:
        """Nothing is held: every store closes its own connections."""
