"""Which storage backend a workspace location names, and opening its stores.

A location is a folder path or a URL. A folder path, or ``sqlite:///path/to/folder``, is the
embedded backend: one folder holding ``workspace.sqlite`` (facts, chunks, libraries), the
per-library index files under ``indexes/`` and the write locks under ``locks/``.
The relation store shares the chunk store's connections (see :meth:`SQLiteBackend.open_relations`).
``postgresql://...`` is reserved for the PostgreSQL backend, which is not built yet.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ragspine.errors import ConfigError, quote_input
from ragspine.locks import LOCK_DIR
from ragspine.stores.chunks import ChunkStore
from ragspine.stores.facts import FactStore
from ragspine.stores.graph import RelationStore
from ragspine.stores.sqlite.chunks import SQLiteChunkStore
from ragspine.stores.sqlite.facts import SQLiteFactStore
from ragspine.stores.sqlite.graph import SQLiteRelationStore

DB_FILENAME = "workspace.sqlite"
INDEX_DIRNAME = "indexes"
SQLITE_PREFIX = "sqlite://"
POSTGRES_SCHEMES = ("postgresql", "postgres")
ACCEPTED_FORMS = "a folder path or sqlite:///path/to/folder (postgresql://... is planned)"
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://")


def sqlite_folder(location: str | os.PathLike[str]) -> Path:
    """The workspace folder ``location`` names: a folder path or a ``sqlite://`` URL (whose
    path is the folder, e.g. ``sqlite:///srv/ragspine`` or ``sqlite://relative/folder``).

    A ``postgresql://`` URL, or any other scheme, is a :class:`ConfigError`.
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
                f"cannot read the workspace URL {_shown(text)}: use sqlite:///path/to/folder "
                "(the path of the workspace folder, with no query or fragment)"
            )
        return Path(unquote(rest)).expanduser()
    if scheme in POSTGRES_SCHEMES:
        raise ConfigError(
            f"the PostgreSQL backend is not available yet (issue 18): cannot open "
            f"{_shown(text)}; use {ACCEPTED_FORMS}"
        )
    raise ConfigError(f"unknown workspace location {_shown(text)}: use {ACCEPTED_FORMS}")


def _shown(url: str) -> str:
    """``url`` quoted for a message, with any password replaced by ``***``."""
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
            url = parts._replace(netloc=netloc).geturl()
    except ValueError:
        pass
    return quote_input(url)


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
                folder.mkdir(parents=True)
            except OSError as exc:
                raise ConfigError(f"cannot create the workspace {folder}: {exc.strerror}") from None
        return backend

    @property
    def exists(self) -> bool:
        """Whether the workspace database exists (its stores were created)."""
        return self.db_path.is_file()

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
