"""The chunk store seen as a :class:`~ragspine.narrative.retrieve.pipeline.ChunkSource`.

Parent sections and sentence windows are assembled from the stored child chunks, each keeping
its own sensitivity, never from a stored section text (which can mix sensitivities): expansion
can then leave out exactly the passages a principal may not see.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragspine.narrative.retrieve.expansion import (
    ParentSection,
    SentenceWindow,
    parent_from_children,
    window_from_neighbours,
)
from ragspine.narrative.retrieve.snippets import ChunkRecord
from ragspine.stores.chunks import ChunkStore, StoredChunk


class StoreChunkSource:
    """Reads chunk records, parent sections and windows from a :class:`ChunkStore`.

    ``row_keys`` maps ``(library_id, chunk_id)`` to the store's integer chunk keys where search
    already knows them, so records are read by key.
    """

    def __init__(
        self, store: ChunkStore, row_keys: Mapping[tuple[str, str], int] | None = None
    ) -> None:
        self._store = store
        self._row_keys = row_keys if row_keys is not None else {}
        self._known: dict[tuple[str, str], StoredChunk] = {}

    def get_chunks(self, keys: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], ChunkRecord]:
        """Chunk records by ``(library_id, chunk_id)``; unknown keys are left out."""
        wanted = [key for key in keys if key not in self._known]
        row_keys = [self._row_keys[key] for key in wanted if key in self._row_keys]
        unknown = [key[1] for key in wanted if key not in self._row_keys]
        if unknown:
            row_keys.extend(self._store.keys_of(unknown).values())
        for chunk in self._store.chunks_by_key(row_keys).values():
            self._known[(chunk.library_id, chunk.chunk_id)] = chunk
        return {key: self._known[key] for key in keys if key in self._known}

    def get_parents(self, parent_ids: Sequence[str]) -> Mapping[str, ParentSection]:
        """Parent sections assembled from their children, each child keeping its level."""
        children = self._store.chunks_where("parent_id", list(parent_ids))
        by_parent: dict[str, list[StoredChunk]] = {}
        for child in children:
            by_parent.setdefault(child.parent_id, []).append(child)
        return {
            parent_id: parent_from_children(
                parent_id,
                members[0].parent_locator,
                members,
                sensitivity=min(int(c.sensitivity) for c in members),
            )
            for parent_id, members in by_parent.items()
        }

    def get_windows(self, chunk_ids: Sequence[str]) -> Mapping[str, SentenceWindow]:
        """Sentence windows of window-chunked children: the neighbouring sentences (same
        section) that the stored window spans, each with its own level."""
        centres = [
            chunk
            for chunk in self._known.values()
            if chunk.chunk_id in set(chunk_ids) and chunk.window_text
        ]
        if not centres:
            return {}
        siblings = self._store.chunks_where("parent_id", sorted({c.parent_id for c in centres}))
        by_parent: dict[str, list[StoredChunk]] = {}
        for sibling in siblings:
            by_parent.setdefault(sibling.parent_id, []).append(sibling)
        windows: dict[str, SentenceWindow] = {}
        for centre in centres:
            row = by_parent.get(centre.parent_id, [])
            position = next((i for i, c in enumerate(row) if c.chunk_id == centre.chunk_id), None)
            if position is None:
                continue
            span = str(centre.window_text)
            low = position
            while low > 0 and row[low - 1].text in span:
                low -= 1
            high = position + 1
            while high < len(row) and row[high].text in span:
                high += 1
            size = max(position - low, high - 1 - position)
            windows[centre.chunk_id] = window_from_neighbours(row, position, size=size)
        return windows
