"""A persistent, incremental BM25 index over integer chunk keys, in pure numpy.

Layout of the index folder: ``lexical.json`` (format version, BM25 parameters, analyzer,
generation and the list of segment files) plus immutable segment files ``seg-NNNNNN.npz`` and
their tombstone files ``seg-NNNNNN.del-NNNNNN.npy``. :meth:`LexicalIndex.commit` writes new files
first and switches to them by renaming the manifest, so a crash leaves the previous commit intact.
Adding documents creates a new segment per sensitivity level; segments of one level and similar
size are merged as they accumulate.

A search at ``max_level`` reads only the segments at or below that level: BM25's document count,
document frequencies and average length are those of the documents the asker may see, so no
score (and no amount of work) depends on a document above the asker's level (contract 11).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from ragspine.analysis import Analyzer
from ragspine.errors import IngestError, QueryError, StoreError
from ragspine.files import fsync_dir, write_atomically
from ragspine.narrative.index.lexical import bm25
from ragspine.narrative.index.lexical.manifest import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    incompatibility,
    int_field,
    next_free_file,
    read_manifest,
)
from ragspine.narrative.index.lexical.segments import (
    Segment,
    SegmentBuilder,
    TermBatch,
    apply_merge_policy,
    extend_by_level,
    merge_segments,
    read_segment,
    write_deletions,
    write_segment,
)
from ragspine.security import Sensitivity

_KEY_MIN, _KEY_MAX = -(2**63), 2**63 - 1
_LEVELS = frozenset(int(level) for level in Sensitivity)


@dataclass(frozen=True, slots=True)
class _View:
    """Arrays over some segments (all, or those at or below a level), concatenated in segment
    order (one row per document), with the BM25 statistics of their live documents."""

    segments: tuple[Segment, ...]
    offsets: tuple[int, ...]
    keys: npt.NDArray[np.int64]
    levels: npt.NDArray[np.int8]
    norms: npt.NDArray[np.float64]
    n_live: int
    sorted_live_keys: npt.NDArray[np.int64]
    sorted_live_rows: npt.NDArray[np.int64]

    def rows_of(self, keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Rows of the live documents among ``keys`` (absent keys are skipped)."""
        if len(self.sorted_live_keys) == 0:
            return np.empty(0, dtype=np.int64)
        pos = np.searchsorted(self.sorted_live_keys, keys)
        pos = np.minimum(pos, len(self.sorted_live_keys) - 1)
        found = self.sorted_live_keys[pos] == keys
        return self.sorted_live_rows[pos[found]]


class LexicalIndex:
    """BM25 search over integer keys with sensitivity levels; open it with :meth:`open`.

    Threads: one thread changes an index (add, remove, rebuild, commit) before it is handed to
    others; once flushed (:meth:`flush`, or committed), searching it changes nothing but a cache
    of views, each built whole before it is stored, so any number of threads may search it.
    """

    def __init__(
        self,
        folder: Path,
        *,
        k1: float,
        b: float,
        analyzer: Analyzer,
        generation: int = 0,
        segments: Sequence[Segment] = (),
        next_file: int = 1,
    ) -> None:
        self.folder = folder
        self.k1, self.b = bm25.validate_params(k1, b)
        self.analyzer = analyzer
        self._generation = generation
        self._segments: list[Segment] = list(segments)
        self._next_file = next_file
        self._pending: dict[int, SegmentBuilder] = {}
        self._pending_keys: set[int] = set()
        self._views: dict[int, _View] = {}

    @classmethod
    def open(
        cls,
        folder: Path | str,
        *,
        k1: float = bm25.DEFAULT_K1,
        b: float = bm25.DEFAULT_B,
        analyzer: Analyzer | None = None,
        recreate_if_incompatible: bool = False,
    ) -> LexicalIndex:
        """Open the index in ``folder`` (an empty one, generation 0, if there is none yet).

        ``analyzer=None`` means the analyzer the index was built with (English defaults for a new
        index). An index written with other ``k1``/``b``, another analyzer or another format
        version, or a damaged one, raises :class:`StoreError`, unless ``recreate_if_incompatible``
        is set: then an empty index (generation 0) is returned and the old files are replaced at
        the next commit.
        """
        folder = Path(folder)
        k1, b = bm25.validate_params(k1, b)
        if folder.exists() and not folder.is_dir():
            raise StoreError(f"lexical index path {folder} is a file: pass a folder")
        manifest_path = folder / MANIFEST
        if not manifest_path.exists():
            return cls(folder, k1=k1, b=b, analyzer=analyzer or Analyzer())
        try:
            return cls._load(folder, k1, b, analyzer)
        except StoreError:
            if not recreate_if_incompatible:
                raise
        return cls(
            folder, k1=k1, b=b, analyzer=analyzer or Analyzer(), next_file=next_free_file(folder)
        )

    @classmethod
    def _load(cls, folder: Path, k1: float, b: float, analyzer: Analyzer | None) -> LexicalIndex:
        manifest_path = folder / MANIFEST
        manifest = read_manifest(manifest_path)
        problem = incompatibility(manifest, k1, b, analyzer)
        if problem is not None:
            raise StoreError(
                f"lexical index at {folder} {problem}: rebuild it (open it with "
                f"recreate_if_incompatible=True and re-add every chunk, or delete {folder})"
            )
        segments = [
            read_segment(
                folder / f"{entry['name']}.npz",
                folder / entry["deletions"] if entry.get("deletions") else None,
            )
            for entry in manifest["segments"]
        ]
        return cls(
            folder,
            k1=k1,
            b=b,
            analyzer=Analyzer.from_config(manifest["analyzer"]),
            generation=int_field(manifest, "generation", manifest_path),
            segments=segments,
            next_file=int_field(manifest, "next_file", manifest_path),
        )

    @property
    def generation(self) -> int:
        """The generation passed to the last successful :meth:`commit` (0 for a new index)."""
        return self._generation

    def mark_generation(self, generation: int) -> None:
        """Record the chunk-store generation an index built in memory reflects (nothing is
        written; :meth:`commit` persists it)."""
        self._generation = generation

    @property
    def segment_count(self) -> int:
        """Number of segments searched (after pending documents are flushed)."""
        self.flush()
        return len(self._segments)

    def __len__(self) -> int:
        """Number of live documents, pending ones included."""
        return self._state().n_live + sum(len(b) for b in self._pending.values())

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int):
            return False
        if key in self._pending_keys:
            return True
        return len(self._state().rows_of(np.asarray([key], dtype=np.int64))) > 0

    def add(self, keys: Sequence[int], texts: Sequence[str], levels: Sequence[int]) -> None:
        """Analyze and add documents; visible to :meth:`search` now, durable after commit."""
        if not len(keys) == len(texts) == len(levels):
            raise IngestError(
                f"add() needs as many keys, texts and levels, got {len(keys)}, {len(texts)}, "
                f"{len(levels)}"
            )
        checked_keys, checked_levels = self._check_new(keys, levels)
        for key, text in zip(checked_keys, texts, strict=True):
            if not isinstance(text, str):
                raise IngestError(f"text of key {key} must be a string, got {type(text).__name__}")
        batch = TermBatch.of(self.analyzer.tokens_many(texts))
        self._add_checked(checked_keys, batch, checked_levels)

    def add_tokens(
        self,
        keys: Sequence[int],
        token_lists: Sequence[Sequence[str]] | TermBatch,
        levels: Sequence[int],
    ) -> None:
        """Add documents already analyzed by this index's :attr:`analyzer` (one token list per
        key, as ``analyzer.tokens`` gives it, or a :class:`TermBatch` of them), like :meth:`add`
        without analyzing again."""
        if not len(keys) == len(token_lists) == len(levels):
            raise IngestError(
                f"add_tokens() needs as many keys, token lists and levels, got {len(keys)}, "
                f"{len(token_lists)}, {len(levels)}"
            )
        checked_keys, checked_levels = self._check_new(keys, levels)
        batch = token_lists if isinstance(token_lists, TermBatch) else TermBatch.of(token_lists)
        self._add_checked(checked_keys, batch, checked_levels)

    def _check_new(self, keys: Sequence[int], levels: Sequence[int]) -> tuple[list[int], list[int]]:
        """Valid keys (new to this index, each once) and levels, or an :class:`IngestError`."""
        checked_keys = [_check_key(key) for key in keys]
        checked_levels = [_check_level(level, key) for key, level in zip(keys, levels, strict=True)]
        batch = set(checked_keys)
        if len(batch) != len(checked_keys):
            dupes = sorted(k for k, n in Counter(checked_keys).items() if n > 1)
            raise IngestError(f"keys {dupes[:5]} appear more than once in one add() call")
        clash = batch & self._pending_keys
        if not clash:
            existing = self._state().rows_of(np.fromiter(batch, dtype=np.int64, count=len(batch)))
            clash = {int(k) for k in self._state().keys[existing]}
        if clash:
            raise IngestError(
                f"keys {sorted(clash)[:5]} are already in the lexical index: remove them first"
            )
        return checked_keys, checked_levels

    def _add_checked(self, keys: list[int], batch: TermBatch, levels: list[int]) -> None:
        extend_by_level(self._pending, keys, batch, levels)
        self._pending_keys |= set(keys)

    def remove(self, keys: Collection[int]) -> int:
        """Delete documents by key (unknown keys are ignored); returns how many were removed."""
        self.flush()
        view = self._state()
        wanted = np.fromiter((_check_key(k) for k in keys), dtype=np.int64, count=len(keys))
        rows = view.rows_of(np.unique(wanted))
        if len(rows) == 0:
            return 0
        seg_of_row = np.searchsorted(np.asarray(view.offsets), rows, side="right") - 1
        for row, seg_index in zip(rows.tolist(), seg_of_row.tolist(), strict=True):
            view.segments[seg_index].kill(row - view.offsets[seg_index])
        self._views = {}
        return len(rows)

    def rebuild(self, keys: Sequence[int], texts: Sequence[str], levels: Sequence[int]) -> None:
        """Replace the whole content with these documents (durable after :meth:`commit`).

        Invalid input raises before anything changes.
        """
        saved = (self._segments, self._pending, self._pending_keys)
        self._segments, self._pending, self._pending_keys = [], {}, set()
        self._views = {}
        try:
            self.add(keys, texts, levels)
        except Exception:
            self._segments, self._pending, self._pending_keys = saved
            self._views = {}
            raise

    def commit(self, generation: int) -> None:
        """Persist every change atomically and record ``generation`` (an int >= 0)."""
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise StoreError(f"commit generation must be an integer >= 0, got {generation!r}")
        self.flush()
        fresh_by_level: dict[int, list[Segment]] = {}
        for seg in self._segments:
            if seg.name is None:
                fresh_by_level.setdefault(seg.level, []).append(seg)
        fresh = [
            group[0] if len(group) == 1 else merge_segments(group)
            for _, group in sorted(fresh_by_level.items())
        ]
        segments = [s for s in self._segments if s.name is not None]
        segments = [s for s in segments + fresh if s.n_live > 0]
        segments = apply_merge_policy(segments)
        next_file = self._next_file
        plan: list[tuple[Segment, str, str | None]] = []
        self.folder.mkdir(parents=True, exist_ok=True)
        for seg in segments:
            name = seg.name
            if name is None:
                name = f"seg-{next_file:06d}"
                next_file += 1
                write_atomically(self.folder / f"{name}.npz", partial(write_segment, seg))
            deletions = seg.deletions_file if seg.n_dead else None
            if seg.n_dead and (seg.deletions_dirty or deletions is None):
                deletions = f"{name}.del-{next_file:06d}.npy"
                next_file += 1
                write_atomically(self.folder / deletions, partial(write_deletions, seg))
            plan.append((seg, name, deletions))
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "k1": self.k1,
            "b": self.b,
            "analyzer": self.analyzer.to_config(),
            "generation": generation,
            "next_file": next_file,
            "documents": sum(seg.n_live for seg in segments),
            "segments": [
                {"name": name, "deletions": deletions, "documents": seg.n_docs, "level": seg.level}
                for seg, name, deletions in plan
            ],
        }
        fsync_dir(self.folder)
        payload = json.dumps(manifest, indent=1).encode("utf-8")

        def write_manifest(out: BinaryIO) -> None:
            out.write(payload)

        write_atomically(self.folder / MANIFEST, write_manifest)
        fsync_dir(self.folder)
        for seg, name, deletions in plan:
            seg.name, seg.deletions_file, seg.deletions_dirty = name, deletions, False
        self._segments = segments
        self._generation = generation
        self._next_file = next_file
        self._views = {}
        self._remove_unreferenced(
            {f"{name}.npz" for _, name, _ in plan}
            | {deletions for _, _, deletions in plan if deletions}
        )

    def search(
        self,
        query: str,
        top_k: int,
        *,
        max_level: int,
        allowed: Collection[int] | np.ndarray | None = None,
        stats: dict[str, int] | None = None,
    ) -> list[tuple[int, float]]:
        """Best ``top_k`` (key, score) pairs for ``query``: score descending, then key ascending.

        Only documents with level <= ``max_level`` are read, scored and counted in the BM25
        statistics; when ``allowed`` is given, only keys in it are considered, before the top-k
        cut. Documents matching no query term are never returned. ``stats``, when given,
        receives how many matching documents ``allowed`` excluded (``filtered``).
        """
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0:
            raise QueryError(f"top_k must be an integer >= 0, got {top_k!r}")
        if isinstance(max_level, bool) or not isinstance(max_level, int):
            raise QueryError(f"max_level must be an integer sensitivity level, got {max_level!r}")
        self.flush()
        view = self._state(max_level)
        qterms = Counter(self.analyzer.tokens(query))
        if top_k == 0 or not qterms or view.n_live == 0:
            return []
        postings: list[_Postings] = []
        for term in sorted(qterms):
            rows_parts, tf_parts = [], []
            for seg, offset in zip(view.segments, view.offsets, strict=True):
                docs, tf = seg.postings(term)
                if len(docs):
                    rows_parts.append(docs + offset if offset else docs)
                    tf_parts.append(tf)
            if not rows_parts:
                continue
            rows = rows_parts[0] if len(rows_parts) == 1 else np.concatenate(rows_parts)
            tf = tf_parts[0] if len(tf_parts) == 1 else np.concatenate(tf_parts)
            weight = qterms[term] * float(bm25.idf(len(rows), view.n_live))
            postings.append(_Postings(rows, tf, weight))
        if not postings:
            return []
        scores = np.zeros(len(view.keys), dtype=np.float64)
        for p in postings:
            scores[p.rows] += bm25.term_scores(p.tf, view.norms[p.rows], p.weight)
        total = sum(len(p.rows) for p in postings)
        if total * 8 < len(scores):  # few matches: sorting them beats scanning every row
            candidates = np.unique(np.concatenate([p.rows for p in postings])).astype(np.int64)
        elif allowed is None and top_k * 8 < total:
            candidates = _at_least(scores, _floor(postings, scores, top_k))
        else:
            candidates = np.flatnonzero(scores)
        matched = len(candidates)
        if allowed is not None:
            try:
                wanted = (
                    allowed.astype(np.int64, copy=False).ravel()
                    if isinstance(allowed, np.ndarray)
                    else np.fromiter(allowed, dtype=np.int64, count=len(allowed))
                )
            except (TypeError, ValueError, OverflowError) as exc:
                raise QueryError(f"allowed must hold integer chunk keys ({exc})") from exc
            mask = np.zeros(len(view.keys), dtype=bool)
            mask[view.rows_of(wanted)] = True
            candidates = candidates[mask[candidates]]
        if stats is not None:
            stats["filtered"] = matched - len(candidates)
        cand_scores = scores[candidates]
        cand_keys = view.keys[candidates]
        best = bm25.top_k(cand_scores, cand_keys, top_k)
        return list(zip(cand_keys[best].tolist(), cand_scores[best].tolist(), strict=True))

    def flush(self) -> None:
        """Turn pending documents into in-memory segments, one per level (an index is flushed
        before another thread may search it: see the class docstring)."""
        if not self._pending:
            return
        for _, builder in sorted(self._pending.items()):
            self._segments.append(builder.build())
        self._pending = {}
        self._pending_keys = set()
        self._views = {}

    def _state(self, max_level: int | None = None) -> _View:
        """The view of the segments at or below ``max_level`` (every segment for ``None``)."""
        present = sorted({seg.level for seg in self._segments})
        if max_level is not None:
            present = [level for level in present if level <= max_level]
        key = present[-1] if present else -1  # levels in between hold nothing: share the view
        view = self._views.get(key)
        if view is None:
            chosen = [seg for seg in self._segments if seg.level <= key]
            view = _make_view(chosen, self.k1, self.b)
            self._views[key] = view  # stored whole: a concurrent search sees it or builds its own
        return view

    def _remove_unreferenced(self, referenced: set[str]) -> None:
        for path in self.folder.iterdir():
            name = path.name
            ours = name.startswith("seg-") or name.endswith(".tmp")
            if ours and name not in referenced:
                with contextlib.suppress(OSError):
                    path.unlink()


@dataclass(frozen=True, slots=True)
class _Postings:
    """One query term's matching rows (ascending), their term frequencies and its weight."""

    rows: npt.NDArray[np.integer]
    tf: npt.NDArray[np.int32]
    weight: float


FLOOR_SAMPLE = 4096
"""Matching rows whose scores set the floor of a top-k cut (see :func:`_floor`)."""


def _floor(postings: Sequence[_Postings], scores: npt.NDArray[np.float64], top_k: int) -> float:
    """A score the ``top_k``-th best row reaches at least: the ``top_k``-th best among some
    distinct matching rows (those of the rarest terms, about :data:`FLOOR_SAMPLE` of them).
    Any set of rows gives such a floor; rare terms' rows score high, so it is close."""
    parts, size = [], 0
    for p in sorted(postings, key=lambda p: len(p.rows)):
        parts.append(p.rows)
        size += len(p.rows)
        if size >= FLOOR_SAMPLE:
            break
    rows = np.unique(np.concatenate(parts))
    if len(rows) < top_k:
        return 0.0
    sample = scores[rows]
    return float(np.partition(sample, len(sample) - top_k)[len(sample) - top_k])


def _at_least(scores: npt.NDArray[np.float64], floor: float) -> npt.NDArray[np.int64]:
    """Rows scoring at least ``floor`` (every matching row when the floor is 0): a superset of
    the best rows, ties at the cut-off included, found by one scan instead of a partition of
    every match."""
    if floor <= 0.0:
        return np.flatnonzero(scores)
    return np.flatnonzero(scores >= floor)


def _make_view(segments: Sequence[Segment], k1: float, b: float) -> _View:
    offsets, total = [], 0
    for seg in segments:
        offsets.append(total)
        total += seg.n_docs
    if segments:
        keys = np.concatenate([s.keys for s in segments])
        levels = np.concatenate([s.levels for s in segments])
        lengths = np.concatenate([s.lengths for s in segments])
        live = np.concatenate([s.live for s in segments])
    else:
        keys, levels = np.empty(0, np.int64), np.empty(0, np.int8)
        lengths, live = np.empty(0, np.int32), np.empty(0, bool)
    live_rows = np.flatnonzero(live)
    n_live = len(live_rows)
    total_length = int(lengths[live].sum(dtype=np.int64))
    avgdl = total_length / n_live if n_live else 0.0
    order = np.argsort(keys[live_rows], kind="stable")
    return _View(
        segments=tuple(segments),
        offsets=tuple(offsets),
        keys=keys,
        levels=levels,
        norms=bm25.length_norms(lengths, avgdl, k1, b),
        n_live=n_live,
        sorted_live_keys=keys[live_rows][order],
        sorted_live_rows=live_rows[order],
    )


def _check_key(key: object) -> int:
    if isinstance(key, bool) or not isinstance(key, int | np.integer):
        raise IngestError(f"lexical index keys must be integers, got {key!r}")
    value = int(key)
    if not _KEY_MIN <= value <= _KEY_MAX:
        raise IngestError(f"lexical index key {value} does not fit in 64 bits")
    return value


def _check_level(level: object, key: object) -> int:
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or level not in _LEVELS:
        raise IngestError(
            f"sensitivity level of key {key!r} must be one of {sorted(_LEVELS)}, got {level!r}"
        )
    return int(level)


__all__ = ["FORMAT_VERSION", "MANIFEST", "LexicalIndex"]
