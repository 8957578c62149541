"""Per-library lexical indexes kept in step with the chunk store by a generation number.

Each library has one index per *field set* (which chunk fields are indexed). Writers (who hold the
library's write lock, see :mod:`ragspine.locks`) apply their changes after the chunk store
commits and keep the field sets of the default modes (``bm25`` and ``lexical``) on disk; an
index that missed a change (a writer killed between the two commits) is rebuilt by the next
writer. Readers never write index files: they use the last committed index, reloading it when a
writer has committed a newer one, and build an index that is not on disk (the ``economy`` field
set, or a damaged folder) in memory only. Chunks no one may see (``restricted``) are never
indexed, so they take no part in any search or score.

Threads share one :class:`LibraryIndexes`: an index is handed to searches only once it is whole
(loaded, or built and flushed, or committed by a writer), by replacing the map of open indexes
in one assignment; a newer generation is never replaced by an older one. One thread at a time
loads or builds a given index, and the others wait for it instead of building their own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from ragspine.analysis import Analyzer
from ragspine.errors import StoreError
from ragspine.narrative.index.lexical import bm25
from ragspine.narrative.index.lexical.engine import LexicalIndex
from ragspine.narrative.index.lexical.manifest import committed_generation
from ragspine.narrative.index.lexical.segments import TermBatch
from ragspine.security import Principal, Sensitivity, max_visible_level
from ragspine.stores.chunks import ChunkStore, IndexRow
from ragspine.stores.indexes import IndexStorage, index_storage

log = logging.getLogger("ragspine.narrative")


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


TermParts = tuple[list[str], list[str], list[str]]
"""The terms of a row's title, heading and text."""


class TermSource(Protocol):
    """Terms computed elsewhere for rows being added (by an ingest's analysis worker)."""

    @property
    def analyzer(self) -> Analyzer:
        """The analyzer that gave the terms (an index with another one ignores them)."""

    def terms_of(self, keys: Sequence[int]) -> Mapping[int, TermParts]:
        """Chunk key → :data:`TermParts` for those of ``keys`` it has, waiting for terms
        still being computed; the caller analyzes the keys it lacks."""


class AnalyzedRows:
    """The index terms of rows' titles, headings and texts, each analyzed once per analyzer and
    shared by every field set: the terms of ``a + "\n" + b`` are those of ``a`` followed by
    those of ``b`` (no token spans a line break), so a field set's terms are its fields'
    terms joined. Titles and headings repeat across a document's chunks and are analyzed once."""

    def __init__(self, rows: Sequence[IndexRow], known: TermSource | None = None) -> None:
        self.rows = rows
        self._known = known
        self._parts: dict[Analyzer, tuple[list[list[str]], list[list[str]], list[list[str]]]] = {}
        self._batches: dict[tuple[Analyzer, IndexFields], TermBatch] = {}

    def batch(self, analyzer: Analyzer, fields: IndexFields) -> TermBatch:
        """:meth:`tokens` as a :class:`TermBatch`, made once (and shared by the field sets
        that hold the same terms: with no heading terms, a heading adds nothing)."""
        if fields is IndexFields.TITLE_HEADING_TEXT and not any(self._analyzed(analyzer)[1]):
            fields = IndexFields.TITLE_TEXT
        batch = self._batches.get((analyzer, fields))
        if batch is None:
            batch = self._batches[analyzer, fields] = TermBatch.of(self.tokens(analyzer, fields))
        return batch

    def tokens(self, analyzer: Analyzer, fields: IndexFields) -> list[list[str]]:
        """The terms ``analyzer`` gives :func:`indexed_text` of each row, in row order."""
        titles, headings, texts = self._analyzed(analyzer)
        if fields is IndexFields.TEXT:
            return texts
        if fields is IndexFields.TITLE_TEXT:
            return [a + c for a, c in zip(titles, texts, strict=True)]
        return [a + b + c for a, b, c in zip(titles, headings, texts, strict=True)]

    def _analyzed(
        self, analyzer: Analyzer
    ) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
        parts = self._parts.get(analyzer)
        if parts is None and self._known is not None and self._known.analyzer == analyzer:
            parts = self._parts[analyzer] = self._with_known(analyzer, self._known)
        if parts is None:
            rows = self.rows
            names = list(dict.fromkeys([row.title for row in rows] + [row.heading for row in rows]))
            terms = dict(zip(names, analyzer.tokens_many(names), strict=True))
            parts = self._parts[analyzer] = (
                [terms[row.title] for row in rows],
                [terms[row.heading] for row in rows],
                analyzer.tokens_many([row.text for row in rows]),
            )
        return parts

    def _with_known(
        self, analyzer: Analyzer, known: TermSource
    ) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
        """The parts from ``known`` terms, analyzing only the rows they lack."""
        terms = known.terms_of([row.key for row in self.rows])
        missing = [row for row in self.rows if row.key not in terms]
        if missing:
            names = list(dict.fromkeys([r.title for r in missing] + [r.heading for r in missing]))
            named = dict(zip(names, analyzer.tokens_many(names), strict=True))
            texts = analyzer.tokens_many([row.text for row in missing])
            terms = {
                **terms,
                **{
                    row.key: (named[row.title], named[row.heading], text_terms)
                    for row, text_terms in zip(missing, texts, strict=True)
                },
            }
        rows = [terms[row.key] for row in self.rows]
        return [t[0] for t in rows], [t[1] for t in rows], [t[2] for t in rows]


APPLY_GROUP = 1024
"""Rows analyzed and added to the indexes at a time when changes are applied."""
DEFAULT_FIELDS = IndexFields.TITLE_TEXT
MAINTAINED_FIELDS = (IndexFields.TITLE_TEXT, IndexFields.TITLE_HEADING_TEXT)
"""Field sets every writer keeps on disk (those of ``bm25`` and of ``lexical`` / ``hybrid``)."""
_LOAD_ATTEMPTS = 5

HIGHEST_VISIBLE = max_visible_level(Principal(Sensitivity.RESTRICTED))
"""The highest level anyone may see; chunks above it are never indexed."""


def searchable(rows: Iterable[IndexRow]) -> list[IndexRow]:
    """The rows someone may see (what an index holds)."""
    return [row for row in rows if row.sensitivity <= HIGHEST_VISIBLE]


class LibraryIndexes:
    """Opens, rebuilds and updates the lexical indexes of every library in a workspace."""

    def __init__(
        self,
        store: ChunkStore,
        index_dir: IndexStorage | Path,
        *,
        k1: float = bm25.DEFAULT_K1,
        b: float = bm25.DEFAULT_B,
        writing: Callable[[str], bool] | None = None,
    ) -> None:
        """``writing(library)``: whether a writer of the library is at work (holds its lock);
        without it, one is assumed to be whenever an index is behind its library."""
        self._store = store
        self._writing = writing or (lambda library_id: True)
        self._storage = index_storage(index_dir)
        self._k1 = k1
        self._b = b
        self._open: dict[tuple[str, IndexFields], LexicalIndex] = {}
        self._lock = threading.Lock()  # guards replacing _open, _loading and _rebuilt
        self._loading: dict[tuple[str, IndexFields], threading.Lock] = {}
        self._rebuilt: list[str] = []

    @property
    def rebuilt(self) -> list[str]:
        """Indexes rebuilt by this object so far (a log: ``library/fields``, with
        ``(in memory)`` for a reader's build)."""
        with self._lock:
            return list(self._rebuilt)

    def _note_rebuilt(self, name: str) -> None:
        with self._lock:
            self._rebuilt.append(name)

    def _publish(self, key: tuple[str, IndexFields], index: LexicalIndex) -> None:
        """Hand ``index`` to searches, unless a newer generation is already there."""
        with self._lock:
            current = self._open.get(key)
            if current is None or current.generation <= index.generation:
                self._open = {**self._open, key: index}

    def _load_lock(self, key: tuple[str, IndexFields]) -> threading.Lock:
        with self._lock:
            return self._loading.setdefault(key, threading.Lock())

    def folder(self, library_id: str, fields: IndexFields) -> Path:
        """Where the index of ``library_id`` over ``fields`` lives."""
        return self._storage.folder(library_id, f"lexical-{fields.value}")

    def get(self, library_id: str, fields: IndexFields) -> LexicalIndex:
        """The index to search: the last committed one (never written by this call).

        While a writer is between its chunk-store commit and its index commit, this is the
        previous commit. An index with nothing usable on disk, or one left behind by a writer
        that died between its two commits (no writer holds the library's lock), is built in
        memory from the chunk store for this process, until a writer commits a current one.
        """
        generation = self._store.generation(library_id)
        key = (library_id, fields)
        cached = self._open.get(key)
        if cached is not None and cached.generation == generation:
            return cached
        with self._load_lock(key):
            cached = self._open.get(key)  # another thread may have loaded it meanwhile
            if cached is not None and cached.generation == generation:
                return cached
            folder = self.folder(library_id, fields)
            committed = committed_generation(folder)
            if committed is not None and committed < generation and not self._writing(library_id):
                committed = committed_generation(folder)  # its writer may have just finished
                if committed is not None and committed < generation:
                    committed = None  # left behind: its writer died before bringing it up
            if cached is not None and committed is not None and committed <= cached.generation:
                return cached  # as new as the committed one, or newer (built in memory)
            index = self._load_committed(folder) if committed is not None else None
            if index is None:
                index = self._build(library_id, fields, generation, folder)
                index.flush()  # searching it must change nothing: other threads will share it
                self._note_rebuilt(f"{library_id}/{fields.value} (in memory)")
            self._publish(key, index)
            return index

    def _load_committed(self, folder: Path) -> LexicalIndex | None:
        """The committed index in ``folder``; None when it is damaged or incompatible.

        A writer may commit (and delete the files of the previous commit) while this reads: a
        failed read is retried while the manifest keeps changing.
        """
        for _attempt in range(_LOAD_ATTEMPTS):
            before = committed_generation(folder)
            try:
                return LexicalIndex.open(folder, k1=self._k1, b=self._b)
            except StoreError as exc:
                if committed_generation(folder) != before:
                    continue
                log.warning(
                    "lexical index at %s cannot be used (%s): searching in memory", folder, exc
                )
                return None
        return None

    def _build(
        self, library_id: str, fields: IndexFields, generation: int, folder: Path
    ) -> LexicalIndex:
        """A new index over the chunk store's rows of ``library_id`` (not yet committed)."""
        index = LexicalIndex(folder, k1=self._k1, b=self._b, analyzer=Analyzer())
        rows = searchable(self._store.index_rows(library_id))
        index.rebuild(
            [row.key for row in rows],
            [indexed_text(fields, row) for row in rows],
            [row.sensitivity for row in rows],
        )
        index.mark_generation(generation)
        return index

    def apply(
        self,
        library_id: str,
        removed: Sequence[int],
        added: Iterable[IndexRow],
        *,
        since: int,
        generation: int,
        known: TermSource | None = None,
    ) -> None:
        """Bring every stored index of the library to ``generation`` (the caller holds the
        library's write lock and has committed the chunk-store changes ``removed`` / ``added``
        that moved it from ``since``).

        The maintained field sets are always written; others only when they exist on disk. An
        index that was not at ``since`` is rebuilt from the chunk store instead. ``known``
        terms of the added rows are used where an index has the same analyzer.
        """
        rows = searchable(added)
        growing: list[tuple[IndexFields, LexicalIndex]] = []
        for fields in IndexFields:
            folder = self.folder(library_id, fields)
            committed = committed_generation(folder)
            if committed is None and fields not in MAINTAINED_FIELDS:
                continue
            if committed == generation == since:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            # Always from disk: another process may have committed since this one last looked.
            index = LexicalIndex.open(folder, k1=self._k1, b=self._b, recreate_if_incompatible=True)
            if index.generation != since:
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
                index = self._build(library_id, fields, generation, folder)
                index.commit(generation)
                self._note_rebuilt(f"{library_id}/{fields.value}")
                self._publish((library_id, fields), index)
                continue
            if removed:
                index.remove(list(removed))
            growing.append((fields, index))
        # Rows are analyzed APPLY_GROUP at a time (once for every field set), so the terms held
        # at once stay bounded however many rows the ingest wrote.
        for start in range(0, len(rows) if growing else 0, APPLY_GROUP):
            group = rows[start : start + APPLY_GROUP]
            analyzed = AnalyzedRows(group, known)
            keys, levels = [row.key for row in group], [row.sensitivity for row in group]
            for fields, index in growing:
                index.add_tokens(keys, analyzed.batch(index.analyzer, fields), levels)
        for fields, index in growing:
            if index.generation != generation:
                index.commit(generation)
            self._publish((library_id, fields), index)  # committed: searches may share it now

    def drop(self, library_id: str) -> None:
        """Forget and delete every index of a library (they are rebuilt on demand)."""
        with self._lock:
            self._open = {key: index for key, index in self._open.items() if key[0] != library_id}
        self._storage.drop(library_id)
