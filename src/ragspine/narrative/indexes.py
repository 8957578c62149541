"""Per-library lexical indexes kept in step with the chunk store by a generation number.

Each library has one index per *field set* (which chunk fields are indexed), built only when a
retrieval mode first needs it. Changes are applied incrementally after the chunk store commits;
an index whose committed generation differs from the store's (a crash between the two commits, or
an index that missed an ingest) is rebuilt from the chunk store when it is opened. Chunks no one
may see (``restricted``) are never indexed, so they take no part in any search or score.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable, Sequence
from enum import StrEnum
from pathlib import Path

from ragspine.narrative.chunk_store import ChunkStore, IndexRow
from ragspine.narrative.lexical import LexicalIndex
from ragspine.security import Principal, Sensitivity, max_visible_level

log = logging.getLogger("ragspine.narrative")

BM25_K1 = 0.9
BM25_B = 0.4


class IndexFields(StrEnum):
    """Which chunk fields an index covers."""

    TEXT = "text"  # child text only
    TITLE_TEXT = "title_text"  # document title + child text
    TITLE_HEADING_TEXT = "title_heading_text"  # document title + heading path + child text


def indexed_text(fields: IndexFields, row: IndexRow) -> str:
    """The text an index of ``fields`` holds for ``row``."""
    if fields is IndexFields.TEXT:
        return row.text
    if fields is IndexFields.TITLE_TEXT:
        return f"{row.title}\n{row.text}"
    return f"{row.title}\n{row.heading}\n{row.text}"


DEFAULT_FIELDS = IndexFields.TITLE_TEXT

HIGHEST_VISIBLE = max_visible_level(Principal(Sensitivity.RESTRICTED))
"""The highest level anyone may see; chunks above it are never indexed."""


def searchable(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows someone may see (what an index holds)."""
    return [row for row in rows if row.sensitivity <= HIGHEST_VISIBLE]


class LibraryIndexes:
    """Opens, rebuilds and updates the lexical indexes of every library in a workspace."""

    def __init__(
        self, store: ChunkStore, index_dir: Path, *, k1: float = BM25_K1, b: float = BM25_B
    ) -> None:
        self._store = store
        self._index_dir = index_dir
        self._k1 = k1
        self._b = b
        self._open: dict[tuple[str, IndexFields], LexicalIndex] = {}
        self.rebuilt: list[str] = []

    def folder(self, library_id: str, fields: IndexFields) -> Path:
        """Where the index of ``library_id`` over ``fields`` lives."""
        return self._index_dir / library_id / f"lexical-{fields.value}"

    def get(self, library_id: str, fields: IndexFields) -> LexicalIndex:
        """The up-to-date index; rebuilt from the chunk store if its generation is stale."""
        generation = self._store.generation(library_id)
        index = self._open.get((library_id, fields))
        if index is not None and index.generation == generation:
            return index
        folder = self.folder(library_id, fields)
        folder.mkdir(parents=True, exist_ok=True)
        index = LexicalIndex.open(folder, k1=self._k1, b=self._b, recreate_if_incompatible=True)
        if index.generation != generation:
            self._rebuild(index, library_id, fields, generation)
        self._open[(library_id, fields)] = index
        return index

    def _rebuild(
        self, index: LexicalIndex, library_id: str, fields: IndexFields, generation: int
    ) -> None:
        fresh = index.generation == 0 and len(index) == 0
        (log.info if fresh else log.warning)(
            "lexical index %s/%s is at generation %s but the chunk store is at %s: "
            "%s it from the chunk store",
            library_id,
            fields.value,
            index.generation,
            generation,
            "building" if fresh else "rebuilding",
        )
        rows = searchable(self._store.index_rows(library_id))
        index.rebuild(
            [row.key for row in rows],
            [indexed_text(fields, row) for row in rows],
            [row.sensitivity for row in rows],
        )
        index.commit(generation)
        self.rebuilt.append(f"{library_id}/{fields.value}")

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Iterable[IndexRow],
        *,
        since: int,
        generation: int,
    ) -> None:
        """Apply committed chunk-store changes that moved the library from ``since`` to
        ``generation`` to every index of the library.

        The default index is always kept current; other field sets only when they exist. An
        index that was not at ``since`` is rebuilt instead.
        """
        added_rows = searchable(added)
        for fields in IndexFields:
            folder = self.folder(library_id, fields)
            if fields is not DEFAULT_FIELDS and not folder.exists():
                continue
            index = self._open.get((library_id, fields))
            if index is None:
                folder.mkdir(parents=True, exist_ok=True)
                index = LexicalIndex.open(
                    folder, k1=self._k1, b=self._b, recreate_if_incompatible=True
                )
                self._open[(library_id, fields)] = index
            if index.generation != since:
                self._rebuild(index, library_id, fields, generation)
                continue
            if removed:
                index.remove(list(removed))
            if added_rows:
                index.add(
                    [row.key for row in added_rows],
                    [indexed_text(fields, row) for row in added_rows],
                    [row.sensitivity for row in added_rows],
                )
            index.commit(generation)

    def drop(self, library_id: str) -> None:
        """Forget and delete every index of a library (they are rebuilt on demand)."""
        for key in [key for key in self._open if key[0] == library_id]:
            del self._open[key]
        shutil.rmtree(self._index_dir / library_id, ignore_errors=True)
