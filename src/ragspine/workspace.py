"""The workspace: everything one deployment knows, behind one small object.

Embedded default: a folder holding ``workspace.sqlite`` (facts, chunks, libraries), the glossary
file ``glossary.toml`` and per-library index files under ``indexes/``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ragspine.errors import ConfigError

DB_FILENAME = "workspace.sqlite"
GLOSSARY_FILENAME = "glossary.toml"


class Workspace:
    """One workspace folder; open it with :meth:`Workspace.open`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, create: bool = True) -> Workspace:
        """Open (and by default create) the workspace folder at ``path``."""
        folder = Path(path).expanduser()
        if folder.exists() and not folder.is_dir():
            raise ConfigError(f"workspace path {folder} is a file: pass a folder with --workspace")
        if not folder.exists():
            if not create:
                raise ConfigError(
                    f"no workspace at {folder}: run 'ragspine --workspace {folder} init' first"
                )
            folder.mkdir(parents=True)
        return cls(folder)

    @property
    def db_path(self) -> Path:
        """The workspace's SQLite file (shared by the fact store and the chunk store)."""
        return self.path / DB_FILENAME

    @property
    def index_dir(self) -> Path:
        """Folder for per-library index files."""
        return self.path / "indexes"
