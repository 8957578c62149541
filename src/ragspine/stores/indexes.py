"""The index persistence seam: where a library's search indexes keep their files.

The lexical and vector indexes are file formats of their own (each folder holds its data files
and a manifest that is replaced atomically to commit, see
:mod:`ragspine.narrative.index.lexical.manifest` and :mod:`ragspine.narrative.index.vector.engine`);
loading and committing belong to those formats. What the workspace decides is where those folders
live and when they go: :class:`IndexStorage`. :class:`IndexFolders` keeps them under the
workspace's ``indexes/`` folder, which any backend of the chunk store can use, since every index
is rebuilt from the chunk store when its files are missing or behind.

Layout: ``<root>/<library>/<index name>/`` (``lexical-<fields>``, ``vectors``) and workspace-wide
files such as ``<root>/embedding-cache.sqlite``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol


class IndexStorage(Protocol):
    """Where index files live, and their removal."""

    def folder(self, library_id: str, name: str) -> Path:
        """The folder of the library's index called ``name`` (its writer creates it)."""

    def shared_file(self, name: str) -> Path:
        """A workspace-wide file next to the indexes (e.g. the embedding cache)."""

    def drop(self, library_id: str, name: str | None = None) -> None:
        """Delete the library's index called ``name``, or all its indexes when ``name`` is None;
        a missing folder is not an error."""


class IndexFolders:
    """:class:`IndexStorage` in a folder of the file system."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def folder(self, library_id: str, name: str) -> Path:
        return self.root / library_id / name

    def shared_file(self, name: str) -> Path:
        return self.root / name

    def drop(self, library_id: str, name: str | None = None) -> None:
        target = self.root / library_id if name is None else self.folder(library_id, name)
        shutil.rmtree(target, ignore_errors=True)


def index_storage(where: IndexStorage | Path) -> IndexStorage:
    """``where`` itself, or the :class:`IndexFolders` under it when it is a path."""
    return IndexFolders(where) if isinstance(where, Path) else where
