"""The workspace: everything one deployment knows, behind one small object.

Embedded default: a folder holding ``workspace.sqlite`` (facts, chunks, libraries), the glossary
file ``glossary.toml`` and per-library index files under ``indexes/``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragspine.errors import ConfigError
from ragspine.security import PUBLIC, Principal

if TYPE_CHECKING:
    from ragspine.narrative.chunk_store import Library
    from ragspine.narrative.ingest import IngestReport, Progress
    from ragspine.narrative.retriever import SearchResult
    from ragspine.narrative.service import Narrative

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

    # --- narrative channel (issue 3): libraries, document ingest, search ---------------------
    # Thin delegates to ragspine.narrative.service.Narrative, opened on first use.

    @property
    def narrative(self) -> Narrative:
        """The narrative channel of this workspace (chunk store and lexical indexes)."""
        service: Narrative | None = self.__dict__.get("_narrative")
        if service is None:
            from ragspine.narrative.service import Narrative

            service = Narrative(self.db_path, self.index_dir)
            self.__dict__["_narrative"] = service
        return service

    def create_library(
        self, name: str, *, description: str = "", default_sensitivity: str = "public"
    ) -> Library:
        """Register a document library with a routing description and default sensitivity."""
        return self.narrative.create_library(
            name, description=description, default_sensitivity=default_sensitivity
        )

    def libraries(self) -> list[Library]:
        """Every document library, sorted by name."""
        return self.narrative.libraries()

    def describe_library(self, name: str) -> dict[str, Any]:
        """A library's settings and its document, parent and chunk counts."""
        return self.narrative.describe_library(name)

    def ingest_documents(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        library: str,
        metadata: Mapping[str, Any] | None = None,
        sensitivity: str | None = None,
        window: int = 0,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest .txt/.md/.html/.pdf/.docx files or folders into ``library``, atomic per file."""
        return self.narrative.ingest_documents(
            [Path(p) for p in paths],
            library=library,
            metadata=metadata,
            sensitivity=sensitivity,
            window=window,
            progress=progress,
        )

    def ingest_beir(
        self, folder: str | os.PathLike[str], *, library: str, progress: Progress | None = None
    ) -> IngestReport:
        """Ingest a BEIR-layout corpus (corpus.jsonl); each ``_id`` becomes a document id."""
        return self.narrative.ingest_beir(Path(folder), library=library, progress=progress)

    def search(
        self,
        question: str,
        *,
        libraries: Sequence[str] | None = None,
        mode: str = "bm25",
        top_k: int = 10,
        principal: Principal = PUBLIC,
    ) -> SearchResult:
        """Search document libraries; returns snippets best first with a trace."""
        return self.narrative.search(
            question, libraries=libraries, mode=mode, top_k=top_k, principal=principal
        )

    # --- end of narrative channel -------------------------------------------------------------
